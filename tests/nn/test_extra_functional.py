"""bilinear, gumbel_softmax, channel_shuffle, pdist, max_unpool1d/2d, the multi-class margin losses,
triu/tril_indices and their modules against live PyTorch: values (float64/float32), gradients,
module reprs, error texts."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

from fdiff import Arg, F, diff, errors_match, rnd  # noqa: E402

NATIVE = dict(names=False)
FLOATS = ["float64", "float32"]
I64 = lambda L, v: L.tensor(v, dtype=L.int64)  # noqa: E731


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_losses(dtype, reduction):
    x = Arg(rnd(4, 5), dtype, grad=True, noncontig=True)
    diff(lambda L, x: F(L).multi_margin_loss(x, I64(L, [1, 0, 4, 2]), reduction=reduction), x, dtype=dtype, **NATIVE)
    diff(lambda L, x: F(L).multi_margin_loss(x, I64(L, [1, 0, 4, 2]), p=2, margin=0.5,
                                             weight=L.arange(5, dtype=x.dtype) / 3, reduction=reduction),
         x, dtype=dtype, **NATIVE)
    t = [[3, 0, -1, 1, 1], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, 4, -1, 0, 0]]
    diff(lambda L, x: F(L).multilabel_margin_loss(x, I64(L, t), reduction=reduction), x, dtype=dtype, **NATIVE)
    y = Arg((rnd(4, 5, seed=3) > 0).astype(float), dtype)
    diff(lambda L, x, y: F(L).multilabel_soft_margin_loss(x, y, reduction=reduction), x, y, dtype=dtype, **NATIVE)
    a, p, n = (Arg(rnd(4, 5, seed=s), dtype, grad=True) for s in (4, 5, 6))
    diff(lambda L, a, p, n: F(L).triplet_margin_with_distance_loss(a, p, n, swap=True, reduction=reduction),
         a, p, n, dtype=dtype, **NATIVE)


def test_margin_loss_vectors_and_modules():
    x = Arg(rnd(5), "float64", grad=True)
    diff(lambda L, x: F(L).multi_margin_loss(x, I64(L, 2)), x, **NATIVE)
    diff(lambda L, x: F(L).multilabel_margin_loss(x, I64(L, [3, 1, -1, 0, 0])), x, **NATIVE)
    for name, args in (("MultiMarginLoss", dict(p=2, margin=0.3)), ("MultiLabelMarginLoss", {}),
                       ("MultiLabelSoftMarginLoss", {}), ("TripletMarginWithDistanceLoss", dict(margin=2.0)),
                       ("ChannelShuffle", dict(groups=3)), ("MaxUnpool1d", dict(kernel_size=2)),
                       ("MaxUnpool2d", dict(kernel_size=3, stride=2)), ("NLLLoss2d", {})):
        assert repr(getattr(mt.nn, name)(**args)) == repr(getattr(torch.nn, name)(**args))
    errors_match(lambda L: F(L).multi_margin_loss(L.ones(2, 3), I64(L, [0, 1]), p=3))
    errors_match(lambda L: L.nn.TripletMarginWithDistanceLoss(margin=0))
    with pytest.raises(NotImplementedError, match="CTCLoss"):
        mt.nn.CTCLoss()


@pytest.mark.parametrize("dtype", FLOATS)
def test_bilinear_pdist_channel_shuffle(dtype):
    a, b = Arg(rnd(3, 4), dtype, grad=True), Arg(rnd(3, 5, seed=1), dtype, grad=True, noncontig=True)
    w, bias = Arg(rnd(2, 4, 5, seed=2), dtype, grad=True), Arg(rnd(2, seed=3), dtype, grad=True)
    diff(lambda L, a, b, w, bias: F(L).bilinear(a, b, w, bias), a, b, w, bias, dtype=dtype, **NATIVE)
    for p in (2, 1, 3.5):
        diff(lambda L, a: F(L).pdist(a, p), a, dtype=dtype, **NATIVE)
    x = Arg(rnd(2, 6, 3), dtype, grad=True)
    diff(lambda L, x: F(L).channel_shuffle(x, 3), x, dtype=dtype, **NATIVE)
    errors_match(lambda L, x: F(L).channel_shuffle(x, 4), x)
    errors_match(lambda L, a: F(L).pdist(a[0]), a)


@pytest.mark.parametrize("nd", [1, 2])
def test_max_unpool_inverts_max_pool(nd):
    shape = (2, 3, 6) if nd == 1 else (2, 3, 4, 6)

    def run(L, x):
        pool, unpool = (F(L).max_pool1d, F(L).max_unpool1d) if nd == 1 else (F(L).max_pool2d, F(L).max_unpool2d)
        o, idx = pool(x, 2, return_indices=True)
        return unpool(o, idx, 2)
    diff(run, Arg(rnd(*shape), "float64", grad=True), **NATIVE)


def test_gumbel_softmax_same_noise():
    x = Arg(rnd(3, 5), "float64", grad=True)
    for hard in (False, True):
        def run(L, x):
            L.manual_seed(7)
            return F(L).gumbel_softmax(x, tau=0.7, hard=hard)
        diff(run, x, **NATIVE)


@pytest.mark.parametrize("args", [(3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (3, 3, 5), (5, 2, -3)])
def test_tri_indices(args):
    for name in ("triu_indices", "tril_indices"):
        assert getattr(mt, name)(*args).tolist() == getattr(torch, name)(*args).tolist()
    assert mt.triu_indices(3, 3, dtype=mt.int32).dtype is mt.int32


def test_data_parallel_runs_the_module():
    lin = mt.nn.Linear(2, 3)
    dp = mt.nn.DataParallel(lin)
    x = mt.ones(4, 2)
    assert dp.module is lin and dp.device_ids == [] and (dp(x) == lin(x)).all()
    assert "module.weight" in dp.state_dict()
