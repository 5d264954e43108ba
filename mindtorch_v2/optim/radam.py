"""torch.optim.RAdam; the update is mt_radam_step."""
from .._C import lib
from .._core import check
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _bump, _check_common, _check_supported, _closure_loss, _scalar_tensor,
                        _use_grad_for_differentiable, _with_grad)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_common(lr, eps, weight_decay, betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        _check_supported("RAdam", defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("foreach", None), ("maximize", False), ("differentiable", False),
                         ("decoupled_weight_decay", False), ("capturable", False)):
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _scalar_tensor(float(p_state["step"]))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "RAdam")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
            st = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            radam(params, [p.grad for p in params], [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st],
                  [s["step"] for s in st], beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    lr = float(lr)
    flags = ((lib.MT_OPTIM_MAXIMIZE if maximize else 0)
             | (lib.MT_OPTIM_DECOUPLED if decoupled_weight_decay else 0))
    for p, g, m, v, step_t in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
        step = _bump(step_t)
        check(lib.mt_radam_step(p._h, g._h, m._h, v._h, lr, float(beta1), float(beta2), float(eps),
                                float(weight_decay), step, flags))
