"""ProcessGroupGloo: one connected Gloo context (mindtorch_v2._gloo, the C shim) and one worker
thread that runs this group's collectives in the order they were issued, as PyTorch's
ProcessGroupGloo does; the caller gets a Work at once (async_op) or waits on it. Tensors reach Gloo
as the C core's data pointers; a non-contiguous one goes through a contiguous copy."""
import datetime
import queue
import threading

from .._C import lib as _core
from ._store import _seconds

try:
    from .._gloo import ffi, lib
except ImportError:  # built only where libgloo-dev is installed
    ffi = lib = None

_P2P_SLOT = 1 << 56  # point-to-point slots apart from the collectives' tags (PyTorch's prefix idea)
# PyTorch's ReduceOp values -> the shim's enum mtg_op (AVG is SUM then a division; PREMUL_SUM has none)
_OPS = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6}


def is_available():
    return lib is not None


class _StoreBox:
    """What the store callbacks reach through their handle: the c10d store, and the exception it
    raised (re-raised after the shim returns)."""

    def __init__(self, store):
        self.store = store
        self.error = None


def _callback(fn):
    def run(handle, *args):
        box = ffi.from_handle(handle)
        try:
            fn(box.store, *args)
            return 0
        except BaseException as e:  # noqa: B036 (kept for the caller; Gloo sees only the failure)
            box.error = e
            return 1
    return run


if lib is not None:
    @ffi.def_extern(name="mtg_py_store_set")
    @_callback
    def _store_set(store, key, data, size):
        store.set(ffi.string(key).decode(), ffi.buffer(data, size)[:])

    @ffi.def_extern(name="mtg_py_store_get")
    @_callback
    def _store_get(store, key, out):
        value = store.get(ffi.string(key).decode())
        if lib.mtg_bytes_assign(out, value, len(value)):
            raise RuntimeError(ffi.string(lib.mtg_last_error()).decode())

    @ffi.def_extern(name="mtg_py_store_wait")
    @_callback
    def _store_wait(store, keys, nkeys, timeout_ms):
        names = [ffi.string(keys[i]).decode() for i in range(nkeys)]
        store.wait(names, None if timeout_ms < 0 else datetime.timedelta(milliseconds=timeout_ms))


def _check(status):
    if status:
        raise RuntimeError(ffi.string(lib.mtg_last_error()).decode("utf-8", "replace"))


class Future:
    """torch.futures.Future as a Work returns it: wait() / value() / done() / then()."""

    def __init__(self, group=None):
        self._event = threading.Event()
        self._value = self._error = None
        self._callbacks = []
        self._group = group  # a collective's future: its group's worker may have to run it (wait)

    def _set(self, value=None, error=None):
        self._value, self._error = value, error
        self._event.set()
        for fn in self._callbacks:
            fn(self)

    def done(self):
        return self._event.is_set()

    def wait(self):
        if not self._event.is_set() and self._group is not None:
            self._group._run_queue_until(self)
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def then(self, callback):
        nxt = Future()

        def run(fut):
            try:
                nxt._set(callback(fut))
            except Exception as e:
                nxt._set(error=e)
        if self.done():
            run(self)
        else:
            self._callbacks.append(run)
        return nxt


class Work:
    """c10d's Work: the handle of one issued operation."""

    def __init__(self, outputs=(), group=None):
        self._future = Future(group)
        self._outputs = list(outputs)

    def is_completed(self):
        return self._future.done()

    def is_success(self):
        return self._future.done() and self._future._error is None

    def exception(self):
        return self._future._error

    def wait(self, timeout=None):
        self._future.wait()
        return True

    def result(self):
        return self._outputs

    def get_future(self):
        return self._future

    def _run(self, body):
        try:
            body()
        except BaseException as e:  # noqa: B036 (delivered to whoever waits)
            self._future._set(error=e)
        else:
            self._future._set(self._outputs)


class _P2PWork(Work):
    """A posted send or receive: wait() blocks on the transfer (no worker thread, as PyTorch's)."""

    def __init__(self, pg, buf, outputs, after=None):
        super().__init__(outputs)
        self._pg, self._buf, self._timeout_ms, self._after = pg, buf, pg._timeout_ms, after
        self._lock = threading.Lock()
        self.source_rank = -1

    def wait(self, timeout=None):
        with self._lock:
            if not self._future.done():
                def body():
                    pg = self._pg
                    peer = pg.ffi.new("int *", -1)
                    try:
                        ms = self._timeout_ms if timeout is None else int(_seconds(timeout) * 1000)
                        pg._check(pg._fn("buffer_wait")(self._buf, ms, peer))
                    finally:
                        pg._fn("buffer_free")(self._buf)
                        self._buf = None
                    self.source_rank = peer[0]
                    if self._after:
                        self._after()
                self._run(body)
        return super().wait()

    def _source_rank(self):
        return self.source_rank


