"""torch.library for Python operators against live PyTorch: custom_op (decorator and direct forms,
inferred and given schemas), torch.ops namespaces and overloads, argument errors, register_fake and the
meta device, register_autograd (grad_fn, gradients, keyword-only inputs, tensor lists), register_kernel,
mutating ops, Library.define/impl by dispatch key and device type, and opcheck's eager checks. Each
scenario runs on both libraries and must give the same values, types and error texts."""
import itertools
import re

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

_ids = itertools.count()


def outcome(fn):
    try:
        return describe(fn())
    except Exception as e:  # noqa: BLE001  (the error is the result compared)
        text = re.sub(r"(registered at|file) \S+", r"\1 <where>", str(e))
        return ("raised", type(e).__name__, text.replace("mindtorch_v2._tensor.", "torch."))


def rounded(v):
    """Values to 6 significant digits: the ops inside the operators may differ from PyTorch's in the last bit."""
    return [rounded(x) for x in v] if isinstance(v, list) else float(f"{v:.6g}") if isinstance(v, float) else v


def describe(r):
    if isinstance(r, (mt.Tensor, torch.Tensor)):
        return ("tensor", str(r.dtype), tuple(r.shape), str(r.device),
                rounded(r.tolist()) if r.device.type != "meta" else None, r.requires_grad)
    if isinstance(r, (tuple, list)):
        return type(r).__name__, [describe(x) for x in r]
    return r


def cut(fn, n):
    """fn, its error text cut to n characters (the rest names dispatch keys PyTorch has and we don't)."""
    def run():
        try:
            return fn()
        except Exception as e:  # noqa: BLE001
            raise type(e)(str(e)[:n]) from None
    return run


def both(scenario):
    """scenario(lib, ns) -> list of thunks; their outcomes on mindtorch_v2 and on PyTorch."""
    ns = f"mtlibtest{next(_ids)}"
    ours = [outcome(f) for f in scenario(mt, ns)]
    theirs = [outcome(f) for f in scenario(torch, ns)]
    return ours, theirs


def check(scenario):
    ours, theirs = both(scenario)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"step {k}: ours {a} != PyTorch {b}"
    assert len(ours) == len(theirs)


def test_custom_op_decorator_and_ops_namespace():
    def scenario(lib, ns):
        @lib.library.custom_op(f"{ns}::mysin", mutates_args=())
        def mysin(x: lib.Tensor) -> lib.Tensor:
            return x.sin()
        x = lib.tensor([0.5, 1.0, 2.0])
        packet = getattr(getattr(lib.ops, ns), "mysin")
        return [lambda: repr(mysin), lambda: mysin._schema, lambda: mysin(x), lambda: packet(x),
                lambda: packet.default(x), lambda: str(packet.default._schema), lambda: repr(packet),
                lambda: repr(packet.default), lambda: str(packet.default), lambda: packet.overloads(),
                lambda: packet.default.name(), lambda: (packet.default.__name__, packet.__name__),
                lambda: (packet.default.namespace, packet.default._opname, packet.default._overloadname),
                lambda: type(packet).__name__, lambda: type(packet.default).__name__,
                lambda: getattr(lib.ops, ns).nope, lambda: packet.nope]
    check(scenario)


def test_argument_errors():
    def scenario(lib, ns):
        def two(x: lib.Tensor, n: int, f: float = 2.0, *, k: float = 1.0) -> lib.Tensor:
            return x * n * f * k
        op = lib.library.custom_op(f"{ns}::two", two, mutates_args=())
        x = lib.ones(2)
        return [lambda: op._schema, lambda: op(x, 3), lambda: op(x, 3, 0.5, k=2.0), lambda: op(x=x, n=2),
                lambda: op(), lambda: op(x), lambda: op(x, 1, 2.0, 3.0), lambda: op(3, 1), lambda: op(x, 1, y=2),
                lambda: op(x, 1.5)]
    check(scenario)


