"""torch._dynamo.utils: the helper libraries import from here."""
from . import is_dynamo_supported


def is_compile_supported(device_type):
    """Whether torch.compile supports a device type: PyTorch's rule (cpu follows dynamo; no Triton here, so
    no GPU device type)."""
    from .._device import device
    return is_dynamo_supported() if device(device_type).type == "cpu" else False
