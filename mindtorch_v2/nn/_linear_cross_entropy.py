"""F.linear_cross_entropy: cross_entropy(linear(input, W, b), target), either composed (options=None) or on
the chunked path, which takes the batch batch_chunk_size rows at a time so that only one chunk's logits
exist at once. For "mean"/"sum" the chunked forward also computes the gradients, which backward scales
by the upstream gradient (and hands over, so a second backward raises unless allow_retain_graph); for
"none" backward recomputes them chunk by chunk with the per-row upstream gradient."""
import math
import warnings

import mindtorch_v2 as _mt

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad

__all__ = ["linear_cross_entropy"]

_TWICE = ("linear_cross_entropy chunked backward called twice; retain_graph=True / double backward are not "
          "supported.")


def _row_weights(target, weight, ignore_index, dtype):
    """Each row's class weight (weight[target], or 1), 0 where target == ignore_index; and target made safe
    to index with."""
    valid = target != ignore_index
    safe = _mt.where(valid, target, 0)
    w = weight.to(dtype)[safe] if weight is not None else _mt.ones(target.shape, dtype=dtype)
    return w * valid.to(dtype), safe


def _chunked(x, W, target, b, weight, ignore_index, chunk, acc, scale, grads):
    """Per-row losses and, for the grads requested ((input, W, b) flags), the gradients of
    sum_i scale_i * loss_i, one chunk of rows at a time in dtype acc. scale: a number or an (N,) tensor."""
    with no_grad():
        xa, Wa = x.to(acc), W.to(acc)
        ba = b.to(acc) if b is not None else None
        wt, safe = _row_weights(target, weight, ignore_index, acc)
        n = x.shape[0]
        loss = xa.new_empty(n)
        gi = _mt.zeros_like(xa) if grads[0] else None
        gw = _mt.zeros_like(Wa) if grads[1] else None
        gb = _mt.zeros_like(ba) if ba is not None and grads[2] else None
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            xc, tc, wc = xa[lo:hi], safe[lo:hi].unsqueeze(1), wt[lo:hi]
            logits = xc @ Wa.t()
            if ba is not None:
                logits = logits + ba
            lse = logits.logsumexp(1)
            loss[lo:hi] = wc * (lse - logits.gather(1, tc).squeeze(1))
            if gi is None and gw is None and gb is None:
                continue
            # d loss_i / d logits_i = w_i * (softmax_i - onehot(t_i))
            d = (logits - lse.unsqueeze(1)).exp_()
            d.scatter_add_(1, tc, d.new_full(tc.shape, -1.0))
            s = scale[lo:hi] if isinstance(scale, _mt.Tensor) else scale
            d *= (wc * s).unsqueeze(1)
            if gi is not None:
                gi[lo:hi] = d @ Wa
            if gw is not None:
                gw += d.t() @ xc
            if gb is not None:
                gb += d.sum(0)
        cast = (lambda t: None if t is None else t.to(x.dtype))
        return loss, cast(gi), cast(gw), cast(gb), wt


class _ChunkedReduced(Function):
    """mean/sum: loss and gradients in forward, gradients times the upstream gradient in backward."""

    @staticmethod
    def forward(ctx, x, W, target, b, weight, reduction, ignore_index, chunk, acc, keep, grads):
        wt, _ = _row_weights(target, weight, ignore_index, acc)
        total = float(wt.sum()) if reduction == "mean" else 1.0
        scale = 1.0 / total if total else math.nan  # every row ignored: nan, as cross_entropy's 0 / 0
        loss, gi, gw, gb, _ = _chunked(x, W, target, b, weight, ignore_index, chunk, acc, scale, grads)
        ctx.keep, ctx.grads = keep, [gi, gw, gb]
        total = loss.sum()
        return (total * scale if reduction == "mean" else total).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        out = []
        for i, g in enumerate(ctx.grads):
            if g is None:
                out.append(None)
                continue
            if not ctx.keep:
                if g is False:
                    raise RuntimeError(_TWICE)
                ctx.grads[i] = False  # handed over: it is scaled in place
                out.append(g.mul_(grad_output))
            else:
                out.append(g * grad_output)
        gi, gw, gb = out
        return gi, gw, None, gb, None, None, None, None, None, None, None


class _ChunkedRows(Function):
    """reduction none: the per-row losses; backward recomputes the gradients with grad_output as row scale."""

    @staticmethod
    def forward(ctx, x, W, target, b, weight, ignore_index, chunk, acc):
        ctx.save_for_backward(x, W, target, b, weight)
        ctx.ignore_index, ctx.chunk, ctx.acc = ignore_index, chunk, acc
        return _chunked(x, W, target, b, weight, ignore_index, chunk, acc, 1.0, (False,) * 3)[0].to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, W, target, b, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        grads = (need[0], need[1], b is not None and need[3])
        _, gi, gw, gb, _ = _chunked(x, W, target, b, weight, ctx.ignore_index, ctx.chunk, ctx.acc,
                                    grad_output.to(ctx.acc), grads)
        return gi, gw, None, gb, None, None, None, None


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    from .functional import cross_entropy, linear
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:  # probabilities as targets
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                     and target.dtype == _mt.int64)
        if chunkable:
            return _chunked_path(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in {'mean','sum','none'}, "
            "label_smoothing == 0, target.dtype == int64, out_features == (). Got "
            f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, tracing=False, linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    flat = math.prod(out_features, start=num_classes)
    logits = linear(input, linear_weight.reshape(flat, in_features),
                    None if linear_bias is None else linear_bias.reshape(flat))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _chunked_path(input, W, target, b, weight, reduction, ignore_index, options):
    batched = input.dim() == 2
    x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
    opts = options._adjust(num_batches=x.shape[0], in_features=x.shape[1], num_classes=W.shape[0], dtype=x.dtype,
                           device=x.device)
    acc = opts.acc_dtype
    if acc != x.dtype and not (x.dtype in (_mt.float16, _mt.bfloat16) and acc == _mt.float32):
        raise RuntimeError(f"linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{acc} acc_dtype and {x.dtype} inputs.")
    if reduction == "none":
        out = _ChunkedRows.apply(x, W, t, b, weight, ignore_index, opts.batch_chunk_size, acc)
    else:
        on = is_grad_enabled()
        grads = (on and x.requires_grad, on and W.requires_grad, on and b is not None and b.requires_grad)
        out = _ChunkedReduced.apply(x, W, t, b, weight, reduction, ignore_index, opts.batch_chunk_size, acc,
                                    opts.allow_retain_graph, grads)
    return out if batched else out.squeeze(0)
