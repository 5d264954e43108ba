"""Reductions against live PyTorch: values, dtypes, shapes, errors."""
import itertools

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def make(shape, dtype, seed=0, transpose=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        data = rng.random(shape) > 0.5
    elif "int" in dtype:
        data = rng.integers(0 if dtype == "uint8" else -5, 6, size=shape)
    else:
        data = rng.standard_normal(shape) * 3
    t = torch.tensor(data.tolist() if shape else data.item(), dtype=getattr(torch, dtype))
    m = mt.tensor(data.tolist() if shape else data.item(), dtype=getattr(mt, dtype))
    if transpose and len(shape) >= 2:
        t, m = t.transpose(0, -1), m.transpose(0, -1)
    return m, t


def same(m, t, exact=False):
    assert str(m.dtype) == str(t.dtype)
    assert tuple(m.shape) == tuple(t.shape)
    a = np.array(m.float().tolist() if m.dtype is mt.bfloat16 else m.tolist(), dtype=np.float64)
    b = np.array(t.float().tolist() if t.dtype is torch.bfloat16 else t.tolist(), dtype=np.float64)
    if exact or not t.dtype.is_floating_point:
        np.testing.assert_array_equal(a, b)
    else:
        tol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5, torch.float64: 1e-10}[t.dtype]
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * 4)


SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5), (2, 0, 3), (300, 257)]


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "all", "any", "mean"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_full_and_dim_reductions(op, dtype):
    for shape, transpose in itertools.product(SHAPES, (False, True)):
        m, t = make(shape, dtype, transpose=transpose)
        if op == "prod" and "float" in dtype:
            m, t = m / 4 + 1, t / 4 + 1  # keep products finite and comparable
        dims = [None] + list(range(-len(shape), len(shape))) + ([(0, -1)] if len(shape) >= 2 else [])
        for dim, keepdim in itertools.product(dims, (False, True)):
            kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
            if op in ("amax", "amin") and dim is None:
                kwargs = {}
            try:
                expected = getattr(t, op)(**kwargs)
            except (RuntimeError, IndexError, TypeError) as e:
                with pytest.raises(type(e)):
                    getattr(m, op)(**kwargs)
                continue
            got = getattr(m, op)(**kwargs)
            same(got, expected, exact=op in ("amax", "amin", "all", "any"))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
def test_sum_dtype_argument(dtype):
    m, t = make((4, 5), "int32")
    same(m.sum(dtype=getattr(mt, dtype)), t.sum(dtype=getattr(torch, dtype)))
    same(m.sum(1, dtype=getattr(mt, dtype)), t.sum(1, dtype=getattr(torch, dtype)))


def test_sum_is_accurate():
    # pairwise summation: 2**24 + many ones would be lost by a naive float32 running sum
    m = mt.ones(1 << 20) * 0.1
    t = torch.ones(1 << 20) * 0.1
    assert abs(m.sum().item() - t.sum().item()) / t.sum().item() < 1e-6


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_max_min_with_dim(dtype):
    for shape, transpose in itertools.product([(5,), (3, 4), (2, 3, 4)], (False, True)):
        m, t = make(shape, dtype, seed=3, transpose=transpose)
        for dim, keepdim, name in itertools.product(range(len(shape)), (False, True), ("max", "min")):
            rm, rt = getattr(m, name)(dim, keepdim), getattr(t, name)(dim, keepdim)
            same(rm.values, rt.values, exact=True)
            same(rm.indices, rt.indices, exact=True)
            same(getattr(m, "arg" + name)(dim, keepdim), getattr(t, "arg" + name)(dim, keepdim))
        same(m.argmax(), t.argmax())
        same(m.max(), t.max(), exact=True)


def test_nan_propagation():
    data = [[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0]]
    m, t = mt.tensor(data), torch.tensor(data)
    same(m.amax(1), t.amax(1), exact=True)
    same(m.max(1).indices, t.max(1).indices)
    same(m.sum(1), t.sum(1))


def test_errors():
    m, t = mt.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        mt.arange(4).mean()
    with pytest.raises(RuntimeError, match="appears multiple times"):
        m.sum((0, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        m.sum(5)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        mt.ones(0).max()
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        mt.ones(0, 3).amax(0)
