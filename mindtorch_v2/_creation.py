"""Factories: tensor(), zeros/ones/full/empty (+ _like, new_*), arange, linspace, logspace, eye."""
import builtins
import array
import numbers
import math
import operator

from ._C import ffi, lib
from ._core import check, dtype_id, raise_status
from . import _dtype
from ._device import core_id, get_default_device as _default_device
from ._dispatch import call, scalar_kind
from ._tensor import Tensor


def _no_grad_arg(requires_grad):
    """Factories take requires_grad=; _grad_factory applies it to the result."""


def _is_int(s):
    if isinstance(s, Tensor):
        return s.dim() == 0 and not s.dtype.is_floating_point
    return not isinstance(s, float) and hasattr(s, "__index__")


def parser_type_name(obj):
    """A value's type as PyTorch's argument parser names it (the C tp_name): a class defined in Python
    by its name (Tensor), a built-in by its name, another C type with its module (numpy.ndarray)."""
    k = type(obj)
    heap = k.__flags__ & (1 << 9)  # Py_TPFLAGS_HEAPTYPE
    return k.__name__ if heap or k.__module__ == "builtins" else f"{k.__module__}.{k.__name__}"


def parse_size(args, name="size", required=False, arg="size", position=1):
    """Sizes given as varargs ints or as one sequence, with PyTorch's argument-parser texts (for the
    argument `arg` at `position`: 1 for a method's, 2 for a function's after its input)."""
    if all(type(s) is int for s in args) and (position == 1 or len(args) > 1):  # the common case: plain ints
        if args or not required:
            return list(args)
    if not args:
        if required:
            raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
        return []
    where = f"argument '{arg}' (position {position})"
    seq = args
    if len(args) == 1:
        if _is_int(args[0]) and position == 1:  # a function's one sizes argument must be a sequence
            return [args[0].__index__()]
        seq = args[0]
        if not hasattr(seq, "__iter__") or isinstance(seq, (str, Tensor)):
            raise TypeError(f"{name}(): {where} must be tuple of ints, not {parser_type_name(seq)}")
        seq = list(seq)
    for pos, s in enumerate(seq):
        if _is_int(s):
            continue
        if pos == 0 and len(args) > 1:
            raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
        if pos == 0:
            raise TypeError(f"{name}(): {where} must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos 0")
        raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {pos + 1} with error "
                        f"\"type must be tuple of ints,but got {type(s).__name__}\"")
    return [s.__index__() for s in seq]


def sizes_or_keyword(name, arg, args, keyword):
    """The sizes of a method that takes them as varargs or by keyword, as PyTorch's parser does
    (x.reshape(2, 3), x.reshape((2, 3)), x.reshape(shape=(2, 3))); returned as varargs."""
    if keyword is None:
        if args:
            return args
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    if args:
        raise TypeError(f"{name}() got multiple values for argument '{arg}'")
    # by keyword the parser takes a sequence only, and names no position
    seq = keyword if isinstance(keyword, (list, tuple)) else None
    if seq is None or (seq and not _is_int(seq[0])):
        raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not {parser_type_name(keyword)}")
    return (keyword,)


def one_positional(name, args):
    """torch.reshape(input, shape)-style functions take their sizes as one argument, not as varargs."""
    if len(args) > 1:
        raise TypeError(f"{name}() takes 2 positional arguments but {len(args) + 1} were given")


def _empty(sizes, dtype_id, dev, strides=None):
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
    if strides is None:
        return call(lib.mt_empty, len(sizes), sizes, dtype_id, dev)
    return call(lib.mt_empty_strided, len(sizes), sizes, strides, dtype_id, dev)


def _sizes(positional, size, name):
    """The size of empty/zeros/ones, given positionally (ints or one sequence) or as size=."""
    if size is not None:
        if positional:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        positional = (size,)
    return parse_size(positional, name, True)


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, _name="empty"):
    return _empty(_sizes(args, size, _name), dtype_id(dtype, lib.mt_get_default_dtype(), _name),
                  core_id(device))


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    size, stride = parse_size((size,), "empty_strided"), parse_size((stride,), "empty_strided")
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    return _empty(size, dtype_id(dtype, lib.mt_get_default_dtype(), "empty_strided"), core_id(device), stride)


