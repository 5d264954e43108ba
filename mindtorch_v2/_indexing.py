"""Tensor.__getitem__ / __setitem__, following PyTorch's own algorithm (python_variable_indexing.cpp
and TensorIndexing.h): ints, slices, None and Ellipsis make a view; Python bools, bool/byte masks,
integer tensors and sequences become advanced indices recorded at the view dim they apply to; then
one gather (mt_index) or scatter (mt_index_put_) in the core."""
import numbers
import warnings

from ._C import ffi, lib
from . import _dtype
from ._core import check, new_out
from ._dispatch import call, scalar_kind
from ._tensor import Tensor, wrap

_NULL = ffi.NULL
_MAX = (1 << 63) - 1
_MASKS = (lib.MT_BOOL, lib.MT_U8)
_INTEGRAL = (lib.MT_I32, lib.MT_I64)
_SEQUENCES = (list, tuple, range)
INDEX_HOOKS = {}  # Tensor subclass -> fn(tensor, index tuple) taking over x[...] (vmap's BatchedTensor)


def _is_sequence(obj):
    return isinstance(obj, _SEQUENCES) or (type(obj).__module__ == "numpy" and getattr(obj, "ndim", 0) > 0)


def _as_tuple(index):
    """PyTorch's treatSequenceAsTuple: a short list holding sequences, tensors, slices, None or
    Ellipsis is (deprecatedly) read as a tuple of indices."""
    if type(index) is tuple:
        return index
    if type(index) is list and len(index) < 32:
        for obj in index:
            if isinstance(obj, (Tensor, slice)) or obj is None or obj is Ellipsis or _is_sequence(obj):
                warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
                              "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
                              "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
                              "error or a different result", UserWarning, stacklevel=3)
                return tuple(index)
    return (index,)


def _sequence_index(obj):
    """A list/tuple/array index as a tensor: bool or uint8 stay masks, everything else becomes int64."""
    from ._creation import tensor
    t = tensor(obj)
    return t if lib.mt_tensor_dtype(t._h) in _MASKS + (lib.MT_I64,) else t.to(_dtype.int64)


def _specified_dims(items):
    """Dims the index uses up (PyTorch's count_specified_dimensions)."""
    n = 0
    for it in items:
        if isinstance(it, Tensor):
            n += it.dim() if lib.mt_tensor_dtype(it._h) in _MASKS else 1
        elif it is not None and it is not Ellipsis and type(it) is not bool:
            n += 1
    return n


class _View:
    """The view being built: owns one handle, replaced at each step."""
    __slots__ = ("h", "out")

    def __init__(self, h):
        lib.mt_tensor_retain(h)
        self.h = h
        self.out = new_out()

    def step(self, fn, *args):
        check(fn(self.h, *args, self.out))  # on failure self.h stays owned; __del__ releases it
        lib.mt_tensor_release(self.h)
        self.h = self.out[0]

    def select(self, dim, i, real_dim):
        """x[i] along dim with indexing's own texts (naming the position in the index tuple)."""
        if lib.mt_select(self.h, dim, i, self.out) == 0:  # the common case: one call
            lib.mt_tensor_release(self.h)
            self.h = self.out[0]
            return
        n = lib.mt_tensor_ndim(self.h)
        if n == 0 and i == 0 and dim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        size = lib.mt_tensor_sizes(self.h)[dim] if dim < n else 0
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of bounds for dimension {real_dim} with size {size}")
        self.step(lib.mt_select, dim, i)

    def take(self):
        h, self.h = self.h, None
        return wrap(h)

    def __del__(self):
        if self.h is not None:
            lib.mt_tensor_release(self.h)


def _bool_index(view, dim, value, advanced):
    """A Python bool or 0-dim mask: a new dim of size 1, indexed by [0] (True) or [] (False)."""
    from ._creation import tensor
    view.step(lib.mt_unsqueeze, dim)
    advanced.append((dim, tensor([0] if value else [], dtype=_dtype.int64)))


def _slice_int(v):
    if not hasattr(v, "__index__"):
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return v.__index__()


