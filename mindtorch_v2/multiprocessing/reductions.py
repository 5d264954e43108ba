"""torch.multiprocessing.reductions: how tensors and storages pickle between processes (PyTorch 2.13's
reductions for CPU and meta tensors; mindtorch_v2 has no CUDA, sparse or nested tensors).

A tensor travels as (its type, its storage, offset, size, stride, requires_grad); its storage travels
as a shared-memory handle: an fd (file_descriptor strategy, passed by multiprocessing's DupFd) or a
/dev/shm name (file_system). The receiver maps the same memory; shared_cache makes one handle arriving
twice (a tensor and a view of it) give one storage.
"""
import multiprocessing
import os
import threading
import weakref
from multiprocessing import reduction
from multiprocessing.util import register_after_fork

import mindtorch_v2 as torch

try:
    # Early load resource_sharer to prevent a partially initialized instance from being inherited in a
    # forked child process (PyTorch's note: DupFd needs it, and queues pickle in a feeder thread that
    # may overlap with a fork).
    import multiprocessing.resource_sharer  # noqa: F401
except ImportError:
    pass


class StorageWeakRef:
    """A weak reference to a Storage; cdata is an integer identity of the storage (its address)."""

    __slots__ = ["cdata", "_ref"]

    def __init__(self, storage):
        storage = storage.untyped() if hasattr(storage, "untyped") else storage
        self.cdata = storage._cdata
        block = storage._block()
        # a shared storage lives exactly as long as its mapping; otherwise follow the byte tensor
        self._ref = weakref.ref(block if block is not None else storage._t)

    def expired(self):
        return self._ref() is None

    def __hash__(self):
        return self.cdata

    def __eq__(self, other):
        if id(self) == id(other):
            return True
        return self.cdata == other.cdata


class SharedCache(dict):
    """Dictionary from multiprocessing handles to weak references of the shared mappings behind them."""

    def __init__(self) -> None:
        # free_dead_references() is called if the len exceeds the current limit. The limit scales with
        # the number of remaining live objects.
        self.limit = 128
        # `fork` inherits lock state: a fresh lock in the child, as multiprocessing does
        self._after_fork()
        register_after_fork(self, SharedCache._after_fork)

    def _after_fork(self):
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            return dict.get(self, key)

    def __setitem__(self, key, block_ref):
        with self.lock:
            dict.__setitem__(self, key, block_ref)
            if len(self) > self.limit:
                self.free_dead_references()

    def free_dead_references(self):
        live = 0
        for key, block_ref in list(self.items()):
            if block_ref() is None:
                del self[key]
            else:
                live += 1
        self.limit = max(128, live * 2)


# mapping from handles to weak references of SharedBlocks
shared_cache = SharedCache()


def _cache(key, storage):
    block = storage._block()
    if block is not None:
        shared_cache[key] = weakref.ref(block)


def rebuild_tensor(cls, storage, metadata):
    storage_offset, size, stride, requires_grad = metadata
    return _with_grad(cls, torch._utils._rebuild_tensor(storage, storage_offset, size, stride), requires_grad)


def _with_grad(cls, t, requires_grad):
    if cls == torch.nn.parameter.Parameter:
        # requires_grad goes to the constructor: integer Parameters must refuse it there
        return torch.nn.parameter.Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def rebuild_meta_tensor(tensor_cls, tensor_size, tensor_stride, tensor_offset, dtype, storage_size_bytes,
                        requires_grad):
    untyped_storage = torch.UntypedStorage(storage_size_bytes, device="meta")
    typed_storage = torch.TypedStorage(wrap_storage=untyped_storage, dtype=dtype, _internal=True)
    t = torch._utils._rebuild_tensor(typed_storage, tensor_offset, tensor_size, tensor_stride)
    return _with_grad(tensor_cls, t, requires_grad)


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    if tensor.device.type == "meta":
        return (rebuild_meta_tensor, (type(tensor), tensor.size(), tensor.stride(), tensor.storage_offset(),
                                      tensor.dtype, tensor.untyped_storage().size(), tensor.requires_grad))
    # backward hooks purposely omitted, as in PyTorch (Note [Don't serialize hooks])
    metadata = (tensor.storage_offset(), tensor.size(), tensor.stride(), tensor.requires_grad)
    return (rebuild_tensor, (type(tensor), tensor._typed_storage(), metadata))


