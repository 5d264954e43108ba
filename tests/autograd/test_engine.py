"""Engine semantics against live PyTorch: each case runs the same code on both libraries."""
import sys
import threading

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("L", [mt, torch], ids=["mt", "torch"])


def grads_of(fn):
    """fn(L) -> list of tensors/values; run on both libraries and compare."""
    got, want = fn(mt), fn(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None or isinstance(w, (bool, str, int, float)):
            assert g == w, (g, w)
        else:
            np.testing.assert_allclose(np.array(g.tolist(), dtype=float), np.array(w.detach().tolist(), dtype=float),
                                       rtol=1e-6, atol=1e-9)


def test_tensor_used_twice_by_one_op():
    def f(L):
        b = L.tensor([1.5, -2.0, 3.0], dtype=L.float64, requires_grad=True)
        (b * b).sum().backward()
        return [b.grad]
    grads_of(f)


def test_diamond():
    def f(L):
        x = L.tensor([0.5, 1.0, 2.0], dtype=L.float64, requires_grad=True)
        a = x.exp()
        left, right = a * 2, a.sin()
        (left * right).sum().backward()
        return [x.grad]
    grads_of(f)


def test_long_chain_no_recursion():
    x = mt.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100000):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]
    del y  # a 10^5-node graph freed without recursion


def test_retain_graph():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        msg = None
        try:
            y.backward()
        except RuntimeError as e:
            msg = str(e)
        return [x.grad, msg]
    grads_of(f)


def test_double_backward_of_cube():
    def f(L):
        x = L.tensor([2.0, -1.0], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad((x ** 3).sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x, create_graph=True)
        g3, = L.autograd.grad(g2.sum(), x)
        return [g, g2, g3]
    grads_of(f)


def test_version_error():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * y
        y.add_(1)
        try:
            z.sum().backward()
        except RuntimeError as e:
            return [str(e).split(":")[0]]
    grads_of(f)


def test_leaf_inplace_errors():
    def f(L):
        out = []
        x = L.tensor([1.0, 2.0], requires_grad=True)
        for fn in (lambda: x.add_(1), lambda: x[:1].mul_(2)):
            try:
                fn()
            except RuntimeError as e:
                out.append(str(e))
        return out
    grads_of(f)


def test_no_grad_inside_graph():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        with L.no_grad():
            c = y * 10  # a constant for the graph
        z = (y * c).sum()
        z.backward()
        return [x.grad, c.requires_grad, c.grad_fn is None]
    grads_of(f)


def test_hook_on_tensor_used_twice_sees_the_sum_once():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        seen = []
        y.register_hook(lambda g: seen.append(g.clone()))
        (y * 3 + y.sin()).sum().backward()
        return [len(seen), seen[0], x.grad]
    grads_of(f)


def test_hook_replaces_gradient_and_remove():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        h = y.register_hook(lambda g: g * 10)
        y.sum().backward(retain_graph=True)
        first = x.grad.clone()
        h.remove()
        y.sum().backward()
        return [first, x.grad]
    grads_of(f)


def test_leaf_hooks_and_post_accumulate():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g + 1)
        seen = []
        x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        return [x.grad, len(seen), seen[0], seen[1]]
    grads_of(f)


def test_hook_errors():
    def f(L):
        out = []
        for fn in (lambda: L.ones(2).register_hook(lambda g: g),
                   lambda: (L.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: p)):
            try:
                fn()
            except RuntimeError as e:
                out.append(str(e))
        return out
    grads_of(f)


def test_hook_exception_propagates():
    for L in (mt, torch):
        x = L.ones(2, requires_grad=True)
        y = x * 2

        def boom(g):
            raise KeyError("from hook")
        y.register_hook(boom)
        with pytest.raises(KeyError):
            y.sum().backward()


def test_retain_grad_with_hooks_and_autograd_grad():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 3)
        y.sum().backward(retain_graph=True)
        first = y.grad.clone()
        L.autograd.grad(y.sum(), x)  # retain_grad hooks also run for autograd.grad
        return [first, y.grad, x.grad]
    grads_of(f)


