"""torch.linalg: norms, products, and the LAPACK factorisations with what is built on them
(mindtorch_v2/_lapack.py). Those not written yet say so."""
from ._lapack import LINALG as _LAPACK
from ._linalg import linalg_cross as cross, matmul, multi_dot
from ._reduce import linalg_norm as norm, matrix_norm, vector_norm


def vecdot(x, y, *, dim=-1, out=None):
    r = (x * y).sum(dim)  # real dtypes: conj(x) == x
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


globals().update(_LAPACK)

_MISSING = ()


def __getattr__(name):
    if name in _MISSING:
        def missing(*args, **kwargs):
            raise NotImplementedError(f"torch.linalg.{name} is not implemented in mindtorch_v2 yet")
        missing.__name__ = name
        return missing
    raise AttributeError(f"module 'torch.linalg' has no attribute '{name}'")