def test_infer_schema():
    def scenario(lib, ns):
        from typing import Optional, Sequence
        T = lib.Tensor

        def f1(x: T, n: int, f: float = 2.0, *, s: str = "a", b: bool = True) -> list[T]:
            pass

        def f2(x: Optional[T], xs: Sequence[T], ns: list[int], d: lib.dtype = lib.float32) -> tuple[T, T]:
            pass

        def f3(x: T, y: T) -> None:
            pass

        def f4(x):
            pass

        def f5(x: T, y: tuple[int, int]) -> T:
            pass

        def f6(x: T) -> tuple[T]:
            pass
        ib = lib.library.infer_schema
        return [lambda: ib(f1, mutates_args=()), lambda: ib(f2, mutates_args=()), lambda: ib(f3, mutates_args=("y",)),
                lambda: ib(f3, mutates_args="unknown"), lambda: ib(f3, op_name="foo", mutates_args=()),
                lambda: ib(f4, mutates_args=()), lambda: ib(f3, mutates_args=("z",)), lambda: ib(f6, mutates_args=()),
                lambda: ib(f3, mutates_args="some"), cut(lambda: ib(f5, mutates_args=()), 200)]
    check(scenario)


def test_custom_op_definition_errors():
    def scenario(lib, ns):
        def ident(x: lib.Tensor) -> lib.Tensor:
            return x.clone()

        def retx(x: lib.Tensor) -> lib.Tensor:
            return x
        co = lib.library.custom_op
        return [lambda: co("noname", ident, mutates_args=()), lambda: co(f"{ns}::a::b", ident, mutates_args=()),
                lambda: co(f"{ns}::b", ident, mutates_args=("x",), schema="(Tensor x) -> Tensor"),
                lambda: co(f"{ns}::c", ident, mutates_args=("y",)),
                lambda: co(f"{ns}::d", ident),
                lambda: co(f"{ns}::retx", retx, mutates_args=())(lib.ones(2)).startswith("x"),
                lambda: co(f"{ns}::view", lambda x: x[1:], mutates_args=(),
                           schema="(Tensor x) -> Tensor")(lib.ones(3))]
    ours, theirs = both(scenario)
    assert ours[:5] == theirs[:5]
    for a, b in zip(ours[5:], theirs[5:]):  # the implementation's module differs in the text
        assert a[:2] == b[:2] and a[2].split("): ")[1] == b[2].split("): ")[1]


def test_meta_and_fake():
    def scenario(lib, ns):
        @lib.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            return lib.cat([x, y])
        m = lib.empty(2, 3, device="meta")
        out = []
        out.append(lambda: f(m, m))

        def reg():
            @f.register_fake
            def _(x, y):
                return x.new_empty(x.shape[0] + y.shape[0], x.shape[1])
        out += [reg, lambda: f(m, m), lambda: f(lib.ones(1, 2), lib.zeros(1, 2))]
        lib.library.define(f"{ns}::g", "(Tensor x) -> Tensor")
        lib.library.impl(f"{ns}::g", "cpu", lambda x: x + 1)
        g = getattr(lib.ops, ns).g
        out += [lambda: g(m), lambda: lib.library.register_fake(f"{ns}::g", lambda x: x.new_empty(x.shape)) and None,
                lambda: g(m), lambda: g(lib.ones(2)), lambda: lib.library.register_fake(f"{ns}::zzz", lambda x: x)]
        return out
    check(scenario)


def test_autograd():
    def scenario(lib, ns):
        @lib.library.custom_op(f"{ns}::mysin", mutates_args=())
        def mysin(x: lib.Tensor) -> lib.Tensor:
            return x.sin()
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        seen = []

        def setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            (x,) = ctx.saved_tensors
            return g * x.cos()

        def grad():
            y = mysin(x)
            return lib.autograd.grad(y.sum(), x)[0], type(y.grad_fn).__name__, y.grad_fn.name(), seen

        def nograd():
            with lib.no_grad():
                return mysin(x)
        return [lambda: mysin(x).grad_fn.name(), lambda: mysin(x).sum().backward(),
                lambda: mysin.register_autograd(backward, setup_context=setup), grad, nograd,
                lambda: mysin(x.detach()).grad_fn]
    check(scenario)


