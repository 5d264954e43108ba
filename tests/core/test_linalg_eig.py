"""torch.linalg.eig / eigvals and the complex eigh / eigvalsh / svd / svdvals against live PyTorch: eigenvalues
(sorted) and eigenvectors up to phase, through reconstruction, dtypes and layouts, batched, empty, meta and
non-contiguous inputs, out=, error types and texts, and gradients of phase-invariant losses (PyTorch's values,
gradcheck and gradgradcheck in complex128)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from test_linalg_lapack import err  # same exception type name and text as PyTorch's

torch = pytest.importorskip("torch")

MT = {"float32": mt.float32, "float64": mt.float64, "complex64": mt.complex64, "complex128": mt.complex128}
TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


def pair(shape, dtype, seed=0, hermitian=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    if hermitian:
        a = a + np.conj(np.swapaxes(a, -1, -2))
    t = torch.tensor(a, dtype=getattr(torch, dtype))
    return mt.tensor(t.tolist(), dtype=MT[dtype]).reshape(shape), t


def np_of(x):
    return (x.detach().resolve_conj() if hasattr(x, "resolve_conj") else x.detach()).numpy()


def sorted_vals(x):
    v = np_of(x).astype(np.complex128)
    return np.sort_complex(v.reshape(-1, v.shape[-1])) if v.size else v


def unphase(v):
    """eigen/singular vectors (columns) made unique: each column's largest entry real and positive"""
    v = np.asarray(v, dtype=np.complex128)
    if not v.size:
        return v
    idx = np.abs(v).argmax(-2)[..., None, :]
    ph = np.take_along_axis(v, idx, -2)
    return v * (np.abs(ph) / ph)


def same_meta(m, t):
    assert tuple(m.shape) == tuple(t.shape) and str(m.dtype) == str(t.dtype), (m.shape, m.dtype, t.shape, t.dtype)


# ---- eig / eigvals -----------------------------------------------------------------------------------------

SHAPES = [(3, 3), (2, 4, 4), (1, 1), (0, 3, 3), (2, 0, 0), (2, 1, 5, 5)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", SHAPES)
def test_eig_values_vectors_layout(shape, dtype):
    m, t = pair(shape, dtype)
    (Lm, Vm), (Lt, Vt) = mt.linalg.eig(m), torch.linalg.eig(t)
    same_meta(Lm, Lt), same_meta(Vm, Vt)
    assert Vm.stride() == Vt.stride() and Lm.stride() == Lt.stride()
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(sorted_vals(Lm), sorted_vals(Lt), rtol=tol, atol=tol)
    if not m.numel():
        return
    A, L, V = np_of(m).astype(np.complex128), np_of(Lm), np_of(Vm)
    np.testing.assert_allclose(A @ V, V * L[..., None, :], rtol=tol, atol=tol)  # A V = V diag(L)
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, rtol=tol)  # unit eigenvectors, as LAPACK's
    # both libraries order the eigenvalues as LAPACK does: the vectors match up to phase column by column
    if np.allclose(np_of(Lm), np_of(Lt), rtol=tol, atol=tol):
        vtol = 1e-3 if dtype in ("float32", "complex64") else 1e-8
        np.testing.assert_allclose(unphase(V), unphase(np_of(Vt)), rtol=vtol, atol=vtol)
    np.testing.assert_allclose(np_of(mt.linalg.eigvals(m)), np_of(Lm), rtol=0, atol=0)


def test_eig_of_real_matrices_with_conjugate_pairs_and_real_spectra():
    rot = [[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]]  # eigenvalues +-2i, 3
    for a in (rot, [[2.0, 1.0], [0.0, 3.0]]):
        (Lm, Vm), (Lt, Vt) = mt.linalg.eig(mt.tensor(a)), torch.linalg.eig(torch.tensor(a))
        np.testing.assert_allclose(np_of(Lm), np_of(Lt), atol=1e-6)
        np.testing.assert_allclose(unphase(np_of(Vm)), unphase(np_of(Vt)), atol=1e-6)


def test_eig_noncontiguous_and_expanded():
    m, t = pair((4, 4), "float64", seed=3)
    for f in (lambda x: x.mT, lambda x: x.expand(3, 4, 4), lambda x: x[::2, ::2]):
        np.testing.assert_allclose(sorted_vals(mt.linalg.eigvals(f(m))), sorted_vals(torch.linalg.eigvals(f(t))),
                                   atol=1e-10)


