"""torch.fx against live PyTorch: the same module traced by both libraries prints the same graph and
generated code, and runs (GraphModule, Interpreter, Transformer, ShapeProp, replace_pattern) to the
same values."""
import copy
import io
import pickle

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402


def my_leaf(x, k):
    return x * k


mt.fx.wrap("my_leaf")
torch.fx.wrap("my_leaf")


def _weights(lib, *shape):
    n = int(np.prod(shape))
    return lib.tensor((np.arange(n) % 7 * 0.25 - 0.5).reshape(shape).tolist(), dtype=lib.float32)


def _module(lib):
    class Sub(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x).relu()

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = lib.nn.Parameter(_weights(lib, 3, 4))
            self.linear = lib.nn.Linear(4, 5)
            self.sub = Sub()
            self.seq = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Identity())
            self.register_buffer("scale", _weights(lib, 4))
            with lib.no_grad():
                for p in self.parameters():
                    p.copy_(_weights(lib, *p.shape))

        def forward(self, x, y=2):
            a = lib.topk(lib.sum(self.linear(x + self.linear.weight).relu(), dim=-1), 3)
            b = x.view(-1)[0] * y + self.param.sum()
            c = lib.relu(x) @ self.param.t()
            d = self.seq(self.sub(x)) * self.scale
            return a, b, -c, x.size(0), lib.cat([x, d], 1), x[:, 1:3, None], my_leaf(x, 3)

    return M()


def _fn(lib):
    def f(x, z):
        a, b = x
        return (lib.ones(3) + a, abs(b), b.shape, 2 - z, z // 2, z.transpose(0, 1).softmax(-1),
                lib.where(z > 0, z, lib.zeros_like(z)), z.float().mean(dim=0, keepdim=True))
    return f


def _same(x, y):
    if isinstance(x, (tuple, list)):
        assert len(x) == len(y)
        for a, b in zip(x, y):
            _same(a, b)
    elif isinstance(x, mt.Tensor):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6, atol=1e-6)
        assert str(x.dtype) == str(y.dtype)
    else:
        assert x == y


def _pair(fn):
    return fn(mt), fn(torch)


def test_module_graph_code_and_readable_match():
    gm, ref = mt.fx.symbolic_trace(_module(mt)), torch.fx.symbolic_trace(_module(torch))
    assert str(gm.graph) == str(ref.graph)
    assert gm.code == ref.code
    assert gm.print_readable(print_output=False) == ref.print_readable(print_output=False)
    assert type(gm).__name__ == type(ref).__name__ == "M"
    x, rx = _pair(lambda lib: _weights(lib, 5, 4))
    _same(gm(x), ref(rx))
    _same(gm(x), _module(mt)(x))


def test_function_operators_unpacking_constants():
    gm, ref = mt.fx.symbolic_trace(_fn(mt)), torch.fx.symbolic_trace(_fn(torch))
    assert gm.code == ref.code
    assert str(gm.graph) == str(ref.graph)
    (x, z), (rx, rz) = _pair(lambda lib: (_weights(lib, 2, 3), _weights(lib, 3, 3)))
    _same(gm(x, z), ref(rx, rz))


def test_real_tensor_operators_with_proxy():
    def f(lib):
        def g(a):
            t = lib.ones(2)
            return t + a, t - a, t * a, t / a, t == a, t < a, t[a > 0], t ** a, t % a, 2 - a, t.masked_fill(a > 0, 1)
        return g
    gm, ref = mt.fx.symbolic_trace(f(mt)), torch.fx.symbolic_trace(f(torch))
    assert gm.code == ref.code
    a, ra = _pair(lambda lib: lib.tensor([0.5, -2.0]))
    _same(gm(a), ref(ra))


