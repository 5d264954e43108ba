"""torch.multiprocessing: storages moved into shared memory in place, tensors through queues of the fork and
spawn contexts under both sharing strategies (writes visible both ways), torch.multiprocessing's own queues and
pool, mp.spawn's errors and failure handling, and DataLoader workers that die or stall. Checked against PyTorch
where it is installed. Every wait on a child process has a timeout; scenarios that could hang the main process
run in a subprocess with one."""
import gc
import importlib
import multiprocessing
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from multiprocessing.reduction import ForkingPickler

import pytest

import mindtorch_v2 as mt
import mindtorch_v2.multiprocessing as mp

try:
    import torch
except ImportError:
    torch = None

TIMEOUT = 60
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def library(lib, submodule=""):
    """mindtorch_v2 ("mt") or PyTorch ("torch", skipped where it is not installed), or a submodule of it."""
    L = mt if lib == "mt" else torch
    if L is None:
        pytest.skip("PyTorch is not installed")
    return importlib.import_module(L.__name__ + submodule)


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(old)


def shm_files():
    return {f for f in os.listdir("/dev/shm") if f.startswith(f"torch_{os.getpid()}_")}


# ---- share_memory_ and is_shared ----------------------------------------------------------------------

def _share_views(lib):
    a = lib.arange(12.0)
    v, w = a[2:], a.view(3, 4).t()
    before = [a.is_shared(), v.is_shared()]
    assert a.share_memory_() is a
    v[0] = 100.0
    w[0, 1] = -1.0  # a[4]
    return before + [a.is_shared(), v.is_shared(), w.is_shared(),
                     v.untyped_storage().data_ptr() == a.untyped_storage().data_ptr(), a.tolist()]


def test_share_memory_keeps_views_sharing(strategy):
    got = _share_views(mt)
    assert got[:2] == [False, False] and got[2:6] == [True, True, True, True]
    assert got[6] == [0.0, 1.0, 100.0, 3.0, -1.0] + [float(i) for i in range(5, 12)]
    if torch is not None:
        assert got == _share_views(torch)


def test_share_memory_of_a_leaf_and_a_module(strategy):
    m = mt.nn.Linear(3, 2)
    before = m.weight.detach().clone()
    m.share_memory()
    assert all(p.is_shared() for p in m.parameters())
    assert m.weight.is_leaf and m.weight.requires_grad and mt.equal(m.weight.detach(), before)
    m(mt.ones(1, 3)).sum().backward()  # autograd runs over shared parameters
    assert m.weight.grad is not None


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_share_memory_empty_and_resize(lib, strategy):
    L = library(lib)
    import numpy as np
    assert L.empty(0).share_memory_().is_shared()
    t = L.zeros(4).share_memory_() if L is mt else L.from_numpy(np.zeros(4, "float32"))
    # memory owned elsewhere cannot grow; PyTorch 2.13 says so for numpy memory (and crashes with SIGSEGV
    # on a shared tensor, so the oracle runs the numpy case)
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        t.resize_(100)
    assert not L.UntypedStorage(4).is_shared() and L.UntypedStorage._new_shared(8).is_shared()
    s = L.FloatStorage._new_shared(3)
    assert s.size() == 3 and s.is_shared() and s.tolist() == [0.0] * 3


def test_storage_handles():
    s = mt.UntypedStorage(10)
    fd, n = s._share_fd_cpu_()
    assert fd >= 0 and n == 10 and s._share_fd_cpu_() == (fd, 10) and s.is_shared()
    assert mt.UntypedStorage(0)._share_fd_cpu_() == (-1, 0)
    s2 = mt.UntypedStorage(10)
    manager, name, n = s2._share_filename_cpu_()
    assert manager == b"" and re.fullmatch(rb"/torch_\d+_\d+_\d+", name) and n == 10
    assert name.decode()[1:] in shm_files()
    del s2
    gc.collect()
    assert name.decode()[1:] not in shm_files()  # the last user unlinks the file
    with pytest.raises(RuntimeError, match="_share_fd_: only available on CPU"):
        mt.UntypedStorage(4, device="meta")._share_fd_cpu_()


# ---- pickling for multiprocessing -------------------------------------------------------------------------

@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_non_leaf_requiring_grad_is_refused(lib):
    L = library(lib)
    x = L.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        ForkingPickler.dumps(x)
    assert str(e.value) == ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                            "does not support crossing process boundaries.  If you just want to transfer the data, "
                            "call detach() on the tensor before serializing (e.g., putting it on the queue).")