class ProcessGroup:
    """c10d's ProcessGroup: the ranks a collective runs over (ProcessGroupGloo is the one backend)."""

    def rank(self):
        raise NotImplementedError("torch.distributed.ProcessGroup.rank is not implemented")

    def size(self):
        raise NotImplementedError("torch.distributed.ProcessGroup.size is not implemented")


class EngineGroup(ProcessGroup):
    """A process group on a C engine (ffi, lib, and its functions' prefix): one worker thread runs
    the collectives in the order they were issued, each with the next tag (so ranks agree)."""
    ffi = lib = None
    prefix = ""

    def _start(self, ctx, rank, size, timeout_ms):
        self._ctx, self._rank, self._size, self._timeout_ms = ctx, rank, size, timeout_ms
        self._tag = 0
        self._lock = threading.Lock()
        self._queue = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._loop, name=f"{self.name()}-pg-rank{rank}", daemon=True)
        self._worker.start()

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def _loop(self):
        while self._run_next():
            pass

    def _run_next(self):
        item = self._queue.get()
        if item is None:
            return False
        work, body = item
        work._run(body)
        return True

    def _run_queue_until(self, future):
        """A future callback runs on the worker thread; when it waits for a collective it issued
        (PowerSGD's chained all-reduces), the worker runs the queue up to it right there."""
        if threading.current_thread() is not self._worker:
            return
        while not future.done():
            if not self._run_next():
                self._queue.put(None)  # the shutdown mark stays for the loop
                raise RuntimeError("Process group has been destroyed or aborted")

    def _context(self):
        if self._ctx is None:
            raise RuntimeError("Process group has been destroyed or aborted")  # a closed group
        return self._ctx

    def _fn(self, name):
        return getattr(self.lib, self.prefix + name)

    def _check(self, status):
        if status:
            raise RuntimeError(self.ffi.string(self._fn("last_error")()).decode("utf-8", "replace"))

    def ptr(self, tensor):
        """The address of a contiguous tensor's element 0, from the C core (no copy)."""
        return self.ffi.cast("void *", int(self.ffi.cast("uintptr_t", _core.mt_tensor_data_ptr(tensor._h))))

    def enqueue(self, body, outputs=()):
        """Issue body(ctx, tag) on the worker thread; the tag fixes its place among the ranks' calls."""
        with self._lock:
            ctx = self._context()
            tag = self._tag
            self._tag = (self._tag + 1) & 0xFFFFFFFF
            work = Work(outputs, self)
            self._queue.put((work, lambda: body(ctx, tag)))
        return work

    def call(self, name, *args):
        """The engine's collective `name`: its status checked (the group's timeout appended)."""
        self._check(self._fn(name)(*args, self._timeout_ms))

    def _p2p(self, name, tensor, nbytes, peer, tag, after=None):
        """A posted send or receive (in the caller's thread, as PyTorch's): its Work waits for it."""
        buf = self.ffi.new(f"{self.prefix}buffer **")
        self._check(self._fn(name)(self._context(), self.ptr(tensor), nbytes, peer, _P2P_SLOT | tag, buf))
        return _P2PWork(self, buf[0], [tensor], after)

    def send(self, tensor, nbytes, dst, tag):
        return self._p2p("send", tensor, nbytes, dst, tag)

    def recv(self, tensor, nbytes, src, tag, after=None):
        return self._p2p("recv", tensor, nbytes, src, tag, after)

    def _free(self, ctx):
        raise NotImplementedError

    def shutdown(self):
        """Ends the worker after the work already queued, then frees the engine's context."""
        with self._lock:
            if self._ctx is None:
                return
            self._queue.put(None)
            ctx, self._ctx = self._ctx, None
        if threading.current_thread() is not self._worker:
            self._worker.join()
        self._free(ctx)

    def __del__(self):
        if getattr(self, "_ctx", None) is not None:
            try:
                self.shutdown()
            except Exception:
                pass


class ProcessGroupGloo(EngineGroup):
    """One Gloo context over `store` for `size` ranks, with its worker thread."""
    ffi, lib, prefix = ffi, lib, "mtg_"

    def __init__(self, store, rank, size, timeout, hostname="", iface=""):
        if lib is None:
            raise RuntimeError("Distributed package doesn't have Gloo built in")
        timeout_ms = int(_seconds(timeout) * 1000)
        box = _StoreBox(store)
        handle = ffi.new_handle(box)
        s = ffi.new("mtg_store *", {"handle": handle, "set": lib.mtg_py_store_set, "get": lib.mtg_py_store_get,
                                     "wait": lib.mtg_py_store_wait})
        out = ffi.new("mtg_context **")
        status = lib.mtg_context_new(s, rank, size, hostname.encode(), iface.encode(), timeout_ms, out)
        if box.error is not None:
            raise box.error
        _check(status)
        self._start(out[0], rank, size, timeout_ms)

    def name(self):
        return "gloo"

    def _free(self, ctx):
        lib.mtg_context_free(ctx)
