"""The linear-algebra names PyTorch 2.13 keeps only to point elsewhere, against live PyTorch: the
removed torch.matrix_rank/solve/lstsq/symeig/eig and Tensor.solve/lstsq/eig/symeig raise its
RuntimeError with its text; the deprecated frobenius_norm/nuclear_norm warn once and compute."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", [
    lambda lib, A: lib.matrix_rank(A), lambda lib, A: lib.matrix_rank(A, 1e-3, True),
    lambda lib, A: lib.solve(A, A), lambda lib, A: lib.solve(A), lambda lib, A: lib.lstsq(A, A),
    lambda lib, A: lib.symeig(A), lambda lib, A: lib.symeig(A, eigenvectors=True, upper=False),
    lambda lib, A: lib.eig(A), lambda lib, A: lib.eig(A, True),
    lambda lib, A: A.solve(A), lambda lib, A: A.lstsq(A), lambda lib, A: A.eig(), lambda lib, A: A.symeig(True),
])
def test_removed_functions_raise_pytorchs_text(call):
    same(lambda: call(mt, mt.eye(3)), lambda: call(torch, torch.eye(3)))


def close(m, t):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(m.double().detach().numpy(), t.double().detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib, A: lib.frobenius_norm(A, [0, 1]), lambda lib, A: lib.frobenius_norm(A, dim=[1], keepdim=True),
    lambda lib, A: lib.frobenius_norm(A), lambda lib, A: lib.nuclear_norm(A), lambda lib, A: lib.nuclear_norm(A, True),
    lambda lib, A: lib.nuclear_norm(A, [0, 1]), lambda lib, A: lib.nuclear_norm(A, [1, 0], keepdim=True),
    lambda lib, A: lib.nuclear_norm(A.reshape(2, 2, 3)), lambda lib, A: lib.nuclear_norm(A.reshape(2, 2, 3), [0, 2]),
])
def test_deprecated_norms(call):
    data = [[1., 2., 0.5, -1.], [0., 3., 1., 2.], [4., -1., 2., 0.]]
    same(lambda: call(mt, mt.tensor(data)), lambda: call(torch, torch.tensor(data)), cmp=close)


def test_deprecated_norms_warn_once_and_differentiate():
    import warnings
    from mindtorch_v2 import _linalg_utils
    _linalg_utils._WARNED.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mt.frobenius_norm(mt.ones(2, 2), [0, 1])
        mt.frobenius_norm(mt.ones(2, 2), [0, 1])
    assert [str(x.message) for x in w] == [
        "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in a future "
        "PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead"]
    grads = []
    for lib in (mt, torch):
        A = lib.tensor([[1., 2.], [3., 5.]], dtype=lib.float64, requires_grad=True)
        (lib.frobenius_norm(A, [0, 1]) + lib.nuclear_norm(A)).backward()
        grads.append(A.grad)
    close(*grads)
