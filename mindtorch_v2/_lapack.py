"""Matrix factorisations and what is built on them (torch.linalg's cholesky, LU, solve, inv, det,
eigh, eig, svd, qr; pinv, matrix_rank, matrix_power, cond...). The factorisations are core calls
(LAPACK underneath, autograd in C); the compositions here are PyTorch's own definitions of them."""
import math

from ._C import lib
from ._core import check, LinAlgError, new_out
from ._dispatch import call
from ._dtype import can_cast, float16, float32, float64, int64, scalar_name
from ._reduce import _pair_type, return_types
from ._tensor import Tensor, wrap


for _name, _fields in (("linalg_cholesky_ex", "L info"), ("linalg_inv_ex", "inverse info"),
                       ("linalg_solve_ex", "result info"), ("linalg_lu_factor", "LU pivots"),
                       ("linalg_lu_factor_ex", "LU pivots info"), ("linalg_lu", "P L U"), ("lu_unpack", "P L U"),
                       ("linalg_slogdet", "sign logabsdet"), ("slogdet", "sign logabsdet"),
                       ("linalg_eigh", "eigenvalues eigenvectors"), ("linalg_eig", "eigenvalues eigenvectors"),
                       ("linalg_svd", "U S Vh"), ("svd", "U S V"),
                       ("linalg_qr", "Q R"), ("qr", "Q R"),
                       ("linalg_lstsq", "solution residuals rank singular_values"), ("triangular_solve", "solution cloned_coefficient"),
                       ("linalg_ldl_factor_ex", "LD pivots info"), ("linalg_ldl_factor", "LD pivots"), ("geqrf", "a tau")):
    setattr(return_types, _name, _pair_type(_name, _fields.split()))


def _t(fn, arg, v, pos=1):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}")
    return v._h


def _call(fn, nout, *args):
    """A core call with nout `mt_tensor **` results at the end."""
    outs = [new_out() for _ in range(nout)]
    check(fn(*args, *outs))
    return [wrap(o[0]) for o in outs]


def _into(results, out):
    """PyTorch's out=: each result resized into and copied to its out tensor."""
    if out is None:
        return results
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    for o, r in zip(outs, results if isinstance(results, tuple) else (results,)):
        o.resize_(r.shape).copy_(r)
    return out if isinstance(out, Tensor) else type(results)(*outs) if isinstance(results, tuple) else out


def _into_same_dtype(results, out):
    """out= of PyTorch's structured ops: each out tensor must have its result's dtype."""
    if out is not None:
        from ._dtype import CPP_NAMES
        for o, r in zip((out,) if isinstance(out, Tensor) else out, (results,) if isinstance(results, Tensor) else results):
            if o.dtype != r.dtype:
                raise RuntimeError(f"Expected out tensor to have dtype {CPP_NAMES[r.dtype._name]}, but got "
                                   f"{CPP_NAMES[o.dtype._name]} instead")
    return _into(results, out)


# ---- cholesky ---------------------------------------------------------------------------------------

def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    L, info = _call(lib.mt_linalg_cholesky_ex, 2, _t("linalg_cholesky_ex", "input", A), bool(upper),
                    bool(check_errors))
    return _into(return_types.linalg_cholesky_ex(L, info), out)


def cholesky(A, *, upper=False, out=None):
    L, _ = _call(lib.mt_linalg_cholesky_ex, 2, _t("linalg_cholesky", "input", A), bool(upper), True)
    return _into(L, out)


def torch_cholesky(input, upper=False, *, out=None):
    return cholesky(input, upper=upper, out=out)


def _cholesky_solve(B, L, upper):
    """X with (L L^H) X = B (upper: U^H U): two triangular solves."""
    L = L.mT if upper else L
    return solve_triangular(L.mT, solve_triangular(L, B, upper=False), upper=True)


_CHOLESKY_SOLVE = {}  # node name -> its Function, made on first use


def _cholesky_solve_apply(node, B, L, upper):
    if node not in _CHOLESKY_SOLVE:
        _CHOLESKY_SOLVE[node] = _cholesky_solve_function(node)
    return _CHOLESKY_SOLVE[node].apply(B, L, bool(upper))