def _fill_value(value, name):
    """A Python number for fill_value (0-dim tensors give their item)."""
    if isinstance(value, Tensor) and value.dim() == 0 or _is_numpy(value) and value.ndim == 0:
        return value.item()
    if isinstance(value, numbers.Number):
        return complex(value) if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real) else value
    raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, not {type(value).__name__}")


def _filled(sizes, value, dtype_id, dev, strides=None):
    """A new tensor filled with a Python number, converted with PyTorch's overflow checks."""
    t = _empty(sizes, dtype_id, dev, strides)
    if isinstance(value, complex):
        if dev == lib.MT_CPU:
            from ._dispatch import complex_operand
            v = complex_operand(value)  # held: its handle must outlive the call
            check(lib.mt_copy_(t._h, v._h))
            lib.mt_tensor_set_version(t._h, 0)
        return t
    if value:
        _dtype.check_scalar(value, _dtype.BY_ID[dtype_id])
    if dev == lib.MT_CPU:
        f, i, kind = scalar_kind(value)
        st = lib.mt_fill(t._h, f, i, kind)
        if st:
            raise_status(st)
        lib.mt_tensor_set_version(t._h, 0)  # a new tensor: filling it is not an in-place op on anything
    return t


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          _name="zeros"):
    sizes = _sizes(args, size, _name)
    if _name == "zeros" and any(s < 0 for s in sizes):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(sizes, 0, dtype_id(dtype, lib.mt_get_default_dtype(), _name), core_id(device))


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
         _name="ones"):
    return _filled(_sizes(args, size, _name), 1, dtype_id(dtype, lib.mt_get_default_dtype(), _name),
                   core_id(device))


def _scalar_dtype_id(value):
    if isinstance(value, complex):
        return _infer_dtype(value)
    _, _, kind = scalar_kind(value)
    return {lib.MT_SCALAR_BOOL: lib.MT_BOOL, lib.MT_SCALAR_INT: lib.MT_I64}.get(kind, lib.mt_get_default_dtype())


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, _name="full"):
    sizes = parse_size((size,), _name)
    if isinstance(size, int):
        raise TypeError(f"{_name}(): argument 'size' (position 1) must be tuple of ints, not int")
    fill_value = _fill_value(fill_value, _name)
    return _filled(sizes, fill_value, dtype_id(dtype, _scalar_dtype_id(fill_value), _name), core_id(device))


def like_strides(input, memory_format=None):
    """Strides of a new tensor shaped like input for memory_format (default: preserve_format)."""
    fmt = getattr(memory_format, "_name", "preserve_format")
    if fmt == "preserve_format":
        return preserve_strides(input)
    shape = list(input.shape)
    if fmt in ("channels_last", "channels_last_3d"):
        from ._views import channels_last_strides
        return channels_last_strides(shape, fmt)
    return None  # contiguous


def _like_args(input, dtype, device, memory_format, name):
    return (list(input.shape), dtype_id(dtype, lib.mt_tensor_dtype(input._h), name),
            lib.mt_tensor_device(input._h) if device is None else core_id(device), like_strides(input, memory_format))


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    sizes, dt, dev, strides = _like_args(input, dtype, device, memory_format, "empty_like")
    return _empty(sizes, dt, dev, strides)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    sizes, dt, dev, strides = _like_args(input, dtype, device, memory_format, "zeros_like")
    return _filled(sizes, 0, dt, dev, strides)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    sizes, dt, dev, strides = _like_args(input, dtype, device, memory_format, "ones_like")
    return _filled(sizes, 1, dt, dev, strides)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    sizes, dt, dev, strides = _like_args(input, dtype, device, memory_format, "full_like")
    return _filled(sizes, _fill_value(fill_value, "full_like"), dt, dev, strides)


# ---- tensor(data): PyTorch's compute_sizes, infer_scalar_type and recursive_store -------------

_MAX_DIMS = 64
_NP_DTYPES = {"bool": lib.MT_BOOL, "uint8": lib.MT_U8, "int8": lib.MT_I8, "int16": lib.MT_I16, "int32": lib.MT_I32,
              "int64": lib.MT_I64, "float16": lib.MT_F16, "float32": lib.MT_F32, "float64": lib.MT_F64,
              "complex64": lib.MT_C64, "complex128": lib.MT_C128}


