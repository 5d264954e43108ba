"""nn.functional.fractional_max_pool2d against live PyTorch: outputs, indices and gradients bit for bit with the
same _random_samples (or the same seed), batched and unbatched, both dtypes, kernel and output sizes, ratios,
errors (type and text); gradcheck."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")


def equal(m, t):
    if isinstance(t, tuple):
        for a, b in zip(m, t, strict=True):
            equal(a, b)
        return
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    np.testing.assert_array_equal(np.array(m.double().tolist()).reshape(tuple(t.shape)), t.double().numpy())


@pytest.mark.parametrize("shape,k,osz", [((2, 3, 8, 9), 2, (4, 5)), ((2, 3, 8, 9), 3, 3), ((3, 10, 7), (2, 3), (5, 4)),
                                         ((1, 2, 5, 5), 1, 5), ((1, 2, 6, 6), 2, 1), ((2, 1, 9, 9), (3, 1), (7, 9))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_indices_gradients(shape, k, osz, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    s = rng.random((shape[0] if len(shape) == 4 else 1, shape[-3], 2))
    res = []
    for lib in (mt, torch):
        dt = getattr(lib, dtype)
        xt = lib.tensor(x, dtype=dt, requires_grad=True)
        out, idx = lib.nn.functional.fractional_max_pool2d(xt, k, output_size=osz, return_indices=True,
                                                           _random_samples=lib.tensor(s, dtype=dt))
        (out * out).sum().backward()
        res.append((out.detach(), idx, xt.grad))
    equal(res[0], res[1])


def test_seeded_samples_ratio_and_plain_output():
    def fn(lib):
        lib.manual_seed(3)
        x = lib.arange(2 * 3 * 10 * 11, dtype=lib.float32).reshape(2, 3, 10, 11) * 7 % 23
        return (lib.nn.functional.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7)),
                lib.nn.functional.fractional_max_pool2d_with_indices(x, (3, 2), output_size=4))
    same(lambda: fn(mt), lambda: fn(torch), cmp=equal)
    same(lambda: fn(mt)[0].shape, lambda: fn(torch)[0].shape, cmp=lambda m, t: m == t)


@pytest.mark.parametrize("case", [
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 3),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 7, output_size=4),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_size=(3, 9)),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x[0, 0], 2, output_size=3),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 0, 5, 5), 2, output_size=3),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.rand(2, 3, 3)),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.rand(1, 3, 2)),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, (2, 2, 2), output_size=3),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_size=(3, 3, 3)),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_size=3,
                                                           _random_samples=lib.rand(2, 3, 2).double()),
    lambda lib, x: lib.nn.functional.fractional_max_pool2d(lib.randn(0, 3, 5, 5), 2, output_size=3).shape,
])
def test_errors_and_empty_batch(case):
    same(lambda: case(mt, mt.randn(2, 3, 8, 9)), lambda: case(torch, torch.randn(2, 3, 8, 9)),
         cmp=lambda m, t: tuple(m) == tuple(t) or pytest.fail(f"{m} {t}"))


def test_gradcheck():
    x = mt.randn(1, 2, 6, 7, dtype=mt.float64, requires_grad=True)
    s = mt.rand(1, 2, 2, dtype=mt.float64)
    assert mt.autograd.gradcheck(lambda a: mt.nn.functional.fractional_max_pool2d(a, 2, output_size=(3, 4),
                                                                                  _random_samples=s), (x,))
