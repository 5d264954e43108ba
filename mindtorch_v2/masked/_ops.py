"""torch.masked's reductions and normalizations on strided tensors.

Each op replaces the elements its mask drops by the identity of the underlying reduction (0 for sums, 1 for
products, -inf/+inf or the integer extremes for maxima/minima, NaN for the median) and runs the plain op.
A fully masked-out slice therefore gives that identity (amax: -inf), NaN (mean, var, std, median; softmax's
all -inf row) or the value PyTorch's plain op gives for it, exactly as PyTorch 2.13's torch.masked does.
A MaskedTensor input brings its own mask (the `mask` argument is then ignored, as in PyTorch); its
gradient passes the masked-out positions through unchanged (PyTorch's Combine node).
"""
import math
import sys

import mindtorch_v2 as torch

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp",
           "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]

_py_sum = sum
# dtypes a sum or product accumulates in int64 (PyTorch's integral promotion of torch.sum)
_TO_INT64 = frozenset((torch.uint8, torch.bool, torch.int8, torch.int16, torch.int32))


def is_masked_tensor(obj, /):
    """Whether obj is a MaskedTensor (none exists before torch.masked.maskedtensor is first used)."""
    core = sys.modules.get("mindtorch_v2.masked.maskedtensor.core")
    return core is not None and isinstance(obj, core.MaskedTensor)


def _reduction_identity(op_name, input, *args):
    """The value that leaves op_name's result unchanged, as a 0-dim tensor of input's dtype (None: none)."""
    dtype = input.dtype
    op = op_name.rsplit(".", 1)[-1]
    floating = torch.is_floating_point(input)
    integral = torch.is_signed(input) or dtype == torch.uint8
    if op in ("sum", "cumsum"):
        return torch.tensor(0, dtype=dtype)
    if op in ("prod", "cumprod"):
        return torch.tensor(1, dtype=dtype)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if floating:
            return torch.tensor(-math.inf, dtype=dtype)
        if op == "logsumexp" and torch.is_complex(input):
            return torch.tensor(complex(-math.inf, 0), dtype=dtype)
        if integral:
            return torch.tensor(torch.iinfo(dtype).min, dtype=dtype)
    elif op in ("amin", "argmin"):
        if floating:
            return torch.tensor(math.inf, dtype=dtype)
        if integral:
            return torch.tensor(torch.iinfo(dtype).max, dtype=dtype)
    elif op in ("mean", "var", "std"):
        return None  # the mean of nothing is undefined
    elif op == "norm":
        if (args[0] if args else 2) == -math.inf:
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return torch.tensor(math.inf, dtype=dtype)
        return torch.tensor(0, dtype=dtype)
    elif op == "median":  # nanmedian skips NaN
        return torch.tensor(math.nan, dtype=dtype if floating else torch.float)
    raise NotImplementedError(f"identity of {op} on {dtype} input")


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    n = max(ndim, 1)
    seen = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in seen:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        seen.append(d)
    return tuple(sorted(d % n for d in seen))


def _input_mask(input, *args, **kwargs):
    """The mask broadcast to input's shape, as bool."""
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = torch.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=torch.bool)


def _any(mask, dims, keepdim):
    for d in reversed(dims):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


_REDUCTIONS = frozenset("sum prod amax amin argmax argmin mean median norm var std logsumexp".split())
_NORMALIZATIONS = frozenset("softmax log_softmax softmin normalize cumsum cumprod".split())


def _output_mask(op, input, *args, **kwargs):
    """The mask of op's result: the input mask for normalizations, any() over the reduced dims for reductions."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} object)")
    if op.__name__ in _REDUCTIONS:
        if op.__name__ == "norm" and args:
            args = args[1:]  # ord comes before dim
        dim = args[0] if args else kwargs.get("dim")
        return _any(_input_mask(input, *args, **kwargs), _canonical_dim(dim, input.ndim),
                    bool(kwargs.get("keepdim", False)))
    if op.__name__ in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError(f"_output_mask expected masked operation (got callable {op.__module__}.{op.__name__})")


def _where(mask, input, fill_value):
    return torch.where(mask, input, fill_value)


class _Fill(torch.autograd.Function):
    """A MaskedTensor's data with its dropped elements set to fill; the gradient passes through whole."""

    @staticmethod
    def forward(ctx, data, mask, fill):
        ctx.mark_non_differentiable(mask)
        return torch.where(mask, data, fill)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def _combine_input_and_mask(op, input, mask, *args):
    """input with the elements mask drops replaced by op's identity (input itself without a mask)."""
    name = op if isinstance(op, str) else op.__name__
    if is_masked_tensor(input):
        data, mask = input.get_data(), input.get_mask()
        return _Fill.apply(data, mask, _reduction_identity(name, data, *args))
    if mask is None:
        return input
    return torch.where(_input_mask(input, mask=mask), input, _reduction_identity(name, input, *args))


