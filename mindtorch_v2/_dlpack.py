"""DLPack: zero-copy exchange of CPU tensors with numpy and any other DLPack library.

Export goes through numpy: a zero-copy ndarray over the tensor (which keeps the tensor alive)
makes the capsule, so the capsule's C-level destructor and deleter come from numpy (a capsule
destructor cannot be Python code: consumers may destroy an unused capsule with an exception
pending). bfloat16, which numpy lacks, is exported as int16 with the DLPack dtype set to kDLBfloat.
Import reads the DLPack structs through an ABI-mode cffi FFI (no C core change) and the capsule
through the CPython C API via ctypes; the tensor keeps the producer's managed tensor until the
last view of its storage dies, then calls its deleter.
"""
import ctypes
import enum

import cffi

from ._C import ffi, lib
from . import _dtype
from ._core import keep_alive, _KEEP_ALIVE
from ._dispatch import call

_ffi = cffi.FFI()
_ffi.cdef("""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct { void *data; DLDevice device; int32_t ndim; DLDataType dtype; int64_t *shape; int64_t *strides;
                 uint64_t byte_offset; } DLTensor;
typedef struct DLManagedTensor { DLTensor dl_tensor; void *manager_ctx;
                                 void (*deleter)(struct DLManagedTensor *); } DLManagedTensor;
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned { DLPackVersion version; void *manager_ctx;
                                          void (*deleter)(struct DLManagedTensorVersioned *); uint64_t flags;
                                          DLTensor dl_tensor; } DLManagedTensorVersioned;
""")

DLPACK_VERSION = (1, 3)  # what PyTorch 2.13 exports
_MAX_DIMS = 25


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# (DLDataTypeCode, bits) per dtype: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6
_CODES = {_dtype.bool: (6, 8), _dtype.uint8: (1, 8), _dtype.int8: (0, 8), _dtype.int16: (0, 16),
          _dtype.int32: (0, 32), _dtype.int64: (0, 64), _dtype.float16: (2, 16), _dtype.bfloat16: (4, 16),
          _dtype.float32: (2, 32), _dtype.float64: (2, 64)}
_DTYPES = {v: k for k, v in _CODES.items()}
_CODE_NAMES = {0: "kDLInt", 1: "kDLUInt", 2: "kDLFloat", 3: "kDLOpaqueHandle", 4: "kDLBfloat", 5: "kDLComplex",
               6: "kDLBool"}

# ---- the CPython capsule API through ctypes (PyDLL: calls keep the GIL) -------------------------
# Our own prototypes, not ctypes.pythonapi's shared function objects: other libraries (dill) set
# argtypes on those process-wide, which turned every capsule into an invalid one.
class _CapsuleAPI:
    def __init__(self):
        proto = ctypes.PYFUNCTYPE
        for fn, res, args in (("PyCapsule_IsValid", ctypes.c_int, (ctypes.c_void_p, ctypes.c_char_p)),
                              ("PyCapsule_GetPointer", ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_char_p)),
                              ("PyCapsule_SetName", ctypes.c_int, (ctypes.c_void_p, ctypes.c_char_p))):
            setattr(self, fn, proto(res, *args)((fn, ctypes.pythonapi)))


_api = _CapsuleAPI()

# capsule names: module constants, so the char * a capsule keeps stays valid
_NAME = b"dltensor"
_USED = b"used_dltensor"
_NAME_V = b"dltensor_versioned"
_USED_V = b"used_dltensor_versioned"
# ---- export --------------------------------------------------------------------------------------

def to_capsule(t, versioned=False, copy=None, dl_device=None):
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if t.device.type != "cpu":
        raise BufferError(f"Cannot pack tensors on {t.device.type}")
    if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
        raise BufferError(f"Can't export a cpu tensor to DLPack device {tuple(dl_device)}: only (kDLCPU, 0) "
                          "is available")
    if copy:
        t = t.clone()
    from ._interop import to_numpy
    bf16 = t.dtype is _dtype.bfloat16
    arr = to_numpy(t.view(_dtype.int16) if bf16 else t)
    capsule = arr.__dlpack__(max_version=(1, 0)) if versioned else arr.__dlpack__()
    if bf16:  # the same bits, named as DLPack's bfloat16
        name = _NAME_V if versioned else _NAME
        m = _ffi.cast("DLManagedTensorVersioned *" if versioned else "DLManagedTensor *",
                      _api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), name))
        m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits = _CODES[_dtype.bfloat16]
    return capsule


# ---- import --------------------------------------------------------------------------------------

class _Producer:
    """Holds an imported managed tensor; calls its deleter when the last view of the storage dies."""

    def __init__(self, m):
        self.m = m

    def __del__(self):
        m, self.m = self.m, None
        if m is not None and m.deleter != _ffi.NULL:
            m.deleter(m)


