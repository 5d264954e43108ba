"""rms_norm, batch_norm, instance_norm, group_norm, local_response_norm.

batch_norm and group_norm are the core's native kernels (NativeBatchNormBackward0,
NativeGroupNormBackward0); instance_norm is batch_norm over (1, N*C, *) as PyTorch's; rms_norm and
local_response_norm are compositions of core ops as in PyTorch. float16/bfloat16 inputs are
normalised in float32 and rounded once, as PyTorch's CPU kernels do."""
from .. import _C
from .._core import check, new_out
from .._dtype import float32, bfloat16, float16
from .._tensor import wrap
from ..autograd.grad_mode import no_grad

__all__ = ["rms_norm", "batch_norm", "instance_norm", "group_norm", "local_response_norm"]


def _upcast(x):
    return x.to(float32) if x.dtype in (float16, bfloat16) else x


def _fmt(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    shape = tuple(normalized_shape)
    if len(shape) < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {_fmt(shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError("Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{_fmt(weight.shape)} and normalized_shape = {_fmt(shape)}")
    if input.dim() < len(shape) or tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={_fmt(shape)}, expected input with shape [*"
                           f"{', '.join(str(s) for s in shape)}], but got input of size{_fmt(input.shape)}")
    x = _upcast(input)
    if eps is None:  # std::numeric_limits<opmath>::epsilon()
        eps = 2.220446049250313e-16 if x.dtype.itemsize == 8 else 1.1920928955078125e-07
    dims = tuple(range(-len(shape), 0))
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.type_as(input)


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")



def _check_channels(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.size())
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm: expected input with at least 2 dimensions, got {input.dim()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    c = input.size(1)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        _check_channels(name, t, c)
    out, _, _ = _native(_C.lib.mt_batch_norm, input, weight, bias, running_mean, running_var, bool(training),
                        float(momentum), float(eps))
    return out


def _native(fn, input, *args):
    """a native norm kernel's three results (output and its statistics)"""
    hs = [a._h if hasattr(a, "_h") else _C.ffi.NULL if a is None else a for a in args]
    outs = [new_out() for _ in range(3)]
    check(fn(input._h, *hs, *outs))
    return [wrap(o[0]) for o in outs]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        size = input.size()
        n = 1
        for s in size[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")
    b, c = input.size(0), input.size(1)
    # PyTorch: batch_norm over the input viewed as (1, b*c, *) with the running stats repeated b times
    x = input.reshape((1, b * c) + tuple(input.shape[2:]))
    rm = running_mean.repeat(b) if running_mean is not None else None
    rv = running_var.repeat(b) if running_var is not None else None
    out = batch_norm(x, rm, rv, weight.repeat(b) if weight is not None else None,
                     bias.repeat(b) if bias is not None else None, use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.size(0), input.size(1)
    if c % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {_fmt(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {_fmt(t.shape)} and input of shape {_fmt(input.shape)}")
    out, _, _ = _native(_C.lib.mt_group_norm, input, weight, bias, int(num_groups), float(eps))
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    from .functional import pad
    sq = input.mul(input)
    # the mean over a window of `size` channels, zero-padded (avg_pool with count_include_pad in PyTorch)
    flat = sq.reshape(input.size(0), input.size(1), -1)
    padded = pad(flat, (0, 0, size // 2, (size - 1) // 2))
    div = padded.unfold(1, size, 1).mean(-1).reshape(input.shape)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div

