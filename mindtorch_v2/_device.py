"""torch.device, and the default device factories use (set_default_device, `with device(...)`)."""
import threading

from ._C import lib

_KNOWN = ("cpu", "meta", "cuda", "mps", "xpu", "hip", "npu", "xla", "hpu", "privateuseone")
_CORE_ID = {"cpu": lib.MT_CPU, "meta": lib.MT_META}


class device:
    __slots__ = ("type", "index")

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Expected a string device type, not an integer (cuda is not available)")
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type.__class__.__name__})")
        name, _, idx = type.partition(":")
        if name not in _KNOWN:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
                f"xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device "
                f"string: {type}")
        if idx:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: " + type)
            index = int(idx)
        self = object.__new__(cls)
        self.type = name
        self.index = index
        return self

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # a string is never equal, as in PyTorch (device("cpu") == "cpu" is False)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    # `with torch.device("meta"):` makes it the default device of factories in this thread
    def __enter__(self):
        _state.stack = getattr(_state, "stack", [])
        _state.stack.append(_state.default)
        _state.default = self
        return self

    def __exit__(self, *exc):
        _state.default = _state.stack.pop()
        return False


CPU = device("cpu")
META = device("meta")
BY_CORE_ID = {lib.MT_CPU: CPU, lib.MT_META: META}


class _DeviceState(threading.local):
    """PyTorch's default device is per thread as well; a class default spares each lookup a missed attribute."""
    default = None


_state = _DeviceState()


def get_default_device():
    return _state.default or CPU


def set_default_device(dev):
    _state.default = None if dev is None else device(dev)


def core_id(dev):
    """The core's device id for a device-like argument (None: the default device)."""
    if dev is None:
        dev = _state.default
        if dev is None:
            return lib.MT_CPU
    if not isinstance(dev, device):
        dev = device(dev)
    try:
        return _CORE_ID[dev.type]
    except KeyError:
        raise RuntimeError(f"device '{dev}' is not available: mindtorch_v2 runs on cpu and meta "
                           "(Torch not compiled with CUDA enabled)") from None


def _stream_device(dev):
    """The device of a torch.Stream/torch.Event: cpu or meta, without an index (as PyTorch keeps it)."""
    if isinstance(dev, int) and not isinstance(dev, bool):  # an index names an accelerator
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if dev is not None and not isinstance(dev, (str, device)):
        raise TypeError(f"Stream(): argument 'device' must be torch.device, not {type(dev).__name__}")
    dev = get_default_device() if dev is None else device(dev)
    if dev.type not in _CORE_ID:
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    return device(dev.type)


_DEVICE_TYPE_ENUM = {"cpu": 0, "meta": 14}  # c10::DeviceType, which Stream.device_type reports


class Stream:
    """torch.Stream: the one stream of a synchronous device (stream_id 0; cpu and meta run every op
    in order, so waiting never blocks)."""
    __slots__ = ("device",)

    def __init__(self, device=None, *, priority=0):
        self.device = _stream_device(device)

    device_type = property(lambda self: _DEVICE_TYPE_ENUM[self.device.type])
    device_index = property(lambda self: -1)
    stream_id = property(lambda self: 0)

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def wait_stream(self, stream):  # PyTorch waits through an event recorded on `stream`
        stream.record_event()

    def is_capturing(self):
        return False

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device

    def __hash__(self):
        return hash((self.device, 0))

    def __repr__(self):
        return f"torch.Stream device_type={self.device.type}, device_index=-1, stream_id=0"


class Event:
    """torch.Event: on cpu it can be made and queried (nothing is pending) but not recorded, as in PyTorch."""
    __slots__ = ("device", "_timing")

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _stream_device(device)
        self._timing = bool(enable_timing)

    event_id = property(lambda self: 0)

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def record(self, stream=None):
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def elapsed_time(self, end_event):
        if not (self._timing and end_event._timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")  # record() cannot

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index=-1, "
                f"event_flag={int(self._timing)}, event_id=0")