def test_pickled_in_process_keeps_identity_and_metadata(strategy):
    base = mt.arange(12, dtype=mt.int64).reshape(3, 4)
    view = base.t()[1:]
    p = mt.nn.Parameter(mt.ones(2))
    b2, v2, p2 = ForkingPickler.loads(ForkingPickler.dumps((base, view, p)))
    assert base.is_shared() and v2.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert v2.stride() == view.stride() and v2.storage_offset() == view.storage_offset() and v2.dtype == mt.int64
    assert type(p2) is mt.nn.Parameter and p2.requires_grad
    b2[0, 1] = 99
    assert view[0, 0].item() == 99


# ---- queues between processes -----------------------------------------------------------------------------

def _child_roundtrip(strategy, q_in, q_out):
    """Runs in the child: report what arrived, write into it, send a tensor of its own, read the parent's write."""
    import mindtorch_v2 as mt
    import mindtorch_v2.multiprocessing as mp
    mp.set_sharing_strategy(strategy)
    base, view, leaf, ints = q_in.get(timeout=TIMEOUT)
    view2 = q_in.get(timeout=TIMEOUT)  # a view of base in a message of its own
    same = view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr() == \
        view2.untyped_storage().data_ptr()
    base[0] = 42.0
    own = mt.full((3,), 5, dtype=mt.int32)
    q_out.put((same, view.stride(), view.storage_offset(), str(ints.dtype), leaf.requires_grad, leaf.is_leaf,
               base.is_shared(), own))
    assert q_in.get(timeout=TIMEOUT) == "written"
    q_out.put((base[1].item(), own.tolist()))


def _round_trip(ctx, strategy):
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_child_roundtrip, args=(strategy, q_in, q_out), daemon=True)
    p.start()
    try:
        base = mt.zeros(6)
        leaf = mt.ones(2, requires_grad=True)
        q_in.put((base, base[1:5:2], leaf, mt.arange(3, dtype=mt.int16)))
        q_in.put(base[2:])
        same, stride, offset, dtype, rg, is_leaf, shared, own = q_out.get(timeout=TIMEOUT)
        assert same and stride == (2,) and offset == 1 and dtype == "torch.int16" and rg and is_leaf and shared
        assert base[0].item() == 42.0  # the child's write
        base[1] = 7.0
        own[0] = -3  # into the child's tensor
        q_in.put("written")
        assert q_out.get(timeout=TIMEOUT) == (7.0, [-3, 5, 5])
        p.join(TIMEOUT)
        assert p.exitcode == 0
    finally:
        if p.is_alive():
            p.kill()
            p.join(TIMEOUT)
    return p.pid


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_round_trip_shares_memory(method, strategy):
    child = _round_trip(mp.get_context(method), strategy)
    gc.collect()
    left = [f for f in os.listdir("/dev/shm") if f.startswith((f"torch_{os.getpid()}_", f"torch_{child}_"))]
    assert not left  # both sides let go: the last one unlinked each file


def _square_sum(t):
    return (t * t).sum().item()


def test_pool_map_tensors():
    with mp.get_context("fork").Pool(2) as pool:
        res = pool.map_async(_square_sum, [mt.full((4,), float(i)) for i in range(4)]).get(TIMEOUT)
    assert res == [0.0, 4.0, 16.0, 36.0]


# ---- mp.spawn --------------------------------------------------------------------------------------------

def _raise_in_child(i, msg):
    raise ValueError(f"{msg} {i}")


def _exit_in_child(i, code):
    if code < 0:
        os.kill(os.getpid(), -code)
    os._exit(code)


