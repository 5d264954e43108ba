"""The last small module-level names of issue 27 against live PyTorch: nn (common_types, factory_kwargs, grad,
the lazy norms, AdaptiveLogSoftmaxWithLoss, CrossMapLRN2d, LinearCrossEntropyLoss and its options),
nn.utils, autograd's profiler names, ops namespaces, library.EffectType, utils.data's datapipes and
utils.benchmark."""

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


from mtdiff import outcome_and_warnings as outcome  # noqa: E402


def arr(L, seed, *shape, dtype="float64", grad=False):
    return L.tensor(np.random.RandomState(seed).randn(*shape).astype(dtype), requires_grad=grad)


def close(a, b, tol=1e-6):
    for p, q in zip(a, b):
        p, q = np.asarray(p), np.asarray(q)
        assert p.shape == q.shape and np.allclose(p, q, rtol=tol, atol=tol), (p, q)


# ---- nn ----------------------------------------------------------------------------------------

def test_common_types():
    for name in dir(torch.nn.common_types):
        if name.startswith("_size") or name.startswith("_scalar") or name.startswith("_ratio"):
            assert hasattr(mt.nn.common_types, name), name
    assert mt.nn.common_types._size_2_t == (int | tuple[int, int]) or "Tuple[int, int]" in str(
        mt.nn.common_types._size_2_t)


@pytest.mark.parametrize("kwargs", [None, {}, {"dtype": "D", "device": "cpu"}, {"factory_kwargs": {"dtype": "D"}},
                                    {"factory_kwargs": {"dtype": "D"}, "device": "cpu"},
                                    {"dtype": "D", "factory_kwargs": {"dtype": "E"}}, {"bogus": 1}])
def test_factory_kwargs(kwargs):
    assert outcome(lambda: mt.nn.factory_kwargs(kwargs)) == outcome(lambda: torch.nn.factory_kwargs(kwargs))


@pytest.mark.parametrize("dims,kw", [(1, dict(stride=2, padding=1)), (1, dict(dilation=2)),
                                     (2, dict(stride=(2, 1), padding=1)), (2, dict(dilation=(1, 2))),
                                     (3, dict(stride=(2, 1, 2), padding=(1, 0, 1))), (3, dict(dilation=(1, 2, 1)))])
def test_nn_grad_conv(dims, kw):
    def run(L):
        x, w = arr(L, 0, 2, 4, *(9,) * dims), arr(L, 1, 6, 2, *(3,) * dims)
        conv = getattr(L.nn.functional, f"conv{dims}d")
        kw["groups"] = 2
        go = arr(L, 2, *conv(x, w, None, **kw).shape)
        gin = getattr(L.nn.grad, f"conv{dims}d_input")(x.shape, w, go, **kw)
        gw = getattr(L.nn.functional.grad, f"conv{dims}d_weight")(x, w.shape, go, **kw)
        return gin.numpy(), gw.numpy()
    close(run(mt), run(torch), 1e-10)


@pytest.mark.parametrize("name,shape", [("LazyBatchNorm1d", (3, 4)), ("LazyBatchNorm1d", (3, 4, 5)),
                                        ("LazyBatchNorm2d", (2, 3, 4, 4)), ("LazyBatchNorm3d", (2, 3, 2, 2, 2)),
                                        ("LazyInstanceNorm1d", (2, 3, 5)), ("LazyInstanceNorm2d", (2, 3, 4, 4)),
                                        ("LazyInstanceNorm3d", (2, 3, 2, 3, 2))])
@pytest.mark.parametrize("kw", [{}, dict(affine=False), dict(track_running_stats=False), dict(bias=False)])
def test_lazy_norms(name, shape, kw):
    def run(L):
        m = getattr(L.nn, name)(**kw)
        before = (repr(m), sorted(m.state_dict()), m.has_uninitialized_params())
        y = m(arr(L, 0, *shape, dtype="float32"))
        y2 = m(arr(L, 1, *shape, dtype="float32"))
        return before, type(m).__name__, repr(m), y.detach().numpy(), y2.detach().numpy(), \
            {k: v.numpy() for k, v in m.state_dict().items()}
    a, b = run(mt), run(torch)
    assert a[:3] == b[:3]
    close(a[3:5], b[3:5], 1e-5)
    assert a[5].keys() == b[5].keys()
    close([a[5][k] for k in a[5]], [b[5][k] for k in a[5]], 1e-5)


