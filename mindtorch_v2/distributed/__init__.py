"""torch.distributed: no distributed backend exists yet, so it reports unavailable (as a PyTorch
build without distributed support does). The commonly imported names exist; collectives and
process-group queries raise, since no process group can be initialised."""
import enum


def is_available():
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


class ReduceOp(enum.Enum):
    SUM = 0
    PRODUCT = 1
    MIN = 2
    MAX = 3
    BAND = 4
    BOR = 5
    BXOR = 6
    PREMUL_SUM = 7
    AVG = 8


class Backend(str):
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UNDEFINED = "undefined"


class ProcessGroup:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.distributed.ProcessGroup is not implemented (no distributed backend)")


group = type("group", (), {"WORLD": None})


def _unavailable(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.distributed.{name} is not implemented (no distributed backend)")
    fn.__name__ = name
    return fn


for _name in ("init_process_group", "destroy_process_group", "new_group", "get_rank", "get_world_size",
              "get_backend", "barrier", "all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor",
              "reduce_scatter", "reduce_scatter_tensor", "broadcast", "broadcast_object_list", "reduce", "gather",
              "gather_object", "scatter", "send", "recv", "isend", "irecv", "all_to_all", "monitored_barrier",
              "init_device_mesh"):
    globals()[_name] = _unavailable(_name)
del _name
