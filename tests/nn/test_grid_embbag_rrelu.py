"""affine_grid, grid_sample, embedding_bag/EmbeddingBag and rrelu/RReLU against live PyTorch: values
in float64/float32, non-contiguous inputs, gradients (gradcheck in float64), error types and texts."""
import itertools
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

from fdiff import Arg, F, diff, errors_match, rnd  # noqa: E402

NATIVE = dict(names=False)  # compositions of core ops where PyTorch runs one native kernel


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 5, 4), (2, 1, 2, 3, 4), (1, 1, 1, 3)])
def test_affine_grid(dtype, align, size):
    k = len(size) - 2
    theta = Arg(rnd(size[0], k, k + 1), dtype, grad=True)
    diff(lambda L, t: F(L).affine_grid(t, size, align_corners=align), theta, dtype=dtype, **NATIVE)


PADS = ["zeros", "border", "reflection"]
CASES = list(itertools.product(["bilinear", "nearest"], PADS, [False, True]))


@pytest.mark.parametrize("mode,pad,align", CASES + list(itertools.product(["bicubic"], PADS, [False, True])))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample(mode, pad, align, dtype):
    x = Arg(rnd(2, 3, 5, 4), dtype, grad=True, noncontig=True)
    g = Arg(rnd(2, 6, 7, 2, lo=-1.4, hi=1.4, seed=3), dtype, grad=True)
    diff(lambda L, x, g: F(L).grid_sample(x, g, mode, pad, align), x, g, dtype=dtype, **NATIVE)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("pad", PADS)
def test_grid_sample_gradcheck(pad, mode):
    x = mt.tensor(rnd(1, 2, 3, 4), requires_grad=True)
    g = mt.tensor(rnd(1, 2, 3, 2, lo=-1.2, hi=1.2, seed=4), requires_grad=True)
    assert mt.autograd.gradcheck(lambda x, g: mt.nn.functional.grid_sample(x, g, mode, pad, False), (x, g))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample_bicubic_empty_broadcast_and_outside(dtype):
    x = Arg(rnd(1, 2, 3, 4), dtype, grad=True)
    g = Arg(rnd(1, 5, 1, 2, lo=-3, hi=3, seed=5), dtype, grad=True)  # many taps past the border
    for pad in PADS:
        diff(lambda L, x, g: F(L).grid_sample(x, g.expand(1, -1, 3, -1), "bicubic", pad, True), x, g,
             dtype=dtype, **NATIVE)
    diff(lambda L, x, g: F(L).grid_sample(x, g[:, :0], "bicubic", "zeros", False), x, g, dtype=dtype, **NATIVE)
    diff(lambda L, x, g: F(L).grid_sample(x[:, :0], g, "bicubic", "zeros", False), x, g, dtype=dtype, **NATIVE)


def test_grid_sample_nonfinite_grid_reads_nothing():
    x = mt.ones(1, 1, 2, 2)
    g = mt.tensor([[[[float("nan"), 0.0], [float("inf"), -float("inf")], [1e30, -1e30]]]])
    for mode in ("bilinear", "nearest", "bicubic"):
        out = mt.nn.functional.grid_sample(x, g, mode, align_corners=False)
        ref = torch.nn.functional.grid_sample(torch.ones(1, 1, 2, 2), torch.tensor(g.tolist()), mode,
                                              align_corners=False)
        np.testing.assert_array_equal(np.nan_to_num(out.numpy(), nan=7), np.nan_to_num(ref.numpy(), nan=7))