def test_node_hooks():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        calls = []
        fn = y.grad_fn
        fn.register_prehook(lambda go: (go[0] * 5,))
        h = fn.register_hook(lambda gi, go: calls.append((len(gi), len(go))))
        y.sum().backward(retain_graph=True)
        h.remove()
        y.sum().backward()
        return [x.grad, calls]
    got_x, calls = f(mt)
    want_x, want_calls = f(torch)
    assert got_x.tolist() == want_x.tolist() and calls == want_calls


def test_grad_fn_objects():
    for L in (mt, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2 + 1
        fn = y.grad_fn
        assert fn.name() == "AddBackward0" and type(fn).__name__ == "AddBackward0"
        assert y.grad_fn is fn or y.grad_fn == fn
        (mul, nr), = [e for e in fn.next_functions if e[0] is not None]
        assert mul.name() == "MulBackward0" and nr == 0
        acc, _ = mul.next_functions[0]
        assert type(acc).__name__ == "AccumulateGrad"
        assert acc.name() == "torch::autograd::AccumulateGrad"
        assert acc.variable.tolist() == [1.0, 2.0]
        fn.metadata["k"] = 1
        assert y.grad_fn.metadata == {"k": 1}
        assert isinstance(fn, L.autograd.graph.Node)
        assert x.grad_fn is None


@LIBS
def test_accumulate_grad_checks_its_leaf(L):
    # a leaf view whose base is then written from it has moved into the graph interior
    b = L.ones(4)
    v = b.view(-1)
    v.requires_grad_()
    b.copy_(v * 2)
    with pytest.raises(RuntimeError, match="^leaf variable has been moved into the graph interior$"):
        b.sum().backward()
    # a leaf that stopped requiring grad gets none
    x = L.ones(2, requires_grad=True)
    y = (x * 2).sum()
    x.requires_grad_(False)
    y.backward()
    assert x.grad is None


@LIBS
def test_view_made_before_its_base_required_grad(L):
    # PyTorch: a view of a base that requires grad requires grad too, history or not; writing into
    # it in place is then writing a view of a leaf (the fuzzer found this as a leaked cycle)
    x = L.ones(3)
    v = x[:2]
    x.requires_grad_()
    assert v.requires_grad and v.grad_fn is None and v.is_leaf
    (v * 2).sum().backward()
    assert x.grad is None
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation.$"):
        v.copy_(x[1:])


@LIBS
def test_leaf_written_after_it_stopped_requiring_grad(L):
    x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
    r = L.logsumexp(x, 0, keepdim=True)
    x.requires_grad_(False)
    x.copy_(r.expand(2))
    assert x.grad_fn.name() == "torch::autograd::CopyBackwards" and not x.is_leaf
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.backward()
    x = L.ones(2, requires_grad=True)
    y = (x * 3).sum()
    x.requires_grad_(False)
    x.mul_(2)
    y.backward()
    assert x.grad is None


def test_leaf_view_nobody_holds_gets_no_gradient():
    # AccumulateGrad holds a leaf view weakly (a strong hold cycles through the base: PyTorch
    # leaks there); once the view is gone its gradient has nowhere to go
    b = mt.zeros(4)
    v = b[:2]
    v.requires_grad_()
    y = v.sum()
    acc = y.grad_fn.next_functions[0][0]
    assert acc.variable.tolist() == [0.0, 0.0]
    del v
    assert acc.variable is None
    y.backward()
    held = b[:2]
    held.requires_grad_()
    (held * 3).sum().backward()
    assert held.grad.tolist() == [3.0, 3.0]


def test_autograd_grad_signature():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0], requires_grad=True)
        out = []
        try:
            L.autograd.grad((x * 2).sum(), [x, w])
        except RuntimeError as e:
            out.append(str(e))
        gx, gw = L.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
        out += [gx, gw]
        gx, gw = L.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
        out += [gx, gw]
        try:
            L.autograd.grad((x * 2).sum(), [x], allow_unused=False, materialize_grads=True)
        except ValueError as e:
            out.append(str(e))
        return out
    grads_of(f)
    with pytest.raises(NotImplementedError):
        x = mt.ones(2, requires_grad=True)
        mt.autograd.grad((x * 2,), x, mt.eye(2), is_grads_batched=True)


def test_backward_inputs():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        y.sum().backward(inputs=[w], retain_graph=True)
        gx = x.grad
        L.autograd.backward([y.sum()], inputs=w)
        z = x * 3
        L.autograd.backward(z, grad_tensors=L.ones(2), inputs=[z])
        return [gx, w.grad, z.grad]
    grads_of(f)


