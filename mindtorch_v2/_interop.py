"""numpy interop: zero-copy both ways (numpy is a format here, never a compute path)."""
from ._C import ffi, lib
from . import _dtype
from ._core import keep_alive
from ._dispatch import call

_NP_NAMES = {"bool": _dtype.bool, "uint8": _dtype.uint8, "int8": _dtype.int8, "int16": _dtype.int16,
             "int32": _dtype.int32, "int64": _dtype.int64, "float16": _dtype.float16,
             "float32": _dtype.float32, "float64": _dtype.float64, "complex64": _dtype.complex64,
             "complex128": _dtype.complex128}
_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
            "float16": "<f2", "float32": "<f4", "float64": "<f8", "complex64": "<c8", "complex128": "<c16"}


class _ArrayView:
    """Exposes a tensor's memory through __array_interface__ and keeps the tensor alive."""

    def __init__(self, t):
        self.tensor = t
        dt = t.dtype
        size = dt.itemsize
        self.__array_interface__ = {
            "data": (t.data_ptr(), False),
            "shape": tuple(t.shape),
            "strides": tuple(s * size for s in t.stride()),
            "typestr": _TYPESTR[dt._name],
            "version": 3,
        }


def to_numpy(t, force=False):
    import numpy as np
    if t.is_meta:
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                        "host memory first.")
    if t.requires_grad:
        if not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        t = t.detach()
    name = t.dtype._name
    if name not in _TYPESTR:
        raise TypeError(f"Got unsupported ScalarType {_dtype.scalar_name(t)}")
    if t.numel() == 0:  # PyTorch hands out empty arrays with zero strides
        return np.lib.stride_tricks.as_strided(np.empty(0, _TYPESTR[name]), tuple(t.shape), (0,) * t.dim())
    return np.asarray(_ArrayView(t))


def from_numpy(a):
    import numpy as np
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    name = a.dtype.name
    if name not in _NP_NAMES:
        raise TypeError(f"can't convert np.ndarray of type numpy.{a.dtype.type.__name__}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                        "uint64, uint32, uint16, uint8, and bool.")
    if not a.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    dt = _NP_NAMES[name]
    size = dt.itemsize
    if any(s < 0 for s in a.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with "
                         "negative strides are not currently supported. (You can probably work around "
                         "this by making a copy of your array  with array.copy().) ")
    if any(s % size for s in a.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the "
                         "numpy array to reallocate the memory.")
    strides = [s // size for s in a.strides]
    nbytes = 0 if a.size == 0 else (sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + size)
    deleter, ctx = keep_alive(a)
    ptr = ffi.cast("void *", a.__array_interface__["data"][0])
    return call(lib.mt_from_blob, ptr, nbytes, a.ndim, list(a.shape), strides, 0, dt._id, deleter, ctx)


def from_numpy_copy(a):
    import numpy as np
    t = from_numpy(np.ascontiguousarray(a))
    return t.clone()
