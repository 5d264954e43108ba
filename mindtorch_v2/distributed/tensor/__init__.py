"""torch.distributed.tensor: the DTensor type exists so that `isinstance(x, DTensor)` answers (no
tensor here is one: there is no distributed backend); making a DTensor, or distributing a tensor
or module, raises. Libraries import DTensor on every tensor they save (huggingface_hub,
safetensors): without this module each call was a failed import, ~0.2 ms."""
from ..._tensor import Tensor
from .. import _unavailable
from .placement_types import Partial, Placement, Replicate, Shard  # noqa: F401


class DTensor(Tensor):
    def __new__(cls, *args, **kwargs):
        raise NotImplementedError("torch.distributed.tensor.DTensor is not implemented (no DTensor support)")


distribute_tensor = _unavailable("tensor.distribute_tensor")
distribute_module = _unavailable("tensor.distribute_module")
