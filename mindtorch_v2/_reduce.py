"""Reductions: sum, mean, prod, amax, amin, all, any, max/min (with indices), argmax/argmin."""
from collections import namedtuple

from ._C import ffi, lib
from ._core import raise_status
from ._dispatch import call, finish
from ._tensor import Tensor, wrap


def _dims(dim):
    if dim is None:
        return []
    try:
        if isinstance(dim, (tuple, list)):
            return [d.__index__() for d in dim]
        return [dim.__index__()]
    except AttributeError:  # PyTorch's argument parser: a TypeError naming what it got
        raise TypeError(f"received an invalid combination of arguments - got ({type(dim).__name__}) for 'dim', "
                        "but expected one of: int, tuple of ints") from None


def _reduce(op, input, dim, keepdim, dtype, out=None):
    dims = _dims(dim)  # None and () both reduce every dim
    res = ffi.new("mt_tensor **")
    st = lib.mt_reduce(op, input._h, len(dims), dims, 1 if keepdim else 0, -1 if dtype is None else dtype._id,
                       ffi.NULL if out is None else out._h, res)
    return finish(st, res, out)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(lib.MT_RED_SUM, input, dim, keepdim, dtype, out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(lib.MT_RED_MEAN, input, dim, keepdim, dtype, out)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dim is not None and not hasattr(dim, "__index__"):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return _reduce(lib.MT_RED_PROD, input, dim, keepdim, dtype, out)


def amax(input, dim=(), keepdim=False, *, out=None):
    return _reduce(lib.MT_RED_AMAX, input, dim, keepdim, None, out)


def amin(input, dim=(), keepdim=False, *, out=None):
    return _reduce(lib.MT_RED_AMIN, input, dim, keepdim, None, out)


def all(input, dim=None, keepdim=False, *, out=None):
    return _reduce(lib.MT_RED_ALL, input, dim, keepdim, None, out)


def any(input, dim=None, keepdim=False, *, out=None):
    return _reduce(lib.MT_RED_ANY, input, dim, keepdim, None, out)


def _return_type(name):
    base = namedtuple(name, ["values", "indices"])

    class ReturnType(base):
        __slots__ = ()

        def __repr__(self):
            return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    ReturnType.__name__ = ReturnType.__qualname__ = name
    ReturnType.__module__ = "torch.return_types"
    return ReturnType


class return_types:
    max = _return_type("max")
    min = _return_type("min")


def _extreme(is_min, input, dim, keepdim, other):
    name = "min" if is_min else "max"
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim
    if other is not None:
        from . import _generated_ops as g
        return (g.minimum if is_min else g.maximum)(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return _reduce(lib.MT_RED_AMIN if is_min else lib.MT_RED_AMAX, input, None, False, None)
    vals, idx = ffi.new("mt_tensor **"), ffi.new("mt_tensor **")
    st = lib.mt_max_dim(1 if is_min else 0, input._h, dim.__index__(), 1 if keepdim else 0, vals, idx)
    if st:
        raise_status(st)
    cls = return_types.min if is_min else return_types.max
    return cls(wrap(vals[0]), wrap(idx[0]))


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    return _extreme(False, input, dim, keepdim, other)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    return _extreme(True, input, dim, keepdim, other)


def _arg(is_min, input, dim, keepdim):
    name = "argmin" if is_min else "argmax"
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = input.reshape(-1)
        r = _extreme(is_min, flat, 0, False, None).indices
        return r.reshape([1] * input.dim()) if keepdim else r
    if input.dim() and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    return _extreme(is_min, input, dim, keepdim, None).indices


def argmax(input, dim=None, keepdim=False):
    return _arg(False, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg(True, input, dim, keepdim)


FUNCTIONS = {"sum": sum, "mean": mean, "prod": prod, "amax": amax, "amin": amin, "all": all, "any": any,
             "max": max, "min": min, "argmax": argmax, "argmin": argmin}
