"""Small module-level names against live PyTorch: testing.assert_allclose, utils.hooks.unserializable_hook,
random.thread_safe_generator, autograd.variable."""
import warnings

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def outcome(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001
            r = (type(e).__name__, str(e))
    return r, [(x.category.__name__, str(x.message)) for x in w]


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
