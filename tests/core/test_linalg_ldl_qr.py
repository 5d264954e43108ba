"""LDL (linalg.ldl_factor/_ex, ldl_solve), Householder QR (torch.geqrf, ormqr) and the complex
cholesky / qr / householder_product / slogdet against live PyTorch: values (reconstructed where a
factorisation is not unique), dtypes, layouts, batched / empty / non-contiguous inputs, errors (type
and text), and gradients (gradcheck in complex128, values against PyTorch's)."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

from test_linalg_lapack import err  # noqa: E402  (same error type name and text on both sides)

DT = {"float32": (mt.float32, torch.float32), "float64": (mt.float64, torch.float64),
      "complex64": (mt.complex64, torch.complex64), "complex128": (mt.complex128, torch.complex128)}
TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


def pair(a, dtype):
    """the same values as a mindtorch and a torch tensor"""
    md, td = DT[dtype]
    a = np.asarray(a)
    return mt.tensor(a.tolist(), dtype=md).reshape(a.shape), torch.tensor(a).to(td)


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a


def sym(shape, dtype, hermitian=True, seed=0):
    a = rand(shape, dtype, seed)
    return a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))


def close(m, t, tol):
    if isinstance(t, tuple):
        assert len(m) == len(t)
        for a, b in zip(m, t):
            close(a, b, tol)
        return
    assert tuple(m.shape) == tuple(t.shape) and str(m.dtype) == str(t.dtype), (m.shape, t.shape, m.dtype, t.dtype)
    np.testing.assert_allclose(m.detach().resolve_conj().numpy(), t.detach().resolve_conj().numpy(), rtol=tol,
                               atol=tol)


DTYPES = list(DT)
SQUARE = [(4, 4), (2, 3, 3), (0, 3, 3), (2, 0, 0)]


# ---- LDL ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_and_solve(shape, dtype, hermitian):
    # the factorisation is LAPACK's (same routine, same pivoting), so LD and the pivots equal PyTorch's
    am, at = pair(sym(shape, dtype, hermitian), dtype)
    rm, rt = mt.linalg.ldl_factor_ex(am, hermitian=hermitian), torch.linalg.ldl_factor_ex(at, hermitian=hermitian)
    assert type(rm).__name__ == "linalg_ldl_factor_ex" and rm._fields == ("LD", "pivots", "info")
    close(tuple(rm), tuple(rt), TOL[dtype])
    assert rm.LD.stride() == rt.LD.stride()
    LDm, pm = mt.linalg.ldl_factor(am, hermitian=hermitian)
    LDt, pt = torch.linalg.ldl_factor(at, hermitian=hermitian)
    close((LDm, pm), (LDt, pt), TOL[dtype])
    bm, bt = pair(rand(shape[:-1] + (2,), dtype, 3), dtype)
    xm, xt = mt.linalg.ldl_solve(LDm, pm, bm, hermitian=hermitian), torch.linalg.ldl_solve(LDt, pt, bt,
                                                                                            hermitian=hermitian)
    close(xm, xt, TOL[dtype] * 10)
    assert xm.stride() == xt.stride()


def test_ldl_pivots_with_2x2_blocks_and_reconstruction():
    a = np.array([[0., 2, 1, 0], [2, 0, 0, 1], [1, 0, 3, 1], [0, 1, 1, 2]])  # a 2x2 pivot first
    (am, at), (bm, bt) = pair(a, "float64"), pair(rand((4, 3), "float64", 7), "float64")
    LDm, pm = mt.linalg.ldl_factor(am)
    LDt, pt = torch.linalg.ldl_factor(at)
    assert pm.tolist() == pt.tolist() and min(pm.tolist()) < 0
    close(LDm, LDt, 1e-10)
    x = mt.linalg.ldl_solve(LDm, pm, bm)
    np.testing.assert_allclose((am @ x).numpy(), bm.numpy(), atol=1e-10)
    # any integer dtype of pivots; batches of LD and B broadcast
    close(mt.linalg.ldl_solve(LDm, pm.long(), bm), torch.linalg.ldl_solve(LDt, pt.long(), bt), 1e-10)
    close(mt.linalg.ldl_solve(LDm.expand(3, 4, 4), pm.expand(3, 4), bm),
          torch.linalg.ldl_solve(LDt.expand(3, 4, 4), pt.expand(3, 4), bt), 1e-10)
    close(mt.linalg.ldl_solve(LDm, pm, bm.expand(2, 4, 3)), torch.linalg.ldl_solve(LDt, pt, bt.expand(2, 4, 3)),
          1e-10)


def test_ldl_noncontiguous_input_and_out():
    a = sym((2, 4, 4), "float64")
    am, at = pair(a, "float64")
    am, at = am.mT, at.mT  # a transposed view
    close(tuple(mt.linalg.ldl_factor(am)), tuple(torch.linalg.ldl_factor(at)), 1e-10)
    om = (mt.empty(0, dtype=mt.float64), mt.empty(0, dtype=mt.int32))
    r = mt.linalg.ldl_factor(am, out=om)
    assert r.LD is om[0] and r.pivots is om[1]
    close(om[0], torch.linalg.ldl_factor(at).LD, 1e-10)
    err(lambda: mt.linalg.ldl_factor(am, out=(mt.empty(0, dtype=mt.float64), mt.empty(0, dtype=mt.int64))),
        lambda: torch.linalg.ldl_factor(at, out=(torch.empty(0, dtype=torch.float64),
                                                 torch.empty(0, dtype=torch.int64))))
    LDm, pm = mt.linalg.ldl_factor(am)
    LDt, pt = torch.linalg.ldl_factor(at)
    err(lambda: mt.linalg.ldl_solve(LDm, pm, mt.ones(2, 4, 1, dtype=mt.float64), out=mt.empty(0)),
        lambda: torch.linalg.ldl_solve(LDt, pt, torch.ones(2, 4, 1, dtype=torch.float64), out=torch.empty(0)))


def test_ldl_singular_info_and_check_errors():
    s = np.zeros((2, 3, 3))
    s[0] = np.eye(3)
    sm, st = pair(s, "float64")
    close(tuple(mt.linalg.ldl_factor_ex(sm)), tuple(torch.linalg.ldl_factor_ex(st)), 1e-12)
    err(lambda: mt.linalg.ldl_factor_ex(sm, check_errors=True), lambda: torch.linalg.ldl_factor_ex(st, check_errors=True))
    err(lambda: mt.linalg.ldl_factor(sm), lambda: torch.linalg.ldl_factor(st))


LDL_ERRORS = {
    "1d": lambda L: L.linalg.ldl_factor_ex(L.ones(3)),
    "rect": lambda L: L.linalg.ldl_factor(L.ones(2, 3)),
    "int": lambda L: L.linalg.ldl_factor(L.ones(3, 3, dtype=L.int32)),
    "half": lambda L: L.linalg.ldl_factor(L.ones(3, 3, dtype=L.float16)),
    "bf16": lambda L: L.linalg.ldl_factor_ex(L.ones(3, 3, dtype=L.bfloat16)),
    "solve 1d LD": lambda L: L.linalg.ldl_solve(L.ones(3), L.ones(3, dtype=L.int32), L.ones(3, 1)),
    "solve rect": lambda L: L.linalg.ldl_solve(L.ones(2, 3), L.ones(2, dtype=L.int32), L.ones(2, 1)),
    "solve int LD": lambda L: L.linalg.ldl_solve(L.ones(3, 3, dtype=L.int32), L.ones(3, dtype=L.int32),
                                                 L.ones(3, 1, dtype=L.int32)),
    "solve half": lambda L: L.linalg.ldl_solve(L.ones(3, 3, dtype=L.float16), L.ones(3, dtype=L.int32),
                                               L.ones(3, 1, dtype=L.float16)),
    "solve dtypes": lambda L: L.linalg.ldl_solve(L.eye(3, dtype=L.float64), L.ones(3, dtype=L.int32), L.ones(3, 1)),
    "solve sizes": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(4, 2)),
    "solve empty B": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(0, 2)),
    "solve 1d B": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3)),
    "solve 0d B": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(())),
    "solve pivots shape": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(2, dtype=L.int32), L.ones(3, 1)),
    "solve pivots batch": lambda L: L.linalg.ldl_solve(L.eye(3).expand(2, 3, 3), L.ones(3, dtype=L.int32),
                                                       L.ones(2, 3, 1)),
    "solve pivots float": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3), L.ones(3, 1)),
    "solve pivots bool": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.bool), L.ones(3, 1)),
    "solve pivots range": lambda L: L.linalg.ldl_solve(L.eye(3), L.full((3,), 7, dtype=L.int32), L.ones(3, 1)),
    "solve batch mismatch": lambda L: L.linalg.ldl_solve(L.eye(3).expand(2, 3, 3), L.ones(2, 3, dtype=L.int32),
                                                         L.ones(3, 3, 1)),
}


@pytest.mark.parametrize("case", LDL_ERRORS)
def test_ldl_errors(case):
    err(lambda: LDL_ERRORS[case](mt), lambda: LDL_ERRORS[case](torch))


def test_ldl_not_differentiable_as_pytorch():
    am, at = pair(sym((3, 3), "float64"), "float64")
    am.requires_grad_(), at.requires_grad_()
    LDm, pm = mt.linalg.ldl_factor(am)
    LDt, pt = torch.linalg.ldl_factor(at)
    assert LDm.requires_grad and type(LDm.grad_fn).__name__ == type(LDt.grad_fn).__name__ == "NotImplemented"
    assert LDm.grad_fn.name() == LDt.grad_fn.name()
    assert not pm.requires_grad
    err(lambda: LDm.sum().backward(), lambda: LDt.sum().backward())
    bm, bt = (x.detach().requires_grad_() for x in pair(rand((3, 2), "float64"), "float64"))
    xm, xt = mt.linalg.ldl_solve(LDm.detach(), pm, bm), torch.linalg.ldl_solve(LDt.detach(), pt, bt)
    assert type(xm.grad_fn).__name__ == "NotImplemented"
    err(lambda: xm.sum().backward(), lambda: xt.sum().backward())


# ---- geqrf, ormqr -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 0, 4), (0, 3, 4), (3, 0)])
def test_geqrf(shape, dtype):
    am, at = pair(rand(shape, dtype), dtype)
    rm, rt = mt.geqrf(am), torch.geqrf(at)
    assert type(rm).__name__ == "geqrf" and rm._fields == ("a", "tau")
    close(tuple(rm), tuple(rt), TOL[dtype])
    assert rm.a.stride() == rt.a.stride() and rm.tau.stride() == rt.tau.stride()
    close(tuple(am.geqrf()), tuple(at.geqrf()), TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("ashape", [(5, 3), (3, 5), (2, 4, 4)])
def test_ormqr(ashape, left, transpose, dtype):
    am, at = pair(rand(ashape, dtype), dtype)
    (am, taum), (at, taut) = mt.geqrf(am), torch.geqrf(at)
    m = ashape[-2]
    cshape = ashape[:-2] + ((m, 2) if left else (2, m))
    cm, ct = pair(rand(cshape, dtype, 2), dtype)
    rm = mt.ormqr(am, taum, cm, left=left, transpose=transpose)
    rt = torch.ormqr(at, taut, ct, left=left, transpose=transpose)
    close(rm, rt, TOL[dtype] * 10)
    assert rm.stride() == rt.stride()
    close(am.ormqr(taum, cm.mT.contiguous().mT, left, transpose), rt, TOL[dtype] * 10)  # a non-contiguous C


@pytest.mark.parametrize("shapes", [((5, 3), (3,), (5, 0), True), ((5, 3), (3,), (0, 5), False),
                                    ((0, 5, 3), (0, 3), (0, 5, 2), True), ((5, 0), (0,), (5, 2), True)])
def test_ormqr_empty(shapes):
    a, t, c, left = shapes
    args = [pair(rand(s, "float64", k), "float64") for k, s in enumerate((a, t, c))]
    rm = mt.ormqr(*(m for m, _ in args), left=left)
    rt = torch.ormqr(*(x for _, x in args), left=left)
    close(rm, rt, 1e-12)
    assert rm.stride() == rt.stride()


ORMQR_ERRORS = {
    "1d input": lambda L, a, t, c: L.ormqr(a[0], t, c),
    "1d other": lambda L, a, t, c: L.ormqr(a, t, c[:, 0]),
    "rows": lambda L, a, t, c: L.ormqr(a, t, c[:4]),
    "right cols": lambda L, a, t, c: L.ormqr(a, t, c.mT[:, :4], left=False),
    "tau length": lambda L, a, t, c: L.ormqr(a, t[:2], c),
    "tau 0d": lambda L, a, t, c: L.ormqr(a, t[0], c),
    "tau ndim": lambda L, a, t, c: L.ormqr(a, t.expand(2, 3), c),
    "other ndim": lambda L, a, t, c: L.ormqr(a.expand(2, 5, 3), t.expand(2, 3), c),
    "tau batch": lambda L, a, t, c: L.ormqr(a.expand(2, 5, 3), t.expand(3, 3), c.expand(2, 5, 2)),
    "other batch": lambda L, a, t, c: L.ormqr(a.expand(2, 5, 3), t.expand(2, 3), c.expand(3, 5, 2)),
    "tau dtype": lambda L, a, t, c: L.ormqr(a, t.float(), c),
    "other dtype": lambda L, a, t, c: L.ormqr(a, t, c.float()),
    "int": lambda L, a, t, c: L.ormqr(a.int(), t.int(), c.int()),
    "half": lambda L, a, t, c: L.ormqr(a.half(), t.half(), c.half()),
    "out dtype": lambda L, a, t, c: L.ormqr(a, t, c, out=L.empty(0)),
    "geqrf 1d": lambda L, a, t, c: L.geqrf(t),
    "geqrf int": lambda L, a, t, c: L.geqrf(a.int()),
    "geqrf bf16": lambda L, a, t, c: L.geqrf(a.bfloat16()),
}


@pytest.mark.parametrize("case", ORMQR_ERRORS)
def test_ormqr_errors(case):
    a = rand((5, 3), "float64")
    mt_args = pair(a, "float64")[0], mt.ones(3, dtype=mt.float64), mt.ones(5, 2, dtype=mt.float64)
    t_args = pair(a, "float64")[1], torch.ones(3, dtype=torch.float64), torch.ones(5, 2, dtype=torch.float64)
    err(lambda: ORMQR_ERRORS[case](mt, *mt_args), lambda: ORMQR_ERRORS[case](torch, *t_args))


def test_geqrf_not_differentiable_as_pytorch():
    am, at = (x.requires_grad_() for x in pair(rand((4, 3), "float64"), "float64"))
    rm, rt = mt.geqrf(am), torch.geqrf(at)
    assert type(rm.a.grad_fn).__name__ == "GeqrfBackward0" and rm.tau.grad_fn is rm.a.grad_fn
    err(lambda: rm.a.sum().backward(), lambda: rt.a.sum().backward())
    err(lambda: rm.tau.sum().backward(), lambda: rt.tau.sum().backward())


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("ashape", [(5, 3), (3, 5), (2, 4, 4)])
def test_ormqr_gradients(ashape, left, transpose, dtype):
    # random reflectors and tau (not geqrf's): the derivative holds for any
    m = ashape[-2]
    k = min(m, ashape[-1])
    cshape = ashape[:-2] + ((m, 2) if left else (2, m))
    (am, at), (tm, tt), (cm, ct) = (pair(rand(s, dtype, seed), dtype)
                                    for s, seed in ((ashape, 0), (ashape[:-2] + (k,), 1), (cshape, 2)))
    leaves_m = tuple(x.requires_grad_() for x in (am, tm, cm))
    leaves_t = tuple(x.requires_grad_() for x in (at, tt, ct))
    rm = mt.ormqr(*leaves_m, left=left, transpose=transpose)
    rt = torch.ormqr(*leaves_t, left=left, transpose=transpose)
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__ == "OrmqrBackward0"
    g = rand(tuple(rt.shape), dtype, 5)
    gm, gt = pair(g, dtype)
    rm.backward(gm)
    rt.backward(gt)
    for lm, lt in zip(leaves_m, leaves_t):
        close(lm.grad, lt.grad, 1e-9)
    fresh = tuple(x.detach().requires_grad_() for x in leaves_m)
    fn = (lambda a, t, c: mt.ormqr(a, t, c, left=left, transpose=transpose))
    assert mt.autograd.gradcheck(fn, fresh)
    if ashape == (5, 3):
        assert mt.autograd.gradgradcheck(fn, fresh)


# ---- complex cholesky, qr, householder_product, slogdet / logdet -------------------------------------------

CPLX = ["complex64", "complex128"]


def hpd(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("upper", [False, True])
def test_complex_cholesky(shape, dtype, upper):
    am, at = pair(hpd(shape, dtype), dtype)
    close(mt.linalg.cholesky(am, upper=upper), torch.linalg.cholesky(at, upper=upper), TOL[dtype] * 10)
    close(tuple(mt.linalg.cholesky_ex(am, upper=upper)), tuple(torch.linalg.cholesky_ex(at, upper=upper)),
          TOL[dtype] * 10)
    assert mt.linalg.cholesky(am).stride() == torch.linalg.cholesky(at).stride()


def test_complex_cholesky_errors():
    bad = np.eye(3, dtype=complex)
    bad[2, 2] = -1
    for b in (bad, np.stack([np.eye(3, dtype=complex), bad])):
        bm, bt = pair(b, "complex128")
        err(lambda: mt.linalg.cholesky(bm), lambda: torch.linalg.cholesky(bt))
        close(mt.linalg.cholesky_ex(bm).info, torch.linalg.cholesky_ex(bt).info, 0)


@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3, 4), (2, 3, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_complex_qr(shape, dtype, mode):
    am, at = pair(rand(shape, dtype), dtype)
    rm, rt = mt.linalg.qr(am, mode=mode), torch.linalg.qr(at, mode=mode)
    close(tuple(rm), tuple(rt), TOL[dtype] * 10)  # LAPACK's geqrf/ungqr on both sides: the same Q and R
    if mode != "r":
        np.testing.assert_allclose((rm.Q @ rm.R).numpy(), am.numpy(), atol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 4), (4, 2)])
def test_complex_householder_product(shape, dtype):
    am, at = pair(rand(shape, dtype), dtype)
    tm, tt = pair(rand(shape[:-2] + (shape[-1] - 1,), dtype, 1), dtype)
    close(mt.linalg.householder_product(am, tm), torch.linalg.householder_product(at, tt), TOL[dtype] * 10)
    (gm, taum), (gt, taut) = mt.geqrf(am), torch.geqrf(at)  # geqrf's reflectors give linalg.qr's Q
    close(mt.linalg.householder_product(gm, taum), torch.linalg.householder_product(gt, taut), TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("shape", SQUARE)
def test_complex_slogdet_logdet(shape, dtype):
    am, at = pair(rand(shape, dtype), dtype)
    close(tuple(mt.linalg.slogdet(am)), tuple(torch.linalg.slogdet(at)), TOL[dtype] * 10)
    close(tuple(mt.slogdet(am)), tuple(torch.slogdet(at)), TOL[dtype] * 10)
    close(mt.logdet(am), torch.logdet(at), TOL[dtype] * 10)
    sing = np.zeros((3, 3), dtype=complex)
    sm, st = pair(sing, dtype)
    close(tuple(mt.linalg.slogdet(sm)), tuple(torch.linalg.slogdet(st)), 0)


def cgrad_case(name):
    """(mindtorch function, torch function, input shapes) of a complex gradient case"""
    return {
        "cholesky": (lambda L, a: L.linalg.cholesky(a @ a.mH + 3 * L.eye(3, dtype=a.dtype)), [(3, 3)]),
        "cholesky_upper": (lambda L, a: L.linalg.cholesky(a @ a.mH + 3 * L.eye(3, dtype=a.dtype), upper=True),
                           [(2, 3, 3)]),
        "qr_tall": (lambda L, a: tuple(L.linalg.qr(a)), [(5, 3)]),
        "qr_wide": (lambda L, a: tuple(L.linalg.qr(a)), [(3, 5)]),
        "qr_complete_square": (lambda L, a: tuple(L.linalg.qr(a, mode="complete")), [(2, 3, 3)]),
        "householder": (lambda L, a, t: L.linalg.householder_product(a, t), [(4, 3), (2,)]),
        "slogdet": (lambda L, a: tuple(L.linalg.slogdet(a)), [(2, 3, 3)]),
        "slogdet_sign": (lambda L, a: L.linalg.slogdet(a).sign, [(3, 3)]),
        "logdet": (lambda L, a: L.logdet(a), [(3, 3)]),
        "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a.triu() + 3 * L.eye(3, dtype=a.dtype), b,
                                                                       upper=True), [(3, 3), (3, 2)]),
    }[name]


@pytest.mark.parametrize("name", ["cholesky", "cholesky_upper", "qr_tall", "qr_wide", "qr_complete_square",
                                  "householder", "slogdet", "slogdet_sign", "logdet", "solve_triangular"])
def test_complex_gradients(name):
    fn, shapes = cgrad_case(name)
    ins = [pair(rand(s, "complex128", i), "complex128") for i, s in enumerate(shapes)]
    leaves_m = tuple(m.requires_grad_() for m, _ in ins)
    leaves_t = tuple(t.requires_grad_() for _, t in ins)
    rm, rt = fn(mt, *leaves_m), fn(torch, *leaves_t)
    rm = rm if isinstance(rm, tuple) else (rm,)
    rt = rt if isinstance(rt, tuple) else (rt,)
    # a real loss weighting every output with random (complex where the output is) weights
    loss_m = loss_t = 0
    for k, (om, ot) in enumerate(zip(rm, rt)):
        wm, wt = pair(rand(tuple(ot.shape), "complex128" if ot.is_complex() else "float64", 10 + k),
                      "complex128" if ot.is_complex() else "float64")
        loss_m = loss_m + (om * wm).real.sum() if om.is_complex() else loss_m + (om * wm).sum()
        loss_t = loss_t + (ot * wt).real.sum() if ot.is_complex() else loss_t + (ot * wt).sum()
    loss_m.backward()
    loss_t.backward()
    for lm, lt in zip(leaves_m, leaves_t):
        close(lm.grad, lt.grad, 1e-8)
    fresh = tuple(x.detach().requires_grad_() for x in leaves_m)
    assert mt.autograd.gradcheck(lambda *a: fn(mt, *a), fresh)