def _join(lib, fn, args, nprocs=1, start_method="spawn", grace_period=None):
    """start_processes and join until done; what join raises carries the context as .process_context."""
    ctx = lib.multiprocessing.start_processes(fn, args=args, nprocs=nprocs, join=False, start_method=start_method)
    try:
        while not ctx.join(timeout=TIMEOUT, grace_period=grace_period):
            pass
    except Exception as e:
        e.process_context = ctx
        raise
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_spawn_errors(lib):
    L = library(lib)
    importlib.import_module(L.__name__ + ".multiprocessing")
    with pytest.raises(L.multiprocessing.ProcessRaisedException) as e:
        _join(L, _raise_in_child, ("boom",))
    msg = str(e.value)
    assert msg.startswith("\n\n-- Process 0 terminated with the following error:\nTraceback (most recent call last):")
    assert msg.endswith("ValueError: boom 0\n") and e.value.error_index == 0
    with pytest.raises(L.multiprocessing.ProcessExitedException, match="^process 0 terminated with exit code 3$"):
        _join(L, _exit_in_child, (3,))
    with pytest.raises(L.multiprocessing.ProcessExitedException) as e:
        _join(L, _exit_in_child, (-signal.SIGKILL,))
    assert str(e.value) == "process 0 terminated with signal SIGKILL" and e.value.signal_name == "SIGKILL"


def test_spawn_runs_every_process():
    mp.spawn(_exit_in_child, args=(0,), nprocs=2)



def _fail_first(i):
    if i == 0:
        raise ValueError("first")
    time.sleep(TIMEOUT)  # until the parent stops it


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_spawn_failure_stops_the_others(lib):
    L = library(lib)
    importlib.import_module(L.__name__ + ".multiprocessing")
    start = time.monotonic()
    with pytest.raises(L.multiprocessing.ProcessRaisedException, match="ValueError: first") as e:
        _join(L, _fail_first, (), nprocs=2, start_method="fork", grace_period=1.0)
    ctx = e.value.process_context
    assert time.monotonic() - start < TIMEOUT / 2
    assert (e.value.error_index, e.value.error_pid) == (0, ctx.pids()[0])
    assert [p.exitcode for p in ctx.processes] == [1, -signal.SIGTERM]
    left = [f for f in ctx.error_files if os.path.exists(f)]
    for f in left:
        os.unlink(f)
    assert not left or lib == "torch"  # PyTorch leaves the child's error file in the temp directory


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_process_exceptions_pickle(lib):
    M = library(lib, ".multiprocessing")
    spawn = library(lib, ".multiprocessing.spawn")  # M.spawn is the function
    for e in (M.ProcessRaisedException("trace", 1, 123), M.ProcessExitedException("gone", 2, 456, -9, "SIGKILL"),
              M.ProcessExitedException("exit", 3, 789, exit_code=4)):
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e) and isinstance(back, spawn.ProcessException)
        assert vars(back) == vars(e) and (back.error_index, back.error_pid) == (e.error_index, e.error_pid)
    assert (back.exit_code, back.signal_name) == (4, None)


@needs_torch
def test_spawn_warnings_as_pytorch():
    import torch.multiprocessing

    def warned(M):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            M.spawn(_exit_in_child, args=(0,), start_method="fork")  # deprecated: runs with "spawn"
            M.SpawnContext([], [])
        return [(x.category, str(x.message), x.filename) for x in w]

    got = warned(mp)
    assert got == warned(torch.multiprocessing) and len(got) == 2 and got[0][2] == __file__


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_connection_wrapper(lib):
    Q = library(lib, ".multiprocessing.queue")
    a, b = multiprocessing.Pipe()
    wa, wb = Q.ConnectionWrapper(a), Q.ConnectionWrapper(b)
    wa.send({"x": [1, 2]})
    assert wb.poll(TIMEOUT) and wb.recv() == {"x": [1, 2]} and wb.conn is b
    assert pickle.loads(pickle.dumps(Q.ConnectionWrapper(3))).conn == 3  # no recursion while unpickling
    with pytest.raises(AttributeError, match="^'ConnectionWrapper' object has no attribute 'conn'$"):
        Q.ConnectionWrapper.__new__(Q.ConnectionWrapper).poll


def _fill_sevens(q_in, q_out):
    q_in.get().fill_(7.0)
    q_out.put("filled")


@pytest.mark.parametrize("kind", ["Queue", "SimpleQueue"])
def test_torch_multiprocessing_queues_share_memory(kind, strategy):
    from mindtorch_v2.multiprocessing import queue
    ctx = mp.get_context("fork")
    q_in, q_out = getattr(queue, kind)(ctx=ctx), getattr(queue, kind)(ctx=ctx)
    assert isinstance(q_in._reader, queue.ConnectionWrapper) and isinstance(q_in._writer, queue.ConnectionWrapper)
    t = mt.zeros(3)
    p = ctx.Process(target=_fill_sevens, args=(q_in, q_out), daemon=True)
    p.start()
    q_in.put(t)
    p.join(TIMEOUT)
    if p.is_alive():
        p.kill()
    assert p.exitcode == 0 and q_out.get() == "filled" and t.tolist() == [7.0, 7.0, 7.0]


