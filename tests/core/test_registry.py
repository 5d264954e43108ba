"""The op library's one Python registry: every torch.* function and Tensor method is registered once,
and nothing defined later replaces it."""
import inspect

import pytest

import mindtorch_v2 as mt
from mindtorch_v2._registry import TENSOR, TORCH, Registry


def test_a_name_registered_twice_is_an_error():
    reg = Registry("torch")
    first, second = (lambda x: x), (lambda x: x)
    reg.register({"f": first, "g": first}, "module_a")  # aliases: one object under two names
    reg.register({"f": first}, "module_b")  # the same object again is not a conflict
    with pytest.raises(RuntimeError, match=r"^torch\.f is registered twice: by module_a and by module_c$"):
        reg.register({"f": second}, "module_c")
    assert reg["f"] is first


def _unwrapped(fn):
    # accept_numpy_names may wrap a registered function, and the __torch_function__ dispatch both
    return inspect.unwrap(fn) if callable(fn) else fn


@pytest.mark.parametrize("namespace,registry", [(mt, TORCH), (mt.Tensor, TENSOR)], ids=["torch", "Tensor"])
def test_what_is_registered_is_what_is_exposed(namespace, registry):
    assert len(registry) > 300
    replaced = [name for name, fn in registry.items() if _unwrapped(getattr(namespace, name, None)) is not fn]
    assert replaced == []


def test_where_is_one_function():
    cond = mt.tensor([True, False, True])
    assert [t.tolist() for t in mt.where(cond)] == [[0, 2]]  # the one-argument overload: nonzero(as_tuple=True)
    assert mt.where(cond, mt.ones(3), mt.zeros(3)).tolist() == [1.0, 0.0, 1.0]
    assert mt.ones(3).where(cond, 5.0).tolist() == [1.0, 5.0, 1.0]
    assert TORCH.origin["where"] == "mindtorch_v2._elementwise"
