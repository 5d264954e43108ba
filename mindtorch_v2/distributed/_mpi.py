"""ProcessGroupMPI: one MPI communicator (mindtorch_v2._mpi, the C shim over Open MPI) and the
worker thread of every engine group (_gloo.EngineGroup). Ranks and the world come from MPI itself
(the processes mpirun started), so no store is needed. Subgroups are MPI_Comm_split of the world,
which every rank enters, member or not."""
from ._gloo import EngineGroup
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

    def _free(self, comm):
        lib.mtm_comm_free(comm)