def test_eig_meta_and_out():
    Lm, Vm = mt.linalg.eig(mt.empty(2, 3, 3, device="meta"))
    Lt, Vt = torch.linalg.eig(torch.empty(2, 3, 3, device="meta"))
    same_meta(Lm, Lt), same_meta(Vm, Vt)
    assert Vm.device.type == "meta" and Vm.stride() == Vt.stride()
    assert mt.linalg.eigvals(mt.empty(4, 2, 2, dtype=mt.float64, device="meta")).dtype == mt.complex128
    m, t = pair((3, 3), "float64", seed=2)
    om, ot = (mt.empty(0, dtype=mt.complex128), mt.empty(0, dtype=mt.complex128)), \
        (torch.empty(0, dtype=torch.complex128), torch.empty(0, dtype=torch.complex128))
    rm, rt = mt.linalg.eig(m, out=om), torch.linalg.eig(t, out=ot)
    assert rm[0] is om[0] and rm[1] is om[1] and type(rm).__name__.startswith("linalg_eig")
    np.testing.assert_allclose(sorted_vals(om[0]), sorted_vals(ot[0]), atol=1e-10)
    o = mt.empty(0, dtype=mt.complex64)
    assert mt.linalg.eigvals(m, out=o) is o and o.dtype == mt.complex64 and o.shape == (3,)
    err(lambda: mt.linalg.eig(m, out=(mt.empty(0), mt.empty(0))),
        lambda: torch.linalg.eig(t, out=(torch.empty(0), torch.empty(0))))
    err(lambda: mt.linalg.eig(m, out=(mt.empty(0, dtype=mt.complex64), mt.empty(0))),
        lambda: torch.linalg.eig(t, out=(torch.empty(0, dtype=torch.complex64), torch.empty(0))))
    err(lambda: mt.linalg.eigvals(m, out=mt.empty(0)), lambda: torch.linalg.eigvals(t, out=torch.empty(0)))


EIG_ERRORS = {
    "1d": lambda L: L.ones(3), "rect": lambda L: L.ones(2, 3), "int": lambda L: L.ones(2, 2, dtype=L.int64),
    "int_1d": lambda L: L.ones(3, dtype=L.int8), "bool": lambda L: L.ones(2, 2, dtype=L.bool),
    "half": lambda L: L.ones(2, 2, dtype=L.float16), "bf16": lambda L: L.ones(2, 2, dtype=L.bfloat16),
    "half_1d": lambda L: L.ones(3, dtype=L.float16),
    "nan": lambda L: L.tensor([[1.0, float("nan")], [0.0, 1.0]]),
    "inf_batch": lambda L: L.stack([L.eye(2), L.tensor([[1.0, float("inf")], [0.0, 1.0]])]),
    "nan_complex": lambda L: L.tensor([[1.0, float("nan")], [0.0, 1.0]]).to(L.complex128),
    "list": lambda L: [[1.0]],
}


@pytest.mark.parametrize("fn", ["eig", "eigvals"])
@pytest.mark.parametrize("case", EIG_ERRORS)
def test_eig_errors(fn, case):
    if fn == "eigvals" and case in ("nan", "nan_complex", "inf_batch"):
        pytest.skip("eigvals does not check: PyTorch's LAPACK call crashes or returns NaN (see the next test)")
    err(lambda: getattr(mt.linalg, fn)(EIG_ERRORS[case](mt)),
        lambda: getattr(torch.linalg, fn)(EIG_ERRORS[case](torch)))


def test_eigvals_of_non_finite_input():
    # PyTorch hands non-finite input to LAPACK in eigvals (NaN eigenvalues, or a crash); here NaN, never a crash
    a = mt.stack([mt.eye(2), mt.tensor([[1.0, float("inf")], [0.0, 1.0]])])
    r = mt.linalg.eigvals(a)
    assert r.dtype == mt.complex64 and r[0].tolist() == [1, 1] and np.isnan(np_of(r[1])).all()
    # under grad, eigvals is eig and checks as eig does (PyTorch's)
    err(lambda: mt.linalg.eigvals(a.requires_grad_()),
        lambda: torch.linalg.eigvals(torch.tensor(a.tolist()).requires_grad_()))


# ---- eig gradients -------------------------------------------------------------------------------------------

def _eig_losses(L):
    """phase-invariant functions of eig's outputs"""
    return {
        "values": lambda A: L.linalg.eig(A)[0],
        "eigvals": lambda A: L.linalg.eigvals(A),
        "abs_vectors": lambda A: L.linalg.eig(A)[1].abs(),
        "both": lambda A: (lambda r: r[0].unsqueeze(-2) * r[1] * r[1].conj())(L.linalg.eig(A)),
    }


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("loss", ["values", "eigvals", "abs_vectors", "both"])
def test_eig_gradients(loss, dtype):
    m, t = pair((2, 3, 3), dtype, seed=7)
    fm, ft = _eig_losses(mt)[loss], _eig_losses(torch)[loss]
    rm, rt = fm(m.requires_grad_()), ft(t.requires_grad_())
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__ or loss in ("abs_vectors", "both")
    g = np.random.default_rng(8).standard_normal(tuple(rt.shape))
    gt = torch.tensor(g, dtype=rt.dtype)
    rm.backward(mt.tensor(gt.tolist(), dtype=rm.dtype)), rt.backward(gt)
    assert m.grad.dtype == m.dtype
    np.testing.assert_allclose(np_of(m.grad), np_of(t.grad), rtol=1e-7, atol=1e-8)
    leaf = m.detach().requires_grad_()
    assert mt.autograd.gradcheck(fm, (leaf,))
    if loss == "both":
        assert mt.autograd.gradgradcheck(fm, (leaf,))


