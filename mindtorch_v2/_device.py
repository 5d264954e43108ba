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
        _state.stack.append(getattr(_state, "default", None))
        _state.default = self
        return self

    def __exit__(self, *exc):
        _state.default = _state.stack.pop()
        return False


CPU = device("cpu")
META = device("meta")
BY_CORE_ID = {lib.MT_CPU: CPU, lib.MT_META: META}


_state = threading.local()  # PyTorch's default device is per thread as well


def get_default_device():
    return getattr(_state, "default", None) or CPU


def set_default_device(dev):
    _state.default = None if dev is None else device(dev)


def core_id(dev):
    """The core's device id for a device-like argument (None: the default device)."""
    if dev is None:
        dev = getattr(_state, "default", None)
        if dev is None:
            return lib.MT_CPU
    if not isinstance(dev, device):
        dev = device(dev)
    try:
        return _CORE_ID[dev.type]
    except KeyError:
        raise RuntimeError(f"device '{dev}' is not available: mindtorch_v2 runs on cpu and meta "
                           "(Torch not compiled with CUDA enabled)") from None