def _is_numpy(data):
    return type(data).__module__ == "numpy" and hasattr(data, "dtype")


def _is_sequence(obj):
    """PySequence_Check as PyTorch sees it: tensors are not sequences here (but are iterated)."""
    return isinstance(obj, (list, tuple, range, str, bytes)) or (_is_numpy(obj) and hasattr(obj, "__len__"))


def _compute_sizes(data):
    """The shape, read by following the first element of each nested sequence."""
    sizes = []
    while _is_sequence(data):
        n = len(data)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
        if n == 0:
            break
        data = data[0]
    return sizes


def _numpy_dtype(obj):
    name = obj.dtype.name
    if name not in _NP_DTYPES:
        raise TypeError(f"can't convert np.ndarray of type numpy.{name}. The only supported types are: float64, "
                        "float32, float16, int64, int32, int16, int8, uint8, and bool.")
    return _NP_DTYPES[name]


def _infer_dtype(obj):
    """The dtype of nested data: numpy scalars/arrays and tensors keep theirs, Python bools/ints/floats
    give bool/int64/the default dtype, sequences promote over their items (empty: the default)."""
    if _is_numpy(obj):
        return _numpy_dtype(obj)
    if isinstance(obj, bool):
        return lib.MT_BOOL
    if isinstance(obj, numbers.Integral):
        return lib.MT_I64
    if isinstance(obj, float):
        return lib.mt_get_default_dtype()
    if isinstance(obj, complex):  # the default complex dtype
        return lib.MT_C128 if lib.mt_get_default_dtype() == lib.MT_F64 else lib.MT_C64
    if isinstance(obj, Tensor):
        return lib.mt_tensor_dtype(obj._h)
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    if _is_sequence(obj):
        if len(obj) == 0:
            return lib.mt_get_default_dtype()
        if type(obj) is list:  # the common leaf: plain Python numbers, promoted by their kinds at once
            kinds = set(map(type, obj))
            if kinds <= _PLAIN_NUMBERS:
                return (lib.mt_get_default_dtype() if float in kinds else lib.MT_I64 if int in kinds
                        else lib.MT_BOOL)
        d = None
        for item in obj:
            if item is obj:
                raise TypeError("new(): self-referential lists are incompatible")
            k = _infer_dtype(item)
            d = k if d is None else lib.mt_promote_types(d, k)
        return d
    raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")


_PLAIN_NUMBERS = frozenset((bool, int, float))
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _float_item(v):
    if isinstance(v, (numbers.Real, Tensor)) or _is_numpy(v):
        return float(v)
    raise TypeError(f"must be real number, not {type(v).__name__}")


def _complex_parts(v):
    v = complex(v)
    return v.real, v.imag


def _int_item(d):
    """Store a Python number into integer dtype d as PyTorch does: floats truncate, with overflow checks."""
    def conv(v):
        if isinstance(v, float):
            _dtype.check_scalar(v, d, d._name)
            return int(v)
        v = operator.index(v)
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")
        _dtype.check_scalar(v, d, d._name)
        return v
    return conv


def _store(obj, sizes, dim, d, conv, out):
    """Append the converted scalars of obj (checked to be rectangular) to out."""
    if dim == len(sizes):
        out.append(conv(obj))
        return
    if not _is_sequence(obj) and not isinstance(obj, Tensor):
        raise TypeError("not a sequence")
    n = len(obj)
    if n != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {n})")
    if dim + 1 == len(sizes) and type(obj) is list:
        out.extend(obj if _stored_as_is(obj, d) else map(conv, obj))
    else:
        for item in obj:
            _store(item, sizes, dim + 1, d, conv, out)


def _stored_as_is(items, d):
    """A list that array.array stores exactly as the conversion into d would (a hot path: transformers'
    tests build inputs of a million Python floats): plain numbers into doubles, in-range ints into int64."""
    kinds = set(map(type, items))
    if d.is_floating_point:
        return kinds <= _PLAIN_NUMBERS
    return d is _dtype.int64 and kinds <= {int} and _INT64_MIN <= min(items) and max(items) <= _INT64_MAX


