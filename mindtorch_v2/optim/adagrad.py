"""torch.optim.Adagrad; the update is mt_adagrad_step."""
from .._C import lib
from .._core import check
from .._creation import full_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _bump, _check_supported, _closure_loss, _scalar_tensor,
                        _use_grad_for_differentiable)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        _check_supported("Adagrad", defaults)
        super().__init__(params, defaults)
        for group in self.param_groups:  # Adagrad creates its state eagerly
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_tensor(0.0)
                state["sum"] = full_like(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = _scalar_tensor(float(s["step"]))

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])
            st = [self.state[p] for p in params]
            adagrad(params, [p.grad for p in params], [s["sum"] for s in st], [s["step"] for s in st],
                    lr=group["lr"], weight_decay=group["weight_decay"], lr_decay=group["lr_decay"], eps=group["eps"],
                    maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay,
            lr_decay, eps, maximize):
    lr = float(lr)
    flags = lib.MT_OPTIM_MAXIMIZE if maximize else 0
    for p, g, s, step_t in zip(params, grads, state_sums, state_steps):
        if g.is_sparse:
            raise NotImplementedError("Adagrad with sparse gradients is not implemented")
        step = _bump(step_t)
        check(lib.mt_adagrad_step(p._h, g._h, s._h, lr, float(weight_decay), float(lr_decay), float(eps), step,
                                  flags))
