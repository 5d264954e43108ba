"""Tensor.__getitem__ / __setitem__ with PyTorch's basic and advanced indexing."""
from ._C import ffi, lib
from ._core import check
from ._dispatch import call, scalar_kind
from ._tensor import Tensor, wrap

_NULL = ffi.NULL
_MAX = (1 << 63) - 1


def _as_index_tensor(obj):
    from ._creation import tensor
    t = tensor(obj)
    if t.dtype.is_floating_point and t.numel() == 0:
        t = t.long()
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _is_mask(t):
    return t.dtype._name in ("bool", "uint8")


def _count_consumed(items):
    """How many dims of the tensor the index items use up."""
    n = 0
    for it in items:
        if type(it) is int or type(it) is slice:
            n += 1
        elif it is None or it is Ellipsis or type(it) is bool:
            continue
        else:
            n += it.dim() if isinstance(it, Tensor) and _is_mask(it) and it.dim() > 0 else 1
    return n


def _select(view, dim, i, src_dim):
    """x[i] along dim, with indexing's own out-of-range text (naming the source dim)."""
    try:
        view.step(lib.mt_select, dim, i)
    except IndexError:
        size = _dim_size(view.h, dim)
        raise IndexError(f"index {i} is out of bounds for dimension {src_dim} with size {size}") from None


def _dim_size(h, dim):
    n = lib.mt_tensor_ndim(h)
    return lib.mt_tensor_sizes(h)[dim] if 0 <= dim < n else 0


def _basic(self, index):
    """Apply ints, slices, None and Ellipsis; collect advanced indices by view dim."""
    items = index if type(index) is tuple else (index,)
    if any(type(it) in (list, range) for it in items):
        items = [_as_index_tensor(it) if type(it) in (list, range) else it for it in items]
    ndim = lib.mt_tensor_ndim(self._h)
    consumed = _count_consumed(items)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    h = self._h
    lib.mt_tensor_retain(h)
    view = _Held(h)
    dim = 0  # position in the view being built
    src = 0  # source dims used so far (for error texts)
    advanced = {}
    seen_ellipsis = False
    for it in items:
        t = type(it)
        if t is int:
            _select(view, dim, it, src)
            src += 1
        elif t is slice:
            src += 1
            if it.start is None and it.stop is None and it.step is None:
                dim += 1
                continue
            start = 0 if it.start is None else it.start.__index__()
            stop = _MAX if it.stop is None else it.stop.__index__()
            step = 1 if it.step is None else it.step.__index__()
            if step <= 0:
                raise ValueError("step must be greater than zero")
            view.step(lib.mt_slice, dim, start, stop, step)
            dim += 1
        elif it is None:  # PyTorch counts None in the dim its error texts name
            view.step(lib.mt_unsqueeze, dim)
            dim += 1
            src += 1
        elif it is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += ndim - consumed
            src += ndim - consumed
        elif t is bool:
            view.step(lib.mt_unsqueeze, dim)
            if not it:
                view.step(lib.mt_slice, dim, 0, 0, 1)
            dim += 1
        elif isinstance(it, Tensor):
            if it.dim() == 0 and not it.dtype.is_floating_point and not _is_mask(it):
                _select(view, dim, it.item(), src)
                src += 1
                continue
            advanced[dim] = it
            used = it.dim() if _is_mask(it) else 1
            dim += used
            src += used
        elif hasattr(it, "__index__"):
            _select(view, dim, it.__index__(), src)
            src += 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             "are valid indices (got " + type(it).__name__ + ")")
    return view, advanced


class _Held:
    """The view being built: owns one handle, replaced at each step."""
    __slots__ = ("h",)

    def __init__(self, h):
        self.h = h

    def step(self, fn, *args):
        out = ffi.new("mt_tensor **")
        check(fn(self.h, *args, out))  # on failure self.h stays owned; __del__ releases it
        lib.mt_tensor_release(self.h)
        self.h = out[0]

    def __del__(self):
        if self.h is not None:
            lib.mt_tensor_release(self.h)


def _index_list(advanced):
    n = max(advanced) + 1
    idx = [_NULL] * n
    for d, t in advanced.items():
        idx[d] = t._h
    return idx


def getitem(self, index):
    t = type(index)
    if t is int and lib.mt_tensor_ndim(self._h) > 0:  # fast paths: a single int / a single slice
        out = ffi.new("mt_tensor **")
        if lib.mt_select(self._h, 0, index, out) == 0:
            return wrap(out[0])
    if t is slice and (index.step is None or type(index.step) is int and index.step > 0):
        start, stop = index.start, index.stop
        if (start is None or type(start) is int) and (stop is None or type(stop) is int):
            return call(lib.mt_slice, self._h, 0, 0 if start is None else start, _MAX if stop is None else stop,
                        1 if index.step is None else index.step)
    view, advanced = _basic(self, index)
    if not advanced:
        h, view.h = view.h, None
        return wrap(h)
    idx = _index_list(advanced)
    return call(lib.mt_index, view.h, len(idx), idx)


def setitem(self, index, value):
    view, advanced = _basic(self, index)
    if not advanced:
        if isinstance(value, Tensor):
            check(lib.mt_copy_(view.h, value._h))
        else:
            f, i, kind = scalar_kind(value)
            check(lib.mt_fill(view.h, f, i, kind))
        return
    if not isinstance(value, Tensor):
        from ._creation import full
        value = full((), value, dtype=self.dtype)
    idx = _index_list(advanced)
    check(lib.mt_index_put_(view.h, len(idx), idx, value._h, 0))