def _from_sequence(data, dtype_id):
    sizes = _compute_sizes(data)
    target = _infer_dtype(data) if dtype_id is None else dtype_id  # a given dtype: no inference
    d = _dtype.BY_ID[target]
    if d.is_complex:  # (real, imaginary) pairs of doubles
        conv, code, src = _complex_parts, "d", lib.MT_C128
    elif d.is_floating_point:
        conv, code, src = _float_item, "d", lib.MT_F64
    elif d is _dtype.bool:
        conv, code, src = bool, "B", lib.MT_BOOL
    else:
        conv, code, src = _int_item(d), "q", lib.MT_I64
    flat = []
    if 0 not in sizes:
        _store(data, sizes, 0, d, conv, flat)
    if src == lib.MT_C128:
        flat = [x for pair in flat for x in pair]
    buf = array.array(code, flat)
    return call(lib.mt_from_data, ffi.from_buffer(buf) if flat else ffi.NULL, src, len(sizes), sizes, target)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    _no_grad_arg(requires_grad)
    dt = None if dtype is None else dtype_id(dtype, None)
    if isinstance(data, Tensor):
        t = data.detach() if hasattr(data, "detach") else data
        t = copy_preserving(t, t.dtype if dtype is None else dtype)
    elif isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    elif _is_numpy(data) and hasattr(data, "__len__"):  # an ndarray (numpy scalars take the generic path)
        from ._interop import from_numpy
        t = from_numpy(data)
        t = copy_preserving(t, t.dtype if dtype is None else dtype)
    else:
        t = _from_sequence(data, dt)
    if core_id(device) != lib.MT_CPU:  # device=None: the default device
        t = t.to(device if device is not None else _default_device())
    return t


def preserve_strides(t):
    """PyTorch's memory_format=preserve_format: a non-overlapping dense tensor keeps its strides;
    otherwise dense strides in the order of its strides (infer_dense_strides)."""
    sizes, strides = list(t.shape), list(t.stride())
    order = sorted((i for i in range(len(sizes)) if sizes[i] > 1), key=lambda i: strides[i])
    expected = 1
    for i in order:
        if strides[i] != expected:
            break
        expected *= sizes[i]
    else:
        return strides
    perm = list(range(len(sizes) - 1, -1, -1))  # fastest first; insertion sort as TensorIterator does
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            a, b = perm[d0], perm[d1]
            if strides[a] == 0 or strides[b] == 0:
                continue
            if strides[a] > strides[b] or (strides[a] == strides[b] and sizes[a] > sizes[b]):
                perm[d0], perm[d1] = b, a
                d1 = d0
            elif strides[a] < strides[b]:
                break
    out, s = [0] * len(sizes), 1
    for i in perm:
        out[i] = s
        s *= max(sizes[i], 1)
    return out


def copy_preserving(t, dtype, device=None):
    """A copy of t (converted to dtype, on device) in t's memory layout (preserve_format)."""
    out = empty_strided(t.shape, preserve_strides(t), dtype=dtype, device=t.device if device is None else device)
    if lib.mt_tensor_device(out._h) == lib.MT_CPU:
        check(lib.mt_copy_(out._h, t._h))
    return out


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
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dt = dtype_id(dtype, lib.mt_get_default_dtype() if is_float else lib.MT_I64, "arange")
    # float16/bfloat16 read the bounds in float32 first, with its overflow check (the core checks int64's)
    if dt in (lib.MT_F16, lib.MT_BF16):
        for v in (start, end, step):
            if v - v == 0:  # (non-finite bounds get arange's own error)
                _dtype.check_scalar(v, _dtype.float32)
    if dt == lib.MT_I64 and not is_float and max(abs(start), abs(end), abs(step)) > 2 ** 53:
        return _arange_int64(start, end, step, device)
    return call(lib.mt_arange, float(start), float(end), float(step), dt, core_id(device))


