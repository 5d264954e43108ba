"""Reductions: sum, mean, prod, amax, amin, all, any, max/min (with indices), argmax/argmin,
var/std (+ _mean), norms, logsumexp, cumulative ops, nansum/nanmean, count_nonzero, aminmax,
median/nanmedian/mode, quantile, dist. One core call each; shape checks only in Python. Then the
numerics PyTorch composes from reductions (trapezoid, cumulative_trapezoid, cov, corrcoef, gradient,
renorm), composed here the same way, and histc/histogram."""
import builtins
import math
import warnings
from collections import namedtuple

from ._C import ffi, lib
from . import _dtype
from ._core import new_out, raise_status, rename_grad_fn
from ._dispatch import call, finish
from ._tensor import Tensor, _wrap_dim, wrap


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
    res = new_out()
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


def _pair_type(name, fields):
    """A torch.return_types named tuple (fields in PyTorch's order, repr as PyTorch's)."""
    base = namedtuple(name, fields)

    class ReturnType(base):
        __slots__ = ()

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"torch.return_types.{name}(\n{body})"

    ReturnType.__name__ = ReturnType.__qualname__ = name
    ReturnType.__module__ = "torch.return_types"
    return ReturnType


class return_types:
    max = _return_type("max")
    min = _return_type("min")
    max_out = _return_type("max_out")
    min_out = _return_type("min_out")
    median = _return_type("median")
    nanmedian = _return_type("nanmedian")
    mode = _return_type("mode")
    aminmax = _pair_type("aminmax", ["min", "max"])
    histogram = _pair_type("histogram", ["hist", "bin_edges"])
    histogramdd = _pair_type("histogramdd", ["hist", "bin_edges"])
    frexp = _pair_type("frexp", ["mantissa", "exponent"])


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
        if input.is_complex():  # PyTorch's max()/min() kernel, not amax's
            raise NotImplementedError(f"\"{name}_all\" not implemented for '{_dtype.scalar_name(input)}'")
        r = _reduce(lib.MT_RED_AMIN if is_min else lib.MT_RED_AMAX, input, None, False, None)
        rename_grad_fn(r._h, b"MinBackward1" if is_min else b"MaxBackward1")  # PyTorch's max()/min() node
        return r
    vals, idx = new_out(), new_out()
    st = lib.mt_max_dim(1 if is_min else 0, input._h, dim.__index__(), 1 if keepdim else 0, vals, idx)
    if st:
        raise_status(st)
    cls = return_types.min if is_min else return_types.max
    return cls(wrap(vals[0]), wrap(idx[0]))


def _extreme_out(name, input, r, out):
    """max/min with out=: a (values, indices) pair for the dim form, one tensor otherwise; PyTorch's checks."""
    if out is None:
        return r
    from . import is_grad_enabled
    if is_grad_enabled() and input.requires_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    pairs = list(zip(out, r)) if isinstance(r, tuple) else [(out, r)]
    for o, v in pairs:
        if o.dtype != v.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {_dtype.CPP_NAMES[v.dtype._name]}, but got "
                               f"{_dtype.CPP_NAMES[o.dtype._name]} instead")
    for o, v in pairs:
        o.resize_(v.shape).copy_(v)
    return getattr(return_types, name + "_out")(*out) if isinstance(r, tuple) else out


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    return _extreme_out("max", input, _extreme(False, input, dim, keepdim, other), out)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    return _extreme_out("min", input, _extreme(True, input, dim, keepdim, other), out)


def _arg(is_min, input, dim, keepdim):
    name = "argmin" if is_min else "argmax"
    if input.dtype is _dtype.bool or input.is_complex():
        raise RuntimeError(f"{name}(): does not support {'bool' if input.dtype is _dtype.bool else 'complex'} input")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = input.reshape(-1)
        r = _extreme(is_min, flat, 0, False, None).indices
        return r.reshape([1] * input.dim()) if keepdim else r
    if input.dim() and input.shape[_wrap_dim(dim.__index__(), input.dim())] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim % input.dim()} to have non-zero size.")
    return _extreme(is_min, input, dim, keepdim, None).indices


