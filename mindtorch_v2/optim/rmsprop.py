"""torch.optim.RMSprop (centered, momentum); the update is mt_rmsprop_step."""
from .._C import ffi, lib
from .._core import check
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _check_supported, _closure_loss, _scalar_tensor, _use_grad_for_differentiable,
                        _with_grad)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        _check_supported("RMSprop", defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("momentum", 0), ("centered", False), ("foreach", None), ("maximize", False),
                         ("differentiable", False), ("capturable", False)):
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _scalar_tensor(float(p_state["step"]))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "RMSprop")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["square_avg"] = zeros_like(p)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = zeros_like(p)
            st = [self.state[p] for p in params]
            rmsprop(params, [p.grad for p in params], [s["square_avg"] for s in st],
                    [s.get("grad_avg") for s in st], [s.get("momentum_buffer") for s in st],
                    [s["step"] for s in st], lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"], centered=group["centered"],
                    maximize=group["maximize"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None,
            maximize=False, differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps,
            weight_decay, momentum, centered):
    lr = float(lr)
    flags = (lib.MT_OPTIM_MAXIMIZE if maximize else 0) | (lib.MT_OPTIM_CENTERED if centered else 0)
    for i, p in enumerate(params):
        state_steps[i] += 1
        ga = grad_avgs[i]._h if centered else ffi.NULL
        buf = momentum_buffer_list[i]._h if momentum > 0 else ffi.NULL
        check(lib.mt_rmsprop_step(p._h, grads[i]._h, square_avgs[i]._h, ga, buf, lr, float(alpha), float(eps),
                                  float(weight_decay), float(momentum), flags))
