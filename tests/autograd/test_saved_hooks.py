"""torch.autograd.graph.saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks,
against live PyTorch: which tensors are packed, values and gradients through unpacked
tensors, nesting, error texts."""
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def run(L, pack_scale=1.0):
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return ("box", t * pack_scale)

    def unpack(p):
        unpacked.append(p[0])
        return p[1]
    x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], dtype=L.float64, requires_grad=True)
    w = L.tensor([[1.0, 2.0], [0.5, -1.0], [0.3, 0.7]], dtype=L.float64, requires_grad=True)
    with L.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.exp() @ w).tanh().sum()
    y.backward()
    return packed, unpacked, x.grad.tolist(), w.grad.tolist()


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_hooks_pack_and_unpack_as_torch(scale):
    pm, um, gxm, gwm = run(mt, scale)
    pt, ut, gxt, gwt = run(torch, scale)
    assert pm and len(um) == len(pm)  # what an op saves is its own business; each is unpacked once
    assert sum(gxm, []) == pytest.approx(sum(gxt, [])) and sum(gwm, []) == pytest.approx(sum(gwt, []))


def test_hooks_double_backward_and_nesting():
    outs = []
    for L in (mt, torch):
        seen = []
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
                y = (x * 1) ** 3
        g, = L.autograd.grad(y.sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x)
        outs.append((bool(seen), g.tolist(), g2.tolist()))
    assert outs[0] == outs[1]


def test_hooks_in_custom_function():
    for L in (mt, torch):
        class Sq(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 2 * a * g
        n = []
        x = L.tensor([1.0, 3.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: n.append(1) or t * 10, lambda t: t):
            Sq.apply(x).sum().backward()
        assert n == [1] and x.grad.tolist() == [20.0, 60.0]


def test_save_on_cpu_and_disable():
    for L in (mt, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.save_on_cpu():
            y = (x * x).sum()
        y.backward()
        assert x.grad.tolist() == [2.0, 4.0]
    msgs = []
    for L in (mt, torch):
        with L.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError) as e:
                with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        msgs.append(str(e.value))
        # disabling while hooks are in force raises at once
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="^off$"):
                with L.autograd.graph.disable_saved_tensors_hooks("off"):
                    pass
    assert msgs == ["no hooks here", "no hooks here"]


def test_hook_errors_as_torch():
    res = []
    for L in (mt, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        r = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            with pytest.raises(RuntimeError) as e:
                x.detach().requires_grad_() * (x * 1)
        r.append(str(e.value).split(".")[0])
        with L.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda t: 1):
            y = (x * x).sum()
        with pytest.raises(TypeError) as e:
            y.backward()
        r.append(str(e.value))

        def bad(t):
            raise ValueError("boom")
        with L.autograd.graph.saved_tensors_hooks(bad, lambda t: t):
            with pytest.raises(ValueError, match="boom"):
                x * x
        res.append(r)
    assert res[0] == res[1]
