"""torch.nn.functional spatial ops: convolution, pooling, padding, interpolation, fold/unfold, pixel shuffle.

Each op is one core call (csrc/kernels/cpu/{conv,pool,pad,upsample}.c); Python only normalises
arguments the way PyTorch's argument parser does (int or tuple, unbatched input).
"""
import warnings

from .. import _autocast as _ac
from .._C import ffi, lib
from .._dispatch import call
from .._tensor import Tensor
from .._core import new_out, optional_handle
from .._dtype import CPP_NAMES

__all__ = ["conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold", "max_pool1d", "max_pool2d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "lp_pool1d", "lp_pool2d", "max_pool3d", "max_pool3d_with_indices",
           "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "lp_pool3d",
           "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_NULL = ffi.NULL


def _ints(name, v, n, fn=None):
    """An int or a sequence of n ints, as PyTorch's IntArrayRef parsing (an int is repeated)."""
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        v = list(v)
        for x in v:
            if not hasattr(x, "__index__") or isinstance(x, bool):
                raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, but found element of type "
                                f"{type(x).__name__} at pos {v.index(x)}")
        if len(v) == 1 and n > 1:
            v = v * n
        return [x.__index__() for x in v]
    if hasattr(v, "__index__") and not isinstance(v, bool):
        return [v.__index__()] * n
    raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")


def _check_len(name, v, n):
    if len(v) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={v}")


def _conv(fn, nd, input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got ({type(input).__name__}, ...)")
    if not transposed and isinstance(bias, Tensor) and bias.dtype != input.dtype:  # convNd's first check
        raise RuntimeError(f"Input type ({CPP_NAMES[input.dtype._name]}) and bias type ({CPP_NAMES[bias.dtype._name]}) "
                           "should be the same")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    same = False
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            padding = 0
        elif padding == "same":
            same = True
            padding = 0
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    stride = _ints("stride", stride, nd, fn)
    padding = _ints("padding", padding, nd, fn)
    dilation = _ints("dilation", dilation, nd, fn)
    output_padding = _ints("output_padding", output_padding, nd, fn)
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = weight.dim() - 2  # the spatial dims the convolution runs over, as PyTorch reads them off the weight
    for name, v in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        _check_len(name, v, k)
    if transposed:
        _check_len("output_padding", output_padding, k)
    if same and any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    if same and any(d % 2 == 1 and (s - 1) % 2 == 1 for d, s in zip(dilation, weight.shape[2:])):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                      "copy of the input be created", stacklevel=3)
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    out = call(lib.mt_convolution, input._h, weight._h, optional_handle(bias), nd, stride, padding, 1 if same else 0, dilation,
               1 if transposed else 0, output_padding, groups.__index__())
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def _pair(name, v, fn):
    r = _ints(name, v, 2, fn)
    if len(r) != 2:
        raise RuntimeError(f"{fn}(): argument '{name}' must be tuple of ints of length 2")
    return r


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    return call(lib.mt_im2col, input._h, _pair("kernel_size", kernel_size, "im2col"),
                _pair("dilation", dilation, "im2col"), _pair("padding", padding, "im2col"),
                _pair("stride", stride, "im2col"))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    return call(lib.mt_col2im, input._h, _pair("output_size", output_size, "col2im"),
                _pair("kernel_size", kernel_size, "col2im"), _pair("dilation", dilation, "col2im"),
                _pair("padding", padding, "col2im"), _pair("stride", stride, "col2im"))


# ---- pooling (the 1-D ops run the 2-D kernels on input.unsqueeze(-2), as PyTorch does) -----------

def _pool_arg(fn, name, v, nd=2, allow_none=False):
    """kernel_size, stride, padding or dilation: an int or nd ints (stride may also be None or empty)."""
    if v is None and allow_none:
        return []
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if len(v) not in ((0, 1, nd) if allow_none else (1, nd)):
        what = {"kernel_size": "must either be a single int", "stride": "must either be omitted, a single int",
                "dilation": "must be either a single int"}.get(name, "must either be a single int")
        if fn == "avg_pool3d":  # its texts drop "either"
            what = what.replace("must either be", "must be")
        raise RuntimeError(f"{fn}: {name} {what}, or a tuple of {'two' if nd == 2 else 'three'} ints")
    return [x.__index__() for x in v] * (nd if len(v) == 1 else 1)


