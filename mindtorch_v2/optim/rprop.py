"""torch.optim.Rprop; PyTorch's single-tensor update, composed of tensor ops as PyTorch's own is."""
from .._creation import zeros_like, full_like
from .._elementwise import where
from .optimizer import (Optimizer, _bump, _check_supported, _closure_loss, _scalar_tensor, _to_scalar,
                        _use_grad_for_differentiable, _with_grad)
from .._tensor import Tensor

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        _check_supported("Rprop", defaults)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "Rprop")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(p.grad, _to_scalar(group["lr"]))
            st = [self.state[p] for p in params]
            (etaminus, etaplus), (smin, smax) = group["etas"], group["step_sizes"]
            rprop(params, [p.grad for p in params], [s["prev"] for s in st], [s["step_size"] for s in st],
                  [s["step"] for s in st], step_size_min=smin, step_size_max=smax, etaminus=etaminus,
                  etaplus=etaplus, maximize=group["maximize"])
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    for param, grad, prev, step_size, step_t in zip(params, grads, prevs, step_sizes, state_steps):
        grad = -grad if maximize else grad
        _bump(step_t)
        sign = grad.mul(prev).sign()
        factor = where(sign.gt(0), etaplus, where(sign.lt(0), etaminus, full_like(sign, 1.0)))  # in sign's dtype
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        grad = where(sign.lt(0), 0.0, grad)  # after a sign change: no step, forget the grad
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
