"""torch.nn.grad: the gradients of convolution with respect to its input and its weight, computed by
differentiating F.conv1d/conv2d/conv3d (convolution is linear in each, so one backward pass gives them)."""
from .. import autograd
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _grad_of(conv, wrt_input):
    """The gradient of conv with respect to its input (wrt_input) or its weight, at grad_output. The result
    stays differentiable (create_graph) when grad mode is on and an operand requires grad, as PyTorch's is."""
    def fn(first, second, grad_output, stride=1, padding=0, dilation=1, groups=1):
        other = second if wrt_input else first  # the operand that is given, not the size
        size = first if wrt_input else second
        higher = autograd.is_grad_enabled() and (other.requires_grad or grad_output.requires_grad)
        with autograd.enable_grad():
            z = grad_output.new_zeros(tuple(size)).requires_grad_()
            out = conv(z, other, None, stride, padding, dilation, groups) if wrt_input else \
                conv(other, z, None, stride, padding, dilation, groups)
            g = autograd.grad(out, z, grad_output, create_graph=higher)[0]
        return g if higher else g.detach()
    return fn


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


conv1d_input = _named(_grad_of(F.conv1d, True), "conv1d_input")
conv1d_weight = _named(_grad_of(F.conv1d, False), "conv1d_weight")
conv2d_input = _named(_grad_of(F.conv2d, True), "conv2d_input")
conv2d_weight = _named(_grad_of(F.conv2d, False), "conv2d_weight")
conv3d_input = _named(_grad_of(F.conv3d, True), "conv3d_input")
conv3d_weight = _named(_grad_of(F.conv3d, False), "conv3d_weight")
