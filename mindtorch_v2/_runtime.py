"""torch.* functions about the runtime and plain queries on tensors: threads, matmul precision,
denormals, warnings, the default tensor type, anomaly mode, printing, and the type/size predicates."""
import builtins
import warnings

from ._C import lib
from ._dlpack import to_dlpack
from ._tensor import Tensor
from ._tensor_str import set_printoptions


def set_num_threads(n):
    if not isinstance(n, builtins.int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    lib.mt_set_num_threads(n)


def get_num_threads():
    return lib.mt_get_num_threads()


def _threads_from_environment():
    """PyTorch's start-up rule for the intra-op threads: MKL_NUM_THREADS, else OMP_NUM_THREADS, when it
    is a positive integer (anything else is ignored), at most the default (one per core); torchrun sets
    OMP_NUM_THREADS=1 for its workers."""
    import os
    for name in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        try:
            n = builtins.int(os.environ.get(name, ""))
        except ValueError:
            continue
        if n > 0:
            lib.mt_set_num_threads(builtins.min(n, lib.mt_get_num_threads()))
            return


_threads_from_environment()


def _find_mkl():
    """libmkl_rt of PyPI's `mkl` package (its files go to the environment's lib/), the FFT and LAPACK
    library of PyTorch's x86 builds: the core opens it at the first transform (else FFTW) and at the first
    QR, SVD, eigh or gels (else OpenBLAS's LAPACK). MINDTORCH_LAPACK=openblas keeps LAPACK on OpenBLAS
    (docs/ARCHITECTURE.md)."""
    import os
    import sys
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        for version in (3, 2):
            path = os.path.join(prefix, "lib", f"libmkl_rt.so.{version}")
            if os.path.exists(path):
                lib.mt_fft_use_mkl(path.encode())
                if os.environ.get("MINDTORCH_LAPACK", "").lower() != "openblas":
                    lib.mt_lapack_use_mkl(path.encode())
                return path
    return None


mkl_path = _find_mkl()


# The inter-op pool runs independent ops side by side (TorchScript's fork); mindtorch_v2 has no such
# scheduler, so the setting is kept for the API and changes nothing.
_interop_threads = [None]


def init_num_threads():
    """PyTorch sets up its OpenMP/MKL threads here; our pool starts its workers on first use."""


def get_device_module(device=None):
    """torch.<type> of a device (a torch.device or string); without one, the current accelerator's: CPU"""
    from ._device import device as device_type
    if isinstance(device, device_type):
        name = device.type
    elif isinstance(device, str):
        name = device_type(device).type
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    import mindtorch_v2
    module = getattr(mindtorch_v2, name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return module


def set_num_interop_threads(n):
    if not isinstance(n, builtins.int) or n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _interop_threads[0] = n


def get_num_interop_threads():
    return _interop_threads[0] or lib.mt_get_num_threads()


# float32 matmul precision: "high"/"medium" permit TF32 or bf16 internally. The CPU GEMM always
# computes in full float32, which every setting allows.
_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


def set_flush_denormal(mode):
    """False: flush-to-zero is not supported (the core's worker threads keep IEEE denormals), which
    is PyTorch's answer on a CPU without it."""
    return False


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _assert(condition, message):
    """Python's assert as a function, so that symbolic tracing can record it."""
    assert condition, message


def is_storage(obj):
    from .storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__") or hasattr(obj, "__name__"):
        name = getattr(obj, "__qualname__", None) or obj.__name__
    else:  # an instance: its class's names
        module, name = type(obj).__module__ or "", type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def is_floating_point(input):
    return input.dtype.is_floating_point


def numel(input):
    return input.numel()


def is_nonzero(input):
    return Tensor.__bool__(input)  # the same errors for no value and for several


def is_same_size(input, other):
    return input.shape == other.shape


_warn_always = False
_warned_once = set()


def set_warn_always(b, /):
    global _warn_always
    if type(b) is not builtins.bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always = b


def is_warn_always_enabled():
    return _warn_always


def warn_once(message, category=UserWarning, stacklevel=3):
    """PyTorch's TORCH_WARN_ONCE: once per process and message, or every time under set_warn_always(True)."""
    if _warn_always or message not in _warned_once:
        _warned_once.add(message)
        warnings.warn(message, category, stacklevel=stacklevel)


def set_default_tensor_type(t, /):
    """The default dtype from a legacy floating tensor type (torch.DoubleTensor) or its name."""
    from . import _legacy_types
    if isinstance(t, str):
        import importlib
        parts = t.split(".")
        obj = importlib.import_module(__package__) if parts[0] == "torch" else __import__(parts[0])
        if parts[:2] == ["torch", "cuda"]:
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        for part in parts[1:]:
            obj = getattr(obj, part)
        t = obj
    if not isinstance(t, _legacy_types.tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if t.is_sparse:
        raise TypeError("only dense types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() "
              "and torch.set_default_device() as alternatives.")
    from ._dtype import set_default_dtype
    set_default_dtype(t.dtype)


def set_anomaly_enabled(enabled, check_nan=True):
    from .autograd import anomaly_mode
    for pos, (name, v) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if type(v) is not builtins.bool:
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {pos}) must be bool, "
                            f"not {type(v).__name__}")
    anomaly_mode._set(enabled, check_nan)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-D tensor of size elements over a mapping of the file (shared: writes reach the file)."""
    from . import _creation, _dtype
    from .storage import UntypedStorage
    dtype = dtype or _dtype.get_default_dtype()
    storage = UntypedStorage.from_file(filename, builtins.bool(shared), size * dtype.itemsize)
    t = _creation.empty(0, dtype=dtype).set_(storage, 0, (size,), (1,))
    return t.requires_grad_() if requires_grad else t


FUNCTIONS = {
    "set_warn_always": set_warn_always, "is_warn_always_enabled": is_warn_always_enabled,
    "set_default_tensor_type": set_default_tensor_type, "set_anomaly_enabled": set_anomaly_enabled,
    "from_file": from_file, "set_printoptions": set_printoptions, "to_dlpack": to_dlpack,
    "set_num_threads": set_num_threads, "get_num_threads": get_num_threads, "init_num_threads": init_num_threads,
    "get_device_module": get_device_module,
    "set_num_interop_threads": set_num_interop_threads, "get_num_interop_threads": get_num_interop_threads,
    "set_float32_matmul_precision": set_float32_matmul_precision,
    "get_float32_matmul_precision": get_float32_matmul_precision, "set_flush_denormal": set_flush_denormal,
    "is_tensor": is_tensor, "_assert": _assert, "is_storage": is_storage, "typename": typename, "is_floating_point": is_floating_point,
    "numel": numel, "is_nonzero": is_nonzero, "is_same_size": is_same_size,
    "is_signed": Tensor.is_signed, "is_inference": Tensor.is_inference, "get_device": Tensor.get_device,
    "detach": Tensor.detach, "detach_": Tensor.detach_,
}
METHODS = {"is_nonzero": is_nonzero, "is_same_size": is_same_size}