def _cholesky_solve_function(node):
    from .autograd.function import Function

    class CholeskySolve(Function):
        # PyTorch's cholesky_solve_backward: the factor's gradient is -(C + C^H) L (upper: -U (C + C^H)) with
        # C = cholesky_solve(grad) X^H, not projected onto the triangle the solve reads (cholesky_inverse's is
        # the same with B = I)
        _node_name = node

        @staticmethod
        def forward(ctx, B, L, upper):
            X = _cholesky_solve(B, L, upper)
            ctx.save_for_backward(B, L, X)
            ctx.upper = upper
            return X

        @staticmethod
        def backward(ctx, grad):
            B, L, X = ctx.saved_tensors
            grad_B = _cholesky_solve(grad, L, ctx.upper)
            common = grad_B @ X.mH
            common = common + common.mH
            grad_L = -(L @ common) if ctx.upper else -(common @ L)
            return grad_B.sum_to_size(B.shape), grad_L.sum_to_size(L.shape), None
    return CholeskySolve


def cholesky_solve(input, input2, upper=False, *, out=None):
    for t, n in ((input, "b"), (input2, "u")):
        if t.dim() < 2:
            raise RuntimeError(f"{n} should have at least 2 dimensions, but has {t.dim()} dimensions instead")
    return _into(_cholesky_solve_apply("CholeskySolveBackward0", input, input2, upper), out)


def cholesky_inverse(input, upper=False, *, out=None):
    if input.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    if input.dtype not in (float32, float64):
        raise NotImplementedError(f'"cholesky_inverse_out_cpu" not implemented for \'{scalar_name(input.dtype)}\'')
    from ._creation import eye
    eye_ = eye(input.shape[-1], dtype=input.dtype).expand(input.shape)
    return _into(_cholesky_solve_apply("CholeskyInverseBackward0", eye_, input, upper), out)


# ---- LU --------------------------------------------------------------------------------------------

def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    LU, piv, info = _call(lib.mt_linalg_lu_factor_ex, 3, _t("linalg_lu_factor_ex", "A", A), bool(pivot),
                          bool(check_errors))
    return _into(return_types.linalg_lu_factor_ex(LU, piv, info), out)