def _arange_int64(start, end, step, device):
    """An int64 arange whose bounds or step doubles cannot hold (the core takes doubles): PyTorch's
    checks and size (end - start in int64, divided in double), then start + i * step in int64."""
    if not all(-2 ** 63 <= v < 2 ** 63 for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if not -2 ** 63 <= end - start < 2 ** 63:  # PyTorch's difference wraps there: a nonsense size (see mt_arange)
        raise RuntimeError("invalid size, possible overflow?")
    size = math.ceil(float(end - start) / float(step))
    if size == 2 ** 63:  # passes PyTorch's check, then converts to INT64_MIN
        raise RuntimeError("IntArrayRef contains an int that cannot be represented as a SymInt: -9223372036854775808")
    return call(lib.mt_arange, 0.0, float(size), 1.0, lib.MT_I64, core_id(device)).mul_(step).add_(start)


def _complex_space(name, start, end, steps, dtype, device):
    """linspace of complex endpoints or into a complex dtype (None when neither): PyTorch's complex step
    scales both parts by the same real index, so it is the real linspace of each part."""
    from ._dispatch import is_complex_number
    cplx = any(is_complex_number(v) for v in (start, end))
    if not cplx and (dtype is None or not dtype.is_complex):
        return None
    if dtype is None:
        dtype = _dtype.get_default_dtype().to_complex()
    elif cplx and not dtype.is_complex:
        inferred = _dtype.CPP_NAMES[_dtype.get_default_dtype().to_complex()._name]
        raise RuntimeError(f"torch.{name}(): inferred dtype {inferred} can't be safely cast to passed dtype "
                           f"{_dtype.scalar_name(dtype)}")
    start, end = complex(start), complex(end)
    for v in (start, end) if steps > 1 else (start,) if steps == 1 else ():
        _dtype.check_scalar(v, dtype)
    part = _dtype.float32 if dtype is _dtype.complex64 else _dtype.float64
    re, im = (call(lib.mt_linspace, a, b, int(steps), part._id, core_id(device))
              for a, b in ((start.real, end.real), (start.imag, end.imag)))
    from ._views import complex_
    return complex_(re, im)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end = _number(start), _number(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    r = _complex_space("linspace", start, end, steps, dtype, device)
    if r is not None:
        return r
    dt = dtype_id(dtype, lib.mt_get_default_dtype(), "linspace")
    for v in (start, end) if steps > 1 else (start,) if steps == 1 else ():
        _dtype.check_scalar(v, _dtype.BY_ID[dt])
    return call(lib.mt_linspace, float(start), float(end), int(steps), dt, core_id(device))


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps), in doubles the way PyTorch's kernel does it: the bounds
    rounded to the dtype first, the second half counted back from end, an integer dtype's base a float."""
    start, end = _number(start), _number(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    lin = _complex_space("logspace", start, end, steps, out.dtype if out is not None and dtype is None else dtype,
                         device)
    if lin is not None:  # complex: the base raised to each point, in the complex dtype
        r = tensor(complex(base), dtype=lin.dtype) ** lin
        return r if out is None else out.resize_(r.shape).copy_(r)
    dt = _dtype.BY_ID[dtype_id(out.dtype if out is not None and dtype is None else dtype,
                                lib.mt_get_default_dtype(), "logspace")]
    for v in (start, end) if steps > 1 else (start,) if steps == 1 else ():
        _dtype.check_scalar(v, dt)
    if steps > 1 << 20:  # a size past int64 or memory fails here, as PyTorch's allocation does, not after a loop
        empty(steps, dtype=dt, device=device)
    first = start
    if dt.is_floating_point:
        start, end = tensor([start, end], dtype=dt).tolist()
        b = float(base)
    else:
        start, end = int(start), int(end)
        b = float(tensor(float(base), dtype=_dtype.float32).item())
    if steps == 1:
        vals = [float(base) ** float(first)]
    else:
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        vals = [b ** (start + step * i) if i < steps // 2 else b ** (end - step * (steps - i - 1))
                for i in range(steps)]
    r = tensor(vals, dtype=_dtype.float64, device=device).to(dt)
    if out is None:
        return r
    out.resize_(r.shape)
    return out.copy_(r)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _no_grad_arg(requires_grad)
    return call(lib.mt_eye, n, n if m is None else m, dtype_id(dtype, lib.mt_get_default_dtype()),
                core_id(device))


def legacy_new(cls, *args, device=None):
    """torch.Tensor(...): sizes, data, another tensor, or nothing. The legacy constructor ignores a
    `with torch.device(...)` context: without device= it makes a CPU tensor, as PyTorch's does."""
    if cls is not Tensor:
        t = legacy_new(Tensor, *args, device=device)
        return t._as_subclass(cls)
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device} was passed")
    if not args:
        return empty(0, device="cpu")
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].view_as(args[0])
    if len(args) == 1 and not isinstance(args[0], int) and not type(args[0]).__name__ == "Size":
        return tensor(args[0], dtype=_dtype.get_default_dtype(), device="cpu")
    return empty(*args, device="cpu")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    _no_grad_arg(requires_grad)
    mv = memoryview(buffer).cast("B")
    itemsize = dtype.itemsize
    avail = len(mv) - offset
    if len(mv) == 0 or count == 0:
        raise ValueError(f"both buffer length ({len(mv)}) and count ({count}) must not be 0")
    if offset < 0 or offset >= len(mv):
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({len(mv)} bytes) minus 1")
    if count < 0:
        if avail % itemsize:
            raise ValueError(f"buffer length ({avail} bytes) after offset ({offset} bytes) must be a multiple of "
                             f"element size ({itemsize})")
        count = avail // itemsize
    elif count * itemsize > avail:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({len(mv)} bytes)")
    from ._core import keep_alive
    ptr = ffi.from_buffer(mv, require_writable=False)
    deleter, ctx = keep_alive((buffer, mv, ptr))
    return call(lib.mt_from_blob, ffi.cast("char *", ptr) + offset, count * itemsize, 1, [count], ffi.NULL,
                0, dtype._id, deleter, ctx)


