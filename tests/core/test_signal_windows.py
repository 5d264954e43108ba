"""torch.signal.windows against live PyTorch: values (bit-for-bit or to a few ulps), dtypes, errors."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}), ("exponential", {"tau": 3.0}),
           ("exponential", {"center": 2.0, "sym": False}), ("gaussian", {}), ("gaussian", {"std": 0.5}),
           ("general_cosine", {"a": [0.46, 0.23, 0.31]}), ("general_hamming", {}), ("general_hamming", {"alpha": 0.6}),
           ("hamming", {}), ("hann", {}), ("kaiser", {}), ("kaiser", {"beta": 8.0}), ("nuttall", {})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("name,kw", WINDOWS)
def test_window_matches_torch(name, kw, M, sym, dtype):
    kw = dict({"sym": sym}, **kw)
    a = getattr(mt.signal.windows, name)(M, dtype=getattr(mt, dtype), **kw)
    b = getattr(torch.signal.windows, name)(M, dtype=getattr(torch, dtype), **kw)
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(np.array(a.tolist()), b.numpy(), rtol=tol, atol=tol)


def test_default_dtype_and_requires_grad():
    a = mt.signal.windows.hann(5, requires_grad=True)
    assert a.dtype == mt.float32 and a.requires_grad


@pytest.mark.parametrize("call", [
    lambda L: L.signal.windows.hann(-1),
    lambda L: L.signal.windows.hann(4, dtype=L.int64),
    lambda L: L.signal.windows.exponential(4, tau=0.0),
    lambda L: L.signal.windows.exponential(4, center=1.0),
    lambda L: L.signal.windows.gaussian(4, std=-1.0),
    lambda L: L.signal.windows.kaiser(4, beta=-1.0),
    lambda L: L.signal.windows.general_cosine(4, a=3),
    lambda L: L.signal.windows.general_cosine(4, a=[]),
])
def test_errors_as_torch(call):
    with pytest.raises(Exception):
        call(torch)
    same(lambda: call(mt), lambda: call(torch))
