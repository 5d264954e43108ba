"""torch.cuda.amp (deprecated in PyTorch): autocast for device 'cuda', GradScaler."""
import functools

from ..amp.autocast_mode import autocast as _autocast
from ..amp.grad_scaler import GradScaler as _GradScaler


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from .. import float16
        super().__init__("cuda", dtype=float16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    from ..amp import custom_fwd as f
    return f(fwd, device_type="cuda", cast_inputs=cast_inputs) if fwd is not None else \
        functools.partial(f, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    from ..amp import custom_bwd as f
    return f(bwd, device_type="cuda") if bwd is not None else functools.partial(f, device_type="cuda")