def _grad_factory(fn):
    """Let a factory honour requires_grad=True by flagging the tensor it returns, and out= by writing
    its result there (resized; the dtype out's unless dtype= names the same one, as PyTorch's *_out)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, requires_grad=False, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            dtype = kwargs.get("dtype")
            if dtype is not None and dtype != out.dtype:
                raise RuntimeError(f"dtype {_dtype.scalar_name(dtype)} does not match dtype of out parameter "
                                   f"({_dtype.scalar_name(out.dtype)})")
            t = fn(*args, **{**kwargs, "out": None, "dtype": out.dtype})
            out.resize_(t.shape)
            return out.copy_(t)
        t = fn(*args, **kwargs)
        if requires_grad:
            t.requires_grad_(True)
        return t
    return wrapper


for _name in ("empty", "empty_strided", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
              "full_like", "tensor", "scalar_tensor", "arange", "linspace", "logspace", "eye", "frombuffer"):
    globals()[_name] = _grad_factory(globals()[_name])


def _lower_count(row, col, a):
    """sum over the rows i of min(max(i + a, 0), col): the points with column < i + a, exactly"""
    lo = min(max(-a, 0), row)
    hi = min(max(col - a, lo), row)  # rows lo..hi-1 keep i + a points, later ones all col
    return (hi - lo) * a + (lo + hi - 1) * (hi - lo) // 2 + col * (row - hi)


def _tri_indices(name, row, col, offset, dtype, lower):
    from ._dtype import int32, int64
    dtype = int64 if dtype is None else dtype
    if dtype not in (int32, int64):
        raise RuntimeError(f"\"{name}\" not implemented for '{dtype}'")
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else f"col must be non-negative, got{col}")
    if not row or not col:  # (2^40 x 0 included: no row x col mask for an empty result)
        return empty((2, 0), dtype=dtype)
    count = _lower_count(row, col, offset + 1) if lower else row * col - _lower_count(row, col, offset)
    if count * 2 * dtype.itemsize > 2 ** 63 - 1:  # PyTorch's [2, count] result fails its allocation first
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[2, {count}]")
    if row * col <= 1 << 26:  # the mask of every pair: fastest while it is small
        r = arange(row).unsqueeze(1)
        c = arange(col).unsqueeze(0)
        keep = (c - r <= offset) if lower else (c - r >= offset)
        return keep.nonzero().t().contiguous().to(dtype)
    from ._shape_ops import repeat_interleave, stack
    # only the rows holding points (at most count of them): row i keeps columns [first, first + n)
    offset = min(max(offset, -row), col)  # the same points, and no sum below passes int64
    if lower:
        i0 = min(max(-offset, 0), row)
        rows = arange(row - i0) + i0  # (an arange from i0 would go through doubles)
        first, n = zeros(rows.shape, dtype=_dtype.int64), (rows + offset + 1).clamp(max=col)
    else:
        rows = arange(min(max(col - offset, 0), row))
        first = (rows + offset).clamp(min=0)
        n = col - first
    start = n.cumsum(0) - n  # where each row's points begin in the result
    cols = arange(count) - repeat_interleave(start - first, n, output_size=count)
    return stack([repeat_interleave(rows, n, output_size=count), cols]).to(dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """the (row, col) coordinates of the lower triangle (diagonal offset), row by row"""
    return _tri_indices("tril_indices", row, col, offset, dtype, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """the (row, col) coordinates of the upper triangle (diagonal offset), row by row"""
    return _tri_indices("triu_indices", row, col, offset, dtype, False)


# ---- window functions (PyTorch's TensorFactories.cpp, op for op in the window's dtype) ----

def _window(name, window_length, periodic, dtype, device, requires_grad, body):
    """The checks and the 0/1-length cases every window shares; body(n, dtype) makes an n-point
    symmetric window, of which a periodic one keeps the first window_length points."""
    dt = _dtype.get_default_dtype() if dtype is None else dtype
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_dtype.CPP_NAMES[dt._name]}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    window_length = operator.index(window_length)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        w = ones(window_length, dtype=dt, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        if n > 2 ** 63 - 1:  # PyTorch's int64 length + 1 wraps negative, and its arange refuses that end
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        w = body(n, dt)
        if periodic:
            w = w.narrow(0, 0, window_length).contiguous()
    return w.requires_grad_() if requires_grad else w


def _hamming(alpha, beta):
    import math
    return lambda n, dt: (arange(n, dtype=dt) * (math.pi * 2. / (n - 1))).cos() * -beta + alpha


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _hamming(alpha, beta))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _hamming(0.5, 0.5))


def _bartlett(n, dt):
    from ._shape_ops import cat
    w = arange(n, dtype=dt) * (2. / (n - 1))
    half = ((n - 1) >> 1) + 1  # the second half is 2 - w
    return cat([w.narrow(0, 0, half), w.narrow(0, half, n - half) * -1 + 2])


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, _bartlett)


def _blackman(n, dt):
    import math
    w = arange(n, dtype=dt) * (math.pi / (n - 1))
    return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, _blackman)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """i0(beta sqrt(|1 - ((k - a)/a)^2|)) / i0(beta), a = (n - 1)/2, in the kernel's float or double."""
    from ._special import i0

    def body(n, dt):
        work = _dtype.float64 if dt is _dtype.float64 else _dtype.float32
        alpha = (n - 1) / 2.0
        k = arange(n, dtype=dt).to(work)
        return (i0(beta * (1 - ((k - alpha) / alpha).pow(2.0)).abs().sqrt()) /
                i0(tensor(float(beta), dtype=work))).to(dt)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, body)


