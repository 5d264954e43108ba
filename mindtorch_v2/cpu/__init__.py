"""torch.cpu: PyTorch 2.13's CPU device module (one device, streams that are no-ops, as PyTorch's), and the
CPU's capabilities read from the operating system (PyTorch reads them with its cpuinfo library)."""
import os
import platform
from contextlib import AbstractContextManager
from functools import lru_cache
from types import MappingProxyType

from . import amp  # noqa: F401

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event", "get_capabilities"]

# PyTorch's x86 capability names -> the Linux /proc/cpuinfo flag for each
_X86_FLAGS = {
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4_1": "sse4_1", "sse4_2": "sse4_2",
    "sse4a": "sse4a", "avx": "avx", "avx2": "avx2", "fma3": "fma", "fma4": "fma4", "f16c": "f16c",
    "popcnt": "popcnt", "lzcnt": "abm", "bmi": "bmi1", "bmi2": "bmi2", "aes": "aes", "sha": "sha_ni",
    "clflush": "clflush", "clflushopt": "clflushopt", "clwb": "clwb", "avx512_f": "avx512f",
    "avx512_cd": "avx512cd", "avx512_dq": "avx512dq", "avx512_bw": "avx512bw", "avx512_vl": "avx512vl",
    "avx512_ifma": "avx512ifma", "avx512_vbmi": "avx512vbmi", "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg", "avx512_vpopcntdq": "avx512_vpopcntdq", "avx512_vnni": "avx512_vnni",
    "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16", "avx512_4vnniw": "avx512_4vnniw",
    "avx512_4fmaps": "avx512_4fmaps", "avx512_vp2intersect": "avx512_vp2intersect", "avx_vnni": "avx_vnni",
    "avx_vnni_int8": "avx_vnni_int8", "avx_vnni_int16": "avx_vnni_int16", "avx_ne_convert": "avx_ne_convert",
    "amx_tile": "amx_tile", "amx_int8": "amx_int8", "amx_bf16": "amx_bf16", "amx_fp16": "amx_fp16",
    "avx10_1": "avx10_1", "avx10_2": "avx10_2",
}


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _cache_size(level, kind):
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in sorted(os.listdir(base)) if os.path.isdir(base) else ():
        d = os.path.join(base, index)
        if _read(d + "/level").strip() == str(level) and _read(d + "/type").strip() in kind:
            size = _read(d + "/size").strip()
            return int(size[:-1]) * 1024 if size.endswith("K") else int(size or 0)
    return 0


@lru_cache(None)
def get_capabilities():
    info = _read("/proc/cpuinfo")
    fields = [dict(kv.split(":", 1) for kv in block.split("\n") if ":" in kv) for block in info.split("\n\n")
              if block.strip()]
    fields = [{k.strip(): v.strip() for k, v in f.items()} for f in fields]
    first = fields[0] if fields else {}
    caps = {}
    if platform.machine() in ("x86_64", "AMD64", "i686"):
        flags = set(first.get("flags", "").split())
        caps = {name: flag in flags for name, flag in _X86_FLAGS.items()}
    name = first.get("model name", platform.processor())
    caps["cpu_name"] = " ".join(w for w in name.replace("(R)", "").replace("(TM)", "").replace("(tm)", "").split()
                                if w not in ("CPU", "Processor", "@"))
    caps["architecture"] = platform.machine()
    caps["num_logical_cores"] = os.cpu_count()
    cores = {(f.get("physical id"), f.get("core id")) for f in fields}
    caps["num_physical_cores"] = len(cores) if cores else os.cpu_count()
    caps["num_sockets"] = max(len({f.get("physical id") for f in fields}), 1)
    caps["l1d_cache_size"] = _cache_size(1, ("Data",))
    caps["l2_cache_size"] = _cache_size(2, ("Unified", "Data"))
    return MappingProxyType(caps)


def is_available():
    """The CPU is always available."""
    return True


def synchronize(device=None):
    """Waits for all kernels in all streams on the CPU device to complete: CPU work is synchronous."""


class Stream:
    """A no-op CPU stream, as PyTorch's."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device=None):
    """The stream selected by the innermost open stream() context (the default one outside any)."""
    return _current_stream


class StreamContext(AbstractContextManager):
    """Makes stream the current one while open (None leaves the current stream alone)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def _select(self, entering):
        global _current_stream
        if self.stream is not None:
            if entering:
                self.prev_stream = _current_stream
            _current_stream = self.stream if entering else self.prev_stream

    def __enter__(self):
        self._select(True)

    def __exit__(self, type, value, traceback):
        self._select(False)


def stream(stream):
    """A StreamContext for stream."""
    return StreamContext(stream)


def device_count():
    return 1


def set_device(device):
    """Sets the current device: on CPU there is only one, so this does nothing (as in PyTorch)."""


def current_device():
    return "cpu"


def is_initialized():
    return True
