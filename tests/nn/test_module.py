"""nn.Module bookkeeping, differential against live PyTorch (same code run on both libraries)."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import mindtorch_v2 as mt
from mindtorch_v2 import nn

torch = pytest.importorskip("torch")


def both(fn):
    """fn(lib) run on mindtorch_v2 and on torch."""
    return fn(mt), fn(torch)


def raises_same(fn):
    """fn(lib) raises the same exception type and message in both libraries."""
    out = []
    for lib in (mt, torch):
        with pytest.raises(Exception) as ei:
            fn(lib)
        out.append(ei.value)
    assert type(out[0]).__name__ == type(out[1]).__name__, out
    assert str(out[0]) == str(out[1])


def build(lib):
    class Block(lib.nn.Module):
        def __init__(self, n_in=3):
            super().__init__()
            self.fc = lib.nn.Linear(n_in, 4)
            self.register_buffer("running", lib.zeros(4))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.scale = lib.nn.Parameter(lib.ones(()))

        def forward(self, x):
            return self.fc(x) * self.scale

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.b = Block(4)
            self.seq = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Flatten())
            self.tied = self.a  # shared submodule
            self.head = lib.nn.Linear(4, 2, bias=False)
            self.head2 = self.head
            self.empty = None

        def forward(self, x):
            return self.head(self.seq(self.b(self.a(x))))

    lib.manual_seed(0)
    return Net()


def test_names_and_iteration():
    m, t = both(build)
    for f in (lambda n: [k for k, _ in n.named_parameters()],
              lambda n: [k for k, _ in n.named_parameters(prefix="p", remove_duplicate=False)],
              lambda n: [k for k, _ in n.named_parameters(recurse=False)],
              lambda n: [k for k, _ in n.named_buffers()],
              lambda n: [k for k, _ in n.named_buffers(remove_duplicate=False)],
              lambda n: [k for k, _ in n.named_children()],
              lambda n: [k for k, _ in n.named_modules()],
              lambda n: [k for k, _ in n.named_modules(prefix="root", remove_duplicate=False)],
              lambda n: len(list(n.parameters())), lambda n: len(list(n.buffers())),
              lambda n: len(list(n.children())), lambda n: len(list(n.modules())),
              lambda n: list(n.state_dict().keys()), lambda n: list(n.state_dict(prefix="x.").keys()),
              lambda n: dict(n.state_dict()._metadata), repr,
              lambda n: [d for d in dir(n) if not d.startswith("__") and d != "_maybe_warn_non_full_backward_hook"]):
        assert f(m) == f(t)
    for (km, vm), (kt, vt) in zip(m.state_dict().items(), t.state_dict().items()):
        assert km == kt and vm.tolist() == vt.tolist() and vm.requires_grad == vt.requires_grad
    assert all(type(v) is mt.Tensor for v in m.state_dict().values())
    assert isinstance(m.state_dict(keep_vars=True)["a.scale"], nn.Parameter)


def test_setattr_getattr_delattr_errors():
    def reassign_param(lib):
        m = lib.nn.Linear(2, 2)
        m.weight = lib.ones(2, 2)

    def reassign_module(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2))
        setattr(m, "0", 3)

    def assign_before_init(lib):
        class M(lib.nn.Module):
            def __init__(self):
                self.p = lib.nn.Parameter(lib.ones(1))
        M()

    def module_before_init(lib):
        class M(lib.nn.Module):
            def __init__(self):
                self.p = lib.nn.Linear(1, 1)
        M()

    def missing(lib):
        return lib.nn.Linear(2, 2).nope

    def bad_buffer(lib):
        m = lib.nn.Module()
        m.register_buffer("b", lib.ones(1))
        m.b = 3

    for fn in (reassign_param, reassign_module, assign_before_init, module_before_init, missing, bad_buffer):
        raises_same(fn)

    for args in ((".a", None), ("", None), ("x", 3)):
        raises_same(lambda lib: lib.nn.Module().register_parameter(*args))
        raises_same(lambda lib: lib.nn.Module().register_buffer(*args))
    raises_same(lambda lib: lib.nn.Module().add_module("a.b", None))
    raises_same(lambda lib: lib.nn.Module().add_module("", None))
    raises_same(lambda lib: lib.nn.Module().add_module("x", 3))
    raises_same(lambda lib: lib.nn.Linear(1, 1).register_buffer("weight", None))
    raises_same(lambda lib: lib.nn.Linear(1, 1).register_parameter("training", None))
    raises_same(lambda lib: lib.nn.Module().register_parameter(1, None))

    def nonleaf(lib):
        p = lib.nn.Parameter(lib.ones(2))
        lib.nn.Module().register_parameter("w", p * 2 if False else lib.nn.Parameter(lib.ones(2)).mul(2))
    raises_same(nonleaf)
    raises_same(lambda lib: lib.nn.Module()(1))
    raises_same(lambda lib: lib.nn.Module(3))
    raises_same(lambda lib: lib.nn.Module(x=3))

    def roundtrip(lib):
        m = lib.nn.Module()
        m.p = lib.nn.Parameter(lib.ones(1))
        m.p = None  # a registered parameter may become None
        r = ["p" in m._parameters, m.p]
        m.b = lib.nn.Buffer(lib.ones(1), persistent=False)
        r += [list(m._buffers), sorted(m._non_persistent_buffers_set), list(m.state_dict())]
        m.b = lib.zeros(1)  # re-assigning a tensor keeps it a (non-persistent) buffer
        r += [list(m._buffers), sorted(m._non_persistent_buffers_set)]
        m.c = lib.nn.Linear(1, 1)
        m.c = lib.nn.Parameter(lib.ones(1))  # moves from _modules to _parameters
        r += [list(m._modules), list(m._parameters)]
        del m.c
        del m.b
        m.plain = 5
        del m.plain
        r += [list(m._parameters), list(m._buffers), sorted(m._non_persistent_buffers_set), hasattr(m, "plain")]
        return r
    a, b = both(roundtrip)
    assert a == b


def test_get_submodule_parameter_buffer():
    m, t = both(build)
    assert m.get_submodule("a.fc") is m.a.fc
    assert m.get_submodule("") is m
    assert m.get_parameter("a.fc.weight") is m.a.fc.weight
    assert m.get_buffer("b.running") is m.b.running
    for target in ("a.nope", "a.scale.x", "a.fc.weight.x"):
        raises_same(lambda lib: build(lib).get_submodule(target))
    for target in ("a.running", "a.nope", "x.y"):
        raises_same(lambda lib: build(lib).get_parameter(target))
    for target in ("a.scale", "a.nope"):
        raises_same(lambda lib: build(lib).get_buffer(target))

    def setsub(lib):
        n = build(lib)
        n.set_submodule("a.fc", lib.nn.Identity())
        return repr(n.a)
    a, b = both(setsub)
    assert a == b
    raises_same(lambda lib: build(lib).set_submodule("a.nope", lib.nn.Identity(), strict=True))
    raises_same(lambda lib: build(lib).set_submodule("a.scale", lib.nn.Identity()))


def test_load_state_dict():
    m, t = both(build)
    sd_m = OrderedDict((k, mt.full(v.shape, 0.5)) for k, v in m.state_dict().items())
    res = m.load_state_dict(sd_m)
    assert repr(res) == "<All keys matched successfully>"
    assert all(v.tolist() == mt.full(v.shape, 0.5).tolist() for v in m.state_dict().values())

    def partial(lib):
        n = build(lib)
        sd = n.state_dict()
        del sd["a.fc.bias"]
        sd["extra.w"] = lib.ones(1)
        sd["a.bogus"] = lib.ones(1)
        return n.load_state_dict(sd, strict=False), n
    (rm, _), (rt, _) = both(partial)
    assert repr(rm) == repr(rt) and rm.missing_keys == rt.missing_keys == ["a.fc.bias"]

    def strict(lib):
        n = build(lib)
        sd = n.state_dict()
        del sd["a.fc.bias"]
        sd["extra.w"] = lib.ones(1)
        sd["a.bogus"] = lib.ones(1)
        sd["b.fc.weight"] = lib.ones(5, 5)
        sd["b.fc.bias"] = 3
        n.load_state_dict(sd)
    raises_same(strict)
    raises_same(lambda lib: build(lib).load_state_dict([1]))

    def scalar_from_1elem(lib):
        n = lib.nn.Module()
        n.s = lib.nn.Parameter(lib.zeros(()))
        n.load_state_dict({"s": lib.full((1,), 2.0)})
        return n.s.item()
    assert both(scalar_from_1elem) == (2.0, 2.0)

    def assign(lib):
        n = lib.nn.Linear(2, 2)
        w = lib.ones(2, 2)
        n.load_state_dict({"weight": w, "bias": lib.zeros(2)}, assign=True)
        return type(n.weight).__name__, n.weight.requires_grad, n.weight.data_ptr() == w.data_ptr()
    assert both(assign)[0] == both(assign)[1]

    # load into a model whose parameters are shared: the Parameter objects stay the same
    p_before = m.a.fc.weight
    m.load_state_dict(m.state_dict())
    assert m.a.fc.weight is p_before


def test_extra_state_and_state_dict_hooks():
    def run(lib):
        class E(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(1))
                self.st = {"k": 1}

            def get_extra_state(self):
                return self.st

            def set_extra_state(self, state):
                self.st = dict(state, loaded=True)

        e = E()
        seen = []
        h = e._register_state_dict_hook(lambda mod, sd, prefix, meta: seen.append(("post", prefix)))
        e.register_state_dict_pre_hook(lambda mod, prefix, kv: seen.append(("pre", prefix)))
        e.register_load_state_dict_post_hook(lambda mod, keys: seen.append(("lpost", list(keys.missing_keys))))
        e.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: seen.append(("lpre", prefix)))
        sd = e.state_dict()
        keys = list(sd)
        h.remove()
        e.load_state_dict(sd)
        r = e.load_state_dict({"w": lib.ones(1)}, strict=False)
        return keys, seen, e.st, r.missing_keys
    assert both(run)[0] == both(run)[1]


def test_forward_hooks():
    def run(lib):
        log = []
        m = lib.nn.Linear(2, 2)
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
        m.register_forward_pre_hook(lambda mod, args, kw: log.append(("prekw", sorted(kw))) or None,
                                    with_kwargs=True, prepend=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd", tuple(out.shape))))
        m.register_forward_hook(lambda mod, args, kw, out: out + 1, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
        out = m(lib.ones(3, 2))
        h1.remove()
        out2 = m(lib.ones(3, 2))
        return log, (out - m.bias).tolist(), (out2 - m.bias).tolist()
    a, b = both(run)
    assert a == b

    def always(lib):
        log = []
        m = lib.nn.Module()
        m.forward = lambda x: 1 / 0  # instance-level forward override
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("never"))
        g = lib.nn.modules.module.register_module_forward_hook(lambda mod, args, out: log.append("g"),
                                                                always_call=True)
        try:
            m(1)
        except ZeroDivisionError:
            log.append("raised")
        g.remove()
        return log
    assert both(always)[0] == both(always)[1]

    def bad_pre(lib):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        m(1)
    raises_same(bad_pre)

    def glob(lib):
        log = []
        mod = lib.nn.modules.module
        h1 = mod.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__)))
        h2 = mod.register_module_forward_hook(lambda m, a, o: log.append(("gpost", type(m).__name__)))
        lib.nn.Sequential(lib.nn.Identity())(lib.ones(1))
        h1.remove()
        h2.remove()
        lib.nn.Identity()(1)
        return log
    assert both(glob)[0] == both(glob)[1]


def test_registration_hooks():
    def run(lib):
        log = []
        mod = lib.nn.modules.module
        hs = [mod.register_module_parameter_registration_hook(lambda m, n, v: log.append(("p", n))),
              mod.register_module_buffer_registration_hook(lambda m, n, v: log.append(("b", n))),
              mod.register_module_module_registration_hook(lambda m, n, v: log.append(("m", n)))]
        lib.nn.Sequential(lib.nn.Linear(1, 1)).register_buffer("z", None)
        for h in hs:
            h.remove()
        lib.nn.Linear(1, 1)
        return log
    assert both(run)[0] == both(run)[1]


def test_train_eval_apply_requires_grad_zero_grad():
    def run(lib):
        n = build(lib)
        r = [n.training, n.eval().training, n.a.fc.training, n.train().seq[0].training]
        seen = []
        n.apply(lambda mod: seen.append(type(mod).__name__))
        n.requires_grad_(False)
        r += [seen, [p.requires_grad for p in n.parameters()]]
        n.requires_grad_()
        n(lib.ones(2, 3)).sum().backward()
        r.append([p.grad is not None for p in n.parameters()])
        n.zero_grad(set_to_none=False)
        r.append([p.grad.abs().sum().item() for p in n.parameters()])
        n.zero_grad()
        r.append([p.grad for p in n.parameters()])
        return r
    assert both(run)[0] == both(run)[1]
    raises_same(lambda lib: lib.nn.Linear(1, 1).train("yes"))


def test_to_dtype_device_and_conversions():
    def run(lib):
        n = build(lib)
        w = n.a.fc.weight
        r = []
        for conv in (lambda x: x.double(), lambda x: x.half(), lambda x: x.bfloat16(), lambda x: x.float(),
                     lambda x: x.to(lib.float64), lambda x: x.to("cpu"), lambda x: x.to("cpu", lib.float32),
                     lambda x: x.to(lib.zeros(1, dtype=lib.float16)), lambda x: x.to(dtype=lib.float32),
                     lambda x: x.cpu(), lambda x: x.type(lib.float64)):
            assert conv(n) is n
            r.append([str(v.dtype) for v in n.state_dict().values()])
        n.register_buffer("steps", lib.zeros(2, dtype=lib.int64))
        n.to(lib.float16)
        r.append(str(n.steps.dtype))
        r.append(n.a.fc.weight is w)  # the Parameter object survives conversions
        return r
    a, b = both(run)
    assert a == b
    raises_same(lambda lib: lib.nn.Linear(1, 1).to(lib.int32))

    def grads(lib):
        n = lib.nn.Linear(2, 2)
        n(lib.ones(1, 2)).sum().backward()
        n.double()
        return str(n.weight.grad.dtype), n.weight.grad.tolist()
    assert both(grads)[0] == both(grads)[1]

    def meta(lib):
        n = lib.nn.Linear(2, 3, device="meta")
        r = [str(n.weight.device)]
        n.to_empty(device="cpu")
        r += [str(n.weight.device), tuple(n.weight.shape), type(n.weight).__name__]
        return r
    assert both(meta)[0] == both(meta)[1]
    raises_same(lambda lib: lib.nn.Linear(2, 3, device="meta").to("cpu"))


def test_parameter_buffer_types():
    p = nn.Parameter(mt.ones(2))
    tp = torch.nn.Parameter(torch.ones(2))
    assert repr(p) == repr(tp)
    assert repr(nn.Parameter(mt.ones(2), requires_grad=False)) == repr(torch.nn.Parameter(torch.ones(2), False))
    assert isinstance(p, mt.Tensor) and p.is_leaf and p.requires_grad
    assert type(p * 2) is mt.Tensor and type(p.detach()) is mt.Tensor and type(p.data) is mt.Tensor
    assert type(nn.Parameter()) is nn.Parameter and tuple(nn.Parameter().shape) == (0,)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == p.tolist()
    assert q.data_ptr() != p.data_ptr()
    fn, args = p.__reduce_ex__(2)[:2]
    r = fn(*args)
    assert type(r) is nn.Parameter and r.tolist() == [1.0, 1.0]
    b = nn.Buffer(mt.ones(2), persistent=False)
    assert isinstance(b, nn.Buffer) and b.persistent is False and type(b) is mt.Tensor
    u = nn.UninitializedParameter()
    assert repr(u) == "<UninitializedParameter>" and nn.parameter.is_lazy(u)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        u.shape
    u.materialize((2, 3), dtype=mt.float64)
    assert type(u) is nn.Parameter and tuple(u.shape) == (2, 3) and u.dtype is mt.float64


def test_deepcopy_module():
    m = build(mt)
    c = copy.deepcopy(m)
    assert c.a is c.tied and c.head is c.head2
    assert [k for k, _ in c.named_parameters()] == [k for k, _ in m.named_parameters()]
    for (k, v), (_, w) in zip(c.state_dict().items(), m.state_dict().items()):
        assert v.tolist() == w.tolist() and v.data_ptr() != w.data_ptr()
    assert isinstance(c.a.scale, nn.Parameter)


def test_lazy_linear():
    def run(lib):
        lib.manual_seed(3)
        m = lib.nn.LazyLinear(4)
        r = [repr(m), type(m).__name__, nn.parameter.is_lazy(m.weight) if lib is mt else
             torch.nn.parameter.is_lazy(m.weight)]
        y = m(lib.ones(2, 5))
        r += [type(m).__name__, repr(m), m.weight.tolist(), m.bias.tolist(), y.tolist()]
        return r
    a, b = both(run)
    assert a[:2] == b[:2] and a[2] and b[2]
    assert a[3:5] == b[3:5] and a[5] == b[5] and a[6] == b[6]
    np.testing.assert_allclose(a[7], b[7], rtol=1e-6)

    def load(lib):
        m = lib.nn.LazyLinear(2)
        m.load_state_dict({"weight": lib.ones(2, 3), "bias": lib.zeros(2)})
        return type(m.weight).__name__, tuple(m.weight.shape)
    assert both(load)[0] == both(load)[1]