def test_lazy_norm_wrong_rank():
    for L in (mt, torch):
        with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
            L.nn.LazyBatchNorm2d()(L.ones(2, 3, 4))


@pytest.mark.parametrize("channels", [1, 2, 4, 7, 10])
@pytest.mark.parametrize("size", [2, 3, 5])
def test_cross_map_lrn2d(channels, size):
    def run(L):
        x = arr(L, channels, 2, channels, 3, 2, grad=True)
        m = L.nn.CrossMapLRN2d(size, alpha=0.2, beta=0.6, k=1.5)
        y = m(x)
        y.backward(arr(L, 7, *y.shape))
        return y.detach().numpy(), x.grad.numpy(), repr(m)
    a, b = run(mt), run(torch)
    close(a[:2], b[:2], 1e-12)
    assert a[2] == b[2]


def test_cross_map_lrn2d_rank():
    assert outcome(lambda: mt.nn.CrossMapLRN2d(3)(mt.ones(2, 3))) == \
        outcome(lambda: torch.nn.CrossMapLRN2d(3)(torch.ones(2, 3)))


def _asm(L):
    m = L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=True).double()
    m.load_state_dict({k: arr(L, i, *v.shape) for i, (k, v) in enumerate(m.state_dict().items())})
    return m


def test_adaptive_log_softmax():
    def run(L):
        m = _asm(L)
        x = arr(L, 5, 6, 8, grad=True)
        out, loss = m(x, L.tensor([0, 3, 5, 12, 19, 11]))
        loss.backward()
        one = m(x[0], L.tensor(12))
        return (out.detach().numpy(), loss.item(), x.grad.numpy(), m.log_prob(x).detach().numpy(),
                m.predict(x).numpy(), m.predict(x[:1]).numpy(), one.output.item(), one.loss.item(),
                m.tail[1][0].weight.grad.numpy())
    close(run(mt), run(torch), 1e-12)
    assert repr(_asm(mt)) == repr(_asm(torch))


@pytest.mark.parametrize("call", [
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 10]),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.ones(3, 4), L.tensor([1, 2])),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.ones(3, 4), L.tensor([[1, 2]])),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.ones(2, 4), L.tensor(1)),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.ones(2, 4), L.tensor([1, 10])),
])
def test_adaptive_log_softmax_errors(call):
    assert outcome(lambda: call(mt)) == outcome(lambda: call(torch))


def _lce(L, opts, reduction, dtype="float64", ignore=None, weighted=False, bias=True, unbatched=False, twice=False):
    o = None if opts is None else L.nn.LinearCrossEntropyOptions(**opts)
    x, W = arr(L, 0, 9, 4, dtype=dtype, grad=True), arr(L, 1, 11, 4, dtype=dtype, grad=True)
    b = arr(L, 2, 11, dtype=dtype, grad=True) if bias else None
    t = L.tensor([0, 3, 10, 5, 5, 1, 2, 9, 3])
    if ignore is not None:
        t[2] = t[5] = ignore
    w = L.tensor(np.random.RandomState(3).rand(11).astype(dtype)) if weighted else None
    xx, tt = (x[4], t[4]) if unbatched else (x, t)
    loss = L.nn.functional.linear_cross_entropy(xx, W, tt, linear_bias=b, weight=w, reduction=reduction,
                                                ignore_index=ignore, options=o)
    loss.backward(L.tensor(np.asarray(np.random.RandomState(4).randn(*loss.shape)).astype(dtype)),
                  retain_graph=twice)
    out = [loss.detach().numpy(), x.grad.numpy(), W.grad.numpy()] + ([b.grad.numpy()] if bias else [])
    if twice:
        out.append(outcome(lambda: loss.backward(L.ones_like(loss)))[0])
    return out


@pytest.mark.parametrize("opts", [None, {}, {"batch_chunk_size": 2}, {"chunking_method": "aspect_ratio:2"},
                                  {"batch_chunk_size": 4, "allow_retain_graph": True}])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"ignore": 3, "weighted": True}, {"bias": False, "unbatched": True},
                                {"dtype": "float32"}])
