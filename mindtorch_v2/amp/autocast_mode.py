"""torch.autocast / torch.amp.autocast.

CPU autocast is real: inside an enabled region the ops of PyTorch's CPU lists cast their inputs
(mindtorch_v2/_autocast.py holds the state and the policy). The other device types are not
available here and behave as PyTorch's does without them (warn and disable); `enabled=False`
regions switch casting off inside enabled ones, as transformers uses them.
"""
import functools
import threading
import warnings

from .. import _autocast as _ac

_AVAILABLE = ("cpu", "cuda", "xpu", "mps", "hpu", "mtia", "maia", "xla", "ipu", "privateuseone")
_state = threading.local()


def _dtypes():
    d = getattr(_state, "dtype", None)
    if d is None:
        from .. import bfloat16, float16
        d = _state.dtype = {"cpu": bfloat16, "mps": float16, "cuda": float16, "xpu": bfloat16, "hpu": bfloat16,
                            "mtia": bfloat16, "maia": bfloat16, "xla": bfloat16, "ipu": float16,
                            "privateuseone": float16}
    return d


def is_autocast_available(device_type):
    return device_type in _AVAILABLE


def _check_device(device_type):
    if device_type not in _AVAILABLE:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")


def is_autocast_enabled(device_type=None):
    """device_type None asks about CUDA (as PyTorch's legacy form): never enabled here."""
    if device_type is not None:
        _check_device(device_type)
    return device_type == "cpu" and _ac.cpu_enabled()


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # legacy one-argument form: set_autocast_enabled(enabled) for CUDA
        device_type, enabled = "cuda", device_type
    _check_device(device_type)
    if device_type == "cpu":
        _ac.set_cpu_enabled(enabled)


def get_autocast_dtype(device_type):
    _check_device(device_type)
    return _ac.cpu_dtype() if device_type == "cpu" else _dtypes()[device_type]


def set_autocast_dtype(device_type, dtype):
    _check_device(device_type)
    if device_type == "cpu":
        _ac.set_cpu_dtype(dtype)
    else:
        _dtypes()[device_type] = dtype


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def is_autocast_cpu_enabled():
    return _ac.cpu_enabled()


def set_autocast_cpu_enabled(enabled):
    warnings.warn("torch.set_autocast_cpu_enabled(enabled) is deprecated. Please use "
                  "torch.set_autocast_enabled('cpu', enabled) instead.", DeprecationWarning, stacklevel=2)
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    warnings.warn("torch.set_autocast_cpu_dtype(dtype) is deprecated. Please use "
                  "torch.set_autocast_dtype('cpu', dtype) instead.", DeprecationWarning, stacklevel=2)
    set_autocast_dtype("cpu", dtype)


def is_autocast_cache_enabled():
    return getattr(_state, "cache", True)


def set_autocast_cache_enabled(enabled):
    _state.cache = bool(enabled)


def clear_autocast_cache():
    pass


def autocast_increment_nesting():
    _state.nesting = getattr(_state, "nesting", 0) + 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting = getattr(_state, "nesting", 0) - 1
    return _state.nesting


class autocast:
    """`with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`, also a decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        from .. import bfloat16, float16
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        name = device_type.upper()
        if enabled:
            if device_type == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (bfloat16, float16):
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
            elif device_type != "cpu":
                warnings.warn(f"User provided device_type of '{device_type}', but it is not available. "
                              "Disabling", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self.device == "cpu":  # enabled=False inside an enabled region switches casting off
            self._prev = (_ac.cpu_enabled(), _ac.cpu_dtype())
            _ac.set_cpu_dtype(self.fast_dtype)
            _ac.set_cpu_enabled(self._enabled)
        self._prev_cache = is_autocast_cache_enabled()
        set_autocast_cache_enabled(self._cache_enabled)
        autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_cache_enabled(self._prev_cache)
        if self.device == "cpu":
            _ac.set_cpu_enabled(self._prev[0])
            _ac.set_cpu_dtype(self._prev[1])
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        decorate_autocast.__script_unsupported = "@autocast() decorator is not supported in script mode"
        return decorate_autocast


def _cast(value, dtype):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() and value.dtype.itemsize < 8 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom autograd Function's forward: inside an enabled region with cast_inputs,
    the floating tensor arguments are cast to it and forward runs with autocast off (PyTorch's)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):  # backward runs with the autocast state forward saw
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