def test_non_scalar_backward_error():
    def f(L):
        x = L.ones(2, requires_grad=True)
        try:
            (x * 2).backward()
        except RuntimeError as e:
            return [str(e)]
    grads_of(f)


def _implicit_root_grad(L, make):
    """What backward() without a gradient gives the root's hook (dtype, shape, device, values,
    contiguity, version), or the error text."""
    root = make(L)
    seen = []
    if root.requires_grad:
        root.register_hook(lambda g: seen.append((str(g.dtype), tuple(g.shape), str(g.device), g.is_contiguous(),
                                                  g._version, g.tolist() if g.device.type == "cpu" else None)))
    try:
        root.backward()
    except RuntimeError as e:
        return str(e)
    return seen


@pytest.mark.parametrize("case", ["f32", "f64", "f16", "bf16", "one_by_one", "meta", "no_grad_vector",
                                  "no_grad_scalar", "vector", "complex"])
def test_implicit_root_grad(case):
    make = {"f32": lambda L: (L.ones(3, requires_grad=True) * 2).sum(),
            "f64": lambda L: L.tensor(2.0, dtype=L.float64, requires_grad=True) * 3,
            "f16": lambda L: (L.ones(2, dtype=L.float16, requires_grad=True) * 2).sum(),
            "bf16": lambda L: (L.ones(2, dtype=L.bfloat16, requires_grad=True) * 2).sum(),
            "one_by_one": lambda L: L.ones(1, 1, dtype=L.float64, requires_grad=True) * 2,
            "meta": lambda L: (L.ones(3, device="meta", requires_grad=True) * 2).sum(),
            "no_grad_vector": lambda L: L.ones(3),  # the engine's error, not the implicit gradient's
            "no_grad_scalar": lambda L: L.ones(()),
            "vector": lambda L: L.ones(3, requires_grad=True) * 2,
            "complex": lambda L: (L.ones(2, dtype=L.complex64, requires_grad=True) * 2).sum()}[case]
    assert _implicit_root_grad(mt, make) == _implicit_root_grad(torch, make)


def test_reentrant_backward_in_hook():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        inner = []

        def hook(g):  # hooks run with grad mode off (create_graph=False): as checkpointing does
            a = L.tensor([3.0], requires_grad=True)
            with L.enable_grad():
                (a * a).sum().backward()
            inner.append(a.grad)
            return g
        y = x * 2
        y.register_hook(hook)
        y.sum().backward()
        return [x.grad, inner[0]]
    grads_of(f)


# ---- grad modes ------------------------------------------------------------------------

@LIBS
def test_set_grad_enabled_forms(L):
    x = L.ones(1, requires_grad=True)
    L.set_grad_enabled(False)
    assert not L.is_grad_enabled()
    L.set_grad_enabled(True)
    with L.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert L.is_grad_enabled()

    @L.set_grad_enabled(False)
    def f():
        return L.is_grad_enabled()
    assert L.is_grad_enabled() and f() is False and L.is_grad_enabled()

    @L.no_grad
    def g():
        return L.is_grad_enabled()
    assert g() is False

    @L.enable_grad()
    def h():
        return L.is_grad_enabled()
    with L.no_grad():
        assert h() is True


@LIBS
def test_grad_mode_is_thread_local(L):
    seen = {}

    def worker():
        seen["worker"] = L.is_grad_enabled()
        with L.no_grad():
            seen["inner"] = L.is_grad_enabled()

    with L.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not L.is_grad_enabled()
    assert seen == {"worker": True, "inner": False}


def test_inference_mode():
    def f(L):
        x = L.ones(2, requires_grad=True)
        with L.inference_mode():
            t = L.ones(2)
            inside = (L.is_inference_mode_enabled(), L.is_grad_enabled(), (x * 2).requires_grad)
        out = [t.is_inference(), x.is_inference(), L.is_inference_mode_enabled()] + list(inside)
        for fn in (lambda: t.add_(1), lambda: t.requires_grad_(), lambda: x * t):
            try:
                fn()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e))
        out.append((x + t).requires_grad)  # add saves nothing: allowed

        @L.inference_mode()
        def deco():
            return L.is_inference_mode_enabled()
        out.append(deco())
        with L.inference_mode(False):
            out.append(L.is_inference_mode_enabled())
        return out
    grads_of(f)


