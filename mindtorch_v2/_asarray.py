"""torch.asarray: a tensor over existing memory when it can alias (tensors, storages, buffers,
numpy arrays, DLPack producers), a copy otherwise or when asked."""
import sys

from . import _dtype
from ._tensor import Tensor
from ._device import device as _device
from .storage import UntypedStorage, TypedStorage
from ._tensor_serial import tensor_on_storage, _SCALAR_NAMES


def _is_numpy(obj):
    """A numpy array (numpy scalars are numbers here, as in PyTorch)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.ndarray)


def _is_numpy_scalar(obj):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.generic)


def _buffer(obj):
    if isinstance(obj, (str, Tensor)):
        return None
    try:
        return memoryview(obj)
    except TypeError:
        return None


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    fresh = False  # a new tensor (copying again for copy=True would be wasted)
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, TypedStorage):
        if dtype is not None and dtype is not obj.dtype:
            raise RuntimeError(f"Expected a Storage of type {_SCALAR_NAMES[dtype._name]} or an UntypedStorage, but "
                               f"got {_SCALAR_NAMES[obj.dtype._name]}")
        t = tensor_on_storage(obj._untyped_storage, obj.dtype, 0, (obj._size(),))
    elif isinstance(obj, UntypedStorage):
        dt = _dtype.int64 if dtype is None else dtype  # PyTorch reads an untyped storage as int64 by default
        t = tensor_on_storage(obj, dt, 0, (obj.nbytes() // dt.itemsize,))
    elif _is_numpy(obj):
        from ._interop import from_numpy
        try:
            t = from_numpy(obj)
        except (TypeError, ValueError):  # byte order, negative strides, unsupported dtypes: copied
            if copy is False:
                raise
            from ._creation import tensor
            t, fresh = tensor(obj), True
    elif hasattr(obj, "__dlpack__") and not _is_numpy_scalar(obj):
        from ._dlpack import from_dlpack
        t = from_dlpack(obj)
    elif not _is_numpy_scalar(obj) and _buffer(obj) is not None:
        from ._creation import frombuffer
        t = frombuffer(obj, dtype=_dtype.get_default_dtype() if dtype is None else dtype)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        from ._creation import tensor
        t, fresh = tensor(obj, dtype=dtype), True
    if dtype is not None and t.dtype is not dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_SCALAR_NAMES[t.dtype._name]}' into dtype "
                             f"'{_SCALAR_NAMES[dtype._name]}'.")
        t, fresh = t.to(dtype), True
    if device is not None:
        dev = device if isinstance(device, _device) else _device(device)
        if dev.type != t.device.type:
            if copy is False:
                raise ValueError(f"can't alias tensor from device '{t.device}' to '{dev}'.")
            t, fresh = t.to(dev), True
    if copy and not fresh:
        t = t.clone()
    if requires_grad:
        t.requires_grad_(True)
    return t
