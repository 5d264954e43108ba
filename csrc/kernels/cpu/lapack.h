/* lapack.h — the matrix factorisation kernels of lapack.c, without autograd (internal).
 * autograd/formulas_lapack.c wraps each as the public mt_linalg_* entry point. */
#ifndef MT_LAPACK_H
#define MT_LAPACK_H

#include "../../core/internal.h"

/* how an op checks its input A, in PyTorch's order: dims, square, float, low precision, kernel dtype */
typedef struct {
    const char *name;    /* "linalg.cholesky": the prefix of every message */
    const char *kernel;  /* "cholesky_cpu": NotImplementedError for dtypes without a LAPACK routine */
    int square;          /* "A must be batches of square matrices" */
    int float_check;     /* "Expected a floating point or complex tensor as input" */
    int low_precision;   /* "Low precision dtypes not supported" */
    const char *lu_dims; /* LU's own wording of the dims check ("torch.lu_factor") */
    const char *arg;     /* the argument named in the dims check (default "A") */
    int cplx;            /* complex64/complex128 have a kernel too */
} mt_lapack_check;
mt_status mt__lapack_check(const mt_lapack_check *c, mt_tensor *a);

/* a batch of column-major matrices, batches contiguous (the layout of linalg's results) */
mt_status mt__colmajor_empty(int nd, const int64_t *sz, int dtype, int device, mt_tensor **out);
/* PyTorch's linalg_solve_is_vector_rhs: B is a (batch of) vector(s) */
int mt__solve_vector_rhs(mt_tensor *a, mt_tensor *b);

mt_status mt__impl_linalg_cholesky_ex(mt_tensor *a, int upper, int check_errors, mt_tensor **L, mt_tensor **info);
mt_status mt__impl_linalg_lu_factor_ex(mt_tensor *a, int pivot, int check_errors, mt_tensor **LU, mt_tensor **pivots,
                                       mt_tensor **info);
mt_status mt__impl_linalg_lu_solve(mt_tensor *LU, mt_tensor *pivots, mt_tensor *b, int left, int adjoint,
                                   mt_tensor **result);
mt_status mt__impl_linalg_solve_ex(mt_tensor *a, mt_tensor *b, int left, int check_errors, mt_tensor **result,
                                   mt_tensor **info);
mt_status mt__impl_linalg_inv_ex(mt_tensor *a, int check_errors, mt_tensor **inverse, mt_tensor **info);
mt_status mt__impl_linalg_det(mt_tensor *a, mt_tensor **result);
mt_status mt__impl_linalg_slogdet(mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet);
mt_status mt__impl_linalg_solve_triangular(mt_tensor *a, mt_tensor *b, int upper, int left, int unitriangular,
                                           mt_tensor **result);
mt_status mt__impl_linalg_eigh(mt_tensor *a, int upper, int compute_v, mt_tensor **values, mt_tensor **vectors);
mt_status mt__impl_linalg_eig(mt_tensor *a, int compute_v, mt_tensor **values, mt_tensor **vectors);
mt_status mt__impl_linalg_svd(mt_tensor *a, int full_matrices, int compute_uv, mt_tensor **U, mt_tensor **S,
                              mt_tensor **Vh);
mt_status mt__impl_linalg_qr(mt_tensor *a, int mode, mt_tensor **Q, mt_tensor **R);
mt_status mt__impl_linalg_lstsq(mt_tensor *a, mt_tensor *b, int has_rcond, double rcond, int driver,
                                mt_tensor **solution, mt_tensor **residuals, mt_tensor **rank, mt_tensor **svals);
mt_status mt__impl_geqrf(mt_tensor *a, mt_tensor **A, mt_tensor **tau);
mt_status mt__impl_ormqr(mt_tensor *a, mt_tensor *tau, mt_tensor *c, int left, int transpose, mt_tensor **result);
mt_status mt__impl_linalg_ldl_factor_ex(mt_tensor *a, int hermitian, mt_tensor **LD, mt_tensor **pivots,
                                        mt_tensor **info);
mt_status mt__impl_linalg_ldl_solve(mt_tensor *LD, mt_tensor *pivots, mt_tensor *b, int hermitian,
                                    mt_tensor **result);

#endif
