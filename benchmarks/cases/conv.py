"""Benchmark cases: conv2d on ResNet-like shapes (float32, batch 8), forward and backward."""
from ..registry import case


def _conv(n, cin, hw, cout, k, stride, pad, backward=False):
    ho = (hw + 2 * pad - k) // stride + 1
    flops = 2 * n * cout * ho * ho * cin * k * k * (3 if backward else 1)
    label = f"conv2d {n}x{cin}x{hw}x{hw} {k}x{k}->{cout} stride {stride}" + (" fwd+bwd" if backward else "")

    @case(label, flops=flops, peak=True)
    def _c(lib):
        g = lib.Generator().manual_seed(0)
        x = lib.randn(n, cin, hw, hw, generator=g)
        w = lib.randn(cout, cin, k, k, generator=g) * 0.05
        conv = lib.nn.functional.conv2d
        if not backward:
            return lambda: conv(x, w, stride=stride, padding=pad)
        x.requires_grad_(), w.requires_grad_()

        def step():
            conv(x, w, stride=stride, padding=pad).sum().backward()
            x.grad = w.grad = None
        return step


_conv(8, 3, 224, 64, 7, 2, 3)      # ResNet stem
_conv(8, 64, 56, 64, 3, 1, 1)      # layer1 3x3
_conv(8, 64, 56, 256, 1, 1, 0)     # layer1 1x1 expand
_conv(8, 128, 28, 128, 3, 1, 1)    # layer2 3x3
_conv(8, 256, 14, 256, 3, 1, 1)    # layer3 3x3
_conv(8, 64, 56, 64, 3, 1, 1, backward=True)