def test_linear_cross_entropy(opts, reduction, kw):
    close(_lce(mt, opts, reduction, **kw), _lce(torch, opts, reduction, **kw), 1e-5)


@pytest.mark.parametrize("opts,reduction", [({}, "mean"), ({"allow_retain_graph": True}, "sum"), ({}, "none")])
def test_linear_cross_entropy_second_backward(opts, reduction):
    a, b = _lce(mt, opts, reduction, twice=True), _lce(torch, opts, reduction, twice=True)
    close(a[:4], b[:4], 1e-10)
    assert (a[4] if isinstance(a[4], tuple) else "ok") == (b[4] if isinstance(b[4], tuple) else "ok")


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 2, 3), L.ones(4, 3), L.tensor([0, 1])),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4), L.tensor([0, 1])),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 2), L.tensor([0, 1])),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 3), L.tensor([0, 1]),
                                                   linear_bias=L.ones(3)),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(3), L.ones(4, 2, 3), L.tensor(0)),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 3), L.ones(2, 4) / 4, ignore_index=1),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 3), L.tensor([0, 1]),
                                                   label_smoothing=0.1,
                                                   options=L.nn.LinearCrossEntropyOptions()).item(),
    lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 3), L.tensor([0, 1]),
                                                   options=L.nn.LinearCrossEntropyOptions(
                                                       acc_dtype=L.float32)).item(),
    lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="x"),
    lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
    lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
    lambda L: L.nn.LinearCrossEntropyOptions(acc_dtype=L.int32),
    lambda L: repr(L.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(
        100, 16, 1000, L.bfloat16, L.device("cpu"))),
    lambda L: repr(L.nn.LinearCrossEntropyOptions()._adjust(100, 16, 1000, L.float32, L.device("cpu"))),
    lambda L: repr(L.nn.LinearCrossEntropyOptions(batch_chunk_size=7)._adjust(100, 16, 50, L.float16, None)),
    lambda L: L.nn.LinearCrossEntropyLoss(3, 4, weight=L.ones(3)),
    lambda L: L.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0),
])
def test_linear_cross_entropy_errors(call):
    a, b = outcome(lambda: call(mt)), outcome(lambda: call(torch))
    assert a[0] == b[0]
    assert [m for _, m in a[1]] == [m.replace("torch.int64", "torch.int64") for _, m in b[1]]


def test_linear_cross_entropy_loss_module():
    def run(L, **kw):
        L.manual_seed(0)
        m = L.nn.LinearCrossEntropyLoss(5, 6, out_features=(2, 3), bias=True, **kw).double()
        m.load_state_dict({k: arr(L, i, *v.shape) for i, (k, v) in enumerate(m.state_dict().items())})
        x = arr(L, 9, 4, 5, grad=True)
        loss = m(x, L.tensor(np.random.RandomState(1).randint(0, 6, (4, 2, 3))))
        loss.backward()
        probs = m(x, L.tensor(np.random.RandomState(2).rand(4, 6, 2, 3)).softmax(1))
        return [loss.item(), x.grad.numpy(), m.linear.weight.grad.numpy(), probs.item()], repr(m)
    for kw in ({}, {"label_smoothing": 0.2, "reduction": "sum"}):
        a, b = run(mt, **kw), run(torch, **kw)
        close(a[0], b[0], 1e-10)
        assert a[1] == b[1]


# ---- nn.utils ------------------------------------------------------------------------------------

def test_parametrize_names():
    P, TP = mt.nn.utils.parametrize, torch.nn.utils.parametrize
    assert not isinstance(3, P.OpaqueBase) and not isinstance(3, TP.OpaqueBase)
    assert P.is_opaque_reference_type(int) == TP.is_opaque_reference_type(int) is False
    assert P.get_swap_module_params_on_conversion() is TP.get_swap_module_params_on_conversion() is False
    assert P.is_traceable_wrapper_subclass(mt.ones(1)) is TP.is_traceable_wrapper_subclass(torch.ones(1)) is False

    class Sub(P.OpaqueBase):
        pass
    assert isinstance(Sub(), Sub) and not isinstance(Sub(), P.OpaqueBase)


