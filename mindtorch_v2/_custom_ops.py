"""torch._custom_ops: the older custom-op API, kept in PyTorch for its callers (torchvision imports it for
`get_ctx`). The parts over torch.library are torch.library's own."""
from ._missing import missing_function
from .library import get_ctx, impl_abstract

__all__ = ["custom_op", "impl", "impl_abstract", "get_ctx", "impl_save_for_backward", "impl_backward"]

_WHY = " (the torch._custom_ops API; use torch.library.custom_op)"
custom_op = missing_function("torch._custom_ops.custom_op", why=_WHY)
impl = missing_function("torch._custom_ops.impl", why=_WHY)
impl_save_for_backward = missing_function("torch._custom_ops.impl_save_for_backward", why=_WHY)
impl_backward = missing_function("torch._custom_ops.impl_backward", why=_WHY)
