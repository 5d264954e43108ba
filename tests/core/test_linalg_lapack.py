"""The LAPACK-backed linalg ops against live PyTorch: values (float32/float64, batched, non-contiguous,
empty), result layouts, error types and texts, info tensors, and the compositions built on them.
Gradients are in tests/autograd/test_gradcheck_all.py."""
import math

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def both(a):
    a = np.asarray(a)
    return mt.tensor(a.tolist(), dtype=mt.float64 if a.dtype == np.float64 else mt.float32).reshape(a.shape), \
        torch.tensor(a)


def close(m, t, tol=None):
    if isinstance(t, tuple):
        for a, b in zip(m, t):
            close(a, b, tol)
        return
    assert tuple(m.shape) == tuple(t.shape) and str(m.dtype) == str(t.dtype)
    tol = tol or (1e-4 if t.dtype == torch.float32 else 1e-10)
    np.testing.assert_allclose(m.detach().numpy().astype(np.float64), t.detach().numpy().astype(np.float64),
                               rtol=tol, atol=tol)


def spd(shape, dtype=np.float64, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def general(shape, dtype=np.float64, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


DTYPES = [np.float32, np.float64]
SHAPES = [(3, 3), (2, 4, 4), (0, 3, 3), (2, 0, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["cholesky", "inv", "det", "slogdet", "eigvalsh", "logdet"])
def test_square_ops(name, shape, dtype):
    m, t = both(spd(shape, dtype) if shape[-1] else np.zeros(shape, dtype))
    fm = getattr(mt.linalg, name, None) or getattr(mt, name)
    ft = getattr(torch.linalg, name, None) or getattr(torch, name)
    rm, rt = fm(m), ft(t)
    close(tuple(rm) if isinstance(rm, tuple) else rm, tuple(rt) if isinstance(rt, tuple) else rt)
    if isinstance(rt, torch.Tensor) and rt.dim() >= 2:
        assert rm.stride() == rt.stride()  # batches of column-major matrices, as PyTorch's


@pytest.mark.parametrize("dtype", DTYPES)
def test_noncontiguous_and_expanded_inputs(dtype):
    a = spd((3, 3), dtype)
    m, t = both(a)
    close(mt.linalg.cholesky(m.mT), torch.linalg.cholesky(t.mT))
    close(mt.linalg.inv(m.expand(2, 3, 3)), torch.linalg.inv(t.expand(2, 3, 3)))
    m2, t2 = both(np.ascontiguousarray(np.repeat(a, 2, axis=1)))
    close(mt.linalg.det(m2[:, ::2]), torch.linalg.det(t2[:, ::2]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_upper_and_ex(dtype):
    m, t = both(spd((2, 3, 3), dtype))
    close(mt.linalg.cholesky(m, upper=True), torch.linalg.cholesky(t, upper=True))
    rm, rt = mt.linalg.cholesky_ex(m), torch.linalg.cholesky_ex(t)
    close(rm.L, rt.L)
    assert rm.info.dtype == mt.int32 and rm.info.tolist() == rt.info.tolist()
    bad = np.array([[[1.0, 2], [2, 1]], [[4.0, 0], [0, 1]]], dtype)
    assert mt.linalg.cholesky_ex(mt.tensor(bad.tolist())).info.tolist() == [2, 0]
    assert type(mt.linalg.cholesky_ex(m)).__name__ == "linalg_cholesky_ex"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
def test_solve(dtype, left):
    a, b = spd((2, 3, 3), dtype), general((3, 4) if left else (4, 3), dtype)
    (am, at), (bm, bt) = both(a), both(b)
    rm, rt = mt.linalg.solve(am, bm, left=left), torch.linalg.solve(at, bt, left=left)
    close(rm, rt)
    assert rm.stride() == rt.stride()
    vm, vt = both(general((2, 3), dtype))  # a batch of vectors (PyTorch's rule)
    close(mt.linalg.solve(am, vm), torch.linalg.solve(at, vt))
    v1m, v1t = both(general((3,), dtype))
    close(mt.linalg.solve(am, v1m), torch.linalg.solve(at, v1t))
    close(mt.linalg.solve_ex(am, bm, left=left).result, torch.linalg.solve_ex(at, bt, left=left).result)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, True, True), (False, False, False),
                                             (True, False, True)])
def test_solve_triangular(dtype, upper, left, unit):
    a = general((2, 1, 3, 3), dtype) + 3 * np.eye(3, dtype=dtype)
    b = general((3, 3, 2) if left else (3, 2, 3), dtype)
    (am, at), (bm, bt) = both(a), both(b)
    rm = mt.linalg.solve_triangular(am, bm, upper=upper, left=left, unitriangular=unit)
    rt = torch.linalg.solve_triangular(at, bt, upper=upper, left=left, unitriangular=unit)
    close(rm, rt)
    assert rm.stride() == rt.stride()
    xm, xt = mt.triangular_solve(bm if left else bm.mT, am, upper=upper), \
        torch.triangular_solve(bt if left else bt.mT, at, upper=upper)
    close(tuple(xm), tuple(xt))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (5, 3), (0, 2, 2)])
