"""torch.backends.cuda: CUDA is not built; matmul precision and SDPA flags are settable."""
import contextlib
import enum


def is_built():
    return False


class cuBLASModule:
    _FLAGS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
              "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False,
              "fp32_precision": "none"}

    def __init__(self):
        object.__setattr__(self, "_values", dict(self._FLAGS))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unknown attribute {name}") from None

    def __setattr__(self, name, value):
        if name not in self._FLAGS:
            raise AttributeError(f"Unknown attribute {name}")
        self._values[name] = value if name == "fp32_precision" else bool(value)


class cuFFTPlanCacheManager:
    def __getitem__(self, device):
        raise AssertionError("Torch not compiled with CUDA enabled")


matmul = cuBLASModule()
cufft_plan_cache = cuFFTPlanCacheManager()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


def is_flash_attention_available():
    return False


def can_use_flash_attention(params, debug=False):
    return False


def can_use_efficient_attention(params, debug=False):
    return False


def can_use_cudnn_attention(params, debug=False):
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    prev = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(prev)


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


_linalg = [_LinalgBackend.Default]
_blas = [_BlasBackend.Cublas]


def preferred_linalg_library(backend=None):
    if backend is not None:
        _linalg[0] = _LinalgBackend[backend.capitalize()] if isinstance(backend, str) else backend
    return _linalg[0]


def preferred_blas_library(backend=None):
    if backend is not None:
        _blas[0] = _BlasBackend[backend.capitalize()] if isinstance(backend, str) else backend
    return _blas[0]
