"""Coverage-guided fuzzing of the loaders of untrusted files: `torch.load` (zip archives and the
legacy format, weights_only on) and safetensors (the unmodified package through the torch proxy,
ending in our frombuffer/view). Needs atheris (`pip install atheris`).

    python tools/fuzz_load.py [seconds] [corpus dir]       # default 60 s, /tmp/mindtorch-fuzz-load
    python tools/fuzz_load.py --replay DIR...              # run saved inputs once (no atheris needed)

A finding is a crash, a hang (libFuzzer's -timeout), or an exception type a PyTorch user would
not expect from a bad file (anything outside ALLOWED): atheris reports it with the input saved as
crash-*; commit it under tests/serialization/fuzz_regressions/ (replayed by
tests/serialization/test_fuzz_regressions.py)."""
import io
import os
import pickle
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch_proxy  # noqa: E402  (the proxy must own `import torch` before safetensors imports it)

torch_proxy.install()

LOADER_MODULES = ["mindtorch_v2.serialization", "mindtorch_v2._archive", "mindtorch_v2._weights_only_unpickler",
                  "mindtorch_v2._tensor_serial", "mindtorch_v2.storage", "mindtorch_v2._creation"]
if sys.argv[1:2] != ["--replay"]:
    import atheris
    with atheris.instrument_imports(include=LOADER_MODULES):
        import mindtorch_v2 as mt
else:
    import mindtorch_v2 as mt

import safetensors  # noqa: E402
import safetensors.torch as st  # noqa: E402

# what torch.load / safetensors raise on a malformed file (NotImplementedError is a RuntimeError,
# UnicodeDecodeError a ValueError)
ALLOWED = (RuntimeError, pickle.UnpicklingError, EOFError, ValueError, TypeError, safetensors.SafetensorError)


def load_any(data):
    """Every loader on one input; returns normally or raises an ALLOWED error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (lambda: mt.load(io.BytesIO(data)), lambda: st.load(data)):
            try:
                out = f()
            except ALLOWED:
                continue
            _touch(out)


def _touch(obj):
    """read every loaded tensor fully (an out-of-bounds view would show here under ASan)"""
    if isinstance(obj, mt.Tensor):
        obj.float().sum().item() if obj.numel() else None
    elif isinstance(obj, dict):
        for v in obj.values():
            _touch(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _touch(v)


def seeds():
    """valid files of every kind: the fuzzer mutates from these"""
    x = mt.arange(24.0).reshape(2, 3, 4)
    objs = {
        "dtypes": {str(d): mt.arange(6).to(d).reshape(2, 3) for d in
                   (mt.bool, mt.uint8, mt.int8, mt.int16, mt.int32, mt.int64, mt.float16, mt.bfloat16,
                    mt.float32, mt.float64)},
        "views": {"x": x, "t": x.transpose(0, 2), "s": x[1, :, ::2], "e": mt.zeros(0, 3), "z": mt.tensor(1.5)},
        "nested": [mt.ones(2), {"a": (1, 2.5, "s", None, True), "b": mt.nn.Parameter(mt.randn(3))}],
        "module": mt.nn.Linear(3, 2).state_dict(),
    }
    out = {}
    for name, obj in objs.items():
        for new in (True, False):
            b = io.BytesIO()
            mt.save(obj, b, _use_new_zipfile_serialization=new)
            out[f"{name}-{'zip' if new else 'legacy'}"] = b.getvalue()
    flat = dict(objs["dtypes"])
    out["safetensors"] = st.save({**flat, "scalar": mt.tensor(2.0), "empty": mt.zeros(0, 4)}, metadata={"m": "1"})
    return out


def replay(dirs):
    """every input file of dirs through the loaders, without atheris: an unexpected error propagates"""
    n = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), "rb") as fh:
                load_any(fh.read())
            n += 1
    print(f"replayed {n} inputs")


def main():
    if sys.argv[1:2] == ["--replay"]:
        return replay(sys.argv[2:])
    secs = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    corpus = sys.argv[2] if len(sys.argv) > 2 else "/tmp/mindtorch-fuzz-load"
    os.makedirs(corpus, exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(corpus, "seed-" + name), "wb") as fh:
            fh.write(data)
    regress = os.path.join(ROOT, "tests", "serialization", "fuzz_regressions")
    dirs = [corpus] + ([regress] if os.path.isdir(regress) else [])
    atheris.Setup([sys.argv[0], f"-max_total_time={secs}", "-timeout=20", "-rss_limit_mb=6144",
                   "-max_len=65536", "-print_final_stats=1", *dirs], load_any)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