def lu_factor(A, *, pivot=True, out=None):
    LU, piv, _ = _call(lib.mt_linalg_lu_factor_ex, 3, _t("linalg_lu_factor", "A", A), bool(pivot), True)
    return _into(return_types.linalg_lu_factor(LU, piv), out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """P, L, U with A = P L U from lu_factor's packed LU and LAPACK's 1-based row swaps."""
    from ._creation import eye, empty, tensor
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    L = U = P = empty(0, dtype=LU_data.dtype)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        batch = tuple(LU_pivots.shape[:-1])
        perms = []
        for row in LU_pivots.reshape(-1, k).tolist() if k else [[]] * math.prod(batch):
            perm = list(range(m))
            for i, p in enumerate(row):  # the swaps in order: P^T A = L U
                perm[i], perm[p - 1] = perm[p - 1], perm[i]
            perms.append(perm)
        idx = tensor(perms, dtype=int64).reshape(*batch, m)
        P = eye(m, dtype=LU_data.dtype)[idx].mT
    return _into(return_types.lu_unpack(P, L, U), out)


def lu(A, *, pivot=True, out=None):
    LU, piv = lu_factor(A, pivot=pivot)
    P, L, U = lu_unpack(LU, piv)
    return _into(return_types.linalg_lu(P, L, U), out)


def torch_lu(A, pivot=True, get_infos=False, out=None):
    LU, piv, info = lu_factor_ex(A, pivot=pivot, check_errors=False)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    r = call(lib.mt_linalg_lu_solve, _t("linalg_lu_solve", "LU", LU), _t("linalg_lu_solve", "pivots", pivots, 2),
             _t("linalg_lu_solve", "B", B, 3), bool(left), bool(adjoint))
    return _into(r, out)


def torch_lu_solve(b, LU_data, LU_pivots, *, out=None):
    return lu_solve(LU_data, LU_pivots, b, out=out)


# ---- LDL ---------------------------------------------------------------------------------------------

def _ldl_check_errors(info, name):
    # PyTorch's error-code check has no text for sytrf's singular-D code and fails with its internal assert
    if (info > 0).any():
        code = int(info[info > 0][0])
        raise RuntimeError(f'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                           f'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. {name}: Unknown error code: '
                           f'{code}.')


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    LD, piv, info = _call(lib.mt_linalg_ldl_factor_ex, 3, _t("linalg_ldl_factor_ex", "A", A), bool(hermitian))
    if check_errors:
        _ldl_check_errors(info, "torch.linalg.ldl_factor_ex")
    return _into_same_dtype(return_types.linalg_ldl_factor_ex(LD, piv, info), out)


def ldl_factor(A, *, hermitian=False, out=None):
    LD, piv, info = _call(lib.mt_linalg_ldl_factor_ex, 3, _t("linalg_ldl_factor", "A", A), bool(hermitian))
    _ldl_check_errors(info, "torch.linalg.ldl_factor")
    return _into_same_dtype(return_types.linalg_ldl_factor(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    r = call(lib.mt_linalg_ldl_solve, _t("linalg_ldl_solve", "LD", LD), _t("linalg_ldl_solve", "pivots", pivots, 2),
             _t("linalg_ldl_solve", "B", B, 3), bool(hermitian))
    return _into_same_dtype(r, out)


# ---- solve, inverse ----------------------------------------------------------------------------------

def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    r, info = _call(lib.mt_linalg_solve_ex, 2, _t("linalg_solve_ex", "A", A), _t("linalg_solve_ex", "B", B, 2),
                    bool(left), bool(check_errors))
    return _into(return_types.linalg_solve_ex(r, info), out)


def solve(A, B, *, left=True, out=None):
    r, _ = _call(lib.mt_linalg_solve_ex, 2, _t("linalg_solve", "A", A), _t("linalg_solve", "B", B, 2), bool(left),
                 True)
    return _into(r, out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    r = call(lib.mt_linalg_solve_triangular, _t("linalg_solve_triangular", "input", A),
             _t("linalg_solve_triangular", "B", B, 2), bool(upper), bool(left), bool(unitriangular))
    return _into(r, out)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Deprecated torch.triangular_solve: (solution of op(A) X = b, a copy of A)."""
    X = solve_triangular(A.mT if transpose else A, input, upper=upper != bool(transpose), unitriangular=unitriangular)
    A_ = A.expand(*X.shape[:-2], *A.shape[-2:]).clone()  # broadcast to the batch, as PyTorch's
    return _into(return_types.triangular_solve(X, A_), out)


def inv_ex(A, *, check_errors=False, out=None):
    r, info = _call(lib.mt_linalg_inv_ex, 2, _t("linalg_inv_ex", "A", A), bool(check_errors))
    return _into(return_types.linalg_inv_ex(r, info), out)


def inv(A, *, out=None):
    r, _ = _call(lib.mt_linalg_inv_ex, 2, _t("linalg_inv", "A", A), True)
    return _into(r, out)


# ---- determinants ------------------------------------------------------------------------------------

def det(A, *, out=None):
    return _into(call(lib.mt_linalg_det, _t("linalg_det", "A", A)), out)


def slogdet(A, *, out=None):
    s, l = _call(lib.mt_linalg_slogdet, 2, _t("linalg_slogdet", "A", A))
    return _into(return_types.linalg_slogdet(s, l), out)


def torch_slogdet(input, *, out=None):
    return _into(return_types.slogdet(*slogdet(input)), out)


def logdet(input):
    """log det A: NaN where det A < 0 (PyTorch's)."""
    try:
        s, l = _call(lib.mt_linalg_slogdet, 2, _t("logdet", "input", input))
    except RuntimeError as e:
        msg = str(e)
        if msg.startswith("linalg.slogdet: "):
            raise type(e)("logdet: " + msg[len("linalg.slogdet: "):]) from None
        raise
    if input.is_complex():  # log det = log|det| + i arg(sign)
        return s.log() + l
    from ._elementwise import where
    return where(s == -1, math.nan, l)  # PyTorch's definition (WhereBackward0)


# ---- eigh, svd, qr -------------------------------------------------------------------------------------

def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("U", "u")


def eigh(A, UPLO="L", *, out=None):
    L, V = _call(lib.mt_linalg_eigh, 2, _t("linalg_eigh", "A", A), _uplo(UPLO), True)
    return _into(return_types.linalg_eigh(L, V), out)


def eigvalsh(A, UPLO="L", *, out=None):
    L, _ = _call(lib.mt_linalg_eigh, 2, _t("linalg_eigvalsh", "A", A), _uplo(UPLO), False)
    return _into(L, out)


def _check_eig_out(name, A, outs, fields):
    """PyTorch's out= rule for eig/eigvals: each out tensor must take the complex dtype of A's safely (checked
    after the shape checks, which the core makes: only square batches get here first)."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2] or not (A.dtype.is_floating_point or A.dtype.is_complex):
        return
    want = A.dtype.to_complex()
    for o, field in zip(outs, fields):
        if not can_cast(want, o.dtype):
            raise RuntimeError(f"{name}: Expected {field} to be safely castable from {scalar_name(want)} dtype, but "
                               f"got {field} with dtype {scalar_name(o.dtype)}")


def eig(A, *, out=None):
    """Eigenvalues and unit eigenvectors of a general square matrix; complex for real input too."""
    a = _t("linalg_eig", "input", A)
    if out is not None:
        _check_eig_out("torch.linalg.eig", A, out, ("eigenvalues", "eigenvectors"))
    L, V = _call(lib.mt_linalg_eig, 2, a, True)
    return _into(return_types.linalg_eig(L, V), out)


def eigvals(A, *, out=None):
    a = _t("linalg_eigvals", "input", A)
    if out is not None:
        _check_eig_out("torch.linalg.eigvals", A, (out,), ("eigenvalues",))
    L, _ = _call(lib.mt_linalg_eig, 2, a, False)
    return _into(L, out)


def _no_driver(driver):
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def svd(A, full_matrices=True, *, driver=None, out=None):
    _no_driver(driver)
    U, S, Vh = _call(lib.mt_linalg_svd, 3, _t("linalg_svd", "A", A), bool(full_matrices), True)
    return _into(return_types.linalg_svd(U, S, Vh), out)


def svdvals(A, *, driver=None, out=None):
    _no_driver(driver)
    _, S, _ = _call(lib.mt_linalg_svd, 3, _t("linalg_svdvals", "A", A), False, False)
    return _into(S, out)


def torch_svd(input, some=True, compute_uv=True, *, out=None):
    """Deprecated torch.svd: V rather than Vh; without compute_uv, U and V are zero-filled."""
    if compute_uv:
        U, S, Vh = svd(input, full_matrices=not some)
        return _into(return_types.svd(U, S, Vh.mH), out)
    from ._creation import zeros
    m, n = input.shape[-2], input.shape[-1]
    batch = tuple(input.shape[:-2])
    S = svdvals(input)
    return _into(return_types.svd(zeros(*batch, m, m, dtype=input.dtype), S,
                                  zeros(*batch, n, n, dtype=input.dtype)), out)


_QR_MODES = {"reduced": lib.MT_QR_REDUCED, "complete": lib.MT_QR_COMPLETE, "r": lib.MT_QR_R}


def qr(A, mode="reduced", *, out=None):
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    Q, R = _call(lib.mt_linalg_qr, 2, _t("linalg_qr", "A", A), _QR_MODES[mode])
    return _into(return_types.linalg_qr(Q, R), out)


def torch_qr(input, some=True, *, out=None):
    return _into(return_types.qr(*qr(input, "reduced" if some else "complete")), out)


def geqrf(input, *, out=None):
    a, tau = _call(lib.mt_geqrf, 2, _t("geqrf", "input", input))
    return _into(return_types.geqrf(a, tau), out)


def _householder_square(A, tau):
    """The whole n x n Q = H_1 ... H_k of A's first k = len(tau) reflectors (n = A's rows), recorded."""
    from ._shape_ops import cat
    n, k = A.shape[-2], tau.shape[-1]
    V = A[..., :, :k]
    if k < n:
        V = cat([V, V.new_zeros(*V.shape[:-1], n - k)], -1)
    return householder_product(V, tau)


_ORMQR = []  # the Function, made on first use


def _ormqr_function():
    from . import enable_grad, is_grad_enabled
    from .autograd import grad as autograd_grad
    from .autograd.function import Function

    class Ormqr(Function):
        # PyTorch's derivative of op(Q) C: C's gradient is op(Q)^H grad; Q's goes through householder_product
        # to the reflectors and tau (its composition here is recorded, so double backward works)
        _node_name = "OrmqrBackward0"

        @staticmethod
        def forward(ctx, A, tau, C, left, transpose):
            ctx.save_for_backward(A, tau, C)
            ctx.left, ctx.transpose = left, transpose
            return call(lib.mt_ormqr, A._h, tau._h, C._h, left, transpose)

        @staticmethod
        def backward(ctx, grad):
            A, tau, C = ctx.saved_tensors
            higher = is_grad_enabled()  # create_graph: stay connected to A and tau
            with enable_grad():
                A_ = A if higher and A.requires_grad else A.detach().requires_grad_()
                tau_ = tau if higher and tau.requires_grad else tau.detach().requires_grad_()
                Q = _householder_square(A_, tau_)
            Qd = Q if higher else Q.detach()
            if ctx.left:  # R = Q C or Q^H C
                gC = Qd @ grad if ctx.transpose else Qd.mH @ grad
                gQ = C @ grad.mH if ctx.transpose else grad @ C.mH
            else:  # R = C Q or C Q^H
                gC = grad @ Qd if ctx.transpose else grad @ Qd.mH
                gQ = grad.mH @ C if ctx.transpose else C.mH @ grad
            gA = gtau = None
            if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
                # (no reflectors: Q = I reads neither, and their gradients are zeros)
                gA, gtau = autograd_grad(Q, (A_, tau_), gQ, create_graph=higher, allow_unused=True)
                gA = A.new_zeros(A.shape) if gA is None else gA
                gtau = tau.new_zeros(tau.shape) if gtau is None else gtau
            return gA, gtau, gC, None, None
    return Ormqr


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    a, tau, c = _t("ormqr", "input", input), _t("ormqr", "input2", input2, 2), _t("ormqr", "input3", input3, 3)
    from . import is_grad_enabled
    if is_grad_enabled() and (input.requires_grad or input2.requires_grad or input3.requires_grad):
        if not _ORMQR:
            _ORMQR.append(_ormqr_function())
        r = _ORMQR[0].apply(input, input2, input3, bool(left), bool(transpose))
    else:
        r = call(lib.mt_ormqr, a, tau, c, bool(left), bool(transpose))
    if out is not None and out.dtype != r.dtype:
        raise RuntimeError(f"torch.ormqr: Expected input and result to have the same dtype, but input has dtype"
                           f"{scalar_name(input.dtype)} and result has dtype {scalar_name(out.dtype)}")
    return _into(r, out)


# ---- least squares ----------------------------------------------------------------------------------------

_LSTSQ_DRIVERS = {"gels": lib.MT_LSTSQ_GELS, "gelsy": lib.MT_LSTSQ_GELSY, "gelsd": lib.MT_LSTSQ_GELSD,
                  "gelss": lib.MT_LSTSQ_GELSS}


def lstsq(A, B, *args, rcond=None, driver=None):
    """min ||A X - B|| on LAPACK (gelsy unless another driver is named); PyTorch's result tuple.
    (rcond: the third positional or a keyword; its type error names the position when positional)"""
    a, b = _t("linalg_lstsq", "input", A), _t("linalg_lstsq", "b", B, 2)
    if len(args) > 1:
        raise TypeError(f"linalg_lstsq() takes from 2 to 3 positional arguments but {2 + len(args)} were given")
    where = " (position 3)" if args else ""
    rcond = args[0] if args else rcond
    if rcond is not None and (isinstance(rcond, Tensor) or not isinstance(rcond, (int, float))):
        raise TypeError(f"linalg_lstsq(): argument 'rcond'{where} must be float, not {type(rcond).__name__}")
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"linalg_lstsq(): argument 'driver' must be str, not {type(driver).__name__}")
    # an unknown name reaches the core as -1, which checks it after the shapes, in PyTorch's order
    code = _LSTSQ_DRIVERS["gelsy"] if driver is None else _LSTSQ_DRIVERS.get(driver, -1)
    res = _call(lib.mt_linalg_lstsq, 4, a, b, rcond is not None, float(rcond or 0.0), code)
    return return_types.linalg_lstsq(*res)


# ---- built on the factorisations -----------------------------------------------------------------------

def _tolerances(A, atol, rtol, name):
    """PyTorch's defaults: rtol = eps * max(m, n) unless only a positive atol is given."""
    from ._dtype import finfo
    if rtol is None:
        atol_pos = atol is not None and (isinstance(atol, Tensor) or atol > 0)
        rtol = 0.0 if atol_pos else finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    if atol is None:
        atol = 0.0
    as_col = (lambda v: v.unsqueeze(-1) if isinstance(v, Tensor) else v)
    return as_col(atol), as_col(rtol)


def _check_float_matrix(A, name):
    if A.dim() < 2 or A.dtype.is_complex or not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise RuntimeError(f"{name}({scalar_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The pseudo-inverse from the SVD (or eigh), singular values below max(atol, rtol * s_max) dropped."""
    _check_float_matrix(A, "linalg.pinv")
    atol, rtol = _tolerances(A, atol, rtol, "linalg.pinv")
    if A.numel() == 0:
        from ._creation import zeros
        return _into(zeros(*A.shape[:-2], A.shape[-1], A.shape[-2], dtype=A.dtype), out)
    if hermitian:
        L, V = eigh(A)
        s = L.abs()
        tol = (rtol * s.amax(-1, keepdim=True)).clamp(min=atol) if not isinstance(atol, Tensor) else \
            (rtol * s.amax(-1, keepdim=True)).maximum(atol)
        inv_ = L.reciprocal().where(s > tol, L.new_zeros(()))
        return _into((V * inv_.unsqueeze(-2)) @ V.mT, out)
    U, S, Vh = svd(A, full_matrices=False)
    smax = S[..., :1]
    tol = (rtol * smax).clamp(min=atol) if not isinstance(atol, Tensor) else (rtol * smax).maximum(atol)
    inv_ = S.reciprocal().where(S > tol, S.new_zeros(()))
    return _into((Vh.mT * inv_.unsqueeze(-2)) @ U.mT, out)


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype.is_complex or not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol, "linalg.matrix_rank")
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    if S.shape[-1] == 0:
        return _into(S.new_zeros(S.shape[:-1]).long(), out)
    smax = S.amax(-1, keepdim=True)
    thr = (rtol * smax).clamp(min=atol) if not isinstance(atol, Tensor) else (rtol * smax).maximum(atol)
    return _into((S > thr).sum(-1), out)


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring; n < 0 powers the inverse; n = 0 is the identity."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    n = n.__index__()
    if n == 0:
        from ._creation import eye
        return _into(eye(A.shape[-1], dtype=A.dtype).expand(A.shape).clone(), out)
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _into(result, out)


def cond(A, p=None, *, out=None):
    if A.numel() == 0 and A.dim() >= 2:  # PyTorch (as NumPy leaves it undefined): 0 for empty matrices
        return _into(A.new_zeros(A.shape[:-2]), out)
    if p in (None, 2, -2):
        S = svdvals(A)
        r = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
        return _into(r, out)
    from ._reduce import matrix_norm
    Ai, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(Ai, p)
    return _into(r.masked_fill(info > 0, math.inf) if r.dim() else (r if int(info) == 0 else r.new_tensor(math.inf)),
                 out)


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    lead, rest = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    p = math.prod(lead)
    if p != math.prod(rest):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(rest)} != {p}")
    return _into(inv(A.reshape(p, p)).reshape(*rest, *lead), out)


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute(*[d for d in range(A.dim()) if d not in dims], *dims)
    shape = tuple(A.shape[B.dim():])
    r = solve(A.reshape(B.numel(), math.prod(shape)), B.reshape(B.numel()))
    return _into(r.reshape(shape), out)


def vander(x, *, N=None):
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from ._shape_ops import cat
    ones = x.new_ones(()).expand(*x.shape, 1).to(x.dtype)
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat([ones.to(powers.dtype), powers], -1)


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i the i-th column of A
    below the diagonal and 1 on it (LAPACK's orgqr, as a composition)."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    from ._creation import eye
    Q = eye(m, dtype=A.dtype).expand(*A.shape[:-2], m, m)
    below = A.tril(-1) + eye(m, n, dtype=A.dtype)  # the reflectors' vectors, unit diagonal
    for i in range(tau.shape[-1]):
        v = below[..., :, i:i + 1]
        if i:
            v = v * (_arange_ge(m, i, A.dtype).unsqueeze(-1))
        Q = Q - (Q @ v) @ (v.mH * tau[..., i:i + 1].unsqueeze(-1))
    return _into(Q[..., :n], out)


def _arange_ge(m, i, dtype):
    """1 from row i on, 0 above: a reflector's vector starts at its diagonal"""
    from ._creation import arange
    return (arange(m) >= i).to(dtype)


# Padé(13) coefficients of the scaling-and-squaring matrix exponential (Higham 2005)
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def matrix_exp(A):
    """exp(A) by scaling and squaring with the [13/13] Padé approximant (Higham 2005): one solve and
    a few products, all recorded ops, so it is differentiable."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(A.dtype)}")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    wide = A.to(float32) if A.dtype.itemsize < 4 else A
    norm1 = float(wide.detach().abs().sum(-2).amax())
    s = max(0, math.ceil(math.log2(norm1 / _THETA13))) if norm1 > _THETA13 else 0
    X = wide / (2 ** s) if s else wide
    from ._creation import eye
    b, I = _PADE13, eye(n, dtype=wide.dtype)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * I)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * I
    R = solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R.to(A.dtype)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


LINALG = {"cholesky": cholesky, "cholesky_ex": cholesky_ex, "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex,
          "lu": lu, "lu_solve": lu_solve, "solve": solve, "solve_ex": solve_ex, "solve_triangular": solve_triangular,
          "inv": inv, "inv_ex": inv_ex, "det": det, "slogdet": slogdet, "eigh": eigh, "eigvalsh": eigvalsh,
          "eig": eig, "eigvals": eigvals,
          "svd": svd, "svdvals": svdvals, "qr": qr, "pinv": pinv, "matrix_rank": matrix_rank,
          "matrix_power": matrix_power, "cond": cond, "tensorinv": tensorinv, "tensorsolve": tensorsolve,
          "vander": vander, "diagonal": diagonal, "householder_product": householder_product,
          "matrix_exp": matrix_exp, "lstsq": lstsq, "ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex,
          "ldl_solve": ldl_solve, "LinAlgError": LinAlgError}

# ---- randomized low-rank SVD and PCA: PyTorch's torch/_lowrank.py (Halko et al. 2009), dense tensors ----

def _approximate_basis(A, q, niter, M):
    """Q with q orthonormal columns whose span approximates A's (minus M's) range; R ~ randn, so the
    result follows torch.manual_seed as PyTorch's does."""
    from ._random import randn
    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=A.dtype if A.dtype in (float16, float32, float64) else float32)
    X = A @ R if M is None else A @ R - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q
        Q = qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A, M = A.mH, None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)


# torch.<name> (and Tensor.<name> where PyTorch has the method)
FUNCTIONS = {"cholesky": torch_cholesky, "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
             "inverse": inv, "det": det, "logdet": logdet, "slogdet": torch_slogdet, "svd": torch_svd, "qr": torch_qr,
             "pinverse": pinverse, "matrix_power": matrix_power, "triangular_solve": triangular_solve,
             "lu": torch_lu, "lu_solve": torch_lu_solve, "lu_unpack": lu_unpack, "matrix_exp": matrix_exp,
             "orgqr": householder_product, "svd_lowrank": svd_lowrank, "pca_lowrank": pca_lowrank, "geqrf": geqrf,
             "ormqr": ormqr}
METHODS = {k: FUNCTIONS[k] for k in ("cholesky", "cholesky_solve", "cholesky_inverse", "inverse", "det", "logdet",
                                     "slogdet", "svd", "qr", "pinverse", "matrix_power", "triangular_solve", "lu",
                                     "lu_solve", "matrix_exp", "orgqr", "geqrf", "ormqr")}
