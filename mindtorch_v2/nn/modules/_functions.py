"""torch.nn.modules._functions: the identity Function whose node carries module backward hooks."""
from ...autograd.function import Function


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


def _channel_sum(t):
    """Per-channel sums of an (N, C, *) tensor, as a (C,) tensor."""
    return t.sum([d for d in range(t.dim()) if d != 1])


class SyncBatchNorm(Function):
    """Batch norm with the statistics of every rank's batch: the mean, then the variance, summed
    across the process group (two passes, so float32 keeps BatchNorm's accuracy on the joint batch);
    backward all-reduces the two per-channel sums its input gradient needs."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
        from ... import distributed as dist
        from ..._shape_ops import cat
        x = input.contiguous()
        c = x.shape[1]
        shape = [1, c] + [1] * (x.dim() - 2)
        sums = cat([_channel_sum(x), x.new_full((1,), float(x.numel() // c))])
        dist.all_reduce(sums, group=process_group)
        count = sums[c].item()
        if count <= 1 and running_mean is not None:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(x.shape)}")
        mean = sums[:c] / count
        xmu = x - mean.view(shape)
        var = _channel_sum(xmu * xmu)
        dist.all_reduce(var, group=process_group)
        var = var / count
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
            running_var.mul_(1 - momentum).add_((var * count / (count - 1)).to(running_var.dtype), alpha=momentum)
        out = xmu * invstd.view(shape)
        if weight is not None:
            out = out * weight.view(shape) + bias.view(shape)
        ctx.save_for_backward(xmu, invstd, weight)
        ctx.process_group, ctx.count = process_group, count
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from ... import distributed as dist
        from ..._shape_ops import cat
        xmu, invstd, weight = ctx.saved_tensors
        gy = grad_output.contiguous()
        c = gy.shape[1]
        shape = [1, c] + [1] * (gy.dim() - 2)
        local = cat([_channel_sum(gy), _channel_sum(gy * xmu)])
        grad_weight = local[c:] * invstd if weight is not None else None  # this rank's: DDP averages them
        grad_bias = local[:c].clone() if weight is not None else None
        grad_input = None
        if ctx.needs_input_grad[0]:
            total = local.clone()
            dist.all_reduce(total, group=ctx.process_group)
            mean_dy, mean_dy_xmu = total[:c] / ctx.count, total[c:] / ctx.count
            scale = invstd if weight is None else invstd * weight
            grad_input = (gy - mean_dy.view(shape) - xmu * (invstd * invstd * mean_dy_xmu).view(shape)) * scale.view(shape)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


def _channel_window_sums(t, lo, hi):
    """For each channel c, the sum of t[:, lo[c]:hi[c]] over channels (lo, hi: lists of ints)."""
    from ..._creation import tensor
    from ..._shape_ops import cat
    cs = cat([t.new_zeros((t.shape[0], 1, *t.shape[2:])), t.cumsum(1)], 1)
    return cs.index_select(1, tensor(hi)) - cs.index_select(1, tensor(lo))


class CrossMapLRN2d(Function):
    """Legacy cross-channel LRN. Forward keeps Lua Torch's running window, which (past the first pre_pad
    channels) never drops channel 0's square; backward is Lua Torch's formula over a window of `size`
    channels. Both are reproduced as they are, since PyTorch keeps them so."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.size(1)
        pre_pad = int((size - 1) / 2 + 1)
        hi = [min(c + pre_pad, channels) for c in range(channels)]
        lo = [c - pre_pad + 1 if c > pre_pad else 0 for c in range(channels)]
        square = input * input
        scale = _channel_window_sums(square, lo, hi)
        if channels > pre_pad + 1:
            scale[:, pre_pad + 1:] += square[:, :1]
        scale = scale.mul_(alpha / size).add_(k)
        output = scale.pow(-beta).mul_(input)
        ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        before = int(size - (size - 1) / 2)  # the channel window of c is [c - before, c + size - before)
        ratio = grad_output * output / ctx.scale
        lo = [max(c - before, 0) for c in range(channels)]
        hi = [min(max(c + size - before, 0), channels) for c in range(channels)]
        accum = _channel_window_sums(ratio, lo, hi)
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad_input, None, None, None, None
