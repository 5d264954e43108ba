"""torch.optim.Muon: momentum SGD whose update matrix is orthogonalised (Newton-Schulz, in bfloat16) before it
is applied; for 2-D parameters only.  Pure Python, as PyTorch's (which has only the single-tensor form)."""
import math

from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss, _to_scalar, _with_grad

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """About U V^T for grad = U S V^T: a quintic Newton-Schulz iteration in bfloat16, run on the orientation
    with no more rows than columns so that the Gram matrix is the smaller one."""
    from .. import addmm
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16().T if tall else grad.bfloat16()
    x.div_(x.norm().clamp(min=eps))  # spectral norm <= Frobenius norm <= 1: inside the iteration's basin
    for _ in range(ns_steps):
        g = x @ x.T
        x = addmm(x, addmm(g, g, g, beta=b, alpha=c), x, beta=a)  # a x + (b g + c g^2) x
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """lr scaled for the matrix shape: sqrt(max(1, rows/cols)) by default ("original"), or
    0.2 sqrt(max(rows, cols)) to match AdamW's update RMS ("match_rms_adamw")."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn in (None, "original"):
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * (0.2 * math.sqrt(max(rows, cols)))
    return lr * 1.0


class Muon(Optimizer):
    """Muon (MomentUm Orthogonalized by Newton-schulz)."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    @no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, bufs = _with_grad(group, "Muon", real_only=True), []
            for p in params:
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(p.grad)
                bufs.append(state["momentum_buffer"])
            lr, beta = _to_scalar(group["lr"]), group["momentum"]
            for p, buf in zip(params, bufs):
                if p.grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf.lerp_(p.grad, 1 - beta)
                direction = p.grad.lerp(buf, beta) if group["nesterov"] else buf
                direction = _zeropower_via_newtonschulz(direction, group["ns_coefficients"], group["ns_steps"],
                                                        group["eps"])
                p.mul_(1 - lr * group["weight_decay"])  # decoupled weight decay
                p.add_(direction, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
