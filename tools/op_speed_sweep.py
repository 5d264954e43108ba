"""Time every public function of torch that takes one or two tensors, in both libraries, and list the
ratios (mindtorch_v2 / PyTorch): a sweep for the slow outliers the benchmark runner's cases do not name.

    python tools/op_speed_sweep.py [--shape 512x2048] [--dtype float32] [--over 1.3] [--only NAME,...]

Each name is tried as f(x), f(x, y), f(x, dim=-1) and f(x, dim=0), with x, y in (0.1, 0.9) (every
unary op's domain) and y != 0; the first call form PyTorch accepts is timed in both libraries
(median of 5 rounds, each long enough for ~10 ms), and forms mindtorch_v2 rejects are listed apart.
A long sweep to run by hand and record in docs/PERFORMANCE.md, not a CI step."""
import argparse
import sys
import time
import warnings

import torch

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(__file__))))
import mindtorch_v2 as mt  # noqa: E402

SKIP = {  # not elementwise or reduction work on x: constructors, I/O, global state, printing, whole models
    "load", "save", "manual_seed", "seed", "set_printoptions", "compile", "export", "jit", "set_default_dtype",
    "set_default_device", "set_num_threads", "set_num_interop_threads", "use_deterministic_algorithms",
    "set_grad_enabled", "set_rng_state", "from_numpy", "frombuffer", "empty_like", "set_flush_denormal",
    "vmap", "cond", "while_loop", "chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit",
    "set_warn_always", "set_anomaly_enabled", "autocast_increment_nesting", "autocast_decrement_nesting",
    "set_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_dtype", "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_vital", "sym_not", "typename", "is_tensor", "is_storage", "numel",
}
FORMS = [("x",), ("x", "y"), ("x", "dim=-1"), ("x", "dim=0")]


def call(lib, name, form, x, y):
    f = getattr(lib, name)
    args = [x if a == "x" else y for a in form if "=" not in a]
    kw = {a.split("=")[0]: int(a.split("=")[1]) for a in form if "=" in a}
    return f(*args, **kw)


def timed(fn):
    fn()
    n, t = 1, 0.0
    while True:  # calls per round for ~10 ms
        s = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - s
        if t > 0.01 or n > 100000:
            break
        n *= 4 if t < 0.0025 else 2
    rounds = []
    for _ in range(5):
        s = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - s) / n)
    return sorted(rounds)[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="512x2048")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--over", type=float, default=1.3, help="list ratios above this")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    shape = [int(s) for s in a.shape.split("x")]
    warnings.simplefilter("ignore")
    base = torch.rand(*shape, dtype=torch.float64) * 0.8 + 0.1
    other = torch.rand(*shape, dtype=torch.float64) * 0.8 + 0.1
    tx, ty = base.to(getattr(torch, a.dtype)), other.to(getattr(torch, a.dtype))
    mx, my = mt.tensor(base.numpy()).to(getattr(mt, a.dtype)), mt.tensor(other.numpy()).to(getattr(mt, a.dtype))
    names = a.only.split(",") if a.only else sorted(
        n for n in dir(torch) if not n.startswith("_") and n.islower() and callable(getattr(torch, n, None))
        and not isinstance(getattr(torch, n), type) and n not in SKIP and not n.endswith("_"))
    rows, missing = [], []
    for name in names:
        for form in FORMS:
            try:
                r = call(torch, name, form, tx, ty)
                if not isinstance(r, torch.Tensor) and not (isinstance(r, tuple) and r and
                                                            isinstance(r[0], torch.Tensor)):
                    break
            except Exception:
                continue
            if not hasattr(mt, name):
                missing.append(f"{name}: absent")
                break
            try:
                call(mt, name, form, mx, my)
            except Exception as e:
                missing.append(f"{name}{form}: {type(e).__name__}: {str(e)[:80]}")
                break
            ours = timed(lambda: call(mt, name, form, mx, my))
            theirs = timed(lambda: call(torch, name, form, tx, ty))
            rows.append((ours / theirs, name, form, ours, theirs))
            print(f"{name}{form}: {ours * 1e6:.1f} us vs {theirs * 1e6:.1f} us, {ours / theirs:.2f}", file=sys.stderr)
            break
    rows.sort(reverse=True)
    print(f"| op ({a.dtype} {a.shape}) | mindtorch_v2 | PyTorch | ratio |\n|---|---|---|---|")
    for ratio, name, form, ours, theirs in rows:
        if ratio > a.over:
            print(f"| {name}({', '.join(form)}) | {ours * 1e6:.1f} us | {theirs * 1e6:.1f} us | {ratio:.2f} |")
    print(f"\n{len(rows)} ops timed, {sum(r[0] > a.over for r in rows)} above {a.over}; "
          f"{len(missing)} call forms PyTorch accepts and mindtorch_v2 rejects:")
    for m in missing:
        print(f"- {m}")


if __name__ == "__main__":
    main()
