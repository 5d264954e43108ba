"""A plain PyTorch DDP training script, as a user writes one (nothing here knows mindtorch_v2):

    torchrun --nproc-per-node=2 examples/ddp_train.py out.pt                  # gloo, one process per rank
    mpirun -n 2 python examples/ddp_train.py out.pt --backend mpi             # Open MPI
    python examples/ddp_train.py out.pt                                       # one process, the full batch

Through mindtorch_v2: `python -m torch_proxy -m torch.distributed.run --nproc-per-node=2 ...`.
Each rank trains on its DistributedSampler shard; the single-process run trains on the union of
the shards of every step, so all runs end with the same parameters (saved by rank 0)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

WORLD = 2  # the single-process run reproduces this many ranks
BATCH = 4  # per rank


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3))


def make_data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return TensorDataset(x, (x[:, :3] * 2 - x[:, 3:6]).sin())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    data = make_data()
    distributed = "WORLD_SIZE" in os.environ or "OMPI_COMM_WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(args.backend)
        model = DDP(make_model())
        samplers = [DistributedSampler(data, shuffle=True, seed=5)]
    else:
        model = make_model()
        samplers = [DistributedSampler(data, num_replicas=WORLD, rank=r, shuffle=True, seed=5) for r in range(WORLD)]
    loaders = [DataLoader(data, batch_size=BATCH, sampler=s) for s in samplers]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        for s in samplers:
            s.set_epoch(epoch)
        for batches in zip(*loaders):
            x = torch.cat([b[0] for b in batches])
            y = torch.cat([b[1] for b in batches])
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    if not distributed or dist.get_rank() == 0:
        state = model.module.state_dict() if distributed else model.state_dict()
        torch.save(state, args.out)
        print(f"final loss {loss.item():.6f}")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
