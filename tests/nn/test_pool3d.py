"""3-D pooling against live PyTorch: max_pool3d (indices, dilation, ceil_mode), avg_pool3d (padding, divisor,
ceil_mode), adaptive avg/max, lp_pool3d, max_unpool3d, fractional_max_pool3d (its samples and the seed's), their
modules; values, indices, gradients and double backward, every dtype PyTorch's CPU kernels take, batched and
unbatched, non-contiguous and channels_last_3d inputs, error types and texts."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")


def as_np(t):
    return np.array(t.detach().double().tolist()).reshape(tuple(t.shape))


def equal(m, t, tol=0.0):
    if isinstance(t, (tuple, list)):
        assert len(m) == len(t)
        for a, b in zip(m, t):
            equal(a, b, tol)
        return
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape), (m.dtype, t.dtype, m.shape, t.shape)
    if tol:
        np.testing.assert_allclose(as_np(m), as_np(t), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(as_np(m), as_np(t))


def run(lib, fn, x, dtype, layout=None):
    """fn's outputs on x (as dtype, laid out: None, 'permuted' or 'cl3d') and the input's gradient."""
    xt = lib.tensor(x, dtype=getattr(lib, dtype))
    if layout == "permuted":  # the same values, non-contiguous
        xt = lib.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -3)), dtype=getattr(lib, dtype)).transpose(-1, -3)
    elif layout == "cl3d":
        xt = xt.contiguous(memory_format=lib.channels_last_3d)
    xt.requires_grad_(True)
    out = fn(lib.nn.functional, xt)
    outs = out if isinstance(out, tuple) else (out,)
    (outs[0].float() * outs[0].float()).sum().backward()
    return (*[o.detach() for o in outs], xt.grad)


CASES = [
    ("max", lambda F, x: F.max_pool3d(x, 2, return_indices=True)),
    ("max", lambda F, x: F.max_pool3d(x, (3, 2, 2), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1), ceil_mode=True,
                                      return_indices=True)),
    ("max", lambda F, x: F.max_pool3d(x, 2, stride=1, padding=1, dilation=2, return_indices=True)),
    ("max", lambda F, x: F.max_pool3d(x, 3, stride=2, ceil_mode=True)),
    ("avg", lambda F, x: F.avg_pool3d(x, 2)),
    ("avg", lambda F, x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg", lambda F, x: F.avg_pool3d(x, (3, 2, 2), padding=(1, 1, 0), ceil_mode=True)),
    ("avg", lambda F, x: F.avg_pool3d(x, (2, 3, 2), stride=1, padding=1, divisor_override=5)),
    ("adaptive_avg", lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 4))),
    ("adaptive_avg", lambda F, x: F.adaptive_avg_pool3d(x, (None, 4, 7))),
    ("adaptive_avg", lambda F, x: F.adaptive_avg_pool3d(x, 1)),
    ("adaptive_avg", lambda F, x: F.adaptive_avg_pool3d(x, 8)),
    ("adaptive_max", lambda F, x: F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True)),
    ("adaptive_max", lambda F, x: F.adaptive_max_pool3d(x, (5, None, 1), return_indices=True)),
    ("avg", lambda F, x: F.lp_pool3d(x.abs() + 0.1, 2, 2)),
    ("avg", lambda F, x: F.lp_pool3d(x.abs() + 0.1, 4.0, (2, 3, 2), stride=1, ceil_mode=True)),
    ("max", lambda F, x: F.lp_pool3d(x, float("inf"), 2)),
]
# PyTorch's CPU dtypes per kind (avg_pool3d: float32/float64 only)
DTYPES = {"max": ("float32", "float64", "float16", "bfloat16"), "avg": ("float32", "float64"),
          "adaptive_avg": ("float32", "float64", "float16", "bfloat16"),
          "adaptive_max": ("float32", "float64", "float16", "bfloat16")}


@pytest.mark.parametrize("shape", [(2, 3, 5, 6, 7), (3, 4, 5, 6)])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_indices_gradients(case, shape):
    kind, fn = CASES[case]
    x = np.random.default_rng(case).standard_normal(shape)
    for dtype in DTYPES[kind]:
        # float16/bfloat16 gradients: PyTorch adds overlapping windows' gradients in the dtype, we in float32
        tol = {"float32": 1e-5, "float64": 1e-12}.get(dtype, 2e-2)
        if kind.endswith("max") and dtype in ("float32", "float64"):
            tol = 0.0
        equal(run(mt, fn, x, dtype), run(torch, fn, x, dtype), tol)


@pytest.mark.parametrize("layout", ["permuted", "cl3d"])
@pytest.mark.parametrize("case", [0, 1, 5, 8, 12, 15])
def test_non_contiguous_and_channels_last_3d(case, layout):
    kind, fn = CASES[case]
    x = np.random.default_rng(case).standard_normal((2, 3, 5, 6, 7))
    equal(run(mt, fn, x, "float64", layout), run(torch, fn, x, "float64", layout), 0.0 if kind.endswith("max") else 1e-12)


def test_ties_nan_and_empty_batch():
    x = np.zeros((1, 2, 4, 4, 4))
    x[0, 1, 1, 2, 3] = np.nan
    x[0, 1, 3, 3, 3] = np.nan
    for fn in (lambda F, t: F.max_pool3d(t, 2, return_indices=True),
               lambda F, t: F.adaptive_max_pool3d(t, 3, return_indices=True)):
        equal(run(mt, fn, x, "float32"), run(torch, fn, x, "float32"))
    for fn in (lambda F, t: F.max_pool3d(t, 2, return_indices=True), lambda F, t: F.avg_pool3d(t, 2),
               lambda F, t: F.adaptive_avg_pool3d(t, 2), lambda F, t: F.adaptive_max_pool3d(t, 2)):
        same(lambda: fn(mt.nn.functional, mt.zeros(0, 3, 4, 4, 4)), lambda: fn(torch.nn.functional, torch.zeros(0, 3, 4, 4, 4)),
             cmp=lambda m, t: equal(m, t))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_gradcheck_and_double_backward(case):
    kind, fn = CASES[case]
    rng = np.random.default_rng(case)
    # distinct values keep the maxima away from ties, where the finite differences would not be a derivative
    x = mt.tensor(rng.permutation(2 * 3 * 5 * 4 * 4).reshape(1, 2, 3 * 5, 4, 4)[:, :, :5] / 10.0 + 0.05,
                  dtype=mt.float64, requires_grad=True)

    def f(a):
        out = fn(mt.nn.functional, a)
        return out[0] if isinstance(out, tuple) else out
    assert mt.autograd.gradcheck(f, (x,))
    assert mt.autograd.gradgradcheck(f, (x,))


def test_grad_fn_names():
    for fn in (lambda F, x: F.max_pool3d(x, 2), lambda F, x: F.avg_pool3d(x, 2), lambda F, x: F.adaptive_avg_pool3d(x, 3),
               lambda F, x: F.adaptive_max_pool3d(x, 3)):
        names = []
        for lib in (mt, torch):
            x = lib.randn(2, 3, 5, 6, 7, dtype=lib.float64, requires_grad=True)
            y = fn(lib.nn.functional, x)
            (g,) = lib.autograd.grad(y, x, lib.ones_like(y, requires_grad=True), create_graph=True)
            names.append((y.grad_fn.name(), g.grad_fn.name()))
        assert names[0] == names[1]


X = (2, 3, 5, 6, 7)
ERRORS = [
    lambda F, x: F.max_pool3d(x, 0),
    lambda F, x: F.max_pool3d(x, 2, 0),
    lambda F, x: F.max_pool3d(x, 2, -1),
    lambda F, x: F.max_pool3d(x, 2, dilation=0),
    lambda F, x: F.max_pool3d(x, 2, padding=2),
    lambda F, x: F.max_pool3d(x, 2, padding=-1),
    lambda F, x: F.max_pool3d(x, 3, padding=2, dilation=2),
    lambda F, x: F.max_pool3d(x[:, :, :1, :1, :1], 3),
    lambda F, x: F.max_pool3d(x[0, 0], 2),
    lambda F, x: F.max_pool3d(x[None], 2),
    lambda F, x: F.max_pool3d(x, (2, 2)),
    lambda F, x: F.max_pool3d(x, 2, (1, 1)),
    lambda F, x: F.max_pool3d(x, 2, padding=(1, 1)),
    lambda F, x: F.max_pool3d(x, 2, dilation=(1, 1)),
    lambda F, x: F.max_pool3d(x[:, :0], 2),
    lambda F, x: F.max_pool3d(x[0, :0], 2),
    lambda F, x: F.max_pool3d(x.bool(), 2),
    lambda F, x: F.avg_pool3d(x, 0),
    lambda F, x: F.avg_pool3d(x, 2, padding=2),
    lambda F, x: F.avg_pool3d(x[:, :, :1, :1, :1], 3),
    lambda F, x: F.avg_pool3d(x[:, :, :2, :2, :2], 3, padding=1),
    lambda F, x: F.avg_pool3d(x[0, 0], 2),
    lambda F, x: F.avg_pool3d(x, 2, divisor_override=0),
    lambda F, x: F.avg_pool3d(x, (2, 2)),
    lambda F, x: F.avg_pool3d(x, 2, (1, 1)),
    lambda F, x: F.avg_pool3d(x, 2, padding=(1, 1)),
    lambda F, x: F.avg_pool3d(x[:, :0], 2),
    lambda F, x: F.avg_pool3d(x.half(), 2),
    lambda F, x: F.avg_pool3d(x.bfloat16(), 2),
    lambda F, x: F.avg_pool3d(x.int(), 2),
    lambda F, x: F.adaptive_avg_pool3d(x[0, 0], 2),
    lambda F, x: F.adaptive_avg_pool3d(x, -1),
    lambda F, x: F.adaptive_avg_pool3d(x, (1, -2, 3)),
    lambda F, x: F.adaptive_avg_pool3d(x, (1, 2)),
    lambda F, x: F.adaptive_avg_pool3d(x[:, :0], 2),
    lambda F, x: F.adaptive_avg_pool3d(x[:, :, :0], 2),
    lambda F, x: F.adaptive_avg_pool3d(x.long(), 2),
    lambda F, x: F.adaptive_avg_pool3d(x, (2, 0, 2)).shape,
    lambda F, x: F.adaptive_max_pool3d(x[0, 0], 2),
    lambda F, x: F.adaptive_max_pool3d(x, -1),
    lambda F, x: F.adaptive_max_pool3d(x, (1, 2)),
    lambda F, x: F.adaptive_max_pool3d(x[:, :0], 2),
    lambda F, x: F.adaptive_max_pool3d(x[:, :, :, :0], 2),
    lambda F, x: F.adaptive_max_pool3d(x.long(), 2),
    lambda F, x: F.adaptive_max_pool3d(x, (2, 0, 2)).shape,
    lambda F, x: F.fractional_max_pool3d(x, 2),
    lambda F, x: F.fractional_max_pool3d(x, 2, output_size=(2, 2)),
    lambda F, x: F.fractional_max_pool3d(x, (2, 2), output_size=2),
    lambda F, x: F.fractional_max_pool3d(x[:, :0], 2, output_size=2),
    lambda F, x: F.fractional_max_pool3d(x[:0], 2, output_size=2).shape,
    lambda F, x: F.fractional_max_pool3d(x, 5, output_size=2),
    lambda F, x: F.fractional_max_pool3d(x, 1, output_size=5),
    lambda F, x: F.fractional_max_pool3d(x, (2, 6, 2), output_size=2),
    lambda F, x: F.fractional_max_pool3d(x, (2, 2, 7), output_size=2),
    lambda F, x: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=torch.rand(2, 3, 3).double()
                                         if F is torch.nn.functional else mt.rand(2, 3, 3).double()),
    lambda F, x: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=x[0, :, 0, 0, :2]),
    lambda F, x: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=x[:1, :, 0, 0, :3]),
    lambda F, x: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=x[:, :2, 0, 0, :3]),
    lambda F, x: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=x[:, :, 0, 0, :2]),
    lambda F, x: F.max_unpool3d(x, x.long(), 2, output_size=(1, 1, 1)),
    lambda F, x: F.max_unpool3d(x, x.long(), 2, output_size=[2, 3, 1, 1, 1]),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn = ERRORS[case]
    same(lambda: fn(mt.nn.functional, mt.randn(*X)), lambda: fn(torch.nn.functional, torch.randn(*X)),
         cmp=lambda m, t: tuple(m) == tuple(t) or pytest.fail(f"{m} {t}"))


@pytest.mark.parametrize("shape,k,osz", [((2, 3, 7, 8, 9), 2, (3, 4, 5)), ((3, 6, 7, 8), (2, 3, 1), 4),
                                         ((1, 2, 5, 5, 5), 1, 4), ((1, 2, 6, 6, 6), 2, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fractional_values_indices_gradients(shape, k, osz, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    s = rng.random((shape[0] if len(shape) == 5 else 1, shape[-4], 3))
    res = []
    for lib in (mt, torch):
        dt = getattr(lib, dtype)
        xt = lib.tensor(x, dtype=dt, requires_grad=True)
        out, idx = lib.nn.functional.fractional_max_pool3d(xt, k, output_size=osz, return_indices=True,
                                                           _random_samples=lib.tensor(s, dtype=dt))
        (out.float() * out.float()).sum().backward()
        res.append((out.detach(), idx, xt.grad))
    equal(res[0], res[1])


def test_fractional_seeded_ratio_and_module():
    def fn(lib):
        lib.manual_seed(3)
        x = lib.arange(2 * 3 * 9 * 10 * 11, dtype=lib.float32).reshape(2, 3, 9, 10, 11) * 7 % 23
        m = lib.nn.FractionalMaxPool3d((2, 3, 2), output_ratio=(0.5, 0.6, 0.7), return_indices=True)
        return (lib.nn.functional.fractional_max_pool3d(x, 2, output_ratio=0.5),
                lib.nn.functional.fractional_max_pool3d_with_indices(x, (3, 2, 2), output_size=4), m(x),
                lib.nn.FractionalMaxPool2d(2, output_size=3)(x[0]))
    same(lambda: fn(mt), lambda: fn(torch), cmp=equal)


def test_fractional_gradcheck():
    x = mt.randn(1, 2, 5, 6, 7, dtype=mt.float64, requires_grad=True)
    s = mt.rand(1, 2, 3, dtype=mt.float64)
    assert mt.autograd.gradcheck(lambda a: mt.nn.functional.fractional_max_pool3d(a, 2, output_size=(3, 4, 4),
                                                                                  _random_samples=s), (x,))


@pytest.mark.parametrize("shape", [(2, 3, 6, 7, 8), (3, 5, 6, 7)])
def test_max_unpool3d_inverts_max_pool3d(shape):
    x = np.random.default_rng(1).standard_normal(shape)
    res = []
    for lib in (mt, torch):
        xt = lib.tensor(x, requires_grad=True)
        out, idx = lib.nn.functional.max_pool3d(xt, 2, stride=2, padding=1, return_indices=True)
        up = lib.nn.MaxUnpool3d(2, stride=2, padding=1)(out, idx, output_size=xt.shape[-3:])
        up.sum().backward()
        res.append((up.detach(), lib.nn.functional.max_unpool3d(out, idx, (2, 2, 2), 2, 1, list(xt.shape[-3:])), xt.grad))
    equal(res[0], res[1])


def test_modules():
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 7, 8))
    for make in (lambda nn: nn.MaxPool3d(2, stride=1, padding=1, dilation=2, return_indices=True, ceil_mode=True),
                 lambda nn: nn.AvgPool3d((2, 3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False,
                                         divisor_override=3),
                 lambda nn: nn.AdaptiveAvgPool3d((3, None, 2)), lambda nn: nn.AdaptiveMaxPool3d(3, return_indices=True),
                 lambda nn: nn.LPPool3d(2, 2, stride=1)):
        ms, ts = make(mt.nn), make(torch.nn)
        assert repr(ms) == repr(ts) and ms.__constants__ == ts.__constants__
        equal(ms(mt.tensor(x).abs()), ts(torch.tensor(x).abs()), 1e-12)
    assert repr(mt.nn.MaxUnpool3d(2)) == repr(torch.nn.MaxUnpool3d(2))
    for args in ((0,), (2,), (2, 2, 0.5), (2, None, 1.5), ((2, 0, 1), 2)):
        same(lambda: mt.nn.FractionalMaxPool3d(*args), lambda: torch.nn.FractionalMaxPool3d(*args),
             cmp=lambda m, t: None)
        same(lambda: mt.nn.FractionalMaxPool2d(*args[:3]), lambda: torch.nn.FractionalMaxPool2d(*args[:3]),
             cmp=lambda m, t: None)


def test_torch_namespace():
    x = np.random.default_rng(3).standard_normal((2, 3, 5, 6, 7))
    equal(mt.max_pool3d(mt.tensor(x), 2, (), 1, 1, True), torch.max_pool3d(torch.tensor(x), 2, (), 1, 1, True))
