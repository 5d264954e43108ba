"""The unmodified safetensors package saving and loading mindtorch_v2 tensors through the torch proxy.
Each case runs in a fresh interpreter (the proxy must own `import torch` before safetensors imports it)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("safetensors")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRELUDE = """
import json, os, sys
import torch_proxy
torch_proxy.install()
import mindtorch_v2.nn as _nn
if not hasattr(_nn, "Module"):  # safetensors annotates with torch.nn.Module; nn.Module may live on another branch
    _nn.Module = type("Module", (), {})
import torch
import safetensors.torch as st
assert torch.__name__ == "mindtorch_v2"
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]

def tensors():
    out = {}
    for i, d in enumerate(DTYPES):
        x = torch.arange(12).reshape(3, 4) % 7 - 2
        out[d] = (x > 0) if d == "bool" else (x.abs() if d == "uint8" else x).to(getattr(torch, d))
    out["scalar"] = torch.tensor(2.5)
    out["empty"] = torch.zeros(0, 3)
    return out

def dump(d):
    return {k: [str(v.dtype), list(v.shape), (v.float() if v.dtype in (torch.float16, torch.bfloat16) else v).tolist()]
            for k, v in sorted(d.items())}
"""


def run(code, tmp_path):
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def expected():
    out = run("print(json.dumps(dump(tensors())))", ".")
    return json.loads(out)


def test_save_file_load_file_save_load_safe_open(tmp_path):
    out = run("""
        t = tensors()
        st.save_file(t, "a.safetensors", metadata={"k": "v"})
        res = {"load_file": dump(st.load_file("a.safetensors")), "load": dump(st.load(st.save(t)))}
        with st.safe_open("a.safetensors", framework="pt") as f:
            res["safe_open"] = dump({k: f.get_tensor(k) for k in f.keys()})
            res["metadata"] = f.metadata()
            sl = f.get_slice("float32")
            res["slice"] = [sl.get_shape(), sl.get_dtype(), sl[1:3, ::2].tolist()]
        with st.safe_open("a.safetensors", framework="pt", backend="pread") as f:
            res["pread"] = dump({k: f.get_tensor(k) for k in f.keys()})
        res["torch.load"] = dump(torch.load("a.safetensors"))
        print(json.dumps(res))
    """, tmp_path)
    res = json.loads(out)
    want = {k: v for k, v in sorted(expected().items())}
    for key in ("load_file", "load", "safe_open", "pread", "torch.load"):
        assert res[key] == want, key
    assert res["metadata"] == {"k": "v"}
    assert res["slice"] == [[3, 4], "F32", [[2.0, 4.0], [-1.0, 1.0]]]


def test_load_file_maps_the_file(tmp_path):
    out = run("""
        st.save_file({"w": torch.arange(4096.0)}, "m.safetensors")
        w = st.load_file("m.safetensors")["w"]
        real = os.path.realpath("m.safetensors")
        spans = [[int(x, 16) for x in line.split()[0].split("-")] for line in open("/proc/self/maps")
                 if line.rstrip().endswith(real)]
        print(any(lo <= w.data_ptr() < hi for lo, hi in spans), w[4095].item())
    """, tmp_path)
    assert out.split() == ["True", "4095.0"]


def test_shared_and_noncontiguous_tensors_are_refused(tmp_path):
    out = run("""
        w = torch.arange(6.0).reshape(2, 3)
        for bad in ({"a": w, "b": w[1]}, {"a": w.t()}):
            try:
                st.save_file(bad, "x.safetensors")
                print("saved")
            except (RuntimeError, ValueError) as e:
                print(type(e).__name__, " ".join(str(e).split())[:60])
    """, tmp_path)
    lines = out.strip().splitlines()
    assert lines[0].startswith("RuntimeError Some tensors share memory")
    assert lines[1].startswith("ValueError You are trying to save a non contiguous tensor")


def test_files_match_real_torch(tmp_path):
    torch = pytest.importorskip("torch")
    import safetensors.torch as st  # with real torch, in this process
    run('st.save_file(tensors(), "ours.safetensors", metadata={"a": "b"})', tmp_path)
    theirs = {}
    for d in ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]:
        x = torch.arange(12).reshape(3, 4) % 7 - 2
        theirs[d] = (x > 0) if d == "bool" else (x.abs() if d == "uint8" else x).to(getattr(torch, d))
    theirs["scalar"] = torch.tensor(2.5)
    theirs["empty"] = torch.zeros(0, 3)
    st.save_file(theirs, tmp_path / "theirs.safetensors", metadata={"a": "b"})
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()
    loaded = st.load_file(tmp_path / "ours.safetensors")
    assert all(torch.equal(loaded[k], theirs[k]) for k in theirs)
    out = run('print(json.dumps(dump(st.load_file("theirs.safetensors"))))', tmp_path)
    assert json.loads(out) == expected()
