"""Weight normalization: w = g * v / ||v|| with the norm over every dim but `dim`.
torch.nn.utils.weight_norm (the deprecated hook form) and the helpers both forms use
(torch._weight_norm, torch.norm_except_dim, composed of core ops)."""
import warnings

from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim", "_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """the pow-norm of v over every dim except dim, kept as a broadcastable shape (dim -1: all)"""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, dim=1).view((v.size(0),) + (1,) * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, dim=0).view((1,) * (v.dim() - 1) + (v.size(-1),))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def _remove_hook(module, cls, name, what):
    """undo a weight_norm/spectral_norm hook of module's `name`"""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, cls) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    return _remove_hook(module, WeightNorm, name, "weight_norm")