def test_lu_family(dtype, shape):
    m, t = both(general(shape, dtype))
    fm, ft = mt.linalg.lu_factor_ex(m), torch.linalg.lu_factor_ex(t)
    close(fm.LU, ft.LU)
    assert fm.pivots.tolist() == ft.pivots.tolist() and fm.info.tolist() == ft.info.tolist()
    close(tuple(mt.linalg.lu(m)), tuple(torch.linalg.lu(t)))
    close(tuple(mt.lu_unpack(fm.LU, fm.pivots)), tuple(torch.lu_unpack(ft.LU, ft.pivots)))
    if shape[-1] == shape[-2]:
        bm, bt = both(general(shape[:-1] + (2,), dtype, seed=5))
        for kw in ({}, {"adjoint": True}):
            close(mt.linalg.lu_solve(fm.LU, fm.pivots, bm, **kw), torch.linalg.lu_solve(ft.LU, ft.pivots, bt, **kw))
        close(mt.linalg.lu_solve(fm.LU, fm.pivots, bm.mT, left=False),
              torch.linalg.lu_solve(ft.LU, ft.pivots, bt.mT, left=False))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (3, 3), (0, 3), (3, 0)])
def test_svd_qr_reconstruct(dtype, shape):
    """Factors are unique up to signs: compare what is invariant (values, reconstructions, |vectors|)."""
    m, t = both(general(shape, dtype))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for full in (False, True):
        U, S, Vh = mt.linalg.svd(m, full_matrices=full)
        Ut, St, Vht = torch.linalg.svd(t, full_matrices=full)
        assert U.shape == Ut.shape and Vh.shape == Vht.shape and U.stride() == Ut.stride()
        close(S, St)
        k = S.shape[-1]
        close((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], t, tol)
        eye_u = torch.eye(U.shape[-1], dtype=Ut.dtype).expand(Ut.mT.shape[:-1] + (U.shape[-1],))
        close(U.mT @ U, eye_u)
    close(mt.linalg.svdvals(m), torch.linalg.svdvals(t))
    for mode in ("reduced", "complete", "r"):
        Q, R = mt.linalg.qr(m, mode=mode)
        Qt, Rt = torch.linalg.qr(t, mode=mode)
        assert Q.shape == Qt.shape and R.shape == Rt.shape
        close(R.abs(), Rt.abs())
        if mode != "r" and Q.numel() and R.numel():
            close(Q @ R, t, tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(dtype):
    m, t = both(spd((2, 4, 4), dtype))
    for uplo in ("L", "U"):
        w, v = mt.linalg.eigh(m, UPLO=uplo)
        wt, vt = torch.linalg.eigh(t, UPLO=uplo)
        close(w, wt)
        close(v.abs(), vt.abs())
        assert v.stride() == vt.stride()


def test_compositions():
    a = spd((2, 3, 3))
    (m, t), (g, gt) = both(a), both(general((4, 3)))
    close(mt.linalg.pinv(g), torch.linalg.pinv(gt))
    close(mt.linalg.pinv(m, hermitian=True), torch.linalg.pinv(t, hermitian=True))
    close(mt.pinverse(g), torch.pinverse(gt))
    assert mt.linalg.matrix_rank(g).tolist() == torch.linalg.matrix_rank(gt).tolist()
    low = g @ mt.tensor([[1.0, 0, 1], [0, 1, 1], [0, 0, 0]], dtype=mt.float64)
    assert mt.linalg.matrix_rank(low).item() == torch.linalg.matrix_rank(torch.tensor(low.tolist())).item() == 2
    for n in (0, 1, 3, -2):
        close(mt.linalg.matrix_power(m, n), torch.linalg.matrix_power(t, n))
    for p in (None, 2, -2, "fro", "nuc", 1, math.inf):
        close(mt.linalg.cond(m, p), torch.linalg.cond(t, p))
    L, Lt = mt.linalg.cholesky(m), torch.linalg.cholesky(t)
    (b, bt) = both(general((2, 3, 2)))
    close(mt.cholesky_solve(b, L), torch.cholesky_solve(bt, Lt))
    close(mt.cholesky_solve(b, L.mT, upper=True), torch.cholesky_solve(bt, Lt.mT, upper=True))
    close(mt.cholesky_inverse(L[0]), torch.cholesky_inverse(Lt[0]))
    U, S, V = mt.svd(g)  # signs may differ between LAPACKs: compare invariants
    close(U @ mt.diag_embed(S) @ V.mT, gt)
    close(mt.svd(g, compute_uv=False).U, torch.svd(gt, compute_uv=False).U)
    close(mt.qr(g).R.abs(), torch.qr(gt).R.abs())
    close(mt.linalg.matrix_norm(g, "nuc"), torch.linalg.matrix_norm(gt, "nuc"))
    close(mt.linalg.matrix_norm(g, 2), torch.linalg.matrix_norm(gt, 2))
    close(mt.linalg.matrix_norm(g, -2), torch.linalg.matrix_norm(gt, -2))
    t4 = general((4, 6, 8, 3))
    close(mt.linalg.tensorinv(both(t4)[0], ind=2), torch.linalg.tensorinv(torch.tensor(t4), ind=2))
    A6, B6 = general((2, 3, 6)), general((2, 3))
    close(mt.linalg.tensorsolve(both(A6)[0], both(B6)[0]), torch.linalg.tensorsolve(torch.tensor(A6), torch.tensor(B6)))
    xv, xt = both(general((2, 3)))
    close(mt.linalg.vander(xv, N=4), torch.linalg.vander(xt, N=4))
    close(mt.linalg.diagonal(m, offset=1), torch.linalg.diagonal(t, offset=1))


def test_methods_and_aliases():
    m, t = both(spd((3, 3)))
    close(m.inverse(), t.inverse())
    close(m.det(), t.det())
    close(m.logdet(), t.logdet())
    close(tuple(m.slogdet()), tuple(t.slogdet()))
    close(m.cholesky(), t.cholesky())
    close(m.matrix_power(2), t.matrix_power(2))
    close(mt.inverse(m), torch.inverse(t))
    assert repr(mt.linalg.slogdet(m)).startswith("torch.return_types.linalg_slogdet(\nsign=")
    mt_lu, t_lu = mt.lu(m), torch.lu(t)
    close(mt_lu[0], t_lu[0])


def test_singular_and_negative_det():
    s = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])
    m, t = both(s)
    close(mt.linalg.det(m), torch.linalg.det(t))  # 0 up to rounding (LAPACKs differ in the last bits)
    neg, negt = both(np.array([[1.0, 2], [3, 4]]))
    close(tuple(mt.linalg.slogdet(neg)), tuple(torch.linalg.slogdet(negt)))
    n, nt = both(np.array([[0.0, 1], [1, 0]]))
    assert math.isnan(mt.logdet(n).item()) and math.isnan(torch.logdet(nt).item())
    # the gradient of det at a singular matrix: the cofactor matrix (from the SVD). PyTorch's own result
    # depends on its LAPACK's rounding of the LU (a host's MKL may call the matrix regular and give 0)
    mg, tg = m.clone().requires_grad_(), t.clone().requires_grad_()
    mt.linalg.det(mg).backward()
    torch.linalg.det(tg).backward()
    cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(s, i, 0), j, 1)) for j in range(3)]
                    for i in range(3)])
    np.testing.assert_allclose(mg.grad.numpy(), cof, rtol=1e-9, atol=1e-9)
    if np.allclose(tg.grad.numpy(), cof, atol=1e-9):
        close(mg.grad, tg.grad, 1e-9)
    info = mt.linalg.inv_ex(mt.zeros(2, 2)).info
    assert info.item() == torch.linalg.inv_ex(torch.zeros(2, 2)).info.item()