def test_concrete_args_and_defaults():
    def f(x, flag, n=3):
        return x + n if flag else x - 1
    gm = mt.fx.symbolic_trace(f, concrete_args={"flag": True})
    ref = torch.fx.symbolic_trace(f, concrete_args={"flag": True})
    assert gm.code == ref.code
    assert str(gm.graph) == str(ref.graph)
    assert gm(mt.ones(2), True).tolist() == [4.0, 4.0]
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        gm(mt.ones(2), False)
    none_gm, none_ref = (lib.fx.symbolic_trace(lambda x, m=None: x if m is None else x + m,
                                               concrete_args={"m": None}) for lib in (mt, torch))
    assert none_gm.code == none_ref.code


@pytest.mark.parametrize("body", ["iter", "bool", "len"])
def test_trace_errors_match(body):
    def f(x):
        if body == "iter":
            for _ in x:
                pass
        elif body == "bool":
            if x.sum() > 0:
                return x
        return len(x)

    def err(lib):
        with pytest.raises(Exception) as info:
            lib.fx.symbolic_trace(f)
        return info.value
    e, r = err(mt), err(torch)
    assert type(e).__name__ == type(r).__name__ and str(e) == str(r)
    assert isinstance(e, (mt.fx.proxy.TraceError, RuntimeError))


def test_interpreter_and_shape_prop():
    from mindtorch_v2.fx.passes.shape_prop import ShapeProp
    from torch.fx.passes.shape_prop import ShapeProp as RefShapeProp
    gm, ref = mt.fx.symbolic_trace(_module(mt)), torch.fx.symbolic_trace(_module(torch))
    x, rx = _pair(lambda lib: _weights(lib, 5, 4))
    _same(mt.fx.Interpreter(gm).run(x), torch.fx.Interpreter(ref).run(rx))
    _same(ShapeProp(gm).propagate(x), RefShapeProp(ref).propagate(rx))
    for n, rn in zip(gm.graph.nodes, ref.graph.nodes):
        assert n.name == rn.name and n.meta["type"].__name__ == rn.meta["type"].__name__
        m, rm = n.meta.get("tensor_meta"), rn.meta.get("tensor_meta")
        assert (m is None) == (rm is None)
        if m is not None and hasattr(m, "shape"):
            assert (tuple(m.shape), str(m.dtype), m.requires_grad, tuple(m.stride), repr(m.memory_format)) == \
                (tuple(rm.shape), str(rm.dtype), rm.requires_grad, tuple(rm.stride), repr(rm.memory_format))
    assert "f32[3, 4]" in gm.print_readable(print_output=False)
    assert gm.print_readable(print_output=False) == ref.print_readable(print_output=False)


def test_interpreter_errors():
    gm, ref = (lib.fx.symbolic_trace(lambda x, y: x + y) for lib in (mt, torch))
    for g, lib in ((gm, mt), (ref, torch)):
        with pytest.raises(RuntimeError, match="Expected positional argument for parameter y, but one was not "
                                               "passed in!"):
            lib.fx.Interpreter(g).run(lib.ones(1))


