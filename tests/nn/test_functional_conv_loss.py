"""Losses and spatial ops of torch.nn.functional against live PyTorch: values, dtypes, shapes,
grad_fn names, gradients of every differentiable input, non-contiguous and empty inputs, error texts."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
import mindtorch_v2.nn.functional as MF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

from fdiff import TOL, Arg, F, to_np, close, diff, errors_match, rnd  # noqa: E402,F401


def targets(n, c, *spatial, seed=0, ignore=None):
    t = np.random.default_rng(seed).integers(0, c, (n,) + spatial)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return t


FLOATS = ["float64", "float32", "bfloat16", "float16"]
REDUCTIONS = ["mean", "sum", "none"]


# ---- nll_loss / cross_entropy -----------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_entropy_indices(reduction, dtype):
    x, t = Arg(rnd(6, 5), dtype, grad=True), Arg(targets(6, 5))
    diff(lambda L, x, t: F(L).cross_entropy(x, t, reduction=reduction), x, t, dtype=dtype)
    w = Arg(rnd(5, lo=0.5, hi=2.0), dtype)
    diff(lambda L, x, t, w: F(L).cross_entropy(x, t, weight=w, reduction=reduction), x, t, w, dtype=dtype)
    ti = Arg(targets(6, 5, ignore=-100))
    diff(lambda L, x, t, w: F(L).cross_entropy(x, t, weight=w, reduction=reduction), x, ti, w, dtype=dtype)
    ti = Arg(targets(6, 5, ignore=2))
    diff(lambda L, x, t: F(L).cross_entropy(x, t, ignore_index=2, reduction=reduction), x, ti, dtype=dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5,), (3, 4, 6), (2, 4, 3, 5), (2, 4, 3, 2, 2)])
def test_cross_entropy_kdim(reduction, shape):
    x = Arg(rnd(*shape), grad=True, noncontig=True)
    c = shape[0] if len(shape) == 1 else shape[1]
    t = np.random.default_rng(2).integers(0, c, () if len(shape) == 1 else (shape[0],) + shape[2:])
    if t.ndim:
        t.reshape(-1)[::4] = -100
    for ls in (0.0, 0.2):
        diff(lambda L, x, t: F(L).cross_entropy(x, t, reduction=reduction, label_smoothing=ls), x, Arg(t))
        w = Arg(rnd(c, lo=0.5, hi=2.0))
        diff(lambda L, x, t, w: F(L).cross_entropy(x, t, w, reduction=reduction, label_smoothing=ls), x, Arg(t), w)
        diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), x, Arg(t))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_cross_entropy_probabilities(reduction, dtype):
    x = Arg(rnd(4, 5), dtype, grad=True)
    p = rnd(4, 5, lo=0, hi=1)
    p = Arg(p / p.sum(1, keepdims=True), dtype, grad=True)
    w = Arg(rnd(5, lo=0.5, hi=2.0), dtype)
    for ls in (0.0, 0.3):
        diff(lambda L, x, p: F(L).cross_entropy(x, p, reduction=reduction, label_smoothing=ls), x, p, dtype=dtype)
        diff(lambda L, x, p, w: F(L).cross_entropy(x, p, w, reduction=reduction, label_smoothing=ls), x, p, w,
             dtype=dtype)
    x4, p4 = Arg(rnd(2, 3, 2, 2), grad=True), Arg(rnd(2, 3, 2, 2, lo=0, hi=1))
    diff(lambda L, x, p: F(L).cross_entropy(x, p, reduction=reduction), x4, p4)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    x = Arg(rnd(6, 5), grad=True, noncontig=True)
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), x, Arg(targets(6, 5).astype(np.uint8), "uint8"))
    w = Arg(rnd(5, lo=0.5, hi=2.0))
    diff(lambda L, x, t, w: F(L).nll_loss(x, t, w, reduction=reduction, ignore_index=1), x, Arg(targets(6, 5)), w)
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), Arg(rnd(5), grad=True), Arg(np.array([3])),
         grad=False)  # PyTorch's own backward fails on this shape pair
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), Arg(rnd(5), grad=True), Arg(np.array(3)))
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), Arg(rnd(4, 5), grad=True),
         Arg(np.full(4, -100)))  # every target ignored: mean is nan
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction, size_average=False), x, Arg(targets(6, 5)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_losses_empty_batch(reduction):
    x = Arg(np.zeros((0, 5)), grad=True)
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), x, Arg(np.zeros(0, dtype=np.int64)))
    diff(lambda L, x, t: F(L).cross_entropy(x, t, reduction=reduction), x, Arg(np.zeros(0, dtype=np.int64)))
    diff(lambda L, x, t: F(L).cross_entropy(x, t, reduction=reduction), x, Arg(np.zeros((0, 5))))
    diff(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), Arg(np.zeros((0, 5, 2, 2)), grad=True),
         Arg(np.zeros((0, 2, 2), dtype=np.int64)))
    diff(lambda L, x, t: F(L).mse_loss(x, t, reduction=reduction), x, Arg(np.zeros((0, 5))))


def test_nll_cross_entropy_errors():
    x = Arg(rnd(4, 5))
    t = Arg(np.array([1, 2, 3, 4]))
    cases = [
        (lambda L, x, t: F(L).nll_loss(x, t.int()), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t.float()), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t + 1), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t - 2), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t[:3]), x, t),
        (lambda L, x, t: F(L).nll_loss(x[0, 0], t[0]), x, t),
        (lambda L, x, t: F(L).nll_loss(x[0], t[:2]), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t.reshape(4, 1).expand(4, 2)), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t, weight=x[0, :4]), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t, weight=x[:1]), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t, weight=x[0].float()), x, t),
        (lambda L, x, t: F(L).nll_loss(x.reshape(4, 5, 1), t.reshape(4, 1).expand(4, 2)), x, t),
        (lambda L, x, t: F(L).nll_loss(x.reshape(2, 5, 2, 1), t.reshape(2, 2)), x, t),
        (lambda L, x, t: F(L).nll_loss(x.reshape(1, 5, 2, 2), t.reshape(1, 4, 1)), x, t),
        (lambda L, x, t: F(L).nll_loss(x.long(), t), x, t),
        (lambda L, x, t: F(L).nll_loss(x, t, reduction="foo"), x, t),
        (lambda L, x, t: F(L).cross_entropy(x, t.reshape(4, 1).expand(4, 5)), x, t),
        (lambda L, x, t: F(L).cross_entropy(x, x, ignore_index=1), x, t),
        (lambda L, x, t: F(L).cross_entropy(x, t, label_smoothing=1.5), x, t),
        (lambda L, x, t: F(L).cross_entropy(x, x, label_smoothing=1.5), x, t),
        (lambda L, x, t: F(L).cross_entropy(x, x, weight=x[0, :3]), x, t),
        (lambda L, x, t: F(L).cross_entropy(x.long(), t), x, t),
        (lambda L, x, t: F(L).cross_entropy(x[0, 0], t[0]), x, t),
        (lambda L, x, t: F(L).cross_entropy(x, t, weight=x[0].detach().requires_grad_()), x, t),
        (lambda L, x, t: F(L).nll_loss(x.reshape(1, 5, 2, 2), t.reshape(1, 2, 2), weight=x[0].requires_grad_()), x, t),
    ]
    for fn, *args in cases:
        errors_match(fn, *args)


# ---- losses with a fused backward, and their composed relatives ------------------------

POINTWISE = {
    "mse_loss": lambda F, x, y, r: F.mse_loss(x, y, reduction=r),
    "l1_loss": lambda F, x, y, r: F.l1_loss(x, y, reduction=r),
    "smooth_l1_loss": lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.7),
    "smooth_l1_loss_b0": lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0),
    "huber_loss": lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=0.6),
    "soft_margin_loss": lambda F, x, y, r: F.soft_margin_loss(x, y.detach().sign(), reduction=r),
    "bce_with_logits": lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction=r),
    "bce": lambda F, x, y, r: F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction=r),
    "kl_div": lambda F, x, y, r: F.kl_div(x, y.sigmoid(), reduction=r),
    "kl_div_log": lambda F, x, y, r: F.kl_div(x, y, reduction=r, log_target=True),
    "hinge_embedding_loss": lambda F, x, y, r: F.hinge_embedding_loss(x, y.sign(), margin=0.5, reduction=r),
    "poisson_nll_loss": lambda F, x, y, r: F.poisson_nll_loss(x, y.abs() * 3, reduction=r),
    "poisson_nll_loss_full": lambda F, x, y, r: F.poisson_nll_loss(x.abs(), y.abs() * 3, log_input=False, full=True,
                                                                  reduction=r),
    "gaussian_nll_loss": lambda F, x, y, r: F.gaussian_nll_loss(x, y, y.abs() + 0.1, reduction=r),
    "gaussian_nll_loss_full": lambda F, x, y, r: F.gaussian_nll_loss(x, y, 0.5, full=True, reduction=r),
}


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_losses(name, reduction):
    if reduction == "batchmean" and not name.startswith("kl_div"):
        return
    fn = POINTWISE[name]
    for dtype in ["float64", "float32"] + ([] if name.startswith("gaussian") else ["bfloat16"]):
        x, y = Arg(rnd(4, 5, seed=1), dtype, grad=True, noncontig=True), Arg(rnd(4, 5, seed=2), dtype, grad=True)
        diff(lambda L, x, y: fn(F(L), x, y, reduction), x, y, dtype=dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_losses_with_weights(reduction):
    x, y = Arg(rnd(4, 5, seed=1), grad=True), Arg(rnd(4, 5, seed=2), grad=True)
    w, pw = Arg(rnd(4, 5, lo=0.5, hi=2)), Arg(rnd(5, lo=0.5, hi=2))
    diff(lambda L, x, y, w: F(L).mse_loss(x, y, reduction=reduction, weight=w), x, y, w)
    diff(lambda L, x, y, w: F(L).l1_loss(x, y, reduction=reduction, weight=w), x, y, w)
    diff(lambda L, x, y, w: F(L).huber_loss(x, y, reduction=reduction, weight=w), x, y, w)
    diff(lambda L, x, y, w: F(L).binary_cross_entropy(x.sigmoid(), y.sigmoid(), w[0], reduction=reduction), x, y, pw)
    diff(lambda L, x, y, w, p: F(L).binary_cross_entropy_with_logits(x, y.sigmoid(), w, reduction=reduction,
                                                                      pos_weight=p), x, y, w, pw)
    diff(lambda L, x, y: F(L).mse_loss(x, y[:1], reduction=reduction), x, y)  # broadcast target
    diff(lambda L, x, y: F(L).mse_loss(x, y.float(), reduction=reduction), x, y)  # promotion


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_embedding_and_ranking_losses(reduction):
    a, b, c = (Arg(rnd(4, 6, seed=s), grad=True) for s in (1, 2, 3))
    y = Arg(np.array([1, -1, 1, -1]))
    diff(lambda L, a, b, y: F(L).cosine_embedding_loss(a, b, y, margin=0.1, reduction=reduction), a, b, y)
    diff(lambda L, a, b, y: F(L).margin_ranking_loss(a[:, 0], b[:, 0], y.double(), margin=0.2, reduction=reduction),
         a, b, y, grad=False)
    for p, swap in ((2, False), (1, True), (3, False)):
        diff(lambda L, a, b, c: F(L).triplet_margin_loss(a, b, c, p=p, swap=swap, reduction=reduction), a, b, c,
             grad=False)


def test_composed_loss_gradients():
    """margin_ranking/triplet: values and gradients (their 'none' grad_fn is clamp_min's, named apart)."""
    a, b, c = (Arg(rnd(4, 6, seed=s), grad=True) for s in (1, 2, 3))
    y = Arg(np.array([1.0, -1, 1, -1]))
    diff(lambda L, a, b, y: F(L).margin_ranking_loss(a[:, 0], b[:, 0], y, margin=0.2), a, b, y)
    diff(lambda L, a, b, c: F(L).triplet_margin_loss(a, b, c, swap=True), a, b, c)


def test_pointwise_loss_errors():
    x = Arg(rnd(4, 5))
    cases = [
        lambda L, x: F(L).mse_loss(x, x[:, :3]),
        lambda L, x: F(L).mse_loss(x.long(), x.long()),
        lambda L, x: F(L).l1_loss(x.long(), x.long()),
        lambda L, x: F(L).mse_loss(x, x, reduction="bad"),
        lambda L, x: F(L).binary_cross_entropy(x, x.sigmoid()),
        lambda L, x: F(L).binary_cross_entropy(x.sigmoid(), x),
        lambda L, x: F(L).binary_cross_entropy(x.sigmoid(), x[:1].sigmoid()),
        lambda L, x: F(L).binary_cross_entropy(x.sigmoid(), x.float().sigmoid()),
        lambda L, x: F(L).binary_cross_entropy_with_logits(x, x[:1]),
        lambda L, x: F(L).smooth_l1_loss(x, x, beta=-1.0),
        lambda L, x: F(L).huber_loss(x, x, delta=0.0),
        lambda L, x: F(L).mse_loss(x, x, weight=x[:1]),
        lambda L, x: F(L).kl_div(x.long(), x.long()),
        lambda L, x: F(L).triplet_margin_loss(x, x, x, margin=0.0),
        lambda L, x: F(L).triplet_margin_loss(x, x, x[0]),
        lambda L, x: F(L).margin_ranking_loss(x, x, x[0]),
        lambda L, x: F(L).cosine_embedding_loss(x, x, x),
        lambda L, x: F(L).cosine_embedding_loss(x, x, x[0, 0]),
        lambda L, x: F(L).gaussian_nll_loss(x, x, x[:, :2].abs()),
        lambda L, x: F(L).gaussian_nll_loss(x, x, -x.abs()),
        lambda L, x: F(L).poisson_nll_loss(x, x, reduction="bad"),
        lambda L, x: F(L).binary_cross_entropy(x.sigmoid(), x.sigmoid(), weight=x.detach().requires_grad_()),
        lambda L, x: F(L).binary_cross_entropy_with_logits(x, x, pos_weight=x[0].detach().requires_grad_()),
        lambda L, x: F(L).soft_margin_loss(x, x.detach().requires_grad_()),
    ]
    for fn in cases:
        errors_match(fn, x)


# ---- convolution ------------------------------------------------------------------------

CONVS = [  # (op, input shape, weight shape, kwargs)
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {}),
    ("conv2d", (2, 4, 9, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    ("conv2d", (2, 3, 8, 8), (4, 3, 4, 4), dict(padding="same")),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), dict(padding="same", dilation=2)),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), dict(padding="valid", stride=3)),
    ("conv2d", (2, 3, 5, 6), (6, 3, 1, 1), {}),
    ("conv2d", (2, 4, 5, 6), (4, 1, 3, 3), dict(groups=4, padding=1)),
    ("conv2d", (3, 8, 8), (4, 3, 3, 3), {}),  # unbatched
    ("conv2d", (0, 3, 8, 8), (4, 3, 3, 3), {}),  # empty batch
    ("conv1d", (2, 3, 10), (4, 3, 3), dict(stride=2, padding=1)),
    ("conv1d", (2, 4, 10), (4, 2, 2), dict(padding="same", dilation=3, groups=2)),
    ("conv1d", (3, 10), (4, 3, 3), {}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), dict(stride=2, padding=1, output_padding=1, groups=2,
                                                          dilation=(1, 2))),
    ("conv_transpose2d", (2, 3, 4, 4), (3, 5, 1, 1), {}),
    ("conv_transpose2d", (3, 4, 4), (3, 2, 3, 3), dict(stride=2)),
    ("conv_transpose1d", (2, 3, 7), (3, 2, 3), dict(stride=3, output_padding=2)),
    ("conv_transpose1d", (2, 4, 7), (4, 1, 4), dict(padding=1, groups=2, dilation=2)),
    # float32 3x3 stride 1 with 16+ channels a side runs Winograd F(2x2, 3x3) (its input gradient too):
    # odd sizes (partial tiles), channel counts off the 16 lanes, each padding, several blocks of tiles
    ("conv2d", (2, 16, 7, 9), (20, 16, 3, 3), dict(padding=1)),
    ("conv2d", (1, 17, 6, 5), (33, 17, 3, 3), {}),
    ("conv2d", (1, 17, 6, 5), (16, 17, 3, 3), dict(padding=(2, 0))),
    ("conv2d", (16, 6, 5), (18, 16, 3, 3), dict(padding="same")),
    ("conv2d", (1, 128, 9, 26), (120, 128, 3, 3), dict(padding=1)),
    ("conv_transpose2d", (2, 18, 5, 6), (18, 16, 3, 3), dict(padding=1)),
    ("conv_transpose2d", (1, 16, 4, 5), (16, 24, 3, 3), {}),
    ("conv_transpose2d", (1, 16, 6, 7), (16, 17, 3, 3), dict(padding=(2, 1))),
    # 3-D: the same kernel with a depth
    ("conv3d", (2, 3, 5, 6, 4), (4, 3, 3, 2, 3), {}),
    ("conv3d", (2, 4, 7, 6, 5), (6, 2, 3, 2, 2), dict(stride=(2, 1, 3), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    ("conv3d", (1, 3, 5, 5, 5), (4, 3, 2, 3, 4), dict(padding="same")),
    ("conv3d", (1, 3, 6, 5, 5), (4, 3, 3, 3, 3), dict(padding="same", dilation=2)),
    ("conv3d", (2, 3, 6, 6, 6), (4, 3, 2, 2, 2), dict(padding="valid", stride=2)),
    ("conv3d", (2, 3, 3, 4, 5), (5, 3, 1, 1, 1), {}),  # 1x1x1: no im2col
    ("conv3d", (2, 4, 4, 4, 4), (4, 1, 3, 3, 3), dict(groups=4, padding=1)),  # depthwise
    ("conv3d", (3, 4, 5, 6), (4, 3, 2, 2, 2), dict(stride=2)),  # unbatched
    ("conv3d", (0, 3, 4, 4, 4), (4, 3, 2, 2, 2), {}),  # empty batch
    ("conv3d", (1, 3, 2, 14, 14), (8, 3, 2, 7, 7), dict(stride=(2, 7, 7))),  # a video patch embedding
    ("conv_transpose3d", (2, 4, 3, 4, 3), (4, 3, 3, 2, 3), dict(stride=2, padding=1, output_padding=1, groups=2,
                                                                dilation=(1, 2, 1))),
    ("conv_transpose3d", (2, 3, 3, 4, 2), (3, 5, 1, 1, 1), {}),
    ("conv_transpose3d", (3, 2, 3, 2), (3, 2, 2, 3, 2), dict(stride=(1, 2, 3), output_padding=(0, 1, 2))),
    ("conv_transpose3d", (0, 3, 2, 2, 2), (3, 2, 2, 2, 2), dict(stride=2)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv(case, dtype):
    op, xs, ws, kw = CONVS[case]
    groups = kw.get("groups", 1)
    cout = ws[1] * groups if op.startswith("conv_t") else ws[0]
    fan_in = int(np.prod(ws[1:])) * (groups if op.startswith("conv_t") else 1)
    positions = int(np.prod(xs)) // max(xs[-len(ws) + 1], 1)  # the weight gradient sums these
    x = Arg(rnd(*xs, seed=1) * min(1.0, 4 / np.sqrt(max(positions, 1))), dtype, grad=True, noncontig=case % 2 == 0)
    w = Arg(rnd(*ws, seed=2) * 2.5 / np.sqrt(fan_in), dtype, grad=True, noncontig=case % 3 == 0)  # outputs ~x
    b = Arg(rnd(cout, seed=3), dtype, grad=True)
    # PyTorch's float16 convolution rounds intermediates on CPUs without AVX512-FP16 (its input gradient
    # errs 2-4x ours there against float64): the half reference is its float32 result, rounded once
    ref = "float32" if dtype == "float16" else None
    diff(lambda L, x, w, b: getattr(F(L), op)(x, w, b, **kw), x, w, b, dtype=dtype, ref=ref)
    diff(lambda L, x, w: getattr(F(L), op)(x, w, **kw), x, w, dtype=dtype, ref=ref)


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_winograd_same_bits_at_any_thread_count(transposed):
    """The Winograd path's outputs and gradients do not depend on how many threads ran it."""
    x0 = mt.tensor(rnd(3, 32 if transposed else 24, 11, 14, seed=4).tolist())
    w0 = mt.tensor((rnd(32, 24, 3, 3, seed=5) * 0.1).tolist())  # [in, out] transposed, [out, in] if not
    f = MF.conv_transpose2d if transposed else MF.conv2d
    runs = []
    for n in (1, 2, 3):
        old = mt.get_num_threads()
        mt.set_num_threads(n)
        try:
            x, w = x0.detach().requires_grad_(), w0.detach().requires_grad_()
            y = f(x, w, padding=1)
            (y * y).sum().backward()
            runs.append([t.tolist() for t in (y, x.grad, w.grad)])
        finally:
            mt.set_num_threads(old)
    assert runs[0] == runs[1] == runs[2]


def test_conv_errors():
    x, w = Arg(rnd(2, 3, 8, 8)), Arg(rnd(4, 3, 3, 3))
    x6 = Arg(rnd(2, 6, 8, 8))
    errors_match(lambda L, x, w: F(L).conv2d(x, w[:3], groups=2), x6, w)
    errors_match(lambda L, x, w: F(L).conv2d(x, w[:1], groups=2), x6, w)
    cases = [
        # padding whose double passes int64: PyTorch's own guard, both kinds
        lambda L, x, w: F(L).conv2d(x, w, padding=2 ** 63 - 1),
        lambda L, x, w: F(L).conv2d(x, w, padding=(1, 2 ** 62)),
        lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), padding=2 ** 62),
        lambda L, x, w: F(L).conv2d(x, w, dilation=2 ** 61),  # its kernel extent 2^62 + 1, in int64
        lambda L, x, w: F(L).conv2d(x[:, :2], w),
        lambda L, x, w: F(L).conv2d(x, w, w[0, 0, 0]),
        lambda L, x, w: F(L).conv2d(x[:, :, :2, :2], w),
        lambda L, x, w: F(L).conv2d(x, w, padding=-1),
        lambda L, x, w: F(L).conv2d(x, w, stride=0),
        lambda L, x, w: F(L).conv2d(x.float(), w.float(), dilation=0),  # float64 takes another path
        lambda L, x, w: F(L).conv2d(x, w, groups=0),
        lambda L, x, w: F(L).conv2d(x[0, 0], w),
        lambda L, x, w: F(L).conv2d(x.unsqueeze(0), w),
        lambda L, x, w: F(L).conv2d(x, w[:, :, 0]),
        lambda L, x, w: F(L).conv2d(x, w.float()),
        lambda L, x, w: F(L).conv2d(x, w, w[:, 0, 0, 0].float()),
        lambda L, x, w: F(L).conv2d(x, w, padding="same", stride=2),
        lambda L, x, w: F(L).conv2d(x, w, padding="foo"),
        lambda L, x, w: F(L).conv2d(x, w, stride=(1, 1, 1)),
        lambda L, x, w: F(L).conv2d(x, w[:0]),
        lambda L, x, w: F(L).conv1d(x, w),
        lambda L, x, w: F(L).conv1d(x[:, :, 0], w[:, :, 0], w[:2, 0, 0, 0]),
        lambda L, x, w: F(L).conv_transpose2d(x, w),
        lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), w[0, 0, 0]),
        lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), output_padding=1),
        lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), stride=2, output_padding=2),
        lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), stride=2, output_padding=-1),
        lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), padding="same"),
        lambda L, x, w: F(L).conv_transpose2d(x[:1, :, :1, :1], w.transpose(0, 1)[:, :, :1, :1], padding=2),
        lambda L, x, w: F(L).conv_transpose1d(x, w),
        lambda L, x, w: F(L).conv_transpose1d(x[:, :, 0], w.transpose(0, 1)[:, :, 0], stride=2, output_padding=3),
    ]
    for fn in cases:
        errors_match(fn, x, w)