def err(fn_m, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as em:
        fn_m()
    assert type(em.value).__name__ == type(et.value).__name__, (em.value, et.value)
    assert str(em.value) == str(et.value)
    return em.value


ERRORS = {
    "1d": lambda L, f: f(L.ones(3)),
    "rect": lambda L, f: f(L.ones(2, 3)),
    "int": lambda L, f: f(L.ones(2, 2, dtype=L.int32)),
    "half": lambda L, f: f(L.ones(2, 2, dtype=L.float16)),
    "bf16": lambda L, f: f(L.ones(2, 2, dtype=L.bfloat16)),
}
FNS = {
    "cholesky": lambda L: L.linalg.cholesky, "inv": lambda L: L.linalg.inv, "det": lambda L: L.linalg.det,
    "slogdet": lambda L: L.linalg.slogdet, "logdet": lambda L: L.logdet, "eigh": lambda L: L.linalg.eigh,
    "svd": lambda L: L.linalg.svd, "qr": lambda L: L.linalg.qr, "lu_factor": lambda L: L.linalg.lu_factor,
    "solve": lambda L: (lambda a: L.linalg.solve(a, a)),
    "solve_triangular": lambda L: (lambda a: L.linalg.solve_triangular(a, a, upper=True)),
    "cholesky_inverse": lambda L: L.cholesky_inverse, "matrix_power": lambda L: (lambda a: L.linalg.matrix_power(a, 2)),
    "pinv": lambda L: L.linalg.pinv,
}


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(fn, case):
    try:
        ERRORS[case](torch, FNS[fn](torch))
    except Exception:
        err(lambda: ERRORS[case](mt, FNS[fn](mt)), lambda: ERRORS[case](torch, FNS[fn](torch)))
    else:
        ERRORS[case](mt, FNS[fn](mt))


@pytest.mark.parametrize("batched", [False, True])
def test_linalg_errors(batched):
    def mk(L, a):
        t = L.tensor(a)
        return t.expand(2, *t.shape) if batched else t
    e = err(lambda: mt.linalg.cholesky(mk(mt, [[1.0, 2], [2, 1]])),
            lambda: torch.linalg.cholesky(mk(torch, [[1.0, 2], [2, 1]])))
    assert isinstance(e, mt.linalg.LinAlgError) and isinstance(e, RuntimeError)
    err(lambda: mt.linalg.inv(mk(mt, [[0.0, 0], [0, 0]])), lambda: torch.linalg.inv(mk(torch, [[0.0, 0], [0, 0]])))
    err(lambda: mt.linalg.solve(mk(mt, [[0.0, 0], [0, 0]]), mt.ones(2)),
        lambda: torch.linalg.solve(mk(torch, [[0.0, 0], [0, 0]]), torch.ones(2)))
    err(lambda: mt.linalg.lu_factor(mk(mt, [[0.0, 0], [0, 0]])),
        lambda: torch.linalg.lu_factor(mk(torch, [[0.0, 0], [0, 0]])))


def test_argument_errors():
    err(lambda: mt.linalg.solve(mt.eye(2), mt.ones(3)), lambda: torch.linalg.solve(torch.eye(2), torch.ones(3)))
    err(lambda: mt.linalg.solve(mt.eye(2), mt.ones(2, 3), left=False),
        lambda: torch.linalg.solve(torch.eye(2), torch.ones(2, 3), left=False))
    err(lambda: mt.linalg.solve(mt.eye(2), mt.ones(2, dtype=mt.float64)),
        lambda: torch.linalg.solve(torch.eye(2), torch.ones(2, dtype=torch.float64)))
    err(lambda: mt.linalg.solve(mt.eye(2).expand(4, 2, 2), mt.ones(3, 2, 1)),
        lambda: torch.linalg.solve(torch.eye(2).expand(4, 2, 2), torch.ones(3, 2, 1)))
    err(lambda: mt.linalg.solve_triangular(mt.eye(2), mt.ones(2), upper=True),
        lambda: torch.linalg.solve_triangular(torch.eye(2), torch.ones(2), upper=True))
    err(lambda: mt.linalg.solve_triangular(mt.eye(2), mt.ones(3, 2), upper=True),
        lambda: torch.linalg.solve_triangular(torch.eye(2), torch.ones(3, 2), upper=True))
    err(lambda: mt.linalg.eigh(mt.eye(2), UPLO="X"), lambda: torch.linalg.eigh(torch.eye(2), UPLO="X"))
    err(lambda: mt.linalg.qr(mt.eye(2), mode="x"), lambda: torch.linalg.qr(torch.eye(2), mode="x"))
    err(lambda: mt.linalg.qr(mt.ones(3, 2, requires_grad=True), mode="r")[1].sum().backward(),
        lambda: torch.linalg.qr(torch.ones(3, 2, requires_grad=True), mode="r")[1].sum().backward())
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.linalg.inv([[1.0]])


def test_meta_shapes():
    a = mt.empty(2, 4, 3, device="meta")
    u, s, vh = mt.linalg.svd(a, full_matrices=False)
    assert (u.shape, s.shape, vh.shape, u.device.type) == ((2, 4, 3), (2, 3), (2, 3, 3), "meta")
    q, r = mt.linalg.qr(a)
    assert (q.shape, r.shape) == ((2, 4, 3), (2, 3, 3))
    sq = mt.empty(2, 3, 3, device="meta")
    assert mt.linalg.inv(sq).shape == (2, 3, 3) and mt.linalg.det(sq).shape == (2,)
    assert mt.linalg.solve(sq, mt.empty(3, 5, device="meta")).shape == (2, 3, 5)
    assert mt.linalg.cholesky(sq).device.type == "meta" and mt.linalg.eigh(sq)[0].shape == (2, 3)


def test_multivariate_normal_and_positive_definite():
    """What transformers' resize_token_embeddings uses: the constraint check and sampling."""
    from mindtorch_v2.distributions import constraints
    from mindtorch_v2.distributions.multivariate_normal import MultivariateNormal
    cov = mt.tensor(spd((3, 3)).tolist())
    assert constraints.positive_definite.check(cov).item()
    assert not constraints.positive_definite.check(-cov).item()
    mt.manual_seed(0)
    torch.manual_seed(0)
    d = MultivariateNormal(mt.zeros(3), covariance_matrix=cov)
    dt = torch.distributions.MultivariateNormal(torch.zeros(3), covariance_matrix=torch.tensor(cov.tolist()))
    close(d.sample((4,)), dt.sample((4,)), 1e-5)
    x = mt.ones(3)
    close(d.log_prob(x), dt.log_prob(torch.ones(3)), 1e-5)


def test_multivariate_normal_parametrisations_agree():
    from mindtorch_v2.distributions.multivariate_normal import MultivariateNormal
    cov = mt.tensor(spd((3, 3)).tolist())
    a = MultivariateNormal(mt.zeros(3), covariance_matrix=cov)
    b = MultivariateNormal(mt.zeros(3), precision_matrix=mt.linalg.inv(cov))
    dt = torch.distributions.MultivariateNormal(torch.zeros(3), precision_matrix=torch.linalg.inv(torch.tensor(cov.tolist())))
    close(b.scale_tril, dt.scale_tril, 1e-5)
    close(a.log_prob(mt.ones(3)), dt.log_prob(torch.ones(3)), 1e-5)
    close(b.log_prob(mt.ones(3)), dt.log_prob(torch.ones(3)), 1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,scale", [((4, 4), 0.5), ((2, 3, 3), 5.0), ((5, 5), 30.0), ((1, 1), 1.0), ((0, 2, 2), 1.0)])
def test_matrix_exp(dtype, shape, scale):
    m, t = both(general(shape, dtype) * scale)
    rm, rt = mt.linalg.matrix_exp(m), torch.linalg.matrix_exp(t)
    np.testing.assert_allclose(rm.numpy(), rt.numpy(), rtol=2e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 * max(1.0, float(rt.abs().max()) if rt.numel() else 1.0))
    assert mt.matrix_exp(m).shape == rt.shape


def test_householder_product_and_grads():
    (a, at), (tau, taut) = both(general((5, 3))), both(np.random.default_rng(2).random(3))
    close(mt.linalg.householder_product(a, tau), torch.linalg.householder_product(at, taut))
    close(mt.orgqr(a, tau), torch.orgqr(at, taut))
    x = mt.tensor(general((3, 3)), requires_grad=True)
    assert mt.autograd.gradcheck(mt.linalg.matrix_exp, (x,))
    assert mt.autograd.gradcheck(mt.linalg.householder_product, (a.clone().requires_grad_(), tau.clone().requires_grad_()))


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(2 ** 40, 0, 5), (2 ** 40, 0, 0), (0, 3, 4), (2, 0, 3), (2, 3, 0)])
def test_qr_of_empty_matrices_in_a_huge_batch(mode, shape):
    """Empty outputs: no per-matrix step (the fuzzer's timeout: 2^40 empty matrices looped over).
    PyTorch 2.13 itself hangs on the 2^40 batches: they are compared with a batch of 2."""
    q, r = mt.linalg.qr(mt.empty(shape), mode=mode)
    qt, rt = torch.linalg.qr(torch.empty((min(shape[0], 2),) + shape[1:]), mode=mode)
    for m, t in ((q, qt), (r, rt)):
        assert m.shape[1:] == t.shape[1:] and m.shape[0] == (t.shape[0] if m.dim() == 1 else shape[0])
        if shape[0] == t.shape[0]:
            assert m.tolist() == t.tolist()


