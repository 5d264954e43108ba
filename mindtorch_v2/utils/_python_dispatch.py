"""torch.utils._python_dispatch: the traceable-wrapper-subclass checks, as PyTorch 2.13 defines
them. Libraries ask them of every tensor they save (huggingface_hub, safetensors); without this
module each call was a failed import, ~0.2 ms through the import system against a dict lookup.
Dispatch modes (TorchDispatchMode) are not provided: mindtorch_v2 has no Python dispatcher."""
from .._tensor import Tensor


def _has_traceable_wrapper_subclass_protocol(t):
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t):
    """Whether t is an instance of a Tensor subclass with __tensor_flatten__ and __tensor_unflatten__."""
    is_subclass = isinstance(t, Tensor) and type(t) is not Tensor
    return is_subclass and _has_traceable_wrapper_subclass_protocol(t)


def is_traceable_wrapper_subclass_type(t):
    """Same as is_traceable_wrapper_subclass, for a type."""
    return issubclass(t, Tensor) and t is not Tensor and _has_traceable_wrapper_subclass_protocol(t)
