"""torch.backends.mkldnn: oneDNN is not used by mindtorch_v2 (its CPU kernels are its own)."""
import contextlib

enabled = False
deterministic = False
allow_tf32 = False
fp32_precision = "none"
VERBOSE_OFF, VERBOSE_ON, VERBOSE_ON_CREATION = 0, 1, 2


def is_available():
    return False


@contextlib.contextmanager
def verbose(level):
    yield


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, fp32_precision="none"):
    yield
