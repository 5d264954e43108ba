"""torch.optim.ASGD; PyTorch's single-tensor update, composed of tensor ops as PyTorch's own is."""
from .._creation import zeros_like
from .optimizer import (Optimizer, _bump, _check_supported, _closure_loss, _get_value, _scalar_tensor, _to_scalar,
                        _use_grad_for_differentiable, _with_grad)
from .._tensor import Tensor

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        _check_supported("ASGD", defaults)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "ASGD")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["eta"] = _scalar_tensor(float(_to_scalar(group["lr"])))
                    state["mu"] = _scalar_tensor(1.0)
                    state["ax"] = zeros_like(p)
            st = [self.state[p] for p in params]
            asgd(params, [p.grad for p in params], [s["ax"] for s in st], [s["mu"] for s in st],
                 [s["eta"] for s in st], [s["step"] for s in st], lambd=group["lambd"], lr=group["lr"],
                 t0=group["t0"], alpha=group["alpha"], weight_decay=group["weight_decay"],
                 maximize=group["maximize"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    lr = float(_to_scalar(lr))
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        grad = -grad if maximize else grad
        step = _bump(step_t)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)  # decay term
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:  # averaging
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))
