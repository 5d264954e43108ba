"""torch.fft: the transforms, composed (as ATen composes them) from the three primitives of the C core,
_fft_c2c, _fft_r2c and _fft_c2r (csrc/kernels/cpu/fft.c on FFTW), which carry the derivatives; and the
helpers fftfreq, rfftfreq, fftshift and ifftshift."""
import math

from ._spectral import _fft_c2c, _fft_r2c, _fft_c2r
from ._dtype import scalar_name as _scalar_name
from ._tensor import Tensor, _wrap_dim_strict

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "Tensor"]  # PyTorch's (hfft2... unlisted)

# PyTorch's fft_norm_mode: which scale each norm= string gives the forward and the backward transform
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm(norm, forward):
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


# ---- argument handling shared by the transforms ----

def _check_args(name, input, n_name, n, norm):
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"fft_{name}(): argument 'norm' must be str, not {type(norm).__name__}")
    if n_name == "n" and n is not None and (not isinstance(n, int) or isinstance(n, bool)):
        raise TypeError(f"fft_{name}(): argument 'n' must be int, not {type(n).__name__}")
    if n_name == "s" and n is not None and (not isinstance(n, (list, tuple)) or
                                            any(not isinstance(v, int) or isinstance(v, bool) for v in n)):
        raise TypeError(f"fft_{name}(): argument 's' must be tuple of ints, not {type(n).__name__}")


def _promote(x, require_complex=False):
    """PyTorch's promote_tensor_fft: integers to the default float; CPU transforms float32/float64 only."""
    from . import get_default_dtype
    dt = x.dtype
    if dt.is_complex:
        return x
    if not dt.is_floating_point:
        dt = get_default_dtype()
    from . import float32, float64, complex64, complex128
    if dt not in (float32, float64):
        raise RuntimeError(f"Unsupported dtype {_scalar_name(dt)}")
    if require_complex:
        dt = complex64 if dt == float32 else complex128
    return x if dt == x.dtype else x.to(dt)


def _resize(x, dims, sizes):
    """Zero-pad or trim x so that x.size(dims[i]) == sizes[i] (PyTorch's resize_fft_input)."""
    pad = [0] * (2 * x.dim())
    padded = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if x.shape[d] < n:
            pad[len(pad) - 2 * d - 1] = n - x.shape[d]
            padded = True
        elif x.shape[d] > n:
            x = x.narrow(d, 0, n)
    if padded:
        from .nn._aten import constant_pad_nd
        x = constant_pad_nd(x, pad)
    return x


def _write(out, result, primitive, input, complex_out, name):
    """out=: PyTorch's dtype-kind check, then out resized and written (no autograd through out=)."""
    if out is None:
        return result
    from . import is_grad_enabled
    if complex_out and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got {_scalar_name(out.dtype)}")
    if not complex_out and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {_scalar_name(out.dtype)}")
    if is_grad_enabled() and input.requires_grad:
        raise RuntimeError(f"{primitive}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    return out.resize_(result.shape).copy_(result)


def _n_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


# ---- one-dimensional transforms ----

def _c2c(name, input, n, dim, norm, forward, out):
    """fft/ifft: complex input by c2c; real input by a two-sided r2c (conjugated for the inverse)."""
    _check_args(name, input, "n", n, norm)
    if not input.dtype.is_complex:
        return _r2c(name, input, n, dim, norm, forward, False, out, checked=True)
    d = _wrap_dim_strict(dim, input.dim())
    x = input if n is None else _resize(input, [d], [_n_points(n)])
    _n_points(x.shape[d])
    return _write(out, _fft_c2c(x, [d], _norm(norm, forward), forward), "_fft_c2c", input, True, name)


def _r2c(name, input, n, dim, norm, forward, onesided, out, checked=False):
    """rfft/ihfft (and fft/ifft of real input): r2c, conjugated for the inverse direction."""
    if not checked:
        _check_args(name, input, "n", n, norm)
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_scalar_name(input.dtype)}")
    x = _promote(input)
    d = _wrap_dim_strict(dim, x.dim())
    x = x if n is None else _resize(x, [d], [_n_points(n)])
    _n_points(x.shape[d])
    r = _fft_r2c(x, [d], _norm(norm, forward), onesided)
    return _write(out, r if forward else r.conj(), "_fft_r2c", input, True, name)