def _square_sum_where(t):
    """The result, and whether this runs inside clean_worker."""
    from mindtorch_v2.multiprocessing.pool import clean_worker
    f, inside = sys._getframe(), False
    while f is not None and not inside:
        inside, f = f.f_code is clean_worker.__code__, f.f_back
    return _square_sum(t), inside


def test_torch_multiprocessing_pool():
    # PyTorch 2.13's Pool cannot start on Python >= 3.8 (SimpleQueue() lacks its ctx); ours works.
    from mindtorch_v2.multiprocessing import pool
    with pool.Pool(2, maxtasksperchild=1, context=mp.get_context("fork")) as p:  # workers replaced after each task
        res = p.map_async(_square_sum_where, [mt.full((4,), float(i)) for i in range(4)], chunksize=1).get(TIMEOUT)
    assert res == [(0.0, True), (4.0, True), (16.0, True), (36.0, True)]


# ---- DataLoader workers ------------------------------------------------------------------------------------

def run_script(body, lib):
    """Run body under `import <lib> as torch` in a fresh interpreter; a hang fails after TIMEOUT."""
    head = "import mindtorch_v2 as torch\n" if lib == "mt" else "import torch\n"
    code = head + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


KILLED_WORKER = """
import os, signal, time
class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        time.sleep(0.05)
        return torch.full((2,), float(i))
it = iter(torch.utils.data.DataLoader(Slow(), batch_size=2, num_workers=2))
first = next(it)
print(first.is_shared(), first.tolist())
os.kill(it._workers[0].pid, signal.SIGKILL)
start = time.monotonic()
try:
    for _ in it:
        pass
except RuntimeError as e:
    print(type(e).__name__, e, time.monotonic() - start < 20)
"""


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_killed_worker_raises(lib):
    if lib == "torch" and torch is None:
        pytest.skip("PyTorch is not installed")
    out = run_script(KILLED_WORKER, lib).splitlines()
    assert out[0] == "True [[0.0, 0.0], [1.0, 1.0]]"
    assert re.fullmatch(r"RuntimeError DataLoader worker \(pid\(s\) \d+\) exited unexpectedly True", out[1]), out


STALLED_WORKER = """
import time
class Stall(torch.utils.data.Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        time.sleep(30 if i else 0)
        return i
try:
    for b in torch.utils.data.DataLoader(Stall(), batch_size=1, num_workers=1, timeout=0.5):
        print(b.tolist())
except RuntimeError as e:
    print(e)
"""


@pytest.mark.parametrize("lib", ["mt", "torch"])
def test_worker_timeout(lib):
    if lib == "torch" and torch is None:
        pytest.skip("PyTorch is not installed")
    assert run_script(STALLED_WORKER, lib).splitlines() == ["[0]", "DataLoader timed out after 0.5 seconds"]


UNPICKLABLE_RESULT = """
class Lambdas(torch.utils.data.Dataset):
    def __len__(self):
        return 2
    def __getitem__(self, i):
        return lambda: i
try:
    list(torch.utils.data.DataLoader(Lambdas(), batch_size=None, num_workers=1))
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])
"""


def test_unpicklable_result_raises_instead_of_hanging():
    # the worker's queue feeder thread fails to pickle it; multiprocessing would print and drop it (PyTorch
    # then waits forever): here the error goes back for that batch
    out = run_script(UNPICKLABLE_RESULT, "mt")
    assert out.startswith("AttributeError Caught AttributeError in DataLoader worker process 0.") or \
        out.startswith("PicklingError Caught PicklingError in DataLoader worker process 0."), out


def test_batches_from_workers_are_shared_and_equal():
    ds = mt.utils.data.TensorDataset(mt.arange(20.0).reshape(10, 2), mt.arange(10))
    single = list(mt.utils.data.DataLoader(ds, batch_size=3))
    multi = list(mt.utils.data.DataLoader(ds, batch_size=3, num_workers=2, pin_memory=False))
    assert all(x.is_shared() and y.is_shared() for x, y in multi)
    assert [(x.tolist(), y.tolist(), y.dtype) for x, y in single] == [(x.tolist(), y.tolist(), y.dtype)
                                                                       for x, y in multi]
