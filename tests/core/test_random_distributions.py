"""Tensor.cauchy_, log_normal_ and geometric_ against live PyTorch: after the same seed the same draws bit for
bit (every dtype, non-contiguous, empty and 0-dim tensors, a generator, the normal cache left by randn), and
PyTorch's errors."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def equal(m, t):
    if isinstance(t, tuple):
        for a, b in zip(m, t, strict=True):
            equal(a, b)
        return
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape) and m.stride() == t.stride()
    np.testing.assert_array_equal(np.array(m.double().tolist()).reshape(tuple(t.shape)), t.double().numpy())


def draws(fn, seed=7):
    def run(lib):
        lib.manual_seed(seed)
        return fn(lib)
    return same(lambda: run(mt), lambda: run(torch), cmp=equal)


LAYOUTS = {
    "contiguous": lambda lib, dt: lib.empty(40, dtype=dt),
    "small": lambda lib, dt: lib.empty(3, dtype=dt),
    "transposed": lambda lib, dt: lib.empty(7, 5, dtype=dt).t(),
    "sliced": lambda lib, dt: lib.empty(9, 40, dtype=dt)[:, ::3],
    "empty": lambda lib, dt: lib.empty(0, 4, dtype=dt),
    "0-dim": lambda lib, dt: lib.empty((), dtype=dt),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("args", [(), (1.5, 0.3)])
def test_cauchy_(layout, dtype, args):
    draws(lambda lib: LAYOUTS[layout](lib, getattr(lib, dtype)).cauchy_(*args))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("args", [(), (0.2, 0.5)])
def test_log_normal_(layout, dtype, args):
    draws(lambda lib: LAYOUTS[layout](lib, getattr(lib, dtype)).log_normal_(*args))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("p", [0.3, 0.001])
def test_geometric_(layout, dtype, p):
    draws(lambda lib: LAYOUTS[layout](lib, getattr(lib, dtype)).geometric_(p))


def test_streams_interleave_with_other_draws():
    # log_normal_ takes the Box-Muller value randn(float64) left cached, as PyTorch's normal_distribution does
    draws(lambda lib: (lib.randn(5, dtype=lib.float64), lib.empty(33).log_normal_(), lib.rand(3),
                       lib.empty(4, dtype=lib.float64).cauchy_())[1:])
    draws(lambda lib: lib.empty(20).geometric_(0.5, generator=lib.Generator().manual_seed(3)))
    draws(lambda lib: lib.empty(20).cauchy_(generator=lib.Generator().manual_seed(3)))


def test_errors():
    draws(lambda lib: lib.zeros(3, dtype=lib.long).cauchy_())
    draws(lambda lib: lib.zeros(3).cauchy_(0, -1))
    draws(lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(0.5))
    draws(lambda lib: lib.zeros(3).geometric_(0))
    draws(lambda lib: lib.zeros(3).geometric_(1))
    draws(lambda lib: lib.zeros(3).log_normal_(1, 0))
    draws(lambda lib: lib.zeros(3, dtype=lib.long).log_normal_())
    draws(lambda lib: lib.zeros(3).requires_grad_().cauchy_())
    draws(lambda lib: lib.zeros(2).geometric_(p=0.5, generator=1))


def test_no_gradient_through_the_draws():
    grads = []
    for lib in (mt, torch):
        a = lib.ones(3, requires_grad=True)
        ((a * 2).cauchy_() + a).sum().backward()
        grads.append(a.grad.tolist())
    assert grads[0] == grads[1] == [1.0, 1.0, 1.0]
