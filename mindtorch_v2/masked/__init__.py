"""torch.masked: masked reductions and normalizations, and MaskedTensor.

MaskedTensor takes part in the __torch_function__ protocol, and defining such a class installs the
protocol's wrappers around every torch function (overrides.py). So the maskedtensor subpackage is imported
on first use of MaskedTensor, masked_tensor, as_masked_tensor or maskedtensor, not by `import torch`.
"""
import importlib

from ._ops import (_canonical_dim, _combine_input_and_mask, _input_mask, _output_mask, _reduction_identity,
                   _where, amax, amin, argmax, argmin, cumprod, cumsum, is_masked_tensor, log_softmax, logaddexp,
                   logsumexp, mean, median, norm, normalize, prod, softmax, softmin, std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "masked_tensor", "MaskedTensor", "mean", "median", "norm",
           "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]

_LAZY = ("MaskedTensor", "masked_tensor", "as_masked_tensor")


def __getattr__(name):
    if name == "maskedtensor" or name in _LAZY:
        mod = importlib.import_module(__name__ + ".maskedtensor")
        return mod if name == "maskedtensor" else getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"maskedtensor"})
