"""Names libraries read from torch._C at import time (torch._C is the core's cffi module here):
TorchScript/ONNX graph types used in annotations of ONNX `symbolic` functions. They are types only:
mindtorch_v2 has no TorchScript graphs, so building one raises NotImplementedError."""
from . import _C


def _graph_type(name):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"torch._C.{name} is not implemented (mindtorch_v2 has no TorchScript graphs)")
    return type(name, (), {"__init__": __init__, "__module__": "torch._C"})


for _name in ("Graph", "Value", "Node", "Block"):
    setattr(_C, _name, _graph_type(_name))

from ._core import LinAlgError as _LinAlgError  # noqa: E402

_C._LinAlgError = _LinAlgError
