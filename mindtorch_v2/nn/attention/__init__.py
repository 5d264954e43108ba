"""torch.nn.attention: choosing SDPA backends. As in PyTorch, sdpa_kernel sets the global flags of
torch.backends.cuda (enable_flash_sdp, enable_math_sdp, ...) for the block; on CPU FLASH_ATTENTION
(the fused kernel) and MATH are the backends F.scaled_dot_product_attention can run."""
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


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash", SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
         SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.OVERRIDEABLE: "overrideable"}


def _cur_sdpa_kernel_backends(with_priority=False):
    from ...backends.cuda import _sdp
    return [b for b in SDPBackend if b in _FLAG and _sdp[_FLAG[b]]]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Restrict scaled_dot_product_attention to `backends` inside the block."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple, set)) or not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances")
    from ...backends.cuda import _sdp
    prev = dict(_sdp)
    _sdp.update({flag: b in backends for b, flag in _FLAG.items()})
    try:
        yield {}
    finally:
        _sdp.update(prev)


class WARN_FOR_UNFUSED_KERNELS:
    pass
