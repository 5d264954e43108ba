"""torch.nn.functional spatial ops: convolution, pooling, padding, interpolation, fold/unfold, pixel shuffle.

Each op is one core call (csrc/kernels/cpu/{conv,pool,pad,upsample}.c); Python only normalises
arguments the way PyTorch's argument parser does (int or tuple, unbatched input).
"""
import warnings

from .._C import ffi, lib
from .._dispatch import call
from .._tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold"]

_NULL = ffi.NULL


def _h(t):
    return _NULL if t is None else t._h


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
    out = call(lib.mt_convolution, input._h, weight._h, _h(bias), nd, stride, padding, 1 if same else 0, dilation,
               1 if transposed else 0, output_padding, groups.__index__())
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


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
