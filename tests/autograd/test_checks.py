"""gradcheck / gradgradcheck / autograd.functional against live PyTorch."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

X = [[0.5, -1.2, 2.0], [0.3, 0.7, -0.4]]
W = [[0.1, 0.2], [0.3, -0.5], [1.0, 0.4]]


def inputs(L, grad=True):
    return (L.tensor(X, dtype=L.float64, requires_grad=grad), L.tensor(W, dtype=L.float64, requires_grad=grad))


FUNCS = {
    "matmul_tanh": lambda a, b: (a @ b).tanh(),
    "broadcast": lambda a, b: a.sum(0) * b.t() + a.sum(1, keepdim=True) / (b.t().abs() + 1),
    "noncontig": lambda a, b: (a.t() ** 3).exp() @ a @ b - b.t().sin().t(),
    "reduce": lambda a, b: (a.amax(1) + a.mean() * b.sum(0)),
    "two_outputs": lambda a, b: (a * 2, (b * b).sum()),
}


@pytest.mark.parametrize("name", list(FUNCS))
def test_gradcheck_passes(name):
    a, b = inputs(mt)
    assert mt.autograd.gradcheck(FUNCS[name], (a, b))
    assert mt.autograd.gradgradcheck(FUNCS[name], (a, b))


def test_gradcheck_reports_mismatch_as_pytorch():
    msgs = []
    for L in (mt, torch):
        class Bad(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3
        a, _ = inputs(L)
        with pytest.raises(RuntimeError) as e:
            L.autograd.gradcheck(Bad.apply, (a,))
        assert type(e.value).__name__ == "GradcheckError"
        msgs.append(str(e.value).split("\n")[0])
        assert L.autograd.gradcheck(Bad.apply, (a,), raise_exception=False) is False
    assert msgs[0] == msgs[1] == "Jacobian mismatch for output 0 with respect to input 0,"
    from mindtorch_v2.autograd.gradcheck import GradcheckError
    assert issubclass(GradcheckError, RuntimeError)


def test_gradcheck_unsupported_modes_say_so():
    a, b = inputs(mt)
    with pytest.raises(NotImplementedError, match="check_forward_ad"):
        mt.autograd.gradcheck(FUNCS["matmul_tanh"], (a, b), check_forward_ad=True)


def close(m, t):
    if isinstance(t, tuple):
        assert isinstance(m, tuple) and len(m) == len(t)
        for x, y in zip(m, t):
            close(x, y)
        return
    assert tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.array(m.tolist()), np.array(t.detach().tolist()), rtol=1e-10, atol=1e-12)


def both(fn):
    close(fn(mt), fn(torch))


def test_jacobian_and_hessian():
    f = lambda a: (a * a).sin()
    g = lambda a: (a ** 3).sum() + (a.sin() * a).sum()
    both(lambda L: L.autograd.functional.jacobian(f, inputs(L, False)[0]))
    both(lambda L: L.autograd.functional.jacobian(lambda a, b: (a.sum() * b, a * 2), inputs(L, False)))
    both(lambda L: L.autograd.functional.hessian(g, inputs(L, False)[0]))
    both(lambda L: L.autograd.functional.hessian(lambda a, b: (a @ b).pow(2).sum(), inputs(L, False)))


def test_vjp_jvp_hvp_vhp():
    f = lambda a: (a * a).sin()
    g = lambda a: (a ** 3).sum() + (a.sin() * a).sum()
    F = "vjp", "jvp", "hvp", "vhp"
    for name in F:
        fn = f if name in ("vjp", "jvp") else g
        both(lambda L: getattr(L.autograd.functional, name)(fn, inputs(L, False)[0],
                                                            L.ones(2, 3, dtype=L.float64)))


def test_jacobian_create_graph():
    def run(L):
        x = inputs(L)[0]
        J = L.autograd.functional.jacobian(lambda a: (a * a).sin(), x, create_graph=True)
        J.sum().backward()
        return x.grad
    both(run)
