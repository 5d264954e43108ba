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
    flat = data.reshape(-1).tolist() if shape else data.item()
    t = torch.tensor(flat, dtype=getattr(torch, dtype)).reshape(shape)
    m = mt.tensor(flat, dtype=getattr(mt, dtype)).reshape(shape)
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


# ---- statistics, norms, scans, order statistics ---------------------------------------------


def agree(fn, *pairs, exact=False, tol=None):
    """fn(lib, *tensors) on both libraries: the same values/dtypes/shapes, or the same error type and text."""
    ms, ts = [p[0] for p in pairs], [p[1] for p in pairs]
    try:
        expected = fn(torch, *ts)
    except Exception as e:  # noqa: BLE001 - the oracle's error is the spec
        with pytest.raises(type(e)) as got:
            fn(mt, *ms)
        assert str(got.value).split("\n")[0] == str(e).split("\n")[0]
        return None
    got = fn(mt, *ms)
    if isinstance(expected, tuple):
        assert type(got).__name__ == type(expected).__name__ and len(got) == len(expected)
        for g, x in zip(got, expected):
            same(g, x, exact=exact or not x.dtype.is_floating_point)
    else:
        same(got, expected, exact=exact)
    return got


FLOATS = ["float16", "bfloat16", "float32", "float64"]
STAT_SHAPES = [(), (0,), (7,), (2, 3, 5), (2, 0, 3), (130, 67)]


def dims_of(shape):
    return [None] + list(range(-len(shape), len(shape))) + ([(0, -1)] if len(shape) >= 2 else [])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_var_std(name, dtype):
    for shape, tr in itertools.product(STAT_SHAPES, (False, True)):
        pair = make(shape, dtype, transpose=tr)
        for dim, keepdim in itertools.product(dims_of(shape), (False, True)):
            for kw in ({}, {"correction": 0}, {"correction": 2}) if dim is None or dim == -1 else ({},):
                agree(lambda L, x: getattr(L, name)(x, dim=dim, keepdim=keepdim, **kw), pair)
    agree(lambda L, x: getattr(L, name)(x, 1, True, True), make((3, 4), dtype))
    agree(lambda L, x: getattr(L, name)(x, False), make((3, 4), dtype))


