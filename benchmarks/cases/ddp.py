"""Benchmark case: one DistributedDataParallel training step on 2 ranks of this machine over Gloo, each
library in processes of its own: the runner's child (benchmarks/child.py) is rank 0 and starts rank 1,
which steps in lock-step with it (before each step rank 0 broadcasts whether to go on; the broadcast
of one float is part of the timed step on both sides). The step is benchmarks/distributed.py's
(12.6M-parameter MLP, batch 32 per rank, SGD), one compute thread per rank: 2 ranks on 2 cores."""
import atexit
import datetime
import os
import subprocess
import sys
import tempfile

from ..child import Worker, library, serve
from ..distributed import ddp_step
from ..registry import case

WORLD = 2
case("DDP step, 2 ranks over gloo (12.6M-param MLP, batch 32/rank)", rounds=5)(
    lambda lib: Worker(lib.__name__, __name__, "ddp", WORLD))


def _rank(torch, rank, path):
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{path}", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=120))
    return dist, ddp_step(torch), torch.ones(1)


def _build(name, world):
    torch = library()
    path = os.path.join(tempfile.mkdtemp(), "store")
    proxy = ["-m", "torch_proxy"] if torch.__name__ == "mindtorch_v2" else []
    peer = subprocess.Popen([sys.executable, *proxy, "-m", __spec__.name, "--rank1", path], stdout=sys.stderr)
    dist, step, go = _rank(torch, 0, path)

    def run():
        go.fill_(1)
        dist.broadcast(go, 0)
        return step()

    def stop():
        go.fill_(0)
        dist.broadcast(go, 0)
        peer.wait(timeout=120)
        dist.destroy_process_group()
    atexit.register(stop)
    return run, lambda loss: round(float(loss), 4)


def _rank1(path):
    import torch
    dist, step, go = _rank(torch, 1, path)
    while True:
        dist.broadcast(go, 0)
        if go.item() == 0:
            break
        step()
    dist.destroy_process_group()


if __name__ == "__main__":
    if sys.argv[1] == "--rank1":
        _rank1(sys.argv[2])
    else:
        serve(_build)