def _apply(self, items, single=False):
    """PyTorch's applySlicing: the basic-indexed view and the advanced indices as (view dim, tensor)."""
    ndim = lib.mt_tensor_ndim(self._h)
    specified = _specified_dims(items)
    if specified > ndim and not single:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    view, advanced, dim = _View(self._h), [], 0
    for real_dim, it in enumerate(items):
        t = type(it)
        if t is int or (t is not bool and isinstance(it, numbers.Integral)):
            view.select(dim, int(it), real_dim)
        elif t is slice:
            start, stop, step = it.start, it.stop, it.step
            if start is None and stop is None and step is None:  # `:` keeps the dim as it is
                dim += 1
                continue
            step = 1 if step is None else _slice_int(step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            start = 0 if start is None else _slice_int(start)
            stop = _MAX if stop is None else _slice_int(stop)
            view.step(lib.mt_slice, dim, start, stop, step)
            dim += 1
        elif it is Ellipsis:
            dim += ndim - specified
        elif it is None:
            view.step(lib.mt_unsqueeze, dim)
            dim += 1
        elif t is bool:
            _bool_index(view, dim, it, advanced)
            dim += 1
        elif isinstance(it, Tensor):
            dt = lib.mt_tensor_dtype(it._h)
            if it.dim() == 0 and dt <= lib.MT_I64:  # integral (and bool) 0-dim tensors
                if dt in _MASKS:
                    _bool_index(view, dim, it.item(), advanced)
                    dim += 1
                else:
                    view.select(dim, it.item(), real_dim)
                continue
            advanced.append((dim, it))
            dim += it.dim() if dt in _MASKS else 1
        elif _is_sequence(it):
            it = _sequence_index(it)
            advanced.append((dim, it))
            dim += it.dim() if lib.mt_tensor_dtype(it._h) in _MASKS else 1
        elif hasattr(it, "__index__"):
            view.select(dim, it.__index__(), real_dim)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             f"are valid indices (got {_type_name(it)})")
    return view, advanced


def _index_list(advanced):
    """Handles for the core: NULL for each dim taken whole, then the index (a mask spans its dims)."""
    idx, pos = [], 0
    for dim, t in advanced:
        idx += [_NULL] * (dim - pos)
        idx.append(t._h)
        pos = dim + (t.dim() if lib.mt_tensor_dtype(t._h) in _MASKS else 1)
    return idx


def _type_name(obj):
    k = type(obj)
    return k.__name__ if k.__module__ == "builtins" else f"{k.__module__}.{k.__name__}"


def _basic(self, items):
    """x[...] of ints, slices of ints (positive steps), None and Ellipsis only, straight on the
    handles; None when the index is anything else or a step fails (the general path then raises
    PyTorch's error)."""
    h, ndim, specified = self._h, lib.mt_tensor_ndim(self._h), 0
    for it in items:
        if it is not None and it is not Ellipsis:
            specified += 1
    if specified > ndim:
        return None
    out, dim, owned = new_out(), 0, False
    for it in items:
        t = type(it)
        if t is int:
            st = lib.mt_select(h, dim, it, out)
        elif t is slice:
            start, stop, step = it.start, it.stop, it.step
            if start is None and stop is None and step is None:  # `:` keeps the dim
                dim += 1
                continue
            step = 1 if step is None else step
            if type(step) is not int or step <= 0 or not (start is None or type(start) is int) \
                    or not (stop is None or type(stop) is int):
                st = 1
            else:
                st = lib.mt_slice(h, dim, 0 if start is None else start, _MAX if stop is None else stop, step, out)
            dim += 1
        elif it is None:
            st = lib.mt_unsqueeze(h, dim, out)
            dim += 1
        elif it is Ellipsis:
            dim += ndim - specified
            continue
        else:
            st = 1
        if owned:
            lib.mt_tensor_release(h)
        if st:
            return None
        h, owned = out[0], True
    return wrap(h) if owned else None