def test_autograd_keyword_only_multiple_outputs_and_lists():
    def scenario(lib, ns):
        def two(x: lib.Tensor, *, k: float) -> tuple[lib.Tensor, lib.Tensor]:
            return x * k, x + k
        op = lib.library.custom_op(f"{ns}::two", two, mutates_args=())

        def setup(ctx, inputs, keyword_only_inputs, output):
            ctx.k = keyword_only_inputs["k"]
        op.register_autograd(lambda ctx, a, b: a * ctx.k + b, setup_context=setup)
        x = lib.tensor([1.0, 2.0], requires_grad=True)

        def run():
            a, b = op(x, k=3.0)
            return lib.autograd.grad((a * a).sum() + b.sum(), x)

        @lib.library.custom_op(f"{ns}::wsum", mutates_args=())
        def wsum(xs: list[lib.Tensor], w: list[float]) -> lib.Tensor:
            return sum(t * c for t, c in zip(xs, w))

        def setup2(ctx, inputs, output):
            ctx.w = inputs[1]
        wsum.register_autograd(lambda ctx, g: ([g * c for c in ctx.w], None), setup_context=setup2)
        a, b = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0], requires_grad=True)
        return [run, lambda: lib.autograd.grad(wsum([a, b], [2.0, 5.0]).sum(), [a, b]),
                lambda: wsum([a.detach(), b.detach()], [1.0, 1.0])]
    check(scenario)


