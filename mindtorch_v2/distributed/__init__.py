"""torch.distributed: process groups on Gloo (the optional engine mindtorch_v2._gloo; without it
is_gloo_available() is False and init_process_group("gloo") raises PyTorch's error), the c10d
stores and rendezvous, the collectives (distributed_c10d.py), and DDP's Reducer (_reducer.py)."""
from ._store import (DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore, HashStore,  # noqa: F401
                     PrefixStore, QueueEmptyError, Store)
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import (Backend, GroupMember, ProcessGroup, ReduceOp, RedOpType, Work,  # noqa: F401
                               all_gather, all_gather_into_tensor, all_gather_object, all_reduce, all_to_all,
                               all_to_all_single, barrier, broadcast, broadcast_object_list, default_pg_timeout,
                               destroy_process_group, gather, gather_object, get_backend, get_global_rank,
                               get_group_rank, get_process_group_ranks, get_rank, get_world_size, group,
                               init_process_group, irecv, is_available, is_gloo_available, is_initialized,
                               is_mpi_available, is_nccl_available, is_torchelastic_launched, is_ucc_available,
                               is_xccl_available, isend, monitored_barrier, new_group, recv, reduce, reduce_scatter,
                               reduce_scatter_tensor, scatter, scatter_object_list, send)
from ._gloo import ProcessGroupGloo  # noqa: F401
from ._reducer import (_DEFAULT_FIRST_BUCKET_BYTES, GradBucket, Reducer, _broadcast_coalesced,  # noqa: F401
                       _compute_bucket_assignment_by_size)
from ._tcp_store import TCPStore  # noqa: F401
from .rendezvous import register_rendezvous_handler, rendezvous  # noqa: F401


def _unavailable(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.distributed.{name} is not implemented")
    fn.__name__ = name
    return fn


from .device_mesh import DeviceMesh, init_device_mesh  # noqa: E402,F401  (PyTorch exports both here)