@pytest.mark.parametrize("mode,pad,align", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample_3d(mode, pad, align, dtype):
    x = Arg(rnd(2, 3, 4, 5, 3), dtype, grad=True, noncontig=True)
    g = Arg(rnd(2, 3, 4, 2, 3, lo=-1.4, hi=1.4, seed=3), dtype, grad=True)
    diff(lambda L, x, g: F(L).grid_sample(x, g, mode, pad, align), x, g, dtype=dtype, **NATIVE)
    diff(lambda L, x, g: L.grid_sampler_3d(x, g, ("bilinear", "nearest").index(mode),
                                            ("zeros", "border", "reflection").index(pad), align), x, g,
         dtype=dtype, **NATIVE)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_grid_sample_3d_half(dtype):
    x = Arg(rnd(1, 2, 3, 4, 5), dtype)
    g = Arg(rnd(1, 2, 3, 4, 3, lo=-1.1, hi=1.1, seed=5), dtype)
    diff(lambda L, x, g: F(L).grid_sample(x, g, "bilinear", "border", False), x, g, dtype=dtype, **NATIVE)


def test_grid_sample_3d_empty_and_broadcast():
    # an empty batch or output grid, and a grid expanded over the batch (stride 0)
    x = Arg(rnd(2, 1, 2, 3, 4))
    g = Arg(rnd(1, 2, 2, 2, 3, lo=-1, hi=1))
    diff(lambda L, x, g: F(L).grid_sample(x, g.expand(2, -1, -1, -1, -1), align_corners=True), x, g, **NATIVE)
    diff(lambda L, x, g: F(L).grid_sample(x[:0], g[:0], align_corners=True), x, g, **NATIVE)
    diff(lambda L, x, g: F(L).grid_sample(x[:1], g[:, :0], align_corners=True), x, g, **NATIVE)


@pytest.mark.parametrize("mode,pad", [("bilinear", "zeros"), ("bilinear", "border"), ("bilinear", "reflection"),
                                      ("nearest", "zeros")])
def test_grid_sample_3d_gradcheck(mode, pad):
    x = mt.tensor(rnd(1, 2, 2, 3, 3), requires_grad=True)
    g = mt.tensor(rnd(1, 2, 2, 1, 3, lo=-1.2, hi=1.2, seed=4), requires_grad=True)
    fn = lambda x, g: mt.nn.functional.grid_sample(x, g, mode, pad, True)  # noqa: E731
    assert mt.autograd.gradcheck(fn, (x, g))
    assert mt.autograd.gradgradcheck(fn, (x, g))


def test_grid_sampler_entry_point_errors():
    x, g = Arg(rnd(1, 2, 3, 4, 5)), Arg(rnd(1, 2, 3, 4, 3))
    errors_match(lambda L, x, g: F(L).grid_sample(x, g, "bicubic", align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x, g[..., :2], align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x.expand(2, -1, -1, -1, -1), g, align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x[:, :, :0], g, align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x, g.float(), align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x.int(), g.int(), align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x[0].int(), g[0, ..., :2].int(), align_corners=False), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x.to(L.complex64), g.to(L.complex64), align_corners=False), x, g)
    errors_match(lambda L, x, g: L.grid_sampler_3d(x[0], g[0, ..., :2], 0, 0, False), x, g)
    errors_match(lambda L, x, g: L.grid_sampler_3d(x[0], g[0], 0, 0, False), x, g)
    errors_match(lambda L, x, g: L.grid_sampler_3d(x, g, 2, 0, False), x, g)
    errors_match(lambda L, x, g: L.grid_sampler_2d(x, g, 0, 0, False), x, g)
    errors_match(lambda L, x, g: L.grid_sampler(x, g, 2, 0, False), x, g)


def test_grid_errors():
    x, g = Arg(rnd(1, 1, 2, 2)), Arg(rnd(1, 2, 2, 2))
    errors_match(lambda L, x, g: F(L).grid_sample(x, g, mode="cubic"), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x, g, padding_mode="wrap"), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x, g[0]), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x, g[..., :1]), x, g)
    errors_match(lambda L, x, g: F(L).grid_sample(x.expand(2, 1, 2, 2), g), x, g)
    errors_match(lambda L, x, g: F(L).affine_grid(x[0], (1, 1, 2, 2)), x, g)
    errors_match(lambda L, x, g: F(L).affine_grid(L.zeros(1, 2, 3), (1, 1, 2)), x, g)
    errors_match(lambda L, x, g: F(L).affine_grid(L.zeros(1, 2, 3), (1, 1, 0, 2)), x, g)
    errors_match(lambda L, x, g: F(L).affine_grid(L.zeros(1, 2, 3, dtype=L.int64), (1, 1, 2, 2)), x, g)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        mt.nn.functional.grid_sample(mt.ones(1, 1, 2, 2), mt.zeros(1, 1, 1, 2))


