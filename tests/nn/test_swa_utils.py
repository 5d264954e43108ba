"""torch.optim.swa_utils (AveragedModel for SWA and EMA, update_bn, SWALR) against live PyTorch."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2)
STEPS = [RNG.standard_normal((4, 3)) for _ in range(5)]
DATA = [RNG.standard_normal((6, 3)) * 2 + 1 for _ in range(4)]


def net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


def averages(lib, make_avg, use_buffers):
    """Train-like updates of the model (weights moved, BN statistics from batches) averaged after each."""
    model = net(lib)
    avg = lib.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers, **make_avg(lib))
    out = []
    for k, step in enumerate(STEPS):
        with lib.no_grad():
            model[0].weight.add_(lib.tensor(step.tolist(), dtype=lib.float32))
        model(lib.tensor(DATA[k % len(DATA)].tolist()))  # moves the BatchNorm buffers
        avg.update_parameters(model)
        out.append({k: np.array(v.detach().double().tolist()) for k, v in avg.state_dict().items()})
    return out


AVGS = {
    "swa": lambda lib: {},
    "ema_multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
    "swa_multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_swa_multi_avg_fn()},
    "ema": lambda lib: {"avg_fn": lib.optim.swa_utils.get_ema_avg_fn(0.8)},
    "swa_fn": lambda lib: {"avg_fn": lib.optim.swa_utils.get_swa_avg_fn()},
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", sorted(AVGS))
def test_averaged_model_matches_torch(kind, use_buffers):
    if kind == "swa_multi" and use_buffers:  # num_batches_tracked is int64: addcdiv refuses integer division
        with pytest.raises(RuntimeError) as e:
            averages(torch, AVGS[kind], use_buffers)
        with pytest.raises(RuntimeError) as m:
            averages(mt, AVGS[kind], use_buffers)
        assert str(m.value) == str(e.value)
        return
    a, b = averages(mt, AVGS[kind], use_buffers), averages(torch, AVGS[kind], use_buffers)
    for step, (x, y) in enumerate(zip(a, b)):
        assert x.keys() == y.keys()
        for k in y:
            np.testing.assert_allclose(x[k], y[k], rtol=1e-6, atol=1e-6, err_msg=f"{k} at step {step}")


def test_forward_and_n_averaged():
    m = mt.optim.swa_utils.AveragedModel(mt.nn.Linear(3, 2))
    assert m.n_averaged.dtype == mt.int64 and int(m.n_averaged) == 0
    x = mt.ones(1, 3)
    assert mt.equal(m(x), m.module(x))
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        mt.optim.swa_utils.AveragedModel(mt.nn.Linear(3, 2), avg_fn=lambda *a: None, multi_avg_fn=lambda *a: None)


@pytest.mark.parametrize("fn", ["get_ema_multi_avg_fn", "get_ema_avg_fn"])
def test_decay_errors(fn):
    with pytest.raises(ValueError) as e:
        getattr(torch.optim.swa_utils, fn)(1.5)
    with pytest.raises(ValueError) as m:
        getattr(mt.optim.swa_utils, fn)(1.5)
    assert str(m.value) == str(e.value)


def test_update_bn():
    def go(lib):
        model = net(lib)
        model.eval()
        loader = [(lib.tensor(d.tolist()), 0) for d in DATA[:2]] + [lib.tensor(d.tolist()) for d in DATA[2:]]
        lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        return (model.training, bn.momentum, int(bn.num_batches_tracked), bn.running_mean.tolist(),
                bn.running_var.tolist())
    a, b = go(mt), go(torch)
    assert a[:3] == b[:3]
    np.testing.assert_allclose(a[3:], b[3:], rtol=1e-6)


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3, anneal_strategy="linear"),
                                dict(swa_lr=0.01, anneal_epochs=0)])
def test_swalr_sequence(kw):
    def go(lib):
        w, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.3}], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, **kw)
        lrs = []
        for _ in range(6):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        sd = sched.state_dict()
        return lrs, sorted(sd), sd["_anneal_strategy"]
    assert go(mt) == go(torch)


@pytest.mark.parametrize("kw", [dict(anneal_strategy="exp"), dict(anneal_epochs=-1), dict(anneal_epochs=1.5)])
def test_swalr_errors(kw):
    def err(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.5)
        with pytest.raises(ValueError) as e:
            lib.optim.swa_utils.SWALR(opt, swa_lr=0.1, **kw)
        return str(e.value)
    assert err(mt) == err(torch)


def test_swalr_get_lr_warns_outside_step():
    opt = mt.optim.SGD([mt.nn.Parameter(mt.ones(2))], lr=0.5)
    sched = mt.optim.swa_utils.SWALR(opt, swa_lr=0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.get_lr()
    assert "please use `get_last_lr()`" in str(w[0].message)
