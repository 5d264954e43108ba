"""torch._utils: the functions pickles call to rebuild tensors and parameters.

Files written by PyTorch name these as torch._utils.<name>; mindtorch_v2's save writes the
same names, and load maps them here.
"""
import importlib


def _element_size(dtype):
    return dtype.itemsize


def _import_dotted_name(name):
    components = name.split(".")
    obj = importlib.import_module(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


_PARAMETER = []


def _parameter_class():
    """nn.Parameter if the nn package provides it (looked up once, lazily: nn imports this package)."""
    if not _PARAMETER:
        try:
            from .nn.parameter import Parameter
        except ImportError:
            Parameter = None
        _PARAMETER.append(Parameter)
    return _PARAMETER[0]


def _rebuild_tensor(storage, storage_offset, size, stride):
    from ._tensor_serial import tensor_on_storage
    from .storage import TypedStorage
    if not isinstance(storage, TypedStorage):
        raise TypeError(f"_rebuild_tensor: expected a storage, got {type(storage).__name__}")
    return tensor_on_storage(storage._untyped_storage, storage.dtype, storage_offset, size, stride)


def _check_metadata(metadata):
    if metadata:  # conj/neg bits: mindtorch_v2 has no complex or lazily negated tensors
        raise NotImplementedError(f"_rebuild_tensor_v2: tensor metadata {metadata!r} is not supported")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _check_metadata(metadata)
    tensor = _rebuild_tensor(storage, storage_offset, size, stride)
    tensor.requires_grad = requires_grad
    return tensor


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    _check_metadata(metadata)
    from ._tensor_serial import tensor_on_storage
    t = tensor_on_storage(storage._untyped_storage if hasattr(storage, "_untyped_storage") else storage, dtype,
                          storage_offset, size, stride)
    t.requires_grad = requires_grad
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from ._tensor import Tensor
    if not isinstance(data, Tensor):  # arguments from an untrusted pickle
        raise TypeError(f"_rebuild_parameter: expected a Tensor, got {type(data).__name__}")
    Parameter = _parameter_class()
    if Parameter is None:  # no nn.Parameter yet: a leaf that requires grad is the closest thing
        return data.detach().requires_grad_(requires_grad)
    return Parameter(data, requires_grad)


def _set_obj_state(obj, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    if dict_state:
        for k, v in dict_state.items():
            setattr(obj, k, v)
    if slots_state:
        for k, v in slots_state.items():
            setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    from ._creation import empty_strided
    t = empty_strided(size, stride, dtype=dtype, device="meta")
    return t.requires_grad_(requires_grad) if requires_grad else t


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor subclass or a tensor with Python attributes."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type) if hasattr(ret, "as_subclass") else ret._as_subclass(new_type)
    setstate = getattr(type(ret), "__setstate__", None)
    from ._tensor import Tensor
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    t = data.to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    from ._interop import from_numpy_copy
    t = from_numpy_copy(data).to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _not_supported(name, what):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{name}: {what} are not supported by mindtorch_v2")
    fn.__name__ = fn.__qualname__ = name
    return fn


_rebuild_qtensor = _not_supported("_rebuild_qtensor", "quantized tensors")


def _rebuild_sparse_tensor(layout, data):
    """A COO tensor from its pickled (indices, values, size[, is_coalesced])."""
    import mindtorch_v2 as torch
    if layout is not torch.sparse_coo:
        raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")
    indices, values, size, *rest = data
    return torch.sparse_coo_tensor(indices, values, size, check_invariants=False,
                                   is_coalesced=rest[0] if rest else None)

_rebuild_nested_tensor = _not_supported("_rebuild_nested_tensor", "nested tensors")
_rebuild_wrapper_subclass = _not_supported("_rebuild_wrapper_subclass", "wrapper tensor subclasses")


def _validate_loaded_sparse_tensors():
    pass


# The functions a weights-only load may call, as PyTorch's allowlist names them.
REBUILD_FUNCTIONS = (_rebuild_parameter, _rebuild_parameter_with_state, _rebuild_qtensor, _rebuild_tensor,
                     _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_sparse_tensor,
                     _rebuild_meta_tensor_no_storage, _rebuild_nested_tensor, _rebuild_wrapper_subclass,
                     _rebuild_device_tensor_from_numpy, _rebuild_device_tensor_from_cpu_tensor)


class _ClassProperty:
    """A read-only property looked up on the class (the getter receives the class, or is a staticmethod)."""

    def __init__(self, getter):
        self.fget = getter

    def __get__(self, instance, owner=None):
        return self.fget.__get__(instance, type(instance) if owner is None else owner)()


def classproperty(func):
    """Decorator: a property of the class itself (torch._utils.classproperty)."""
    return _ClassProperty(func if isinstance(func, (classmethod, staticmethod)) else classmethod(func))