@pytest.mark.parametrize("op", ["tril", "triu", "householder_product"])
def test_huge_batches_of_empty_matrices_take_no_steps(op):
    """tril/triu (and householder_product, built on tril) of 2^40 empty matrices return at once
    (PyTorch too); they looped once per matrix."""
    a = mt.empty(2 ** 40, 0, 0)
    r = mt.linalg.householder_product(a, mt.empty(2 ** 40, 0)) if op == "householder_product" else getattr(a, op)()
    assert tuple(r.shape) == (2 ** 40, 0, 0)


@pytest.mark.parametrize("case", ["inf f64", "inf f32", "nan batched", "nan f64"])
def test_svd_of_non_finite_input_as_torch(case):
    # a NaN is LAPACK's info -4, PyTorch's LinAlgError; an inf runs and gives NaN singular values
    def make(L):
        dt = L.float64 if "f64" in case else L.float32
        if "batched" in case:
            return L.tensor([[[1.0, 0.0], [0.0, 1.0]], [[float("nan"), 0.0], [0.0, 1.0]]], dtype=dt)
        return L.tensor([[float(case.split()[0]), 0.0], [0.0, 1.0]], dtype=dt)

    def run(L):
        try:
            return "ok", [str(v) for v in L.linalg.svd(make(L)).S.flatten().tolist()]
        except Exception as e:  # noqa: BLE001 - compared below
            return type(e).__name__, str(e)

    assert run(mt) == run(torch)


