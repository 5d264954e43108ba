"""Factories: tensor(), zeros/ones/full/empty (+ _like, new_*), arange, linspace, eye."""
import array
import numbers

from ._C import ffi, lib
from ._core import raise_status
from . import _dtype
from ._device import core_id
from ._dispatch import call, scalar_kind
from ._tensor import Tensor, wrap


def _dtype_id(dtype, default):
    if dtype is None:
        return default
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"dtype must be torch.dtype, not {type(dtype).__name__}")
    return dtype._id


def _no_grad_arg(requires_grad):
    """Factories take requires_grad=; _grad_factory applies it to the result."""


def parse_size(args, name="size"):
    """Sizes given as varargs ints or as one sequence, as PyTorch accepts them."""
    if len(args) == 1 and not isinstance(args[0], (int, Tensor)) and hasattr(args[0], "__iter__"):
        args = tuple(args[0])
    out = []
    for pos, s in enumerate(args):
        if isinstance(s, bool) or not isinstance(s, (int, Tensor)) and not hasattr(s, "__index__"):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {pos}")
        out.append(s.__index__())
    return out


def _empty(sizes, dtype_id, dev):
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
    return call(lib.mt_empty, len(sizes), sizes, dtype_id, dev)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    _no_grad_arg(requires_grad)
    return _empty(parse_size(size, "empty"), _dtype_id(dtype, lib.mt_get_default_dtype()), core_id(device))


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _no_grad_arg(requires_grad)
    size, stride = parse_size((size,)), parse_size((stride,))
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    return call(lib.mt_empty_strided, len(size), size, stride, _dtype_id(dtype, lib.mt_get_default_dtype()),
                core_id(device))


def _filled(sizes, value, dtype_id, dev):
    t = _empty(sizes, dtype_id, dev)
    if dev == lib.MT_CPU:
        f, i, kind = scalar_kind(value)
        st = lib.mt_fill(t._h, f, i, kind)
        if st:
            raise_status(st)
    return t


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _no_grad_arg(requires_grad)
    return _filled(parse_size(size, "zeros"), 0, _dtype_id(dtype, lib.mt_get_default_dtype()), core_id(device))


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _no_grad_arg(requires_grad)
    return _filled(parse_size(size, "ones"), 1, _dtype_id(dtype, lib.mt_get_default_dtype()), core_id(device))


def _scalar_dtype_id(value):
    if isinstance(value, Tensor):
        return lib.mt_tensor_dtype(value._h)
    _, _, kind = scalar_kind(value)
    return {lib.MT_SCALAR_BOOL: lib.MT_BOOL, lib.MT_SCALAR_INT: lib.MT_I64}.get(kind, lib.mt_get_default_dtype())


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    _no_grad_arg(requires_grad)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled(parse_size((size,), "full"), fill_value, _dtype_id(dtype, _scalar_dtype_id(fill_value)),
                   core_id(device))


def _like_args(input, dtype, device):
    return (list(input.shape), _dtype_id(dtype, lib.mt_tensor_dtype(input._h)),
            lib.mt_tensor_device(input._h) if device is None else core_id(device))


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _no_grad_arg(requires_grad)
    return _empty(*_like_args(input, dtype, device))


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _no_grad_arg(requires_grad)
    sizes, dt, dev = _like_args(input, dtype, device)
    return _filled(sizes, 0, dt, dev)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _no_grad_arg(requires_grad)
    sizes, dt, dev = _like_args(input, dtype, device)
    return _filled(sizes, 1, dt, dev)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    _no_grad_arg(requires_grad)
    sizes, dt, dev = _like_args(input, dtype, device)
    return _filled(sizes, fill_value, dt, dev)


# ---- tensor(data) ---------------------------------------------------------------

_BOOL, _INT, _FLOAT = 0, 1, 2


def _flatten(data, shape, flat, depth=0):
    """Append the scalars of nested sequence data to flat, checking it is rectangular.
    Returns the widest scalar kind seen."""
    kind = -1
    if isinstance(data, Tensor):
        if data.dim() == 0:
            v = data.item()
            flat.append(v)
            return _BOOL if isinstance(v, bool) else _INT if isinstance(v, int) else _FLOAT
        data = data.tolist()
    elif hasattr(data, "__array_interface__") or type(data).__module__ == "numpy":
        data = data.tolist()
    if isinstance(data, (list, tuple)):
        n = len(data)
        if depth == len(shape):
            shape.append(n)
        elif shape[depth] != n:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {n})")
        for item in data:
            kind = max(kind, _flatten(item, shape, flat, depth + 1))
        return kind
    if depth != len(shape):
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got 0)")
    if isinstance(data, bool):
        flat.append(data)
        return _BOOL
    if isinstance(data, numbers.Integral):
        flat.append(int(data))
        return _INT
    if isinstance(data, numbers.Real):
        flat.append(float(data))
        return _FLOAT
    if isinstance(data, numbers.Complex):
        raise NotImplementedError("torch.tensor: complex dtypes are not implemented")
    raise TypeError(f"new(): invalid data type '{type(data).__name__}'")


