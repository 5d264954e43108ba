"""utils.data (samplers, DataLoader with worker processes), testing.assert_close/make_tensor, and a training
run whose loss curve equals PyTorch's from the same seed."""
import collections
import math

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def as_py(x):
    """Nested batches as plain Python (tensors -> (dtype, shape, values))."""
    if hasattr(x, "tolist") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return (str(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__,) + tuple(as_py(v) for v in x)
    if isinstance(x, (list, tuple)):
        return [as_py(v) for v in x]
    if isinstance(x, dict):
        return {k: as_py(v) for k, v in x.items()}
    return x


def test_datasets_and_random_split():
    def run(lib):
        D = lib.utils.data
        ds = D.TensorDataset(lib.arange(10.0), lib.arange(10))
        r = [len(ds), as_py(ds[3])]
        sub = D.Subset(ds, [1, 3, 5])
        r += [len(sub), as_py(sub[2])]
        cat = D.ConcatDataset([ds, sub])
        r += [len(cat), as_py(cat[11]), cat.cumulative_sizes, as_py((ds + sub)[-1])]
        a, b = D.random_split(range(10), [0.3, 0.7], generator=lib.Generator().manual_seed(1))
        r += [list(a), list(b)]
        lib.manual_seed(4)
        r.append([list(s) for s in D.random_split(range(7), [2, 5])])

        class It(D.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        r.append(list(D.ChainDataset([It(), It()])))
        return r
    assert run(mt) == run(torch)
    with pytest.raises(ValueError) as em:
        mt.utils.data.random_split(range(3), [1, 1])
    with pytest.raises(ValueError) as et:
        torch.utils.data.random_split(range(3), [1, 1])
    assert str(em.value) == str(et.value)


def test_samplers_match_torch_streams():
    def run(lib):
        D = lib.utils.data
        g = lambda s: lib.Generator().manual_seed(s)  # noqa: E731
        r = [list(D.SequentialSampler(range(5))), list(D.RandomSampler(range(10), generator=g(0))),
             list(D.RandomSampler(range(10), replacement=True, num_samples=40, generator=g(1))),
             list(D.RandomSampler(range(4), num_samples=10, generator=g(2))),
             list(D.SubsetRandomSampler([3, 5, 7, 9], generator=g(3))),
             list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 8, generator=g(4))),
             list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 3, replacement=False, generator=g(5))),
             list(D.BatchSampler(range(10), 3, False)), list(D.BatchSampler(range(10), 3, True)),
             len(D.BatchSampler(range(10), 3, False)), len(D.BatchSampler(range(10), 3, True))]
        ds = list(range(11))
        for rank in range(3):
            s = D.DistributedSampler(ds, num_replicas=3, rank=rank, seed=7)
            s.set_epoch(2)
            r.append(list(s))
            r.append(list(D.DistributedSampler(ds, num_replicas=3, rank=rank, shuffle=False, drop_last=True)))
        lib.manual_seed(9)
        r.append(list(D.RandomSampler(range(12))))  # seeded from the default generator
        return r
    assert run(mt) == run(torch)


Point = collections.namedtuple("Point", "x y")


