"""torch.ao.quantization: out of scope (no quantized tensors). Stubs (QuantStub, DeQuantStub) are
nn.Module subclasses for class definitions; constructing one, or calling any function here, raises
NotImplementedError naming it."""
from ..._missing import missing_class, missing_function
from ...nn import Module

_WHY = " (quantization is out of scope for mindtorch_v2)"
_CLASSES = ("QuantStub", "DeQuantStub", "QuantWrapper", "FakeQuantize", "ObserverBase", "QConfig", "QConfigMapping")

for _name in _CLASSES:
    globals()[_name] = missing_class(f"torch.ao.quantization.{_name}", Module, _WHY)


def __getattr__(name):  # functions and observers: any other public name
    if name.startswith("_"):
        raise AttributeError(name)
    return missing_function(f"torch.ao.quantization.{name}", why=_WHY)