def test_svd_of_many_empty_matrices_is_immediate():
    """2^40 empty matrices: the factors have no elements, so nothing runs per matrix (the fuzzer's
    timeout: the empty case looped over every batch item), shapes as PyTorch's."""
    for full in (False, True):
        shape = (2 ** 20, 2 ** 20, 0, 5) if not full else (2 ** 20, 2 ** 20, 0, 0)
        U, S, Vh = mt.linalg.svd(mt.zeros(*shape), full_matrices=full)
        Ut, St, Vht = torch.linalg.svd(torch.zeros(*shape), full_matrices=full)
        assert [tuple(t.shape) for t in (U, S, Vh)] == [tuple(t.shape) for t in (Ut, St, Vht)]


@pytest.mark.parametrize("shape", [(7, 5), (4, 9), (2, 6, 6)])
def test_svd_lowrank_and_pca_lowrank_equal_pytorch_from_the_same_seed(shape):
    # the random projection is randn under the global seed, which follows PyTorch's stream
    am, at = both(general(shape))
    for f, kw in (("svd_lowrank", {"q": 3}), ("svd_lowrank", {"q": 2, "niter": 0, "M": am[..., :1, :]}),
                  ("pca_lowrank", {"q": min(shape[-2:]) - 1}),  # centred: rank m-1 at most
                  ("pca_lowrank", {"q": 2, "center": False})):
        mt.manual_seed(0), torch.manual_seed(0)
        kt = {k: torch.from_numpy(v.numpy()) if isinstance(v, mt.Tensor) else v for k, v in kw.items()}
        got, want = getattr(mt, f)(am, **kw), getattr(torch, f)(at, **kt)
        close(got[1], want[1], 1e-8)  # singular values; U, V up to the signs of their columns
        sm, st = (u.gather(-2, u.abs().argmax(-2, keepdim=True)).sign() for u in (got[0], want[0]))
        close((got[0] * sm, got[2] * sm), (want[0] * st, want[2] * st), 1e-8)
        close(got[0] @ mt.diag_embed(got[1]) @ got[2].mH, want[0] @ torch.diag_embed(want[1]) @ want[2].mH, 1e-8)
    with pytest.raises(ValueError, match=r"q\(=9\) must be non-negative integer and not greater than min\(m, n\)=4"):
        mt.pca_lowrank(mt.zeros(4, 9), q=9)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shapes", [((3, 2), (3, 3)), ((2, 3, 2), (3, 3)), ((3, 2), (4, 3, 3))])
