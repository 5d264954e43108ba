"""Gradients of the statistics/norm/scan/order-statistic reductions and the added linear
algebra, against live PyTorch: values, input gradients, grad_fn names, double backward."""
import math

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def close(m, t, tol):
    assert tuple(m.shape) == tuple(t.shape), (m.shape, t.shape)
    assert str(m.dtype) == str(t.dtype)
    np.testing.assert_allclose(np.array(m.tolist(), dtype=float), np.array(t.detach().tolist(), dtype=float),
                               rtol=tol, atol=tol)


def outputs(r):
    """The differentiable outputs of a result (values of a (values, indices) pair)."""
    if isinstance(r, tuple):
        return [x for x in r if x.dtype.is_floating_point]
    return [r]


def grads_match(fn, *inputs, tol=1e-9, name=True, double=False, seed=0):
    """inputs: shapes (random float64 data) or arrays; compares outputs, gradients and grad_fn names."""
    rng = np.random.default_rng(seed)
    pairs = []
    for d in inputs:
        a = rng.standard_normal(d) if isinstance(d, tuple) else np.asarray(d, dtype=float)
        data = a.tolist()
        pairs.append((mt.tensor(data, dtype=mt.float64, requires_grad=True),
                      torch.tensor(data, dtype=torch.float64, requires_grad=True)))
    rm, rt = fn(mt, *[p[0] for p in pairs]), fn(torch, *[p[1] for p in pairs])
    om, ot = outputs(rm), outputs(rt)
    assert len(om) == len(ot)
    lm = lt = 0
    rng2 = np.random.default_rng(1)
    for a, b in zip(om, ot):
        close(a, b, tol)
        w = rng2.standard_normal(tuple(b.shape)).tolist()
        lm = lm + (a * mt.tensor(w, dtype=mt.float64)).sum()
        lt = lt + (b * torch.tensor(w, dtype=torch.float64)).sum()
    if name:
        assert type(om[0].grad_fn).__name__ == type(ot[0].grad_fn).__name__
    if double:  # gradients of the gradient (create_graph)
        gm = mt.autograd.grad(lm, [p[0] for p in pairs], create_graph=True)
        gt = torch.autograd.grad(lt, [p[1] for p in pairs], create_graph=True)
        for a, b in zip(gm, gt):
            close(a, b, tol)
        sm = sum((g * g).sum() for g in gm)
        st = sum((g * g).sum() for g in gt)
        sm.backward()
        st.backward()
    else:
        lm.backward()
        lt.backward()
    for m, t in pairs:
        assert (m.grad is None) == (t.grad is None)
        if t.grad is not None:
            close(m.grad, t.grad, tol)


DIMS = [None, 0, -1, (0, 1)]


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim", DIMS)
def test_var_std(name, dim):
    for keepdim in (False, True):
        for corr in (1, 0, 2):
            grads_match(lambda L, x: getattr(L, name)(x, dim=dim, keepdim=keepdim, correction=corr), (3, 4, 2))
    grads_match(lambda L, x: getattr(L, name)(x.transpose(0, 2), dim=dim), (3, 4, 2), double=True)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 1.5, 0.5, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dim", DIMS)
def test_vector_norm(ord, dim):
    for keepdim in (False, True):
        grads_match(lambda L, x: L.linalg.vector_norm(x, ord, dim, keepdim), (3, 4, 2))
    data = [[1.0, -3.0, 0.0], [3.0, 2.0, -3.0]]  # ties of |x| and zeros
    grads_match(lambda L, x: L.linalg.vector_norm(x, ord, dim if dim != (0, 1) else (0, 1)), data)
    if ord in (2, 3, 1.5):
        grads_match(lambda L, x: L.linalg.vector_norm(x, ord, dim), (3, 4), double=True)


def test_norm_family():
    grads_match(lambda L, x: L.norm(x), (3, 4))
    grads_match(lambda L, x: x.norm(p=1, dim=1), (3, 4))
    grads_match(lambda L, x: L.linalg.norm(x), (3, 4))
    grads_match(lambda L, x: L.linalg.matrix_norm(x, "fro"), (2, 3, 4))
    grads_match(lambda L, x: L.linalg.matrix_norm(x, 1), (3, 4), name=False)
    grads_match(lambda L, x: L.linalg.matrix_norm(x, -math.inf), (3, 4), name=False)
    grads_match(lambda L, a, b: L.dist(a, b), (3, 4), (4,), name=False)
    grads_match(lambda L, a, b: L.dist(a, b, 3), (3, 4), (3, 4), name=False)


