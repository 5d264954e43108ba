"""The __torch_function__ protocol against PyTorch: scripts/torch_function.py runs under the proxy and
under PyTorch 2.13 (tests/hf/test_hf_libraries.py's harness); its calls, logs, results and error texts
must be equal. A second check: defining no subclass leaves every torch function unwrapped."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hf"))
from test_hf_libraries import ROOT, compare, needs, run_both  # noqa: E402


def test_torch_function_protocol_equals_pytorch(tmp_path):
    needs()
    theirs = compare(run_both(os.path.join(HERE, "scripts", "torch_function.py"), tmp_path), rtol=0, atol=0)
    assert theirs["torch_add"]["log"] == [["Logged", "add", ["Logged"]]] + theirs["torch_add"]["log"][1:]
    assert theirs["refused_only"]["out"][:2] == ["raised", "TypeError"]


def test_no_subclass_no_wrapper():
    code = ("import mindtorch_v2 as t, mindtorch_v2.overrides as o; "
            "assert not o._installed and t.add.__module__ == 'mindtorch_v2._elementwise'; "
            "import mindtorch_v2.nn, mindtorch_v2._vmap; assert not o._installed; "
            "p = t.nn.Parameter(t.ones(2)); assert type(p + 1) is t.Tensor and not o._installed; "
            "S = type('S', (t.Tensor,), {}); assert not o._installed; "
            "L = type('L', (t.Tensor,), {'__torch_function__': classmethod(t.Tensor.__torch_function__.__func__)}); "
            "assert o._installed and type(t.ones(2).as_subclass(L) + 1) is L")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_real_torch_functions_on_our_tensors_raise_type_error():
    """Real PyTorch's functions (imported beside mindtorch_v2, without the proxy) dispatch our Tensor to
    its __torch_function__, which runs them again: the second arrival returns NotImplemented, so PyTorch
    raises its TypeError instead of recursing until RecursionError."""
    import pytest
    torch = pytest.importorskip("torch")
    import mindtorch_v2 as mt
    x = mt.ones(3)
    with pytest.raises(TypeError, match="no implementation found for 'torch.nn.functional.relu'"):
        torch.nn.functional.relu(x)
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.add'"):
        torch.add(x, 1)
    assert mt.nn.functional.relu(x - 2).tolist() == [0.0, 0.0, 0.0]  # our own functions are unaffected
