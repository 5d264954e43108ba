"""The one door to the C core: the cffi module, status checking, handle wrapping."""
import functools

from ._C import ffi, lib

NULL = ffi.NULL

class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix factorisation failed (singular, not positive-definite...)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "torch._C"

class OutOfMemoryError(RuntimeError):
    """Exception raised when device is out of memory"""


OutOfMemoryError.__module__ = "torch"  # torch.OutOfMemoryError, also torch.cuda's; a CPU allocation that
# fails raises RuntimeError, as in PyTorch

_EXCEPTIONS = {
    lib.MT_ERR_RUNTIME: RuntimeError,
    lib.MT_ERR_VALUE: ValueError,
    lib.MT_ERR_TYPE: TypeError,
    lib.MT_ERR_INDEX: IndexError,
    lib.MT_ERR_NOT_IMPLEMENTED: NotImplementedError,
    lib.MT_ERR_OOM: RuntimeError,
    lib.MT_ERR_LINALG: LinAlgError,
}


def raise_status(status):
    """Raise the Python exception for a failed core call (status < 0); one a Python callback
    raised during the call (saved_tensors_hooks) comes out as itself."""
    from .autograd import _callback
    exc = _callback.take_pending()
    if exc is not None:
        raise exc
    message = ffi.string(lib.mt_last_error()).decode("utf-8", "replace")
    raise _EXCEPTIONS.get(status, RuntimeError)(message)


def check(status):
    if status:
        raise_status(status)


def rename_grad_fn(h, name):
    """Give the node h just recorded PyTorch's name for the overload called (name: bytes); a
    tensor without grad_fn is left alone (checked in C: no Python node object is made)."""
    if lib.mt_tensor_grad_fn_name(h):
        check(lib.mt_tensor_rename_grad_fn(h, name))


# A fresh `mt_tensor **` for a call to write its result into (a partial: as fast as ffi.new itself,
# which matters on the per-op path).
new_out = functools.partial(ffi.new, "mt_tensor **")


def optional_handle(t):
    """The core handle of an optional Tensor argument: NULL for None."""
    return NULL if t is None else t._h


def dtype_id(dtype, default=-1, fn=None):
    """The core's id of an optional dtype argument (default for None), with PyTorch's TypeError for a
    non-dtype (fn: the function named in it)."""
    if dtype is None:
        return default
    from . import _dtype
    if isinstance(dtype, type):  # PyTorch's argument parser takes float, int and bool as dtypes
        dtype = _dtype.PYTHON_TYPES.get(dtype, dtype)
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}" if fn
                        else f"dtype must be torch.dtype, not {type(dtype).__name__}")
    return dtype._id


def int_array(values):
    return ffi.new("int64_t[]", values)


# External memory (numpy arrays, buffers) kept alive until the core lets go.
_KEEP_ALIVE = {}


@ffi.def_extern()
def mt_py_release_handle(ctx):
    _KEEP_ALIVE.pop(int(ffi.cast("uintptr_t", ctx)), None)


def keep_alive(obj):
    """Return (deleter, ctx) for mt_from_blob that hold obj until the storage dies."""
    handle = ffi.new_handle(obj)
    _KEEP_ALIVE[int(ffi.cast("uintptr_t", handle))] = handle
    return lib.mt_py_release_handle, handle
