"""torch.optim.NAdam; the update is mt_nadam_step (mu_product stays a 0-dim state tensor, as PyTorch's)."""
from .._C import lib
from .._core import check
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _bump, _check_common, _check_supported, _closure_loss, _get_value,
                        _scalar_tensor, _use_grad_for_differentiable, _with_grad)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_common(lr, eps, weight_decay, betas)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        _check_supported("NAdam", defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False),
                         ("decoupled_weight_decay", False)):
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0:
                    if not isinstance(p_state["step"], Tensor):
                        p_state["step"] = _scalar_tensor(float(p_state["step"]))
                    if not isinstance(p_state["mu_product"], Tensor):
                        p_state["mu_product"] = _scalar_tensor(p_state["mu_product"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "NAdam")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["mu_product"] = _scalar_tensor(1.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
            st = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            nadam(params, [p.grad for p in params], [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st],
                  [s["mu_product"] for s in st], [s["step"] for s in st], beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"], eps=group["eps"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps):
    lr = float(lr)
    flags = ((lib.MT_OPTIM_MAXIMIZE if maximize else 0)
             | (lib.MT_OPTIM_DECOUPLED if decoupled_weight_decay else 0))
    for p, g, m, v, mu_product, step_t in zip(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps):
        step = _bump(step_t)
        # PyTorch's scalar schedule: mu_product is a 0-dim tensor, multiplied in its own dtype
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        check(lib.mt_nadam_step(p._h, g._h, m._h, v._h, lr, float(beta1), float(beta2), float(eps),
                                float(weight_decay), step, mu, mu_next, _get_value(mu_product), flags))
