"""complex64/complex128 in the non-elementwise kernels against live PyTorch: indexing (gather, scatter and
its reductions, index_select/add/copy/fill/put, advanced indexing get and set, masks, take/put), scans
(cumsum/cumprod), linspace/logspace, matrix-vector products (mv, addmv, dot, vdot), trace, var/std, norms,
cov; each over contiguous, transposed, broadcast, empty and 0-dim inputs where they apply, their
gradients (gradcheck, and PyTorch's conjugate Wirtinger values), and PyTorch's errors for what it refuses
on complex (sort, topk, max along a dim, median, searchsorted, isin, ...)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from test_complex import check

torch = pytest.importorskip("torch")

CDTYPES = ("complex64", "complex128")
RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
M = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
V = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)


def T(lib, a, name, layout="contiguous"):
    """a as lib's tensor of dtype name: contiguous, or the same values through a transposed (strided) view"""
    dt = getattr(lib, name)
    if layout == "transposed" and a.ndim == 2:
        return lib.tensor(a.T.tolist(), dtype=dt).t()
    return lib.tensor(a.tolist(), dtype=dt)


def I(lib, v):  # noqa: E743  (an index tensor)
    return lib.tensor(v, dtype=lib.int64)


def mask(lib):
    return lib.tensor((A.real > 0).tolist())


def setitem(t, index, value):
    t[index] = value
    return t