class Mixed:
    """Samples mixing tensors, numpy arrays, numbers, strings, dicts, lists and namedtuples."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 13

    def __getitem__(self, i):
        lib = self.lib
        return {"t": lib.full((2,), float(i)), "np": np.arange(3, dtype=np.int32) * i, "n": i, "f": i / 2,
                "s": f"s{i}", "pt": Point(lib.tensor(i), [i, -i]), "nested": [lib.ones(1) * i, {"k": i}]}


@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=4, shuffle=True, drop_last=True),
                                dict(batch_size=None), dict(batch_size=3, shuffle=True)])
def test_dataloader_matches_torch_and_workers(kw):
    def run(lib, workers=0, **extra):
        g = lib.Generator().manual_seed(5)
        dl = lib.utils.data.DataLoader(Mixed(lib), generator=g, num_workers=workers, **kw, **extra)
        return [as_py(b) for b in dl], len(dl)

    ref = run(torch)
    assert run(mt) == ref
    assert run(mt, workers=2) == ref
    assert run(mt, workers=2, prefetch_factor=1, persistent_workers=True) == ref


class Seeds(mt.utils.data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = mt.utils.data.get_worker_info()
        return mt.tensor([i, info.id if info else -1, info.num_workers if info else 0]), mt.rand(1)


class Stream(mt.utils.data.IterableDataset):
    def __iter__(self):
        info = mt.utils.data.get_worker_info()
        ids = range(10) if info is None else range(info.id, 10, info.num_workers)
        return iter(mt.tensor([i]) for i in ids)


def _init(worker_id):
    mt.manual_seed(1000 + worker_id)


def test_worker_info_seeds_init_fn_iterable_and_persistence():
    dl = mt.utils.data.DataLoader(Seeds(), batch_size=2, num_workers=2, worker_init_fn=_init)
    batches = list(dl)
    assert [b[0][:, 1].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0]]  # round robin over 2 workers
    assert all(b[0][0, 2].item() == 2 for b in batches)
    # worker_init_fn reseeded the workers: worker 0's first draws are those of manual_seed(1000)
    mt.manual_seed(1000)
    first = mt.rand(2)
    np.testing.assert_array_equal(np.array(batches[0][1].flatten().tolist()), np.array(first.tolist()))
    assert mt.utils.data.get_worker_info() is None
    out = sorted(int(x) for b in mt.utils.data.DataLoader(Stream(), batch_size=3, num_workers=2) for x in b)
    assert out == list(range(10))
    dl = mt.utils.data.DataLoader(Seeds(), batch_size=3, num_workers=2, persistent_workers=True)
    it1 = [b[0].tolist() for b in dl]
    assert [b[0].tolist() for b in dl] == it1 and dl._iterator is not None


class Boom(mt.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("bad index")
        return mt.tensor(i)


def test_dataloader_errors():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(mt.utils.data.DataLoader(Boom(), batch_size=1, num_workers=2))

    def same(fn):
        out = []
        for lib in (mt, torch):
            with pytest.raises(Exception) as ei:
                fn(lib)
            out.append(ei.value)
        assert type(out[0]) is type(out[1]) and str(out[0]) == str(out[1])

    ds = lambda lib: lib.utils.data.TensorDataset(lib.ones(4))  # noqa: E731
    same(lambda lib: lib.utils.data.DataLoader(ds(lib), num_workers=-1))
    same(lambda lib: lib.utils.data.DataLoader(ds(lib), prefetch_factor=2))
    same(lambda lib: lib.utils.data.DataLoader(ds(lib), persistent_workers=True))
    same(lambda lib: lib.utils.data.DataLoader(ds(lib), sampler=[0], shuffle=True))
    same(lambda lib: lib.utils.data.DataLoader(ds(lib), batch_sampler=[[0]], batch_size=2))
    same(lambda lib: lib.utils.data.DataLoader(ds(lib), batch_size=None, drop_last=True))
    same(lambda lib: setattr(lib.utils.data.DataLoader(ds(lib)), "batch_size", 3))
    same(lambda lib: lib.utils.data.default_collate([lib.ones(2), lib.ones(3)]))
    same(lambda lib: lib.utils.data.default_collate([[1, 2], [1]]))
    same(lambda lib: lib.utils.data.default_collate([object()]))


def test_pin_memory_accepted():
    with pytest.warns(UserWarning, match="pin_memory"):
        batches = list(mt.utils.data.DataLoader(mt.utils.data.TensorDataset(mt.ones(4)), batch_size=2,
                                                pin_memory=True))
    assert len(batches) == 2


# ---- torch.testing ------------------------------------------------------------------------------------

def test_assert_close_messages():
    cases = [
        lambda lib: (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 2.1, 3.0]), {}),
        lambda lib: (lib.tensor([1, 2, 3]), lib.tensor([1, 4, 3]), {}),
        lambda lib: (lib.tensor(1.0), lib.tensor(1.5), {}),
        lambda lib: (lib.ones(2), lib.ones(3), {}),
        lambda lib: (lib.ones(2), lib.ones(2, dtype=lib.float64), {}),
        lambda lib: (lib.ones(2), lib.ones(2, dtype=lib.float64), {"check_dtype": False}),
        lambda lib: ([lib.ones(2)], [lib.zeros(2)], {}),
        lambda lib: ({"a": 1.0}, {"a": 1.1}, {}),
        lambda lib: ({"a": 1.0}, {"b": 1.0}, {}),
        lambda lib: ([1, 2], [1], {}),
        lambda lib: (lib.tensor([1.0, float("nan")]), lib.tensor([1.0, float("nan")]), {}),
        lambda lib: (lib.tensor([1.0, float("nan")]), lib.tensor([1.0, float("nan")]), {"equal_nan": True}),
        lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0005]), {"rtol": 1e-3, "atol": 0}),
        lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0005]), {"rtol": 1e-3}),
        lambda lib: (lib.tensor([1.0, 2.0], dtype=lib.bfloat16), lib.tensor([1.0, 2.01], dtype=lib.bfloat16), {}),
        lambda lib: (lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[1.0, 2.0], [3.0, 5.0]]), {"msg": "custom"}),
        lambda lib: (lib.ones(2).t() if False else lib.ones(2, 2).t(), lib.ones(2, 2), {"check_stride": True}),
        lambda lib: (1, 1.0, {}),
        lambda lib: (2.0, 2.0000001, {}),
        lambda lib: (lib.tensor([1.0]), 1.0, {}),
    ]
    for case in cases:
        out = []
        for lib in (mt, torch):
            a, b, kw = case(lib)
            try:
                lib.testing.assert_close(a, b, **kw)
                out.append(None)
            except Exception as e:
                out.append((type(e).__name__, str(e).replace("mindtorch_v2._tensor.Tensor", "torch.Tensor")))
        assert out[0] == out[1], out


def test_make_tensor():
    for dtype, kw in [("float32", {}), ("float64", dict(low=-1, high=1)), ("bfloat16", {}), ("int64", {}),
                      ("uint8", dict(low=3)), ("bool", {}), ("int32", dict(exclude_zero=True))]:
        for shape in [(3, 4), (5,), ()]:
            mt.manual_seed(2), torch.manual_seed(2)
            m = mt.testing.make_tensor(*shape, dtype=getattr(mt, dtype), device="cpu", **kw)
            t = torch.testing.make_tensor(*shape, dtype=getattr(torch, dtype), device="cpu", **kw)
            assert as_py(m) == as_py(t)
    m = mt.testing.make_tensor(3, 4, dtype=mt.float32, device="cpu", noncontiguous=True, requires_grad=True)
    assert not m.is_contiguous() and m.requires_grad and tuple(m.shape) == (3, 4)
    with pytest.raises(ValueError, match="`low` must be less than `high`"):
        mt.testing.make_tensor(2, dtype=mt.float32, device="cpu", low=2, high=1)


# ---- training ------------------------------------------------------------------------------------------

def _train(lib, opt_name, steps=30):
    """A 2-layer MLP regression on synthetic data: Linear, clamp(min=0), Linear, mean squared error."""
    lib.manual_seed(0)
    x = lib.randn(64, 8)
    y = (x[:, :1] * 2 - x[:, 1:2]).clamp(min=-1)
    model = lib.nn.Sequential(lib.nn.Linear(8, 32), lib.nn.Linear(32, 1))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9) if opt_name == "SGD" else \
        lib.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        h = model[0](x).clamp(min=0)
        loss = ((model[1](h) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_mlp_training_loss_curve_matches_torch(opt_name):
    lm, mm = _train(mt, opt_name)
    lt, tm = _train(torch, opt_name)
    assert lm[-1] < lm[0] * 0.5  # it learns
    # GEMMs differ in the last bits between OpenBLAS and PyTorch's MKL; the curves agree to float32 rounding
    np.testing.assert_allclose(lm, lt, rtol=2e-5, atol=1e-7)
    for (_, a), (_, b) in zip(mm.state_dict().items(), tm.state_dict().items()):
        np.testing.assert_allclose(np.array(a.tolist()), b.numpy(), rtol=1e-4, atol=1e-6)


def test_mlp_training_with_dataloader_workers():
    def run(workers):
        mt.manual_seed(0)
        ds = mt.utils.data.TensorDataset(mt.randn(40, 4), mt.randn(40, 1))
        model = mt.nn.Linear(4, 1)
        opt = mt.optim.AdamW(model.parameters(), lr=0.05)
        sched = mt.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        losses = []
        for _ in range(3):
            for xb, yb in mt.utils.data.DataLoader(ds, batch_size=8, shuffle=True, num_workers=workers,
                                                   generator=mt.Generator().manual_seed(1)):
                opt.zero_grad()
                loss = ((model(xb) - yb) ** 2).mean()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            sched.step()
        return losses
    a = run(0)
    assert a == run(2) and math.isfinite(a[-1])