def _from_flat(flat, shape, kind, dtype_id):
    n = len(flat)
    try:
        if kind == _FLOAT:
            buf, src = array.array("d", flat), lib.MT_F64
        elif kind == _INT:
            buf, src = array.array("q", flat), lib.MT_I64
        else:
            buf, src = array.array("B", flat), lib.MT_BOOL
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long") from None
    ptr = ffi.from_buffer(buf) if n else ffi.NULL
    return call(lib.mt_from_data, ptr, src, len(shape), shape, dtype_id)


def _is_numpy(data):
    return type(data).__module__ == "numpy" and hasattr(data, "dtype")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    _no_grad_arg(requires_grad)
    if isinstance(data, Tensor):
        t = data.detach().clone() if hasattr(data, "detach") else data.clone()
        return t if dtype is None else t.to(dtype)
    if _is_numpy(data):
        from ._interop import from_numpy_copy
        t = from_numpy_copy(data)
        t = t if dtype is None else t.to(dtype)
    else:
        shape, flat = [], []
        kind = _flatten(data, shape, flat)
        if kind < 0:
            kind = _FLOAT  # an empty sequence is a float tensor
        default = {_FLOAT: lib.mt_get_default_dtype(), _INT: lib.MT_I64, _BOOL: lib.MT_BOOL}[kind]
        t = _from_flat(flat, shape, kind, _dtype_id(dtype, default))
    if device is not None and core_id(device) != lib.MT_CPU:
        t = t.to(device)
    return t


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        if dtype is None or data.dtype is dtype:
            return data
        return data.to(dtype)
    if _is_numpy(data) and data.dtype.name != "bfloat16":
        from ._interop import from_numpy
        try:
            t = from_numpy(data)
        except (TypeError, ValueError):
            t = tensor(data)
        return t if dtype is None else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    _no_grad_arg(requires_grad)
    return tensor(s, dtype=dtype if dtype is not None else _dtype.get_default_dtype(), device=device)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    _no_grad_arg(requires_grad)
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    is_float = any(isinstance(v, float) for v in (start, end, step))
    default = lib.mt_get_default_dtype() if is_float else lib.MT_I64
    return call(lib.mt_arange, float(start), float(end), float(step), _dtype_id(dtype, default),
                core_id(device))


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _no_grad_arg(requires_grad)
    return call(lib.mt_linspace, float(_number(start)), float(_number(end)), int(steps),
                _dtype_id(dtype, lib.mt_get_default_dtype()), core_id(device))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _no_grad_arg(requires_grad)
    return call(lib.mt_eye, n, n if m is None else m, _dtype_id(dtype, lib.mt_get_default_dtype()),
                core_id(device))


def legacy_new(cls, *args, device=None):
    """torch.Tensor(...): sizes, data, another tensor, or nothing."""
    if cls is not Tensor:
        t = legacy_new(Tensor, *args, device=device)
        return t._as_subclass(cls)
    if not args:
        return empty(0)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].view_as(args[0])
    if len(args) == 1 and not isinstance(args[0], int) and not type(args[0]).__name__ == "Size":
        return tensor(args[0], dtype=_dtype.get_default_dtype())
    return empty(*args, device=device)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    _no_grad_arg(requires_grad)
    mv = memoryview(buffer).cast("B")
    itemsize = dtype.itemsize
    avail = len(mv) - offset
    if offset < 0 or offset > len(mv):
        raise ValueError(f"both buffer length ({len(mv)}) and offset ({offset}) must be non-negative and "
                         "offset must be less than buffer length")
    if count < 0:
        if avail % itemsize:
            raise ValueError(f"buffer length ({avail} after offset) must be a multiple of element size "
                             f"({itemsize})")
        count = avail // itemsize
    elif count * itemsize > avail:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset}) "
                         f"must not be greater than actual buffer length ({len(mv)})")
    from ._core import keep_alive
    ptr = ffi.from_buffer(mv, require_writable=False)
    deleter, ctx = keep_alive((buffer, mv, ptr))
    return call(lib.mt_from_blob, ffi.cast("char *", ptr) + offset, count * itemsize, 1, [count], ffi.NULL,
                0, dtype._id, deleter, ctx)


def _grad_factory(fn):
    """Let a factory honour requires_grad=True by flagging the tensor it returns."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, requires_grad=False, **kwargs):
        t = fn(*args, **kwargs)
        if requires_grad:
            t.requires_grad_(True)
        return t
    return wrapper


for _name in ("empty", "empty_strided", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
              "full_like", "tensor", "scalar_tensor", "arange", "linspace", "eye", "frombuffer"):
    globals()[_name] = _grad_factory(globals()[_name])
