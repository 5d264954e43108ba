"""torch.lobpcg against live PyTorch on symmetric positive definite problems: eigenvalues and (up to sign)
eigenvectors of the standard and generalized problems, largest and smallest, both methods, preconditioner,
batches, the tracker's view of the iteration, float32, gradients w.r.t. A (and their gradcheck), and the
errors (type and text)."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
M = 30
Q, _ = np.linalg.qr(R.standard_normal((M, M)))
A_NP = (Q * np.linspace(1, 10, M)) @ Q.T  # SPD, well separated spectrum
B_NP = np.diag(np.linspace(1, 2, M))
X_NP = R.standard_normal((M, 3))


def t(L, a, dtype="float64"):
    return L.tensor(np.asarray(a).reshape(-1).tolist(), dtype=getattr(L, dtype)).reshape(np.shape(a))


def arr(x):
    return np.array(x.detach().tolist())


def same_pairs(ours, theirs, tol):
    """eigenvalues equal; eigenvectors equal up to each column's sign"""
    (Em, Um), (Et, Ut) = ours, theirs
    assert str(Em.dtype) == str(Et.dtype) and tuple(Em.shape) == tuple(Et.shape)
    assert tuple(Um.shape) == tuple(Ut.shape)
    np.testing.assert_allclose(arr(Em), arr(Et), rtol=tol, atol=tol)
    um, ut = arr(Um), arr(Ut)
    signs = np.sign((um * ut).sum(-2, keepdims=True))
    np.testing.assert_allclose(um * signs, ut, rtol=0, atol=tol ** 0.5)


def run(L, **kw):
    args = {k: (t(L, v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    return L.lobpcg(**args)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_standard_problem(method, largest, k):
    kw = dict(A=A_NP, k=k, X=X_NP, largest=largest, method=method)
    same_pairs(run(mt, **kw), run(torch, **kw), 1e-9)


@pytest.mark.parametrize("method", ["ortho", "basic"])
def test_generalized_problem_and_preconditioner(method):
    kw = dict(A=A_NP, B=B_NP, k=2, X=X_NP, method=method)
    same_pairs(run(mt, **kw), run(torch, **kw), 1e-9)
    kw = dict(A=A_NP, k=2, X=X_NP, iK=np.diag(1 / np.diag(A_NP)), method=method, largest=False)
    same_pairs(run(mt, **kw), run(torch, **kw), 1e-9)


def test_defaults_and_random_start():
    # without X: a random start (each library's own draw), so only the converged pairs compare
    mt.manual_seed(0)
    torch.manual_seed(0)
    same_pairs(mt.lobpcg(t(mt, A_NP)), torch.lobpcg(t(torch, A_NP)), 1e-9)
    same_pairs(mt.lobpcg(t(mt, A_NP), n=4, k=2), torch.lobpcg(t(torch, A_NP), n=4, k=2), 1e-9)


def test_float32_and_batches():
    kw = dict(A=A_NP, k=2, X=X_NP)
    Em, Um = mt.lobpcg(t(mt, A_NP, "float32"), k=2, X=t(mt, X_NP, "float32"))
    Et, Ut = torch.lobpcg(t(torch, A_NP, "float32"), k=2, X=t(torch, X_NP, "float32"))
    same_pairs((Em, Um), (Et, Ut), 1e-4)
    A3 = np.stack([A_NP, 2 * A_NP, A_NP + np.eye(M)]).reshape(3, 1, M, M)
    X3 = np.stack([X_NP] * 3).reshape(3, 1, M, 3)
    kw = dict(A=A3, k=2, X=X3)
    same_pairs(run(mt, **kw), run(torch, **kw), 1e-9)


def test_sparse_A():
    same_pairs(mt.lobpcg(t(mt, A_NP).to_sparse(), k=2, X=t(mt, X_NP[:, :2])),
               torch.lobpcg(t(torch, A_NP).to_sparse(), k=2, X=t(torch, X_NP[:, :2])), 1e-9)


def test_tracker_and_worker_state():
    def steps(L):
        seen = []
        L.lobpcg(t(L, A_NP), k=2, X=t(L, X_NP),
                 tracker=lambda w: seen.append((w.ivars["istep"], w.ivars["converged_count"],
                                                w.ivars["converged_end"], sorted(w.fvars))))
        return seen
    assert steps(mt) == steps(torch)

    def stopped(L):  # a tracker may stop the run
        seen = []

        def tracker(w):
            seen.append(w.ivars["istep"])
            w.bvars["force_stop"] = w.ivars["istep"] >= 3
        L.lobpcg(t(L, A_NP), k=2, X=t(L, X_NP), tracker=tracker, niter=100)
        return seen
    assert stopped(mt) == stopped(torch) == [1, 2, 3]


def test_gradients():
    weights = np.arange(M, dtype=float)[:, None]

    def grad(L, k, largest):
        A = t(L, A_NP).requires_grad_()
        E, U = L.lobpcg(A, k=k, X=t(L, X_NP[:, :k]), largest=largest)
        (E.sum() + (U ** 2 * t(L, weights)).sum()).backward()
        return arr(A.grad)
    for k, largest in ((1, True), (2, True), (2, False), (3, False)):
        np.testing.assert_allclose(grad(mt, k, largest), grad(torch, k, largest), rtol=1e-5, atol=1e-5)
    names = [type(L.lobpcg(t(L, A_NP).requires_grad_(), k=2, X=t(L, X_NP[:, :2]))[0].grad_fn).__name__
             for L in (mt, torch)]
    assert names[0] == names[1]


def test_gradcheck():
    m = 9
    q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((m, m)))
    a = (q * np.arange(1.0, m + 1)) @ q.T
    x0 = t(mt, np.random.default_rng(2).standard_normal((m, 2)))

    def eigen(A):
        E, U = mt.lobpcg(A, k=2, X=x0, tol=1e-13, niter=-1)
        return E, (U * U.sum(0).sign()) ** 2  # sign-independent function of the eigenvectors
    assert mt.autograd.gradcheck(eigen, (t(mt, a).requires_grad_(),), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("case", [
    lambda L: L.lobpcg(t(L, A_NP), k=11),
    lambda L: L.lobpcg(t(L, A_NP[:, :5])),
    lambda L: L.lobpcg(t(L, A_NP), X=t(L, X_NP[:5])),
    lambda L: L.lobpcg(t(L, A_NP), B=t(L, B_NP[:5])),
    lambda L: L.lobpcg(t(L, A_NP).half()),
    lambda L: L.lobpcg(t(L, np.stack([A_NP, A_NP])), X=t(L, np.stack([X_NP[:5]] * 2))),
    lambda L: L.lobpcg(t(L, A_NP).requires_grad_(), B=t(L, B_NP), k=1, X=t(L, X_NP[:, :1]))[0].sum().backward(),
])
def test_errors(case):
    errs = []
    for L in (torch, mt):
        with pytest.raises(Exception) as e:
            case(L)
        errs.append(e.value)
    te, me = errs
    assert type(me) is type(te) and str(me) == str(te), (me, te)
