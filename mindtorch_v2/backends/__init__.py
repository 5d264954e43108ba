"""torch.backends: flags of the backends PyTorch can be built with. mindtorch_v2 has only its own
CPU core, so accelerator backends report unavailable; their flags stay settable as in a CPU-only
PyTorch build (they change nothing here, as they change nothing there)."""
import contextlib

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401
from . import mha  # noqa: F401,E402

fp32_precision = "none"


@contextlib.contextmanager
def flags_frozen():
    yield


def disable_global_flags():
    pass
