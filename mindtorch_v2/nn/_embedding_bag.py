"""embedding_bag: sums, means or maxima of bags of embeddings without materialising each bag,
composed of core ops (embedding rows, then index_add / scatter_reduce into the bags)."""
import mindtorch_v2 as _mt

__all__ = ["embedding_bag"]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    from .functional import _padding_idx, embedding
    if weight.dtype == _mt.long and input.is_floating_point():
        input, weight = weight, input  # the old argument order, as PyTorch accepts it
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            type_str = f"<class 'torch.{type(offsets).__name__}'>"  # PyTorch's words for its Tensor type
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type_str}")
        offsets = _mt.arange(0, input.numel(), max(input.size(1), 1), dtype=input.dtype)[:input.size(0)]
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    padding_idx = _padding_idx(padding_idx, weight.size(0), "padding_idx must be within the number of embeddings")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    if input.dtype not in (_mt.int32, _mt.int64) or offsets.dtype not in (_mt.int32, _mt.int64):
        raise RuntimeError("embedding_bag: expected indices and offsets to be int32 or int64")
    n_bags = offsets.numel() - 1 if include_last_offset else offsets.numel()
    n = input.numel()
    starts = offsets.long()
    if n_bags > 0:
        if starts[0].item() != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {starts[0].item()}")
        if starts[n_bags - 1].item() > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length ({n}), but got offsets[-1] of "
                               f"{starts[n_bags - 1].item()}")
    # the bag of each position; with include_last_offset the last offset ends the last bag (documented
    # as the input's length; PyTorch's float32 and float64 kernels disagree when it is not)
    pos = _mt.arange(n)
    bag = _mt.searchsorted(starts[:max(n_bags, 0)], pos, right=True) - 1
    keep = bag >= 0
    if include_last_offset and n_bags >= 0:
        keep &= pos < starts[n_bags].item()
    if padding_idx is not None:
        keep &= input != padding_idx
    idx = input.long()[keep]
    bag = bag[keep]
    rows = embedding(idx, weight, max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                     sparse=sparse)
    D = weight.size(1)
    out = _mt.zeros(max(n_bags, 0), D, dtype=weight.dtype)
    if mode == "max":
        return out.scatter_reduce(0, bag.unsqueeze(1).expand(-1, D), rows, "amax", include_self=False)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[keep].unsqueeze(1)
    out = out.index_add(0, bag, rows)
    if mode == "mean":
        count = _mt.bincount(bag, minlength=max(n_bags, 0)).clamp(min=1).to(weight.dtype)
        out = out / count.unsqueeze(1)
    return out