def test_cholesky_solve_gradients(upper, shapes):
    # PyTorch's gradient for the factor is not projected onto its triangle (cholesky_solve_backward)
    def run(L):
        rs = np.random.RandomState(0)
        f = np.tril(rs.rand(*shapes[1])) + 2 * np.eye(shapes[1][-1])
        f = L.tensor(np.swapaxes(f, -1, -2) if upper else f, requires_grad=True)
        b = L.tensor(rs.rand(*shapes[0]), requires_grad=True)
        x = L.cholesky_solve(b, f, upper)
        inv = L.cholesky_inverse(f[..., :2, :2] if f.dim() == 2 else f[0], upper)
        ((x * L.arange(x.numel(), dtype=x.dtype).reshape(x.shape)).sum() + (inv * inv).sum()).backward()
        return [x.detach().numpy(), b.grad.numpy(), f.grad.numpy(), type(x.grad_fn).__name__, type(inv.grad_fn).__name__]
    a, b = run(mt), run(torch)
    assert a[3:] == b[3:]
    for x, y in zip(a[:3], b[:3]):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


# ---- lstsq ----------------------------------------------------------------------------------------------

LSTSQ_SHAPES = [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((5, 3), (5,)), ((2, 5, 3), (2, 5)), ((1, 5, 3), (2, 5, 2)),
                ((2, 1, 5, 3), (1, 5, 2)), ((2, 1, 5, 3), (1, 4, 5, 2)), ((0, 3), (0, 2)), ((3, 0), (3, 2)), ((0, 5, 3), (0, 5, 1)),
                ((2, 4, 4), (2, 4, 0))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", LSTSQ_SHAPES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq(shapes, driver, dtype):
    if shapes[1][-1] == 0 and driver in ("gelsd", "gelss"):
        pytest.skip("PyTorch's LAPACK rejects an empty B with these drivers (an internal assert)")
    (am, at), (bm, bt) = both(general(shapes[0], dtype)), both(general(shapes[1], dtype, seed=2))
    rm, rt = mt.linalg.lstsq(am, bm, driver=driver), torch.linalg.lstsq(at, bt, driver=driver)
    assert type(rm).__name__ == "linalg_lstsq" and rm.rank is rm[2]
    close(tuple(rm), tuple(rt), 1e-3 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient_and_rcond(driver):
    a = general((2, 6, 3))
    # the second matrix has rank 2 (no residuals for the batch: gelsd, gelss) by a zero column, so that its
    # rank is exact: a repeated column left a pivot at rounding level, read as rank 2 or 3 from run to run
    a[1, :, 2] = 0
    (am, at), (bm, bt) = both(a), both(general((2, 6, 2), seed=3))
    close(tuple(mt.linalg.lstsq(am, bm, driver=driver)), tuple(torch.linalg.lstsq(at, bt, driver=driver)))
    close(tuple(mt.linalg.lstsq(am, bm, 0.5, driver=driver)), tuple(torch.linalg.lstsq(at, bt, 0.5, driver=driver)))
    close(tuple(mt.linalg.lstsq(am[0], bm[0], driver=driver)), tuple(torch.linalg.lstsq(at[0], bt[0], driver=driver)))


LSTSQ_ERRORS = {
    "driver": lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, 2), driver="foo"),
    "dtype": lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, 2, dtype=L.float64), driver="foo"),
    "a_dims": lambda L: L.linalg.lstsq(L.ones(3), L.ones(3)),
    "b_dims": lambda L: L.linalg.lstsq(L.ones(3, 3), L.tensor(1.0)),
    "dim_diff": lambda L: L.linalg.lstsq(L.ones(3, 2, 5, 3), L.ones(2, 5)),
    "rows": lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(4, 2), driver="foo"),
    "vector_rows": lambda L: L.linalg.lstsq(L.ones(2, 5, 3), L.ones(1, 5)),
    "int": lambda L: L.linalg.lstsq(L.ones(5, 3, dtype=L.int32), L.ones(5, 2, dtype=L.int32)),
    "half": lambda L: L.linalg.lstsq(L.ones(5, 3, dtype=L.float16), L.ones(5, 2, dtype=L.float16)),
    "batch": lambda L: L.linalg.lstsq(L.ones(2, 5, 3), L.ones(3, 5, 2)),
    "short_b_batch": lambda L: L.linalg.lstsq(L.ones(2, 5, 3), L.ones(5, 2)),
    "short_b_expand": lambda L: L.linalg.lstsq(L.ones(3, 1, 5, 3), L.ones(3, 5, 2)),
    "rcond_type": lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, 2), rcond="x"),
    "rcond_type_positional": lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, 2), "x"),
    "driver_type": lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, 2), driver=3),
    "a_type": lambda L: L.linalg.lstsq(3, L.ones(5, 2)),
    "b_type": lambda L: L.linalg.lstsq(L.ones(5, 3), 3),
}


