"""NN ops at torch level (torch.softmax, torch.relu, torch.layer_norm, ...) and as Tensor
methods: one core call each (csrc/kernels/cpu/{softmax,norm,activation,...}.c).
torch.nn.functional builds on these."""

from . import _autocast as _ac
from ._C import ffi, lib
from ._dispatch import call, finish
from ._tensor import Tensor
from ._core import dtype_id, new_out, optional_handle

_NULL = ffi.NULL


def _check_tensor(fn, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")


# ---- softmax -------------------------------------------------------------------------------

def softmax(input, dim, dtype=None, *, _log=0):
    _check_tensor("log_softmax" if _log else "softmax", "input", 1, input)
    if isinstance(dim, bool) or not isinstance(dim, int):
        dim = int(dim)
    return call(lib.mt_softmax, input._h, dim, _log, dtype_id(dtype))


def log_softmax(input, dim, dtype=None):
    return softmax(input, dim, dtype, _log=1)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    r = call(lib.mt_softmax_backward, grad_output._h, output._h, dim, 0)
    return r if r.dtype is input_dtype else r.to(input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    r = call(lib.mt_softmax_backward, grad_output._h, output._h, dim, 1)
    return r if r.dtype is input_dtype else r.to(input_dtype)


# ---- layer_norm ----------------------------------------------------------------------------

def _int_list(fn, name, pos, v):
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    try:
        return [int(s) for s in v]
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, not "
                        f"{type(v).__name__}") from None


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    shape = _int_list("layer_norm", "normalized_shape", 2, normalized_shape)
    return call(lib.mt_layer_norm, input._h, len(shape), ffi.new("int64_t[]", shape or [0]), optional_handle(weight), optional_handle(bias),
                float(eps))


# ---- activations ---------------------------------------------------------------------------

def _act(act, x, a=0.0, b=0.0, c=0.0, inplace=False, fn="relu"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    res = new_out()
    st = lib.mt_activation(act, x._h, a, b, c, x._h if inplace else _NULL, res)
    return finish(st, res, x if inplace else None)


def relu(input):
    return _act(lib.MT_ACT_RELU, input)


def relu_(input):
    return _act(lib.MT_ACT_RELU, input, inplace=True, fn="relu_")


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input):
    return _act(lib.MT_ACT_ELU, input, _SELU_ALPHA, _SELU_SCALE, 1.0, fn="selu")


def selu_(input):
    return _act(lib.MT_ACT_ELU, input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace=True, fn="selu_")


def celu(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act(lib.MT_ACT_CELU, input, float(alpha), 1.0, 1.0 / alpha, fn="celu")


def celu_(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act(lib.MT_ACT_CELU, input, float(alpha), 1.0, 1.0 / alpha, inplace=True, fn="celu_")


def threshold(input, threshold, value):
    return _act(lib.MT_ACT_THRESHOLD, input, float(threshold), float(value), fn="threshold")


def threshold_(input, threshold, value):
    return _act(lib.MT_ACT_THRESHOLD, input, float(threshold), float(value), inplace=True, fn="threshold_")


def hardshrink(input, lambd=0.5):
    return _act(lib.MT_ACT_HARDSHRINK, input, float(lambd), fn="hardshrink")


# ---- embedding, dropout, linear ---------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if sparse and weight.requires_grad:
        from .sparse._grad import EmbeddingSparse
        return EmbeddingSparse.apply(weight, indices, int(padding_idx), bool(scale_grad_by_freq))
    return call(lib.mt_embedding, weight._h, indices._h, int(padding_idx), 1 if scale_grad_by_freq else 0)


def embedding_renorm_(input, indices, max_norm, norm_type):
    st = lib.mt_embedding_renorm_(input._h, indices._h, float(max_norm), float(norm_type))
    if st:
        from ._core import raise_status
        raise_status(st)
    return input


def _dropout(input, p, train, kind, inplace, fn, generator=None):
    _check_tensor(fn, "input", 1, input)
    if p == 0 or not train or input.numel() == 0:
        if not 0 <= p <= 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return input  # PyTorch hands back the input itself
    gh = _NULL if generator is None else generator._h
    res = new_out()
    st = lib.mt_dropout(input._h, float(p), 1 if train else 0, kind, 1 if inplace else 0, gh, res)
    return finish(st, res, input if inplace else None)


def dropout(input, p, train):
    return _dropout(input, p, train, 0, False, "dropout")


def dropout_(input, p, train):
    return _dropout(input, p, train, 0, True, "dropout_")


def feature_dropout(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_FEATURE, False, "feature_dropout")


def feature_dropout_(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_FEATURE, True, "feature_dropout_")


def alpha_dropout(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA, False, "alpha_dropout")


def alpha_dropout_(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA, True, "alpha_dropout_")


def feature_alpha_dropout(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA | lib.MT_DROPOUT_FEATURE, False, "feature_alpha_dropout")


def feature_alpha_dropout_(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA | lib.MT_DROPOUT_FEATURE, True, "feature_alpha_dropout_")


def linear(input, weight, bias=None):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    _check_tensor("linear", "input", 1, input)
    _check_tensor("linear", "weight", 2, weight)
    return call(lib.mt_linear, input._h, weight._h, optional_handle(bias))


# ---- bilinear forms and distances, composed as PyTorch composes them ----

def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o], as two GEMM-backed products."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    from ._linalg import matmul
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract in2 against x2 with a batched GEMM
    t = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = matmul(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_f,))


def pdist(input, p=2):
    """the p-norm distances between the rows of input, for each pair i < j in order"""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    from ._creation import triu_indices
    i, j = triu_indices(input.shape[0], input.shape[0], 1)
    return (input[i] - input[j]).norm(p, dim=1)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 and x2 (batched, broadcast batch dims); for p = 2 on
    more than 25 rows (or when asked) through a matrix product, as PyTorch's _euclidean_dist."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    from . import _dtype
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_dtype.scalar_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    r = d.norm(p, -1)
    # PyTorch's _cdist_backward where the norm's own derivative differs: p = inf gives every tied
    # largest |d| the whole gradient (the norm splits it), p = 0 a zero gradient (the norm none);
    # the added terms are 0 in value
    if p == float("inf"):
        ties = (d.abs() == r.detach().unsqueeze(-1)).to(d.dtype)
        r = r.detach() + ((d.abs() - r.detach().unsqueeze(-1)) * ties).sum(-1)
    elif p == 0:
        r = r + (d * 0).sum(-1)
    mode = _CDIST_MODES[compute_mode]
    if p == 2 and (mode == 1 or (mode == 0 and (x1.shape[-2] > 25 or x2.shape[-2] > 25))) and r.numel():
        # the values of PyTorch's _euclidean_dist (|a|^2 - 2 a.b + |b|^2 by one matmul), the gradient of
        # the direct form (0 at a zero distance, as PyTorch's _euclidean_dist_backward)
        from ._shape_ops import cat
        a, b = x1.detach().expand(r.shape[:-1] + x1.shape[-1:]), x2.detach().expand(r.shape[:-2] + x2.shape[-2:])
        an, bn = a.pow(2).sum(-1, True), b.pow(2).sum(-1, True)
        mm = cat([a * -2, an, an * 0 + 1], -1).matmul(cat([b, bn * 0 + 1, bn], -1).mT).clamp_min(0).sqrt()
        r = r + (mm - r.detach())
    return r


FUNCTIONS = {
    "bilinear": bilinear, "pdist": pdist, "cdist": cdist,
    "softmax": softmax, "log_softmax": log_softmax, "_softmax_backward_data": _softmax_backward_data,
    "_log_softmax_backward_data": _log_softmax_backward_data, "layer_norm": layer_norm,
    "relu": relu, "relu_": relu_, "selu": selu, "selu_": selu_, "celu": celu, "celu_": celu_,
    "threshold": threshold, "threshold_": threshold_, "hardshrink": hardshrink,
    "embedding": embedding, "embedding_renorm_": embedding_renorm_, "dropout": dropout, "dropout_": dropout_,
    "feature_dropout": feature_dropout, "feature_dropout_": feature_dropout_, "alpha_dropout": alpha_dropout,
    "alpha_dropout_": alpha_dropout_, "feature_alpha_dropout": feature_alpha_dropout,
    "feature_alpha_dropout_": feature_alpha_dropout_,
}

METHODS = {
    "softmax": softmax, "log_softmax": log_softmax, "relu": relu, "relu_": relu_, "hardshrink": hardshrink,
}
