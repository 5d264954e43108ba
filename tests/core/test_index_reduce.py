"""torch.index_reduce / Tensor.index_reduce(_) and torch.segment_reduce against live PyTorch: every
reduce mode with and without include_self / initial, the dtypes each accepts, non-contiguous and
0-dim inputs, lengths or offsets along an axis, error types and texts, gradients."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import DTYPES, same

torch = pytest.importorskip("torch")

warnings.filterwarnings("ignore", message="index_reduce\\(\\) is in beta")


def close(m, t):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(m.double().numpy(), t.double().numpy(), rtol=1e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_index_reduce_modes_and_dtypes(dtype, reduce, include_self):
    def run(lib):
        dt = getattr(lib, dtype)
        x = (lib.arange(15).reshape(3, 5) % 4 + 1).to(dt).t()  # non-contiguous (5, 3)
        src = (lib.arange(12).reshape(4, 3) % 5 + 2).to(dt)
        return lib.index_reduce(x, 0, lib.tensor([0, 4, 2, 0]), src, reduce, include_self=include_self)
    same(lambda: run(mt), lambda: run(torch), cmp=close)


def test_index_reduce_method_inplace_dim_and_scalars():
    def run(lib):
        x = lib.ones(2, 4)
        r1 = x.index_reduce(1, lib.tensor([3, 1, 3], dtype=lib.int32), lib.arange(6.).reshape(2, 3) + 1, "mean")
        x.index_reduce_(-1, lib.tensor([0, 0]), lib.full((2, 2), 5.), "amax", include_self=False)
        r0 = lib.index_reduce(lib.ones(()), 0, lib.tensor([0]), lib.tensor(3.), "prod")
        return lib.stack([r1, x]), r0
    rm, rt = run(mt), run(torch)
    for m, t in zip(rm, rt):
        close(m, t)


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([0, 1]), lib.ones(2, 3), "sum"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([0., 1.]), lib.ones(2, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([[0, 1]]), lib.ones(2, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([0, 1]), lib.ones(2, 3, dtype=lib.float64), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([0, 1, 2]), lib.ones(2, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([0, 5]), lib.ones(2, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 0, lib.tensor([0, -1]), lib.ones(2, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 2, lib.tensor([0, 1]), lib.ones(2, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(5, 3), 1, lib.tensor([0, 1]), lib.ones(4, 2), "mean"),
    lambda lib: lib.index_reduce(lib.ones(3, dtype=lib.bool), 0, lib.tensor([0]), lib.tensor([False]), "amax"),
])
def test_index_reduce_errors(call):
    same(lambda: call(mt), lambda: call(torch))


def test_index_reduce_grad():
    for reduce in ("prod", "mean", "amax", "amin"):
        grads = []
        for lib in (mt, torch):
            x = lib.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=lib.float64, requires_grad=True)
            s = lib.tensor([[2., 7.], [3., 1.], [4., 4.]], dtype=lib.float64, requires_grad=True)
            lib.index_reduce(x, 0, lib.tensor([0, 2, 0]), s, reduce).pow(2).sum().backward()
            grads.append((x.grad, s.grad))
        for m, t in zip(*grads):
            close(m, t)


DATA = [1., 2., 3., 4., 5., 6.]


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 7.0])
def test_segment_reduce(reduce, initial):
    for kwargs in (lambda lib: {"lengths": lib.tensor([2, 0, 3, 1])},
                   lambda lib: {"offsets": lib.tensor([0, 2, 2, 5, 6], dtype=lib.int32)}):
        same(lambda: mt.segment_reduce(mt.tensor(DATA), reduce, initial=initial, **kwargs(mt)),
             lambda: torch.segment_reduce(torch.tensor(DATA), reduce, initial=initial, **kwargs(torch)), cmp=close)
    same(lambda: mt.segment_reduce(mt.tensor(DATA).reshape(2, 3), reduce, lengths=mt.tensor([[1, 2], [3, 0]]),
                                   axis=1, initial=initial),
         lambda: torch.segment_reduce(torch.tensor(DATA).reshape(2, 3), reduce, lengths=torch.tensor([[1, 2], [3, 0]]),
                                      axis=1, initial=initial), cmp=close)
    same(lambda: mt.segment_reduce(mt.tensor(DATA).reshape(3, 2).t().t(), reduce, lengths=mt.tensor([1, 2])),
         lambda: torch.segment_reduce(torch.tensor(DATA).reshape(3, 2), reduce, lengths=torch.tensor([1, 2])),
         cmp=close)


@pytest.mark.parametrize("dtype", DTYPES)
def test_segment_reduce_dtypes(dtype):
    same(lambda: mt.segment_reduce(mt.tensor(DATA).to(getattr(mt, dtype)), "sum", lengths=mt.tensor([4, 2])),
         lambda: torch.segment_reduce(torch.tensor(DATA).to(getattr(torch, dtype)), "sum", lengths=torch.tensor([4, 2])),
         cmp=lambda m, t: np.testing.assert_allclose(m.double().numpy(), t.double().numpy(), rtol=1e-2))


@pytest.mark.parametrize("call", [
    lambda lib: lib.segment_reduce(lib.tensor(DATA), "foo", lengths=lib.tensor([6])),
    lambda lib: lib.segment_reduce(lib.tensor(DATA), "sum"),
    lambda lib: lib.segment_reduce(lib.tensor(DATA), "sum", lengths=lib.tensor([1, 1])),
    lambda lib: lib.segment_reduce(lib.tensor(DATA), "sum", indices=lib.tensor([0, 0, 1])),
    lambda lib: lib.segment_reduce(lib.tensor(DATA).reshape(2, 3), "sum", lengths=lib.tensor([1, 2]), axis=1),
    lambda lib: lib.segment_reduce(lib.tensor(DATA), "sum", lengths=lib.tensor([6.])),
    lambda lib: lib.segment_reduce(lib.tensor(DATA), "sum", lengths=lib.tensor([8, -2])),
])
def test_segment_reduce_errors(call):
    same(lambda: call(mt), lambda: call(torch))


def test_segment_reduce_grad():
    for reduce in ("sum", "mean", "max", "min", "prod"):
        grads = []
        for lib in (mt, torch):
            d = lib.tensor([1., 3., 2., 5., 4., 6.], dtype=lib.float64, requires_grad=True)
            lib.segment_reduce(d, reduce, lengths=lib.tensor([2, 3, 1])).pow(2).sum().backward()
            grads.append(d.grad)
        close(*grads)