OPS = {
    "gather": lambda L, a, b: L.gather(a, 1, I(L, [[0, 1], [2, 3], [1, 1]])),
    "gather_0dim": lambda L, a, b: L.gather(a[0, 0], 0, I(L, 0)),
    "gather_empty": lambda L, a, b: L.gather(a, 1, I(L, [[], [], []])),
    "take_along_dim": lambda L, a, b: L.take_along_dim(a, I(L, [[0], [3], [2]]), 1),
    "scatter": lambda L, a, b: a.scatter(1, I(L, [[0], [2], [1]]), b[:, :1]),
    "scatter_value": lambda L, a, b: a.scatter(0, I(L, [[2, 0, 1, 1]]), 1.5),
    "scatter_add": lambda L, a, b: a.scatter_add(1, I(L, [[0, 0], [2, 1], [1, 1]]), b[:, :2]),
    "scatter_add_": lambda L, a, b: a.clone().scatter_add_(0, I(L, [[1, 1, 0, 2]]), b[:1]),
    "scatter_multiply": lambda L, a, b: a.scatter(1, I(L, [[0, 0], [3, 1], [1, 1]]), b[:, :2], reduce="multiply"),
    "index_select": lambda L, a, b: L.index_select(a, 1, I(L, [3, 0, 0])),
    "index_select_empty": lambda L, a, b: L.index_select(a, 0, I(L, [])),
    "index_select_0dim": lambda L, a, b: L.index_select(a[1, 1], 0, I(L, [0])),
    "getitem": lambda L, a, b: a[I(L, [2, 0])],
    "getitem_pair": lambda L, a, b: a[I(L, [2, 0, 1]), I(L, [1, 3, 3])],
    "getitem_bcast": lambda L, a, b: a[I(L, [[2], [0]]), I(L, [1, 3])],
    "getitem_mask": lambda L, a, b: a[mask(L)],
    "setitem_tensor": lambda L, a, b: setitem(a.clone(), I(L, [2, 0]), b[:2]),
    "setitem_number": lambda L, a, b: setitem(a.clone(), (slice(None), I(L, [0, 2])), 1 - 2j),
    "setitem_mask": lambda L, a, b: setitem(a.clone(), mask(L), 0.5j),
    "setitem_real_number": lambda L, a, b: setitem(a.clone(), I(L, [1]), 2.0),
    "index_put_acc": lambda L, a, b: a.index_put((I(L, [2, 2, 0]),), b[:3], accumulate=True),
    "index_add": lambda L, a, b: a.index_add(0, I(L, [2, 2]), b[:2], alpha=2),
    "index_add_dim1": lambda L, a, b: a.index_add(1, I(L, [3, 0, 3]), b[:, :3]),
    "index_copy": lambda L, a, b: a.index_copy(0, I(L, [2, 0]), b[:2]),
    "index_fill": lambda L, a, b: a.index_fill(1, I(L, [2, 0]), 1.5),
    "index_fill_complex": lambda L, a, b: a.index_fill(1, I(L, [-1]), 1.5 + 2j),
    "index_reduce_prod": lambda L, a, b: a.index_reduce(0, I(L, [2, 2]), b[:2], "prod"),
    "index_reduce_mean": lambda L, a, b: a.index_reduce(0, I(L, [2, 2]), b[:2], "mean"),
    "index_reduce_exclude": lambda L, a, b: a.index_reduce(0, I(L, [2, 2]), b[:2], "mean", include_self=False),
    "index_reduce_amax": lambda L, a, b: a.index_reduce(0, I(L, [2, 2]), b[:2], "amax"),
    "masked_select": lambda L, a, b: L.masked_select(a, mask(L)),
    "masked_select_bcast": lambda L, a, b: L.masked_select(a[0], mask(L)),
    "masked_scatter": lambda L, a, b: a.masked_scatter(mask(L), b),
    "masked_fill": lambda L, a, b: a.masked_fill(mask(L), -1j),
    "take": lambda L, a, b: L.take(a, I(L, [[0, 5], [11, -1]])),
    "put": lambda L, a, b: a.contiguous().put(I(L, [0, 5, 7]), b[0, :3]),
    "put_acc": lambda L, a, b: a.contiguous().put_(I(L, [0, 5, 5]), b[0, :3], accumulate=True),
    "nonzero": lambda L, a, b: L.nonzero(L.cat([a, a * 0, -a * 0])),
    "argwhere": lambda L, a, b: L.argwhere(a[:2] * I(L, [[1], [0]])),
    "cumsum": lambda L, a, b: L.cumsum(a, 1),
    "cumsum0": lambda L, a, b: L.cumsum(a, 0),
    "cumsum_dtype": lambda L, a, b: L.cumsum(a, 1, dtype=L.complex128),
    "cumsum_0dim": lambda L, a, b: L.cumsum(a[0, 0], 0),
    "cumprod": lambda L, a, b: L.cumprod(a, 1),
    "cumprod_empty": lambda L, a, b: L.cumprod(a[:0], 1),
    "cumulative_trapezoid": lambda L, a, b: L.cumulative_trapezoid(a),
    "vander": lambda L, a, b: L.vander(a[0], 3),
    "flip": lambda L, a, b: L.flip(a, [0, 1]),
    "roll": lambda L, a, b: L.roll(a, 1, 1),
    "repeat": lambda L, a, b: a.repeat(2, 1),
    "cat": lambda L, a, b: L.cat([a, b], 1),
    "stack": lambda L, a, b: L.stack([a, b]),
    "diag": lambda L, a, b: L.diag(a),
    "diagonal": lambda L, a, b: L.diagonal(a, 1),
    "trace": lambda L, a, b: L.trace(a),
    "mv": lambda L, a, b: L.mv(a, b[0]),
    "matmul_mv": lambda L, a, b: a.t() @ b[:, 0],
    "addmv": lambda L, a, b: L.addmv(b[:, 0], a, b[1], beta=2, alpha=0.5),
    "addr": lambda L, a, b: L.addr(a, b[:, 0], b[0]),
    "dot": lambda L, a, b: L.dot(a[0], b[1]),
    "vdot": lambda L, a, b: L.vdot(a[0], b[1]),
    "var": lambda L, a, b: a.var(1),
    "std_all": lambda L, a, b: a.std(),
    "var_mean": lambda L, a, b: L.var_mean(a, 0, correction=0),
    "std_mean": lambda L, a, b: L.std_mean(a, 1, keepdim=True),
    "vector_norm": lambda L, a, b: L.linalg.vector_norm(a, dim=1),
    "vector_norm_ords": lambda L, a, b: [L.linalg.vector_norm(a, o) for o in (0, 1, 3, float("inf"), -float("inf"))],
    "norm_fro": lambda L, a, b: L.linalg.norm(a),
    "tensor_norm": lambda L, a, b: a.norm(dim=0),
    "dist": lambda L, a, b: L.dist(a, b),
    "renorm": lambda L, a, b: L.renorm(a, 2, 0, 1.0),
    "cov": lambda L, a, b: L.cov(a),
    "corrcoef": lambda L, a, b: L.corrcoef(a),
    "logsumexp": lambda L, a, b: L.logsumexp(a, 1),
    "isreal": lambda L, a, b: L.isreal(L.cat([a, a.real.to(a.dtype)])),
    "float_power": lambda L, a, b: L.float_power(a, 2),
    "float_power_": lambda L, a, b: a.clone().float_power_(2),  # complex64: PyTorch's error (needs complex128)
    "fill_": lambda L, a, b: a.clone().fill_(2 - 1j),
    "bincount_weights": lambda L, a, b: L.bincount(I(L, [0, 1, 1, 3]), a[0]),
}
# the ops whose second operand is read whole (a transposed b changes only its strides)
LAYOUTS = ("contiguous", "transposed")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("op", OPS)
def test_ops(op, name, layout):
    check(lambda lib: OPS[op](lib, T(lib, A, name, layout), T(lib, B, name, layout)))


