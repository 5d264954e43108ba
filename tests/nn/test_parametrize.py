"""nn.utils.parametrize, parametrizations.weight_norm/spectral_norm and the deprecated hook forms,
against live PyTorch: same parametrized weights, outputs, gradients, state_dict keys, random u/v."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def w_of(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def pair(make):
    out = []
    for L in (mt, torch):
        L.manual_seed(0)
        m = make(L)
        with L.no_grad():
            for name, p in m.named_parameters():
                p.copy_(L.tensor(w_of(tuple(p.shape), seed=len(name))))
        out.append(m)
    return out


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def run_both(mm, tm, x):
    ym, yt = mm(mt.tensor(x)), tm(torch.tensor(x))
    close(ym, yt)
    ym.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    for (nm, pm), (nt, pt) in zip(mm.named_parameters(), tm.named_parameters()):
        assert nm == nt
        close(pm.grad, pt.grad, 1e-4)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(dim):
    mm, tm = pair(lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(4, 3), dim=dim))
    assert list(mm.state_dict()) == list(tm.state_dict())
    assert type(mm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    close(mm.weight, tm.weight)
    run_both(mm, tm, w_of((2, 4), 9))


def test_deprecated_weight_norm_and_remove():
    mm, tm = pair(lambda L: L.nn.utils.weight_norm(L.nn.Conv1d(2, 3, 3)))
    assert sorted(mm.state_dict()) == sorted(tm.state_dict())
    run_both(mm, tm, w_of((1, 2, 6), 9))
    mt.nn.utils.remove_weight_norm(mm)
    torch.nn.utils.remove_weight_norm(tm)
    assert sorted(mm.state_dict()) == sorted(tm.state_dict())
    close(mm.weight, tm.weight)


@pytest.mark.parametrize("form", ["hook", "parametrization"])
def test_spectral_norm_same_random_vectors_and_values(form):
    mm, tm = [], []
    for L, out in ((mt, mm), (torch, tm)):
        L.manual_seed(0)
        lin = L.nn.Linear(5, 4)
        with L.no_grad():
            lin.weight.copy_(L.tensor(w_of((4, 5))))
        L.manual_seed(1)
        out.append(L.nn.utils.spectral_norm(lin) if form == "hook" else L.nn.utils.parametrizations.spectral_norm(lin))
    mm, tm = mm[0], tm[0]
    assert sorted(mm.state_dict()) == sorted(tm.state_dict())
    for k in mm.state_dict():
        close(mm.state_dict()[k], tm.state_dict()[k], 1e-4)
    x = w_of((3, 5), 4)
    for _ in range(2):  # training: power iterations update u, v
        close(mm(mt.tensor(x)), tm(torch.tensor(x)), 1e-4)
    mm.eval(), tm.eval()
    close(mm(mt.tensor(x)), tm(torch.tensor(x)), 1e-4)


def test_custom_parametrization_cached_assign_and_remove():
    class Symmetric(mt.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    P = mt.nn.utils.parametrize
    m = mt.nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert P.type_before_parametrizations(m) is mt.nn.Linear
    w = m.weight
    assert (w == w.mT).all()
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    A = mt.tensor([[1.0, 2, 3], [2, 4, 5], [3, 5, 6]])
    m.weight = A
    assert (m.weight == A).all() and (m.parametrizations.weight.original == A.triu()).all()
    assert "parametrizations.weight.original" in m.state_dict()
    P.remove_parametrizations(m, "weight")
    assert type(m) is mt.nn.Linear and isinstance(m.weight, mt.nn.Parameter) and (m.weight == A).all()
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        P.register_parametrization(m, "nope", Symmetric())


ORTH = [((4, 4), None, True), ((5, 3), None, True), ((3, 5), None, True), ((4, 4), "cayley", True),
        ((5, 3), "matrix_exp", True), ((4, 4), "householder", True), ((4, 4), "matrix_exp", False),
        ((5, 3), "cayley", False), ((4, 4), "householder", False), ((5, 3), "householder", False),
        ((3, 5), "householder", False)]


@pytest.mark.parametrize("shape,omap,triv", ORTH)
def test_orthogonal_same_weights_and_gradients(shape, omap, triv):
    res = []
    for L in (mt, torch):
        L.manual_seed(0)
        lin = L.nn.Linear(shape[1], shape[0], bias=False)
        with L.no_grad():
            lin.weight.copy_(L.tensor(w_of(shape, 1)))
        L.manual_seed(2)  # the random completion of a non-square weight draws from it
        L.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=omap, use_trivialization=triv)
        y = lin(L.tensor(w_of((2, shape[1]), 3)))
        y.pow(2).sum().backward()
        res.append((lin.weight, next(iter(lin.parameters())).grad, sorted(lin.state_dict())))
    (wm, gm, km), (wt, gt, kt) = res
    close(wm, wt)
    close(gm, gt, 1e-4)
    assert km == kt
    q = wm if shape[0] >= shape[1] else wm.mT
    close(q.mT @ q, torch.eye(min(shape)), 1e-5)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match='orthogonal_map has to be one of'):
        mt.nn.utils.parametrizations.orthogonal(mt.nn.Linear(3, 3), orthogonal_map="qr")
    m = mt.nn.utils.parametrizations.orthogonal(mt.nn.Linear(3, 3), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = mt.eye(3)
