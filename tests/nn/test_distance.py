"""pdist and cdist against live PyTorch: the direct kernels (_pdist_forward, _cdist_forward and their
backward) and cdist's matrix-product form for p = 2 (_euclidean_dist), in values, gradients (gradcheck),
node names, empty and broadcast inputs, and errors."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

PS = [0., 0.5, 1., 1.5, 2., 3., float("inf")]
MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]
TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def both(values, dtype, grad=False, noncontig=False):
    """the same tensor in both libraries (transposed views when noncontig)"""
    out = []
    for L in (mt, torch):
        t = L.tensor(np.ascontiguousarray(np.swapaxes(values, -1, -2)) if noncontig else values,
                     dtype=getattr(L, dtype))
        t = t.transpose(-1, -2) if noncontig else t
        out.append(t.detach().requires_grad_() if grad else t)
    return out


def close(m, t, dtype):
    assert tuple(m.shape) == tuple(t.shape) and str(m.dtype) == str(t.dtype)
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), **TOL[dtype])


def weighted(L, r):
    """a scalar whose gradient is fixed weights on r's elements (the same in both libraries)"""
    w = np.cos(np.arange(r.numel()) * 0.7).reshape(tuple(r.shape))
    return (r * L.tensor(w, dtype=r.dtype)).sum()


def rows(*shape, seed=0, ties=False):
    x = np.random.default_rng(seed).normal(size=shape)
    if ties:  # equal rows (zero distances) and equal coordinates (zero differences, ties for p = inf)
        x = np.round(x, 0)
        x[..., 1, :] = x[..., 0, :]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("noncontig", [False, True])
def test_pdist_values_and_gradients(dtype, p, noncontig):
    for x in (rows(7, 37), rows(5, 3, ties=True)):
        a, ta = both(x, dtype, grad=True, noncontig=noncontig)
        r, tr = mt.pdist(a, p), torch.pdist(ta, p)
        close(r, tr, dtype)
        assert type(r.grad_fn).__name__ == type(tr.grad_fn).__name__ == "PdistBackward0"
        weighted(mt, r).backward()
        weighted(torch, tr).backward()
        close(a.grad, ta.grad, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("mode", MODES)
def test_cdist_values_and_gradients(dtype, p, mode):
    # small (direct kernel unless asked for the product), > 25 rows (product for p = 2), broadcast batch
    cases = (((4, 5), (3, 5), False), ((30, 6), (2, 6), True), ((2, 1, 27, 4), (3, 26, 4), False),
             ((3, 4), (2, 4), True))
    for s1, s2, nc in cases:
        x1, x2 = rows(*s1, ties=s1[-2] >= 2), rows(*s2, seed=1)
        if len(s1) == 2:
            x2[0, :] = x1[0, :]  # a zero distance across the two sets
        (a, ta), (b, tb) = both(x1, dtype, True, nc), both(x2, dtype, True)
        r, tr = mt.cdist(a, b, p, mode), torch.cdist(ta, tb, p, mode)
        close(r, tr, dtype)
        assert type(r.grad_fn).__name__ == type(tr.grad_fn).__name__
        weighted(mt, r).backward()
        weighted(torch, tr).backward()
        close(a.grad, ta.grad, dtype)
        close(b.grad, tb.grad, dtype)


@pytest.mark.parametrize("p", [0.5, 1., 2., 3., float("inf")])
def test_gradcheck(p):
    rng = np.random.default_rng(3)
    x = mt.tensor(rng.normal(size=(5, 4)), dtype=mt.float64, requires_grad=True)
    y = mt.tensor(rng.normal(size=(2, 3, 4)), dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradcheck(lambda x: mt.pdist(x, p), (x,))
    for mode in MODES:
        assert mt.autograd.gradcheck(lambda x, y: mt.cdist(x, y, p, mode), (x, y))
    big = mt.tensor(rng.normal(size=(27, 4)), dtype=mt.float64, requires_grad=True)
    if p == 2:  # the product form's backward is made of ops: it differentiates again, as PyTorch's
        assert mt.autograd.gradgradcheck(lambda x, y: mt.cdist(x, y), (big, y[0]))


def test_double_backward_not_implemented():
    for L in (mt, torch):
        x = L.tensor(rows(4, 3), requires_grad=True)
        for f, kernel, node in ((lambda x: L.pdist(x), "_pdist_backward", "PdistBackwardBackward0"),
                                (lambda x: L.cdist(x, L.ones(2, 3, dtype=x.dtype)), "_cdist_backward", "CdistBackwardBackward0")):
            g, = L.autograd.grad(f(x).sum(), x, create_graph=True)
            assert type(g.grad_fn).__name__ == node
            with pytest.raises(NotImplementedError, match=f"the derivative for '{kernel}' is not implemented."):
                g.sum().backward()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_empty(dtype):
    for s in ((0, 3), (1, 3), (4, 0)):
        a, ta = both(np.ones(s), dtype, grad=True)
        r, tr = mt.pdist(a), torch.pdist(ta)
        close(r, tr, dtype)
        r.sum().backward()
        if s[0] == 0:  # PyTorch 2.13's _pdist_backward crashes (SIGSEGV) on no rows
            assert tuple(a.grad.shape) == s and not a.grad.any()
            continue
        tr.sum().backward()
        close(a.grad, ta.grad, dtype)
    for s1, s2 in (((0, 3), (2, 3)), ((4, 0), (3, 0)), ((0, 2, 3), (1, 3)), ((30, 0), (2, 0))):
        (a, ta), (b, tb) = both(np.ones(s1), dtype, True), both(np.ones(s2), dtype, True)
        r, tr = mt.cdist(a, b), torch.cdist(ta, tb)
        close(r, tr, dtype)
        assert type(r.grad_fn).__name__ == type(tr.grad_fn).__name__
        r.sum().backward()
        tr.sum().backward()
        close(a.grad, ta.grad, dtype)
        close(b.grad, tb.grad, dtype)


def test_half_and_mixed_dtypes():
    for L in (mt, torch):
        for dt in (L.float16, L.bfloat16):
            with pytest.raises(NotImplementedError, match=f"\"pdist\" not implemented for '{str(dt)[6:].title()}"
                               .replace("Float16", "Half").replace("Bfloat16", "BFloat16")):
                L.pdist(L.ones(3, 2, dtype=dt))
            with pytest.raises(NotImplementedError, match="\"cdist\" not implemented"):
                L.cdist(L.ones(3, 2, dtype=dt), L.ones(4, 2, dtype=dt))
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            L.cdist(L.ones(3, 2), L.ones(4, 2, dtype=L.float64))
    # the product form takes half precision in both
    h = rows(30, 4)
    r = mt.cdist(mt.tensor(h, dtype=mt.float16), mt.tensor(h[:3], dtype=mt.float16))
    tr = torch.cdist(torch.tensor(h, dtype=torch.float16), torch.tensor(h[:3], dtype=torch.float16))
    np.testing.assert_allclose(r.float().numpy(), tr.float().numpy(), rtol=1e-2, atol=2e-2)