def from_capsule(capsule):
    if not isinstance(capsule, object) or type(capsule).__name__ != "PyCapsule":
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                           "only once, so you might have already constructed a tensor from it once.")
    cap = ctypes.c_void_p(id(capsule))
    if _api.PyCapsule_IsValid(cap, _NAME_V):
        name, used, kind = _NAME_V, _USED_V, "DLManagedTensorVersioned *"
    elif _api.PyCapsule_IsValid(cap, _NAME):
        name, used, kind = _NAME, _USED, "DLManagedTensor *"
    else:
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                           "only once, so you might have already constructed a tensor from it once.")
    m = _ffi.cast(kind, _api.PyCapsule_GetPointer(cap, name))
    if name == _NAME_V and m.version.major > DLPACK_VERSION[0]:
        raise BufferError(f"DLPack tensor has version {m.version.major}.{m.version.minor}, newer than the supported "
                          f"{DLPACK_VERSION[0]}.{DLPACK_VERSION[1]}")
    dl = m.dl_tensor
    if dl.device.device_type not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        raise RuntimeError(f"Unsupported device_type: {dl.device.device_type}: mindtorch_v2 only imports CPU tensors")
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or key not in _DTYPES:
        raise RuntimeError(f"Unsupported DLPack dtype: code {_CODE_NAMES.get(dl.dtype.code, dl.dtype.code)}, bits "
                           f"{dl.dtype.bits}, lanes {dl.dtype.lanes}")
    dtype = _DTYPES[key]
    ndim = dl.ndim
    if not 0 <= ndim <= _MAX_DIMS:
        raise RuntimeError(f"DLPack tensor has an unsupported number of dimensions: {ndim}")
    shape = [dl.shape[i] for i in range(ndim)]
    if dl.strides == _ffi.NULL:
        strides = []
        acc = 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
    else:
        strides = [dl.strides[i] for i in range(ndim)]
    if any(s < 0 for s in shape) or any(s < 0 for s in strides):
        raise RuntimeError(f"DLPack tensor with negative sizes or strides is not supported (sizes {shape}, strides "
                           f"{strides})")
    if 0 in shape:
        nbytes = 0
    else:
        nbytes = (1 + sum((n - 1) * s for n, s in zip(shape, strides))) * dtype.itemsize
    data = int(_ffi.cast("uintptr_t", dl.data)) + dl.byte_offset
    _api.PyCapsule_SetName(cap, used)  # consumed: the capsule's destructor leaves it to us
    deleter, ctx = keep_alive(_Producer(m))
    try:
        return call(lib.mt_from_blob, ffi.cast("void *", data), nbytes, ndim, shape, strides, 0, dtype._id,
                    deleter, ctx)
    except BaseException:
        _KEEP_ALIVE.pop(int(ffi.cast("uintptr_t", ctx)), None)
        raise


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """torch.from_dlpack: a tensor sharing memory with a DLPack producer (or a capsule)."""
    if hasattr(ext_tensor, "__dlpack__"):
        kwargs = {"max_version": (1, 0)}
        if copy is not None:
            kwargs["copy"] = copy
        ext_device = ext_tensor.__dlpack_device__()
        cross = False
        if device is not None:
            from ._device import device as _device
            dev = device if isinstance(device, _device) else _device(device)
            if dev.type not in ("cpu", "meta"):
                raise RuntimeError(f"device '{dev}' is not available: mindtorch_v2 runs on cpu and meta")
            target = (DLDeviceType.kDLCPU, 0)
            cross = dev.type != "cpu" or tuple(ext_device) != target
            if cross and copy is False:
                raise ValueError(f"cannot move DLPack tensor from device {tuple(ext_device)} to {dev} without "
                                 "copying. Set copy=None or copy=True.")
            if not cross:
                kwargs["dl_device"] = target
        capsule = None
        handled_copy = True
        for drop in (None, "max_version", "copy", "dl_device"):
            if drop is not None:
                kwargs.pop(drop, None)
                handled_copy = handled_copy and drop != "copy"
            try:
                capsule = ext_tensor.__dlpack__(**kwargs)
                break
            except TypeError:
                if drop == "dl_device":
                    raise
        t = from_capsule(capsule)
        if copy and not handled_copy and not cross:
            t = t.clone()
        if cross:
            t = t.to(device)
        return t
    if device is not None or copy is not None:
        raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
    return from_capsule(ext_tensor)


# ---- Tensor methods -----------------------------------------------------------------------------

def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if self.device.type == "cpu" and stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    versioned = max_version is not None and max_version[0] >= 1
    return to_capsule(self, versioned=versioned, copy=copy, dl_device=dl_device)


def __dlpack_device__(self):
    if self.device.type != "cpu":
        raise ValueError(f"Unknown device type {self.device.type} for Dlpack")
    return (DLDeviceType.kDLCPU, 0)


def to_dlpack(tensor):
    """torch.utils.dlpack.to_dlpack: an (unversioned) DLPack capsule sharing the tensor's memory."""
    return to_capsule(tensor)


METHODS = {"__dlpack__": __dlpack__, "__dlpack_device__": __dlpack_device__}
