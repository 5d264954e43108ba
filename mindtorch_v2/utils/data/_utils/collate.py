"""default_collate / default_convert (PyTorch 2.13's code)."""
import collections
import contextlib
import copy
import re
from collections.abc import Callable
import mindtorch_v2 as torch
np_str_obj_array_pattern = re.compile('[SaUO]')

def default_convert(data):
    elem_type = type(data)
    if isinstance(data, torch.Tensor):
        return data
    elif elem_type.__module__ == 'numpy' and elem_type.__name__ != 'str_' and (elem_type.__name__ != 'string_'):
        if elem_type.__name__ == 'ndarray' and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return torch.as_tensor(data)
    elif isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            else:
                return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    elif isinstance(data, tuple) and hasattr(data, '_fields'):
        return elem_type(*(default_convert(d) for d in data))
    elif isinstance(data, tuple):
        return [default_convert(d) for d in data]
    elif isinstance(data, collections.abc.Sequence) and (not isinstance(data, (str, bytes))):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            else:
                return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    else:
        return data
default_collate_err_msg_format = 'default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}'

def collate(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None=None):
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
                return clone
            else:
                return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    elif isinstance(elem, tuple) and hasattr(elem, '_fields'):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch, strict=False)))
    elif isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all((len(elem) == elem_size for elem in it)):
            raise RuntimeError('each element in list of batch should be of equal size')
        transposed = list(zip(*batch, strict=False))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        else:
            try:
                if isinstance(elem, collections.abc.MutableSequence):
                    clone = copy.copy(elem)
                    for i, samples in enumerate(transposed):
                        clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                    return clone
                else:
                    return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
            except TypeError:
                return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))

def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if elem.is_nested:
        raise RuntimeError('Batches of nested tensors are not currently supported by the default collate_fn; please provide a custom collate_fn to handle them appropriately.')
    out = None
    if torch.utils.data.get_worker_info() is not None:
        # in a worker process: stack straight into shared memory, which the batch will travel through
        numel = sum(x.numel() for x in batch)
        storage = elem._typed_storage()._new_shared(numel, device=elem.device)
        out = torch.empty(0, dtype=elem.dtype, device=elem.device).set_(storage, 0, (len(batch), *elem.size()))
    return _stack(batch, out)


def _stack(batch, out=None):
    """torch.stack(batch, 0): the op library's stack when it has one, else one copy per sample into the result."""
    if hasattr(torch, "stack"):
        return torch.stack(batch, 0, out=out)
    elem = batch[0]
    for i, t in enumerate(batch):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.shape != elem.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(elem.shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    dtype = elem.dtype
    for t in batch[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    out = torch.empty((len(batch),) + tuple(elem.shape), dtype=dtype, device=elem.device)
    with torch.no_grad():
        for i, t in enumerate(batch):
            out[i].copy_(t)
    return out


def collate_numpy_array_fn(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([torch.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)

def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None=None):
    return torch.as_tensor(batch)

def collate_float_fn(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None=None):
    return torch.tensor(batch, dtype=torch.float64)

def collate_int_fn(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None=None):
    return torch.tensor(batch)

def collate_str_fn(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None=None):
    return batch
default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {torch.Tensor: collate_tensor_fn}
with contextlib.suppress(ImportError):
    import numpy as np
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[np.bool_, np.number, np.object_] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn

def default_collate(batch):
    return collate(batch, collate_fn_map=default_collate_fn_map)
