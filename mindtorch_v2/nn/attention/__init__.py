"""torch.nn.attention: choosing SDPA backends. mindtorch_v2's scaled_dot_product_attention has one
CPU implementation (PyTorch's math path), so the chosen set is recorded and MATH is what runs."""
import contextlib
import enum

from . import flex_attention  # noqa: F401


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_enabled = [set(SDPBackend) - {SDPBackend.ERROR}]


def _cur_sdpa_kernel_backends(with_priority=False):
    return [b for b in SDPBackend if b in _enabled[0]]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Restrict scaled_dot_product_attention to `backends` inside the block."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple, set)) or not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances")
    prev = _enabled[0]
    _enabled[0] = set(backends)
    try:
        yield {}
    finally:
        _enabled[0] = prev


class WARN_FOR_UNFUSED_KERNELS:
    pass
