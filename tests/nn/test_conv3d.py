"""3-D convolution against live PyTorch, beside the shared cases (F.conv3d/conv_transpose3d values and
gradients in test_functional_conv_loss.py, the modules in test_conv_pool_modules.py): torch.conv3d and
torch.convolution, channels_last_3d, gradcheck and gradgradcheck in float64, double backward,
ConvTranspose3d's output_size, and error texts in PyTorch's order (with the kernel checks that an
empty input skips, in 1-D and 2-D too)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
import mindtorch_v2.nn.functional as MF

torch = pytest.importorskip("torch")

from fdiff import Arg, F, diff, errors_match, rnd  # noqa: E402
from modcmp import compare, randn, tensor  # noqa: E402

def test_torch_namespace_and_convolution():
    x, w, wt = Arg(rnd(2, 3, 4, 5, 4), grad=True), Arg(rnd(4, 3, 2, 2, 2), grad=True), Arg(rnd(3, 2, 2, 2, 2), grad=True)
    b = Arg(rnd(4), grad=True)
    diff(lambda L, x, w, b: L.conv3d(x, w, b, 1, 1, 2, 1), x, w, b)
    diff(lambda L, x, w: L.conv_transpose3d(x, w, None, 2, 0, 1, 1, 1), x, wt)
    diff(lambda L, x, w, b: L.convolution(x, w, b, [1, 2, 1], [0, 1, 0], [1, 1, 2], False, [0, 0, 0], 1), x, w, b)
    diff(lambda L, x, w: L.convolution(x, w, None, [2, 2, 2], [1, 1, 1], [1, 1, 1], True, [1, 0, 1], 1), x, wt)


def test_channels_last_3d():
    x = Arg(rnd(2, 3, 4, 5, 6), grad=True)
    w = Arg(rnd(4, 3, 2, 3, 2), grad=True)
    cl = lambda L, t: t.to(memory_format=L.channels_last_3d)  # noqa: E731
    rm, rt = diff(lambda L, x, w: F(L).conv3d(cl(L, x), cl(L, w), padding=1), x, w)
    assert rm.is_contiguous() == rt.is_contiguous()
    assert rm.is_contiguous(memory_format=mt.channels_last_3d) == rt.is_contiguous(memory_format=torch.channels_last_3d)


def _gradcheck(op, xs, ws, kw, bias):
    gen = np.random.default_rng(0)
    x = mt.tensor(gen.standard_normal(xs)).requires_grad_()
    w = mt.tensor(gen.standard_normal(ws)).requires_grad_()
    cout = ws[1] * kw.get("groups", 1) if op.startswith("conv_t") else ws[0]
    args = (x, w, mt.tensor(gen.standard_normal(cout)).requires_grad_()) if bias else (x, w)
    f = lambda *a: getattr(MF, op)(*a, **kw)  # noqa: E731
    assert mt.autograd.gradcheck(f, args)
    assert mt.autograd.gradgradcheck(f, args)


@pytest.mark.parametrize("op,xs,ws,kw,bias", [
    ("conv3d", (2, 2, 3, 3, 3), (2, 2, 2, 2, 2), {}, True),
    ("conv3d", (1, 4, 4, 3, 3), (2, 2, 2, 1, 2), dict(stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 1, 2), groups=2),
     True),
    ("conv3d", (2, 3, 3, 2), (2, 2, 2, 1, 2), dict(padding="same"), False),
    ("conv_transpose3d", (1, 2, 2, 2, 2), (2, 2, 2, 2, 2), dict(stride=2, output_padding=1), True),
    ("conv_transpose3d", (1, 4, 2, 3, 2), (4, 1, 2, 2, 1), dict(groups=2, padding=(0, 1, 0), dilation=(2, 1, 1)),
     False),
])
def test_gradcheck_gradgradcheck(op, xs, ws, kw, bias):
    _gradcheck(op, xs, ws, kw, bias)


def test_double_backward_against_pytorch():
    """The recorded backward's own gradient (ConvolutionBackwardBackward0) against PyTorch's."""
    def run(L):
        gen = np.random.default_rng(5)
        x = L.tensor(gen.standard_normal((2, 2, 4, 3, 3))).requires_grad_()
        w = L.tensor(gen.standard_normal((3, 2, 2, 2, 2))).requires_grad_()
        y = L.nn.functional.conv3d(x, w, stride=(1, 2, 1), padding=1)
        gx, gw = L.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        names = (type(gx.grad_fn).__name__, type(y.grad_fn).__name__)
        return names, [t.detach().numpy() for t in L.autograd.grad((gx ** 2).sum() + (gw ** 3).sum(), (x, w))]
    (nm, rm), (nt, rt) = run(mt), run(torch)
    assert nm == nt
    for a, b in zip(rm, rt):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


X3 = randn((2, 4, 5, 6, 5))


def test_conv_transpose3d_output_size():
    ctor = lambda L: L.nn.ConvTranspose3d(4, 3, 3, stride=2)  # noqa: E731
    for size in ([11, 13, 11], [2, 3, 12, 14, 12]):
        compare(torch, ctor, [X3], fwd=lambda mod, x, s=size: mod(x, output_size=s))
    for L in (mt, torch):
        with pytest.raises(ValueError, match="ConvTranspose3D: for 5D input, output_size must have 3 or 5 elements"):
            ctor(L)(tensor(L, X3), output_size=[1, 2])
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose3d'):
            L.nn.ConvTranspose3d(4, 6, 3, padding_mode="reflect")


def test_errors_3d():
    x, w = Arg(rnd(2, 3, 5, 5, 5)), Arg(rnd(4, 3, 2, 2, 2))
    wt = Arg(rnd(3, 4, 2, 2, 2))
    cases = [
        lambda L, x, w: F(L).conv3d(x[:, :2], w),
        lambda L, x, w: F(L).conv3d(x, w, w[0, 0, 0, 0]),
        lambda L, x, w: F(L).conv3d(x, w, w[:, 0, 0, 0, 0].float()),
        lambda L, x, w: F(L).conv3d(x[0, 0], w, w[:, 0, 0, 0, 0].float()),  # the bias type is checked first
        lambda L, x, w: F(L).conv3d(x[:, :, :1], w),
        lambda L, x, w: F(L).conv3d(x, w, padding=-1),
        lambda L, x, w: F(L).conv3d(x, w, stride=0),
        lambda L, x, w: F(L).conv3d(x, w, dilation=-1),
        lambda L, x, w: F(L).conv3d(x, w, dilation=(1, 0, 1)),
        lambda L, x, w: F(L).conv3d(x.float(), w.float(), dilation=0),
        lambda L, x, w: F(L).conv3d(x, w.float(), dilation=0),  # the kernel's dilation check comes first
        lambda L, x, w: F(L).conv3d(x, w, groups=0),
        lambda L, x, w: F(L).conv3d(x, w, groups=3),
        lambda L, x, w: F(L).conv3d(x, w[:1], groups=2),
        lambda L, x, w: F(L).conv3d(x[0, 0], w),
        lambda L, x, w: F(L).conv3d(x.unsqueeze(0), w),
        lambda L, x, w: F(L).conv3d(x, w[:, :, 0]),
        lambda L, x, w: F(L).conv3d(x, w.float()),
        lambda L, x, w: F(L).conv3d(x.float(), w.half()),
        lambda L, x, w: F(L).conv3d(x.bfloat16(), w.float()),
        lambda L, x, w: F(L).conv3d(x, w, padding="same", stride=2),
        lambda L, x, w: F(L).conv3d(x, w, padding="foo"),
        lambda L, x, w: F(L).conv3d(x, w, stride=(1, 1)),
        lambda L, x, w: F(L).conv3d(x, w, padding=(1, 1, 1, 1)),
        lambda L, x, w: F(L).conv3d(x, w[:0]),
    ]
    for fn in cases:
        errors_match(fn, x, w)
    tcases = [
        lambda L, x, w: F(L).conv_transpose3d(x[:, :2], w),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, w[0, 0, 0, 0]),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, output_padding=1),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, stride=(1, 2, 1), output_padding=(0, 1, 1)),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, output_padding=-1),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, dilation=(0, 1, 1), output_padding=1),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w[:, :0]),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, padding="same"),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, padding=4),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, padding=4, output_padding=1),  # output padding first
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w.float(), padding=4),  # the output size first
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w.float()),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, w[0, :, 0, 0, 0].float()),
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3].bfloat16(), w.float()),
        lambda L, x, w: F(L).conv_transpose3d(x[:0, :3], w, padding=4),  # empty: an invalid shape
        lambda L, x, w: F(L).conv_transpose3d(x[:, :3], w, output_padding=(0, 0, 0, 0)),
    ]
    for fn in tcases:
        errors_match(fn, x, wt)


@pytest.mark.parametrize("nd", [1, 2])
def test_kernel_check_texts_1d_2d(nd):
    """The kernels' own checks name their dims: 1-D runs as 2-D with height 1, as in PyTorch."""
    x = Arg(rnd(*(2, 3) + (5,) * nd))
    w = Arg(rnd(*(3, 3) + (2,) * nd))
    conv, convt = f"conv{nd}d", f"conv_transpose{nd}d"
    cases = [
        lambda L, x, w: getattr(F(L), conv)(x, w, dilation=0),
        lambda L, x, w: getattr(F(L), conv)(x, w, dilation=-2),
        lambda L, x, w: getattr(F(L), convt)(x, w, dilation=0),
        lambda L, x, w: getattr(F(L), convt)(x, w, output_padding=1),
        lambda L, x, w: getattr(F(L), convt)(x, w[:, :0]),
        lambda L, x, w: getattr(F(L), convt)(x, w, padding=4),
        lambda L, x, w: getattr(F(L), conv)(x.bfloat16(), w),
        lambda L, x, w: getattr(F(L), conv)(x, w[0]),
    ]
    for fn in cases:
        errors_match(fn, x, w)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_empty_input_skips_kernel_checks(nd):
    """PyTorch's empty path returns before its kernels check dilation, output padding and dtypes."""
    x = Arg(np.zeros((0, 3) + (4,) * nd), grad=True)
    w = Arg(rnd(*(3, 2) + (2,) * nd), grad=True)
    conv, convt = f"conv{nd}d", f"conv_transpose{nd}d"
    diff(lambda L, x, w: getattr(F(L), conv)(x, w.transpose(0, 1), dilation=0), x, w)
    diff(lambda L, x, w: getattr(F(L), convt)(x, w, dilation=0, stride=2, output_padding=1), x, w)
    diff(lambda L, x, w: getattr(F(L), convt)(x, w.float()), x, w, grad=False)