BAG_CASES = [
    dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
    dict(mode="sum", per_sample_weights=True), dict(mode="mean", padding_idx=2), dict(mode="sum", padding_idx=-1),
    dict(mode="mean", include_last_offset=True), dict(mode="max", include_last_offset=True, padding_idx=0),
]


@pytest.mark.parametrize("case", range(len(BAG_CASES)))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("two_d", [False, True])
def test_embedding_bag(case, dtype, two_d):
    kw = dict(BAG_CASES[case])
    psw = kw.pop("per_sample_weights", False)
    if two_d and kw.get("include_last_offset"):
        pytest.skip("include_last_offset needs 1-D input with offsets")
    idx = [[1, 2, 4, 4], [0, 3, 2, 2], [4, 1, 0, 3]] if two_d else [1, 2, 4, 4, 0, 3, 2, 2, 4]
    # an empty bag in the middle; include_last_offset: the documented extra offset, the input's length
    offs = None if two_d else [0, 3, 3, 9] if kw.get("include_last_offset") else [0, 3, 3, 7]
    w = Arg(rnd(5, 3), dtype, grad=True)
    p = Arg(rnd(3, 4, seed=2) if two_d else rnd(9, seed=2), dtype, grad=True) if psw else None

    def run(L, w, *rest):
        i = L.tensor(idx)
        o = None if offs is None else L.tensor(offs)
        return F(L).embedding_bag(i, w, o, per_sample_weights=rest[0] if rest else None, **kw)
    diff(run, w, *([p] if p else []), dtype=dtype, **NATIVE)
    mb = mt.nn.EmbeddingBag(5, 3, **kw)
    tb = torch.nn.EmbeddingBag(5, 3, **kw)
    assert repr(mb) == repr(tb)


def test_embedding_bag_errors():
    w = Arg(rnd(5, 3))
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([[1, 2]]), w, L.tensor([0])), w)
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([1, 2]), w), w)
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([1, 2]), w, L.tensor([0]), mode="prod"), w)
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([1, 2]), w, L.tensor([0]), mode="mean",
                                                 per_sample_weights=L.ones(2, dtype=L.float64)), w)
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([1, 2]), w, L.tensor([0]),
                                                 per_sample_weights=L.ones(3, dtype=L.float64)), w)
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([1, 2]), w[0], L.tensor([0])), w)
    errors_match(lambda L, w: F(L).embedding_bag(L.tensor([1, 2]), w, L.tensor([0]), mode="max",
                                                 scale_grad_by_freq=True), w)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("training", [False, True])
def test_rrelu_same_random_slopes_as_pytorch(dtype, training):
    x = Arg(rnd(4, 5), dtype, grad=True, noncontig=True)

    def run(L, x):
        L.manual_seed(5)
        return F(L).rrelu(x, 0.1, 0.4, training=training)
    diff(run, x, dtype=dtype, **NATIVE)


def test_rrelu_module_and_inplace():
    assert repr(mt.nn.RReLU(0.2, 0.3, inplace=True)) == repr(torch.nn.RReLU(0.2, 0.3, inplace=True))
    m, t = mt.nn.RReLU(), torch.nn.RReLU()
    xm, xt = mt.tensor(rnd(3, 4)), torch.tensor(rnd(3, 4))
    mt.manual_seed(1)
    torch.manual_seed(1)
    np.testing.assert_array_equal(m(xm).numpy(), t(xt).numpy())
    m.eval(), t.eval()
    np.testing.assert_array_equal(m(xm).numpy(), t(xt).numpy())
    ym, yt = xm.clone(), xt.clone()
    mt.rrelu_(ym, training=True), torch.rrelu_(yt, training=True)
    assert ym.shape == yt.shape and (ym.numpy() <= np.maximum(xm.numpy(), 0) + 1e-12).all()
