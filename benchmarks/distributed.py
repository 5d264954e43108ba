"""torch.distributed benchmark: all_reduce bandwidth (float32 SUM, 1 KiB - 256 MiB) and a DDP
training step, on 2 ranks of this machine, for mindtorch_v2 (gloo, mpi) and PyTorch (gloo).

    python -m benchmarks.distributed [--max-mib 256] [--libs mindtorch_v2:gloo,mindtorch_v2:mpi,torch:gloo]

The cases need several processes, so they run here rather than in the single-process runner
(benchmarks/run.py). Bandwidth is the algorithm bandwidth, bytes / time of one all_reduce (as
nccl-tests' algbw), the median of the timed rounds of rank 0."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sizes(max_mib):
    size = 1024
    while size <= max_mib * 1024 * 1024:
        yield size
        size *= 4


def ddp_step(torch):
    """One DDP training step (forward, backward with the bucketed all-reduces, SGD) of a 4-layer MLP of
    2048 wide (12.6M parameters, 50 MiB of gradients), batch 32 per rank, in an initialised process group;
    returns the callable, which returns the loss."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(2048, 2048), nn.ReLU())], nn.Linear(2048, 10))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x, y = torch.randn(32, 2048), torch.randint(0, 10, (32,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def worker(lib_name, backend, rank, world, path, max_mib):
    import importlib
    torch = importlib.import_module(lib_name)
    import datetime
    dist = importlib.import_module(lib_name + ".distributed")
    # one compute thread per rank on both sides: PyTorch takes it from OMP_NUM_THREADS=1, our pool
    # does not read that variable (it would run 2 threads per rank, 4 on the 2 cores)
    torch.set_num_threads(1)
    if backend == "mpi":
        dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=300))
        rank = dist.get_rank()
    else:
        dist.init_process_group(backend, init_method=f"file://{path}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=300))
    results = []
    for nbytes in _sizes(max_mib):
        t = torch.ones(nbytes // 4)
        rounds = max(3, min(50, (64 << 20) // nbytes))
        for _ in range(2):
            dist.all_reduce(t)
        times = []
        for _ in range(rounds):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        results.append({"case": "all_reduce", "bytes": nbytes, "seconds": statistics.median(times)})
    step = ddp_step(torch)
    times = []
    for i in range(8):
        dist.barrier()
        start = time.perf_counter()
        step()
        if i >= 2:
            times.append(time.perf_counter() - start)
    results.append({"case": "ddp_step", "bytes": 0, "seconds": statistics.median(times)})
    if rank == 0:
        print("RESULTS " + json.dumps(results), flush=True)
    dist.destroy_process_group()


def run(lib_name, backend, max_mib, world=2):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    env.pop("MINDTORCH_PROXY", None)
    args = ["-m", "benchmarks.distributed", "--worker", lib_name, backend]
    with tempfile.TemporaryDirectory() as tmp:
        if backend == "mpi":
            cmd = ["mpirun", "-n", str(world), "--allow-run-as-root", "--oversubscribe", sys.executable, *args, "0",
                   str(world), "-", str(max_mib)]
            outs = [subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800).stdout]
        else:
            path = os.path.join(tmp, "store")
            procs = [subprocess.Popen([sys.executable, *args, str(r), str(world), path, str(max_mib)],
                                      stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT) for r in range(world)]
            outs = [p.communicate(timeout=1800)[0] for p in procs]
    for out in outs:
        for line in out.splitlines():
            if line.startswith("RESULTS "):
                return json.loads(line[len("RESULTS "):])
    raise RuntimeError(f"{lib_name}/{backend} gave no results:\n" + "\n".join(outs))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        lib_name, backend, rank, world, path, max_mib = sys.argv[2:8]
        worker(lib_name, backend, int(rank), int(world), path, int(max_mib))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-mib", type=int, default=256)
    parser.add_argument("--libs", default="mindtorch_v2:gloo,mindtorch_v2:mpi,torch:gloo")
    args = parser.parse_args()
    libs = [tuple(x.split(":")) for x in args.libs.split(",")]
    if not shutil.which("mpirun"):
        libs = [x for x in libs if x[1] != "mpi"]
    table = {f"{lib} {backend}": run(lib, backend, args.max_mib) for lib, backend in libs}
    names = list(table)
    print("| case | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for i, row in enumerate(table[names[0]]):
        if row["case"] == "all_reduce":
            label = f"all_reduce {row['bytes'] // 1024} KiB" if row["bytes"] < 1 << 20 else \
                f"all_reduce {row['bytes'] >> 20} MiB"
            cells = [f"{table[n][i]['bytes'] / table[n][i]['seconds'] / 1e9:.3f} GB/s" for n in names]
        else:
            label = "DDP step (12.6M-param MLP, batch 32/rank)"
            cells = [f"{table[n][i]['seconds'] * 1000:.1f} ms" for n in names]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