UNFOLDS = [((2, 3, 6, 7), dict(kernel_size=2)), ((2, 3, 6, 7), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1,
                                                                     stride=(1, 2))),
           ((3, 5, 5), dict(kernel_size=3, padding=1)), ((0, 3, 5, 5), dict(kernel_size=2))]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("case", range(len(UNFOLDS)))
def test_unfold_fold(case, dtype):
    shape, kw = UNFOLDS[case]
    x = Arg(rnd(*shape), dtype, grad=True, noncontig=True)
    rm, rt = diff(lambda L, x: F(L).unfold(x, **kw), x, dtype=dtype)
    cols = Arg(to_np(rt), dtype, grad=True, noncontig=True)
    diff(lambda L, c: F(L).fold(c, shape[-2:], **kw), cols, dtype=dtype)


def test_unfold_fold_double_backward():
    x = Arg(rnd(1, 2, 4, 4), grad=True)
    mx, tx = x.make(mt), x.make(torch)
    for L, v in ((mt, mx), (torch, tx)):
        y = F(L).unfold(v, 2, padding=1)
        (g,) = L.autograd.grad((y * y).sum(), v, create_graph=True)
        (g * g).sum().backward()
    close(mx.grad, tx.grad, "float64")


def test_unfold_fold_errors():
    x = Arg(rnd(2, 3, 6, 6))
    cases = [
        lambda L, x: F(L).unfold(x, 0),
        lambda L, x: F(L).unfold(x, 2, stride=0),
        lambda L, x: F(L).unfold(x, 2, dilation=0),
        lambda L, x: F(L).unfold(x, 2, padding=-1),
        lambda L, x: F(L).unfold(x, 7),
        lambda L, x: F(L).unfold(x[0, 0], 2),
        lambda L, x: F(L).unfold(x.long(), 2),
        lambda L, x: F(L).fold(x.reshape(2, 27, 4), (4, 4), 2),
        lambda L, x: F(L).fold(x.reshape(2, 12, 9), (5, 5), 2),
        lambda L, x: F(L).fold(x.reshape(2, 12, 9).long(), (4, 4), 2),
        lambda L, x: F(L).fold(x.reshape(2, 12, 9), (1, 1), 2),
        lambda L, x: F(L).fold(x.reshape(2, 12, 9), (0, 4), 2),
        lambda L, x: F(L).fold(x, (4, 4), 2),
        # kernel products past uint64 (PyTorch's own guard) and past int64 only (its divisibility check)
        lambda L, x: F(L).fold(x.reshape(2, 12, 9), (5, 5), (2 ** 32, 2 ** 32)),
        lambda L, x: F(L).fold(x.reshape(2, 12, 9), (5, 5), (2 ** 62, 2)),
    ]
    for fn in cases:
        errors_match(fn, x)