@pytest.mark.parametrize("dim", [0, -1, (0, 1)])
def test_logsumexp(dim):
    for keepdim in (False, True):
        grads_match(lambda L, x: L.logsumexp(x, dim, keepdim), (3, 4))
    grads_match(lambda L, x: L.logsumexp(x.t(), dim), (3, 4), double=True)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans(name, dim):
    grads_match(lambda L, x: getattr(L, name)(x, dim), (3, 5))
    grads_match(lambda L, x: getattr(L, name)(x.t(), dim), (5, 3), double=name != "cumsum")  # cumsum is linear
    grads_match(lambda L, x: getattr(L, name)(x, 0), ())


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_with_zeros(dim):
    data = [[1.5, 0.0, 2.0, -1.0, 3.0], [0.0, 2.0, 0.0, 1.5, 2.0], [1.0, 2.0, 3.0, 4.0, 0.0]]
    grads_match(lambda L, x: L.cumprod(x, dim), data)
    grads_match(lambda L, x: L.cumprod(x, dim) * 2, data, name=False)


def test_cumsum_inplace_and_dtype():
    grads_match(lambda L, x: (x * 1).cumsum_(1), (3, 4))
    grads_match(lambda L, x: L.cumsum(x, 0, dtype=L.float32).double(), (3, 4), tol=1e-6, name=False)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod(dim):
    args = () if dim is None else (dim,)
    grads_match(lambda L, x: L.prod(x, *args), (3, 4))
    grads_match(lambda L, x: L.prod(x, *args), (3, 4), double=True)
    for data in ([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]], [[0.0, 0.0, 2.0], [3.0, 0.0, 5.0]], [[0.0, 1.0, 2.0]]):
        grads_match(lambda L, x: L.prod(x, *args), data)
    if dim is not None:
        grads_match(lambda L, x: L.prod(x, dim, keepdim=True), (3, 4))
    grads_match(lambda L, x: L.prod(x), [2.5])


def test_nansum_nanmean():
    data = [[1.0, float("nan"), 2.0], [float("nan"), 3.0, 4.0]]
    grads_match(lambda L, x: L.nansum(x), data)
    grads_match(lambda L, x: L.nansum(x, 1, keepdim=True), data)
    grads_match(lambda L, x: L.nanmean(x, 0), data)


@pytest.mark.parametrize("name", ["median", "nanmedian", "mode"])
def test_order_statistics(name):
    data = [[3.0, 1.0, 2.0, 5.0], [4.0, 4.0, 1.0, 0.5], [2.0, 7.0, 7.0, 7.0]]
    for dim, keepdim in ((0, False), (1, True), (-1, False)):
        grads_match(lambda L, x: getattr(L, name)(x, dim, keepdim), data)
    if name != "mode":
        grads_match(lambda L, x: getattr(L, name)(x), data)
        grads_match(lambda L, x: getattr(L, name)(x), [[1.0, 2.0], [2.0, 2.0], [3.0, 4.0]])  # shared by ties
        grads_match(lambda L, x: getattr(L, name)(x), [1.0, float("nan"), 2.0, float("nan")])


def test_aminmax():
    data = [[3.0, 1.0, 3.0], [1.0, 2.0, 2.0]]
    grads_match(lambda L, x: L.aminmax(x), data, name=False)
    grads_match(lambda L, x: L.aminmax(x, dim=1), data, name=False)


# ---- linear algebra ------------------------------------------------------------------------


def test_gemm_like():
    for beta, alpha in ((1, 1), (0.5, 2.0)):
        grads_match(lambda L, s, m, v: L.addmv(s, m, v, beta=beta, alpha=alpha), (3,), (3, 4), (4,), double=True)
        grads_match(lambda L, s, a, b: L.addr(s, a, b, beta=beta, alpha=alpha), (3, 4), (3,), (4,), double=True)
        grads_match(lambda L, s, a, b: L.addbmm(s, a, b, beta=beta, alpha=alpha), (3, 5), (2, 3, 4), (2, 4, 5),
                    double=True)
    grads_match(lambda L, s, m, v: L.addmv(s, m, v), (), (3, 4), (4,))
    grads_match(lambda L, a, b: L.vdot(a, b), (5,), (5,), double=True)


def test_composites():
    grads_match(lambda L, a, b: L.outer(a, b), (3,), (4,))
    grads_match(lambda L, a, b: L.inner(a, b), (2, 3), (4, 3), name=False)
    grads_match(lambda L, a, b: L.kron(a, b), (2, 3), (2, 2), name=False)
    grads_match(lambda L, a, b: L.tensordot(a, b, dims=([1, 2], [0, 1])), (3, 4, 5), (4, 5, 2), name=False)
    grads_match(lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), (4,), (4, 3), (3, 2), name=False)


@pytest.mark.parametrize("dim", [-1, 0])
def test_cross(dim):
    shape = (3, 4) if dim == 0 else (4, 3)
    grads_match(lambda L, a, b: L.linalg.cross(a, b, dim=dim), shape, shape, double=True)
    grads_match(lambda L, a, b: L.linalg.cross(a, b), (2, 3), (1, 3))


EINSUM = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(3, 3)]), ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
          ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 6)]),
          ("i,j->ij", [(3,), (4,)]), ("ij->", [(3, 4)]), ("iij->j", [(3, 3, 2)])]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(eq, shapes):
    grads_match(lambda L, *ts: L.einsum(eq, *ts), *shapes, name=False)


def test_quantile_backward_is_absent():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="quantile"):
        mt.quantile(x, 0.3).backward()
