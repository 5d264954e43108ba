"""torch.nn.utils.fusion: fold an eval-mode BatchNorm into the conv or linear layer before it."""
import copy

import mindtorch_v2 as torch  # the package; its attributes are read at call time

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_stats(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _bn_args(bn):
    return bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of conv whose output equals bn(conv(x)) in eval mode."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, *_bn_args(bn), transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose: bool = False):
    """The conv weight scaled per output channel by bn_w / sqrt(var + eps), and the bias shifted to match."""
    w_dtype = conv_w.dtype
    b_dtype = w_dtype if conv_b is None else conv_b.dtype
    conv_b = torch.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = torch.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = torch.zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = torch.rsqrt(bn_rv + bn_eps)
    # output channels are dim 0 of a conv weight, dim 1 of a transposed conv's
    per_channel = [1, -1] if transpose else [-1, 1]
    per_channel += [1] * (conv_w.dim() - 2)
    weight = (conv_w * (bn_w * inv_std).reshape(per_channel)).to(dtype=w_dtype)
    bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=b_dtype)
    return torch.nn.Parameter(weight, conv_w.requires_grad), torch.nn.Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of linear whose output equals bn(linear(x)) in eval mode (bn over linear's last dimension)."""
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    # the shapes of weight and bias are kept, so bn's features must broadcast against linear's outputs
    if bn.num_features not in (linear.out_features, 1):
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _check_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, *_bn_args(bn))
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The linear weight's rows scaled by bn_w / sqrt(var + eps), and the bias shifted to match."""
    w_dtype = linear_w.dtype
    b_dtype = w_dtype if linear_b is None else linear_b.dtype
    linear_b = torch.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return torch.nn.Parameter(weight, linear_w.requires_grad), torch.nn.Parameter(bias, linear_b.requires_grad)