def test_register_autograd_by_name_and_errors():
    def scenario(lib, ns):
        def cat2(a, b):
            return lib.cat([a, b])
        lib.library.custom_op(f"{ns}::cat2", cat2, mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor")
        lib.library.register_autograd(f"{ns}::cat2", lambda ctx, g: (g[:1], g[1:]))
        a, b = lib.ones(1, requires_grad=True), lib.ones(2, requires_grad=True)

        def mut(x: lib.Tensor) -> None:
            x.add_(1)
        mop = lib.library.custom_op(f"{ns}::mut", mut, mutates_args=("x",))
        lib.library.define(f"{ns}::h", "(Tensor x) -> Tensor")
        lib.library.impl(f"{ns}::h", "default", lambda x: x * 2)
        lib.library.register_autograd(f"{ns}::h", lambda ctx, g: g * 10)
        c = lib.ones(2, requires_grad=True)
        return [lambda: lib.autograd.grad(getattr(lib.ops, ns).cat2(a, b).sum(), [a, b]),
                lambda: lib.library.register_autograd(mop, lambda ctx, g: g),
                lambda: lib.library.register_autograd(f"{ns}::nonexist", lambda ctx, g: g),
                lambda: lib.autograd.grad(getattr(lib.ops, ns).h(c).sum(), c)]
    check(scenario)


def test_mutation_kernels_and_device_types():
    def scenario(lib, ns):
        def mut(x: lib.Tensor) -> None:
            x.add_(1)
        op = lib.library.custom_op(f"{ns}::mut", mut, mutates_args=("x",))
        t = lib.ones(2)

        def run():
            v = t._version
            r = op(t)
            return r, t, t._version - v

        def cpuonly(x: lib.Tensor) -> lib.Tensor:
            return x * 2
        op5 = lib.library.custom_op(f"{ns}::cpuonly", cpuonly, mutates_args=(), device_types="cpu")
        xg = lib.ones(2, requires_grad=True)

        def override():
            op5.register_kernel("cpu", lambda x: x * 3)
            return op5(lib.ones(2))

        def disabled():
            with op5.set_kernel_enabled("cpu", enabled=False):
                return op5(lib.ones(2))

        def bar(device: lib.device) -> lib.Tensor:
            return lib.ones(3)
        return [run, lambda: str(op._opoverload._schema), lambda: op(lib.empty(2, device="meta")),
                lambda: op5(lib.ones(2)), lambda: op5(lib.ones(2, device="meta")), lambda: op5(xg),
                lambda: op5(xg).sum().backward(), override, disabled,
                lambda: lib.library.custom_op(f"{ns}::bar", bar, mutates_args=(), device_types="cpu")("cpu"),
                lambda: lib.library.custom_op(f"{ns}::bar2", lambda: lib.ones(1), mutates_args=(),
                                              device_types="cpu", schema="() -> Tensor")]
    check(scenario)


def test_library_define_impl():
    def scenario(lib, ns):
        L = lib.library.Library
        lb = L(ns, "DEF")
        x = lib.ones(2, requires_grad=True)
        ops = lambda: getattr(lib.ops, ns)  # noqa: E731
        out = [lambda: L(ns, "BAD"), lambda: repr(lb), lambda: lb.define("foo(Tensor x, float alpha=1.0) -> Tensor"),
               cut(lambda: lb.define("foo(Tensor x) -> Tensor"), 120), lambda: lb.define("foo.ov(Tensor x, int n) -> Tensor"),
               cut(lambda: ops().foo(lib.ones(2)), 380),
               lambda: lb.impl("foo", lambda x, alpha=1.0: x * alpha + 1, "CPU"),
               lambda: ops().foo(lib.ones(2), 2.0), lambda: ops().foo(x, 2.0).grad_fn.name(),
               lambda: ops().foo.overloads(),
               lambda: lb.impl("foo.ov", lambda x, n: x * n, "CompositeImplicitAutograd"),
               lambda: ops().foo.ov(x, 3), lambda: ops().foo(x, 3), lambda: ops().foo(x, n=3),
               lambda: ops().foo(lib.ones(2, device="meta")),
               lambda: lb.impl("foo", lambda x, alpha=1.0: lib.empty_like(x), "Meta"),
               lambda: ops().foo(lib.ones(2, device="meta")),
               cut(lambda: L(ns, "DEF"), 80), lambda: L("prim", "DEF"),
               lambda: lb.define("bad syntax"), lambda: lb.define("q(Tensor x, Foo y) -> Tensor"),
               lambda: lb.impl("foo", 3, "CPU"),
               lambda: lb.define("baz(Tensor(a!) x) -> ()"), lambda: str(ops().baz.default._schema),
               lambda: [(a.name, str(a.type), a.default_value, a.kwarg_only) for a in ops().foo.default._schema.arguments]]
        return out
    check(scenario)


def test_function_forms_and_destroy():
    def scenario(lib, ns):
        lib.library.define(f"{ns}::bar", "(Tensor x) -> Tensor")
        bar = lambda: getattr(lib.ops, ns).bar  # noqa: E731

        @lib.library.impl(f"{ns}::bar", "cpu")
        def _(x):
            return x + 10
        lb = lib.library.Library(ns, "FRAGMENT")
        return [lambda: bar()(lib.ones(2)), lambda: lib.library.define(f"{ns}::bar", "(Tensor x) -> Tensor"),
                lambda: lib.library.define(f"{ns}::baz", "Tensor x -> Tensor"),
                lambda: lib.library.define(3, "(Tensor x) -> Tensor"),
                lambda: lib.library.impl(f"{ns}::bar", ["cpu", "cuda"], lambda x: x - 2),
                lambda: bar()(lib.ones(2)),
                lambda: lb.define("tmp(Tensor x) -> Tensor"), lambda: lb.impl("tmp", lambda x: x * 5),
                lambda: getattr(lib.ops, ns).tmp(lib.ones(1)), lambda: lb._destroy(),
                lambda: hasattr(getattr(lib.ops, ns), "tmp"), lambda: lb.define("tmp2(Tensor x) -> Tensor")]
    check(scenario)


def test_opcheck():
    def scenario(lib, ns):
        @lib.library.custom_op(f"{ns}::mysin", mutates_args=())
        def mysin(x: lib.Tensor) -> lib.Tensor:
            return x.sin()
        mysin.register_fake(lambda x: lib.empty_like(x))
        mysin.register_autograd(lambda ctx, g: g * ctx.x.cos(), setup_context=lambda ctx, inputs, output:
                                setattr(ctx, "x", inputs[0]))

        @lib.library.custom_op(f"{ns}::sneaky", mutates_args=())
        def sneaky(x: lib.Tensor) -> lib.Tensor:
            x.add_(1)
            return x.clone()
        sneaky.register_fake(lambda x: lib.empty_like(x))

        @lib.library.custom_op(f"{ns}::badfake", mutates_args=())
        def badfake(x: lib.Tensor) -> lib.Tensor:
            return x.sum(0)
        badfake.register_fake(lambda x: lib.empty_like(x))
        x = lib.randn(3, 2)
        tests = ("test_schema", "test_autograd_registration", "test_faketensor")
        oc = lib.library.opcheck
        return [lambda: oc(mysin, (x,), test_utils=tests),
                lambda: oc(mysin, (x.requires_grad_(),), test_utils=tests),
                lambda: type(oc(sneaky, (x.detach(),), test_utils="test_schema", raise_exception=False)
                             ["test_schema"]).__name__ != "str",
                lambda: oc(badfake, (x.detach(),), test_utils="test_faketensor", raise_exception=False)
                ["test_faketensor"] != "SUCCESS"]
    check(scenario)


def test_tag():
    assert sorted(t.name for t in mt.Tag) == sorted(torch.Tag.__members__)