def test_transformer_swaps_ops():
    def xformer(lib):
        class NegSigmSwap(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is lib.sigmoid:
                    return lib.neg(*args, **kwargs)
                return super().call_function(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                if target == "neg":
                    call_self, *args_tail = args
                    return call_self.sigmoid(*args_tail, **kwargs)
                return super().call_method(target, args, kwargs)
        return NegSigmSwap(lib.fx.symbolic_trace(lambda x: lib.sigmoid(x).neg())).transform()
    gm, ref = xformer(mt), xformer(torch)
    assert gm.code == ref.code
    x, rx = _pair(lambda lib: _weights(lib, 2, 3))
    _same(gm(x), ref(rx))


def test_replace_pattern():
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([w1, w2]).sum()
                m2 = lib.cat([w1, w2]).sum()
                return x + lib.max(m1) + lib.max(m2)

        def pattern(w1, w2):
            return lib.cat([w1, w2]).sum()

        def replacement(w1, w2):
            return lib.stack([w1, w2])
        gm = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(gm, pattern, replacement)
        return gm, matches
    (gm, matches), (ref, ref_matches) = build(mt), build(torch)
    assert gm.code == ref.code
    assert str(gm.graph) == str(ref.graph)
    assert [(m.anchor.name, sorted((k.name, v.name) for k, v in m.nodes_map.items())) for m in matches] == \
        [(m.anchor.name, sorted((k.name, v.name) for k, v in m.nodes_map.items())) for m in ref_matches]


def test_graph_editing():
    def edit(lib):
        gm = lib.fx.symbolic_trace(lambda x: lib.relu(x) + 1)
        g = gm.graph
        relu = next(n for n in g.nodes if n.op == "call_function" and n.target is lib.relu)
        with g.inserting_after(relu):
            neg = g.call_function(lib.neg, (relu,))
        relu.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)
        with g.inserting_before(relu):
            dead = g.call_method("sum", (next(iter(g.nodes)),))
        assert g.eliminate_dead_code()
        assert dead._erased if hasattr(dead, "_erased") else True
        g.lint()
        gm.recompile()
        erased = g.call_function(lib.abs, (neg,))
        g.erase_node(erased)
        with pytest.raises(RuntimeError) as e:
            g.erase_node(relu)
        gm.recompile()
        return gm, str(e.value)
    (gm, err), (ref, ref_err) = edit(mt), edit(torch)
    assert gm.code == ref.code and err == ref_err
    x, rx = _pair(lambda lib: _weights(lib, 4))
    _same(gm(x), ref(rx))


def test_lint_reports_bad_order():
    def bad(lib):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        y = g.call_function(lib.relu, (x,))
        g.output(y)
        x.prepend(y)  # y now comes before its input
        with pytest.raises(RuntimeError) as e:
            g.lint()
        return str(e.value)
    assert bad(mt) == bad(torch)


def test_copy_pickle_and_state_dict():
    gm = mt.fx.symbolic_trace(_module(mt))
    x = _weights(mt, 5, 4)
    expected = gm(x)
    for clone in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm)), copy.copy(gm)):
        assert clone.code == gm.code
        _same(clone(x), expected)
    buf = io.BytesIO()
    mt.save(gm.state_dict(), buf)
    fresh = mt.fx.symbolic_trace(_module(mt))
    with mt.no_grad():
        for p in fresh.parameters():
            p.zero_()
    buf.seek(0)
    fresh.load_state_dict(mt.load(buf))
    _same(fresh(x), expected)
    assert sorted(gm.state_dict()) == sorted(torch.fx.symbolic_trace(_module(torch)).state_dict())


def test_node_api_and_map_arg():
    g, rg = (lib.fx.symbolic_trace(lambda x: (x * 2, [x, x.relu()])).graph for lib in (mt, torch))
    for graph in (g, rg):
        out = graph.output_node()
        assert [n.name for n in out.all_input_nodes] == ["mul", "x", "relu"]
    assert mt.fx.map_arg((g.output_node().args[0], 3), lambda n: n.name) == (("mul", ["x", "relu"]), 3)
    assert [n.format_node() for n in g.nodes] == [n.format_node() for n in rg.nodes]
    with pytest.raises(TypeError, match="does not support mutation"):
        g.output_node().args[0][1].append(1)


def test_leaf_module_override_and_proxy_getattr():
    def trace(lib):
        class T(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return False
        m = _module(lib)
        return lib.fx.GraphModule(m, T().trace(m))
    gm, ref = trace(mt), trace(torch)
    # PyTorch's F.linear is a builtin of torch._C._nn; ours is a Python function of torch.nn.functional
    assert gm.code == ref.code.replace("torch._C._nn.", "torch.nn.functional.")
    x, rx = _pair(lambda lib: _weights(lib, 5, 4))
    _same(gm(x), ref(rx))
