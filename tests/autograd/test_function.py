"""autograd.Function against live PyTorch: the same Function classes defined on both libraries."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def same(fn):
    got, want = fn(mt), fn(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None or isinstance(w, (bool, str, int, float, tuple)):
            assert g == w, (g, w)
        else:
            np.testing.assert_allclose(np.array(g.tolist(), dtype=float), np.array(w.detach().tolist(), dtype=float),
                                       rtol=1e-6, atol=1e-9)


def err(fn):
    try:
        fn()
    except (RuntimeError, TypeError) as e:
        return f"{type(e).__name__}: {e}"
    return "no error"


def test_non_grad_first_input_and_non_tensor_args():
    def f(L):
        class Scale(L.autograd.Function):
            @staticmethod
            def forward(ctx, k, a, b):
                ctx.save_for_backward(a, b)
                ctx.k = k
                return a * b * k

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return None, g * b * ctx.k, g * a * ctx.k
        a = L.tensor([1.0, 2.0])             # first tensor input needs no grad
        b = L.tensor([3.0, 4.0], requires_grad=True)
        o = Scale.apply(2.0, a, b)
        fn = o.grad_fn
        edges = [None if n is None else type(n).__name__ for n, _ in fn.next_functions]
        o.sum().backward()
        return [b.grad, type(fn).__name__, fn.name(), tuple(edges), a.grad,
                err(lambda: o.sum().backward())]
    same(f)


def test_needs_input_grad_and_backward_grad_mode():
    def f(L):
        seen = {}

        class G(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                seen["fwd_grad"] = L.is_grad_enabled()
                return a * b

            @staticmethod
            def backward(ctx, g):
                seen["needs"] = ctx.needs_input_grad
                seen["bwd_grad"] = L.is_grad_enabled()
                return g, g, None
        a, b = L.ones(2, requires_grad=True), L.ones(2)
        G.apply(a, b, 3).sum().backward()
        return [seen["needs"], seen["fwd_grad"], seen["bwd_grad"]]
    same(f)


def test_wrong_gradients():
    def f(L):
        x = L.ones(2, requires_grad=True)

        def make(ret):
            class W(L.autograd.Function):
                @staticmethod
                def forward(ctx, a, k):
                    return a * k

                @staticmethod
                def backward(ctx, g):
                    return ret(g)
            return W
        out = []
        for ret in (lambda g: g, lambda g: (g, 1.0), lambda g: (L.ones(3), None), lambda g: (g, None, None)):
            out.append(err(lambda: make(ret).apply(x, 2.0).sum().backward()))
        return out
    same(f)


def test_mark_dirty_and_views():
    def f(L):
        class Dbl(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = Dbl.apply(y)
        out = [z is y, y.grad_fn.name(), y._version]
        z.sum().backward()
        out.append(x.grad)
        x.grad = None
        y = x * 1
        v = y[:1]
        Dbl.apply(v)
        out += [y.grad_fn.name(), v.grad_fn.name()]
        (y * y).sum().backward()
        out.append(x.grad)
        out.append(err(lambda: Dbl.apply(x)))
        return out
    same(f)


def test_non_differentiable_and_materialize():
    def f(L):
        seen = []

        class ND(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                c = (a > 0).to(a.dtype)
                ctx.mark_non_differentiable(c)
                return a * 3, c

            @staticmethod
            def backward(ctx, gb, gc):
                seen.append(gc)
                return gb * 3

        class NM(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.set_materialize_grads(False)
                return a * 1, a * 2

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append(g2)
                return g1
        x = L.tensor([1.0, -2.0], requires_grad=True)
        b, c = ND.apply(x)
        b.sum().backward()
        p, q = NM.apply(x)
        p.sum().backward()
        return [b.requires_grad, c.requires_grad, c.grad_fn is None, seen[0], seen[1], x.grad]
    same(f)


def test_once_differentiable_and_double_backward():
    def f(L):
        class Sq(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 2

            @staticmethod
            @L.autograd.function.once_differentiable
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 2 * a * g

        class Cube(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 3

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 3 * a ** 2 * g
        x = L.tensor([2.0, -1.0], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x)
        w = L.tensor([1.5], requires_grad=True)
        gw, = L.autograd.grad(Sq.apply(w * 1).sum(), w, create_graph=True)
        return [g, g2, gw, gw.grad_fn is None]
    same(f)

    def g(L):
        class Sq(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a ** 2

            @staticmethod
            @L.autograd.function.once_differentiable
            def backward(ctx, g):
                return 2 * g
        w = L.tensor([1.5], requires_grad=True)
        y = Sq.apply(w)
        gw, = L.autograd.grad(y, w, L.ones(1, requires_grad=True), create_graph=True)
        return [gw.grad_fn.name(), err(lambda: gw.sum().backward())]
    same(g)


def test_setup_context_vjp_and_saved_output():
    def f(L):
        seen = []

        class SC(L.autograd.Function):
            @staticmethod
            def forward(a, k):
                return a * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]
                ctx.save_for_backward(output)

            @staticmethod
            def vjp(ctx, g):
                out, = ctx.saved_tensors
                seen.append(type(out.grad_fn).__name__)
                return g * ctx.k + out * 0, None
        x = L.tensor([1.0, 2.0], requires_grad=True)
        SC.apply(x, 3.0).sum().backward()
        SC.apply(x, k=2.0).sum().backward()
        return [x.grad, seen[0]]
    same(f)


def test_saved_tensor_version_check():
    def f(L):
        class S(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return g
        x = L.ones(2, requires_grad=True)
        b = x * 1
        o = S.apply(b)
        with L.no_grad():
            b.add_(1)
        return [err(lambda: o.sum().backward()).split(":")[1]]
    same(f)


def test_returning_an_input_and_exceptions():
    def f(L):
        class Id(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 5

        class Boom(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 1

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom")
        x = L.tensor([2.0], requires_grad=True)
        o = Id.apply(x)
        out = [o is x, o.grad_fn.name()]
        o.backward()
        out.append(x.grad)
        try:
            Boom.apply(x).backward()
        except ValueError as e:
            out.append(str(e))
        return out
    same(f)


def test_missing_backward_and_no_grad_apply():
    def f(L):
        class NoBwd(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2
        x = L.ones(2, requires_grad=True)
        out = [err(lambda: NoBwd.apply(x).sum().backward())]
        with L.no_grad():
            y = NoBwd.apply(x)
        out += [y.requires_grad, y.grad_fn is None]
        return out
    got, want = f(mt), f(torch)
    assert got[1:] == want[1:] and "You must implement either the backward or vjp" in got[0]