def _c2r(name, input, n, dim, norm, forward, out):
    """irfft/hfft: c2r of the Hermitian half, conjugated first for the forward direction."""
    _check_args(name, input, "n", n, norm)
    x = _promote(input, require_complex=True)
    d = _wrap_dim_strict(dim, x.dim())
    last = _n_points(n if n is not None else 2 * (x.shape[d] - 1))
    if n is not None:
        x = _resize(x, [d], [last // 2 + 1])
    if forward:
        x = x.conj()
    return _write(out, _fft_c2r(x, [d], _norm(norm, forward), last), "_fft_c2r", input, False, name)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    return _c2c("fft", input, n, dim, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    return _c2c("ifft", input, n, dim, norm, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _r2c("rfft", input, n, dim, norm, True, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _c2r("hfft", input, n, dim, norm, True, out)


# ---- n-dimensional transforms ----

def _shape_and_dims(x, s, dim):
    """PyTorch's canonicalize_fft_shape_and_dim_args: wrapped unique dims and the signal's sizes."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [_wrap_dim_strict(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, shape = list(range(ndim)), list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _n_points(n)
    return shape, dims


def _c2r_shape_and_dims(name, x, s, dim):
    """The n-dimensional c2r's arguments: the last dim's output size, and its Hermitian half as input size."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else shape[-1]
    _n_points(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _fftn(name, input, s, dim, norm, forward, out):
    _check_args(name, input, "s", s, norm)
    shape, dims = _shape_and_dims(input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _write(out, _fft_c2c(x, dims, _norm(norm, forward), forward), "_fft_c2c", input, True, name)


def _rfftn(name, input, s, dim, norm, out):
    _check_args(name, input, "s", s, norm)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {_scalar_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _write(out, _fft_r2c(x, dims, _norm(norm, True), True), "_fft_r2c", input, True, name)


def _irfftn(name, input, s, dim, norm, out):
    _check_args(name, input, "s", s, norm)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _write(out, _fft_c2r(x, dims, _norm(norm, False), last), "_fft_c2r", input, False, name)


def _hfftn(name, input, s, dim, norm, out):
    _check_args(name, input, "s", s, norm)
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm(norm, True)
    if len(dims) > 1:
        x = _fft_c2c(x, dims[:-1], mode, True)
    return _write(out, _fft_c2r(x.conj(), dims[-1:], mode, last), "_fft_c2r", input, False, name)


def _ihfftn(name, input, s, dim, norm, out):
    _check_args(name, input, "s", s, norm)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    mode = _norm(norm, False)
    r = _fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _write(out, r.conj(), "_fft_r2c", input, True, name)
    return _write(out, _fft_c2c(r.conj_physical(), dims[:-1], mode, False), "_fft_c2c", input, True, name)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _fftn("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _fftn("ifftn", input, s, dim, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _rfftn("rfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _irfftn("irfftn", input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _hfftn("hfftn", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _fftn("fft2", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _fftn("ifft2", input, s, dim, norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _rfftn("rfft2", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _irfftn("irfft2", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _hfftn("hfft2", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _ihfftn("ihfft2", input, s, dim, norm, out)


def _freq(name, n, d, count, dtype, device, requires_grad, out):
    """PyTorch's kernel: an arange of the sample indices (negative ones wrapped to the right), times 1/(n*d)."""
    from . import arange, get_default_dtype
    if dtype is None:  # out= computes in out's dtype (PyTorch's fft_fftfreq_out)
        dtype = get_default_dtype() if out is None else out.dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if count > 2 ** 53:  # allocated first, as PyTorch does (a double-valued arange would round the count)
        from . import empty
        empty(count, dtype=dtype, device=device)
    result = arange(count, dtype=dtype, device=device)
    if name == "fftfreq":
        result[(n + 1) // 2:] = arange(-(n // 2), 0, dtype=dtype)
    result.mul_(1.0 / (n * d) if n * d else math.copysign(math.inf, n * d))
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result.requires_grad_(requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _freq("fftfreq", n, d, n, dtype, device, requires_grad, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _freq("rfftfreq", n, d, n // 2 + 1, dtype, device, requires_grad, out)


def _shift(input, dim, name, half):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return input.roll([half(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    return _shift(input, dim, "fft_fftshift", lambda s: s // 2)


def ifftshift(input, dim=None):
    return _shift(input, dim, "fft_ifftshift", lambda s: (s + 1) // 2)
