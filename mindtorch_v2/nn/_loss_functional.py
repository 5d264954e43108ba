"""torch.nn.functional losses: PyTorch's signatures and argument handling over the C core's loss ops.

nll_loss, cross_entropy and the losses PyTorch gives a fused backward (mse, smooth_l1, huber,
binary_cross_entropy[_with_logits], soft_margin) are one core call each; the others are composed
from tensor ops exactly where PyTorch composes them.
"""
import math
import warnings

from .. import _autocast as _ac
from .._C import ffi, lib
from .._dispatch import call
from .._core import optional_handle

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
           "margin_ranking_loss", "triplet_margin_loss", "hinge_embedding_loss", "soft_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss"]

_NULL = ffi.NULL


class _Reduction:
    @staticmethod
    def get_enum(reduction):
        if reduction == "none":
            return 0
        if reduction == "mean":
            return 1
        if reduction == "elementwise_mean":
            warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
            return 1
        if reduction == "sum":
            return 2
        raise ValueError(f"{reduction} is not a valid value for reduction")

    @staticmethod
    def legacy_get_string(size_average, reduce, emit_warning=True):
        warning = "size_average and reduce args will be deprecated, please use reduction='{}' instead."
        if size_average is None:
            size_average = True
        if reduce is None:
            reduce = True
        if size_average and reduce:
            ret = "mean"
        elif reduce:
            ret = "sum"
        else:
            ret = "none"
        if emit_warning:
            warnings.warn(warning.format(ret))
        return ret

    @staticmethod
    def legacy_get_enum(size_average, reduce, emit_warning=True):
        return _Reduction.get_enum(_Reduction.legacy_get_string(size_average, reduce, emit_warning))


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _Reduction.legacy_get_string(size_average, reduce)
    return reduction


def _broadcast_pair(a, b):
    """torch.broadcast_tensors for two tensors (expand views; the core raises PyTorch's mismatch error)."""
    if a.shape == b.shape:
        return a, b
    n = max(a.dim(), b.dim())
    sa = (1,) * (n - a.dim()) + tuple(a.shape)
    sb = (1,) * (n - b.dim()) + tuple(b.shape)
    shape = []
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        shape.append(y if x == 1 else x)
    return a.expand(shape), b.expand(shape)


