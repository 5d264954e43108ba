"""DistributedDataParallel, SyncBatchNorm and DistributedSampler: the multi-process scenarios of
_ddp_worker.py (each rank a subprocess with a timeout), and the single-process pieces against live
PyTorch (bucket assignment, sampler index lists)."""
import os
import sys

import pytest

import mindtorch_v2 as mt
import mindtorch_v2.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gloo import assert_ok, run  # noqa: E402

gloo = pytest.mark.skipif(not dist.is_gloo_available(), reason="built without libgloo-dev")


@gloo
@pytest.mark.parametrize("scenario,world", [("parity", 2), ("parity", 4), ("buckets", 2), ("unused", 2),
                                            ("static", 2), ("hooks", 2), ("overlap", 2), ("uneven", 2),
                                            ("uneven", 3), ("syncbn", 2), ("buffers", 2), ("unfinished", 2),
                                            ("mismatch", 2)])
def test_ddp(scenario, world, tmp_path):
    assert_ok(run(scenario, world, tmp_path, worker="_ddp_worker.py"))


def test_bucket_assignment_matches_pytorch():
    torch = pytest.importorskip("torch")
    shapes = [(100, "float32"), (300000, "float32"), (10, "float64"), (200000, "float32"), (5, "float64"),
              (70000, "float32"), (262144, "float32"), (3, "float32")]
    for limits in ([1024 * 1024, 25 * 1024 * 1024], [1000, 1200000], [2 ** 63 - 1], [400]):
        for indices in ([], [7, 5, 3, 1, 0, 4, 2, 6]):
            for kinds in (shapes, [(n, "float32") for n, _ in shapes]):
                ours = [mt.zeros(n, dtype=getattr(mt, d)) for n, d in kinds]
                theirs = [torch.zeros(n, dtype=getattr(torch, d)) for n, d in kinds]
                got = dist._compute_bucket_assignment_by_size(ours, limits, [False] * 8, indices)
                want = torch.distributed._compute_bucket_assignment_by_size(theirs, limits, [False] * 8, indices)
                if indices and kinds is shapes:  # PyTorch's unfilled buckets come in hash-map order
                    got, want = sorted(zip(*got)), sorted(zip(*want))
                assert got == want, (limits, indices)


@pytest.mark.parametrize("n", [0, 1, 7, 10, 11, 64])
def test_distributed_sampler_matches_pytorch(n):
    torch = pytest.importorskip("torch")
    from mindtorch_v2.utils.data import DistributedSampler
    for replicas in (1, 2, 3, 4):
        for shuffle in (True, False):
            for drop_last in (True, False):
                if n == 0 and not drop_last:
                    continue  # PyTorch's padding divides by zero on an empty dataset
                for rank in range(replicas):
                    kw = dict(num_replicas=replicas, rank=rank, shuffle=shuffle, seed=7, drop_last=drop_last)
                    ours = DistributedSampler(range(n), **kw)
                    theirs = torch.utils.data.DistributedSampler(range(n), **kw)
                    for epoch in (0, 3):
                        ours.set_epoch(epoch)
                        theirs.set_epoch(epoch)
                        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_sampler_needs_a_group_or_arguments():
    from mindtorch_v2.utils.data import DistributedSampler
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)


def test_ddp_needs_a_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        mt.nn.parallel.DistributedDataParallel(mt.nn.Linear(2, 2))


def test_final_callback_outside_backward():
    from mindtorch_v2.autograd import Variable
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
        Variable._execution_engine.queue_callback(lambda: None)
    x = mt.ones(2, requires_grad=True)
    calls = []
    x.register_post_accumulate_grad_hook(
        lambda p: Variable._execution_engine.queue_callback(lambda: calls.append(p.grad.tolist())))
    (x * 3).sum().backward()
    assert calls == [[3.0, 3.0]]