def _pool(kind, fn, nd, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
          count_include_pad=True, divisor_override=None, as_int=True):
    """One core pooling call over the last nd = 2 or 3 dims: (output, indices or None). as_int: a max or
    avg window's numbers must fit a C int, as PyTorch reads them (not its plain max_pool1d's)."""
    k = _pool_arg(fn, "kernel_size", kernel_size, nd)
    s = _pool_arg(fn, "stride", stride, nd, allow_none=True) or k
    p = _pool_arg(fn, "padding", padding, nd)
    d = _pool_arg(fn, "dilation", dilation, nd)
    if as_int and kind in (lib.MT_POOL_MAX, lib.MT_POOL_AVG) and any(not -2 ** 31 <= v < 2 ** 31 for v in (*k, *s, *p, *d)):
        raise RuntimeError("value cannot be converted to type int without overflow")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out, ind = new_out(), new_out()
    from .._core import raise_status
    from .._tensor import wrap
    st = lib.mt_pool(kind, nd, input._h, k, s, p, d, 1 if ceil_mode else 0, 1 if count_include_pad else 0,
                     divisor_override or 0, out, ind)
    if st:
        raise_status(st)
    return wrap(out[0]), (wrap(ind[0]) if ind[0] != _NULL else None)


def _check_1d(fn, input):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")


def _one(fn, name, v, allow_none=False):
    if v is None and allow_none:
        return None
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if len(v) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(v)})")
    return v[0]


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _pool(lib.MT_POOL_MAX, "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, ind = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, ind) if return_indices else out


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False, _as_int=True):
    if input.dim() not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k = _one("max_pool1d", "kernel_size", kernel_size)
    s = _one("max_pool1d", "stride", stride, allow_none=True)
    out, ind = _pool(lib.MT_POOL_MAX, "max_pool2d", 2, input.unsqueeze(-2), (1, k), None if s is None else (1, s),
                       (0, _one("max_pool1d", "padding", padding)), (1, _one("max_pool1d", "dilation", dilation)),
                       ceil_mode, as_int=_as_int)
    return out.squeeze(-2), ind.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    # PyTorch runs its own int64 kernel unless indices are wanted (returned, or kept for backward)
    from ..autograd.grad_mode import is_grad_enabled
    plain = not return_indices and not (input.requires_grad and is_grad_enabled())
    out, ind = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, _as_int=not plain)
    return (out, ind) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _pool(lib.MT_POOL_AVG, "avg_pool2d", 2, input, kernel_size, stride, padding, 1, ceil_mode,
                   count_include_pad, divisor_override)[0]


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    _check_1d("avg_pool1d", input)
    k = _one("avg_pool1d", "kernel_size", kernel_size)
    s = _one("avg_pool1d", "stride", stride, allow_none=True)
    out = _pool(lib.MT_POOL_AVG, "avg_pool2d", 2, input.unsqueeze(-2), (1, k), None if s is None else (1, s),
                  (0, _one("avg_pool1d", "padding", padding)), 1, ceil_mode, count_include_pad)[0]
    return out.squeeze(-2)


def _output_size(output_size, input, nd=2):
    """output_size as a list; None entries keep the input's size there."""
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            return list(output_size)
        return [s if v is None else v for v, s in zip(output_size, input.shape[-nd:])]
    return [output_size] * nd


def adaptive_avg_pool2d(input, output_size):
    size = _output_size(output_size, input)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if size == [1, 1]:  # PyTorch takes the mean here
        return input.mean((-1, -2), keepdim=True)
    return _pool(lib.MT_POOL_ADAPTIVE_AVG, "adaptive_avg_pool2d", 2, input, size, None, 0, 1)[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    size = _output_size(output_size, input)
    if len(size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    return _pool(lib.MT_POOL_ADAPTIVE_MAX, "adaptive_max_pool2d", 2, input, size, None, 0, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out, ind = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, ind) if return_indices else out


def adaptive_avg_pool1d(input, output_size):
    _check_1d("adaptive_avg_pool1d", input)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one("adaptive_avg_pool1d", "output_size", output_size)))\
        .squeeze(-2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    _check_1d("adaptive_max_pool1d", input)
    for i in range(1, input.dim()):  # its own check, before the 2-D kernel sees the unsqueezed sizes
        if input.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {list(input.shape)} with dimension {i} being empty")
    out, ind = adaptive_max_pool2d_with_indices(
        input.unsqueeze(-2), (1, _one("adaptive_max_pool1d", "output_size", output_size)))
    return out.squeeze(-2), ind.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out, ind = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, ind) if return_indices else out


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _pool(lib.MT_POOL_MAX, "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, ind = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, ind) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _pool(lib.MT_POOL_AVG, "avg_pool3d", 3, input, kernel_size, stride, padding, 1, ceil_mode,
                 count_include_pad, divisor_override)[0]