def argmax(input, dim=None, keepdim=False):
    return _arg(False, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg(True, input, dim, keepdim)


# ---- var / std ------------------------------------------------------------------------


def _var_args(name, input, args, kwargs):
    """PyTorch's three overloads: (dim, unbiased, keepdim), (dim, *, correction, keepdim), (unbiased)."""
    dim, unbiased, keepdim, correction = None, None, False, None
    args = list(args)
    if args and isinstance(args[0], bool):
        unbiased = args.pop(0)
        if args:
            raise TypeError(f"{name}() received an invalid combination of arguments")
    elif args:
        dim = args.pop(0)
        if args:
            unbiased = args.pop(0)
        if args:
            keepdim = args.pop(0)
    for alias, full in (("axis", "dim"), ("keepdims", "keepdim")):  # NumPy's names, as PyTorch's parser
        if alias in kwargs and full not in kwargs:
            kwargs[full] = kwargs.pop(alias)
    dim = kwargs.pop("dim", dim)
    unbiased = kwargs.pop("unbiased", unbiased)
    keepdim = kwargs.pop("keepdim", keepdim)
    correction = kwargs.pop("correction", None)
    out = kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _dims(dim), float(correction), keepdim, out


def _dof_warning(name, input, dims, correction):
    shape = input.shape
    if dims:
        n = 1
        for d in dims:
            if not -len(shape) <= d < builtins.max(len(shape), 1):
                return  # the core raises PyTorch's error
            n *= shape[d] if shape else 1
    else:
        n = input.numel()
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", stacklevel=3)


def _var(name, take_sqrt, with_mean, input, args, kwargs):
    dims, correction, keepdim, out = _var_args(name, input, args, kwargs)
    if input.dtype.is_floating_point:
        _dof_warning(name, input, dims, correction)
    res, mean_ = new_out(), new_out() if with_mean else ffi.NULL
    st = lib.mt_var(input._h, len(dims), dims, correction, 1 if keepdim else 0, take_sqrt, res, mean_)
    if st:
        raise_status(st)
    r = wrap(res[0])
    if with_mean:
        return r, wrap(mean_[0])
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def var(input, *args, **kwargs):
    return _var("var", 0, False, input, args, kwargs)


def std(input, *args, **kwargs):
    return _var("std", 1, False, input, args, kwargs)


def var_mean(input, *args, **kwargs):
    return _var("var_mean", 0, True, input, args, kwargs)


def std_mean(input, *args, **kwargs):
    return _var("std_mean", 1, True, input, args, kwargs)


# ---- norms ---------------------------------------------------------------------------------


def _ord(ord, name="linalg_vector_norm"):
    if isinstance(ord, str) or not isinstance(ord, (int, float)) and not hasattr(ord, "__float__"):
        raise TypeError(f"{name}(): argument 'ord' must be Number, not {type(ord).__name__}")
    return float(ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    dims = _dims(dim)
    r = call(lib.mt_vector_norm, x._h, _ord(ord), len(dims), dims, 1 if keepdim else 0,
             -1 if dtype is None else dtype._id)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    if ord not in ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.is_complex()):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype_name(A.dtype)}")
    dim = tuple(_dims(dim))
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (d % A.dim() for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if isinstance(ord, str):
        if ord == "fro":
            r = vector_norm(A, 2, dim, keepdim, dtype=dtype)
        elif ord == "nuc":
            r = _singular_value_norm(A, ord, d0, d1, keepdim, dtype)
        else:
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord in (math.inf, -math.inf, 1, -1):
        if ord in (math.inf, -math.inf):
            d0, d1 = d1, d0
        if not keepdim and d0 < d1:
            d1 -= 1
        s = vector_norm(A, 1, d0, keepdim, dtype=dtype)
        if ord > 0 and s.shape[d1] == 0:  # the max of no column sums: 0, as PyTorch gives
            r = sum(s, d1, keepdim)
        else:
            r = amax(s, d1, keepdim) if ord > 0 else amin(s, d1, keepdim)
    elif ord in (2, -2):
        r = _singular_value_norm(A, ord, d0, d1, keepdim, dtype)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def _singular_value_norm(A, ord, d0, d1, keepdim, dtype):
    """'nuc' (the sum), 2 (the largest) or -2 (the smallest) of the singular values over dims d0, d1"""
    from ._lapack import svdvals
    if dtype is not None:
        A = A.to(dtype)
    s = svdvals(A.movedim((d0, d1), (-2, -1)))
    # the largest of no singular values is 0 as PyTorch gives (the smallest raises amin's error)
    r = s.sum(-1) if ord == "nuc" or (ord == 2 and s.shape[-1] == 0) else s.amax(-1) if ord == 2 else s.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    if dim is not None:
        dim = tuple(_dims(dim))
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if isinstance(ord, str) or (ord is not None and ((dim is not None and len(dim) == 2) or
                                                     (dim is None and A.dim() == 2))):
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    if isinstance(dim, str):
        raise NotImplementedError("norm(): named dimensions are not supported")
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        return matrix_norm(input, p, tuple(range(input.dim())) if dim is None else dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


def dist(input, other, p=2):
    if not isinstance(other, Tensor):
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    d = input - other
    if not (d.dtype.is_floating_point or d.is_complex()):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype_name(d.dtype)} instead.")
    return vector_norm(d, p)


def _dtype_name(dt):
    return _DT_NAMES[dt._id]


_CPP_NAMES = list(_dtype.CPP_NAMES.values())  # by dtype id
_DT_NAMES = list(_dtype.SCALAR_NAMES.values())


# ---- logsumexp, scans, counts -------------------------------------------------------------


def _complex_logsumexp(x, dims, keepdim):
    """PyTorch's composition for complex: shifted by the largest real part (0 where it is infinite)"""
    from . import _generated_ops as g
    if x.numel() == 0:
        return g.log(sum(g.exp(x), dims, keepdim))
    m = amax(x.real, dims, True)
    m = m.masked_fill(g.abs(m) == float("inf"), 0)
    shift = m if keepdim else m.squeeze(tuple(dims))
    return g.log(sum(g.exp(x - m), dims, keepdim)) + shift


def logsumexp(input, dim, keepdim=False, *, out=None):
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    dims = _dims(dim)
    if not dims and input.dim():
        dims = list(range(input.dim()))
    if input.is_complex():
        r = _complex_logsumexp(input, dims, keepdim)
    else:
        r = call(lib.mt_logsumexp, input._h, len(dims), dims, 1 if keepdim else 0)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def _scan(op, input, dim, dtype, out):
    if dim is None or not hasattr(dim, "__index__"):
        raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")
    if dtype is _dtype.bool and op != lib.MT_SCAN_LOGCUMSUMEXP and input.dim() and input.numel():  # no bool kernel
        name = "cumsum" if op == lib.MT_SCAN_CUMSUM else "cumprod"
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
    res = new_out()
    st = lib.mt_scan(op, input._h, dim.__index__(), -1 if dtype is None else dtype._id,
                     ffi.NULL if out is None else out._h, res)
    return finish(st, res, out)


def cumsum(input, dim, *, dtype=None, out=None):
    return _scan(lib.MT_SCAN_CUMSUM, input, dim, dtype, out)


def cumprod(input, dim, *, dtype=None, out=None):
    return _scan(lib.MT_SCAN_CUMPROD, input, dim, dtype, out)


def logcumsumexp(input, dim, *, out=None):
    return _scan(lib.MT_SCAN_LOGCUMSUMEXP, input, dim, None, out)


def _scan_(op, self, dim, dtype):
    if dtype is not None and dtype is not self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_CPP_NAMES[self.dtype._id]} and output tensor "
                           f"dtype {_CPP_NAMES[dtype._id]} should match")
    return _scan(op, self, dim, self.dtype, self)


