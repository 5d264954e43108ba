"""bilinear, gumbel_softmax, channel_shuffle, pdist, max_unpool1d/2d/3d and the multi-class margin
losses, composed of core ops as PyTorch defines them (its formulas; gradients through the ops)."""
import mindtorch_v2 as _mt

from ._loss_functional import _reduction
from .._nn_ops import bilinear, pdist  # noqa: F401  (torch.bilinear / torch.pdist too)

__all__ = ["bilinear", "gumbel_softmax", "channel_shuffle", "native_channel_shuffle", "pdist", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "triplet_margin_with_distance_loss"]


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    gumbels = -_mt.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _mt.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # straight-through


def channel_shuffle(input, groups):
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes "
                           f"{list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle


def _unpool(input, indices, kernel, stride, padding, output_size, nd, name):
    kernel = (kernel,) * nd if isinstance(kernel, int) else tuple(kernel)
    stride = kernel if stride is None else (stride,) * nd if isinstance(stride, int) else tuple(stride)
    padding = (padding,) * nd if isinstance(padding, int) else tuple(padding)
    spatial = tuple(input.shape[-nd:])
    default = tuple((spatial[d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(nd))
    if output_size is None:
        out = default
    else:
        out = tuple(output_size)[-nd:]
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < out[d] < hi:
                shown = output_size[2:] if len(output_size) == nd + 2 else output_size  # as PyTorch shows it
                raise ValueError(f"invalid output_size \"{shown}\" (dim {d} must be between {lo} and "
                                 f"{hi})")
    lead = tuple(input.shape[:-nd])
    flat_in = input.reshape(*lead, -1)
    numel = 1
    for s in out:
        numel *= s
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= numel):
        raise RuntimeError(f"Found an invalid max index: {int(indices.max())} (output volumes are of size "
                           f"{'x'.join(map(str, out))}")
    res = _mt.zeros(*lead, numel, dtype=input.dtype).scatter(-1, indices.reshape(*lead, -1), flat_in)
    return res.reshape(*lead, *out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """per sample: sum over j != y of max(0, margin - x_y + x_j)^p (times weight[y]) / C"""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    y = target.reshape(-1, 1).long()
    C = x.shape[1]
    xy = x.gather(1, y)
    h = (margin - xy + x).clamp(min=0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[y.reshape(-1)].unsqueeze(1)
    h = h.masked_fill(_mt.arange(C).unsqueeze(0) == y, 0)
    loss = h.sum(1) / C
    return _reduce(loss if input.dim() == 2 else loss.reshape(target.shape), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """per sample: sum over the listed targets j (up to the first -1) and the non-targets k of
    max(0, 1 - (x_j - x_k)) / C"""
    reduction = _reduction(size_average, reduce, reduction)
    x = input if input.dim() == 2 else input.reshape(1, -1)
    t = target.reshape(x.shape).long()
    valid = (t >= 0).long().cumprod(1).bool()  # the list ends at the first -1
    tc = t.clamp(min=0)
    is_target = _mt.zeros(x.shape, dtype=_mt.long).scatter_add(1, tc, valid.long()) > 0  # classes listed
    xt = x.gather(1, tc)
    h = (1 - (xt.unsqueeze(2) - x.unsqueeze(1))).clamp(min=0)
    h = h * (valid.unsqueeze(2) & ~is_target.unsqueeze(1))
    loss = h.sum((1, 2)) / x.shape[1]
    return _reduce(loss if input.dim() == 2 else loss.reshape(()), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    from .functional import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")
    from .functional import pairwise_distance
    dist = distance_function if distance_function is not None else pairwise_distance
    dist_pos, dist_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        dist_neg = _mt.minimum(dist_neg, dist(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)