def fd_id(fd):
    # a tuple which uniquely identifies the file behind a file descriptor
    stat = os.fstat(fd)
    return (stat.st_ino, stat.st_dev)


def storage_from_cache(cls, key):
    block_ref = shared_cache.get(key)
    block = block_ref() if block_ref is not None else None
    if block is None:
        return None
    return torch.UntypedStorage._over_block(block)


def rebuild_storage_fd(cls, df, size):
    fd = df.detach()
    try:
        storage = storage_from_cache(cls, fd_id(fd))
        if storage is not None:
            return storage
        storage = cls._new_shared_fd_cpu(fd, size)
        _cache(fd_id(fd), storage)
        return storage
    finally:
        os.close(fd)


def rebuild_storage_filename(cls, manager, handle, size, dtype=None):
    storage = storage_from_cache(cls, handle)
    if storage is not None:
        return storage._shared_decref()
    if dtype is None:
        storage = torch.UntypedStorage._new_shared_filename_cpu(manager, handle, size)
    else:
        byte_size = size * dtype.itemsize
        untyped_storage = torch.UntypedStorage._new_shared_filename_cpu(manager, handle, byte_size)
        storage = torch.TypedStorage(wrap_storage=untyped_storage, dtype=dtype, _internal=True)
    _cache(handle, storage.untyped())
    return storage._shared_decref()  # the count the sender took for this message


def rebuild_storage_empty(cls):
    return cls()


def rebuild_typed_storage(storage, dtype):
    return torch.storage.TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)


# Use for torch.storage.TypedStorage
def reduce_typed_storage(storage):
    return (rebuild_typed_storage, (storage._untyped_storage, storage.dtype))


def rebuild_typed_storage_child(storage, storage_type):
    return storage_type(wrap_storage=storage, _internal=True)


# Use for child classes of torch.storage.TypedStorage, like torch.FloatStorage
def reduce_typed_storage_child(storage):
    return (rebuild_typed_storage_child, (storage._untyped_storage, type(storage)))


def reduce_storage(storage):
    from . import get_sharing_strategy

    if storage.is_cuda:
        raise RuntimeError("Cannot pickle CUDA storage; try pickling a CUDA tensor instead")
    elif storage.device.type == "meta":
        raise RuntimeError("Cannot pickle meta storage; try pickling a meta tensor instead")
    elif get_sharing_strategy() == "file_system":
        metadata = storage._share_filename_cpu_()
        cache_key = metadata[1]
        rebuild = rebuild_storage_filename
        if isinstance(storage, torch.TypedStorage):
            metadata += (storage.dtype,)
        storage._shared_incref()  # held for the message until the receiver has mapped the file
    elif storage.size() == 0:
        # Empty storages (size 0) cannot be mmapped.
        return (rebuild_storage_empty, (type(storage),))
    else:
        fd, size = storage._share_fd_cpu_()
        df = multiprocessing.reduction.DupFd(fd)
        cache_key = fd_id(fd)
        metadata = (df, size)
        rebuild = rebuild_storage_fd

    _cache(cache_key, storage)
    return (rebuild, (type(storage),) + metadata)


def init_reductions():
    from mindtorch_v2.storage import LEGACY_CLASSES
    reduction.register(torch.UntypedStorage, reduce_storage)
    for t in LEGACY_CLASSES.values():
        reduction.register(t, reduce_typed_storage_child)
    reduction.register(torch.storage.TypedStorage, reduce_typed_storage)
    reduction.register(torch.Tensor, reduce_tensor)
    from mindtorch_v2.nn.parameter import Parameter
    reduction.register(Parameter, reduce_tensor)
