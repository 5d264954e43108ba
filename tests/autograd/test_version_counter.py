"""Version counters as PyTorch keeps them: a new tensor starts at 0 whatever filled it, views of every
dtype share their base's counter (and are views: _base, _is_view), and the counter can be set."""
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

FACTORIES = {
    "ones": lambda L: L.ones(2, 3), "zeros": lambda L: L.zeros(2), "full": lambda L: L.full((2,), 7),
    "empty": lambda L: L.empty(3), "ones_like": lambda L: L.ones_like(L.empty(2)),
    "zeros_like": lambda L: L.zeros_like(L.empty(2, dtype=L.int64)), "full_like": lambda L: L.full_like(L.empty(2), 1.5),
    "eye": lambda L: L.eye(3), "arange": lambda L: L.arange(4), "linspace": lambda L: L.linspace(0, 1, 5),
    "tensor": lambda L: L.tensor([1, 2]), "rand": lambda L: L.rand(3), "randn": lambda L: L.randn(3),
    "randint": lambda L: L.randint(0, 5, (3,)), "randperm": lambda L: L.randperm(4),
    "rand_like": lambda L: L.rand_like(L.empty(2)), "new_ones": lambda L: L.empty(2).new_ones(3),
    "bernoulli": lambda L: L.bernoulli(L.full((3,), 0.5)), "normal": lambda L: L.normal(0.0, 1.0, (3,)),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_new_tensors_start_at_version_0(name):
    assert FACTORIES[name](mt)._version == FACTORIES[name](torch)._version


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float32", "bfloat16"])
def test_views_of_every_dtype_are_views(dtype):
    for L in (mt, torch):
        x = L.zeros(6, dtype=getattr(L, dtype))
        for v in (x.view(2, 3), x[1:], x.reshape(3, 2).t(), x.unsqueeze(0)):
            assert v._is_view() and v._base.data_ptr() == x.data_ptr() and v._base.shape == x.shape
            assert v._version == x._version
        y = x.view(2, 3)
        y.fill_(1)
        assert x._version == y._version == 1
        assert not x.clone()._is_view()
        with pytest.raises(RuntimeError, match="^Can't detach views in-place"):
            x[1:].detach_()


def test_unsafe_set_version_counter():
    for L in (mt, torch):
        x = L.ones(3)
        v = x[1:]
        L._C._autograd._unsafe_set_version_counter((x,), (5,))
        assert x._version == v._version == 5
