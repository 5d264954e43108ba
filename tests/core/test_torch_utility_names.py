"""torch's small utility names against live PyTorch: classproperty (torch._utils), get_file_path and
prepare_multiprocessing_environment (torch._utils_internal) and thread_safe_generator (torch.random),
and the names counted out of scope raising NotImplementedError naming themselves (Tensor.index: functorch's
first-class dimensions; hash_tensor: a uint64 result)."""
import os

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def test_classproperty():
    for L in (torch, mt):
        class Owner:
            _value = 3

            @L.classproperty
            def value(cls):
                return cls._value * 2

            @L.classproperty
            @staticmethod
            def constant():
                return "c"

        class Child(Owner):
            _value = 5

        assert (Owner.value, Child.value, Owner().value, Child().value, Owner.constant) == (6, 10, 6, 10, "c")
        assert L.classproperty is L._utils.classproperty


def test_file_path_helpers():
    for L in (torch, mt):
        root = os.path.dirname(os.path.dirname(L.__file__))
        assert L.get_file_path("a", "b.txt") == os.path.join(root, "a", "b.txt")
        assert L.get_file_path() == os.path.join(root)
        assert L.prepare_multiprocessing_environment("/tmp") is None
        assert L._utils_internal.get_file_path is L.get_file_path


def test_thread_safe_generator():
    # outside a DataLoader thread worker (the main process, process workers): None, the global RNG
    assert mt.thread_safe_generator() is None and torch.thread_safe_generator() is None
    assert mt.thread_safe_generator is mt.random.thread_safe_generator

    class Workers(mt.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return mt.tensor(mt.thread_safe_generator() is None)
    loader = mt.utils.data.DataLoader(Workers(), num_workers=1, batch_size=None, timeout=60)
    assert [bool(x) for x in loader] == [True, True]


@pytest.mark.parametrize("fn,name", [(lambda L: L.ones(2).index((0,), None), "Tensor.index"),
                                     (lambda L: L.hash_tensor(L.ones(2)), "torch.hash_tensor"),
                                     (lambda L: L.ones(2).hash_tensor(), "Tensor.hash_tensor")])
def test_out_of_scope_names_raise(fn, name):
    with pytest.raises(NotImplementedError, match=name.replace(".", r"\.") + " is not implemented"):
        fn(mt)
