"""torch.onnx.symbolic_opset11: the opset-11 symbolic functions, which run only inside an ONNX export
(not implemented): each name imports and raises NotImplementedError naming itself when called."""
from .._missing import missing_function


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return missing_function(f"torch.onnx.symbolic_opset11.{name}", why=" (no ONNX export)")
