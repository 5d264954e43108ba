"""torch.fx.passes.shape_prop: run a GraphModule and record each node's tensor metadata."""
from typing import Any, NamedTuple, Optional

from .._compatibility import compatibility
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


@compatibility(is_backward_compatible=True)
class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Optional[Any]
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    import mindtorch_v2 as torch
    memory_format = None
    if include_contiguity:
        formats = [torch.contiguous_format, torch.channels_last, getattr(torch, "channels_last_3d", None)]
        memory_format = next((f for f in formats if f is not None and result.is_contiguous(memory_format=f)), None)
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          result.is_quantized, {})


@compatibility(is_backward_compatible=True)
class ShapeProp(Interpreter):
    """Runs the module on example inputs (propagate) and stores in each node's meta "tensor_meta" (a
    TensorMetadata, or the structure of them for a node returning several tensors) and "type"."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        if fake_mode is not None:
            raise NotImplementedError("torch.fx.passes.shape_prop.ShapeProp: fake_mode is not implemented")
        self.fake_mode = None
        self.fake_module = None
        self.real_module = self.module

    def run_node(self, n):
        import mindtorch_v2 as torch
        result = super().run_node(n)
        found_tensor = False

        def extract_tensor_meta(obj):
            nonlocal found_tensor
            if isinstance(obj, torch.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract_tensor_meta)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on args, recording the metadata; returns its output."""
        return super().run(*args)
