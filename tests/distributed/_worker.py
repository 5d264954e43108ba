"""One rank of a tests/distributed scenario: python _worker.py SCENARIO RANK WORLD FILE [BACKEND]. It
checks its own results (an AssertionError exits nonzero) and prints OK at the end. With BACKEND mpi
(under mpirun) RANK, WORLD and FILE are ignored: MPI's runtime assigns them."""
import datetime
import functools
import os
import sys
import time

import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
OPS = {dist.ReduceOp.SUM: lambda a, b: a + b if a.dtype != torch.bool else a | b,
       dist.ReduceOp.PRODUCT: lambda a, b: a * b if a.dtype != torch.bool else a & b,
       dist.ReduceOp.MIN: torch.minimum, dist.ReduceOp.MAX: torch.maximum,
       dist.ReduceOp.BAND: lambda a, b: a & b, dist.ReduceOp.BOR: lambda a, b: a | b,
       dist.ReduceOp.BXOR: lambda a, b: a ^ b}


def value(rank, dtype, n=6):
    """Rank r's input: small values, exact in every dtype (products too)."""
    base = (torch.arange(n) * (rank + 2) + rank) % 3 + (0 if dtype == torch.bool else 1)
    return (base % 2 if dtype == torch.bool else base).to(dtype)


def same(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all()), f"{what}: {a} != {b}"


def collectives(rank, world):
    for dtype in DTYPES:
        inputs = [value(r, dtype) for r in range(world)]
        for op, fn in OPS.items():
            if op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR) and dtype.is_floating_point:
                continue
            t = inputs[rank].clone()
            dist.all_reduce(t, op=op)
            same(t, functools.reduce(fn, inputs), f"all_reduce {dtype} {op}")
            t = inputs[rank].clone()
            dist.reduce(t, dst=world - 1, op=op)
            if rank == world - 1:
                same(t, functools.reduce(fn, inputs), f"reduce {dtype} {op}")
        if dtype.is_floating_point:
            t = inputs[rank].clone()
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            same(t, functools.reduce(torch.add, inputs) / world, f"AVG {dtype}")
        t = inputs[rank].clone()
        dist.broadcast(t, src=1)
        same(t, inputs[1], f"broadcast {dtype}")
        out = [torch.zeros(6, dtype=dtype) for _ in range(world)]
        dist.all_gather(out, inputs[rank])
        for r in range(world):
            same(out[r], inputs[r], f"all_gather {dtype}")
        flat = torch.zeros(world * 6, dtype=dtype)
        dist.all_gather_into_tensor(flat, inputs[rank])
        same(flat, torch.cat(inputs), f"all_gather_into_tensor {dtype}")
        gl = [torch.zeros(6, dtype=dtype) for _ in range(world)] if rank == 0 else None
        dist.gather(inputs[rank], gl, dst=0)
        if rank == 0:
            for r in range(world):
                same(gl[r], inputs[r], f"gather {dtype}")
        t = torch.zeros(6, dtype=dtype)
        dist.scatter(t, [value(r + 5, dtype) for r in range(world)] if rank == 0 else None, src=0)
        same(t, value(rank + 5, dtype), f"scatter {dtype}")
        if dtype != torch.bool:
            chunks = [[value(r * world + c, dtype) for c in range(world)] for r in range(world)]
            t = torch.zeros(6, dtype=dtype)
            dist.reduce_scatter(t, [c.clone() for c in chunks[rank]])
            same(t, functools.reduce(torch.add, [chunks[r][rank] for r in range(world)]), f"reduce_scatter {dtype}")
            t = torch.zeros(6, dtype=dtype)
            dist.reduce_scatter_tensor(t, torch.cat(chunks[rank]), op=dist.ReduceOp.MAX)
            same(t, functools.reduce(torch.maximum, [chunks[r][rank] for r in range(world)]), f"rs_tensor {dtype}")
            outs = [torch.zeros(6, dtype=dtype) for _ in range(world)]
            dist.all_to_all(outs, [c.clone() for c in chunks[rank]])
            for r in range(world):
                same(outs[r], chunks[r][rank], f"all_to_all {dtype}")


