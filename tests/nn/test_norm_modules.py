"""Normalization, GLU, pixel-shuffle and distance modules against live PyTorch: same initial parameters,
outputs and gradients in float32 and bfloat16, running statistics over several training steps,
train/eval behaviour, state_dict keys, repr, input-dimension errors."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

from modcmp import arr, close, compare, randn  # noqa: E402

DTYPES = ["float32", "bfloat16"]
X3, X4, X5 = randn((4, 6, 5)), randn((2, 6, 3, 4), 1), randn((2, 6, 2, 3, 2), 2)

MODULES = [
    ("BatchNorm1d", (6,), {}, X3),
    ("BatchNorm1d", (6,), dict(affine=False, momentum=None), X3[:, :, 0]),
    ("BatchNorm2d", (6,), dict(momentum=0.3, eps=1e-3), X4),
    ("BatchNorm2d", (6,), dict(track_running_stats=False), X4),
    ("BatchNorm2d", (6,), dict(bias=False), X4),
    ("BatchNorm3d", (6,), {}, X5),
    ("InstanceNorm1d", (6,), {}, X3),
    ("InstanceNorm1d", (6,), dict(affine=True, track_running_stats=True), X3),
    ("InstanceNorm2d", (6,), dict(affine=True), X4),
    ("InstanceNorm2d", (6,), {}, X4[0]),
    ("InstanceNorm3d", (6,), dict(track_running_stats=True), X5),
    ("GroupNorm", (3, 6), {}, X4),
    ("GroupNorm", (2, 6), dict(affine=False, eps=1e-3), X3),
    ("GroupNorm", (2, 6), dict(bias=False), X3),
    ("RMSNorm", (5,), {}, X3),
    ("RMSNorm", ((3, 4),), dict(eps=1e-4, elementwise_affine=False), X4),
    ("LocalResponseNorm", (3,), {}, X3),  # (4-D bfloat16: PyTorch has no bfloat16 avg_pool3d)
    ("GLU", (), {}, X4),
    ("GLU", (1,), {}, X4),
    ("PixelShuffle", (2,), {}, randn((2, 8, 2, 3))),
    ("PixelUnshuffle", (2,), {}, randn((2, 3, 4, 6))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,kw,x", MODULES, ids=[f"{c[0]}-{i}" for i, c in enumerate(MODULES)])
def test_module_matches_torch(name, args, kw, x, dtype):
    m, t, _, _ = compare(torch, lambda L: getattr(L.nn, name)(*args, **kw), [x], dtype=dtype)
    assert repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        close(m.state_dict()[k], v, dtype, k)


@pytest.mark.parametrize("name,kw,x", [("BatchNorm1d", {}, X3), ("BatchNorm2d", dict(momentum=None), X4),
                                       ("BatchNorm3d", dict(momentum=0.5), X5),
                                       ("InstanceNorm2d", dict(track_running_stats=True, affine=True), X4)])
def test_running_stats_over_steps_then_eval(name, kw, x):
    mods = {}
    for L in (mt, torch):
        L.manual_seed(0)
        mods[L] = getattr(L.nn, name)(6, **kw)
    for step in range(4):
        xs = x * (step + 1) + step
        outs = [mods[L](L.tensor(xs.tolist())) for L in (mt, torch)]
        close(outs[0], outs[1], "float32", f"step {step}")
    for k, v in mods[torch].state_dict().items():
        close(mods[mt].state_dict()[k], v, "float32", k)
    for L in (mt, torch):
        mods[L].eval()
    outs = [mods[L](L.tensor(x.tolist())) for L in (mt, torch)]
    close(outs[0], outs[1], "float32", "eval")
    assert mods[mt].num_batches_tracked.item() == mods[torch].num_batches_tracked.item() if "Batch" in name else True


def test_eval_without_running_stats_uses_batch_stats_and_state_dict_round_trip():
    for L in (mt, torch):
        L.manual_seed(0)
    bm, bt = mt.nn.BatchNorm1d(6, track_running_stats=False).eval(), torch.nn.BatchNorm1d(6, track_running_stats=False)
    bt.eval()
    close(bm(mt.tensor(X3.tolist())), bt(torch.tensor(X3.tolist())), "float32")
    src = torch.nn.BatchNorm2d(6)
    src(torch.tensor(X4.tolist(), dtype=torch.float32))
    dst = mt.nn.BatchNorm2d(6)
    dst.load_state_dict({k: mt.tensor(v.tolist(), dtype=getattr(mt, str(v.dtype).split(".")[1]))
                         for k, v in src.state_dict().items()})
    for k, v in src.state_dict().items():
        np.testing.assert_allclose(arr(dst.state_dict()[k]), arr(v), rtol=1e-6)
    old = {k: v for k, v in dst.state_dict().items() if k != "num_batches_tracked"}
    fresh = mt.nn.BatchNorm2d(6)
    fresh._load_from_state_dict(old, "", {"version": 1}, True, [], [], [])
    assert fresh.num_batches_tracked.item() == 0


def test_distance_modules():
    a, b = randn((3, 5)), randn((5,), 1)
    for name, kw in (("CosineSimilarity", dict(dim=-1)), ("PairwiseDistance", dict(p=1.0, keepdim=True))):
        m, t, _, _ = compare(torch, lambda L: getattr(L.nn, name)(**kw), [a, b])
        assert repr(m) == repr(t)


@pytest.mark.parametrize("name,x", [("BatchNorm1d", X4), ("BatchNorm2d", X3), ("BatchNorm3d", X4),
                                    ("InstanceNorm1d", X4), ("InstanceNorm2d", X5), ("InstanceNorm3d", X3)])
def test_input_dim_errors(name, x):
    msgs = []
    for L in (mt, torch):
        with pytest.raises(ValueError) as e:
            getattr(L.nn, name)(6)(L.tensor(x.tolist()))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_other_errors():
    for fn in (lambda L: L.nn.GroupNorm(4, 6), lambda L: L.nn.InstanceNorm1d(5, affine=True)(L.zeros(2, 6, 3)),
               lambda L: L.nn.BatchNorm1d(3)(L.zeros(1, 3))):
        msgs = []
        for L in (mt, torch):
            with pytest.raises(ValueError) as e:
                fn(L)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]



def test_sync_batchnorm_without_a_process_group_is_batchnorm():
    """No process group initialised: SyncBatchNorm is BatchNorm, as PyTorch's (the multi-rank
    statistics are tested in tests/distributed/test_ddp.py)."""
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    outs = []
    for L in (mt, torch):
        m = L.nn.SyncBatchNorm(3, momentum=None)
        y = m(L.tensor(x))
        outs.append((y.detach().numpy(), m.running_var.numpy(), repr(m)))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5)
    assert outs[0][2] == outs[1][2]
    msgs = []
    for L in (mt, torch):
        with pytest.raises(ValueError) as e:
            L.nn.SyncBatchNorm(3)(L.zeros(3))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    seq = mt.nn.SyncBatchNorm.convert_sync_batchnorm(mt.nn.Sequential(mt.nn.BatchNorm2d(2), mt.nn.ReLU()))
    assert type(seq[0]) is mt.nn.SyncBatchNorm
