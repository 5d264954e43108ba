"""Benchmark cases: autograd overhead and small training steps."""
from ..registry import case


# ---- autograd --------------------------------------------------------------------------

@case("tiny forward+backward ((x*w+b).sum(), 16 floats)")
def _tiny_fb(lib):
    x = lib.ones(16)
    w, b = lib.ones(16, requires_grad=True), lib.ones(16, requires_grad=True)

    def step():
        (x * w + b).sum().backward()
    return step


@case("2-layer MLP train step (64x256 -> 256 -> 10)")
def _mlp(lib):
    x = lib.ones(64, 256) * 0.01
    w1 = (lib.ones(256, 256) * 0.01).requires_grad_()
    w2 = (lib.ones(256, 10) * 0.01).requires_grad_()

    def step():
        loss = ((x @ w1).tanh() @ w2).sigmoid().mean()
        loss.backward()
        with lib.no_grad():
            for w in (w1, w2):
                w -= 0.1 * w.grad
                w.grad = None
    return step


@case("autograd per-op overhead (8 recorded ops + backward, 16 floats)")
def _per_op_autograd(lib):
    x = lib.ones(16, requires_grad=True)

    def step():
        y = x * 1.5
        for _ in range(3):
            y = (y + x) * x
        y = y.sum()
        y.backward()
        x.grad = None
    return step


@case("2-layer MLP train step (64x128 -> 256 -> 10: addmm-by-ops, clamp relu, MSE by ops, SGD)")
def _mlp_sgd(lib):
    g = lib.Generator().manual_seed(0)
    x = lib.randn(64, 128, generator=g)
    target = lib.randn(64, 10, generator=g)
    params = [(lib.randn(128, 256, generator=g) * 0.05).requires_grad_(), lib.zeros(256, requires_grad=True),
              (lib.randn(256, 10, generator=g) * 0.05).requires_grad_(), lib.zeros(10, requires_grad=True)]
    w1, b1, w2, b2 = params

    def step():
        h = (x @ w1 + b1).clamp(min=0)
        out = h @ w2 + b2
        loss = ((out - target) * (out - target)).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
    return step