def test_var_is_accurate():
    # a large offset: a one-pass E[x^2] - E[x]^2 loses every digit here
    data = (np.arange(10000) % 7 + 1e4).tolist()
    m, t = mt.tensor(data), torch.tensor(data)
    np.testing.assert_allclose(m.var().item(), t.var().item(), rtol=1e-5)
    np.testing.assert_allclose(m.std(0).item(), t.std(0).item(), rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_norm(dtype):
    for shape, tr in itertools.product(STAT_SHAPES, (False, True)):
        pair = make(shape, dtype, transpose=tr)
        for dim, ord in itertools.product(dims_of(shape), (2, 1, 0, 3, 0.5, -1, float("inf"), float("-inf"))):
            keepdim = ord == 2
            agree(lambda L, x: L.linalg.vector_norm(x, ord, dim, keepdim), pair)
        agree(lambda L, x: L.norm(x), pair)
        agree(lambda L, x: L.linalg.norm(x), pair)
        agree(lambda L, x: x.norm(p=1), pair)
    pair = make((3, 4), dtype)
    for dt in ("float32", "float64", "float16"):
        agree(lambda L, x: L.linalg.vector_norm(x, dtype=getattr(L, dt)), pair)
        agree(lambda L, x: L.norm(x, dim=1, dtype=getattr(L, dt)), pair)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matrix_norm_and_linalg_norm(dtype):
    for shape in [(3, 4), (2, 3, 4), (0, 3)]:
        pair = make(shape, dtype, seed=4)
        for ord in ("fro", 1, -1, float("inf"), float("-inf"), "foo"):
            agree(lambda L, x: L.linalg.matrix_norm(x, ord), pair)
            agree(lambda L, x: L.linalg.matrix_norm(x, ord, keepdim=True), pair)
            agree(lambda L, x: L.linalg.matrix_norm(x, ord, dim=(-1, 0)), pair)
            agree(lambda L, x: L.linalg.norm(x, ord, dim=(0, 1)), pair)
        agree(lambda L, x: L.linalg.norm(x, 2, dim=0), pair)
        agree(lambda L, x: L.linalg.norm(x, "fro"), pair)
        agree(lambda L, x: L.norm(x, "fro", dim=(0, 1)), pair)
    agree(lambda L, x: L.linalg.matrix_norm(x), make((3,), "float32"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp(dtype):
    for shape, tr in itertools.product(STAT_SHAPES[2:], (False, True)):
        pair = make(shape, dtype, transpose=tr)
        for dim, keepdim in itertools.product(dims_of(shape)[1:], (False, True)):
            agree(lambda L, x: L.logsumexp(x, dim, keepdim), pair)
    inf = [[float("inf"), 1.0], [float("-inf"), float("-inf")], [float("nan"), 0.0]]
    agree(lambda L, x: L.logsumexp(x, 1), (mt.tensor(inf), torch.tensor(inf)))
    agree(lambda L, x: L.logsumexp(x, 0), make((0, 3), "float32"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp"])
def test_scans(name, dtype):
    for shape, tr in itertools.product([(), (0,), (7,), (3, 4), (2, 3, 5), (2, 0, 3), (40, 300)], (False, True)):
        m, t = make(shape, dtype, transpose=tr)
        if name == "cumprod" and "float" in dtype:
            m, t = m / 4 + 1, t / 4 + 1
        for dim in list(range(-len(shape), len(shape))) or [0, -1]:
            agree(lambda L, x: getattr(L, name)(x, dim), (m, t))
            if name != "logcumsumexp":
                for dt in ("float64", "int32"):
                    agree(lambda L, x: getattr(L, name)(x, dim, dtype=getattr(L, dt)), (m, t))
    agree(lambda L, x: getattr(L, name)(x, 5), make((2, 3), dtype))


def test_scan_out_and_inplace():
    agree(lambda L, x: L.cumsum(x, 0, out=L.empty(2, 3, dtype=L.float64)), make((2, 3), "float32"))
    agree(lambda L, x: x.clone().cumsum_(1), make((2, 3), "int64"))
    agree(lambda L, x: x.clone().cumprod_(0), make((2, 3), "float32"))
    agree(lambda L, x: x.clone().cumsum_(0, dtype=L.float64), make((2, 3), "float32"))
    agree(lambda L, x: x.cumsum(0), make((4, 3), "float16", transpose=True))


def test_cumsum_accumulates_in_double():
    m, t = mt.full((100000,), 0.1), torch.full((100000,), 0.1)
    np.testing.assert_array_equal(np.array(m.cumsum(0).tolist()), np.array(t.cumsum(0).tolist()))


@pytest.mark.parametrize("dtype", DTYPES)
def test_counts_and_nan_reductions(dtype):
    for shape, tr in itertools.product(STAT_SHAPES, (False, True)):
        pair = make(shape, dtype, transpose=tr)
        for dim, keepdim in itertools.product(dims_of(shape), (False, True)):
            agree(lambda L, x: L.count_nonzero(x, dim), pair)
            agree(lambda L, x: L.nansum(x, dim, keepdim), pair)
            agree(lambda L, x: L.nanmean(x, dim, keepdim), pair)
        agree(lambda L, x: L.aminmax(x), pair)
        for d in range(len(shape)):
            agree(lambda L, x: L.aminmax(x, dim=d, keepdim=True), pair, exact=True)
    agree(lambda L, x: L.nansum(x, dtype=L.float32), make((3, 4), dtype))
    nan = [[1.0, float("nan"), 3.0], [float("nan")] * 3]
    agree(lambda L, x: L.nansum(x, 1), (mt.tensor(nan), torch.tensor(nan)))
    agree(lambda L, x: L.nanmean(x, 1), (mt.tensor(nan), torch.tensor(nan)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["median", "nanmedian", "mode"])
def test_order_statistics(name, dtype):
    # distinct values along each row (indices are then unambiguous), plus the shapes' edge cases
    for shape, tr in itertools.product([(), (0,), (1,), (7,), (3, 4), (2, 3, 5), (2, 0, 3), (6, 50)], (False, True)):
        n = int(np.prod(shape)) if shape else 1
        data = (np.random.default_rng(1).permutation(n) % (2 if dtype == "bool" else 97)).reshape(shape)
        if name == "mode":
            data = data % 4
        flat = data.reshape(-1).tolist() if shape else data.item()
        t = torch.tensor(flat).reshape(shape).to(getattr(torch, dtype))
        m = mt.tensor(flat).reshape(shape).to(getattr(mt, dtype))
        if tr and len(shape) >= 2:
            m, t = m.transpose(0, -1), t.transpose(0, -1)
        if name != "mode":
            agree(lambda L, x: getattr(L, name)(x), (m, t), exact=True)
        for dim, keepdim in itertools.product(range(-len(shape), len(shape)) if shape else [0], (False, True)):
            agree(lambda L, x: getattr(L, name)(x, dim, keepdim), (m, t), exact=True)


def test_median_nan():
    data = [[1.0, float("nan"), 2.0, float("nan")], [3.0, 1.0, 2.0, 0.5], [float("nan")] * 4]
    pair = (mt.tensor(data), torch.tensor(data))
    for name in ("median", "nanmedian"):
        agree(lambda L, x: getattr(L, name)(x, 1), pair, exact=True)
        agree(lambda L, x: getattr(L, name)(x), pair, exact=True)
        agree(lambda L, x: getattr(L, name)(x[1]), pair, exact=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_quantile(dtype):
    for shape, tr in itertools.product([(), (7,), (3, 4), (2, 3, 5), (0, 3)], (False, True)):
        pair = make(shape, dtype, transpose=tr)
        for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
            for q in (0.0, 0.3, 0.5, 1.0, [0.25, 0.75], 0.333):
                for dim, keepdim in itertools.product([None] + list(range(len(shape))), (False, True)):
                    for name in ("quantile", "nanquantile"):
                        r = agree(lambda L, x: getattr(L, name)(x, L.tensor(q, dtype=x.dtype) if isinstance(q, list)
                                                                else q, dim, keepdim, interpolation=interp), pair)
                        if r is not None and interp == "linear":  # PyTorch's layout: q innermost
                            t = getattr(torch, name)(pair[1], torch.tensor(q, dtype=pair[1].dtype)
                                                     if isinstance(q, list) else q, dim, keepdim)
                            assert r.stride() == t.stride()
    pair = make((3, 4), "float32")
    agree(lambda L, x: L.quantile(x, 1.5), pair)
    agree(lambda L, x: L.quantile(x, L.tensor([-0.1, 0.5])), pair)
    agree(lambda L, x: L.quantile(x, L.tensor([0.5], dtype=L.float64)), pair)
    agree(lambda L, x: L.quantile(x, L.tensor([[0.5]])), pair)
    agree(lambda L, x: L.quantile(x, 0.5, interpolation="foo"), pair)
    nan = [[1.0, float("nan"), 3.0, 2.0], [1.0, 2.0, 3.0, 4.0]]
    for name in ("quantile", "nanquantile"):
        agree(lambda L, x: getattr(L, name)(x, 0.4, dim=1), (mt.tensor(nan), torch.tensor(nan)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dist(dtype):
    for p in (2, 1, 0, 3, float("inf")):
        agree(lambda L, a, b: L.dist(a, b, p), make((3, 4), dtype), make((4,), dtype, seed=1))
    agree(lambda L, a: L.dist(a, 1), make((3,), "float32"))


def test_stat_errors():
    pair = make((2, 3), "float32")
    agree(lambda L, x: L.var(x, 5), pair)
    agree(lambda L, x: L.var(x, (0, 0)), pair)
    agree(lambda L, x: L.linalg.vector_norm(x, dtype=L.float16), pair)
    agree(lambda L, x: L.linalg.vector_norm(x, ord="fro"), pair)
    agree(lambda L, x: L.linalg.vector_norm(x, float("inf")), make((0,), "float32"))
    agree(lambda L, x: L.linalg.vector_norm(x, -1, dim=(1, 2)), make((2, 0, 0), "float32"))
    agree(lambda L, x: L.logsumexp(x, dim=None), pair)
    agree(lambda L, x: L.median(x, dim=(0, 1)), pair)
    agree(lambda L, x: L.aminmax(x, dim=0), make((0, 3), "float32"))
    agree(lambda L, x: L.aminmax(x), make((0,), "float32"))
    agree(lambda L, x: L.mode(x, 0), make((0, 3), "float32"))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        mt.var(mt.ones(1))


def test_max_min_write_out():
    """max/min with out=: the (values, indices) pair for the dim form (PyTorch's max_out/min_out return types),
    one tensor otherwise, and PyTorch's dtype and autograd errors (out= used to be ignored)."""
    torch = pytest.importorskip("torch")

    def outcome(L, f):
        try:
            return repr(f(L))
        except Exception as e:  # noqa: BLE001  (the error is the result compared)
            return type(e).__name__, str(e)
    x = [[1.0, 5.0], [3.0, 2.0]]
    cases = [
        lambda L: L.max(L.tensor(x), 0, out=(L.empty(0), L.empty(0, dtype=L.int64))),
        lambda L: L.min(L.tensor(x), 1, True, out=(L.empty(0), L.empty(0, dtype=L.int64))),
        lambda L: L.max(L.tensor(x, requires_grad=True), 0, out=(L.empty(0), L.empty(0, dtype=L.int64))),
        lambda L: L.max(L.tensor(x), 0, out=(L.empty(0, dtype=L.int64), L.empty(0, dtype=L.int64))),
        lambda L: L.min(L.tensor(x), 0, out=(L.empty(0), L.empty(0))),
        lambda L: L.max(L.tensor(x), out=L.empty(0)),
        lambda L: L.min(L.tensor(x), L.tensor([2.0, 2.0]), out=L.empty(0)),
    ]
    for case in cases:
        assert outcome(mt, case) == outcome(torch, case)
    v, i = mt.empty(0), mt.empty(0, dtype=mt.int64)
    r = mt.max(mt.tensor(x), 0, out=(v, i))
    assert r.values is v and r.indices is i and v.tolist() == [3.0, 5.0]


# ---- long inputs: the vector folds, their thread split and column folds ---------------------
# Lengths around the fold's 32 lanes, its 1024-element prod leaves and the full-reduction split
# (65536 elements and more run on the pool), odd, contiguous or not.

LONG_SIZES = [31, 33, 1025, 65537, 200003]


def long_pair(n, dtype, seed=0, kind="normal"):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        data = rng.random(n) > 0.5
    elif "int" in dtype:
        data = rng.integers(0 if dtype == "uint8" else -100, 101, size=n)
    elif kind == "near1":  # products stay finite over 200k factors
        data = 1 + (rng.random(n) - 0.5) * 1e-3
    else:
        data = rng.standard_normal(n) * 3
    return pair_of(data, dtype)


def pair_of(data, dtype):
    t = torch.from_numpy(np.ascontiguousarray(data))
    m = mt.from_numpy(np.ascontiguousarray(data))
    return m.to(getattr(mt, dtype)), t.to(getattr(torch, dtype))


def layouts(m, t):
    """the run itself, every other element, and a transposed 2-D view (a column fold for dim=0)"""
    yield m, t
    yield m[::2], t[::2]
    n = m.shape[0] // 8 * 8
    if n:
        yield m[:n].reshape(8, -1).t(), t[:n].reshape(8, -1).t()
        yield m[:n].reshape(-1, 8), t[:n].reshape(-1, 8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_folds(dtype):
    for n in LONG_SIZES:
        for m, t in layouts(*long_pair(n, dtype)):
            dims = [None, 0, -1] if m.dim() == 2 else [None]
            for name, dim in itertools.product(["amax", "amin", "all", "any", "count_nonzero", "nansum"], dims):
                if name == "nansum" and dtype == "bool":
                    continue
                kw = {} if dim is None else {"dim": dim}
                exact = name not in ("nansum",) or "int" in dtype
                agree(lambda L, x: getattr(L, name)(x, **kw), (m, t), exact=exact)
            agree(lambda L, x: L.aminmax(x), (m, t), exact=True)
            if dtype != "bool":
                agree(lambda L, x: x.max(), (m, t), exact=True)
                agree(lambda L, x: x.min(), (m, t), exact=True)
                if m.dim() == 2:
                    agree(lambda L, x: x.max(0), (m, t), exact=True)
                    agree(lambda L, x: x.min(-1), (m, t), exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_prod(dtype):
    kind = "near1" if dtype in FLOATS else "normal"
    for n in LONG_SIZES:
        m, t = long_pair(n, dtype, seed=1, kind=kind)
        if dtype in ("int8", "int16", "int32", "int64", "uint8"):
            m, t = m % 3 - 1 if dtype != "uint8" else m % 2 + 1, t % 3 - 1 if dtype != "uint8" else t % 2 + 1
        for x, y in layouts(m, t):
            for dim in ([None, 0, -1] if x.dim() == 2 else [None]):
                kw = {} if dim is None else {"dim": dim}
                got = x.prod(**kw)
                if dtype in ("float16", "bfloat16"):
                    # PyTorch multiplies float16/bfloat16 in their own type (a rounding per factor: 0.95 for
                    # a product near 1.41 over 1000 bfloat16 factors); ours accumulates in float32 as
                    # PyTorch does for sum. The oracle is then PyTorch's float32 product, rounded.
                    expected = y.float().prod(**kw).to(y.dtype)
                else:
                    expected = y.prod(**kw)
                if dtype in FLOATS:
                    tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-4, "float64": 1e-12}[dtype]
                    assert str(got.dtype) == str(expected.dtype) and tuple(got.shape) == tuple(expected.shape)
                    np.testing.assert_allclose(np.array(got.double().tolist()), np.array(expected.double().tolist()),
                                               rtol=tol)
                else:  # integer products wrap around in int64, the same in any order
                    same(got, expected, exact=True)


def _bits(x):
    return np.array(x.double().tolist() if x.dim() else [x.double().item()], dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("dtype", FLOATS)
def test_long_nan_propagation(dtype):
    for n, pos in itertools.product([33, 1025, 200003], ["start", "middle", "end"]):
        data = np.random.default_rng(2).standard_normal(n) * 3
        data[{"start": 0, "middle": n // 2, "end": n - 1}[pos]] = np.nan
        m, t = pair_of(data, dtype)
        for name in ["amax", "amin", "max", "min", "nansum", "count_nonzero", "all", "any"]:
            agree(lambda L, x: getattr(L, name)(x), (m, t), exact=name != "nansum")
        agree(lambda L, x: L.aminmax(x), (m, t), exact=True)
        for x, y in list(layouts(m, t))[2:]:  # rows and columns with the NaN in one of them
            agree(lambda L, x: L.amax(x, 0), (x, y), exact=True)
            agree(lambda L, x: L.amin(x, -1), (x, y), exact=True)
            agree(lambda L, x: L.nansum(x, 0), (x, y))
            agree(lambda L, x: x.max(0), (x, y), exact=True)  # the first NaN's index
            agree(lambda L, x: x.min(-1), (x, y), exact=True)
            agree(lambda L, x: x.argmax(0), (x, y))


@pytest.mark.parametrize("dtype", FLOATS)
def test_long_signed_zeros(dtype):
    # one sign throughout: PyTorch's result has that sign
    for n, z in itertools.product([33, 1025, 200003], [0.0, -0.0]):
        m, t = pair_of(np.full(n, z), dtype)
        for name in ["amax", "amin", "max", "min"]:
            got, expected = getattr(m, name)(), getattr(t, name)()
            assert np.signbit(got.double().item()) == np.signbit(expected.double().item()) == np.signbit(z)
        assert m.count_nonzero().item() == 0 and not m.any().item() and not m.all().item()
    # both signs: PyTorch's sign follows its vector lanes and thread split ([0.0, -0.0].max() is -0.0,
    # .amax() is 0.0); ours is the first zero in memory order, whatever the lanes or threads
    for n, first in itertools.product([33, 1025, 200003], [0.0, -0.0]):
        data = np.where(np.random.default_rng(3).random(n) < 0.5, 0.0, -0.0)
        data[: n // 3] = -1.0
        data[n // 3] = first
        m, t = pair_of(data, dtype)
        for name in ["amax", "max"]:
            got, expected = getattr(m, name)(), getattr(t, name)()
            assert got.double().item() == expected.double().item() == 0
            assert np.signbit(got.double().item()) == np.signbit(first)
        assert np.signbit(m.amin(0).double().item()) == 1  # -1.0 is the minimum: no zero involved
        assert m.amin().item() == -1.0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "int64"])
def test_long_folds_same_on_any_thread_count(dtype):
    kind = "near1" if dtype != "int64" else "normal"
    m, _ = long_pair(200003, dtype, seed=4, kind=kind)
    prev = mt.get_num_threads()
    results = []
    try:
        for nt in (1, 2, 3):
            mt.set_num_threads(nt)
            results.append([_bits(f(m)) for f in (lambda x: x.prod(), lambda x: x.amax(), lambda x: x.amin(),
                                                    lambda x: x.count_nonzero(), lambda x: x[:28571 * 7].reshape(-1, 7).amax(0),
                                                    lambda x: x.nansum())])
    finally:
        mt.set_num_threads(prev)
    for r in results[1:]:
        for a, b in zip(results[0], r):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_long_max_dim_signed_zeros_and_ties(dtype):
    # max/min along a dim return the first extreme and its index in PyTorch too: its value keeps
    # that element's sign
    rng = np.random.default_rng(5)
    for rows, cols in [(3, 1025), (1025, 3), (200, 67)]:
        data = np.where(rng.random((rows, cols)) < 0.5, 0.0, -0.0)
        data[rng.random((rows, cols)) < 0.3] = -1.0
        m, t = pair_of(data, dtype)
        for x, y in [(m, t), (m.t(), t.t())]:
            for dim, name in itertools.product([0, 1], ["max", "min"]):
                got, expected = getattr(x, name)(dim), getattr(y, name)(dim)
                same(got.indices, expected.indices, exact=True)
                np.testing.assert_array_equal(np.signbit(np.array(got.values.double().tolist())),
                                              np.signbit(np.array(expected.values.double().tolist())))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cummax_cummin(dtype):
    # ties (small integer values), NaN in float rows, every layout; values and indices exactly
    for shape, tr in itertools.product([(), (0,), (7,), (2, 3, 5), (2, 0, 3), (40, 1025)], (False, True)):
        m, t = make(shape, dtype, seed=6, transpose=tr)
        if dtype in FLOATS and m.numel() > 3:
            m, t = m.round(), t.round()  # ties
            flat_m, flat_t = m.reshape(-1).clone(), t.reshape(-1).clone()
            for k in (0, m.numel() // 2, m.numel() - 1):
                flat_m[k], flat_t[k] = float("nan"), float("nan")
            m, t = flat_m.reshape(m.shape), flat_t.reshape(t.shape)
        for d in range(-max(len(shape), 1), max(len(shape), 1)):
            for name in ("cummax", "cummin"):
                agree(lambda L, x: getattr(L, name)(x, d), (m, t), exact=True)
        if len(shape) >= 2:
            agree(lambda L, x: L.cummax(x[:, ::2], -1), (m, t), exact=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_column_reductions(dtype):
    """The streaming reductions' column path (a reduced dim of stride > 1 with adjacent outputs: tiles of
    64 outputs, blocks of 1024 elements): outputs at tile and block edges, kept dims around the reduced
    one, a short inner kept dim, a transposed input; the same bits on any thread count."""
    fns = [lambda L, x, d: x.var(d), lambda L, x, d: x.std(d, keepdim=True), lambda L, x, d: x.norm(dim=d),
           lambda L, x, d: L.linalg.vector_norm(x, 1, d), lambda L, x, d: L.linalg.vector_norm(x, 3, d),
           lambda L, x, d: L.linalg.vector_norm(x, float("inf"), d), lambda L, x, d: x.logsumexp(d),
           lambda L, x, d: L.var_mean(x, d)[1]]
    for shape, d in (((2500, 131), 0), ((1100, 3, 70), 0), ((3, 1500, 5), 1), ((1025, 64), 0), ((1, 200), 0),
                     ((0, 7), 0), ((2049, 2), -2)):
        pair = make(shape, dtype, seed=7)
        for f in fns:
            if shape[0] == 0 and f in fns[5:7]:
                continue  # no identity: errors, compared elsewhere
            agree(lambda L, x: f(L, x, d), pair)
    m, _ = make((2100, 300), dtype, seed=3)
    prev = mt.get_num_threads()
    try:
        runs = []
        for nt in (1, 2, 3):
            mt.set_num_threads(nt)
            runs.append([_bits(f(mt, m, 0)) for f in fns])
    finally:
        mt.set_num_threads(prev)
    for r in runs[1:]:
        for a, b in zip(runs[0], r):
            np.testing.assert_array_equal(a, b)
