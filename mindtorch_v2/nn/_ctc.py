"""Connectionist temporal classification loss as ATen's CPU kernel computes it (LossCTC.cpp, after Graves
et al. 2006): the log-space alpha recursion forward, and ATen's gradient from the beta recursion,
`exp(lp) - exp(log(sum alpha*beta) + nll - lp)`. That gradient assumes log_probs come from log_softmax
(it is the gradient with respect to the logits, which log_softmax's backward passes through unchanged),
exactly as PyTorch's. The recursions run over time with the batch and the extended-target positions
vectorised, in the input's dtype, with ATen's operation order."""
import math

import mindtorch_v2 as _mt

from .._dtype import scalar_name
from ..autograd.function import Function

_NEGINF = -math.inf
_C = "ctc_loss_allocate_outputs"


_SIGNATURES = (" * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints target_lengths, "
               "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
               "      didn't match because some of the arguments have invalid types: ({0})\n"
               " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank = 0, "
               "int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
               "      didn't match because some of the arguments have invalid types: ({0})\n")


def _parse_error(args):
    """PyTorch's argument-parser text for lengths that are neither tensors nor int sequences: every argument
    from the first mismatch on is marked."""
    names = ["Tensor" if isinstance(a, _mt.Tensor) else type(a).__name__ for a in args]
    marked = names[:2] + [f"!{n}!" for n in names[2:]]
    raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({', '.join(names)}), but "
                    f"expected one of:\n" + _SIGNATURES.format(", ".join(marked)))


def _lengths(v, name):
    if isinstance(v, _mt.Tensor):
        if v.dtype.is_floating_point or v.dtype is _mt.bool:
            raise RuntimeError(f"{name} must be integral")
        return [int(x) for x in v.reshape(-1).tolist()]
    return [int(x) for x in v]


def _check(log_probs, targets, il, tl, blank):
    if log_probs.dtype not in (_mt.float32, _mt.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{scalar_name(log_probs.dtype)}'")
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional tensor for argument "
                           f"#1 'log_probs' (while checking arguments for {_C})")
    if not 1 <= targets.dim() < 3:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for argument #2 "
                           f"'targets' (while checking arguments for {_C})")
    T, B, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if len(il) != B:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != B:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v} "
                               f"(while checking arguments for {_C})")
    if targets.dim() == 1:
        if targets.size(0) != sum(tl):
            raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got size {targets.size(0)} "
                               f"for argument #2 'targets' (while checking arguments for {_C})")
    else:
        if targets.size(0) != B:
            raise RuntimeError(f"Expected tensor to have size {B} at dimension 0, but got size {targets.size(0)} "
                               f"for argument #2 'targets' (while checking arguments for {_C})")
        if tl and targets.size(1) < max(tl):
            raise RuntimeError(f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                               f"{targets.size(1)} for argument #2 'targets' (while checking arguments for {_C})")
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v} "
                               f"(while checking arguments for {_C})")
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {v} "
                               f"(while checking arguments for {_C})")


def _extended(targets, tl, blank):
    """The targets with blanks around and between each label (l' of the paper), padded: (B, S), S = 2 max(tl) + 1,
    and which positions are within each item's 2 tl + 1."""
    B, L = len(tl), max(tl, default=0)
    if targets.dim() == 1:  # concatenated: item b's labels start at the sum of the lengths before it
        starts = [sum(tl[:b]) for b in range(B)]
        idx = _mt.tensor([[starts[b] + min(k, max(tl[b] - 1, 0)) for k in range(L)] for b in range(B)],
                         dtype=_mt.int64).reshape(B, L)
        tg = targets[idx] if targets.numel() else _mt.zeros((B, L), dtype=_mt.int64)
    else:
        tg = targets[:, :L]
    S = 2 * L + 1
    ext = _mt.full((B, S), blank, dtype=_mt.int64)
    ext[:, 1::2] = tg
    valid = _mt.arange(S).unsqueeze(0) < (2 * _mt.tensor(tl, dtype=_mt.int64) + 1).unsqueeze(1)
    return ext, valid


def _shift(x, k, fill=_NEGINF):
    """x[..., s - k] along the last dim (k < 0: s + |k|), fill where out of range."""
    if k == 0:
        return x
    if abs(k) >= x.size(-1):  # everything shifted out (a single blank, S = 1)
        return x.new_full(x.shape, fill)
    pad = x.new_full(x.shape[:-1] + (abs(k),), fill)
    return _mt.cat([pad, x[..., :-k]], -1) if k > 0 else _mt.cat([x[..., -k:], pad], -1)


def _logsumexp3(a, b, c):
    """std::log(std::exp(a-m)+std::exp(b-m)+std::exp(c-m))+m with m the max, 0 when every term is -inf."""
    m = _mt.maximum(_mt.maximum(a, b), c)
    m = _mt.where(m == _NEGINF, _mt.zeros_like(m), m)
    return ((a - m).exp() + (b - m).exp() + (c - m).exp()).log() + m


