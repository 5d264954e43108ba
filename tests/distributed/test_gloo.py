"""torch.distributed on Gloo: every scenario of _worker.py on 2 and 4 ranks on loopback, each rank a
subprocess with a timeout (a failure is an error, never a hang); errors against live PyTorch."""
import os
import subprocess
import sys
import time

import pytest

import mindtorch_v2 as mt
import mindtorch_v2.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="built without libgloo-dev")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(scenario, world, tmp_path, timeout=120, worker="_worker.py"):
    """Runs the scenario of worker on `world` ranks; returns each rank's (returncode, output)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1",
               MT_NUM_THREADS="1")
    path = str(tmp_path / f"{scenario}.store")
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, worker), scenario, str(r), str(world), path],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for r in range(world)]
    results = []
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
            results.append((p.returncode, out))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


def assert_ok(results):
    for rank, (code, out) in enumerate(results):
        assert code == 0 and out.rstrip().endswith("OK"), f"rank {rank} exited {code}:\n{out}"


@pytest.mark.parametrize("world", [2, 4])
def test_collectives_every_dtype_and_op(world, tmp_path):
    assert_ok(run("collectives", world, tmp_path))


@pytest.mark.parametrize("world", [2, 4])
def test_p2p_async_objects_barriers(world, tmp_path):
    assert_ok(run("others", world, tmp_path))


def test_subgroups(tmp_path):
    assert_ok(run("subgroups", 4, tmp_path))


def test_killed_rank_makes_survivors_raise(tmp_path):
    start = time.monotonic()
    results = run("killed", 3, tmp_path, timeout=60)
    assert results[-1][0] == 3
    for code, out in results[:-1]:
        assert code == 0 and "raised after" in out, out
    assert time.monotonic() - start < 50


def test_absent_rank_times_out(tmp_path):
    results = run("absent", 2, tmp_path, timeout=60)
    assert results[0][0] == 0 and "raised after" in results[0][1], results[0][1]


# ---- errors: the same calls on one rank, against live PyTorch ---------------------------------

CASES = {
    "broadcast src": lambda d, t: d.broadcast(t.ones(2), 3),
    "reduce dst": lambda d, t: d.reduce(t.ones(2), 3),
    "all_gather size": lambda d, t: d.all_gather([t.ones(3, 2)], t.ones(2, 3)),
    "all_gather dtype": lambda d, t: d.all_gather([t.ones(2, dtype=t.float64)], t.ones(2)),
    "all_gather length": lambda d, t: d.all_gather([t.ones(2), t.ones(2)], t.ones(2)),
    "all_gather_into_tensor size": lambda d, t: d.all_gather_into_tensor(t.ones(3), t.ones(2)),
    "all_gather_into_tensor dtype": lambda d, t: d.all_gather_into_tensor(t.ones(2, dtype=t.int64), t.ones(2)),
    "gather without list": lambda d, t: d.gather(t.ones(2), None, dst=0),
    "gather size": lambda d, t: d.gather(t.ones(2), [t.ones(3)], dst=0),
    "scatter without list": lambda d, t: d.scatter(t.ones(2), None, src=0),
    "scatter size": lambda d, t: d.scatter(t.ones(2), [t.ones(3)], src=0),
    "send to self": lambda d, t: d.send(t.ones(2), 0),
    "not a tensor": lambda d, t: d.all_reduce([1, 2]),
    "new_group too big": lambda d, t: d.new_group([0, 3]),
    "new_group duplicates": lambda d, t: d.new_group([0, 0]),
    "AVG of integers": lambda d, t: d.all_reduce(t.ones(2, dtype=t.int64), op=d.ReduceOp.AVG),
    "BAND of floats": lambda d, t: d.all_reduce(t.ones(2), op=d.ReduceOp.BAND),
    "int16": lambda d, t: d.all_reduce(t.ones(2, dtype=t.int16)),
    "init twice": lambda d, t: d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1),
    "all_gather_object short list": lambda d, t: d.all_gather_object([], 1),
}
BEFORE_INIT = {
    "get_rank": lambda d, t: d.get_rank(),
    "all_reduce": lambda d, t: d.all_reduce(t.ones(2)),
    "barrier": lambda d, t: d.barrier(),
    "new_group": lambda d, t: d.new_group([0]),
    "destroy": lambda d, t: d.destroy_process_group(),
    "unknown backend": lambda d, t: d.init_process_group("foo", store=d.HashStore(), rank=0, world_size=1),
    "nccl": lambda d, t: d.init_process_group("nccl", store=d.HashStore(), rank=0, world_size=1),
    "store and init_method": lambda d, t: d.init_process_group("gloo", "file:///x", store=d.HashStore(), rank=0,
                                                               world_size=1),
}


def outcome(d, t, fn):
    try:
        fn(d, t)
    except Exception as e:
        return type(e).__name__, str(e)
    return None


def test_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    import torch.distributed as td
    before = {k: (outcome(dist, mt, f), outcome(td, torch, f)) for k, f in BEFORE_INIT.items()}
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    td.init_process_group("gloo", store=td.HashStore(), rank=0, world_size=1)
    try:
        during = {k: (outcome(dist, mt, f), outcome(td, torch, f)) for k, f in CASES.items()}
    finally:
        dist.destroy_process_group()
        td.destroy_process_group()
    for name, (ours, theirs) in {**before, **during}.items():
        assert ours == theirs, name


def _batch_threads():
    found = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            if os.sched_getscheduler(int(tid)) == os.SCHED_BATCH:
                found.add(tid)
        except ProcessLookupError:  # a thread that has just ended
            pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scheduling policies per thread are Linux's")
def test_network_thread_is_batch():
    """Gloo's epoll thread runs SCHED_BATCH, the caller's thread keeps its policy: a loop thread that
    preempts the one holding its pair's lock spins until the 4 ms tick (docs/PERFORMANCE.md)."""
    before = _batch_threads()
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        added = _batch_threads() - before
        t = mt.ones(4)
        dist.all_reduce(t)
    finally:
        dist.destroy_process_group()
    assert len(added) == 1 and os.sched_getscheduler(0) == os.SCHED_OTHER
    assert t.tolist() == [1.0] * 4

