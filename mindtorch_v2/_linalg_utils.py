"""The linear-algebra names PyTorch keeps only to point elsewhere: the removed torch.matrix_rank /
solve / lstsq / symeig / eig (and Tensor.solve/lstsq/eig/symeig), which raise PyTorch's
RuntimeError with its text (torch/_linalg_utils.py), and the deprecated torch.frobenius_norm /
nuclear_norm, which warn once as ATen does and compute through torch.norm / linalg.matrix_norm."""
import warnings

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. "
        "The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input, A, *, out=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU factorization.\n\n"
        "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")


def lstsq(input, A, *, out=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in "
        "the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
        "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, "
        "the residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the matrix by "
        "default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
        "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n\nand\n\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def _tensor_solve(self, other):
    return solve(self, other)


def _tensor_lstsq(self, other):
    return lstsq(self, other)


def _tensor_eig(self, eigenvectors=False):
    return eig(self, eigenvectors=eigenvectors)


def _tensor_symeig(self, eigenvectors=False):
    return symeig(self, eigenvectors=eigenvectors)


_WARNED = set()


def _warn_once(name, instead):
    # ATen's TORCH_WARN_ONCE: once per process
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in "
                      f"a future PyTorch release. Please use `{instead}` instead", UserWarning, stacklevel=3)


_NO_DIM = object()


def frobenius_norm(input, dim=_NO_DIM, keepdim=False, *, out=None):
    if dim is _NO_DIM:
        raise TypeError('frobenius_norm() missing 1 required positional arguments: "dim"')
    _warn_once("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    from ._reduce import norm
    return norm(input, 2, dim, keepdim, out=out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    _warn_once("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    from ._reduce import matrix_norm
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


FUNCTIONS = {"matrix_rank": matrix_rank, "solve": solve, "lstsq": lstsq, "symeig": symeig, "eig": eig,
             "frobenius_norm": frobenius_norm, "nuclear_norm": nuclear_norm}
METHODS = {"solve": _tensor_solve, "lstsq": _tensor_lstsq, "eig": _tensor_eig, "symeig": _tensor_symeig}