def cumsum_(self, dim, *, dtype=None):
    return _scan_(lib.MT_SCAN_CUMSUM, self, dim, dtype)


def cumprod_(self, dim, *, dtype=None):
    return _scan_(lib.MT_SCAN_CUMPROD, self, dim, dtype)


def count_nonzero(input, dim=None):
    return _reduce(lib.MT_RED_COUNT_NONZERO, input, dim, False, None)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(lib.MT_RED_NANSUM, input, dim, keepdim, dtype, out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if not (input.dtype.is_floating_point or input.is_complex()):  # (complex: nansum's error)
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_DT_NAMES[input.dtype._id]}")
    from . import _generated_ops as g
    count = sum(g.logical_not(g.isnan(input)), dim, keepdim)
    r = nansum(input, dim, keepdim, dtype=dtype) / count
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def aminmax(input, *, dim=None, keepdim=False):
    if dim is not None:
        if not hasattr(dim, "__index__"):
            raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
        d = dim.__index__()
        if input.dim() and -input.dim() <= d < input.dim() and input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d % input.dim()} to have non-zero size.")
    elif input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")
    if input.is_complex():
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    dims = () if dim is None else dim
    return return_types.aminmax(amin(input, dims, keepdim), amax(input, dims, keepdim))


# ---- order statistics ----------------------------------------------------------------------