def others(rank, world):
    # all_to_all_single with uneven splits: rank r sends r + 1 rows to every rank
    inp = torch.arange((rank + 1) * world * 2, dtype=torch.float32).reshape(-1, 2) + 100 * rank
    out = torch.zeros(sum(r + 1 for r in range(world)), 2)
    dist.all_to_all_single(out, inp, [r + 1 for r in range(world)], [rank + 1] * world)
    at = 0
    for r in range(world):
        src = torch.arange((r + 1) * world * 2, dtype=torch.float32).reshape(-1, 2) + 100 * r
        same(out[at:at + r + 1], src[rank * (r + 1):(rank + 1) * (r + 1)], "all_to_all_single")
        at += r + 1
    # point to point around the ring, blocking and async; a receive from any source
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = torch.zeros(3, dtype=torch.int64)
    if rank % 2 == 0:
        dist.send(torch.full((3,), rank, dtype=torch.int64), nxt)
        assert dist.recv(got, prv) == prv
    else:
        assert dist.recv(got, prv) == prv
        dist.send(torch.full((3,), rank, dtype=torch.int64), nxt)
    same(got, torch.full((3,), prv, dtype=torch.int64), "send/recv")
    works = [dist.isend(torch.full((2,), 10.0 * rank), nxt, tag=3), dist.irecv(got2 := torch.zeros(2), prv, tag=3)]
    for w in works:
        w.wait()
    same(got2, torch.full((2,), 10.0 * prv), "isend/irecv")
    if rank == 0:
        seen = set()
        for _ in range(world - 1):
            t = torch.zeros(1, dtype=torch.int32)
            src = dist.recv(t)
            assert int(t) == src * 7, (t, src)
            seen.add(src)
        assert seen == set(range(1, world))
    else:
        dist.send(torch.tensor([rank * 7], dtype=torch.int32), 0)
    # async collectives: issued together, completed in order on the worker thread
    ts = [torch.full((1000,), float(rank + i)) for i in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for i, w in enumerate(works):
        assert w.wait() is True and w.is_completed() and w.is_success()
        same(ts[i], torch.full((1000,), float(sum(r + i for r in range(world)))), "async all_reduce")
        assert w.get_future().wait()[0] is ts[i]
    # a non-contiguous tensor is reduced in place
    t = (torch.arange(6.).reshape(2, 3) + rank).t()
    dist.all_reduce(t)
    same(t, (torch.arange(6.).reshape(2, 3) * world + sum(range(world))).t(), "non-contiguous")
    # objects
    objs = [None, None] if rank else [{"a": 1}, [1, "x"]]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"a": 1}, [1, "x"]], objs
    gathered = [None] * world
    dist.all_gather_object(gathered, ("rank", rank, "x" * rank))
    assert gathered == [("rank", r, "x" * r) for r in range(world)], gathered
    gl = [None] * world if rank == 1 else None
    dist.gather_object({rank}, gl, dst=1)
    assert rank != 1 or gl == [{r} for r in range(world)], gl
    out = [None]
    dist.scatter_object_list(out, [f"to{r}" * (r + 1) for r in range(world)] if rank == 0 else None, src=0)
    assert out == [f"to{rank}" * (rank + 1)], out
    dist.barrier()
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))


def subgroups(rank, world):
    evens = dist.new_group([r for r in range(world) if r % 2 == 0])
    odds = dist.new_group([r for r in range(world) if r % 2 == 1])
    mine = evens if rank % 2 == 0 else odds
    other = odds if rank % 2 == 0 else evens
    assert other == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(other) == -1
    assert dist.get_rank(mine) == rank // 2 and dist.get_world_size(mine) == (world + 1 - rank % 2) // 2
    members = [r for r in range(world) if r % 2 == rank % 2]
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=mine)
    same(t, torch.tensor([float(sum(members))]), "subgroup all_reduce")
    t = torch.tensor([float(rank)])
    dist.broadcast(t, src=members[-1], group=mine)  # a global rank, translated to the group's
    same(t, torch.tensor([float(members[-1])]), "subgroup broadcast")
    assert dist.get_process_group_ranks(mine) == members
    dist.destroy_process_group(mine)
    try:
        dist.all_reduce(t, group=mine)
        raise AssertionError("a destroyed group ran a collective")
    except ValueError as e:
        assert str(e) == "Invalid process group specified or has been destroyed.", e
    t = torch.ones(1)
    dist.all_reduce(t)
    same(t, torch.tensor([float(world)]), "world after subgroups")


def killed(rank, world):
    """The last rank dies; the others' collective raises (the peer's socket closes) well within the timeout."""
    # Under Gloo it dies only once every rank has finished connecting (dying mid-handshake fails init instead);
    # MPI's init is collective already.
    ready = dist.FileStore(sys.argv[4] + ".ready", world) if dist.get_backend() == "gloo" else None
    if rank == world - 1:
        if ready:
            ready.wait([f"up{r}" for r in range(world - 1)])
        os._exit(3)
    if ready:
        ready.set(f"up{rank}", "1")
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(1 << 16))
        dist.all_reduce(torch.ones(1 << 16))
    except RuntimeError as e:
        print(f"raised after {time.monotonic() - start:.1f}s: {e}")
        os._exit(0)  # skips destroy: the group's peers are gone
    raise AssertionError("the collective with a dead rank returned")


def absent(rank, world):
    """The last rank stays alive but never joins the collective: the others raise after the timeout."""
    if rank == world - 1:
        time.sleep(8)
        os._exit(0)
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(4))
    except RuntimeError as e:
        took = time.monotonic() - start
        assert took < 6, took
        print(f"raised after {took:.1f}s: {e}")
        os._exit(0)
    raise AssertionError("the collective with an absent rank returned")


def main():
    scenario, backend = sys.argv[1], sys.argv[5] if len(sys.argv) > 5 else "gloo"
    timeout = datetime.timedelta(seconds=2 if scenario == "absent" else 60)
    if backend == "mpi":
        dist.init_process_group("mpi", timeout=timeout)
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        dist.init_process_group(backend, init_method=f"file://{path}", rank=rank, world_size=world, timeout=timeout)
    assert dist.is_initialized() and dist.get_rank() == rank and dist.get_world_size() == world
    assert dist.get_backend() == backend
    globals()[scenario](rank, world)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print("OK")


if __name__ == "__main__":
    main()