def _sum_dtype(input, dtype):
    return dtype if dtype is not None else (torch.int64 if input.dtype in _TO_INT64 else input.dtype)


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the elements mask keeps along dim (all dims by default); integers and bool sum in int64."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return torch.sum(_combine_input_and_mask("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the elements mask keeps along dim (all dims by default)."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    out = _combine_input_and_mask("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        out = out.prod(dim=d, keepdim=bool(keepdim))
    return out


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along dim where dropped elements count as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return torch.cumsum(_combine_input_and_mask("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along dim where dropped elements count as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return torch.cumprod(_combine_input_and_mask("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def _extreme(fn, name):
    def reduce(input, dim=None, *, keepdim=False, dtype=None, mask=None):
        dtype = input.dtype if dtype is None else dtype
        filled = _combine_input_and_mask(name, input, mask)
        return fn(filled, _canonical_dim(dim, filled.ndim), bool(keepdim)).to(dtype=dtype)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"{name} over the elements mask keeps along dim (all dims by default)."
    return reduce


def _arg_extreme(fn, name):
    def reduce(input, dim=None, *, keepdim=False, dtype=None, mask=None):
        # the index comes back in dtype (the input's by default), as PyTorch's masked op does
        dtype = input.dtype if dtype is None else dtype
        return fn(_combine_input_and_mask(name, input, mask), dim, bool(keepdim)).to(dtype=dtype)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"{name} over the elements mask keeps along dim (over the flattened input without one)."
    return reduce


amax = _extreme(torch.amax, "amax")
amin = _extreme(torch.amin, "amin")
argmax = _arg_extreme(torch.argmax, "argmax")
argmin = _arg_extreme(torch.argmin, "argmin")


def _count_and_total(input, dim, keepdim, dtype, mask):
    """(number of kept elements, their sum in dtype) along dim."""
    if mask is None:
        count = sum(torch.ones(input.shape, dtype=torch.int64), dim, keepdim=keepdim)
        return count, sum(input, dim, keepdim=keepdim, dtype=dtype), None
    inmask = _input_mask(input, mask=mask)
    return (inmask.sum(dim=dim, keepdim=bool(keepdim)), sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask),
            inmask)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the elements mask keeps along dim; NaN where none is kept."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    count, total, _ = _count_and_total(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median of the elements mask keeps along dim (an integer input must keep one in every slice)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    floating = torch.is_floating_point(input)
    if not floating:
        input = input.to(dtype=torch.float)
    out = torch.nanmedian(_combine_input_and_mask("median", input, mask), d, keepdim).values
    if floating:
        return out
    if torch.isnan(out).any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(x))) over the elements mask keeps; -inf where none is kept."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return torch.logsumexp(_combine_input_and_mask("logsumexp", input, mask), dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """logaddexp(input, other) where each operand's dropped elements count as -inf."""
    dtype = input.dtype if dtype is None else dtype
    return torch.logaddexp(_combine_input_and_mask("logaddexp", input, input_mask),
                           _combine_input_and_mask("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector norm of order ord over the elements mask keeps."""
    dtype = input.dtype if dtype is None else dtype
    filled = _combine_input_and_mask("norm", input, mask, ord)
    return torch.linalg.vector_norm(filled, ord, _canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if (input.dtype.is_floating_point or input.dtype.is_complex) else torch.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else torch.float32
    count, total, inmask = _count_and_total(input, dim, True, dtype, mask)
    x = torch.subtract(input, torch.divide(total, count))
    squares = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(squares.shape)
    if corr != 0:
        count = count.to(compute.to_real() if compute.is_complex else compute)
        count = torch.subtract(count, corr)
        count = torch.maximum(count, count.new_zeros([]))
    out = torch.divide(squares, count).to(dtype=dtype)
    return torch.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Variance of the elements mask keeps (Bessel-corrected unless unbiased=False or correction says
    otherwise); NaN where none is kept."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Standard deviation of the elements mask keeps; NaN where none is kept."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalization(fn, identity, name):
    def normalize_(input, dim, *, dtype=None, mask=None):
        dtype = input.dtype if dtype is None else dtype
        d = _canonical_dim(dim, input.ndim)[0]
        return fn(_combine_input_and_mask(identity, input, mask), d, dtype=dtype)
    normalize_.__name__ = normalize_.__qualname__ = name
    normalize_.__doc__ = f"{name} along dim over the elements mask keeps (dropped ones get 0 weight)."
    return normalize_


softmax = _normalization(torch.nn.functional.softmax, "amax", "softmax")
log_softmax = _normalization(torch.nn.functional.log_softmax, "amax", "log_softmax")
softmin = _normalization(torch.nn.functional.softmin, "amin", "softmin")


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input divided by the ord-norm of the kept elements of its slice along dim (at least eps)."""
    dtype = input.dtype if dtype is None else dtype
    filled = _combine_input_and_mask("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return torch.divide(filled, torch.maximum(nrm, nrm.new_full([], eps)))
