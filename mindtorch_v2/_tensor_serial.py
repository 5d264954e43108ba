"""Tensor methods for storages, pickling and copying: untyped_storage, set_, __reduce_ex__,
__deepcopy__, __setstate__ (merged into _methods.METHODS)."""
import copy
from collections import OrderedDict

from ._C import lib
from . import _dtype
from ._tensor import Tensor
from .storage import UntypedStorage, TypedStorage, _as_bytes, _typed_view, _contiguous_strides
from . import _utils

# C++ type names PyTorch prints in set_'s errors
_CPP_NAMES, _SCALAR_NAMES = _dtype.CPP_NAMES, _dtype.SCALAR_NAMES


def tensor_on_storage(storage, dtype, storage_offset, size, stride=None):
    """A new tensor of dtype viewing an UntypedStorage (bounds checked; the arguments may come
    from an untrusted pickle, so their types are checked as PyTorch's argument parser does)."""
    if not isinstance(storage, UntypedStorage) or not isinstance(dtype, _dtype.dtype) or \
            not _is_int(storage_offset) or not _ints(size) or not (stride is None or _ints(stride)):
        raise TypeError(f"set_() received an invalid combination of arguments - got ({type(storage).__name__}, "
                        f"{type(dtype).__name__}, {type(storage_offset).__name__}, {type(size).__name__}, "
                        f"{type(stride).__name__})")
    size = tuple(int(s) for s in size)
    stride = _contiguous_strides(size) if stride is None or len(stride) == 0 and size else tuple(stride)
    if len(stride) != len(size):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs {len(size)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    return _typed_view(storage._t, dtype, int(storage_offset), size, stride)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _ints(seq):
    return isinstance(seq, (tuple, list)) and all(_is_int(v) for v in seq)


def untyped_storage(self):
    return UntypedStorage._of(self)


def _typed_storage(self):
    return TypedStorage(wrap_storage=UntypedStorage._of(self), dtype=self.dtype, _internal=True)


def storage(self):
    from .storage import _warn_typed_storage_removal
    _warn_typed_storage_removal()
    return _typed_storage(self)


def share_memory_(self):
    """Move the storage into shared memory in place (a no-op once there): views keep sharing it."""
    _typed_storage(self)._share_memory_()
    return self


def is_shared(self):
    return _typed_storage(self)._is_shared()


def _swap_in(self, new):
    """self takes new's header, keeping its leaf requires_grad and .grad (set_ is in place)."""
    from ._views import swap_handle
    rg = lib.mt_tensor_requires_grad(self._h) and lib.mt_tensor_is_leaf(self._h)
    grad = self.grad if rg else None
    swap_handle(self, new)
    if rg:
        self.requires_grad_(True)
        if grad is not None and tuple(grad.shape) == tuple(self.shape):
            self.grad = grad
    return self


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    if lib.mt_tensor_requires_grad(self._h) and lib.mt_is_grad_enabled():
        if lib.mt_tensor_is_leaf(self._h):
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise NotImplementedError("set_ on a tensor with autograd history is not implemented")
    dt = self.dtype
    if source is None:
        return _swap_in(self, tensor_on_storage(UntypedStorage(0, device=self.device), dt, 0, (0,)))
    if isinstance(source, Tensor):
        if source.dtype is not dt:
            raise RuntimeError(f"Could not set tensor of type {_CPP_NAMES[source.dtype._name]} to a tensor of type "
                               f"{_CPP_NAMES[dt._name]}")
        new = _typed_view(_as_bytes(source), dt, source.storage_offset(), tuple(source.shape), source.stride())
        return _swap_in(self, new)
    if isinstance(source, TypedStorage):
        if source.dtype is not dt:
            raise RuntimeError(f"Expected a Storage of type {_CPP_NAMES[dt._name]} or an UntypedStorage, but got "
                               f"type {_SCALAR_NAMES[source.dtype._name]} for argument 1 'storage'")
        source = source._untyped_storage
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    if size is None:
        if storage_offset:
            raise TypeError("set_(): a storage_offset needs a size")
        size, stride = (source.nbytes() // dt.itemsize,), (1,)
    return _swap_in(self, tensor_on_storage(source, dt, storage_offset, size, stride))


def _obj_state(self):
    """Python attributes to pickle with a tensor (PyTorch's _get_obj_state for plain __dict__ state)."""
    return dict(self.__dict__) if self.__dict__ else None


def _reduce_ex_internal(self, proto):
    if self.device.type == "meta":
        return (_utils._rebuild_meta_tensor_no_storage,
                (self.dtype, tuple(self.shape), self.stride(), self.requires_grad))
    if self.dtype in _dtype.FLOAT8:  # dtypes without a legacy <Type>Storage: an untyped storage and the dtype
        return (_utils._rebuild_tensor_v3, (self.untyped_storage(), self.storage_offset(), tuple(self.shape),
                                            self.stride(), self.requires_grad, OrderedDict(), self.dtype))
    args = (_typed_storage(self), self.storage_offset(), tuple(self.shape), self.stride(), self.requires_grad,
            OrderedDict())
    return (_utils._rebuild_tensor_v2, args)


def __reduce_ex__(self, proto):
    state = _obj_state(self)
    Parameter = _utils._parameter_class()
    if Parameter is not None and isinstance(self, Parameter):
        data = self.detach()
        if not state:
            return (_utils._rebuild_parameter, (data, self.requires_grad, OrderedDict()))
        return (_utils._rebuild_parameter_with_state, (data, self.requires_grad, OrderedDict(), state))
    func, args = _reduce_ex_internal(self, proto)
    if type(self) is Tensor and not state:
        return (func, args)
    return (_utils._rebuild_from_type_v2, (func, type(self), args, state))


def __setstate__(self, state):
    """Legacy pickles (BUILD on a Tensor): (storage, offset, size, stride) or Variable state."""
    if not self.is_leaf:
        raise RuntimeError("__setstate__ can be only called on leaf Tensors")
    if len(state) == 4:
        self.set_(*state)
        return
    if len(state) == 5:
        self.data = state[0]
        state = (state[3], state[4], state[2])
    self.requires_grad = state[0]


def __deepcopy__(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                           "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
                           "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    from .autograd.grad_mode import no_grad
    with no_grad():
        if self.device.type == "meta":
            new = self.clone()
        else:
            new_storage = _typed_storage(self)._deepcopy(memo)  # storages shared in self stay shared in the copy
            new = tensor_on_storage(new_storage._untyped_storage, self.dtype, self.storage_offset(),
                                    tuple(self.shape), self.stride())
        if type(self) is not Tensor:
            new = new._alias(type(self))
        if self.requires_grad:
            new.requires_grad_()
        grad = self.grad
        if grad is not None:
            new.grad = grad.__deepcopy__(memo)
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
    memo[id(self)] = new
    return new


def __array_wrap__(self, array, context=None, return_scalar=False):
    """numpy ufuncs on tensors return tensors (bool results as uint8, as PyTorch does)."""
    from ._interop import from_numpy
    if array.dtype == bool:
        array = array.astype("uint8")
    return from_numpy(array)


METHODS = {
    "__array_wrap__": __array_wrap__,
    "untyped_storage": untyped_storage, "storage": storage, "_typed_storage": _typed_storage, "set_": set_,
    "share_memory_": share_memory_, "is_shared": is_shared,
    "__reduce_ex__": __reduce_ex__, "_reduce_ex_internal": _reduce_ex_internal, "__setstate__": __setstate__,
    "__deepcopy__": __deepcopy__,
}

from ._dlpack import METHODS as _DLPACK_METHODS  # noqa: E402
METHODS.update(_DLPACK_METHODS)
