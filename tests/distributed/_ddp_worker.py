"""One rank of a DistributedDataParallel scenario: python _ddp_worker.py SCENARIO RANK WORLD FILE [BACKEND]
(BACKEND mpi under mpirun: RANK, WORLD and FILE are ignored), or python _ddp_worker.py SCENARIO env under
torchrun (gloo, rank and world from the launcher's environment).
PyTorch's own parity check: DDP on WORLD ranks, each on its slice of the batch, against one local
model on the full batch, parameters compared after every step. Prints OK at the end."""
import datetime
import os
import sys

import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist
from mindtorch_v2 import nn
from mindtorch_v2.distributed.algorithms.ddp_comm_hooks import default_hooks
from mindtorch_v2.nn.parallel import DistributedDataParallel as DDP

PER_RANK = 4


class Net(nn.Module):
    def __init__(self, unused=False, bn=False):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16) if bn else None
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 4)
        self.unused = nn.Linear(4, 4) if unused else None

    def forward(self, x):
        x = self.fc1(x)
        if self.bn is not None:
            x = self.bn(x)
        return self.fc3(torch.relu(self.fc2(torch.relu(x))))


def batch(step, world):
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(world * PER_RANK, 8, generator=g), torch.randn(world * PER_RANK, 4, generator=g)


def mine(t, rank):
    return t[rank * PER_RANK:(rank + 1) * PER_RANK]


def close(a, b, what, rtol=1e-6):
    scale = max(float(b.abs().max()), 1e-6)
    err = float((a - b).abs().max())
    assert err <= rtol * scale, f"{what}: max error {err} > {rtol} * {scale}"


def check_params(ddp, local, step, rtol=1e-6):
    for (name, p), q in zip(ddp.module.named_parameters(), local.parameters()):
        close(p.detach(), q.detach(), f"step {step} {name}", rtol)


def models(rank, unused=False, bn=False):
    """(this rank's model, the local reference): every rank starts from different weights, so the
    construction broadcast is what makes them rank 0's."""
    torch.manual_seed(rank)
    model = Net(unused, bn)
    torch.manual_seed(0)
    return model, Net(unused, bn)