@pytest.mark.parametrize("case", LSTSQ_ERRORS)
def test_lstsq_errors(case):
    err(lambda: LSTSQ_ERRORS[case](mt), lambda: LSTSQ_ERRORS[case](torch))


def test_lstsq_gels_rank_deficient_error_and_grad_fn():
    a = np.zeros((2, 3, 3))
    a[0] = np.eye(3)
    a[1, 0, 0] = 1.0  # singular: gels reports it for batch element 1
    (am, at), (bm, bt) = both(a), both(general((2, 3, 1)))
    e = err(lambda: mt.linalg.lstsq(am, bm, driver="gels"), lambda: torch.linalg.lstsq(at, bt, driver="gels"))
    assert isinstance(e, mt.linalg.LinAlgError)
    x = mt.linalg.lstsq(mt.ones(4, 3, requires_grad=True) + mt.eye(4, 3), mt.ones(4, 2))
    assert type(x.solution.grad_fn).__name__ == "LinalgLstsqBackward0"
    assert x.residuals.grad_fn is None and x.singular_values.grad_fn is None


# ---- complex LU family -----------------------------------------------------------------------------------

def cboth(shape, dtype, seed=4):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    md, td = (mt.complex64, torch.complex64) if dtype == "complex64" else (mt.complex128, torch.complex128)
    return mt.tensor(a.tolist(), dtype=md).reshape(shape), torch.tensor(a, dtype=td)


