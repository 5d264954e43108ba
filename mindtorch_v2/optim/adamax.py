"""torch.optim.Adamax; the update is mt_adamax_step."""
from .._C import lib
from .._core import check
from .._creation import zeros_like
from .optimizer import (Optimizer, _bump, _check_common, _check_supported, _closure_loss, _scalar_tensor,
                        _use_grad_for_differentiable, _with_grad)
from .._tensor import Tensor

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_common(lr, eps, weight_decay, betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        _check_supported("Adamax", defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False)):
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _scalar_tensor(float(p_state["step"]))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "Adamax")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
            st = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            adamax(params, [p.grad for p in params], [s["exp_avg"] for s in st], [s["exp_inf"] for s in st],
                   [s["step"] for s in st], eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    lr = float(lr)
    flags = lib.MT_OPTIM_MAXIMIZE if maximize else 0
    for p, g, m, ei, step_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        step = _bump(step_t)
        check(lib.mt_adamax_step(p._h, g._h, m._h, ei._h, lr, float(beta1), float(beta2), float(eps),
                                 float(weight_decay), step, flags))
