"""torch.optim.Adafactor: Adam-like steps from a factored second moment (row and column statistics per matrix),
sized relative to the weights.  The single-tensor form, which PyTorch runs on CPU unless foreach is asked for."""
from .._creation import zeros_like
from .._tensor import Tensor
from .. import _dtype
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss, _scalar_tensor, _to_scalar, _with_grad

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern, 2018), without momentum."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _scalar_tensor(float(p_state["step"]))

    @no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, row_vars, col_vars, variances = _with_grad(group, "Adafactor", real_only=True), [], [], []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    if p.grad.dim() > 1:  # factored second moment: a row and a column statistic
                        shape = list(p.grad.shape)
                        state["row_var"] = p.grad.new_zeros(shape[:-1] + [1])
                        state["col_var"] = p.grad.new_zeros(shape[:-2] + [1, shape[-1]])
                    else:
                        state["variance"] = zeros_like(p.grad)
                row_vars.append(state.get("row_var"))
                col_vars.append(state.get("col_var"))
                variances.append(state.get("variance"))
            eps1, eps2 = group["eps"]
            adafactor(params, [p.grad for p in params], row_vars, col_vars, variances,
                      [self.state[p]["step"] for p in params], d=group["d"], lr=group["lr"],
                      beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      foreach=group["foreach"], maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None, grad_scale=None,
              found_inf=None, has_complex=False, *, d, lr, beta2_decay, weight_decay, eps1, eps2, maximize):
    """The functional form of Adafactor.step."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("`state_steps` argument must contain a list of singleton tensors")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    for param, grad, row_var, col_var, variance, step_t in zip(params, grads, row_vars, col_vars, variances,
                                                               state_steps):
        if maximize:
            grad = -grad
        if eps1 is None:  # decided by the first parameter, as PyTorch's
            eps1 = _dtype.finfo(param.dtype).eps
        step_t += 1
        k = step_t.item()
        beta2_weight = k ** beta2_decay  # 1 - beta2 at step k
        rel_step = min(lr, 1 / k ** 0.5)
        scale = max(eps2, param.norm(2).item() / param.numel() ** 0.5) * rel_step  # relative to the weights' RMS
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        u = _second_moment(grad, row_var, col_var, variance, beta2_weight, eps1)
        u = u.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        clip = max(1.0, u.norm(2).item() / (u.numel() ** 0.5 * d))  # update RMS clipped to d
        param.add_(u, alpha=-scale / clip)


def _second_moment(grad, row_var, col_var, variance, weight, eps1):
    """The updated running estimate of grad**2, as a new tensor: for a matrix the outer product of its row and
    column means over their mean (Adafactor's factorisation), for a vector the full running mean."""
    if grad.dim() <= 1:
        variance.lerp_(grad * grad, weight)
        return variance.clone()
    row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), weight)
    col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), weight)
    return (row_var @ col_var).div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