def range_(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated: [start, end] inclusive, in the default float dtype unless told; the bounds read in the
    kernel's accumulate type (double, or int64 for integer dtypes)."""
    import math
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    dt = out.dtype if out is not None and dtype is None else dtype or _dtype.get_default_dtype()
    if dt is _dtype.bool:
        raise NotImplementedError("\"range_cpu\" not implemented for 'Bool'")
    acc = float if dt.is_floating_point else int
    xstart, xend, xstep = (acc(_number(v)) for v in (start, end, step))
    if xstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):
        raise RuntimeError(f"unsupported range: {xstart} -> {xend}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = int((xend - xstart) / xstep + 1) if acc is float else abs(xend - xstart) // abs(xstep) + 1
    r = (arange(size, dtype=_dtype.float64 if acc is float else _dtype.int64, device=device) * xstep + xstart).to(dt)
    if out is not None:
        out.resize_(r.shape)
        return out.copy_(r)
    return r.requires_grad_() if requires_grad else r


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialized tensor of the logical size whose memory runs in physical_layout's order
    (its last dim innermost)."""
    size, order = list(size), list(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError("Duplicate dim not allowed")
    stride, step = [0] * len(size), 1
    for d in reversed(order):
        stride[d] = step
        step *= max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                         pin_memory=pin_memory)


FUNCTIONS = {"empty_permuted": empty_permuted, "hamming_window": hamming_window, "hann_window": hann_window, "bartlett_window": bartlett_window,
             "blackman_window": blackman_window, "kaiser_window": kaiser_window, "range": range_}
METHODS = {}
