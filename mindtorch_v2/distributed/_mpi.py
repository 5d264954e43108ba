"""ProcessGroupMPI: one MPI communicator (mindtorch_v2._mpi, the C shim over Open MPI) and the
worker thread of every engine group (_gloo.EngineGroup). Ranks and the world come from MPI itself
(the processes mpirun started), so no store is needed. Subgroups are MPI_Comm_split of the world,
which every rank enters, member or not."""
from ._gloo import EngineGroup, Work
from ._store import _seconds

try:
    from .._mpi import ffi, lib
except ImportError:  # built only where Open MPI's libopenmpi-dev is installed
    ffi = lib = None

_world = None  # this process's MPI_COMM_WORLD duplicate, once MPI is initialised


def is_available():
    return lib is not None


def _check(status):
    if status:
        raise RuntimeError(ffi.string(lib.mtm_last_error()).decode("utf-8", "replace"))


def world():
    """(rank, size) of MPI_COMM_WORLD, initialising MPI the first time."""
    rank, size = ffi.new("int *"), ffi.new("int *")
    _check(lib.mtm_init(rank, size))
    return rank[0], size[0]


class _RequestWork(Work):
    """A posted MPI send or receive: wait() polls it (until the group's timeout)."""

    def __init__(self, req, outputs, timeout_ms, after=None):
        super().__init__(outputs)
        self._req, self._timeout_ms, self._after = req, timeout_ms, after
        self.source_rank = -1

    def wait(self, timeout=None):
        if not self._future.done():
            def body():
                peer = ffi.new("int *", -1)
                try:
                    ms = self._timeout_ms if timeout is None else int(_seconds(timeout) * 1000)
                    _check(lib.mtm_request_wait(self._req, ms, peer))
                finally:
                    lib.mtm_request_free(self._req)
                    self._req = None
                self.source_rank = peer[0]
                if self._after:
                    self._after()
            self._run(body)
        return super().wait()

    def _source_rank(self):
        return self.source_rank


def split(ranks):
    """The communicator of the given world ranks (None: all), or NULL on a non-member. Collective:
    every world rank calls it, in the same order."""
    global _world
    me, size = world()
    if _world is None:
        out = ffi.new("mtm_comm **")
        _check(lib.mtm_comm_world(out))
        _world = out[0]
    member = ranks is None or me in ranks
    out = ffi.new("mtm_comm **")
    _check(lib.mtm_comm_split(_world, int(member), me if ranks is None or not member else ranks.index(me), out))
    return out[0]


class ProcessGroupMPI(EngineGroup):
    """A communicator of split() (each group its own, so destroying it leaves the others), with
    the engine group's worker thread."""
    ffi, lib, prefix = ffi, lib, "mtm_"

    def __init__(self, comm, rank, size, timeout):
        self._start(comm, rank, size, int(_seconds(timeout) * 1000))

    def name(self):
        return "mpi"

    def send(self, tensor, nbytes, dst, tag):
        req = ffi.new("mtm_request **")
        _check(lib.mtm_send(self._context(), self.ptr(tensor), nbytes, dst, tag, req))
        return _RequestWork(req[0], [tensor], self._timeout_ms)

    def recv(self, tensor, nbytes, src, tag, after=None):
        req = ffi.new("mtm_request **")
        _check(lib.mtm_recv(self._context(), self.ptr(tensor), nbytes, src, tag, req))
        return _RequestWork(req[0], [tensor], self._timeout_ms, after)

    def _free(self, comm):
        lib.mtm_comm_free(comm)