def test_overwrite_module_params_on_conversion():
    def run(L):
        L.__future__.set_overwrite_module_params_on_conversion(True)
        try:
            m = L.nn.Linear(2, 3)
            m.weight.grad = L.ones(3, 2)
            w = m.weight
            m.double()
            first = (m.weight is w, m.weight.dtype, m.weight.grad.dtype, type(m.weight).__name__)
        finally:
            L.__future__.set_overwrite_module_params_on_conversion(False)
        w = m.weight
        m.float()
        return first, m.weight is w, L.__future__.get_overwrite_module_params_on_conversion()
    import mindtorch_v2.__future__  # noqa: F401
    import torch.__future__  # noqa: F401
    assert repr(run(mt)) == repr(run(torch)).replace("torch.", "torch.")
    with pytest.raises(NotImplementedError, match="set_swap_module_params_on_conversion"):
        mt.__future__.set_swap_module_params_on_conversion(True)


def test_copy_method_params():
    def f(self, a, b=1):
        return a + b
    for L in (mt, torch):
        g = L.nn.utils.rnn.copy_method_params(f)(lambda self, *a, **k: 7)
        assert g(None, 1) == 7


# ---- autograd ------------------------------------------------------------------------------------

def test_autograd_enums():
    for name in ("DeviceType", "ProfilerState"):
        ours, theirs = getattr(mt.autograd, name), getattr(torch.autograd, name)
        assert {k: int(v) for k, v in ours.__members__.items()} == {k: int(v) for k, v in theirs.__members__.items()}
        for member in theirs.__members__:
            assert (str(getattr(ours, member)), repr(getattr(ours, member))) == \
                (str(getattr(theirs, member)), repr(getattr(theirs, member)))


@pytest.mark.parametrize("call", [
    lambda L: L.autograd.ProfilerEvent(),
    lambda L: L.autograd.SavedTensor(),
    lambda L: type(L.autograd.ProfilerConfig(L.autograd.ProfilerState.CPU, False, False, False, False, False,
                                             None if L is mt else L._C._profiler._ExperimentalConfig())).__name__,
    # the output held while its node is read (PyTorch crashes reading a dead output's saved result)
    lambda L: (lambda y: y.grad_fn._raw_saved_result.data.tolist())(L.ones(2, requires_grad=True).exp()),
    lambda L: (lambda y: y.grad_fn._raw_saved_self.data.tolist())(L.full((2,), 3.0, requires_grad=True) * 2.0),
    lambda L: (repr(L.autograd.profiler_legacy.profile()), str(L.autograd.profiler_legacy.profile()),
               L.autograd.profiler_legacy.profile(enabled=False).__enter__()),
    lambda L: L.autograd.profiler_legacy.MEMORY_EVENT_NAME,
])
def test_autograd_names(call):
    assert outcome(lambda: call(mt)) == outcome(lambda: call(torch))


def test_profiler_legacy_records():
    with mt.autograd.profiler_legacy.profile(record_shapes=True) as p:
        mt.ones(3, 4).add(1).sum()
    names = [e.name for e in p.function_events]
    assert "aten::add" in names and "aten::sum" in names
    add = next(e for e in p.function_events if e.name == "aten::add")
    assert add.input_shapes[0] == [3, 4] and add.cpu_time_total >= 0
    assert "aten::add" in p.table()


def test_enforce_grad_layout_policy():
    def run(L):
        p = L.zeros(2, 3, 4).permute(2, 0, 1).requires_grad_()
        from_torch = L.autograd.grad_mode if L is mt else L._C
        getter = getattr(from_torch, "_is_grad_layout_enforcement_enabled")
        seen = [getter()]
        with L.autograd.enforce_grad_layout_policy(False):
            seen.append(getter())
            (p * 2).sum().backward()
        seen.append(getter())

        @L.autograd.enforce_grad_layout_policy(False)
        def f():
            return getter()
        seen += [f(), getter()]
        return seen, p.grad.tolist()
    assert run(mt) == run(torch)


def test_library_effect_type():
    assert {k: v.value for k, v in mt.library.EffectType.__members__.items()} == \
        {k: v.value for k, v in torch.library.EffectType.__members__.items()}
    assert repr(mt.library.EffectType.ORDERED) == repr(torch.library.EffectType.ORDERED)
    assert mt.library.EffectType("Ordered") is mt.library.EffectType.ORDERED
