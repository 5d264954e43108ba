"""mindtorch_v2: a PyTorch-compatible tensor library whose ops run in a pure C core."""
import os as _os

# OpenBLAS's idle GEMM threads spin (sched_yield) for ~2^28 cycles before sleeping, taking the
# cores our own pool runs the next op on: MiniLM 8x128 ran 1.3x slower. Read once, when _C
# loads OpenBLAS; a value the user set wins. (docs/PERFORMANCE.md, "OpenBLAS thread timeout")
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "10")
from ._C import lib as _lib
from . import _c_namespace  # noqa: F401  (torch._C.Graph, ... for annotations)
from ._C import ScriptModule, ScriptMethod  # noqa: F401
from ._core import OutOfMemoryError  # noqa: F401
from ._dtype import (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
                     float8_e5m2, float8_e4m3fn, float8_e5m2fnuz, float8_e4m3fnuz, float8_e8m0fnu, complex64, complex128, dtype, finfo, iinfo, get_default_dtype, set_default_dtype, promote_types, can_cast)
from ._device import Event, Stream, device, get_default_device, set_default_device
from ._size import Size
from ._tensor import Tensor
from . import _methods  # noqa: F401  (attaches ops to Tensor)
from ._creation import (tril_indices, triu_indices, tensor, as_tensor, scalar_tensor, empty, empty_like, empty_strided, zeros, zeros_like,
                        ones, ones_like, full, full_like, arange, linspace, logspace, eye, frombuffer)
from ._interop import from_numpy
from ._reduce import return_types
from ._random import Generator, default_generator
from ._registry import TORCH as _TORCH_FUNCTIONS  # every op module's torch.* functions, filled by _methods
from . import random
from . import autograd
from . import nn
from . import linalg
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled)
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled

globals().update(_TORCH_FUNCTIONS)

from .version import __version__  # the one source of the version (torch_proxy reads it too)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64


class _Named:
    """A named constant that prints as torch.<name> (layouts, memory formats)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name


class layout(_Named):
    pass


class memory_format(_Named):
    pass


strided = layout("strided")
sparse_coo, sparse_csr, sparse_csc = layout("sparse_coo"), layout("sparse_csr"), layout("sparse_csc")
sparse_bsr, sparse_bsc = layout("sparse_bsr"), layout("sparse_bsc")  # (names: no BSR/BSC/CSC tensors yet)
contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format  # PyTorch's alias: the same object
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

from math import e, inf, nan, pi  # noqa: E402,F401  (torch.e, torch.pi... are math's, as in PyTorch)
newaxis = None


# ---- submodules torch.* exposes, and the functions they back (torch_proxy maps torch.X to these) ----
from . import (accelerator, amp, backends, compiler, cpu, cuda, distributed, distributions, export, func, fx,  # noqa: E402
               hub, jit, library, mps, mtia, onnx, overrides, profiler, signal, sparse, types, utils, version, xpu, _dynamo)
from .nn import attention as _nn_attention  # noqa: E402,F401
from ._compile import compile  # noqa: E402
from ._vmap import vmap  # noqa: E402
from . import _ops  # noqa: E402
from ._ops import ops, Tag  # noqa: E402  (torch.ops: operators torch.library defines)
from .amp.autocast_mode import (autocast, get_autocast_cpu_dtype, get_autocast_dtype,  # noqa: E402
                                get_autocast_gpu_dtype, is_autocast_cache_enabled, is_autocast_cpu_enabled,
                                is_autocast_enabled, set_autocast_cache_enabled, set_autocast_dtype,
                                set_autocast_enabled, clear_autocast_cache, is_autocast_available,
                                autocast_increment_nesting, autocast_decrement_nesting, set_autocast_cpu_dtype,
                                set_autocast_cpu_enabled)
from ._higher_order import cond, while_loop  # noqa: E402
from ._deterministic import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,  # noqa: E402
                             is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                             use_deterministic_algorithms)

# ---- serialization and interop: save/load, storages (issue 6) ----
from . import _utils, serialization, storage  # noqa: E402
from ._utils import classproperty  # noqa: E402
from ._utils_internal import get_file_path, prepare_multiprocessing_environment  # noqa: E402
from .random import thread_safe_generator  # noqa: E402
from ._lobpcg import lobpcg  # noqa: E402
from .serialization import save, load  # noqa: E402
from ._archive import PyTorchFileReader, PyTorchFileWriter  # noqa: E402
from . import _C  # noqa: E402
_C.PyTorchFileReader, _C.PyTorchFileWriter = PyTorchFileReader, PyTorchFileWriter
from .storage import UntypedStorage, TypedStorage  # noqa: E402
from ._asarray import asarray  # noqa: E402
from ._legacy_types import TYPES as _LEGACY_TYPES  # noqa: E402
globals().update(_LEGACY_TYPES)  # FloatTensor, LongTensor, ...
from ._dlpack import from_dlpack  # noqa: E402
from ._unsupported_dtypes import (complex32, uint16, uint32, uint64, int1, int2, int3, int4, int5, int6, int7,  # noqa: E402
                                  uint1, uint2, uint3, uint4, uint5, uint6, uint7, bit)  # (names only)
cfloat, cdouble, chalf = complex64, complex128, complex32
globals().update(storage.LEGACY_CLASSES)  # FloatStorage, BFloat16Storage, ... (legacy storage types)

# ---- the layer users train with: nn, optim, utils (data, hooks), testing ----
from . import nn, optim, utils, testing, special, fft, masked, _logging  # noqa: E402,F401
from . import multiprocessing  # noqa: E402  (registers the tensor reductions, as torch does)

# ---- torch.* names of nn ops (ATen's signatures where they differ from nn.functional's) ----
from .nn import _aten  # noqa: E402
_TORCH_FUNCTIONS.register(_aten.FUNCTIONS, _aten.__name__)
globals().update(_aten.FUNCTIONS)
from .nn.utils.weight_norm import _weight_norm, norm_except_dim  # noqa: E402,F401


def _accept_numpy_names():
    import inspect
    from ._numpy_compat import accept_numpy_names
    g = globals()
    for name, fn in list(g.items()):
        if inspect.isfunction(fn) and fn.__module__.startswith(__name__) and not name.startswith("_"):
            g[name] = accept_numpy_names(fn)


_accept_numpy_names()
