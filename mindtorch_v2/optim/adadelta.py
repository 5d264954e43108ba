"""torch.optim.Adadelta; the update is mt_adadelta_step."""
from .._C import lib
from .._core import check
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _check_supported, _closure_loss, _scalar_tensor, _use_grad_for_differentiable,
                        _with_grad)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        _check_supported("Adadelta", defaults)
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
            params = _with_grad(group, "Adadelta")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
            st = [self.state[p] for p in params]
            adadelta(params, [p.grad for p in params], [s["square_avg"] for s in st], [s["acc_delta"] for s in st],
                     [s["step"] for s in st], lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    lr = float(lr)
    flags = lib.MT_OPTIM_MAXIMIZE if maximize else 0
    for p, g, sq, ad, step_t in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step_t += 1
        check(lib.mt_adadelta_step(p._h, g._h, sq._h, ad._h, lr, float(rho), float(eps), float(weight_decay), flags))
