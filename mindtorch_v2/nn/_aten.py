"""The torch.* entry points of nn ops, with ATen's signatures where they differ from
nn.functional's: the reduction as an int (at::Reduction), positional arguments, and the
native_* ops' tuple results (the saved statistics)."""
from .. import _reduce
from . import _grid_functional, _grouped_mm, functional as F
from ._ctc import ctc_loss_aten
from .._missing import no_cpu_kernel

# at::Reduction: 1 Mean, 2 Sum, anything else None (apply_loss_reduction). The schemas' default
# `reduction=at::Reduction::Mean` is text PyTorch's Python binding cannot parse as an int, so called from
# Python the default is 0: torch.kl_div(x, y) returns the unreduced loss. These defaults say 0 for that reason.
def _reduction(r):
    return {1: "mean", 2: "sum"}.get(r, "none")



def _pool_stride(stride):
    return stride if stride not in ((), []) else None  # ATen's default `stride=[]`: the kernel size


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d_with_indices(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def constant_pad_nd(input, pad, value=0):
    return F.pad(input, pad, "constant", value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    spatial = weight.dim() - 2
    if spatial not in (1, 2, 3):
        raise NotImplementedError(f"torch.convolution with {spatial} spatial dimensions is not implemented "
                                  "in mindtorch_v2")
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[spatial - 1](input, weight, bias, stride, padding, dilation, groups)


# ---- the recurrent layers' ATen forms: .input (input, hx, params, ...) and .data (packed data, batch_sizes,
# hx, params, ...); hx is [h, c] for lstm. The math is nn's (modules/_rnn_impl.py). ----

def _rnn_aten(mode):
    from .modules import _rnn_impl
    lstm = mode == "LSTM"

    def fn(input, *args):
        from .._tensor import Tensor
        if isinstance(args[0], Tensor) and (lstm or isinstance(args[1], Tensor)):
            # .data: batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional
            batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
            batch_first = False
        else:  # .input: hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first
            hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
            batch_sizes = None
        if lstm and len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        states = tuple(hx) if lstm else (hx,)
        output, final = _rnn_impl.rnn(mode, input, states, list(params), has_biases, num_layers, dropout, train,
                                      bidirectional, batch_first, batch_sizes)
        return (output, *final)
    fn.__name__ = fn.__qualname__ = mode.lower()
    return fn


def _cell_aten(mode):
    from .modules import _rnn_impl

    def fn(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        states = tuple(hx) if mode == "LSTM" else (hx,)
        if mode != "GRU" and b_ih is not None and b_hh is not None:
            out = _rnn_impl.rnn_cell(mode, input, states, w_ih, w_hh, b_ih, b_hh)
        else:  # either bias may be absent: add what there is
            _rnn_impl._cell_checks(input, states, w_ih, w_hh, ("0", "1") if mode == "LSTM" else ("0",))
            xw = F.linear(input, w_ih, b_ih)
            if mode != "GRU" and b_hh is not None:
                xw = xw + b_hh
            out = _rnn_impl._STEPS[mode](xw, states, w_hh.t(), b_hh if mode == "GRU" else None, None)
        return out if mode == "LSTM" else out[0]
    fn.__name__ = fn.__qualname__ = mode.lower() + "_cell"
    return fn


def _inverse_std(var, eps):
    return (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    var, mean = _reduce.var_mean(input, dims, correction=0, keepdim=True)
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, _inverse_std(var, eps)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:  # the statistics used are the running ones: nothing is saved
        empty = input.new_empty((0,))
        return out, empty, empty.clone()
    dims = (0,) + tuple(range(2, input.dim()))
    var, mean = _reduce.var_mean(input.detach(), dims, correction=0)
    return out, mean, _inverse_std(var, eps)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    out = F.group_norm(input, group, weight, bias, eps)
    var, mean = _reduce.var_mean(input.detach().reshape(N, group, -1), -1, correction=0)
    return out, mean, _inverse_std(var, eps)


def native_dropout(input, p, train):
    if train is False:
        return input.clone(), input.new_ones(input.shape, dtype=_bool())
    mask = input.new_empty(input.shape).bernoulli_(1 - p).to(_bool()) if p < 1 else \
        input.new_zeros(input.shape, dtype=_bool())
    scale = 0.0 if p >= 1 else 1.0 / (1 - p)
    return input * mask * scale, mask


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """The batch's mean and biased variance per channel; the running statistics take momentum of the mean and of
    the unbiased variance (ATen's batch_norm_update_stats_cpu)."""
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(input.shape)}")
    input.size(1)
    dims = (0,) + tuple(range(2, input.dim()))
    x = input.detach()
    low = x.dtype in (_dtype().float16, _dtype().bfloat16)
    given = [p for p in (running_mean, running_var) if p is not None]
    if any(p.dtype != x.dtype for p in given):  # ATen's mixed-type rule: float32 statistics of a 16-bit input
        if any(p.dtype != _dtype().float32 for p in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if not low:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    var, mean = _reduce.var_mean(x.float() if low else x, dims, correction=0)
    n = input.numel() // input.size(1)
    with _no_grad():
        if running_mean is not None:  # computed in the accumulation type, stored once
            running_mean.copy_(mean * momentum + running_mean.to(mean.dtype) * (1 - momentum))
        if running_var is not None:
            running_var.copy_(var * (n / (n - 1)) * momentum + running_var.to(var.dtype) * (1 - momentum))
    if low and all(p.dtype == x.dtype for p in given):
        return mean.to(x.dtype), var.to(x.dtype)
    return mean, var  # (a 16-bit input with float32 statistics: float32)


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


def _dtype():
    from .. import _dtype as d
    return d


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """ATen's 4-tuple: (output, offset2bag, bag_size, max_indices), the bookkeeping as its CPU kernel leaves it:
    offset2bag is empty on the fast sum path (float/half/bfloat16 rows, no padding_idx), bag_size counts the
    non-padding indices of each bag (zeros for sum), max_indices is bag_size for mean, and for max the row each
    maximum came from (the first one on ties; 0 for an empty bag)."""
    import mindtorch_v2 as mt
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, ("sum", "mean", "max")[mode], sparse,
                          per_sample_weights, include_last_offset, padding_idx)
    it, long = indices.dtype, mt.int64
    n_bags = offsets.numel() - (1 if include_last_offset else 0)
    pad = -1 if padding_idx is None else padding_idx
    fast = mode == 0 and weight.dtype in (mt.float32, mt.float16, mt.bfloat16) and weight.stride(1) == 1 and pad < 0
    pos = mt.arange(indices.numel())
    bag = (mt.searchsorted(offsets.to(long), pos, right=True) - 1).clamp(0, max(n_bags - 1, 0))
    offset2bag = indices.new_empty(0) if fast else bag.to(it)
    if mode == 0:  # sized by the offsets, the last one included
        zeros = mt.zeros(offsets.numel(), dtype=it)
        return out, offset2bag, zeros, zeros.clone()
    counted = indices != pad
    bag_size = mt.zeros(n_bags, dtype=long).index_add_(0, bag[counted], mt.ones_like(bag[counted]))
    if mode == 1:
        return out, offset2bag, bag_size.to(it), bag_size.to(it)
    D, n = weight.size(1), indices.numel()
    is_max = (weight.detach()[indices] == out.detach()[bag]) & counted.unsqueeze(1)
    first = mt.full((n_bags, D), n, dtype=long).scatter_reduce(
        0, bag.unsqueeze(1).expand(-1, D), mt.where(is_max, pos.unsqueeze(1).expand(-1, D), n), "amin")
    rows = indices.to(long)[first.clamp_max(max(n - 1, 0))] if n else first
    return out, offset2bag, bag_size.to(it), mt.where(first < n, rows, 0).to(it)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, list(size), align_corners)


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return F.grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADDING[padding_mode], align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    _grid_functional._check_grid_sampler(input, grid, _GRID_MODES[interpolation_mode], 4)
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    _grid_functional._check_grid_sampler(input, grid, _GRID_MODES[interpolation_mode], 5)
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def _bool():
    from .. import _dtype
    return _dtype.bool


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


FUNCTIONS = {
    "max_pool1d": max_pool1d, "max_pool1d_with_indices": max_pool1d_with_indices, "max_pool2d": max_pool2d, "max_pool3d": max_pool3d, "adaptive_max_pool1d": adaptive_max_pool1d,
    "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
    "cosine_embedding_loss": cosine_embedding_loss, "hinge_embedding_loss": hinge_embedding_loss,
    "kl_div": kl_div, "margin_ranking_loss": margin_ranking_loss, "poisson_nll_loss": poisson_nll_loss,
    "triplet_margin_loss": triplet_margin_loss, "constant_pad_nd": constant_pad_nd,
    "convolution": convolution, "native_layer_norm": native_layer_norm,
    "native_batch_norm": native_batch_norm, "native_group_norm": native_group_norm, "native_dropout": native_dropout,
    "batch_norm": batch_norm, "ctc_loss": ctc_loss_aten,
    "batch_norm_update_stats": batch_norm_update_stats, "embedding_bag": embedding_bag,
    "affine_grid_generator": affine_grid_generator, "grid_sampler": grid_sampler, "grid_sampler_2d": grid_sampler_2d,
    "grid_sampler_3d": grid_sampler_3d, **_grouped_mm.FUNCTIONS,
    # SyncBatchNorm's kernels: PyTorch registers them for CUDA only, so on CPU they raise its dispatcher error
    **{name: no_cpu_kernel(name) for name in (
        "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
        "batch_norm_backward_reduce", "batch_norm_backward_elemt")},
    **{name: _rnn_aten(mode) for name, mode in (("lstm", "LSTM"), ("gru", "GRU"), ("rnn_tanh", "RNN_TANH"),
                                                 ("rnn_relu", "RNN_RELU"))},
    **{name + "_cell": _cell_aten(mode) for name, mode in (("lstm", "LSTM"), ("gru", "GRU"),
                                                            ("rnn_tanh", "RNN_TANH"), ("rnn_relu", "RNN_RELU"))}, "instance_norm": instance_norm, "group_norm": group_norm,
    # the same signature as nn.functional's
    **{name: getattr(F, name) for name in (
        "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "adaptive_avg_pool1d",
        "channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity",
        "pairwise_distance", "rms_norm", "prelu", "rrelu", "rrelu_")},
}
