"""Small module-level names against live PyTorch: testing.assert_allclose, utils.hooks.unserializable_hook,
random.thread_safe_generator, autograd.variable."""
import warnings

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


from mtdiff import outcome_and_warnings as outcome  # noqa: E402


@pytest.mark.parametrize("call", [
    lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.00001])),
    lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), [1.0, 2.1]),
    lambda L: L.testing.assert_allclose([1.0, 2.0], [1.0, 2.001], rtol=0.01, atol=0.0),
    lambda L: L.testing.assert_allclose(L.tensor([1, 2]), L.tensor([1.0, 2.0])),
    lambda L: L.testing.assert_allclose(L.tensor([1.0]), L.tensor([1.5]), msg="custom"),
    lambda L: L.autograd.variable(1.0),
    lambda L: L.random.thread_safe_generator(),
])
def test_same_outcome(call):
    assert outcome(lambda: call(mt)) == outcome(lambda: call(torch))


def test_unserializable_hook():
    def hook(g):
        return g
    assert mt.utils.hooks.unserializable_hook(hook) is hook and hook.__torch_unserializable__ is True


def test_warn_if_has_hooks():
    def run(L):
        def hook(g):
            return g
        x = L.ones(2, requires_grad=True)
        y = x * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.utils.hooks.warn_if_has_hooks(x)
            x.register_hook(hook)
            y.register_hook(hook)
            y.register_hook(L.utils.hooks.unserializable_hook(lambda g: g))
            L.utils.hooks.warn_if_has_hooks(x)
            L.utils.hooks.warn_if_has_hooks(y)
            L.utils.hooks.warn_if_has_hooks(x * 3)
        return [str(m.message).replace(repr(hook), "HOOK") for m in w]
    assert run(mt) == run(torch)


def test_overrides_names():
    for L in (mt, torch):
        assert L.overrides.resolve_name(L.add) == "torch.add"
        assert L.overrides.resolve_name(L.Tensor.add_) == "torch.Tensor.add_"
        assert L.overrides.resolve_name(L.nn.functional.relu) == "torch.nn.functional.relu"
        assert L.overrides.resolve_name(len) is None
    assert outcome(lambda: mt.overrides.enable_reentrant_dispatch().__enter__()) == \
        outcome(lambda: torch.overrides.enable_reentrant_dispatch().__enter__())

    def logged(L):
        log = []

        class Logging(L.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args, kwargs=None):
                log.append(func.__name__)
                return L.overrides.redispatch_function(func, types, args, kwargs)
        r = L.mul(Logging(L.tensor([3.0])), Logging(L.tensor([4.0])))
        return log, type(r).__name__, r.tolist()
    assert logged(mt) == logged(torch)


def test_autograd_names():
    for L in (mt, torch):
        A = L.autograd
        assert A.is_multithreading_enabled() and not A.is_view_replay_enabled()
        with A.set_multithreading_enabled(False):
            assert not A.is_multithreading_enabled()
        assert A.is_multithreading_enabled()
        assert A.ProfilerActivity is L.profiler.ProfilerActivity
        assert A.is_tensor_like(L.ones(1)) and not A.is_tensor_like(1)
        assert not A.has_torch_function((L.ones(1),))
