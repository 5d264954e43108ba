"""CPU autocast: the thread's state and PyTorch's CPU autocast policy as casts the op wrappers apply
to their tensor arguments (torch/csrc/autograd autocast_mode.cpp's CPU lists): lower-precision ops
(matmuls, linear, convolutions, attention, prelu) run in the autocast dtype, the fp32 ops (losses,
prod) in float32. float64 tensors are never cast, as PyTorch's. The wrappers test ACTIVE first:
no enabled region anywhere costs one list read."""
import threading

ACTIVE = [0]  # enabled CPU autocast regions in all threads
_state = threading.local()


def cpu_enabled():
    return getattr(_state, "on", False)


def cpu_dtype():
    d = getattr(_state, "dtype", None)
    if d is None:
        from ._dtype import bfloat16
        d = _state.dtype = bfloat16
    return d


def set_cpu_dtype(dtype):
    _state.dtype = dtype


def set_cpu_enabled(on):
    on = bool(on)
    if on != cpu_enabled():
        ACTIVE[0] += 1 if on else -1
    _state.on = on


def _cast_all(args, want, eligible):
    from ._tensor import Tensor
    return tuple(a.to(want) if isinstance(a, Tensor) and eligible(a.dtype) and a.dtype != want else a for a in args)


def _low(d):
    return d.is_floating_point and d.itemsize < 8


def lower(*args):
    """the lower-precision ops' tensor arguments, in the autocast dtype while enabled"""
    if not cpu_enabled():
        return args
    return _cast_all(args, cpu_dtype(), _low)


def fp32(*args):
    """the fp32 ops' tensor arguments: float16/bfloat16 ones in float32 while enabled"""
    if not cpu_enabled():
        return args
    from ._dtype import float32
    return _cast_all(args, float32, lambda d: _low(d) and d.itemsize < 4)