def train(rank, world, steps=6, rtol=1e-6, hook=None, accumulate=1, **ddp_kwargs):
    unused = ddp_kwargs.get("find_unused_parameters", False) or ddp_kwargs.get("static_graph", False)
    model, local = models(rank, unused)
    ddp = DDP(model, **ddp_kwargs)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    check_params(ddp, local, "init")
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    lopt = torch.optim.SGD(local.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        opt.zero_grad()
        lopt.zero_grad()
        for micro in range(accumulate):
            x, y = batch(step * accumulate + micro, world)
            ctx = ddp.no_sync() if micro < accumulate - 1 else _nothing()
            with ctx:
                nn.functional.mse_loss(ddp(mine(x, rank)), mine(y, rank)).backward()
            nn.functional.mse_loss(local(x), y).backward()
        check_grads_synced(ddp)
        opt.step()
        lopt.step()
        check_params(ddp, local, step, rtol)
    if unused:
        assert ddp.module.unused.weight.grad is None, "a parameter unused everywhere got a gradient"
    return ddp


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def check_grads_synced(ddp):
    """Every rank holds the same averaged gradient."""
    for name, p in ddp.module.named_parameters():
        if p.grad is None:
            continue
        gathered = [torch.zeros_like(p.grad) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, p.grad.contiguous())
        for g in gathered:
            assert bool((g == gathered[0]).all()), f"{name}: gradients differ across ranks"


# ---- scenarios ----------------------------------------------------------------------------------

def parity(rank, world):
    ddp = train(rank, world)
    assert list(ddp.state_dict())[0] == "module.fc1.weight", list(ddp.state_dict())
    assert ddp._has_rebuilt_buckets


def buckets(rank, world):
    """Small buckets (several per step, rebuilt after step 1), as bucket views, with no_sync accumulation."""
    ddp = train(rank, world, bucket_cap_mb=0.0002, gradient_as_bucket_view=True, accumulate=3)
    assert ddp._has_rebuilt_buckets and len(ddp.reducer.buckets) > 2, len(ddp.reducer.buckets)
    for b in ddp.reducer.buckets:
        for i, view in zip(b.indices, b.views):
            assert ddp.reducer.params[i].grad.data_ptr() == view.data_ptr(), "grad is not its bucket view"


def unused(rank, world):
    train(rank, world, find_unused_parameters=True, bucket_cap_mb=0.0002)


def static(rank, world):
    train(rank, world, static_graph=True, accumulate=2)


def hooks(rank, world):
    train(rank, world, hook=default_hooks.allreduce_hook)
    train(rank, world, hook=default_hooks.fp16_compress_hook, rtol=2e-3)
    train(rank, world, hook=default_hooks.bf16_compress_hook, rtol=2e-2)


def overlap(rank, world):
    """A bucket's all-reduce starts while backward still runs: when the hook of the bucket holding
    the last layer runs, the first layer has no gradient yet."""
    model, _ = models(rank)
    ddp = DDP(model, bucket_cap_mb=0.0002)
    seen = []

    def hook(state, bucket):
        seen.append((bucket.index(), ddp.module.fc1.weight.grad is None))
        return default_hooks.allreduce_hook(state, bucket)
    ddp.register_comm_hook(None, hook)
    x, y = batch(0, world)
    for it in range(2):  # one bucket before the first iteration's order is known, three after
        seen.clear()
        ddp.zero_grad(set_to_none=True)
        nn.functional.mse_loss(ddp(mine(x, rank)), mine(y, rank)).backward()
        assert [i for i, _ in seen] == list(range(len(ddp.reducer.buckets))), seen
        assert it == 0 or (len(seen) == 3 and seen[0][1] and not seen[-1][1]), seen
    try:
        ddp.register_comm_hook(None, hook)
    except RuntimeError as e:
        assert "can only be called once" in str(e)
    else:
        raise AssertionError("a second comm hook was accepted")


def uneven(rank, world):
    """Rank r has 3 + r batches; under join the finished ranks shadow the others' all-reduces, whose
    gradients are divided by the initial world size (PyTorch's default)."""
    model, local = models(rank)
    ddp = DDP(model, bucket_cap_mb=0.0002)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    lopt = torch.optim.SGD(local.parameters(), lr=0.1)
    steps = [3 + r for r in range(world)]
    with ddp.join():
        for step in range(steps[rank]):
            opt.zero_grad()
            lopt.zero_grad()
            x, y = batch(step, world)
            nn.functional.mse_loss(ddp(mine(x, rank)), mine(y, rank)).backward()
            active = [r for r in range(world) if steps[r] > step]
            for r in active:
                (nn.functional.mse_loss(local(mine(x, r)), mine(y, r)) / world).backward()
            opt.step()
            lopt.step()
            check_params(ddp, local, step)
    for step in range(steps[rank], max(steps)):  # the reference catches up with the last joiner
        lopt.zero_grad()
        x, y = batch(step, world)
        for r in (r for r in range(world) if steps[r] > step):
            (nn.functional.mse_loss(local(mine(x, r)), mine(y, r)) / world).backward()
        lopt.step()
    check_params(ddp, local, "after join")


def syncbn(rank, world):
    """SyncBatchNorm on each rank's slice against BatchNorm on the full batch: outputs, input
    gradients, parameters and running statistics."""
    model, local = models(rank, bn=True)
    ddp = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(model))
    assert isinstance(ddp.module.bn, nn.SyncBatchNorm)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    lopt = torch.optim.SGD(local.parameters(), lr=0.1)
    for step in range(4):
        opt.zero_grad()
        lopt.zero_grad()
        x, y = batch(step, world)
        xd, xl = mine(x, rank).clone().requires_grad_(), x.clone().requires_grad_()
        out, lout = ddp(xd), local(xl)
        close(out.detach(), mine(lout.detach(), rank), f"step {step} output")
        nn.functional.mse_loss(out, mine(y, rank)).backward()
        nn.functional.mse_loss(lout, y).backward()
        close(xd.grad / world, mine(xl.grad, rank), f"step {step} input grad", 1e-5)
        opt.step()
        lopt.step()
        check_params(ddp, local, step)
        close(ddp.module.bn.running_mean, local.bn.running_mean, "running_mean")
        close(ddp.module.bn.running_var, local.bn.running_var, "running_var")
    ddp.eval()
    close(ddp(mine(x, rank)).detach(), mine(local.eval()(x).detach(), rank), "eval output")


