"""torch.cuda on a library without CUDA: queries answer as a CPU-only PyTorch build does; anything
that needs a device raises PyTorch's own AssertionError."""
from . import amp  # noqa: F401

_NO_CUDA = "Torch not compiled with CUDA enabled"


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def _lazy_init():
    raise AssertionError(_NO_CUDA)


init = _lazy_init
current_device = get_device_capability = get_device_properties = get_device_name = synchronize = _no_cuda
default_stream = current_stream = get_rng_state = ipc_collect = mem_get_info = reset_peak_memory_stats = _no_cuda
reset_max_memory_allocated = reset_max_memory_cached = reset_accumulated_memory_stats = memory_stats = _no_cuda
max_memory_reserved = power_draw = utilization = temperature = set_rng_state = _no_cuda


def set_device(device):
    from .._device import device as _device
    d = _device(device) if isinstance(device, str) else device
    if isinstance(d, _device) and d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    raise AssertionError(_NO_CUDA)


def empty_cache():
    pass  # nothing cached without CUDA (PyTorch: a no-op until CUDA is initialised)


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


memory_cached = memory_reserved


def manual_seed(seed):
    pass  # PyTorch queues the seed for lazy CUDA init, which never happens here


manual_seed_all = manual_seed


def seed():
    pass


seed_all = seed


def get_rng_state_all():
    return []


def set_rng_state_all(new_states):
    pass


class device:
    """Context manager selecting a CUDA device: a no-op for None/-1, PyTorch's error otherwise."""

    def __init__(self, device):
        from .._device import device as _device
        if isinstance(device, _device):
            device = device.index if device.index is not None else -1
        self.idx = -1 if device is None else device

    def __enter__(self):
        if self.idx != -1:
            raise AssertionError(_NO_CUDA)

    def __exit__(self, *exc):
        return False


class device_of(device):
    def __init__(self, obj):
        super().__init__(-1)


class Stream:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class StreamContext:
    """`with torch.cuda.stream(s)`: a no-op for None, as in PyTorch."""

    def __init__(self, stream):
        self.stream = stream
        if stream is not None:
            raise AssertionError(_NO_CUDA)

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


from . import graphs  # noqa: E402
from .graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables  # noqa: E402,F401
from .._core import OutOfMemoryError  # noqa: E402,F401  (torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)
