"""torch.* functions about the runtime and plain queries on tensors: threads, matmul precision,
denormals, and the type/size predicates."""
import builtins
import warnings

from ._C import lib
from ._tensor import Tensor


def set_num_threads(n):
    if not isinstance(n, builtins.int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    lib.mt_set_num_threads(n)


def get_num_threads():
    return lib.mt_get_num_threads()


# The inter-op pool runs independent ops side by side (TorchScript's fork); mindtorch_v2 has no such
# scheduler, so the setting is kept for the API and changes nothing.
_interop_threads = [None]


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


FUNCTIONS = {
    "set_num_threads": set_num_threads, "get_num_threads": get_num_threads,
    "set_num_interop_threads": set_num_interop_threads, "get_num_interop_threads": get_num_interop_threads,
    "set_float32_matmul_precision": set_float32_matmul_precision,
    "get_float32_matmul_precision": get_float32_matmul_precision, "set_flush_denormal": set_flush_denormal,
    "is_tensor": is_tensor, "_assert": _assert, "is_storage": is_storage, "typename": typename, "is_floating_point": is_floating_point,
    "numel": numel, "is_nonzero": is_nonzero, "is_same_size": is_same_size,
    "is_signed": Tensor.is_signed, "is_inference": Tensor.is_inference, "get_device": Tensor.get_device,
    "detach": Tensor.detach, "detach_": Tensor.detach_,
}
METHODS = {"is_nonzero": is_nonzero, "is_same_size": is_same_size}
