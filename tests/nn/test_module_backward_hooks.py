"""Module backward hooks (full, pre, deprecated non-full, global) against live PyTorch: what the hooks
see (grad_input/grad_output tuples with None at non-tensor positions), replacing gradients, order,
removal, and the error texts."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((3, 4))


def arr(t):
    return None if t is None else np.array(t.detach().tolist())


def log_of(L, setup, inputs=lambda L: (L.tensor(X.tolist(), requires_grad=True),), call=None):
    """Build Linear(4, 2) under the same seed, register hooks via setup(L, m, log), run forward +
    backward; returns the log of what the hooks saw and the gradients."""
    L.manual_seed(0)
    m = L.nn.Linear(4, 2)
    log = []
    handles = setup(L, m, log)
    xs = inputs(L)
    out = call(m, *xs) if call else m(*xs)
    (out * L.tensor([[1.0, -2.0]] * 3)).sum().backward()
    grads = [arr(x.grad) for x in xs if isinstance(x, L.Tensor) and x.requires_grad] + [arr(m.weight.grad)]
    for h in handles or ():
        h.remove()
    return log, grads


def same(setup, **kw):
    a, b = log_of(mt, setup, **kw), log_of(torch, setup, **kw)
    assert len(a[0]) == len(b[0])
    for (na, va), (nb, vb) in zip(a[0], b[0]):
        assert na == nb
        assert len(va) == len(vb)
        for x, y in zip(va, vb):
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_allclose(arr(x), arr(y), rtol=1e-6)
    for x, y in zip(a[1], b[1]):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_full_backward_hook_sees_grads():
    def setup(L, m, log):
        return [m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", gi + go)))]
    same(setup)


def test_pre_hook_and_hook_replace_grads_in_order():
    def setup(L, m, log):
        return [m.register_full_backward_pre_hook(lambda mod, go: (log.append(("pre", go)), (go[0] * 2,))[1]),
                m.register_full_backward_hook(lambda mod, gi, go: (log.append(("h1", gi + go)), (gi[0] * 3,))[1]),
                m.register_full_backward_hook(lambda mod, gi, go: log.append(("h0", gi + go)), prepend=True)]
    same(setup)


def test_non_tensor_inputs_are_none_and_multiple_outputs():
    class Two(object):
        pass

    def setup(L, m, log):
        m.forward = lambda x, scale, y: (m.weight @ x.t() * scale, (y * 2).sum())
        return [m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", gi + go)))]

    def inputs(L):
        return (L.tensor(X.tolist(), requires_grad=True), 2.0, L.tensor([1.0, 2.0], requires_grad=True))

    def call(m, x, s, y):
        a, b = m(x, s, y)
        return a.sum(0).unsqueeze(0).expand(3, 3)[:, :2] + b
    same(setup, inputs=inputs, call=call)


def test_no_input_requires_grad_warns_and_calls_hook():
    def setup(L, m, log):
        return [m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", gi + go)))]
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        same(setup, inputs=lambda L: (L.tensor(X.tolist()),))


def test_deprecated_and_global_hooks():
    def setup(L, m, log):
        return [m.register_backward_hook(lambda mod, gi, go: log.append(("old", tuple(g for g in go))))]
    same(setup)

    def setup_global(L, m, log):
        mm = L.nn.modules.module
        return [mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("g", gi + go))),
                mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(("gp", go)))]
    same(setup_global)


def test_mixing_hook_kinds_raises_as_torch():
    for L in (mt, torch):
        m = L.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks on a "
                                               "single Module. Please use only one of them."):
            m.register_backward_hook(lambda *a: None)
        m = L.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                               "expected 1"):
            m(L.ones(1, 2, requires_grad=True)).sum().backward()