# ---- pooling ------------------------------------------------------------------------------

POOLS = [  # (op, input shape, kwargs)
    ("max_pool2d", (2, 3, 7, 6), dict(kernel_size=2)),
    ("max_pool2d", (2, 3, 7, 6), dict(kernel_size=(3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True)),
    ("max_pool2d", (3, 7, 6), dict(kernel_size=3, stride=2, ceil_mode=True, return_indices=True)),
    ("max_pool2d", (0, 3, 4, 4), dict(kernel_size=2)),
    ("max_pool1d", (2, 3, 9), dict(kernel_size=3, stride=2, padding=1, dilation=2, return_indices=True)),
    ("max_pool1d", (3, 9), dict(kernel_size=2, ceil_mode=True)),
    ("avg_pool2d", (2, 3, 7, 6), dict(kernel_size=2)),
    ("avg_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", (2, 3, 7, 6), dict(kernel_size=(3, 2), padding=(1, 1), divisor_override=5)),
    ("avg_pool2d", (3, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool1d", (2, 3, 9), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg_pool1d", (3, 9), dict(kernel_size=4, ceil_mode=True)),
    ("adaptive_avg_pool2d", (2, 3, 7, 6), dict(output_size=(3, 4))),
    ("adaptive_avg_pool2d", (2, 3, 7, 6), dict(output_size=1)),
    ("adaptive_avg_pool2d", (3, 5, 6), dict(output_size=(None, 4))),
    ("adaptive_avg_pool2d", (2, 3, 4, 4), dict(output_size=7)),
    ("adaptive_avg_pool1d", (2, 3, 9), dict(output_size=4)),
    ("adaptive_avg_pool1d", (3, 9), dict(output_size=1)),
    ("adaptive_max_pool2d", (2, 3, 7, 6), dict(output_size=(3, 4), return_indices=True)),
    ("adaptive_max_pool2d", (3, 5, 6), dict(output_size=(None, 4))),
    ("adaptive_max_pool1d", (2, 3, 9), dict(output_size=4, return_indices=True)),
    ("adaptive_max_pool1d", (3, 9), dict(output_size=2)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_pool(case, dtype):
    op, shape, kw = POOLS[case]
    x = Arg(rnd(*shape, seed=case), dtype, grad=True, noncontig=case % 2 == 0)
    diff(lambda L, x: getattr(F(L), op)(x, **kw), x, dtype=dtype)


def test_max_pool_nan_and_ties():
    a = np.array([[[[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, 2.0, 2.0], [5.0, 5.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]])
    x = Arg(a, grad=True)
    diff(lambda L, x: F(L).max_pool2d(x, 2, return_indices=True), x)
    diff(lambda L, x: F(L).adaptive_max_pool2d(x, 3, return_indices=True), x)


def test_pool_errors():
    x = Arg(rnd(2, 3, 6, 6))
    cases = [
        lambda L, x: F(L).max_pool2d(x, 0),
        lambda L, x: F(L).max_pool2d(x, 2, 0),
        lambda L, x: F(L).max_pool2d(x, 0, 1),
        lambda L, x: F(L).max_pool2d(x, 2, dilation=0),
        # window numbers past a C int: PyTorch reads them as int (not its plain max_pool1d, below)
        lambda L, x: F(L).max_pool2d(x, 2, 2 ** 31),
        lambda L, x: F(L).max_pool2d(x, 2, 1, 0, 2 ** 31),
        lambda L, x: F(L).max_pool2d(x, (2, -1), (2 ** 63 - 1, 1)),
        lambda L, x: F(L).max_pool2d(x, 2, 1, -2 ** 31 - 1),
        lambda L, x: F(L).avg_pool2d(x, 2 ** 31),
        lambda L, x: F(L).avg_pool2d(x, 2, 1, 2 ** 31),
        lambda L, x: F(L).avg_pool1d(x[0], 2, 2 ** 31),
        lambda L, x: F(L).max_pool1d(x[0], 2, 2 ** 31, return_indices=True),
        lambda L, x: F(L).max_pool3d(x[None], 2, 2 ** 31),
        lambda L, x: F(L).avg_pool3d(x[None], (2, 2, 2 ** 31)),
        lambda L, x: F(L).lp_pool2d(x, 2.0, 2 ** 31),
        lambda L, x: F(L).adaptive_avg_pool2d(x, 2 ** 31),  # PyTorch resizes: its numel check first
        lambda L, x: F(L).adaptive_avg_pool3d(x, (2 ** 62, 2, 2)),
        lambda L, x: F(L).adaptive_max_pool2d(x, 2 ** 31),
        lambda L, x: F(L).max_pool2d(x, 2, padding=2),
        lambda L, x: F(L).max_pool2d(x[:, :, :1, :1], 3),
        lambda L, x: F(L).max_pool2d(x[0, 0], 2),
        lambda L, x: F(L).max_pool2d(x[None], 2),
        lambda L, x: F(L).max_pool2d(x, (2, 2, 2)),
        lambda L, x: F(L).max_pool2d(x, 2, (1, 1, 1)),
        lambda L, x: F(L).max_pool2d(x[:, :0], 2),
        lambda L, x: F(L).avg_pool2d(x, 2, padding=2),
        lambda L, x: F(L).avg_pool2d(x, 2, divisor_override=0),
        lambda L, x: F(L).avg_pool2d(x[:, :, :1, :1], 3),
        lambda L, x: F(L).avg_pool2d(x[0, 0], 2),
        lambda L, x: F(L).avg_pool1d(x, 2),
        lambda L, x: F(L).avg_pool1d(x[0], (2, 2)),
        lambda L, x: F(L).max_pool1d(x, 2),
        lambda L, x: F(L).adaptive_avg_pool2d(x[0, 0], 2),
        lambda L, x: F(L).adaptive_avg_pool2d(x, -1),
        lambda L, x: F(L).adaptive_avg_pool2d(x, (1, 2, 3)),
        lambda L, x: F(L).adaptive_max_pool2d(x[0, 0], 2),
        lambda L, x: F(L).adaptive_max_pool2d(x[:, :0], 2),
        lambda L, x: F(L).adaptive_max_pool2d(x, -1),
        lambda L, x: F(L).adaptive_max_pool1d(x, 2),
        lambda L, x: F(L).adaptive_avg_pool1d(x, 2),
    ]
    for fn in cases:
        errors_match(fn, x)


def test_plain_max_pool1d_takes_int64_windows():
    """without indices PyTorch's max_pool1d runs its own kernel, whose numbers are int64"""
    x = rnd(2, 3, 6)
    for args in ((2, 2 ** 31), (2, 2 ** 63 - 1), (3, 2 ** 31, 1)):
        np.testing.assert_array_equal(MF.max_pool1d(mt.tensor(x), *args).numpy(),
                                      TF.max_pool1d(torch.tensor(x), *args).numpy())


def test_conv_dilation_whose_kernel_extent_passes_int64():
    """PyTorch's dilation * (k - 1) + 1 wraps there (undefined behaviour: a nonsense 6x6 result); ours is
    computed exactly and refused with PyTorch's message, the extent printed in full"""
    x, w = mt.ones(1, 2, 5, 5), mt.ones(1, 2, 2, 2)
    with pytest.raises(RuntimeError, match=r"^Calculated padded input size per channel: \(5 x 5\). Kernel size: "
                                           r"\(9223372036854775808 x 2\). Kernel size can't be greater"):
        MF.conv2d(x, w, dilation=(2 ** 63 - 1, 1))


# ---- padding --------------------------------------------------------------------------------

PADS = [  # (input shape, pad, modes)
    ((2, 3, 5), (1, 2), ("constant", "reflect", "replicate", "circular")),
    ((3, 5), (2, 0), ("constant", "reflect", "replicate", "circular")),
    ((2, 3, 4, 5), (1, 2, 3, 0), ("constant", "reflect", "replicate", "circular")),
    ((3, 4, 5), (-1, 2, 1, -2), ("constant", "reflect", "replicate", "circular")),
    ((1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2), ("constant", "reflect", "replicate", "circular")),
    ((2, 3, 4, 5), (1, 1, 1, 1, 1, 1, 1, 1), ("constant",)),
    ((2, 3), (0, 0, -1, 1), ("constant",)),
    ((2, 3), (5, 6), ("replicate",)),
    ((2, 3), (-2, 4), ("constant",)),  # cropped, then padded past the input
    ((2, 3), (4, -2), ("constant",)),
    ((2, 7), (6, -2), ("reflect", "replicate")),
    ((2, 7), (3, -2), ("circular",)),
    ((0, 3, 4), (1, 2), ("constant", "reflect", "replicate")),
    ((), (), ("constant",)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("case", range(len(PADS)))
def test_pad(case, dtype):
    shape, p, modes = PADS[case]
    x = Arg(rnd(*shape, seed=case), dtype, grad=True, noncontig=case % 2 == 0)
    for mode in modes:
        value = 1.5 if mode == "constant" else None
        diff(lambda L, x: F(L).pad(x, p, mode=mode, value=value), x, dtype=dtype)


def test_pad_circular_with_nothing_left_after_cropping():
    """size 2 padded by (-2, 1): PyTorch wraps an empty slice and returns uninitialised memory;
    here the positions are the fill value 0 and the gradient is 0 (a fuzzer finding: was a
    division by zero)"""
    import mindtorch_v2 as mt
    x = mt.arange(6.0).reshape(1, 3, 2).requires_grad_()
    for p in [(-2, 1), (-2, 2), (1, -2)]:
        y = mt.nn.functional.pad(x, p, mode="circular")
        assert y.shape == (1, 3, 2 + p[0] + p[1]) and not y.detach().abs().sum().item()
        y.sum().backward()
        assert x.grad.abs().sum().item() == 0


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
def test_pad_other_dtypes(dtype):
    x = Arg((rnd(2, 3, 4) * 3).astype(np.int64) % 2 if dtype == "bool" else np.abs(rnd(2, 3, 4) * 3).astype(np.int64),
            dtype)
    for mode in ("constant", "reflect", "replicate", "circular"):
        if dtype == "bool" and mode != "constant":
            continue
        diff(lambda L, x: F(L).pad(x, (1, 2, 2, 1), mode=mode, value=1 if mode == "constant" else None), x,
             dtype=dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_pad_complex(dtype):
    """16- and 8-byte elements, compared as (real, imag) pairs"""
    z = rnd(2, 3, 5) + 1j * rnd(2, 3, 5, seed=1)
    for mode, p in (("constant", (1, 2, -1, 1)), ("reflect", (2, 3)), ("replicate", (1, 2, 2, 1)), ("circular", (3, 1))):
        m = MF.pad(mt.tensor(z, dtype=getattr(mt, dtype))[:, ::2], p, mode=mode)
        t = TF.pad(torch.tensor(z, dtype=getattr(torch, dtype))[:, ::2], p, mode=mode)
        np.testing.assert_array_equal(to_np(mt.view_as_real(m)), to_np(torch.view_as_real(t)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
@pytest.mark.parametrize("value", [float("inf"), float("nan"), 2.0 ** 63, 1e10, 300.0, -1.0])
def test_pad_value_must_fit_the_dtype(dtype, value):
    """fill_(value) semantics: a value outside the dtype raises PyTorch's overflow error (not UB)"""
    x = Arg(np.ones((2, 3), dtype=np.int64), dtype)
    fn = lambda L, x: F(L).pad(x, (1, 1), value=value)  # noqa: E731
    try:
        fn(torch, x.make(torch))
    except RuntimeError:
        return errors_match(fn, x)
    diff(fn, x, dtype=dtype)


def test_pad_constant_double_backward():
    x = Arg(rnd(2, 3), grad=True)
    mx, tx = x.make(mt), x.make(torch)
    for L, v in ((mt, mx), (torch, tx)):
        y = F(L).pad(v, (1, 2, -1, 1), value=2.0)
        (g,) = L.autograd.grad((y * y * y).sum(), v, create_graph=True)
        g.sum().backward()
    close(mx.grad, tx.grad, "float64")


def test_pad_errors():
    x, x4 = Arg(rnd(1, 3, 3)), Arg(rnd(1, 2, 3, 3))
    cases = [
        lambda L, x, y: F(L).pad(x, (1, 2, 3)),
        lambda L, x, y: F(L).pad(x, (1,) * 8),
        lambda L, x, y: F(L).pad(x, (0, -4)),
        lambda L, x, y: F(L).pad(x, (3, 3), mode="reflect"),
        lambda L, x, y: F(L).pad(y, (3, 3, 1, 1), mode="reflect"),
        lambda L, x, y: F(L).pad(y, (1, 1, 3, 3), mode="reflect"),
        lambda L, x, y: F(L).pad(x, (4, 1), mode="circular"),
        lambda L, x, y: F(L).pad(x, (1, 1), mode="reflect", value=1.0),
        lambda L, x, y: F(L).pad(x, (1, 1), mode="foo"),
        lambda L, x, y: F(L).pad(x[0, 0], (1, 1), mode="reflect"),
        lambda L, x, y: F(L).pad(y, (1, 1), mode="reflect"),
        lambda L, x, y: F(L).pad(y[None], (1, 1, 1, 1), mode="replicate"),
        lambda L, x, y: F(L).pad(x, (1, 1, 1, 1, 1, 1), mode="circular"),
        lambda L, x, y: F(L).pad(x[:, :0], (1, 1), mode="reflect"),
        lambda L, x, y: F(L).pad(x[:, :, :0], (1, 1), mode="replicate"),
        lambda L, x, y: F(L).pad(x, (1.5, 1)),
        # PyTorch's checks of the mode come before the padded size's overflow
        lambda L, x, y: F(L).pad(x, (2 ** 63 - 1, 0), mode="reflect"),
        lambda L, x, y: F(L).pad(x, (2 ** 63 - 1, 0), mode="circular"),
        lambda L, x, y: F(L).pad(y, (2 ** 63 - 1, 0), mode="replicate"),
    ]
    for fn in cases:
        errors_match(fn, x, x4)


# ---- interpolation ----------------------------------------------------------------------------

INTERP = [  # (input shape, kwargs)
    ((2, 3, 5), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 5), dict(size=7, mode="nearest")),
    ((2, 3, 7), dict(size=3, mode="nearest-exact")),
    ((2, 3, 5), dict(scale_factor=1.7, mode="nearest-exact")),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear")),
    ((2, 3, 5), dict(size=8, mode="linear", align_corners=True)),
    ((2, 3, 8), dict(size=3, mode="linear")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 4, 5), dict(size=(7, 3), mode="nearest")),
    ((2, 3, 4, 5), dict(scale_factor=(1.5, 0.6), mode="nearest-exact")),
    ((2, 3, 4, 5), dict(scale_factor=1.3, mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=1.3, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 4, 5), dict(size=(9, 2), mode="bilinear", align_corners=True)),
    ((2, 3, 4, 5), dict(size=(1, 1), mode="bilinear", align_corners=True)),
    ((2, 3, 6, 6), dict(size=(3, 2), mode="area")),
    ((0, 3, 4, 5), dict(scale_factor=2, mode="bilinear")),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate(case, dtype):
    shape, kw = INTERP[case]
    x = Arg(rnd(*shape, seed=case), dtype, grad=True, noncontig=case % 2 == 0)
    diff(lambda L, x: F(L).interpolate(x, **kw), x, dtype=dtype)


INTERP_AA = [  # (input shape, kwargs) with antialias=True: PyTorch's separable filters
    ((2, 3, 12, 10), dict(size=(5, 4), mode="bilinear")),
    ((2, 3, 5, 6), dict(size=(9, 13), mode="bilinear")),
    ((1, 2, 9, 7), dict(size=(9, 3), mode="bicubic")),  # the height stays: one pass
    ((2, 3, 12, 10), dict(scale_factor=(0.45, 0.7), mode="bicubic")),
    ((2, 3, 12, 10), dict(size=(4, 17), mode="bicubic", align_corners=True)),
    ((1, 2, 7, 8), dict(scale_factor=0.3, mode="bilinear", align_corners=True)),
    ((1, 2, 5, 5), dict(size=(5, 5), mode="bicubic")),
    ((1, 1, 40, 3), dict(size=(3, 2), mode="bilinear")),  # wide filters
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", range(len(INTERP_AA)))
def test_interpolate_antialias(case, dtype):
    shape, kw = INTERP_AA[case]
    x = Arg(rnd(*shape, seed=case), dtype, grad=True, noncontig=case % 2 == 0)
    diff(lambda L, x: F(L).interpolate(x, antialias=True, **kw), x, dtype=dtype)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias_gradcheck(mode):
    x = mt.tensor(rnd(1, 2, 7, 6).tolist(), dtype=mt.float64, requires_grad=True)
    for size in ((3, 9), (7, 2)):
        fn = lambda x: MF.interpolate(x, size=size, mode=mode, antialias=True)  # noqa: E731
        assert mt.autograd.gradcheck(fn, (x,))
        assert mt.autograd.gradgradcheck(fn, (x,))


BICUBIC = [  # (input shape, kwargs) for plain bicubic (upsample_bicubic2d)
    ((2, 3, 5, 7), dict(size=(9, 11))),
    ((2, 3, 5, 7), dict(size=(9, 11), align_corners=True)),
    ((1, 2, 12, 10), dict(size=(5, 3))),  # down: the taps reach past the border and are clamped
    ((1, 2, 12, 10), dict(size=(4, 7), align_corners=True)),
    ((2, 2, 6, 5), dict(scale_factor=1.7)),
    ((2, 2, 6, 5), dict(scale_factor=(0.6, 2.3), recompute_scale_factor=True)),
    ((2, 2, 6, 5), dict(scale_factor=(0.6, 2.3), recompute_scale_factor=False, align_corners=True)),
    ((1, 3, 4, 4), dict(size=(4, 4))),
    ((1, 1, 1, 3), dict(size=(3, 1))),  # one-pixel input and output: align_corners' scale 0
    ((1, 1, 1, 3), dict(size=(3, 1), align_corners=True)),
    ((0, 3, 4, 5), dict(scale_factor=2)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("case", range(len(BICUBIC)))
def test_interpolate_bicubic(case, dtype):
    shape, kw = BICUBIC[case]
    x = Arg(rnd(*shape, seed=case), dtype, grad=True, noncontig=case % 2 == 0)
    diff(lambda L, x: F(L).interpolate(x, mode="bicubic", **kw), x, dtype=dtype)


def test_interpolate_bicubic_channels_last_and_grads():
    a = rnd(2, 3, 6, 5, seed=3)
    for cl in (False, True):
        def fn(L, x):
            if cl:
                x = x.contiguous(memory_format=L.channels_last)
            return F(L).interpolate(x, size=(8, 3), mode="bicubic")
        diff(fn, Arg(a, "float32", grad=True), dtype="float32")
    x = mt.tensor(rnd(1, 2, 5, 4).tolist(), dtype=mt.float64, requires_grad=True)
    for kw in (dict(size=(8, 3)), dict(size=(3, 7), align_corners=True), dict(scale_factor=0.7)):
        fn = lambda x: MF.interpolate(x, mode="bicubic", **kw)  # noqa: E731
        assert mt.autograd.gradcheck(fn, (x,))
        assert mt.autograd.gradgradcheck(fn, (x,))


def test_interpolate_bicubic_errors():
    x = Arg(rnd(2, 3, 4, 5))
    for fn in (lambda L, x: F(L).interpolate(x.to(L.int32), size=3, mode="bicubic"),
               lambda L, x: F(L).interpolate(x[0], size=3, mode="bicubic"),
               lambda L, x: F(L).interpolate(x[:, :0], size=3, mode="bicubic"),
               lambda L, x: F(L).interpolate(x, size=(3, 0), mode="bicubic")):
        errors_match(fn, x)


@pytest.mark.parametrize("scale", [1e30, -1e30, float("inf"), float("nan")])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "nearest-exact"])
def test_interpolate_scale_whose_size_passes_int64(scale, mode):
    """the scaled size is converted to int64 with PyTorch's check (Python's int() raised other errors)"""
    errors_match(lambda L, x: F(L).interpolate(x, scale_factor=scale, mode=mode), Arg(rnd(1, 2, 3, 3)))


UINT8 = [  # (input shape, kwargs): uint8 in PyTorch's int16 fixed point, equal to it exactly
    ((1, 3, 20, 17), dict(size=(7, 9))),
    ((2, 4, 6, 5), dict(size=(13, 11))),
    ((1, 5, 16, 16), dict(scale_factor=0.37)),
    ((1, 1, 10, 10), dict(size=(10, 4))),
    ((1, 3, 9, 9), dict(size=(4, 5), align_corners=True)),
    ((1, 3, 7, 11), dict(size=(30, 2))),
]


@pytest.mark.parametrize("mode, antialias", [("bilinear", False), ("bilinear", True), ("bicubic", True),
                                             ("bicubic", False), ("nearest", False), ("nearest-exact", False)])
@pytest.mark.parametrize("case", range(len(UINT8)))
def test_interpolate_uint8(case, mode, antialias):
    shape, kw = UINT8[case]
    if mode.startswith("nearest"):
        kw = {k: v for k, v in kw.items() if k != "align_corners"}
    a = np.random.default_rng(case).integers(0, 256, shape)
    a[..., ::3, ::2] = 255 * (a[..., ::3, ::2] > 127)  # hard edges: the cubic's overshoot is clamped
    for channels_last in (False, True):
        def fn(L, x):
            if channels_last:
                x = x.contiguous(memory_format=L.channels_last)
            return F(L).interpolate(x, mode=mode, antialias=antialias, **kw)
        diff(fn, Arg(a, "uint8", noncontig=case % 2 == 0), dtype="uint8", grad=False)


def test_upsample_aliases():
    x = Arg(rnd(1, 2, 3, 4), grad=True)
    diff(lambda L, x: F(L).upsample(x, scale_factor=2, mode="bilinear"), x)
    diff(lambda L, x: F(L).upsample_nearest(x, size=(5, 6)), x)
    diff(lambda L, x: F(L).upsample_bilinear(x, scale_factor=2), x)


def test_interpolate_errors():
    x = Arg(rnd(2, 3, 4, 5))
    cases = [
        lambda L, x: F(L).interpolate(x, size=3, scale_factor=2),
        lambda L, x: F(L).interpolate(x),
        lambda L, x: F(L).interpolate(x, size=(3, 4, 5)),
        lambda L, x: F(L).interpolate(x, scale_factor=(2, 2, 2)),
        lambda L, x: F(L).interpolate(x, size=3, mode="nearest", align_corners=True),
        lambda L, x: F(L).interpolate(x, size=3, recompute_scale_factor=True),
        lambda L, x: F(L).interpolate(x, size=3, mode="linear"),
        lambda L, x: F(L).interpolate(x[0], size=3, mode="bilinear"),
        lambda L, x: F(L).interpolate(x, size=3, mode="foo"),
        lambda L, x: F(L).interpolate(x, size=3, mode="nearest", antialias=True),
        lambda L, x: F(L).interpolate(x, size=0),
        lambda L, x: F(L).interpolate(x[:, :0], size=3),
        lambda L, x: F(L).interpolate(x[0], size=3, mode="bilinear", antialias=True),
        lambda L, x: F(L).interpolate(x.to(L.float16), size=3, mode="bilinear", antialias=True),
        lambda L, x: F(L).interpolate(x.to(L.bfloat16), size=3, mode="bicubic", antialias=True),
        lambda L, x: F(L).interpolate(x.to(L.int32), size=3, mode="bicubic", antialias=True),
    ]
    for fn in cases:
        errors_match(fn, x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("name, kw", [("mse_loss", {}), ("huber_loss", {"delta": 0.7}), ("huber_loss", {"delta": 1.0}),
                                      ("smooth_l1_loss", {"beta": 0.6}), ("smooth_l1_loss", {"beta": 1.0})])
def test_pointwise_losses_bitwise(name, kw, dtype):
    """One fused pass per element with PyTorch's rounding: mse rounds each step for float16/bfloat16,
    huber for bfloat16 only (delta too), smooth_l1 for float16 only; long, strided and broadcast inputs."""
    a, b = rnd(3000, seed=1) * 2, rnd(3000, seed=2)
    for sl in (slice(None), slice(None, None, 3)):
        m = getattr(MF, name)(mt.tensor(a, dtype=getattr(mt, dtype))[sl], mt.tensor(b, dtype=getattr(mt, dtype))[sl],
                              reduction="none", **kw)
        t = getattr(TF, name)(torch.tensor(a, dtype=getattr(torch, dtype))[sl],
                              torch.tensor(b, dtype=getattr(torch, dtype))[sl], reduction="none", **kw)
        np.testing.assert_array_equal(to_np(m.double()), to_np(t.double()))
    m = getattr(MF, name)(mt.tensor(a[:60].reshape(20, 3), dtype=getattr(mt, dtype)),
                          mt.tensor(b[:3], dtype=getattr(mt, dtype)).expand(20, 3), reduction="none", **kw)
    t = getattr(TF, name)(torch.tensor(a[:60].reshape(20, 3), dtype=getattr(torch, dtype)),
                          torch.tensor(b[:3], dtype=getattr(torch, dtype)).expand(20, 3), reduction="none", **kw)
    np.testing.assert_array_equal(to_np(m.double()), to_np(t.double()))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_bce_with_logits_reduced_floats_bitwise(dtype):
    """log_sigmoid as PyTorch's fused kernel (computed in float, rounded once) gives its bits for
    bfloat16/float16, with and without pos_weight"""
    a, b = rnd(4000, seed=3) * 8, rnd(4000, seed=4, lo=0.0, hi=1.0)
    for pw in (None, rnd(4000, seed=5, lo=0.5, hi=2.0)):
        L = {lib: (lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype)),
                   None if pw is None else lib.tensor(pw, dtype=getattr(lib, dtype))) for lib in (mt, torch)}
        m = MF.binary_cross_entropy_with_logits(*L[mt][:2], pos_weight=L[mt][2], reduction="none")
        t = TF.binary_cross_entropy_with_logits(*L[torch][:2], pos_weight=L[torch][2], reduction="none")
        np.testing.assert_array_equal(to_np(m.double()), to_np(t.double()))


def _bits_equal(m, t):
    """values and signs of zero (assert_array_equal takes -0.0 == 0.0)"""
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape), (m.dtype, t.dtype, m.shape, t.shape)
    a, b = to_np(m), to_np(t)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def _loss_grads(L, name, kw, a, b, dtype, reduction, layout, gout):
    dt = getattr(L, dtype)
    x = L.tensor(a, dtype=dt)
    t = L.tensor(b, dtype=dt)
    if layout == "strided":  # every other column: rows not dense, PyTorch's scalar form throughout
        x, t = x[:, ::2], t[:, ::2]
    elif layout == "broadcast":  # a stride-0 target leaf: the kernel's broadcast rows, no sum over them
        t = L.tensor(b[0], dtype=dt).expand(*a.shape)
    x.requires_grad_(), t.requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = getattr(F(L), name)(x, t, reduction=reduction, **kw)
    g = (gout[:, ::2] if layout == "strided" else gout) if reduction == "none" else gout.reshape(-1)[:1].reshape(()) if gout.size else np.array(0.37)
    loss.backward(L.tensor(g, dtype=dt))
    return x.grad, t.grad


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kw", [("mse_loss", {}), ("huber_loss", {"delta": 1.0}), ("huber_loss", {"delta": 0.3}),
                                      ("smooth_l1_loss", {"beta": 1.0}), ("smooth_l1_loss", {"beta": 1.7})])
def test_pointwise_loss_backward_bitwise(name, kw, reduction, dtype):
    """The fused backward kernels bit for bit: PyTorch's vector form over 64-byte blocks of dense rows and its
    scalar form for row tails and strided rows (huber and smooth_l1 order their products apart in the two),
    the target's gradient from its own pass (+0 where input == target); rows with tails, a row shorter than
    a block, strided, broadcast, 0-dim and empty inputs, a grad_output of 1 and of random values."""
    for shape, layout in (((37, 70), "dense"), ((1, 130), "dense"), ((3, 5), "dense"), ((), "dense"),
                          ((0, 3), "dense"), ((9, 140), "strided"), ((20, 70), "broadcast")):
        a, b = rnd(*shape, seed=1) * 2, rnd(*shape, seed=2) * 2
        if a.size:
            b.reshape(-1)[::7] = a.reshape(-1)[::7]  # equal elements: a zero difference
        for gout in (np.ones(shape), rnd(*shape, seed=3)):
            m = _loss_grads(mt, name, kw, a, b, dtype, reduction, layout, gout)
            t = _loss_grads(torch, name, kw, a, b, dtype, reduction, layout, gout)
            for gm, gt in zip(m, t):
                _bits_equal(gm, gt)


@pytest.mark.parametrize("name, kw", [("mse_loss", {}), ("huber_loss", {"delta": 0.7}), ("smooth_l1_loss", {"beta": 0.6})])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_loss_gradcheck(name, kw, reduction):
    """first order through the fused kernels, second through the composed formula (create_graph)"""
    x = mt.tensor(rnd(4, 6, seed=1), dtype=mt.float64).requires_grad_()
    t = mt.tensor(rnd(6, seed=2), dtype=mt.float64).requires_grad_()  # broadcast target
    fn = lambda x, t: getattr(MF, name)(x, t, reduction=reduction, **kw)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert mt.autograd.gradcheck(fn, (x, t))
        assert mt.autograd.gradgradcheck(fn, (x, t))


def test_pointwise_loss_backward_mixed_dtypes():
    """mse and smooth_l1 compute their gradients in the common dtype, each stored in its input's dtype; huber's
    kernel takes one dtype only (PyTorch's error)"""
    for name in ("mse_loss", "smooth_l1_loss"):
        for red in ("mean", "none"):
            x = Arg(rnd(4, 5, seed=1), "float32", grad=True)
            y = Arg(rnd(4, 5, seed=2), "float64", grad=True)
            diff(lambda L, x, y: getattr(F(L), name)(x, y, reduction=red), x, y, dtype="float32")
    for L in (mt, torch):
        x = L.tensor(rnd(3, seed=1), dtype=L.float32).requires_grad_()
        t = L.tensor(rnd(3, seed=2), dtype=L.float64)
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            getattr(F(L), "huber_loss")(x, t).to(L.float32).backward()