def _warn_size(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _apply_reduction(loss, reduction):
    if reduction == 0:
        return loss
    return loss.mean() if reduction == 1 else loss.sum()


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        input, = _ac.fp32(input)
    reduction = _reduction(size_average, reduce, reduction)
    return call(lib.mt_nll_loss, input._h, target._h, optional_handle(weight), _Reduction.get_enum(reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    if _ac.ACTIVE[0]:
        input, = _ac.fp32(input)
    reduction = _reduction(size_average, reduce, reduction)
    return call(lib.mt_cross_entropy, input._h, target._h, optional_handle(weight), _Reduction.get_enum(reduction), ignore_index,
                float(label_smoothing))


def _pointwise(kind, input, target, reduction, weight=None, pos_weight=None, param=0.0):
    return call(lib.mt_pointwise_loss, kind, input._h, target._h, optional_handle(weight), optional_handle(pos_weight), float(param),
                _Reduction.get_enum(reduction) if isinstance(reduction, str) else reduction)


def _weighted(loss, weight, input, reduction, mean_by_weight):
    """mse/l1/huber with a per-element weight: composed in Python, as PyTorch does."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    ei, et = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((ei - et) ** 2, weight, input, reduction, True)
    return _pointwise(lib.MT_LOSS_MSE, ei, et, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    ei, et = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((ei - et).abs(), weight, input, reduction, True)
    return _apply_reduction((ei - et).abs(), _Reduction.get_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    ei, et = _broadcast_pair(input, target)
    if beta == 0.0:
        return _apply_reduction((ei - et).abs(), _Reduction.get_enum(reduction))
    return _pointwise(lib.MT_LOSS_SMOOTH_L1, ei, et, reduction, param=beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    _warn_size(input, target)
    ei, et = _broadcast_pair(input, target)
    if weight is None:
        return _pointwise(lib.MT_LOSS_HUBER, ei, et, reduction, param=delta)
    return _weighted(_pointwise(lib.MT_LOSS_HUBER, ei, et, "none", param=delta), weight, input, reduction, False)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        input, target, weight = _ac.fp32(input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    red = _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        _, weight = _broadcast_pair(target, weight)
    return _pointwise(lib.MT_LOSS_BCE, input, target, red, weight=weight)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    if _ac.ACTIVE[0]:
        input, target, weight, pos_weight = _ac.fp32(input, target, weight, pos_weight)
    reduction = _reduction(size_average, reduce, reduction)
    red = _Reduction.get_enum(reduction)
    if not (target.size() == input.size()):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _pointwise(lib.MT_LOSS_BCE_LOGITS, input, target, red, weight=weight, pos_weight=pos_weight)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _pointwise(lib.MT_LOSS_SOFT_MARGIN, input, target, reduction)


# ---- losses PyTorch composes from tensor ops ------------------------------------------------

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    if size_average is not None or reduce is not None:
        red = _Reduction.legacy_get_enum(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = _Reduction.get_enum("sum" if reduction == "batchmean" else reduction)
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = target.exp() * (target - input)
    else:  # xlogy(target, target) - target * input
        from .. import where
        out = where(target == 0, 0.0, target * target.log()) - target * input
    reduced = _apply_reduction(out, red)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def _reduction_enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_enum(size_average, reduce)
    return _Reduction.get_enum(reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        input1, input2, target = _ac.fp32(input1, input2, target)
    red = _reduction_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    from .. import clamp_min
    return _apply_reduction(clamp_min(-target * (input1 - input2) + margin, 0), red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    from .. import where, clamp_min, zeros_like
    red = _reduction_enum(size_average, reduce, reduction)
    zeros = zeros_like(input)
    margin_clamp = clamp_min(margin - input, 0)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _apply_reduction(output_margin + output_self, red)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        input1, input2, target = _ac.fp32(input1, input2, target)
    from .. import where, clamp_min, zeros_like
    red = _reduction_enum(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != td + 1 or input2.dim() != td + 1:
        raise RuntimeError(f"{td}D target tensor expects {td + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    dim = td
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = (input1 * input1).sum(dim) + eps
    mag_square2 = (input2 * input2).sum(dim) + eps
    denom = (mag_square1 * mag_square2).sqrt()
    cos = prod_sum / denom
    zeros = zeros_like(cos)
    pos = 1 - cos
    neg = clamp_min(cos - margin, 0)
    output_pos = where(target == 1, pos, zeros)
    output_neg = where(target == -1, neg, zeros)
    return _apply_reduction(output_pos + output_neg, red)


def _pairwise_distance(x1, x2, p, eps):
    d = x1 - x2 + eps
    dim = max(x1.dim(), x2.dim()) - 1
    if p == 2:
        return (d * d).sum(dim).sqrt()
    if p == 1:
        return d.abs().sum(dim)
    if p == math.inf:
        return d.abs().amax(dim)
    return (d.abs() ** p).sum(dim) ** (1.0 / p)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if _ac.ACTIVE[0]:
        anchor, positive, negative = _ac.fp32(anchor, positive, negative)
    from .. import minimum, clamp_min
    red = _reduction_enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pz, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pz and pz == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pz}D, and negative {n}D inputs")
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, _pairwise_distance(positive, negative, p, eps))
    return _apply_reduction(clamp_min(margin + dist_pos - dist_neg, 0), red)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if _ac.ACTIVE[0]:
        input, target = _ac.fp32(input, target)
    from .. import where
    reduction = _reduction(size_average, reduce, reduction)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (2 * math.pi * target).log() * 0.5
        loss = loss + where(target > 1, stirling, 0.0)
    return _apply_reduction(loss, _Reduction.get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    from .. import ones_like, no_grad
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