def test_eig_grad_fn_names_and_phase_error():
    A = mt.tensor([[1.0, 2.0], [-3.0, 0.5]], dtype=mt.float64, requires_grad=True)  # complex spectrum
    L, V = mt.linalg.eig(A)
    assert type(L.grad_fn).__name__ == "LinalgEigBackward0" and V.grad_fn is L.grad_fn
    assert type(mt.linalg.eigvals(A).grad_fn).__name__ == "LinalgEigBackward0"
    At = torch.tensor(A.tolist(), dtype=torch.float64, requires_grad=True)
    e = err(lambda: mt.linalg.eig(A)[1].real.sum().backward(), lambda: torch.linalg.eig(At)[1].real.sum().backward())
    assert "linalg_eig_backward" in str(e)


# ---- complex eigh / eigvalsh ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 3, 3), (2, 0, 0)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh(shape, dtype, uplo):
    m, t = pair(shape, dtype, seed=1)  # not Hermitian: one triangle is read, as LAPACK's
    (Lm, Vm), (Lt, Vt) = mt.linalg.eigh(m, UPLO=uplo), torch.linalg.eigh(t, UPLO=uplo)
    same_meta(Lm, Lt), same_meta(Vm, Vt)
    assert Vm.stride() == Vt.stride()
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(np_of(Lm), np_of(Lt), rtol=tol, atol=tol)
    np.testing.assert_allclose(unphase(np_of(Vm)), unphase(np_of(Vt)), rtol=tol * 10, atol=tol * 10)
    ev = mt.linalg.eigvalsh(m, UPLO=uplo)
    same_meta(ev, Lt)
    np.testing.assert_allclose(np_of(ev), np_of(Lt), rtol=tol, atol=tol)
    meta = mt.linalg.eigh(mt.empty(*shape, dtype=MT[dtype], device="meta"))
    assert meta[0].dtype == MT[dtype].to_real() and meta[1].dtype == MT[dtype]


EIGH_LOSSES = {
    "values": lambda L, A: L.linalg.eigh(A)[0],
    "eigvalsh": lambda L, A: L.linalg.eigvalsh(A),
    "projector": lambda L, A: (lambda V: V @ V.mH)(L.linalg.eigh(A)[1][..., :2]),
    "both": lambda L, A: (lambda r: (r[1] * r[0].unsqueeze(-2)) @ r[1].mH)(L.linalg.eigh(A)),
}


@pytest.mark.parametrize("loss", EIGH_LOSSES)
def test_complex_eigh_gradients(loss):
    m, t = pair((2, 3, 3), "complex128", seed=9, hermitian=True)
    rm, rt = EIGH_LOSSES[loss](mt, m.requires_grad_()), EIGH_LOSSES[loss](torch, t.requires_grad_())
    g = torch.tensor(np.random.default_rng(10).standard_normal(tuple(rt.shape)), dtype=rt.dtype)
    rm.backward(mt.tensor(g.tolist(), dtype=rm.dtype)), rt.backward(g)
    np.testing.assert_allclose(np_of(m.grad), np_of(t.grad), rtol=1e-7, atol=1e-8)
    herm = lambda A: EIGH_LOSSES[loss](mt, (A + A.mH) / 2)  # gradcheck perturbs off the Hermitian matrices
    assert mt.autograd.gradcheck(herm, (m.detach().requires_grad_(),))
    if loss == "both":
        assert mt.autograd.gradgradcheck(herm, (m.detach().requires_grad_(),))


def test_complex_eigh_phase_error():
    m, t = pair((3, 3), "complex128", seed=11, hermitian=True)
    e = err(lambda: mt.linalg.eigh(m.requires_grad_())[1].real.sum().backward(),
            lambda: torch.linalg.eigh(t.requires_grad_())[1].real.sum().backward())
    assert "linalg_eigh_backward" in str(e)


