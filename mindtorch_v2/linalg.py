"""torch.linalg: norms, cross, multi_dot, vecdot, matmul. Factorisations and solvers
(det, inv, solve, cholesky, qr, svd, eig*) are not implemented yet and say so."""
from ._linalg import linalg_cross as cross, matmul, multi_dot
from ._reduce import linalg_norm as norm, matrix_norm, vector_norm


def vecdot(x, y, *, dim=-1, out=None):
    r = (x * y).sum(dim)  # real dtypes: conj(x) == x
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


_MISSING = ("det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "lstsq", "cholesky", "cholesky_ex", "qr", "svd",
            "svdvals", "eig", "eigh", "eigvals", "eigvalsh", "lu", "lu_factor", "lu_solve", "pinv", "matrix_rank",
            "matrix_power", "matrix_exp", "cond", "tensorinv", "tensorsolve", "householder_product", "ldl_factor",
            "solve_triangular", "vander", "diagonal")


def __getattr__(name):
    if name in _MISSING:
        def missing(*args, **kwargs):
            raise NotImplementedError(f"torch.linalg.{name} is not implemented in mindtorch_v2 yet")
        missing.__name__ = name
        return missing
    raise AttributeError(f"module 'torch.linalg' has no attribute '{name}'")