@pytest.mark.parametrize("name", CDTYPES)
def test_creation(name):
    check(lambda lib: lib.linspace(1 + 2j, 3 - 1j, 5))
    check(lambda lib: lib.linspace(0, 1, 4, dtype=getattr(lib, name)))
    check(lambda lib: lib.linspace(lib.tensor(1j), 2, 3, dtype=getattr(lib, name)))
    check(lambda lib: lib.linspace(0, 1 + 1j, 1))
    check(lambda lib: lib.logspace(1j, 2 + 0j, 4, base=2, dtype=getattr(lib, name)))
    check(lambda lib: lib.logspace(0, 2, 3, dtype=getattr(lib, name)))
    check(lambda lib: lib.full((2, 2), 1 - 1j, dtype=getattr(lib, name)))


def test_creation_errors():
    check(lambda lib: lib.linspace(0, 1 + 1j, 3, dtype=lib.float32))
    check(lambda lib: lib.logspace(0, 1 + 1j, 3, dtype=lib.float64))
    check(lambda lib: lib.linspace(1e300, 1, 3, dtype=lib.complex64))
    check(lambda lib: lib.zeros(2, dtype=lib.complex64).fill_(1e300j))
    check(lambda lib: lib.zeros(2).fill_(2 + 1j))
    check(lambda lib: lib.zeros(2).fill_(2 + 0j))
    check(lambda lib: setitem(lib.zeros(3), 0, 1j))


# PyTorch refuses these on complex (its texts); scatter's amax/amin and index_reduce's too
REFUSED = {
    "sort": lambda L, a: L.sort(a), "argsort": lambda L, a: L.argsort(a, stable=True), "msort": lambda L, a: L.msort(a),
    "topk": lambda L, a: L.topk(a, 2), "kthvalue": lambda L, a: L.kthvalue(a, 1),
    "max_all": lambda L, a: L.max(a), "max_dim": lambda L, a: L.max(a, 1), "min_dim": lambda L, a: L.min(a, 0),
    "argmax": lambda L, a: L.argmax(a), "argmin": lambda L, a: L.argmin(a, 1), "amax": lambda L, a: L.amax(a, 1),
    "aminmax": lambda L, a: L.aminmax(a), "maximum": lambda L, a: L.maximum(a, a), "clamp": lambda L, a: L.clamp(a, 0),
    "cummax": lambda L, a: L.cummax(a, 0), "cummin": lambda L, a: L.cummin(a, 1),
    "median": lambda L, a: L.median(a), "median_dim": lambda L, a: L.median(a, 1), "nanmedian": lambda L, a: L.nanmedian(a),
    "mode": lambda L, a: L.mode(a), "quantile": lambda L, a: L.quantile(a, 0.5),
    "nansum": lambda L, a: L.nansum(a), "nanmean": lambda L, a: L.nanmean(a, 1),
    "searchsorted": lambda L, a: L.searchsorted(a[0], a[1]), "bucketize": lambda L, a: L.bucketize(a, a.real[0]),
    "isin": lambda L, a: L.isin(a, a.real), "isin_test": lambda L, a: L.isin(a.real, a),
    "histc": lambda L, a: L.histc(a), "histc_range": lambda L, a: L.histc(a, min=0, max=1),
    "heaviside": lambda L, a: L.heaviside(a.real, a), "unique": lambda L, a: L.unique(a),
    "scatter_amax": lambda L, a: a.scatter_reduce(1, I(L, [[0], [1], [2]]), a[:, :1], "amax"),
    "scatter_amin": lambda L, a: a.scatter_reduce(1, I(L, [[0], [1], [2]]), a[:, :1], "amin", include_self=False),
    "logcumsumexp_float_dtype": lambda L, a: L.vector_norm(a, dtype=L.float64) if hasattr(L, "vector_norm")
    else L.linalg.vector_norm(a, dtype=L.float64),
    "vector_norm_real_to_complex": lambda L, a: L.linalg.vector_norm(a.real, dtype=L.complex128),
}


@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("op", REFUSED)
def test_refused(op, name):
    r = check(lambda lib: REFUSED[op](lib, T(lib, A, name)))
    assert isinstance(r, tuple) and r[0] == "raised", r