def adaptive_avg_pool3d(input, output_size):
    size = _output_size(output_size, input, 3)
    if len(size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if size == [1, 1, 1]:  # PyTorch takes the mean here (after its negative-size check, which 1s pass)
        return input.mean((-1, -2, -3), keepdim=True)
    return _pool(lib.MT_POOL_ADAPTIVE_AVG, "adaptive_avg_pool3d", 3, input, size, None, 0, 1)[0]


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    size = _output_size(output_size, input, 3)
    if len(size) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    return _pool(lib.MT_POOL_ADAPTIVE_MAX, "adaptive_max_pool3d", 3, input, size, None, 0, 1)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out, ind = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, ind) if return_indices else out


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    # composed as PyTorch composes it: (sum over the window of x^p)^(1/p)
    kw, kh = _ints("kernel_size", kernel_size, 2, "lp_pool2d")
    if isinstance(norm_type, (int, float)) and abs(norm_type) == float("inf"):
        if norm_type > 0:
            return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if isinstance(norm_type, (int, float)) and abs(norm_type) == float("inf"):
        if norm_type > 0:
            return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = _ints("kernel_size", kernel_size, 3, "lp_pool3d")
    if isinstance(norm_type, (int, float)) and abs(norm_type) == float("inf"):
        if norm_type > 0:
            return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kd * kw * kh).pow(1.0 / norm_type)


# ---- padding --------------------------------------------------------------------------------

_PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}


def pad(input, pad, mode="constant", value=None):
    pads = list(pad)
    for i, v in enumerate(pads):
        if not hasattr(v, "__index__") or isinstance(v, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {i}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    return call(lib.mt_pad, input._h, len(pads), [p.__index__() for p in pads], _PAD_MODES[mode],
                float(0.0 if value is None else value))


# ---- interpolation ----------------------------------------------------------------------------

_UPSAMPLE = {"nearest": 0, "nearest-exact": 1, "linear": 2, "bilinear": 2, "bicubic": lib.MT_UPSAMPLE_BICUBIC}
_UPSAMPLE_AA = {"bilinear": lib.MT_UPSAMPLE_BILINEAR_AA, "bicubic": lib.MT_UPSAMPLE_BICUBIC_AA}


def _scaled_size(n, scale):
    """An output size from a scale factor, converted to int64 with PyTorch's check (not past it, NaN neither);
    recompute_scale_factor's sizes are Python's int() in PyTorch too."""
    v = n * scale
    if not -2.0 ** 63 <= v < 2.0 ** 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return int(v)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(hasattr(x, "__index__") for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [x.__index__() for x in size]
        else:
            output_size = [size.__index__()] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if antialias and mode == "lanczos":
        raise NotImplementedError("interpolate(mode='lanczos', antialias=True) is not implemented")
    if mode == "area" and dim in (1, 2):
        return (adaptive_avg_pool1d if dim == 1 else adaptive_avg_pool2d)(input, output_size)
    supported = {("nearest", 1), ("nearest", 2), ("nearest-exact", 1), ("nearest-exact", 2), ("linear", 1),
                 ("bilinear", 2), ("bicubic", 2)}
    if (mode, dim) not in supported and not antialias:
        if mode in ("bicubic", "trilinear", "lanczos", "area") or dim == 3:
            if mode in ("trilinear", "nearest", "nearest-exact", "area") and dim == 3:
                raise NotImplementedError(f"interpolate(mode='{mode}') on {input.dim()}-D input is not implemented")
        for m, d, need in (("bilinear", 1, "4D"), ("trilinear", 1, "5D"), ("linear", 2, "3D"), ("trilinear", 2, "5D"),
                           ("linear", 3, "3D"), ("bilinear", 3, "4D")):
            if mode == m and dim == d:
                raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need} input")
        raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported"
                                  f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
                                  f"trilinear | lanczos | area | nearest-exact (got {mode})")
    if output_size is None:
        output_size = [_scaled_size(input.shape[i + 2], scale_factors[i]) for i in range(dim)]
    scales = scale_factors if scale_factors is not None else [0.0] * dim
    kind = _UPSAMPLE_AA[mode] if antialias else _UPSAMPLE[mode]
    return call(lib.mt_upsample, input._h, kind, dim, output_size, scales, 1 if align_corners else 0)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def conv_tbc(input, weight, bias, pad=0):
    """Time-batch-channel convolution: conv1d on (batch, channel, time) with the kernel (width, in, out)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