def cclose(m, t, tol):
    if isinstance(t, tuple):
        for a, b in zip(m, t):
            cclose(a, b, tol)
        return
    assert tuple(m.shape) == tuple(t.shape) and str(m.dtype) == str(t.dtype)
    np.testing.assert_allclose(m.detach().resolve_conj().numpy(), t.detach().resolve_conj().numpy(), rtol=tol, atol=tol)


CLU = {
    "inv": lambda L, a, b: L.linalg.inv(a), "inverse": lambda L, a, b: L.inverse(a),
    "inv_ex": lambda L, a, b: tuple(L.linalg.inv_ex(a)), "det": lambda L, a, b: L.linalg.det(a),
    "solve": lambda L, a, b: L.linalg.solve(a, b), "solve_right": lambda L, a, b: L.linalg.solve(a, b.mT, left=False),
    "solve_vector": lambda L, a, b: L.linalg.solve(a, b[..., 0]),
    "lu_factor": lambda L, a, b: tuple(L.linalg.lu_factor(a)), "lu": lambda L, a, b: tuple(L.linalg.lu(a)),
    "lu_solve": lambda L, a, b: tuple(L.linalg.lu_solve(*L.linalg.lu_factor(a), x, left=left, adjoint=adj)
                                      for left, x in ((True, b), (False, b.mT)) for adj in (False, True)),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 3, 3), (2, 0, 0)])
@pytest.mark.parametrize("name", CLU)
def test_complex_lu_family(name, shape, dtype):
    (am, at), (bm, bt) = cboth(shape, dtype), cboth(shape[:-1] + (2,), dtype, seed=5)
    cclose(CLU[name](mt, am, bm), CLU[name](torch, at, bt), 1e-4 if dtype == "complex64" else 1e-10)


@pytest.mark.parametrize("name", ["inv", "det", "solve", "solve_right", "solve_vector"])
def test_complex_lu_family_gradients(name):
    (am, at), (bm, bt) = cboth((2, 3, 3), "complex128"), cboth((2, 3, 2), "complex128", seed=5)
    fn = CLU[name]
    leaves_m = (am.requires_grad_(), bm.requires_grad_())
    leaves_t = (at.requires_grad_(), bt.requires_grad_())
    rm, rt = fn(mt, *leaves_m), fn(torch, *leaves_t)
    g = np.random.default_rng(6).standard_normal(tuple(rt.shape) + (2,))
    rm.backward(mt.tensor((g[..., 0] + 1j * g[..., 1]).tolist(), dtype=mt.complex128))
    rt.backward(torch.tensor(g[..., 0] + 1j * g[..., 1]))
    for lm, lt in zip(leaves_m, leaves_t):
        if lt.grad is not None:
            cclose(lm.grad, lt.grad, 1e-10)
    leaves = tuple(x.detach().requires_grad_() for x in leaves_m)
    assert mt.autograd.gradcheck(lambda a, b: fn(mt, a, b), leaves)
    assert mt.autograd.gradgradcheck(lambda a, b: fn(mt, a, b), leaves)


def test_complex_errors_and_unsupported():
    am, at = cboth((3, 3), "complex128")
    err(lambda: mt.linalg.solve(am, mt.ones(3, dtype=mt.complex64)),
        lambda: torch.linalg.solve(at, torch.ones(3, dtype=torch.complex64)))
    err(lambda: mt.linalg.inv(am[:2]), lambda: torch.linalg.inv(at[:2]))
    err(lambda: mt.linalg.inv(mt.zeros(2, 3, 3, dtype=mt.complex64)),
        lambda: torch.linalg.inv(torch.zeros(2, 3, 3, dtype=torch.complex64)))