def _forward(lp, ext, valid, il, tl):
    T, B, _ = lp.shape
    S = ext.size(1)
    lpe = lp.gather(2, ext.unsqueeze(0).expand(T, B, S))
    skip = valid & (ext != _shift(ext, 2, -1))
    skip[:, :2] = False
    first = lp.new_full((B, S), _NEGINF)
    if T:
        first[:, 0] = lpe[0, :, 0]
        if S > 1:
            first[:, 1] = _mt.where(_mt.tensor(tl) > 0, lpe[0, :, 1], first[:, 1])
    alpha = [first]
    neginf = lp.new_full((B, S), _NEGINF)
    for t in range(1, T):
        prev = alpha[-1]
        la3 = _mt.where(skip, _shift(prev, 2), neginf)
        alpha.append(_mt.where(valid, _logsumexp3(prev, _shift(prev, 1), la3) + lpe[t], neginf))
    alpha = _mt.stack(alpha) if T else lp.new_full((0, B, S), _NEGINF)
    nll = []
    for b in range(B):
        if il[b] == 0:
            nll.append(-0.0 if tl[b] == 0 else math.inf)  # -log_likelihood
            continue
        row = alpha[il[b] - 1, b]
        if tl[b] == 0:
            nll.append(-row[0])
            continue
        l1, l2 = row[2 * tl[b]], row[2 * tl[b] - 1]
        m = _mt.maximum(l1, l2)
        m = _mt.where(m == _NEGINF, _mt.zeros_like(m), m)
        nll.append(-(((l1 - m).exp() + (l2 - m).exp()).log() + m))
    nll = _mt.stack([v if isinstance(v, _mt.Tensor) else lp.new_tensor(v) for v in nll]) if B else lp.new_empty(0)
    return nll, alpha, lpe, skip


def _backward(grad_out, lp, ext, valid, il, tl, nll, alpha, lpe, skip, zero_infinity):
    T, B, C = lp.shape
    S = ext.size(1)
    neginf = lp.new_full((B, S), _NEGINF)
    il_t = _mt.tensor(il, dtype=_mt.int64)
    tl_t = _mt.tensor(tl, dtype=_mt.int64)
    pos = _mt.arange(S).unsqueeze(0)
    last = (pos == 2 * tl_t.unsqueeze(1)) | ((pos == 2 * tl_t.unsqueeze(1) - 1) & (tl_t.unsqueeze(1) > 0))
    skip_next = _shift(skip, -2, False)  # s + 2 may be skipped to: target'(s + 2) != target'(s), s + 2 <= 2 tl
    beta = [None] * T
    nxt = neginf
    for t in range(T - 1, -1, -1):
        start = (il_t == t + 1).unsqueeze(1)  # this item's last frame: the beta initialisation
        inside = (il_t > t + 1).unsqueeze(1)
        lb3 = _mt.where(skip_next, _shift(nxt, -2), neginf)
        rec = _mt.where(valid, _logsumexp3(nxt, _shift(nxt, -1), lb3) + lpe[t], neginf)
        nxt = beta[t] = _mt.where(start, _mt.where(last, lpe[t], neginf), _mt.where(inside, rec, neginf))
    beta = _mt.stack(beta) if T else lp.new_full((0, B, S), _NEGINF)
    # collected[t, b, target'(s)] "log+=" alpha + beta, s descending as ATen accumulates
    lcab = lp.new_full((T, B, C), _NEGINF)
    ab = alpha + beta
    for s in range(S - 1, -1, -1):
        idx = ext[:, s].reshape(1, B, 1).expand(T, B, 1)
        cur = lcab.gather(2, idx).squeeze(2)
        new = ab[:, :, s]
        m = _mt.maximum(cur, new)
        acc = _mt.where(cur == _NEGINF, new, ((cur - m).exp() + (new - m).exp()).log() + m)
        lcab.scatter_(2, idx, _mt.where(valid[:, s].unsqueeze(0), acc, cur).unsqueeze(2))
    nll_b = nll.reshape(1, B, 1)
    grad = (lp.exp() - (lcab + nll_b - lp).exp()) * grad_out.reshape(1, B, 1)
    keep = _mt.arange(T).reshape(T, 1, 1) < il_t.reshape(1, B, 1)
    if zero_infinity:
        keep = keep & (nll_b != math.inf)
    return _mt.where(keep, grad, _mt.zeros_like(grad))


class _CTCLoss(Function):
    """ATen's _ctc_loss: the per-item negative log likelihoods; backward is _ctc_loss_backward (once
    differentiable, as PyTorch's)."""

    @staticmethod
    def forward(ctx, log_probs, targets, il, tl, blank, zero_infinity):
        ext, valid = _extended(targets, tl, blank)
        nll, alpha, lpe, skip = _forward(log_probs, ext, valid, il, tl)
        ctx.args = (ext, valid, il, tl, nll, alpha, lpe, skip, zero_infinity)
        ctx.save_for_backward(log_probs)
        return nll

    @staticmethod
    def backward(ctx, grad):
        lp, = ctx.saved_tensors
        with _mt.no_grad():
            g = _backward(grad.detach(), lp.detach(), *ctx.args)
        return g, None, None, None, None, None


def ctc_loss_aten(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """torch.ctc_loss. ATen's schema says reduction=at::Reduction::Mean, which PyTorch's Python binding cannot
    parse and so defaults to 0: torch.ctc_loss without a reduction returns the per-item losses, as here.
    Only 1 (mean) and 2 (sum) reduce."""
    if not all(isinstance(v, (_mt.Tensor, list, tuple)) for v in (input_lengths, target_lengths)):
        _parse_error((log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity))
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    _check(lp, targets, il, tl, blank)
    res = _CTCLoss.apply(lp, targets.to(_mt.int64), il, tl, blank, bool(zero_infinity))
    if zero_infinity:
        res = _mt.where(res == math.inf, res.new_zeros(()), res)
    if reduction == 1:
        return (res / res.new_tensor(tl).clamp_min(1)).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    from ._loss_functional import _Reduction
    return ctc_loss_aten(log_probs, targets, input_lengths, target_lengths, blank, _Reduction.get_enum(reduction),
                         zero_infinity)


ctc_loss_aten.__name__ = ctc_loss_aten.__qualname__ = "ctc_loss"
