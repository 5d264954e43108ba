"""Names libraries read from torch._C at import time (torch._C is the core's cffi module here):
TorchScript/ONNX graph types used in annotations of ONNX `symbolic` functions. They are types only:
mindtorch_v2 has no TorchScript graphs, so building one raises NotImplementedError."""
from . import _C
from ._missing import missing_class

for _name in ("Graph", "Value", "Node", "Block"):
    setattr(_C, _name, missing_class(f"torch._C.{_name}", why=" (mindtorch_v2 has no TorchScript graphs)"))
# compiled TorchScript objects (torch.ScriptModule, torch.ScriptMethod): never made here, so isinstance is False
for _name in ("ScriptModule", "ScriptMethod"):
    setattr(_C, _name, missing_class(f"torch.{_name}", why=" (mindtorch_v2 has no TorchScript)"))

from ._core import LinAlgError as _LinAlgError  # noqa: E402

_C._LinAlgError = _LinAlgError
# TorchScript's class registry: nothing is ever scripted here, so there is nothing to clear
_C._jit_clear_class_registry = lambda: None


def _unsafe_set_version_counter(tensors, versions):
    """torch._C._autograd._unsafe_set_version_counter: set each tensor's version (shared by its views)."""
    from ._C import lib
    for t, v in zip(tensors, versions):
        lib.mt_tensor_set_version(t._h, int(v))


_C._autograd = type(_C)("torch._C._autograd")
_C._nn = type(_C)("torch._C._nn")  # filled by nn.modules.module (_parse_to)
_C._autograd._unsafe_set_version_counter = _unsafe_set_version_counter

# the dispatcher's key types and guard (torchvision registers autocast kernels with them)
from ._ops import DispatchKey, DispatchKeySet, _ExcludeDispatchKeyGuard  # noqa: E402

_C.DispatchKey, _C.DispatchKeySet, _C._ExcludeDispatchKeyGuard = DispatchKey, DispatchKeySet, _ExcludeDispatchKeyGuard


def _log_api_usage_once(event):
    """torch._C._log_api_usage_once: PyTorch's usage logging, off unless a logger is installed; none here."""


from . import overrides as _overrides  # noqa: E402

_C._log_api_usage_once = _log_api_usage_once
# the __torch_function__ protocol's C names (overrides.py)
_C.DisableTorchFunctionSubclass, _C.DisableTorchFunction = (_overrides.DisableTorchFunctionSubclass,
                                                            _overrides.DisableTorchFunction)
_C._disabled_torch_function_impl = _overrides._disabled_torch_function_impl
_C._is_torch_function_enabled = _overrides._is_torch_function_enabled
_C._has_torch_function, _C._has_torch_function_unary, _C._has_torch_function_variadic = (
    _overrides.has_torch_function, _overrides.has_torch_function_unary, _overrides.has_torch_function_variadic)

from ._tensor import Tensor as _Tensor  # noqa: E402

# torch._C._TensorMeta is the metaclass of torch.Tensor (libraries annotate subclass types with it)
_C._TensorMeta = type(_Tensor)
