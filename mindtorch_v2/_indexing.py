"""Tensor.__getitem__ / __setitem__ with PyTorch's basic and advanced indexing."""
from ._C import ffi, lib
from ._core import check
from ._dispatch import call, scalar_kind
from ._tensor import Tensor

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
        if it is None or it is Ellipsis or isinstance(it, bool):
            continue
        n += it.dim() if isinstance(it, Tensor) and _is_mask(it) and it.dim() > 0 else 1
    return n


def _basic(self, index):
    """Apply ints, slices, None and Ellipsis; collect advanced indices by view dim."""
    items = index if isinstance(index, tuple) else (index,)
    items = [(_as_index_tensor(it) if isinstance(it, (list, range)) else it) for it in items]
    ndim = self.dim()
    consumed = _count_consumed(items)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    h = self._h
    lib.mt_tensor_retain(h)
    view = _Held(h)
    dim = 0
    advanced = {}
    seen_ellipsis = False
    for it in items:
        if it is None:
            view.step(lib.mt_unsqueeze, dim)
            dim += 1
        elif it is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += ndim - consumed
        elif isinstance(it, bool):
            view.step(lib.mt_unsqueeze, dim)
            if not it:
                view.step(lib.mt_slice, dim, 0, 0, 1)
            dim += 1
        elif isinstance(it, int):
            view.step(lib.mt_select, dim, it)
        elif isinstance(it, slice):
            start = 0 if it.start is None else it.start.__index__()
            stop = _MAX if it.stop is None else it.stop.__index__()
            step = 1 if it.step is None else it.step.__index__()
            if step <= 0:
                raise ValueError("step must be greater than zero")
            view.step(lib.mt_slice, dim, start, stop, step)
            dim += 1
        elif isinstance(it, Tensor):
            if it.dim() == 0 and not it.dtype.is_floating_point and not _is_mask(it):
                view.step(lib.mt_select, dim, it.item())
                continue
            advanced[dim] = it
            dim += it.dim() if _is_mask(it) else 1
        elif hasattr(it, "__index__"):
            view.step(lib.mt_select, dim, it.__index__())
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
        st = fn(self.h, *args, out)
        if st:
            lib.mt_tensor_release(self.h)
            self.h = None
            check(st)
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
    view, advanced = _basic(self, index)
    if not advanced:
        from ._tensor import wrap
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
