"""torch.backends.mkl: MKL runs torch.fft, and QR, the SVD, eigh and gels where it is faster, when PyPI's `mkl` is
installed (GEMM and the other factorisations run on OpenBLAS)."""
import contextlib

VERBOSE_OFF, VERBOSE_ON = 0, 1


def is_available():
    from ..._runtime import mkl_path
    return mkl_path is not None


@contextlib.contextmanager
def verbose(enable):
    yield