# differentiable ones: gradcheck on complex128 leaves (real and imaginary parts), and PyTorch's gradients
GRADS = {
    "gather": lambda L, a, b: L.gather(a, 1, I(L, [[0, 1], [2, 3], [1, 1]])),
    "scatter": lambda L, a, b: a.scatter(1, I(L, [[0], [2], [1]]), b[:, :1]),
    "scatter_add": lambda L, a, b: a.scatter_add(1, I(L, [[0, 0], [2, 1], [1, 1]]), b[:, :2]),
    "index_select": lambda L, a, b: L.index_select(a, 1, I(L, [3, 0, 0])),
    "index": lambda L, a, b: a[I(L, [2, 0, 2]), I(L, [1, 3, 1])],
    "index_put": lambda L, a, b: a.index_put((I(L, [2, 0]),), b[:2], accumulate=True),
    "index_add": lambda L, a, b: a.index_add(0, I(L, [2, 2]), b[:2], alpha=2),
    "index_copy": lambda L, a, b: a.index_copy(0, I(L, [2, 0]), b[:2]),
    "index_fill": lambda L, a, b: a.index_fill(1, I(L, [2, 0]), 1.5) * b,
    "masked_select": lambda L, a, b: L.masked_select(a, mask(L)) * 2,
    "masked_scatter": lambda L, a, b: a.masked_scatter(mask(L), b),
    "take": lambda L, a, b: L.take(a, I(L, [0, 5, 5, -1])),
    "put": lambda L, a, b: a.put(I(L, [0, 5, 7]), b[0, :3], accumulate=True),
    "cumsum": lambda L, a, b: L.cumsum(a * b, 1),
    "cumprod": lambda L, a, b: L.cumprod(a, 1),
    "cumprod_zeros": lambda L, a, b: L.cumprod(a * L.tensor([1.0, 0.0, 1.0, 0.0], dtype=a.dtype), 1),
    "prod_zeros": lambda L, a, b: (a * L.tensor([1.0, 0.0, 1.0, 1.0], dtype=a.dtype)).prod(1),
    "trace": lambda L, a, b: L.trace(a) * b[0, 0],
    "mv": lambda L, a, b: L.mv(a, b[0]),
    "addmv": lambda L, a, b: L.addmv(b[:, 0], a, b[1], beta=2, alpha=0.5),
    "addr": lambda L, a, b: L.addr(a, b[:, 0], b[0]),
    "dot_vdot": lambda L, a, b: L.dot(a[0], b[1]) + L.vdot(a[1], b[2]),
    "var_std": lambda L, a, b: a.var(1) + (a * b).std(0).sum(),
    "var_mean": lambda L, a, b: L.var_mean(a * b, 1)[0].sum() * L.var_mean(a, 0)[1].sum(),
    "vector_norm": lambda L, a, b: L.linalg.vector_norm(a, dim=1) + L.linalg.vector_norm(b, 3, dim=1),
    "logsumexp": lambda L, a, b: L.logsumexp(a, 1),
    "cov": lambda L, a, b: L.cov(a + b),
}


def test_no_complex_autograd():
    """scatter_reduce and index_reduce have no complex derivative in PyTorch: its error, before computing"""
    for reduce in ("sum", "prod", "mean"):
        check(lambda lib: lib.tensor(A.tolist(), requires_grad=True).scatter_reduce(
            1, I(lib, [[0], [2], [1]]), lib.tensor(B.tolist())[:, :1], reduce))
    check(lambda lib: lib.tensor(A.tolist()).index_reduce(0, I(lib, [2, 2]), lib.tensor(B.tolist(), requires_grad=True)[:2],
                                                        "prod"))


@pytest.mark.parametrize("op", GRADS)
def test_gradcheck(op):
    a = mt.tensor(A.tolist(), dtype=mt.complex128, requires_grad=True)
    b = mt.tensor(B.tolist(), dtype=mt.complex128, requires_grad=True)
    assert mt.autograd.gradcheck(lambda a, b: GRADS[op](mt, a, b), (a, b))

    def grads_of(lib):
        aa = lib.tensor(A.tolist(), dtype=lib.complex128, requires_grad=True)
        bb = lib.tensor(B.tolist(), dtype=lib.complex128, requires_grad=True)
        y = GRADS[op](lib, aa, bb)
        return lib.autograd.grad(y, (aa, bb), lib.ones_like(y), allow_unused=True)
    check(grads_of, 1e-10)