def getitem(self, index):
    t = type(index)
    if t is int and lib.mt_tensor_ndim(self._h) > 0:  # fast paths: a single int / a single slice
        out = new_out()
        if lib.mt_select(self._h, 0, index, out) == 0:
            return wrap(out[0])
    elif t is slice and (index.step is None or type(index.step) is int and index.step > 0):
        start, stop = index.start, index.stop
        if (start is None or type(start) is int) and (stop is None or type(stop) is int):
            return call(lib.mt_slice, self._h, 0, 0 if start is None else start, _MAX if stop is None else stop,
                        1 if index.step is None else index.step)
    elif t is Tensor and not INDEX_HOOKS and lib.mt_tensor_ndim(self._h) > 0 and lib.mt_tensor_ndim(index._h) > 0 \
            and (lib.mt_tensor_dtype(index._h) in _INTEGRAL or lib.mt_tensor_dtype(index._h) == lib.MT_BOOL
                 and lib.mt_tensor_ndim(index._h) == lib.mt_tensor_ndim(self._h)):  # x[idx], x[mask]: one gather
        return call(lib.mt_index, self._h, 1, [index._h])
    if t is not tuple and (t is slice or (t is not bool and isinstance(index, numbers.Integral))):
        return _apply(self, (index,), single=True)[0].take()  # PyTorch skips the dims count here
    items = _as_tuple(index)
    if INDEX_HOOKS:
        for it in items:
            hook = INDEX_HOOKS.get(type(it))
            if hook is not None:
                return hook(self, items)
    r = _basic(self, items)
    if r is not None:
        return r
    view, advanced = _apply(self, items)
    if not advanced:
        return view.take()
    idx = _index_list(advanced)
    return call(lib.mt_index, view.h, len(idx), idx)


def _value(self, value):
    """The value of x[i] = value as a tensor: numbers become 0-dim tensors of x's dtype (checked)."""
    if isinstance(value, Tensor):
        return value
    d = self.dtype
    if isinstance(value, (bool, numbers.Integral)):
        value = int(value)
        if not -(1 << 63) <= value < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
    elif isinstance(value, complex):
        _dtype.check_scalar(value, d)  # a real x takes only a zero imaginary part
        if d.is_complex:
            return call(lib.mt_scalar_complex, value.real, value.imag, d._id, 0)
        value = value.real
    elif not isinstance(value, float):
        from ._methods import _LEGACY_NAMES
        raise TypeError(f"can't assign a {_type_name(value)} to a torch.{_LEGACY_NAMES[d._name]}")
    if d is not _dtype.float16 and d is not _dtype.bfloat16:  # (PyTorch stores those unchecked here)
        _dtype.check_scalar(value, d)
    f, i, kind = scalar_kind(value)
    return call(lib.mt_scalar_tensor, f, i, kind, d._id, 0)


def _copy_to(dst, src):
    """dst.copy_(src) after dropping src's leading size-1 dims and expanding it to dst's shape."""
    shape = src.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    if k:
        src = src.view(shape[k:])
    src = src.expand(dst.shape)  # held: a temporary's handle would be released before the call
    check(lib.mt_copy_(dst._h, src._h))


def setitem(self, index, value):
    value = _value(self, value)
    if index is False:
        return
    if index is True or index is None:
        return _copy_to(self.unsqueeze(0), value)
    if index is Ellipsis:
        return _copy_to(self, value)
    view, advanced = _apply(self, _as_tuple(index))
    if not advanced:
        return _copy_to(view.take(), value)
    if value.numel() == 1 and len(advanced) == 1 and lib.mt_tensor_dtype(advanced[0][1]._h) in _MASKS:
        # PyTorch turns x[mask] = one value into masked_fill_(mask, value.item())
        v = value.item()
        _dtype.check_scalar(v, self.dtype)
        from ._creation import full
        value = full((), v, dtype=self.dtype)
    shape = value.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    if k:
        value = value.view(shape[k:])
    idx = _index_list(advanced)
    check(lib.mt_index_put_(view.h, len(idx), idx, value._h, 0))
