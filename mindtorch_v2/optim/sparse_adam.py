"""torch.optim.SparseAdam: PyTorch 2.13's checks and its masked Adam over sparse gradients
(nn.Embedding(sparse=True))."""
import math

from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    @no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                _sparse_adam(p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"], eps=group["eps"],
                             beta1=beta1, beta2=beta2, lr=float(group["lr"]), maximize=group.get("maximize", False))
        return loss


def _sparse_adam(p, grad, exp_avg, exp_avg_sq, step, *, eps, beta1, beta2, lr, maximize):
    """Adam on the rows the gradient names: the moments and the parameter change only there (duplicates
    summed first: the update is not linear in the gradient)."""
    grad = (-grad if maximize else grad).coalesce()
    values = grad._values()
    if values.numel() == 0:
        return
    at = tuple(grad._indices())
    old_m, old_v = exp_avg[at], exp_avg_sq[at]
    dm = (values - old_m) * (1 - beta1)
    dv = (values * values - old_v) * (1 - beta2)
    exp_avg.index_put_(at, dm, accumulate=True)
    exp_avg_sq.index_put_(at, dv, accumulate=True)
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    p.index_put_(at, (dm + old_m) / ((dv + old_v).sqrt() + eps) * -step_size, accumulate=True)