def _median(op, cls, input, dim, keepdim):
    vals = new_out()
    if dim is None:
        st = lib.mt_median(op, input._h, 0, 0, 0, vals, ffi.NULL)
        if st:
            raise_status(st)
        return wrap(vals[0])
    if not hasattr(dim, "__index__"):
        raise TypeError(f"{cls.__name__}(): argument 'dim' must be int, not {type(dim).__name__}")
    idx = new_out()
    st = lib.mt_median(op, input._h, 1, dim.__index__(), 1 if keepdim else 0, vals, idx)
    if st:
        raise_status(st)
    return cls(wrap(vals[0]), wrap(idx[0]))


def median(input, dim=None, keepdim=False, *, out=None):
    return _median(lib.MT_SEL_MEDIAN, return_types.median, input, dim, keepdim)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    return _median(lib.MT_SEL_NANMEDIAN, return_types.nanmedian, input, dim, keepdim)


def mode(input, dim=-1, keepdim=False, *, out=None):
    return _median(lib.MT_SEL_MODE, return_types.mode, input, dim, keepdim)


_INTERP = {"linear": 0, "lower": 1, "higher": 2, "midpoint": 3, "nearest": 4}


def _quantile(name, ignore_nan, input, q, dim, keepdim, interpolation, out):
    if interpolation not in _INTERP:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    qt = q if isinstance(q, Tensor) else None
    qs = 0.0 if qt is not None else float(q)
    r = call(lib.mt_quantile, input._h, ffi.NULL if qt is None else qt._h, qs, 0 if dim is None else 1,
             0 if dim is None else dim.__index__(), 1 if keepdim else 0, _INTERP[interpolation], ignore_nan)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile("quantile", 0, input, q, dim, keepdim, interpolation, out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile("nanquantile", 1, input, q, dim, keepdim, interpolation, out)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    # ATen's composition: equality, or a finite |input - other| within atol + rtol * |other|
    from ._dtype import scalar_name, get_default_dtype, bool as bool_
    if input.dtype != other.dtype:
        raise RuntimeError(f"{scalar_name(input)} did not match {scalar_name(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input.eq(other)
    if equal_nan and input.is_floating_point():
        close = close.logical_or(input.isnan().logical_and(other.isnan()))
    if rtol == 0 and atol == 0:
        return close
    a, b = (input, other) if input.is_floating_point() else (input.to(get_default_dtype()),
                                                              other.to(get_default_dtype()))
    if input.dtype is bool_:
        a, b = input.to(get_default_dtype()), other.to(get_default_dtype())
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    return close.logical_or(actual.isfinite().logical_and(actual.le(allowed)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# ---- integration and differences (PyTorch's Integration.cpp, ReduceOps.cpp) ----


def _slice(t, dim, start, stop=None):
    """t[start:stop] along dim, negative bounds counted from the end (at::slice)."""
    n = t.shape[dim]
    start = builtins.max(start + n, 0) if start < 0 else builtins.min(start, n)
    stop = n if stop is None else builtins.max(stop + n, 0) if stop < 0 else builtins.min(stop, n)
    return t.narrow(dim, start, builtins.max(stop - start, 0))


def _wrap(dim, ndim):
    from ._tensor import _wrap_dim
    return _wrap_dim(dim, ndim)


def _spacing_view(name, y, x, dim):
    """x viewed so that its differences broadcast against y's along dim (NumPy's rule)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        return x.view(sizes)
    if x.dim() < y.dim():
        return x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    return x


def _real_dx(name, dx):
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _integration_args(name, y, x, dx):
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, Tensor, dx=...), "
                        "but expected one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n"
                        " * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    if x is not None and (y.dtype is _dtype.bool or x.dtype is _dtype.bool):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x is None and y.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    if y.shape[dim] == 0:  # NumPy's 0 for no samples
        from ._creation import zeros
        sizes = list(y.shape)
        del sizes[_wrap(dim, y.dim())]
        return zeros(sizes, dtype=y.dtype)
    _integration_args("trapezoid", y, x, dx)
    if x is None:
        d = _real_dx("trapezoid", 1 if dx is None else dx)
        return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * d
    dim = _wrap(dim, y.dim())
    xv = _spacing_view("trapezoid", y, x, dim)
    d = _slice(xv, dim, 1) - _slice(xv, dim, 0, -1)
    return ((_slice(y, dim, 1) + _slice(y, dim, 0, -1)) * d).sum(dim) / 2.


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    _integration_args("cumulative_trapezoid", y, x, dx)
    dim = _wrap(dim, y.dim())
    if x is None:
        d = _real_dx("cumulative_trapezoid", 1 if dx is None else dx)
        return (d / 2. * (_slice(y, dim, 0, -1) + _slice(y, dim, 1))).cumsum(dim)
    xv = _spacing_view("cumulative_trapezoid", y, x, dim)
    d = _slice(xv, dim, 1) - _slice(xv, dim, 0, -1)
    return ((d * (_slice(y, dim, 0, -1) + _slice(y, dim, 1))) / 2.).cumsum(dim)


def _gradient_checks(input, spacing_size, dims, edge_order):
    if input.dtype is _dtype.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != input.dim():
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
                           f"length {spacing_size}")
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [_wrap(d, input.dim()) for d in (range(input.dim()) if dims is None else dims)]
    if len(set(wrapped)) != len(wrapped):
        d = next(d for i, d in enumerate(wrapped) if d in wrapped[:i])
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for d in wrapped:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return wrapped


def _gradient_uniform(y, d, h, edge_order):
    """Central differences with spacing h, one-sided (first or second order) at the ends."""
    from ._shape_ops import cat
    center = (_slice(y, d, 2) - _slice(y, d, 0, -2)) / h
    if edge_order == 1:
        first = (_slice(y, d, 1, 2) - _slice(y, d, 0, 1)) / h
        last = (_slice(y, d, -1) - _slice(y, d, -2, -1)) / h
    else:
        first = (-1.5 * _slice(y, d, 0, 1) + 2 * _slice(y, d, 1, 2) - 0.5 * _slice(y, d, 2, 3)) / h
        last = (0.5 * _slice(y, d, -3, -2) - 2 * _slice(y, d, -2, -1) + 1.5 * _slice(y, d, -1)) / h
    return cat([first, center / 2, last], d)


def _gradient_coordinates(y, d, coords, edge_order):
    """Second-order differences on the sample coordinates coords (NumPy's nonuniform formulas)."""
    from ._shape_ops import cat, diff
    if coords.dim() != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coords.dim()} dimensions!")
    shape = [1] * y.dim()
    shape[d] = -1
    h = diff(coords, 1, 0)
    h1, h2 = _slice(h, 0, 0, -1), _slice(h, 0, 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _slice(y, d, 0, -2) + b * _slice(y, d, 1, -1) + c * _slice(y, d, 2)
    if edge_order == 1:
        first = (_slice(y, d, 1, 2) - _slice(y, d, 0, 1)) / h[0]
        last = (_slice(y, d, -1) - _slice(y, d, -2, -1)) / h[-1]
    else:
        a = -(2.0 * h[0] + h[1]) / (h[0] * (h[0] + h[1]))
        b = (h[0] + h[1]) / (h[0] * h[1])
        c = (-h[0]) / (h[1] * (h[0] + h[1]))
        first = a * _slice(y, d, 0, 1) + b * _slice(y, d, 1, 2) + c * _slice(y, d, 2, 3)
        a = h[-1] / (h[-2] * (h[-1] + h[-2]))
        b = -(h[-1] + h[-2]) / (h[-1] * h[-2])
        c = (2 * h[-1] + h[-2]) / (h[-1] * (h[-1] + h[-2]))
        last = a * _slice(y, d, -3, -2) + b * _slice(y, d, -2, -1) + c * _slice(y, d, -1)
    return cat([first, center, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """NumPy's gradient: per dim, central differences inside and one-sided ones at the ends;
    spacing a number, one number per dim, or one coordinate tensor per dim."""
    dims = None if dim is None else _dims(dim)
    if isinstance(spacing, (list, tuple)):
        spacing_size = len(spacing)
    elif isinstance(spacing, Tensor) and spacing.dim() != 0:
        raise TypeError("gradient(): argument 'spacing' must be tuple of Tensors, not Tensor")
    else:  # one number for every dim asked
        spacing_size = None
        spacing = [spacing] * (input.dim() if dims is None else len(dims))
    wrapped = _gradient_checks(input, spacing_size, dims, edge_order)
    out = []
    for d, h in zip(wrapped, spacing):
        out.append(_gradient_coordinates(input, d, h, edge_order) if isinstance(h, Tensor)
                   else _gradient_uniform(input, d, h, edge_order))
    return tuple(out)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice along dim scaled down to p-norm maxnorm when its norm is larger."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_fmt(maxnorm)}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = _wrap(dim, input.dim())
    acc = _dtype.float32 if input.dtype in (_dtype.float16, _dtype.bfloat16) else None
    norm = vector_norm(input, p, [i for i in range(input.dim()) if i != d], True, dtype=acc)
    from ._elementwise import where
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    r = input * factor.to(input.dtype)
    if out is not None:
        out.resize_(r.shape)
        return out.copy_(r)
    return r


def renorm_(self, p, dim, maxnorm):
    return self.copy_(renorm(self, p, dim, maxnorm))


# ---- covariance ----

def cov(input, *, correction=1, fweights=None, aweights=None):
    """NumPy's cov: rows are variables, columns observations; frequency and reliability weights."""
    from ._linalg import mm
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype is _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{fweights.dim()} dimensions")
        if fweights.dtype.is_floating_point or fweights.dtype is _dtype.bool:
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                               f"{_dtype.scalar_name(fweights.dtype)} dtype")
        if fweights.numel() != n:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {fweights.numel()} != {n}")
        if n and not bool(fweights.min() >= 0):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aweights.dim()} dimensions")
        if not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{_dtype.scalar_name(aweights.dtype)} dtype")
        if aweights.numel() != n:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aweights.numel()} != {n}")
        if n and not bool(aweights.min() >= 0):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    from ._creation import scalar_tensor
    w_sum = w.sum() if w is not None else scalar_tensor(n, dtype=_dtype.int64)
    if w is not None and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x * w if w is not None else x).t().conj())
    return (c / norm_factor).squeeze()


def corrcoef(input):
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c  # nan for a variance of 0, inf or nan; 1 otherwise
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():  # each part clipped, as PyTorch does
        from ._views import complex_
        return complex_(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---- histograms (PyTorch's histogramdd kernel for one dim) ----

def _fmt(v):
    return f"{v:g}"  # C++'s default formatting of a double


def _outer_edges(input, lo, hi, histc):
    """The leftmost and rightmost edges: the given range, or the data's; an empty range widened by 1."""
    if lo == hi and input.numel() > 0:
        lo, hi = input.min().item(), input.max().item()
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min" if histc else
                           f"torch.histogramdd: min should not exceed max, but got min {_fmt(lo)} max {_fmt(hi)} "
                           "for dimension 0")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite" if histc else
                           f"torch.histogramdd: dimension 0's range [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return lo, hi


def _histogram_counts(input, edges, weight, exact_edges, evenly_spaced=False):
    """Counts (or summed weights) of input in the bins between consecutive edges (the last bin closed);
    values outside the edges are not counted. evenly_spaced: edges from linspace, whose bins the C
    kernel finds from a linear guess (the bins a binary search finds)."""
    if input.dtype in (_dtype.float32, _dtype.float64) and edges.numel() >= 2:  # the C kernel (one pass)
        w = None if weight is None else weight.to(input.dtype)
        mode = 1 if not exact_edges else 2 if evenly_spaced else 0
        return call(lib.mt_histogram_counts, input._h, edges._h, ffi.NULL if w is None else w._h, mode)
    from ._creation import zeros
    from ._shape_ops import searchsorted
    x = input.reshape(-1)
    nb = edges.numel() - 1
    lo, hi = edges[0], edges[-1]
    inside = (x >= lo) & (x <= hi)
    if exact_edges:  # the bin whose edges hold x
        pos = searchsorted(edges, x, right=True) - 1
    else:  # histc: the linear interpolation between the outer edges, without the edges' rounding
        pos = ((x - lo) * nb / (hi - lo)).to(_dtype.int64)
    pos = pos.clamp(0, nb - 1)[inside]
    vals = (weight.reshape(-1)[inside] if weight is not None else
            zeros(pos.shape, dtype=input.dtype) + 1)
    return zeros(nb, dtype=input.dtype).index_add_(0, pos, vals.to(input.dtype))


def histc(input, bins=100, min=0, max=0, *, out=None):
    if input.dtype is _dtype.bool:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if input.is_complex():  # the bounds come from aminmax unless both are given
        kernel = "aminmax_cpu" if min == max and input.numel() else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    if not input.dtype.is_floating_point:
        # the edges are made by linspace in the input's dtype first (the bounds as doubles: no wrapping)
        for v in (min, max, *_outer_edges(input, float(min), float(max), True)):
            _dtype.check_scalar(float(v), input.dtype)
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    _check_bins(bins)
    lo, hi = _outer_edges(input, float(min), float(max), True)
    from ._creation import linspace
    edges = linspace(lo, hi, bins + 1, dtype=input.dtype)
    with _no_grad():
        r = _histogram_counts(input, edges, None, False)
    if out is not None:
        out.resize_(r.shape)
        return out.copy_(r)
    return r


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


def _check_bins(bins):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if bins >= 2 ** 63 - 1:  # its bins + 1 edges wrap in PyTorch, whose resize_ then refuses them
        raise RuntimeError("numel: integer multiplication overflow")


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    # PyTorch's two kernels: given edges (any float dtype; a range= becomes edges by linspace in the
    # input's dtype first), or a bin count over the data's range (float and double only)
    edges_given = isinstance(bins, Tensor) or range is not None
    if not isinstance(bins, Tensor) and range is not None:
        if input.dtype is _dtype.bool:
            raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
        if not input.dtype.is_floating_point:
            for v in range:
                _dtype.check_scalar(float(v), input.dtype)
    if not input.dtype.is_floating_point or not edges_given and input.dtype.itemsize < 4:
        kernel = "histogram_cpu" if edges_given else "histogramdd"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    if weight is not None and weight.numel() != input.numel():
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension, but got input with shape "
                           f"[{input.numel()}, 1] and weight with shape [{weight.numel()}]")
    from ._creation import linspace
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.dim()} "
                               "dimensions in the bins tensor for dimension 0")
        if bins.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
                               "in the bins tensor for dimension 0")
        if bins.dtype is not input.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_dtype.CPP_NAMES[input.dtype._name]} and bins for dimension 0 "
                               f"with dtype {_dtype.CPP_NAMES[bins.dtype._name]}")
        edges = bins.contiguous()
    else:
        _check_bins(bins)
        lo, hi = (0.0, 0.0) if range is None else (float(range[0]), float(range[1]))
        edges = linspace(*_outer_edges(input, lo, hi, False), bins + 1, dtype=input.dtype)
    with _no_grad():
        hist = _histogram_counts(input, edges, weight, True, not isinstance(bins, Tensor))
        if density:
            hist = hist / hist.sum() / edges.diff()
    r = return_types.histogram(hist, edges)
    if out is not None:
        from ._shape_ops import _pair_out
        return _pair_out(r, out)
    return r


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The histogram of input's rows (points in input.size(-1) dimensions): per dimension, edges
    given, or a bin count over the given or the data's range; a point outside any dimension's
    edges is not counted."""
    d = input.shape[-1] if input.dim() else 1
    x = input.reshape(-1, d)
    if isinstance(bins, (int, Tensor)):
        bins = [bins] * d
    if len(bins) != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} "
                           f"elements, but got {len(range)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_dtype.CPP_NAMES[input.dtype._name]}), and "
                           f"weight({_dtype.CPP_NAMES[weight.dtype._name]})")
    if not input.dtype.is_floating_point or input.dtype.itemsize < 4:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    from ._creation import linspace, zeros
    from ._shape_ops import searchsorted
    edges, flat, inside = [], None, None
    with _no_grad():
        for i, b in enumerate(bins):
            col = x[:, i].contiguous()
            if isinstance(b, Tensor):
                e = b.contiguous()
            else:
                _check_bins(b)
                lo, hi = (0.0, 0.0) if range is None else (float(range[2 * i]), float(range[2 * i + 1]))
                e = linspace(*_outer_edges(col, lo, hi, False), b + 1, dtype=input.dtype)
            nb = e.numel() - 1
            pos = (searchsorted(e, col, right=True) - 1).clamp(0, nb - 1)
            ok = (col >= e[0]) & (col <= e[-1])
            flat = pos if flat is None else flat * nb + pos
            inside = ok if inside is None else inside & ok
            edges.append(e)
        shape = [e.numel() - 1 for e in edges]
        vals = (weight.reshape(-1)[inside] if weight is not None else zeros(int(inside.sum()), dtype=input.dtype) + 1)
        n = 1
        for s in shape:
            n *= s
        hist = zeros(n, dtype=input.dtype).index_add_(0, flat[inside], vals).reshape(shape)
        if density:
            hist = hist / hist.sum()
            for i, e in enumerate(edges):
                hist = hist / e.diff().reshape([-1 if j == i else 1 for j in builtins.range(d)])
    return return_types.histogramdd(hist, tuple(edges))


FUNCTIONS = {"isclose": isclose, "allclose": allclose, "sum": sum, "mean": mean, "prod": prod, "amax": amax, "amin": amin, "all": all, "any": any,
             "max": max, "min": min, "argmax": argmax, "argmin": argmin}
FUNCTIONS.update({"var": var, "std": std, "var_mean": var_mean, "std_mean": std_mean, "norm": norm, "dist": dist,
                  "logsumexp": logsumexp, "cumsum": cumsum, "cumprod": cumprod, "logcumsumexp": logcumsumexp,
                  "count_nonzero": count_nonzero, "nansum": nansum, "nanmean": nanmean, "aminmax": aminmax,
                  "median": median, "nanmedian": nanmedian, "mode": mode, "quantile": quantile,
                  "nanquantile": nanquantile, "trapezoid": trapezoid, "trapz": trapz,
                  "cumulative_trapezoid": cumulative_trapezoid, "gradient": gradient, "renorm": renorm, "cov": cov,
                  "corrcoef": corrcoef, "histc": histc, "histogramdd": histogramdd, "histogram": histogram})
# Tensor methods: the functions PyTorch also has as methods, and the in-place forms
METHODS = {k: f for k, f in FUNCTIONS.items() if k not in (
    "var_mean", "std_mean", "trapezoid", "trapz", "cumulative_trapezoid", "gradient")}
METHODS.update({"cumsum_": cumsum_, "cumprod_": cumprod_, "renorm_": renorm_})