def buffers(rank, world):
    """Buffers are broadcast from rank 0 at construction and before every forward."""
    model, _ = models(rank, bn=True)
    ddp = DDP(model)
    inside = []
    model.bn.register_forward_pre_hook(lambda mod, args: inside.append(mod.running_mean.clone()))
    for step in range(3):
        x, _ = batch(step, world)
        ddp(mine(x, rank)).sum().backward()
        gathered = [torch.zeros_like(inside[-1]) for _ in range(world)]
        dist.all_gather(gathered, inside[-1])
        assert all(bool((g == gathered[0]).all()) for g in gathered), f"step {step}: buffers differ in forward"
    assert not bool((model.bn.running_mean == inside[-1]).all()), "the forward did not update the buffer"
    model, _ = models(rank, bn=True)
    model.bn.running_mean.fill_(rank)
    DDP(model, broadcast_buffers=False)
    assert float(model.bn.running_mean[0]) == rank, "broadcast_buffers=False still broadcast"


def unfinished(rank, world):
    """A parameter without a gradient (and find_unused_parameters off): the next forward raises PyTorch's error."""
    model, _ = models(rank, unused=True)
    ddp = DDP(model)
    x, y = batch(0, world)
    nn.functional.mse_loss(ddp(mine(x, rank)), mine(y, rank)).backward()
    try:
        ddp(mine(x, rank))
    except RuntimeError as e:
        assert str(e).startswith("Expected to have finished reduction in the prior iteration"), e
        assert "Parameter indices which did not receive grad for rank" in str(e), e
    else:
        raise AssertionError("the unfinished reduction was not reported")


def mismatch(rank, world):
    """Ranks wrapping different models: PyTorch's errors (the count on every rank; a shape on the
    rank that differs from rank 0, while rank 0 sees it leave)."""
    try:
        DDP(nn.Sequential(nn.Linear(2, 2), *([nn.Linear(2, 2)] if rank else [])))
    except RuntimeError as e:
        other = 1 - rank
        assert str(e) == (f"DDP expects same model across all ranks, but Rank {rank} has {2 + 2 * rank} params, "
                          f"while rank {other} has inconsistent {2 + 2 * other} params."), e
    else:
        raise AssertionError("different parameter counts were accepted")
    try:
        DDP(nn.Linear(2, 3 if rank else 2))
    except RuntimeError as e:
        if rank:
            assert str(e) == ("[1]: params[0] in this process with sizes [3, 2] appears not to match sizes of the "
                              "same param in process 0."), e
    else:
        raise AssertionError("different parameter shapes were accepted")
    print("OK", flush=True)
    os._exit(0)  # the group is broken: no destroy


def main():
    scenario, backend = sys.argv[1], sys.argv[5] if len(sys.argv) > 5 else "gloo"
    if sys.argv[2:] == ["env"]:  # under torchrun: MASTER_ADDR, RANK, WORLD_SIZE from the agent
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
        rank, world = dist.get_rank(), dist.get_world_size()
    elif backend == "mpi":  # under mpirun: MPI's runtime assigns rank and world
        dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        dist.init_process_group(backend, init_method=f"file://{path}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=60))
    globals()[scenario](rank, world)
    dist.destroy_process_group()
    os.write(1, f"OK {rank}\n".encode() if sys.argv[2:] == ["env"] else b"OK\n")  # one write: torchrun's
    # workers share stdout, and print's text and newline can interleave


if __name__ == "__main__":
    main()