def test_anomaly_mode_names_the_nan_node():
    import warnings

    def f(L):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly():
                try:
                    (x / x).sum().backward()
                except RuntimeError as e:
                    msg = str(e)
        trace = [str(m.message) for m in w if "Error detected in" in str(m.message)]
        return [msg, len(trace), trace[0].split(".")[0], "(x / x)" in trace[0], L.is_anomaly_enabled()]
    grads_of(f)
    L = mt
    with L.autograd.set_detect_anomaly(True, check_nan=False):
        assert L.is_anomaly_enabled() and not L.is_anomaly_check_nan_enabled()
    assert not L.is_anomaly_enabled()


def test_grad_layout_contract_and_stealing_as_torch():
    """.grad takes the leaf's strides (a transposed leaf, a Linear weight after a 3-D input), and a
    first gradient is only kept as it is when nothing else can see it"""
    def run(L):
        out = {}
        w = L.randn(5, 3).t().detach().requires_grad_()  # a column-major leaf
        (w * 2).sum().backward()
        out["transposed leaf"] = w.grad.stride()
        lin = L.nn.Linear(4, 6)
        lin(L.randn(2, 3, 4)).sum().backward()
        out["linear weight"] = lin.weight.grad.stride()
        a, b = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
        (a + b).sum().backward()  # one gradient reaches both leaves
        a.grad.add_(1)
        out["independent"] = b.grad.tolist()
        seen = []
        x = L.ones(2, requires_grad=True)
        x.register_hook(lambda g: seen.append(g))
        (x * 3).sum().backward()
        x.grad.mul_(0)  # the hook's tensor is not the .grad it sees
        out["hook kept"] = seen[0].tolist()
        return out

    assert run(mt) == run(torch)


def _modified_saved(L, case):
    """A saved tensor written in place before backward; returns the error text."""
    x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    if case == "output":  # SigmoidBackward0 saved its result
        y = x.sigmoid()
        y.add_(1)
        out = y.sum()
    elif case == "input_no_grad":  # MulBackward0 saved y, written without recording
        y = x * 1
        out = (y * y).sum()
        with L.no_grad():
            y.mul_(2)
    elif case == "leaf":
        out = (x * x).sum()
        with L.no_grad():
            x.add_(1)
    else:  # a custom Function saving an input written after, and one saving its output
        class Save(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                r = a * 2
                ctx.save_for_backward(a if case == "function_input" else r)
                return r

            @staticmethod
            def backward(ctx, g):
                return g * ctx.saved_tensors[0]
        y = x.exp()
        r = Save.apply(y)
        (y if case == "function_input" else r).add_(1)
        out = r.sum()
    with pytest.raises(RuntimeError) as info:
        out.backward()
    return str(info.value)


@pytest.mark.parametrize("case", ["output", "input_no_grad", "leaf", "function_input", "function_output"])
def test_saved_tensor_modified_error_text(case):
    assert _modified_saved(mt, case) == _modified_saved(torch, case)


@pytest.mark.parametrize("index", ["mask", "byte", "long", "mask2d"])
@pytest.mark.parametrize("op", ["index", "index_put"])
def test_index_written_before_backward(index, op):
    # the index tensors an indexing node keeps are versioned like saved tensors: writing into one before the
    # backward raises PyTorch's error (a boolean mask printed as CPUBoolType), never a wrong gradient
    def run(L):
        a = L.ones(5, 2, requires_grad=True)
        m = {"mask": lambda: L.tensor([True, False, True, True, False]),
             "byte": lambda: L.tensor([1, 0, 1, 1, 0], dtype=L.uint8),
             "long": lambda: L.tensor([0, 2]),
             "mask2d": lambda: L.tensor([[True, False], [True, True], [False, False], [True, True], [False, True]])}[index]()
        if op == "index":
            s = a[m]
        else:
            s = a * 1
            s[m] = 0.0 if index == "mask2d" else L.zeros(int(m.bool().sum()) if m.dtype != L.int64 else 2, 2)
        m.zero_()
        try:
            s.sum().backward()
        except RuntimeError as e:
            return str(e)
        return a.grad.tolist()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(mt) == run(torch)
