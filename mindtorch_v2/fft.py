"""torch.fft: the real-valued helpers (fftfreq, rfftfreq, fftshift, ifftshift). The transforms are not
written yet: they import (libraries name them at module level) and raise NotImplementedError naming
themselves when called."""
import math

from ._missing import missing_function
from ._tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "Tensor"]

for _name in __all__[:14] + ["hfft2", "ihfft2", "hfftn", "ihfftn"]:
    globals()[_name] = missing_function(f"torch.fft.{_name}", " (the FFT transforms are not implemented yet)")


def _freq(name, n, d, count, dtype, device, requires_grad, out):
    """PyTorch's kernel: an arange of the sample indices (negative ones wrapped to the right), times 1/(n*d)."""
    from . import arange, get_default_dtype
    if dtype is None:  # out= computes in out's dtype (PyTorch's fft_fftfreq_out)
        dtype = get_default_dtype() if out is None else out.dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    result = arange(count, dtype=dtype, device=device)
    if name == "fftfreq":
        result[(n + 1) // 2:] = arange(-(n // 2), 0, dtype=dtype)
    result.mul_(1.0 / (n * d) if n * d else math.copysign(math.inf, n * d))
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result.requires_grad_(requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _freq("fftfreq", n, d, n, dtype, device, requires_grad, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _freq("rfftfreq", n, d, n // 2 + 1, dtype, device, requires_grad, out)


def _shift(input, dim, name, half):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return input.roll([half(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    return _shift(input, dim, "fft_fftshift", lambda s: s // 2)


def ifftshift(input, dim=None):
    return _shift(input, dim, "fft_ifftshift", lambda s: (s + 1) // 2)
