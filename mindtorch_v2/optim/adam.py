"""torch.optim.Adam (amsgrad, maximize, weight_decay, decoupled_weight_decay); the update is mt_adam_step."""
from .._C import ffi, lib
from .._core import check
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _check_common, _check_supported, _closure_loss, _device_dtype_check_for_fused,
                        _get_value, _scalar_tensor, _to_scalar, _use_grad_for_differentiable, _with_grad)

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        _check_common(lr, eps, weight_decay, betas)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(map(_to_scalar, betas))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        _check_supported(type(self).__name__, defaults, fused=True)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                         ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _scalar_tensor(float(p_state["step"]))

    def _init_group(self, group, params):
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                state["step"] = _scalar_tensor(0.0)
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = _with_grad(group, "Adam")
            self._init_group(group, params)
            st = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            adam(params, [p.grad for p in params], [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st],
                 [s.get("max_exp_avg_sq") for s in st], [s["step"] for s in st], amsgrad=group["amsgrad"],
                 beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False, *, amsgrad, beta1,
         beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay=False):
    """Functional Adam: one fused core call per parameter."""
    lr, beta1, beta2 = float(lr), float(beta1), float(beta2)
    flags = ((lib.MT_OPTIM_MAXIMIZE if maximize else 0) | (lib.MT_OPTIM_AMSGRAD if amsgrad else 0)
             | (lib.MT_OPTIM_DECOUPLED if decoupled_weight_decay else 0))
    for i, p in enumerate(params):
        step_t = state_steps[i]
        step_t += 1
        vmax = max_exp_avg_sqs[i]._h if amsgrad else ffi.NULL
        check(lib.mt_adam_step(p._h, grads[i]._h, exp_avgs[i]._h, exp_avg_sqs[i]._h, vmax, lr, beta1, beta2,
                               float(eps), float(weight_decay), _get_value(step_t), flags))
