"""torch.optim.SGD (momentum, dampening, nesterov, weight_decay, maximize); the update is mt_sgd_step."""
from .._C import ffi, lib
from .._core import check
from .._creation import empty_like
from .._tensor import Tensor
from .optimizer import Optimizer, _check_supported, _closure_loss, _use_grad_for_differentiable

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_supported("SGD", defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None and not p.grad.is_sparse]
            for p in group["params"]:
                if p.grad is not None and p.grad.is_sparse:
                    self.state[p]["momentum_buffer"] = _sparse_sgd(
                        p, p.grad, self.state[p].get("momentum_buffer"), weight_decay=group["weight_decay"],
                        momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                        nesterov=group["nesterov"], maximize=group["maximize"])
            bufs = [self.state[p].get("momentum_buffer") for p in params] if group["momentum"] != 0 else None
            sgd(params, [p.grad for p in params], bufs, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"])
            if bufs is not None:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def _sparse_sgd(p, g, buf, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """PyTorch's unfused update for a sparse gradient, with the sparse ops (weight decay adds a dense
    parameter to the sparse gradient, which raises PyTorch's error)."""
    g = -g if maximize else g
    if weight_decay != 0:
        g = g.add(p, alpha=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = g.detach().clone()
        else:
            buf.mul_(momentum).add_(g, alpha=1 - dampening)
        g = g.add(buf, alpha=momentum) if nesterov else buf
    p.add_(g, alpha=-float(lr))
    return buf


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """Functional SGD: one fused core call per parameter; new momentum buffers are stored in the list."""
    lr = float(lr)
    base = (lib.MT_OPTIM_MAXIMIZE if maximize else 0) | (lib.MT_OPTIM_NESTEROV if nesterov else 0)
    for i, (p, g) in enumerate(zip(params, d_p_list)):
        flags, buf = base, ffi.NULL
        if momentum != 0:
            b = momentum_buffer_list[i]
            if b is None:  # the first step's buffer is a copy of the (decayed) grad
                b = momentum_buffer_list[i] = empty_like(p)
                flags |= lib.MT_OPTIM_FIRST
            buf = b._h
        check(lib.mt_sgd_step(p._h, g._h, buf, lr, momentum, dampening, float(weight_decay), flags))