# ---- complex svd / svdvals -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3), (0, 2, 3), (2, 0, 3), (3, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_complex_svd(shape, dtype, full):
    m, t = pair(shape, dtype, seed=2)
    rm, rt = mt.linalg.svd(m, full_matrices=full), torch.linalg.svd(t, full_matrices=full)
    for a, b in zip(rm, rt):
        same_meta(a, b)
        assert a.stride() == b.stride() or not b.numel()
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(np_of(rm.S), np_of(rt.S), rtol=tol, atol=tol)
    k = min(shape[-2:])
    U, S, Vh = np_of(rm.U)[..., :k], np_of(rm.S), np_of(rm.Vh)[..., :k, :]
    np.testing.assert_allclose((U * S[..., None, :]) @ Vh, np_of(m), rtol=tol, atol=tol)
    if not k:  # the full factors of empty matrices are identities, as PyTorch's
        np.testing.assert_array_equal(np_of(rm.U), np_of(rt.U))
        np.testing.assert_array_equal(np_of(rm.Vh), np_of(rt.Vh))
    sv = mt.linalg.svdvals(m)
    same_meta(sv, rt.S)
    old_m, old_t = mt.svd(m), torch.svd(t)
    for a, b in zip(old_m, old_t):
        same_meta(a, b)
    for a, b in zip(mt.svd(m, compute_uv=False), torch.svd(t, compute_uv=False)):
        same_meta(a, b)
    meta = mt.linalg.svd(mt.empty(*shape, dtype=MT[dtype], device="meta"), full_matrices=full)
    assert [(tuple(x.shape), x.dtype) for x in meta] == [(tuple(x.shape), MT[str(x.dtype)[6:]]) for x in rt]


def test_complex_svd_non_finite():
    for batched in (False, True):
        a = np.ones((2, 3, 3), dtype=np.complex64)
        a[1, 0, 0] = complex(0, float("nan"))
        m, t = mt.tensor(a.tolist(), dtype=mt.complex64), torch.tensor(a)
        if not batched:
            m, t = m[1], t[1]
        err(lambda: mt.linalg.svd(m), lambda: torch.linalg.svd(t))
        err(lambda: mt.linalg.svdvals(m), lambda: torch.linalg.svdvals(t))


SVD_LOSSES = {
    "S": lambda L, A: L.linalg.svdvals(A),
    "U_proj": lambda L, A: (lambda U: U @ U.mH)(L.linalg.svd(A, full_matrices=False)[0]),
    "V_proj": lambda L, A: (lambda Vh: Vh.mH @ Vh)(L.linalg.svd(A, full_matrices=False)[2]),
    "UVh": lambda L, A: (lambda r: r[0] @ r[2])(L.linalg.svd(A, full_matrices=False)),
    "USVh": lambda L, A: (lambda r: (r[0] * r[1].unsqueeze(-2)) @ r[2])(L.linalg.svd(A, full_matrices=False)),
    "svd_V": lambda L, A: (lambda r: r[0] @ r[2].mH)(L.svd(A)),
}


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("loss", SVD_LOSSES)
def test_complex_svd_gradients(loss, shape):
    m, t = pair(shape, "complex128", seed=12)
    rm, rt = SVD_LOSSES[loss](mt, m.requires_grad_()), SVD_LOSSES[loss](torch, t.requires_grad_())
    g = torch.tensor(np.random.default_rng(13).standard_normal(tuple(rt.shape)), dtype=rt.dtype)
    rm.backward(mt.tensor(g.tolist(), dtype=rm.dtype)), rt.backward(g)
    np.testing.assert_allclose(np_of(m.grad), np_of(t.grad), rtol=1e-7, atol=1e-8)
    assert mt.autograd.gradcheck(lambda A: SVD_LOSSES[loss](mt, A), (m.detach().requires_grad_(),))
    if loss in ("S", "USVh"):
        assert mt.autograd.gradgradcheck(lambda A: SVD_LOSSES[loss](mt, A), (m.detach().requires_grad_(),))


def test_complex_svd_phase_error():
    m, t = pair((4, 3), "complex128", seed=14)
    e = err(lambda: mt.linalg.svd(m.requires_grad_(), full_matrices=False)[0].real.sum().backward(),
            lambda: torch.linalg.svd(t.requires_grad_(), full_matrices=False)[0].real.sum().backward())
    assert "svd_backward" in str(e)


def test_det_gradient_at_singular_complex_matrices():
    # the cofactors of a singular matrix come from its SVD: complex ones now that the complex SVD exists
    rng = np.random.default_rng(15)
    for shape in [(3, 3), (2, 3, 3)]:
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        a[..., 2, :] = a[..., 0, :] * (1 + 2j)
        t = torch.tensor(a, requires_grad=True)
        m = mt.tensor(t.tolist(), dtype=mt.complex128).requires_grad_()
        g = torch.tensor(rng.standard_normal(shape[:-2]) + 1j * rng.standard_normal(shape[:-2]))
        torch.linalg.det(t).backward(g)
        mt.linalg.det(m).backward(mt.tensor(g.tolist(), dtype=mt.complex128).reshape(shape[:-2]))
        np.testing.assert_allclose(np_of(m.grad), t.grad.numpy(), rtol=1e-8, atol=1e-10)
