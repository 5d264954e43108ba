/* lapack.c — matrix factorisations on OpenBLAS's LAPACK: cholesky, LU (and the solve, inverse
 * and determinants built on it), triangular solve, QR, the symmetric and general eigendecompositions, the
 * SVD and least squares. LAPACK is column-major, so each kernel works on a column-major copy of
 * its input (the layout PyTorch's linalg results have too) and calls the float32/float64 routine once per
 * matrix of the batch (those with mt_lapack_check.cplx, complex64/complex128 too: the LU family, eigh, SVD and
 * eig, whose results are complex for real input too). Checks and messages are PyTorch 2.13's, op by op;
 * per-matrix failures come back as LAPACK's info (an int32 tensor) or, when checked, as LinAlgError. These are the
 * kernels; autograd/formulas_lapack.c records them.
 *
 * QR (geqrf, orgqr/ungqr), the SVD (gesdd), eigh (syevd/heevd) and gels run on MKL's LAPACK instead when PyPI's
 * `mkl` is installed (mkl.c opens it; the Python layer names it at import) and it measured faster: at 2 threads
 * and more, and on small matrices at any count but gesdd with vectors (docs/PERFORMANCE.md "Session 26: LAPACK
 * engine"; lapack_for). The rest stays on OpenBLAS, which was as fast or faster there (LU, Cholesky, inverse,
 * solve, geev, gelsy). */
#include <cblas.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../autograd/formula.h"
#include "lapack.h"
#include "mkl.h"
#include "shape.h"

/* ---- LAPACK (Fortran ABI, 32-bit integers; trailing string lengths) ---------------------- */

void spotrf_(const char *, const int *, float *, const int *, int *, size_t);
void dpotrf_(const char *, const int *, double *, const int *, int *, size_t);
void sgetrf_(const int *, const int *, float *, const int *, int *, int *);
void dgetrf_(const int *, const int *, double *, const int *, int *, int *);
void sgetrs_(const char *, const int *, const int *, const float *, const int *, const int *, float *, const int *,
             int *, size_t);
void dgetrs_(const char *, const int *, const int *, const double *, const int *, const int *, double *, const int *,
             int *, size_t);
void sgetri_(const int *, float *, const int *, const int *, float *, const int *, int *);
void dgetri_(const int *, double *, const int *, const int *, double *, const int *, int *);
/* complex routines on (real, imaginary) pairs */
void cgetrf_(const int *, const int *, void *, const int *, int *, int *);
void zgetrf_(const int *, const int *, void *, const int *, int *, int *);
void cgetrs_(const char *, const int *, const int *, const void *, const int *, const int *, void *, const int *, int *,
             size_t);
void zgetrs_(const char *, const int *, const int *, const void *, const int *, const int *, void *, const int *, int *,
             size_t);
void cgetri_(const int *, void *, const int *, const int *, void *, const int *, int *);
void zgetri_(const int *, void *, const int *, const int *, void *, const int *, int *);
void sgeqrf_(const int *, const int *, float *, const int *, float *, float *, const int *, int *);
void dgeqrf_(const int *, const int *, double *, const int *, double *, double *, const int *, int *);
void sorgqr_(const int *, const int *, const int *, float *, const int *, const float *, float *, const int *, int *);
void dorgqr_(const int *, const int *, const int *, double *, const int *, const double *, double *, const int *,
             int *);
void ssyevd_(const char *, const char *, const int *, float *, const int *, float *, float *, const int *, int *,
             const int *, int *, size_t, size_t);
void dsyevd_(const char *, const char *, const int *, double *, const int *, double *, double *, const int *, int *,
             const int *, int *, size_t, size_t);
void sgesdd_(const char *, const int *, const int *, float *, const int *, float *, float *, const int *, float *,
             const int *, float *, const int *, int *, int *, size_t);
void dgesdd_(const char *, const int *, const int *, double *, const int *, double *, double *, const int *, double *,
             const int *, double *, const int *, int *, int *, size_t);

/* the Hermitian eigendecomposition, SVD and general eigendecomposition of complex matrices (rwork: real) */
void cheevd_(const char *, const char *, const int *, void *, const int *, float *, void *, const int *, float *,
             const int *, int *, const int *, int *, size_t, size_t);
void zheevd_(const char *, const char *, const int *, void *, const int *, double *, void *, const int *, double *,
             const int *, int *, const int *, int *, size_t, size_t);
void cgesdd_(const char *, const int *, const int *, void *, const int *, float *, void *, const int *, void *,
             const int *, void *, const int *, float *, int *, int *, size_t);
void zgesdd_(const char *, const int *, const int *, void *, const int *, double *, void *, const int *, void *,
             const int *, void *, const int *, double *, int *, int *, size_t);
void sgeev_(const char *, const char *, const int *, float *, const int *, float *, float *, float *, const int *,
            float *, const int *, float *, const int *, int *, size_t, size_t);
void dgeev_(const char *, const char *, const int *, double *, const int *, double *, double *, double *, const int *,
            double *, const int *, double *, const int *, int *, size_t, size_t);
void cgeev_(const char *, const char *, const int *, void *, const int *, void *, void *, const int *, void *,
            const int *, void *, const int *, float *, int *, size_t, size_t);
void zgeev_(const char *, const char *, const int *, void *, const int *, void *, void *, const int *, void *,
            const int *, void *, const int *, double *, int *, size_t, size_t);

void sgels_(const char *, const int *, const int *, const int *, float *, const int *, float *, const int *, float *,
            const int *, int *, size_t);
void dgels_(const char *, const int *, const int *, const int *, double *, const int *, double *, const int *,
            double *, const int *, int *, size_t);
void sgelsy_(const int *, const int *, const int *, float *, const int *, float *, const int *, int *, const float *,
             int *, float *, const int *, int *);
void dgelsy_(const int *, const int *, const int *, double *, const int *, double *, const int *, int *,
             const double *, int *, double *, const int *, int *);
void sgelsd_(const int *, const int *, const int *, float *, const int *, float *, const int *, float *, const float *,
             int *, float *, const int *, int *, int *);
void dgelsd_(const int *, const int *, const int *, double *, const int *, double *, const int *, double *,
             const double *, int *, double *, const int *, int *, int *);
void sgelss_(const int *, const int *, const int *, float *, const int *, float *, const int *, float *, const float *,
             int *, float *, const int *, int *);
void dgelss_(const int *, const int *, const int *, double *, const int *, double *, const int *, double *,
             const double *, int *, double *, const int *, int *);

/* complex cholesky and QR; LDL (sytrf/hetrf); Householder products (orgqr/ormqr and the unitary ones) */
void cpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void zpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void cgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void zgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void cungqr_(const int *, const int *, const int *, void *, const int *, const void *, void *, const int *, int *);
void zungqr_(const int *, const int *, const int *, void *, const int *, const void *, void *, const int *, int *);
void sormqr_(const char *, const char *, const int *, const int *, const int *, const float *, const int *,
             const float *, float *, const int *, float *, const int *, int *, size_t, size_t);
void dormqr_(const char *, const char *, const int *, const int *, const int *, const double *, const int *,
             const double *, double *, const int *, double *, const int *, int *, size_t, size_t);
void cunmqr_(const char *, const char *, const int *, const int *, const int *, const void *, const int *, const void *,
             void *, const int *, void *, const int *, int *, size_t, size_t);
void zunmqr_(const char *, const char *, const int *, const int *, const int *, const void *, const int *, const void *,
             void *, const int *, void *, const int *, int *, size_t, size_t);
void ssytrf_(const char *, const int *, float *, const int *, int *, float *, const int *, int *, size_t);
void dsytrf_(const char *, const int *, double *, const int *, int *, double *, const int *, int *, size_t);
void csytrf_(const char *, const int *, void *, const int *, int *, void *, const int *, int *, size_t);
void zsytrf_(const char *, const int *, void *, const int *, int *, void *, const int *, int *, size_t);
void chetrf_(const char *, const int *, void *, const int *, int *, void *, const int *, int *, size_t);
void zhetrf_(const char *, const int *, void *, const int *, int *, void *, const int *, int *, size_t);
void ssytrs_(const char *, const int *, const int *, const float *, const int *, const int *, float *, const int *,
             int *, size_t);
void dsytrs_(const char *, const int *, const int *, const double *, const int *, const int *, double *, const int *,
             int *, size_t);
void csytrs_(const char *, const int *, const int *, const void *, const int *, const int *, void *, const int *, int *,
             size_t);
void zsytrs_(const char *, const int *, const int *, const void *, const int *, const int *, void *, const int *, int *,
             size_t);
void chetrs_(const char *, const int *, const int *, const void *, const int *, const int *, void *, const int *, int *,
             size_t);
void zhetrs_(const char *, const int *, const int *, const void *, const int *, const int *, void *, const int *, int *,
             size_t);

/* ---- the engine of each routine: OpenBLAS's, or MKL's where it measured faster --------------------- */

#define MKL_ROUTINES(X)                                                                                              \
    X(sgeqrf) X(dgeqrf) X(cgeqrf) X(zgeqrf) X(sorgqr) X(dorgqr) X(cungqr) X(zungqr) X(sgesdd) X(dgesdd) X(cgesdd)  \
    X(zgesdd) X(ssyevd) X(dsyevd) X(cheevd) X(zheevd) X(sgels) X(dgels)

typedef struct {
#define FIELD(f) __typeof__(f##_) *f;
    MKL_ROUTINES(FIELD)
#undef FIELD
} lapack_fns;

static const lapack_fns openblas = {
#define INIT(f) .f = f##_,
    MKL_ROUTINES(INIT)
#undef INIT
};
static lapack_fns mkl;
static char mkl_path[4096]; /* set by mt_lapack_use_mkl before the first call */
static int engine = -1;     /* -1 not chosen, 0 OpenBLAS, 1 MKL */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

mt_status mt_lapack_use_mkl(const char *path) {
    pthread_mutex_lock(&engine_lock);
    if (engine < 0) snprintf(mkl_path, sizeof mkl_path, "%s", path ? path : "");
    pthread_mutex_unlock(&engine_lock);
    return MT_OK;
}

static int load_mkl(void) {
    void *h = mkl_path[0] ? mt__mkl_open(mkl_path) : NULL;
    if (!h) return 0;
#define SYM(f) && (*(void **)&mkl.f = dlsym(h, #f "_"))
    return 1 MKL_ROUTINES(SYM);
#undef SYM
}

const char *mt_lapack_engine(void) { return engine == 1 ? "mkl" : engine == 0 ? "openblas" : ""; }

/* the routines for an m x n problem: MKL's when it is there and runs on more than one thread, or when the
 * matrix is small and small_mkl says MKL was faster there (on one thread OpenBLAS's were as fast or up to 1.4x
 * faster from 512 x 512: gesdd without vectors, syevd); MKL's thread count is set for this call from ours */
static const lapack_fns *lapack_for(int64_t m, int64_t n, int small_mkl) {
    if (__atomic_load_n(&engine, __ATOMIC_ACQUIRE) < 0) {
        pthread_mutex_lock(&engine_lock);
        if (engine < 0) __atomic_store_n(&engine, load_mkl(), __ATOMIC_RELEASE);
        pthread_mutex_unlock(&engine_lock);
    }
    if (engine != 1) return &openblas;
    int small = m <= 64 && n <= 64;
    if (small) return small_mkl ? (mt__mkl_threads(1), &mkl) : &openblas;
    return mt__mkl_threads(mt_get_num_threads()) > 1 ? &mkl : &openblas;
}

/* ---- checks ------------------------------------------------------------------------------- */

mt_status mt__lapack_check(const mt_lapack_check *c, mt_tensor *a) {
    if (a->ndim < 2) {
        if (c->lu_dims)
            return mt__error(MT_ERR_RUNTIME, "%s: Expected tensor with 2 or more dimensions. Got size: [%lld] instead",
                             c->lu_dims, (long long)(a->ndim ? a->sizes[0] : 1));
        return mt__error(MT_ERR_RUNTIME, "%s: The input tensor %s must have at least 2 dimensions.", c->name,
                         c->arg ? c->arg : "A");
    }
    int64_t m = a->sizes[a->ndim - 2], n = a->sizes[a->ndim - 1];
    if (c->square && m != n)
        return mt__error(MT_ERR_RUNTIME, "%s: A must be batches of square matrices, but they are %lld by %lld matrices",
                         c->name, (long long)m, (long long)n);
    if (c->float_check && !mt__is_float(a->dtype) && !mt__is_complex(a->dtype))
        return mt__error(MT_ERR_RUNTIME, "%s: Expected a floating point or complex tensor as input. Got %s", c->name,
                         mt_dtype_names[a->dtype]);
    if (c->low_precision && (a->dtype == MT_F16 || a->dtype == MT_BF16))
        return mt__error(MT_ERR_RUNTIME, "%s: Low precision dtypes not supported. Got %s", c->name,
                         mt_dtype_names[a->dtype]);
    if (a->dtype != MT_F32 && a->dtype != MT_F64 && !(c->cplx && mt__is_complex(a->dtype)))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", c->kernel,
                         mt_dtype_names[a->dtype]);
    if (m > INT_MAX || n > INT_MAX || m * n > INT_MAX)
        return mt__error(MT_ERR_RUNTIME, "%s: matrices of %lld by %lld are too large for LAPACK's 32-bit indices",
                         c->name, (long long)m, (long long)n);
    return MT_OK;
}

/* "name: (Batch element i): <what>" when the input is batched, else "name: <what>" */
__attribute__((format(printf, 5, 6))) static mt_status failed(int kind, const char *name, const mt_tensor *a,
                                                               int64_t i, const char *fmt, ...) {
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (a->ndim > 2) return mt__error(kind, "%s: (Batch element %lld): %s", name, (long long)i, what);
    return mt__error(kind, "%s: %s", name, what);
}

static mt_status not_converged(const char *name, const char *what, const mt_tensor *a, int64_t i, int info) {
    return failed(MT_ERR_LINALG, name, a, i, "The algorithm failed to converge because the input matrix is "
                  "ill-conditioned or has too many repeated %s (error code: %d).", what, info);
}

/* ---- column-major batches ------------------------------------------------------------------- */

/* strides of a batch of column-major matrices, batches contiguous (PyTorch's linalg result layout) */
static void colmajor_strides(int nd, const int64_t *sz, int64_t *st) {
    uint64_t acc = 1; /* unsigned: an empty batch may have huge other dims (those strides are unused) */
    st[nd - 2] = 1;
    acc *= (uint64_t)(sz[nd - 2] > 1 ? sz[nd - 2] : 1);
    st[nd - 1] = (int64_t)acc;
    acc *= (uint64_t)(sz[nd - 1] > 1 ? sz[nd - 1] : 1);
    for (int d = nd - 3; d >= 0; d--) {
        st[d] = (int64_t)acc;
        acc *= (uint64_t)(sz[d] > 1 ? sz[d] : 1);
    }
}

/* LAPACK's operands keep 64 readable bytes past their end: OpenBLAS 0.3.21's (Debian 12) complex gemv
 * kernels for AVX-512 read an element past the trailing submatrix that clarf hands them (fuzz round 13c:
 * a SEGV under ASan at an unmapped page after a 4x4 complex64 matrix) */
mt_status mt__colmajor_empty(int nd, const int64_t *sz, int dtype, int device, mt_tensor **out) {
    int64_t st[MT_MAX_DIMS];
    colmajor_strides(nd, sz, st);
    return mt__alloc_padded(nd, sz, st, dtype, device, 64, out);
}

/* a copy of a broadcast to sizes (nd dims), column-major; on meta only the header */
static mt_status colmajor_copy(mt_tensor *a, int nd, const int64_t *sz, mt_tensor **out) {
    MT_TRY(mt__colmajor_empty(nd, sz, a->dtype, a->device, out));
    if (a->device == MT_META) return MT_OK;
    mt_status st = mt__impl_copy_(*out, a);
    if (st) MT_DROP(*out);
    return st;
}

static mt_status new_tensor(int nd, const int64_t *sz, int dtype, int device, mt_tensor **out) {
    return mt__alloc(nd, sz, NULL, dtype, device, out);
}

static int64_t batch_count(int nd, const int64_t *sz) { return mt__numel(nd - 2, sz); }

static char *mat(mt_tensor *w, int64_t i) {
    int64_t m = w->sizes[w->ndim - 2], n = w->sizes[w->ndim - 1];
    return mt__data(w) + i * m * n * (int64_t)mt_dtype_itemsize(w->dtype);
}

/* zero the triangle of a column-major n x n matrix that a factor leaves untouched */
static void zero_triangle(int dt, char *p, int64_t n, int keep_upper) {
    size_t isz = (size_t)mt_dtype_itemsize(dt);
    for (int64_t c = 0; c < n; c++) /* column c: rows above the diagonal (keep lower) or below it */
        if (keep_upper) memset(p + (c * n + c + 1) * (int64_t)isz, 0, (size_t)(n - c - 1) * isz);
        else memset(p + c * n * (int64_t)isz, 0, (size_t)c * isz);
}

static double get(int dt, const char *p, int64_t i) { return dt == MT_F32 ? ((const float *)p)[i] : ((const double *)p)[i]; }
static void put(int dt, char *p, int64_t i, double v) {
    if (dt == MT_F32) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
}

/* part 0 (real) or 1 (imaginary) of a complex entry, and the entry written */
static double cget(int dt, const char *p, int64_t i, int part) {
    return dt == MT_C64 ? ((const float *)p)[2 * i + part] : ((const double *)p)[2 * i + part];
}
static void cput(int dt, char *p, int64_t i, double re, double im) {
    if (dt == MT_C64) ((float *)p)[2 * i] = (float)re, ((float *)p)[2 * i + 1] = (float)im;
    else ((double *)p)[2 * i] = re, ((double *)p)[2 * i + 1] = im;
}

/* ---- cholesky --------------------------------------------------------------------------------- */

static const mt_lapack_check CHOLESKY = {"linalg.cholesky", "cholesky_cpu", .square = 1, .float_check = 1, .cplx = 1};

mt_status mt__impl_linalg_cholesky_ex(mt_tensor *a, int upper, int check_errors, mt_tensor **L, mt_tensor **info) {
    MT_TRY(mt__lapack_check(&CHOLESKY, a));
    int nd = a->ndim, n = (int)a->sizes[nd - 1], lda = n > 1 ? n : 1;
    mt_tensor *w = NULL, *inf = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 2, a->sizes, MT_I32, a->device, &inf);
    if (st || a->device == MT_META) goto done;
    int64_t nb = batch_count(nd, a->sizes), bad = -1;
    int32_t *ip = (int32_t *)mt__data(inf);
    char uplo = upper ? 'U' : 'L';
    for (int64_t i = 0; i < nb; i++) {
        int r = 0;
        if (n) {
            switch (a->dtype) {
            case MT_F32: spotrf_(&uplo, &n, (float *)mat(w, i), &lda, &r, 1); break;
            case MT_F64: dpotrf_(&uplo, &n, (double *)mat(w, i), &lda, &r, 1); break;
            case MT_C64: cpotrf_(&uplo, &n, mat(w, i), &lda, &r, 1); break;
            default: zpotrf_(&uplo, &n, mat(w, i), &lda, &r, 1);
            }
            zero_triangle(a->dtype, mat(w, i), n, upper);
        }
        ip[i] = r;
        if (r > 0 && bad < 0) bad = i;
    }
    if (check_errors && bad >= 0)
        st = failed(MT_ERR_LINALG, "linalg.cholesky", a, bad,
                    "The factorization could not be completed because the input is not positive-definite (the "
                    "leading minor of order %d is not positive-definite).", ip[bad]);
done:
    if (st) { MT_DROP(w); MT_DROP(inf); return st; }
    *L = w;
    *info = inf;
    return MT_OK;
}

/* ---- LU ------------------------------------------------------------------------------------------ */

static const mt_lapack_check LU = {"torch.linalg.lu_factor", "lu_cpu", .lu_dims = "torch.lu_factor", .cplx = 1};

/* LU with partial pivoting of every matrix of w (column-major, in place); pivots [batch, min(m,n)] int32
 * (1-based, LAPACK's), info [batch] */
static void getrf_batch(mt_tensor *w, int32_t *piv, int32_t *info) {
    int nd = w->ndim, m = (int)w->sizes[nd - 2], n = (int)w->sizes[nd - 1], lda = m > 1 ? m : 1, k = m < n ? m : n;
    int64_t nb = batch_count(nd, w->sizes);
    for (int64_t i = 0; i < nb; i++) {
        int r = 0;
        if (k) {
            switch (w->dtype) {
            case MT_F32: sgetrf_(&m, &n, (float *)mat(w, i), &lda, piv + i * k, &r); break;
            case MT_F64: dgetrf_(&m, &n, (double *)mat(w, i), &lda, piv + i * k, &r); break;
            case MT_C64: cgetrf_(&m, &n, mat(w, i), &lda, piv + i * k, &r); break;
            default: zgetrf_(&m, &n, mat(w, i), &lda, piv + i * k, &r);
            }
        }
        info[i] = r;
    }
}

mt_status mt__impl_linalg_lu_factor_ex(mt_tensor *a, int pivot, int check_errors, mt_tensor **LU_, mt_tensor **pivots,
                                       mt_tensor **info) {
    MT_TRY(mt__lapack_check(&LU, a));
    if (!pivot) return mt__error(MT_ERR_RUNTIME, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
    int nd = a->ndim;
    int64_t m = a->sizes[nd - 2], n = a->sizes[nd - 1], psz[MT_MAX_DIMS];
    memcpy(psz, a->sizes, sizeof psz);
    psz[nd - 2] = m < n ? m : n;
    mt_tensor *w = NULL, *piv = NULL, *inf = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, psz, MT_I32, a->device, &piv);
    if (!st) st = new_tensor(nd - 2, a->sizes, MT_I32, a->device, &inf);
    if (st || a->device == MT_META) goto done;
    int32_t *ip = (int32_t *)mt__data(inf);
    getrf_batch(w, (int32_t *)mt__data(piv), ip);
    int64_t nb = batch_count(nd, a->sizes);
    for (int64_t i = 0; check_errors && i < nb; i++)
        if (ip[i] > 0) {
            st = failed(MT_ERR_RUNTIME, LU.name, a, i,
                        "U[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you "
                        "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                        "linalg.lu_factor_ex(A, pivot)", ip[i], ip[i]);
            break;
        }
done:
    if (st) { MT_DROP(w); MT_DROP(piv); MT_DROP(inf); return st; }
    *LU_ = w;
    *pivots = piv;
    *info = inf;
    return MT_OK;
}

/* The batch shape of A and B broadcast, with A's and B's matrix dims appended into sa / sb. */
static mt_status broadcast_batch(mt_tensor *a, mt_tensor *b, int *nd, int64_t *sa, int64_t *sb) {
    int na = a->ndim - 2, nb = b->ndim - 2, n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a->sizes[i - (n - na)], y = i < n - nb ? 1 : b->sizes[i - (n - nb)];
        if (x != y && x != 1 && y != 1)
            return mt__error(MT_ERR_RUNTIME,
                             "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                             "dimension %d", (long long)y, (long long)x, i); /* B first, as PyTorch */
        sa[i] = sb[i] = x == 1 ? y : x;
    }
    sa[n] = a->sizes[a->ndim - 2], sa[n + 1] = a->sizes[a->ndim - 1];
    sb[n] = b->sizes[b->ndim - 2], sb[n + 1] = b->sizes[b->ndim - 1];
    *nd = n + 2;
    return MT_OK;
}

/* negate the imaginary parts of a complex tensor's buffer (contiguous, as the kernels' work copies) */
static void conj_buffer(mt_tensor *x) {
    if (!mt__is_complex(x->dtype)) return;
    int64_t n = mt_tensor_numel(x);
    for (int64_t e = 0; e < n; e++) {
        if (x->dtype == MT_C64) ((float *)mt__data(x))[2 * e + 1] *= -1;
        else ((double *)mt__data(x))[2 * e + 1] *= -1;
    }
}

/* X = op(A)^-1 B for every matrix: lu, piv from getrf_batch, x column-major (overwritten); tr: LAPACK's
 * 'N', 'T' or 'C' (the conjugate transpose), or 'c' for conj(A) (no LAPACK mode: conj(A) X = B is
 * A conj(X) = conj(B)) */
static void getrs_batch(mt_tensor *lu, const int32_t *piv, mt_tensor *x, char tr) {
    int nd = x->ndim, n = (int)x->sizes[nd - 2], k = (int)x->sizes[nd - 1], ld = n > 1 ? n : 1;
    int64_t nb = batch_count(nd, x->sizes);
    int conj = tr == 'c' && mt__is_complex(x->dtype);
    if (tr == 'c') tr = 'N';
    if (!mt__is_complex(x->dtype) && tr == 'C') tr = 'T';
    if (conj) conj_buffer(x);
    for (int64_t i = 0; i < nb && n && k; i++) {
        int r = 0;
        switch (x->dtype) {
        case MT_F32: sgetrs_(&tr, &n, &k, (const float *)mat(lu, i), &ld, piv + i * n, (float *)mat(x, i), &ld, &r, 1); break;
        case MT_F64: dgetrs_(&tr, &n, &k, (const double *)mat(lu, i), &ld, piv + i * n, (double *)mat(x, i), &ld, &r, 1); break;
        case MT_C64: cgetrs_(&tr, &n, &k, mat(lu, i), &ld, piv + i * n, mat(x, i), &ld, &r, 1); break;
        default: zgetrs_(&tr, &n, &k, mat(lu, i), &ld, piv + i * n, mat(x, i), &ld, &r, 1);
        }
    }
    if (conj) conj_buffer(x);
}

static const mt_lapack_check SOLVE = {"linalg.solve", "lu_cpu", .square = 1, .float_check = 1, .cplx = 1};

/* PyTorch's linalg_solve_is_vector_rhs */
int mt__solve_vector_rhs(mt_tensor *a, mt_tensor *b) {
    return b->ndim == 1 ||
           (b->ndim == a->ndim - 1 && !memcmp(b->sizes, a->sizes, (size_t)b->ndim * sizeof(int64_t)));
}

static mt_status incompatible(const char *name, int left, mt_tensor *a, mt_tensor *b) {
    int nb = b->ndim;
    return mt__error(MT_ERR_RUNTIME, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                     name, left ? "AX = B" : "XA = B", (long long)a->sizes[a->ndim - 2],
                     (long long)a->sizes[a->ndim - 1], (long long)b->sizes[nb - 2], (long long)b->sizes[nb - 1]);
}

static mt_status dtype_mismatch(const char *name, mt_tensor *a, mt_tensor *b) {
    return mt__error(MT_ERR_RUNTIME,
                     "%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                     name, mt_dtype_names[a->dtype], mt_dtype_names[b->dtype]);
}

/* solve A X = B (left) or X A = B; B a vector or a batch of matrices (PyTorch's vector rule) */
mt_status mt__impl_linalg_solve_ex(mt_tensor *a, mt_tensor *b, int left, int check_errors, mt_tensor **result,
                                   mt_tensor **info) {
    MT_TRY(mt__lapack_check(&SOLVE, a));
    if (a->dtype != b->dtype) return dtype_mismatch("linalg.solve", a, b);
    MT_TRY(mt__same_device(a, b)); /* a meta operand beside a CPU one has no data to read */
    int vec = mt__solve_vector_rhs(a, b);
    mt_tensor *b2 = NULL, *lu = NULL, *piv = NULL, *inf = NULL, *x = NULL, *r = NULL;
    mt_status st = vec ? mt__impl_unsqueeze(b, left ? -1 : -2, &b2) : (mt_tensor_retain(b), b2 = b, MT_OK);
    if (st) return st;
    int nd = 0;
    int64_t n = a->sizes[a->ndim - 1], sa[MT_MAX_DIMS], sb[MT_MAX_DIMS], psz[MT_MAX_DIMS];
    if (b2->ndim < 2) { /* a 0-dim B (a 1-D one is a vector, unsqueezed above) */
        st = mt__error(MT_ERR_RUNTIME, "linalg.solve: The input tensor B must have at least 2 dimensions.");
        goto done;
    }
    if (b2->sizes[b2->ndim - (left ? 2 : 1)] != n) { st = incompatible("linalg.solve", left, a, b2); goto done; }
    if ((st = broadcast_batch(a, b2, &nd, sa, sb))) goto done;
    /* X A = B is A^T X^T = B^T: solve with the transposed LU on B^T */
    if (!left) {
        int64_t t = sb[nd - 2]; sb[nd - 2] = sb[nd - 1]; sb[nd - 1] = t;
    }
    memcpy(psz, sa, sizeof psz);
    if ((st = colmajor_copy(a, nd, sa, &lu))) goto done;
    if ((st = new_tensor(nd - 1, psz, MT_I32, a->device, &piv))) goto done;
    if ((st = new_tensor(nd - 2, sa, MT_I32, a->device, &inf))) goto done;
    if (left) st = colmajor_copy(b2, nd, sb, &x);
    else {
        mt_tensor *bt = NULL;
        st = mt__impl_transpose(b2, -2, -1, &bt);
        if (!st) st = colmajor_copy(bt, nd, sb, &x);
        mt_tensor_release(bt);
    }
    if (st) goto done;
    if (a->device != MT_META) {
        int32_t *ip = (int32_t *)mt__data(inf);
        getrf_batch(lu, (int32_t *)mt__data(piv), ip);
        getrs_batch(lu, (int32_t *)mt__data(piv), x, left ? 'N' : 'T');
        int64_t nbat = batch_count(nd, sa);
        for (int64_t i = 0; check_errors && i < nbat; i++)
            if (ip[i] > 0) {
                st = failed(MT_ERR_LINALG, "torch.linalg.solve", a, i,
                            "The solver failed because the input matrix is singular.");
                goto done;
            }
    }
    st = left ? (mt_tensor_retain(x), r = x, MT_OK) : mt__impl_transpose(x, -2, -1, &r);
    if (!st && vec) {
        mt_tensor *s = NULL;
        st = mt__impl_squeeze(r, 1, (int64_t[]){left ? -1 : -2}, &s);
        mt_tensor_release(r);
        r = s;
    }
done:
    mt_tensor_release(b2); mt_tensor_release(lu); mt_tensor_release(piv); mt_tensor_release(x);
    if (st) { mt_tensor_release(inf); mt_tensor_release(r); return st; }
    *result = r;
    *info = inf;
    return MT_OK;
}

static const mt_lapack_check LU_SOLVE = {"torch.linalg.lu_solve", "linalg.lu_solve_cpu", .square = 1, .float_check = 1, .cplx = 1};

/* linalg.lu_solve: X from lu_factor's LU and pivots; adjoint solves A^H X = B */
mt_status mt__impl_linalg_lu_solve(mt_tensor *LU_, mt_tensor *pivots, mt_tensor *b, int left, int adjoint,
                                   mt_tensor **result) {
    MT_TRY(mt__lapack_check(&LU_SOLVE, LU_));
    if (b->ndim < 2)
        return mt__error(MT_ERR_RUNTIME, "linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
    if (LU_->dtype != b->dtype) return dtype_mismatch("linalg.lu_solve", LU_, b);
    MT_TRY(mt__same_device(LU_, b));
    MT_TRY(mt__same_device(LU_, pivots));
    if (pivots->dtype != MT_I32)
        return mt__error(MT_ERR_RUNTIME, "linalg.lu_solve: pivots should be a Tensor of scalar type int32");
    int64_t n = LU_->sizes[LU_->ndim - 1];
    if (b->sizes[b->ndim - (left ? 2 : 1)] != n) return incompatible("linalg.lu_solve", left, LU_, b);
    if (pivots->ndim == 0) /* PyTorch reads pivots.size(-1) */
        return mt__error(MT_ERR_INDEX, "Dimension specified as -1 but tensor has no dimensions");
    if (pivots->ndim != LU_->ndim - 1 || pivots->sizes[pivots->ndim - 1] != n ||
        memcmp(pivots->sizes, LU_->sizes, (size_t)(LU_->ndim - 2) * sizeof(int64_t)))
        return mt__error(MT_ERR_RUNTIME, "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same");
    int nd = 0;
    int64_t sa[MT_MAX_DIMS], sb[MT_MAX_DIMS], psz[MT_MAX_DIMS];
    MT_TRY(broadcast_batch(LU_, b, &nd, sa, sb));
    if (!left) { int64_t t = sb[nd - 2]; sb[nd - 2] = sb[nd - 1]; sb[nd - 1] = t; }
    memcpy(psz, sa, sizeof psz);
    mt_tensor *lu = NULL, *piv = NULL, *x = NULL, *bt = NULL;
    mt_status st = colmajor_copy(LU_, nd, sa, &lu);
    if (!st) st = new_tensor(nd - 1, psz, MT_I32, LU_->device, &piv);
    if (!st && LU_->device != MT_META) st = mt__impl_copy_(piv, pivots);
    if (!st) st = left ? (mt_tensor_retain(b), bt = b, MT_OK) : mt__impl_transpose(b, -2, -1, &bt);
    if (!st) st = colmajor_copy(bt, nd, sb, &x);
    if (!st && LU_->device != MT_META) {
        const int32_t *p = (const int32_t *)mt__data(piv);
        for (int64_t i = 0; i < mt_tensor_numel(piv); i++)
            if (p[i] < 1 || p[i] > n) { st = mt__error(MT_ERR_RUNTIME, "linalg.lu_solve: pivots out of range"); break; }
        /* left: A or A^H; right: X A = B is A^T X^T = B^T, X A^H = B is conj(A) X^T = B^T */
        if (!st) getrs_batch(lu, p, x, left ? (adjoint ? 'C' : 'N') : (adjoint ? 'c' : 'T'));
    }
    if (!st) st = left ? (mt_tensor_retain(x), *result = x, MT_OK) : mt__impl_transpose(x, -2, -1, result);
    mt_tensor_release(lu); mt_tensor_release(piv); mt_tensor_release(x); mt_tensor_release(bt);
    return st;
}

/* ---- inverse, determinants ------------------------------------------------------------------------ */

static const mt_lapack_check INV = {"linalg.inv", "lu_cpu", .square = 1, .float_check = 1, .low_precision = 1, .cplx = 1};

mt_status mt__impl_linalg_inv_ex(mt_tensor *a, int check_errors, mt_tensor **inverse, mt_tensor **info) {
    MT_TRY(mt__lapack_check(&INV, a));
    int nd = a->ndim, n = (int)a->sizes[nd - 1], ld = n > 1 ? n : 1;
    int64_t psz[MT_MAX_DIMS];
    memcpy(psz, a->sizes, sizeof psz);
    mt_tensor *w = NULL, *piv = NULL, *inf = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, psz, MT_I32, a->device, &piv);
    if (!st) st = new_tensor(nd - 2, a->sizes, MT_I32, a->device, &inf);
    if (st || a->device == MT_META) goto done;
    int32_t *ip = (int32_t *)mt__data(inf), *pp = (int32_t *)mt__data(piv);
    getrf_batch(w, pp, ip);
    int64_t nb = batch_count(nd, a->sizes), bad = -1;
    int lwork = n * 64 > 1 ? n * 64 : 1;
    void *work = n ? malloc((size_t)lwork * (size_t)mt_dtype_itemsize(a->dtype)) : NULL;
    if (n && !work) { st = mt__error(MT_ERR_OOM, "linalg.inv: out of memory for the workspace"); goto done; }
    for (int64_t i = 0; i < nb && n; i++) {
        if (ip[i] > 0) {
            if (bad < 0) bad = i;
            continue;
        }
        int r = 0;
        switch (a->dtype) {
        case MT_F32: sgetri_(&n, (float *)mat(w, i), &ld, pp + i * n, (float *)work, &lwork, &r); break;
        case MT_F64: dgetri_(&n, (double *)mat(w, i), &ld, pp + i * n, (double *)work, &lwork, &r); break;
        case MT_C64: cgetri_(&n, mat(w, i), &ld, pp + i * n, work, &lwork, &r); break;
        default: zgetri_(&n, mat(w, i), &ld, pp + i * n, work, &lwork, &r);
        }
    }
    free(work);
    if (check_errors && bad >= 0)
        st = failed(MT_ERR_LINALG, "linalg.inv", a, bad,
                    "The diagonal element %d is zero, the inversion could not be completed because the input "
                    "matrix is singular.", ip[bad]);
done:
    mt_tensor_release(piv);
    if (st) { MT_DROP(w); MT_DROP(inf); return st; }
    *inverse = w;
    *info = inf;
    return MT_OK;
}

static const mt_lapack_check DET = {"linalg.det", "lu_cpu", .square = 1, .float_check = 1, .cplx = 1};
static const mt_lapack_check SLOGDET = {"linalg.slogdet", "lu_cpu", .square = 1, .float_check = 1, .low_precision = 1,
                                        .cplx = 1};

/* det (logabs == NULL) or slogdet's sign and log|det| of every matrix, from its LU */
static mt_status determinants(const mt_lapack_check *c, mt_tensor *a, mt_tensor **det, mt_tensor **logabs) {
    MT_TRY(mt__lapack_check(c, a));
    int nd = a->ndim;
    int64_t n = a->sizes[nd - 1], psz[MT_MAX_DIMS];
    memcpy(psz, a->sizes, sizeof psz);
    mt_tensor *w = NULL, *piv = NULL, *inf = NULL, *d = NULL, *l = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, psz, MT_I32, a->device, &piv);
    if (!st) st = new_tensor(nd - 2, a->sizes, MT_I32, a->device, &inf);
    if (!st) st = new_tensor(nd - 2, a->sizes, a->dtype, a->device, &d);
    int real_dt = mt__complex_to_real(a->dtype); /* log|det| is real */
    if (!st && logabs) st = new_tensor(nd - 2, a->sizes, real_dt, a->device, &l);
    if (st || a->device == MT_META) goto done;
    getrf_batch(w, (int32_t *)mt__data(piv), (int32_t *)mt__data(inf));
    int64_t nb = batch_count(nd, a->sizes);
    const int32_t *pp = (const int32_t *)mt__data(piv);
    for (int64_t i = 0; mt__is_complex(a->dtype) && i < nb; i++) {
        /* det: the product of U's diagonal; slogdet: the product of its phases u/|u| and the sum of log|u| */
        const char *p = mat(w, i);
        double re = 1, im = 0, logsum = 0;
        for (int64_t j = 0; j < n; j++) {
            double ur = cget(a->dtype, p, j * n + j, 0), ui = cget(a->dtype, p, j * n + j, 1);
            if (logabs) {
                double mag = hypot(ur, ui);
                logsum += log(mag);
                ur = mag ? ur / mag : 0, ui = mag ? ui / mag : 0;
            }
            double t = re * ur - im * ui;
            im = re * ui + im * ur, re = t;
            if (pp[i * n + j] != j + 1) re = -re, im = -im;
        }
        cput(a->dtype, mt__data(d), i, re, im);
        if (logabs) put(real_dt, mt__data(l), i, logsum);
    }
    for (int64_t i = 0; !mt__is_complex(a->dtype) && i < nb; i++) {
        const char *p = mat(w, i);
        double prod = 1, sign = 1, logsum = 0;
        for (int64_t j = 0; j < n; j++) {
            double u = get(a->dtype, p, j * n + j);
            if (pp[i * n + j] != j + 1) sign = -sign;
            if (logabs) {
                sign = u < 0 ? -sign : u == 0 ? 0 : sign;
                logsum += log(fabs(u));
            } else {
                prod *= u;
            }
        }
        if (logabs) {
            put(a->dtype, mt__data(d), i, isnan(logsum) ? NAN : sign);
            put(a->dtype, mt__data(l), i, logsum);
        } else {
            put(a->dtype, mt__data(d), i, sign * prod);
        }
    }
done:
    mt_tensor_release(w); mt_tensor_release(piv); mt_tensor_release(inf);
    if (st) { mt_tensor_release(d); mt_tensor_release(l); return st; }
    *det = d;
    if (logabs) *logabs = l;
    return MT_OK;
}

mt_status mt__impl_linalg_det(mt_tensor *a, mt_tensor **result) { return determinants(&DET, a, result, NULL); }
mt_status mt__impl_linalg_slogdet(mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet) {
    return determinants(&SLOGDET, a, sign, logabsdet);
}

/* ---- triangular solve (BLAS trsm) ------------------------------------------------------------------ */

static const mt_lapack_check TRI = {"linalg.solve_triangular", "triangular_solve_cpu", .square = 1, .cplx = 1};

mt_status mt__impl_linalg_solve_triangular(mt_tensor *a, mt_tensor *b, int upper, int left, int unitriangular,
                                           mt_tensor **result) {
    if (a->ndim < 2) return mt__lapack_check(&TRI, a);
    if (b->ndim < 2)
        return mt__error(MT_ERR_RUNTIME, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
    MT_TRY(mt__lapack_check(&TRI, a));
    if (b->dtype != MT_F32 && b->dtype != MT_F64 && !mt__is_complex(b->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"triangular_solve_cpu\" not implemented for '%s'",
                         mt_dtype_names[b->dtype]);
    int64_t n = a->sizes[a->ndim - 1];
    if (b->sizes[b->ndim - (left ? 2 : 1)] != n) return incompatible("linalg.solve_triangular", left, a, b);
    int nd = 0;
    int64_t sa[MT_MAX_DIMS], sb[MT_MAX_DIMS];
    MT_TRY(broadcast_batch(a, b, &nd, sa, sb));
    /* PyTorch computes in A's dtype */
    mt_tensor *w = NULL, *x = NULL;
    mt_status st = colmajor_copy(a, nd, sa, &w);
    if (!st) st = mt__colmajor_empty(nd, sb, a->dtype, a->device, &x);
    if (!st && a->device != MT_META) st = mt__impl_copy_(x, b);
    if (!st && a->device != MT_META) {
        int m = (int)sb[nd - 2], k = (int)sb[nd - 1], lda = n > 1 ? (int)n : 1, ldb = m > 1 ? m : 1;
        int64_t nb = batch_count(nd, sb);
        enum CBLAS_SIDE side = left ? CblasLeft : CblasRight;
        enum CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
        enum CBLAS_DIAG diag = unitriangular ? CblasUnit : CblasNonUnit;
        static const float one_c[2] = {1, 0};
        static const double one_z[2] = {1, 0};
        for (int64_t i = 0; i < nb && m && k; i++) {
            switch (a->dtype) {
            case MT_F32:
                cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, k, 1.0f, (const float *)mat(w, i), lda,
                            (float *)mat(x, i), ldb);
                break;
            case MT_F64:
                cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, k, 1.0, (const double *)mat(w, i), lda,
                            (double *)mat(x, i), ldb);
                break;
            case MT_C64:
                cblas_ctrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, k, one_c, (const void *)mat(w, i), lda,
                            (void *)mat(x, i), ldb);
                break;
            default:
                cblas_ztrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, k, one_z, (const void *)mat(w, i), lda,
                            (void *)mat(x, i), ldb);
            }
        }
    }
    mt_tensor_release(w);
    if (st) { mt_tensor_release(x); return st; }
    *result = x;
    return MT_OK;
}

/* ---- workspaces, non-finite input -------------------------------------------------------------------- */

/* the size a workspace query wrote into q[0] (a float from the float32 and complex64 routines), plus one */
static int query_size(int dt, const double *q) {
    float f;
    memcpy(&f, q, sizeof f);
    return (int)(dt == MT_F32 || dt == MT_C64 ? f : q[0]) + 1;
}

/* whether count entries at p hold a NaN (or, with inf_too, an infinity), complex entries in either part */
static int non_finite(int dt, const char *p, int64_t count, int inf_too) {
    int64_t reals = mt__is_complex(dt) ? 2 * count : count;
    int single = dt == MT_F32 || dt == MT_C64;
    for (int64_t e = 0; e < reals; e++) {
        double v = single ? ((const float *)p)[e] : ((const double *)p)[e];
        if (isnan(v) || (inf_too && isinf(v))) return 1;
    }
    return 0;
}

/* ---- symmetric / Hermitian eigendecomposition ------------------------------------------------------- */

static const mt_lapack_check EIGH = {"linalg.eigh", "linalg_eigh_cpu", .square = 1, .cplx = 1};

/* one ?syevd (real) or ?heevd (complex, rwork real) call; lwork -1 queries the workspaces into work[0],
 * rwork[0] and iwork[0] */
static int syevd_one(const lapack_fns *L, int dt, char jobz, char uplo, int n, void *a, void *w, void *work,
                     int lwork, void *rwork, int lrwork, int *iwork, int liwork) {
    int r = 0, ld = n > 1 ? n : 1;
    switch (dt) {
    case MT_F32: L->ssyevd(&jobz, &uplo, &n, a, &ld, w, work, &lwork, iwork, &liwork, &r, 1, 1); break;
    case MT_F64: L->dsyevd(&jobz, &uplo, &n, a, &ld, w, work, &lwork, iwork, &liwork, &r, 1, 1); break;
    case MT_C64: L->cheevd(&jobz, &uplo, &n, a, &ld, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &r, 1, 1); break;
    default: L->zheevd(&jobz, &uplo, &n, a, &ld, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &r, 1, 1);
    }
    return r;
}

/* eigenvalues real (complex input: its real dtype), ascending */
mt_status mt__impl_linalg_eigh(mt_tensor *a, int upper, int compute_v, mt_tensor **values, mt_tensor **vectors) {
    MT_TRY(mt__lapack_check(&EIGH, a));
    int dt = a->dtype, rdt = mt__complex_to_real(dt), nd = a->ndim, n = (int)a->sizes[nd - 1];
    int isz = mt_dtype_itemsize(dt), rsz = mt_dtype_itemsize(rdt);
    mt_tensor *w = NULL, *ev = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, a->sizes, rdt, a->device, &ev);
    if (st || a->device == MT_META || !n) goto done;
    char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    double wq[2] = {0, 0}, rq = 0;
    int iq = 0;
    const lapack_fns *L = lapack_for(n, n, 1); /* the same library answers the query and runs the calls */
    syevd_one(L, dt, jobz, uplo, n, mat(w, 0), mt__data(ev), wq, -1, &rq, -1, &iq, -1);
    int lwork = query_size(dt, wq), lrwork = query_size(dt, &rq), liwork = iq > 1 ? iq : 1;
    void *work = malloc((size_t)lwork * isz), *rwork = malloc((size_t)lrwork * rsz);
    int *iwork = malloc((size_t)liwork * sizeof(int));
    int64_t nb = batch_count(nd, a->sizes);
    if (!work || !rwork || !iwork) st = mt__error(MT_ERR_OOM, "linalg.eigh: out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++) {
        int r = syevd_one(L, dt, jobz, uplo, n, mat(w, i), mt__data(ev) + i * n * rsz, work, lwork, rwork, lrwork, iwork,
                          liwork);
        if (r > 0) st = not_converged("linalg.eigh", "eigenvalues", a, i, r);
    }
    free(work);
    free(rwork);
    free(iwork);
done:
    if (st) { MT_DROP(w); MT_DROP(ev); return st; }
    *values = ev;
    if (compute_v) *vectors = w;
    else mt_tensor_release(w);
    return MT_OK;
}

/* ---- general eigendecomposition --------------------------------------------------------------------------- */

static const mt_lapack_check EIG = {"linalg.eig", "linalg_eig_out_cpu", .square = 1, .cplx = 1};
static const mt_lapack_check EIGVALS = {"linalg.eigvals", "linalg_eig_out_cpu", .square = 1, .cplx = 1};

/* one ?geev call for the right eigenvectors (vr NULL: eigenvalues only). The real routines give the
 * eigenvalues as w (real parts) and wi, the complex ones as w; lwork -1 queries the workspace into work[0] */
static int geev_one(int dt, int n, void *a, void *w, void *wi, void *vr, void *work, int lwork, void *rwork) {
    char jl = 'N', jr = vr ? 'V' : 'N';
    int r = 0, ld = n > 1 ? n : 1, one = 1, ldvr = vr ? ld : 1;
    double none[4]; /* the left vectors, never referenced */
    if (!vr) vr = none;
    switch (dt) {
    case MT_F32: sgeev_(&jl, &jr, &n, a, &ld, w, wi, (float *)none, &one, vr, &ldvr, work, &lwork, &r, 1, 1); break;
    case MT_F64: dgeev_(&jl, &jr, &n, a, &ld, w, wi, none, &one, vr, &ldvr, work, &lwork, &r, 1, 1); break;
    case MT_C64: cgeev_(&jl, &jr, &n, a, &ld, w, none, &one, vr, &ldvr, work, &lwork, rwork, &r, 1, 1); break;
    default: zgeev_(&jl, &jr, &n, a, &ld, w, none, &one, vr, &ldvr, work, &lwork, rwork, &r, 1, 1);
    }
    return r;
}

/* the complex eigenvectors of a real matrix from geev's packed real ones: a real eigenvalue's vector is its
 * column; a conjugate pair (positive imaginary part first) shares columns j, j+1: x + iy and x - iy */
static void unpack_real_vectors(int dt, int64_t n, const char *wi, const char *vr, char *out) {
    int cdt = dt == MT_F32 ? MT_C64 : MT_C128;
    for (int64_t j = 0; j < n; j++) {
        int pair = get(dt, wi, j) != 0 && j + 1 < n;
        for (int64_t r = 0; r < n; r++) {
            double x = get(dt, vr, j * n + r), y = pair ? get(dt, vr, (j + 1) * n + r) : 0;
            cput(cdt, out, j * n + r, x, y);
            if (pair) cput(cdt, out, (j + 1) * n + r, x, -y);
        }
        j += pair;
    }
}

/* eigenvalues and (compute_v) eigenvectors of unit norm, complex whatever A's dtype (PyTorch's rule). PyTorch
 * refuses non-finite input to eig; its eigvals hands it to LAPACK (NaNs, or a crash): here NaN eigenvalues. */
mt_status mt__impl_linalg_eig(mt_tensor *a, int compute_v, mt_tensor **values, mt_tensor **vectors) {
    int dt = a->dtype, cdt = dt == MT_F16 || dt == MT_BF16 ? dt : mt__to_complex(dt);
    if (cdt < 0) return MT_ERR_RUNTIME; /* "Unknown Complex ScalarType for Long", before the shape checks */
    MT_TRY(mt__lapack_check(compute_v ? &EIG : &EIGVALS, a));
    int nd = a->ndim, n = (int)a->sizes[nd - 1], real = !mt__is_complex(dt);
    int isz = mt_dtype_itemsize(dt), rsz = mt_dtype_itemsize(mt__complex_to_real(dt)), csz = mt_dtype_itemsize(cdt);
    int64_t nb = batch_count(nd, a->sizes);
    mt_tensor *w = NULL, *ev = NULL, *vec = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, a->sizes, cdt, a->device, &ev);
    if (!st && compute_v) /* PyTorch's meta vectors are row-major, its CPU ones column-major */
        st = a->device == MT_META ? new_tensor(nd, a->sizes, cdt, a->device, &vec)
                                  : mt__colmajor_empty(nd, a->sizes, cdt, a->device, &vec);
    if (st || a->device == MT_META || !n || !nb) goto done;
    if (compute_v && non_finite(dt, mt__data(w), mt_tensor_numel(w), 1)) {
        st = mt__error(MT_ERR_RUNTIME, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
        goto done;
    }
    /* real input: eigenvalues as (w, wi), vectors packed in vr, both unpacked after each call */
    char *wr = malloc((size_t)2 * n * rsz), *vr = real && compute_v ? malloc((size_t)n * n * rsz) : NULL;
    void *rwork = malloc((size_t)2 * n * rsz);
    double wq[2] = {0, 0};
    if (wr && rwork && (vr || !real || !compute_v))
        geev_one(dt, n, mat(w, 0), wr, wr + n * rsz, real ? vr : compute_v ? mat(vec, 0) : NULL, wq, -1, rwork);
    int lwork = query_size(dt, wq);
    void *work = malloc((size_t)lwork * isz);
    if (!wr || !rwork || !work || (real && compute_v && !vr))
        st = mt__error(MT_ERR_OOM, "linalg.eig: out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++) {
        char *ap = mat(w, i), *vals = mt__data(ev) + i * n * csz, *vp = compute_v ? mat(vec, i) : NULL;
        if (!compute_v && non_finite(dt, ap, (int64_t)n * n, 1)) {
            for (int64_t j = 0; j < n; j++) cput(cdt, vals, j, NAN, NAN);
            continue;
        }
        int r = geev_one(dt, n, ap, real ? (void *)wr : vals, wr + n * rsz, real ? vr : vp, work, lwork, rwork);
        if (r > 0) {
            st = not_converged(compute_v ? "torch.linalg.eig" : "torch.linalg.eigvals", "eigenvalues", a, i, r);
            break;
        }
        if (!real) continue;
        for (int64_t j = 0; j < n; j++) cput(cdt, vals, j, get(dt, wr, j), get(dt, wr + n * rsz, j));
        if (compute_v) unpack_real_vectors(dt, n, wr + n * rsz, vr, vp);
    }
    free(wr), free(vr), free(rwork), free(work);
done:
    mt_tensor_release(w);
    if (st) { mt_tensor_release(ev); mt_tensor_release(vec); return st; }
    *values = ev;
    if (compute_v) *vectors = vec;
    return MT_OK;
}

/* ---- SVD ------------------------------------------------------------------------------------------------ */

static const mt_lapack_check SVD = {"linalg.svd", "linalg_svd_cpu", .float_check = 1, .cplx = 1};

static void set_eye(int dt, char *p, int64_t rows, int64_t cols) {
    memset(p, 0, (size_t)(rows * cols) * (size_t)mt_dtype_itemsize(dt));
    for (int64_t c = 0; c < cols && c < rows; c++) {
        if (mt__is_complex(dt)) cput(dt, p, c * rows + c, 1, 0);
        else put(dt, p, c * rows + c, 1);
    }
}

/* one ?gesdd call (complex: rwork real); lwork -1 queries the workspace into work[0] */
static int gesdd_one(const lapack_fns *L, int dt, char jobz, int m, int n, void *a, void *s, void *u, int ldu,
                     void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork) {
    int r = 0;
    switch (dt) {
    case MT_F32: L->sgesdd(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &r, 1); break;
    case MT_F64: L->dgesdd(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &r, 1); break;
    case MT_C64: L->cgesdd(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &r, 1); break;
    default: L->zgesdd(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &r, 1);
    }
    return r;
}

/* singular values real (complex input: its real dtype), descending */
mt_status mt__impl_linalg_svd(mt_tensor *a, int full_matrices, int compute_uv, mt_tensor **U, mt_tensor **S,
                              mt_tensor **Vh) {
    MT_TRY(mt__lapack_check(&SVD, a));
    int nd = a->ndim, m = (int)a->sizes[nd - 2], n = (int)a->sizes[nd - 1], k = m < n ? m : n;
    int dt = a->dtype, rdt = mt__complex_to_real(dt), isz = mt_dtype_itemsize(dt), rsz = mt_dtype_itemsize(rdt);
    int full = compute_uv && full_matrices, ucols = full ? m : k, vrows = full ? n : k;
    int64_t usz[MT_MAX_DIMS], vsz[MT_MAX_DIMS], ssz[MT_MAX_DIMS];
    memcpy(usz, a->sizes, sizeof usz);
    memcpy(vsz, a->sizes, sizeof vsz);
    memcpy(ssz, a->sizes, sizeof ssz);
    usz[nd - 1] = ucols, vsz[nd - 2] = vrows, ssz[nd - 2] = k;
    mt_tensor *w = NULL, *u = NULL, *s = NULL, *vh = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, ssz, rdt, a->device, &s);
    if (!st && compute_uv) st = mt__colmajor_empty(nd, usz, dt, a->device, &u);
    if (!st && compute_uv) st = mt__colmajor_empty(nd, vsz, dt, a->device, &vh);
    if (!st && !compute_uv) st = new_tensor(1, (int64_t[]){0}, dt, a->device, &u);
    if (!st && !compute_uv) st = new_tensor(1, (int64_t[]){0}, dt, a->device, &vh);
    if (st || a->device == MT_META) goto done;
    int64_t nb = batch_count(nd, a->sizes);
    if (!k) { /* an empty matrix: the full factors are identities (when both are empty there is nothing
               * to write, and 2^40 empty matrices must not take 2^40 steps) */
        for (int64_t i = 0; compute_uv && (mt_tensor_numel(u) || mt_tensor_numel(vh)) && i < nb; i++) {
            set_eye(dt, mat(u, i), m, ucols);
            set_eye(dt, mat(vh, i), vrows, n);
        }
        goto done;
    }
    char jobz = !compute_uv ? 'N' : full ? 'A' : 'S';
    int ldu = m, ldvt = vrows > 1 ? vrows : 1, mx = m > n ? m : n;
    /* complex: LAPACK's real workspace, which has no query */
    int64_t lrwork = !mt__is_complex(dt) ? 1 : jobz == 'N' ? 7 * (int64_t)k
                     : 5 * (int64_t)k * k + 5 * k > 2 * (int64_t)mx * k + 2 * (int64_t)k * k + k
                         ? 5 * (int64_t)k * k + 5 * k : 2 * (int64_t)mx * k + 2 * (int64_t)k * k + k;
    int *iwork = malloc((size_t)8 * k * sizeof(int));
    void *rwork = malloc((size_t)lrwork * rsz);
    double wq[2] = {0, 0};
    /* small matrices with vectors: OpenBLAS's gesdd (8x8: 7% faster; without vectors MKL's, 25%) */
    const lapack_fns *L = lapack_for(m, n, jobz == 'N');
    gesdd_one(L, dt, jobz, m, n, mat(w, 0), mt__data(s), compute_uv ? mat(u, 0) : NULL, ldu,
              compute_uv ? mat(vh, 0) : NULL, ldvt, wq, -1, rwork, iwork);
    int lwork = query_size(dt, wq);
    void *work = malloc((size_t)lwork * isz);
    if (!work || !iwork || !rwork) st = mt__error(MT_ERR_OOM, "linalg.svd: out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++) {
        /* LAPACK 3.10+ answers a NaN in the input with info -4 (and prints through xerbla), which
         * PyTorch reports as non-finite values: the same error, found before the call */
        if (non_finite(dt, mat(w, i), (int64_t)m * n, 0)) {
            st = failed(MT_ERR_LINALG, "linalg.svd", a, i, "The algorithm failed to converge because the input matrix "
                        "contained non-finite values.");
            break;
        }
        int r = gesdd_one(L, dt, jobz, m, n, mat(w, i), mt__data(s) + i * k * rsz, compute_uv ? mat(u, i) : NULL, ldu,
                          compute_uv ? mat(vh, i) : NULL, ldvt, work, lwork, rwork, iwork);
        if (r > 0) st = not_converged("linalg.svd", "singular values", a, i, r);
    }
    free(work);
    free(rwork);
    free(iwork);
done:
    mt_tensor_release(w);
    if (st) { mt_tensor_release(u); mt_tensor_release(s); mt_tensor_release(vh); return st; }
    *U = u, *S = s, *Vh = vh;
    return MT_OK;
}

/* ---- QR ---------------------------------------------------------------------------------------------------- */

/* a workspace size from a LAPACK query's answer (a float for the single precision routines, the real part
 * of a complex one) */
static int work_size(int dt, const void *q) {
    double v = dt == MT_F32 || dt == MT_C64 ? ((const float *)q)[0] : ((const double *)q)[0];
    return v > 1 ? (int)v + 1 : 1;
}

/* geqrf and orgqr/ungqr on one column-major matrix, any of the four dtypes; lwork -1 queries */
static int geqrf_one(const lapack_fns *L, int dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork) {
    int info = 0;
    switch (dt) {
    case MT_F32: L->sgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info); break;
    case MT_F64: L->dgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info); break;
    case MT_C64: L->cgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info); break;
    default: L->zgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info);
    }
    return info;
}

static int orgqr_one(const lapack_fns *L, int dt, int m, int n, int k, void *a, int lda, const void *tau, void *work, int lwork) {
    int info = 0;
    switch (dt) {
    case MT_F32: L->sorgqr(&m, &n, &k, a, &lda, tau, work, &lwork, &info); break;
    case MT_F64: L->dorgqr(&m, &n, &k, a, &lda, tau, work, &lwork, &info); break;
    case MT_C64: L->cungqr(&m, &n, &k, a, &lda, tau, work, &lwork, &info); break;
    default: L->zungqr(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    }
    return info;
}

static const mt_lapack_check QR = {"linalg.qr", "geqrf_cpu", .float_check = 1, .cplx = 1};

/* mode: MT_QR_REDUCED, MT_QR_COMPLETE or MT_QR_R (Q is then an empty tensor) */
mt_status mt__impl_linalg_qr(mt_tensor *a, int mode, mt_tensor **Q, mt_tensor **R) {
    MT_TRY(mt__lapack_check(&QR, a));
    int nd = a->ndim, m = (int)a->sizes[nd - 2], n = (int)a->sizes[nd - 1], k = m < n ? m : n, dt = a->dtype;
    int isz = mt_dtype_itemsize(dt), qcols = mode == MT_QR_COMPLETE ? m : k;
    int rrows = mode == MT_QR_COMPLETE ? m : k;
    int64_t qsz[MT_MAX_DIMS], rsz[MT_MAX_DIMS];
    memcpy(qsz, a->sizes, sizeof qsz);
    memcpy(rsz, a->sizes, sizeof rsz);
    qsz[nd - 1] = qcols, rsz[nd - 2] = rrows;
    mt_tensor *w = NULL, *q = NULL, *r = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = mt__colmajor_empty(nd, rsz, dt, a->device, &r);
    if (!st) st = mode == MT_QR_R ? new_tensor(1, (int64_t[]){0}, dt, a->device, &q)
                                  : mt__colmajor_empty(nd, qsz, dt, a->device, &q);
    /* both outputs empty: nothing to do per matrix (2^40 empty matrices must not take 2^40 steps) */
    if (st || a->device == MT_META || (!mt_tensor_numel(r) && !mt_tensor_numel(q))) goto done;
    int64_t nb = batch_count(nd, a->sizes);
    int lda = m > 1 ? m : 1, kk = k > 1 ? k : 1, lwork = 1;
    double q1[2] = {0, 0}, q2[2] = {0, 0};
    void *tau = malloc((size_t)kk * isz);
    const lapack_fns *L = lapack_for(m, n, 1);
    /* workspace: the larger of geqrf's and orgqr's queries */
    if (m && n) {
        geqrf_one(L, dt, m, n, mat(w, 0), lda, tau, q1, -1);
        if (mode != MT_QR_R && qcols) orgqr_one(L, dt, m, qcols, k, mat(q, 0), lda, tau, q2, -1);
        int l1 = work_size(dt, q1), l2 = work_size(dt, q2);
        lwork = l1 > l2 ? l1 : l2;
    }
    void *work = malloc((size_t)lwork * isz);
    if (!tau || !work) st = mt__error(MT_ERR_OOM, "linalg.qr: out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++) {
        char *wp = mat(w, i), *rp = mat(r, i);
        if (m && n) geqrf_one(L, dt, m, n, wp, lda, tau, work, lwork);
        for (int64_t c = 0; c < n; c++) /* R: the upper triangle of the first rrows rows */
            for (int64_t rr = 0; rr < rrows; rr++) {
                char *dst = rp + (c * rrows + rr) * isz;
                if (rr <= c && rr < m) memcpy(dst, wp + (c * m + rr) * isz, (size_t)isz);
                else memset(dst, 0, (size_t)isz);
            }
        if (mode == MT_QR_R || !qcols) continue;
        char *qp = mat(q, i);
        /* Q: orgqr over the reflectors (the first k columns), extended to qcols columns */
        memcpy(qp, wp, (size_t)m * k * isz);
        memset(qp + (int64_t)m * k * isz, 0, (size_t)m * (qcols - k) * isz);
        if (!k) { set_eye(dt, qp, m, qcols); continue; }
        orgqr_one(L, dt, m, qcols, k, qp, lda, tau, work, lwork);
    }
    free(tau);
    free(work);
done:
    mt_tensor_release(w);
    if (st) { mt_tensor_release(q); mt_tensor_release(r); return st; }
    *Q = q, *R = r;
    return MT_OK;
}

/* ---- geqrf, ormqr: QR as Householder reflectors, and products with their Q ------------------------------------ */

static int is_lapack_dtype(int dt) { return dt == MT_F32 || dt == MT_F64 || mt__is_complex(dt); }

/* torch.geqrf: A's reflectors below the diagonal and R on and above it (column-major), and tau */
mt_status mt__impl_geqrf(mt_tensor *a, mt_tensor **A, mt_tensor **tau) {
    if (a->ndim < 2) return mt__error(MT_ERR_RUNTIME, "torch.geqrf: input must have at least 2 dimensions.");
    if (!is_lapack_dtype(a->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"geqrf_cpu\" not implemented for '%s'", mt_dtype_names[a->dtype]);
    MT_TRY(mt__lapack_check(&QR, a)); /* LAPACK's index range */
    int nd = a->ndim, m = (int)a->sizes[nd - 2], n = (int)a->sizes[nd - 1], k = m < n ? m : n, dt = a->dtype;
    int isz = mt_dtype_itemsize(dt), lda = m > 1 ? m : 1;
    int64_t tsz[MT_MAX_DIMS];
    memcpy(tsz, a->sizes, sizeof tsz);
    tsz[nd - 2] = k;
    mt_tensor *w = NULL, *t = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, tsz, dt, a->device, &t);
    if (st || a->device == MT_META || !k) goto done;
    int64_t nb = batch_count(nd, a->sizes);
    double q[2] = {0, 0};
    const lapack_fns *L = lapack_for(m, n, 1);
    geqrf_one(L, dt, m, n, mat(w, 0), lda, mt__data(t), q, -1);
    int lwork = work_size(dt, q);
    void *work = malloc((size_t)lwork * isz);
    if (!work) st = mt__error(MT_ERR_OOM, "torch.geqrf: out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++) geqrf_one(L, dt, m, n, mat(w, i), lda, mt__data(t) + i * k * isz, work, lwork);
    free(work);
done:
    if (st) { mt_tensor_release(w); mt_tensor_release(t); return st; }
    *A = w, *tau = t;
    return MT_OK;
}

static int ormqr_one(int dt, char side, char trans, int m, int n, int k, const void *a, int lda, const void *tau,
                     void *c, int ldc, void *work, int lwork) {
    int info = 0;
    if (!mt__is_complex(dt) && trans == 'C') trans = 'T';
    switch (dt) {
    case MT_F32: sormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1); break;
    case MT_F64: dormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1); break;
    case MT_C64: cunmqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1); break;
    default: zunmqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1);
    }
    return info;
}

static void format_batch(const mt_tensor *t, int nbatch, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < nbatch && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)t->sizes[d]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

#define ORMQR "torch.ormqr"

/* PyTorch's checks of torch.ormqr, in its order */
static mt_status ormqr_check(mt_tensor *a, mt_tensor *tau, mt_tensor *c, int left) {
    MT_TRY(mt__same_device(a, tau)); /* the kernel reads all three when c is not meta */
    MT_TRY(mt__same_device(a, c));
    if (a->ndim < 2) return mt__error(MT_ERR_RUNTIME, ORMQR ": input must have at least 2 dimensions.");
    if (c->ndim < 2) return mt__error(MT_ERR_RUNTIME, ORMQR ": other must have at least 2 dimensions.");
    int cond = left ? -2 : -1;
    int64_t nq = c->sizes[c->ndim + cond];
    if (nq != a->sizes[a->ndim - 2])
        return mt__error(MT_ERR_RUNTIME, ORMQR ": other.shape[%d] must be equal to input.shape[-2]", cond);
    if (tau->ndim == 0) return mt__error(MT_ERR_INDEX, "Dimension specified as -1 but tensor has no dimensions");
    int64_t an = a->sizes[a->ndim - 1];
    if (tau->sizes[tau->ndim - 1] != (nq < an ? nq : an))
        return mt__error(MT_ERR_RUNTIME, ORMQR ": tau.shape[-1] must be equal to min(other.shape[%d], input.shape[-1])",
                         cond);
    if (a->ndim - tau->ndim != 1)
        return mt__error(MT_ERR_RUNTIME, ORMQR ": Expected tau to have one dimension less than input, but got tau.ndim "
                         "equal to %d and input.ndim is equal to %d", tau->ndim, a->ndim);
    if (a->ndim != c->ndim)
        return mt__error(MT_ERR_RUNTIME, ORMQR ": Expected other to have the same number of dimensions as input, but "
                         "got other.ndim equal to %d and input.ndim is equal to %d", c->ndim, a->ndim);
    char buf[256];
    int nbatch = a->ndim - 2;
    if (memcmp(tau->sizes, a->sizes, (size_t)nbatch * sizeof(int64_t))) {
        format_batch(tau, nbatch, buf, sizeof buf);
        return mt__error(MT_ERR_RUNTIME, ORMQR ": Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                         "got %s", buf);
    }
    if (memcmp(c->sizes, a->sizes, (size_t)nbatch * sizeof(int64_t))) {
        format_batch(c, nbatch, buf, sizeof buf);
        return mt__error(MT_ERR_RUNTIME, ORMQR ": Expected batch dimensions of other to be equal to input.shape[:-2], "
                         "but got %s", buf);
    }
    if (a->dtype != tau->dtype)
        return mt__error(MT_ERR_RUNTIME, ORMQR ": Expected input and tau to have the same dtype, but input has dtype%s "
                         "and tau has dtype %s", mt_dtype_names[a->dtype], mt_dtype_names[tau->dtype]);
    if (a->dtype != c->dtype)
        return mt__error(MT_ERR_RUNTIME, ORMQR ": Expected input and other to have the same dtype, but input has "
                         "dtype%s and other has dtype %s", mt_dtype_names[a->dtype], mt_dtype_names[c->dtype]);
    if (!is_lapack_dtype(a->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"ormqr_cpu\" not implemented for '%s'", mt_dtype_names[a->dtype]);
    if (c->sizes[c->ndim - 2] > INT_MAX || c->sizes[c->ndim - 1] > INT_MAX ||
        c->sizes[c->ndim - 2] * c->sizes[c->ndim - 1] > INT_MAX || nq * an > INT_MAX)
        return mt__error(MT_ERR_RUNTIME, ORMQR ": matrices too large for LAPACK's 32-bit indices");
    return MT_OK;
}

/* torch.ormqr: op(Q) C (left) or C op(Q), Q = H_1 ... H_k from geqrf's reflectors, op the conjugate
 * transpose when transpose */
mt_status mt__impl_ormqr(mt_tensor *a, mt_tensor *tau, mt_tensor *c, int left, int transpose, mt_tensor **result) {
    MT_TRY(ormqr_check(a, tau, c, left));
    int nd = c->ndim, dt = c->dtype, isz = mt_dtype_itemsize(dt);
    int m = (int)c->sizes[nd - 2], n = (int)c->sizes[nd - 1], k = (int)tau->sizes[tau->ndim - 1];
    int lda = (int)a->sizes[a->ndim - 2] > 1 ? (int)a->sizes[a->ndim - 2] : 1, ldc = m > 1 ? m : 1;
    char side = left ? 'L' : 'R', trans = transpose ? 'C' : 'N';
    mt_tensor *w = NULL, *x = NULL, *t = NULL;
    mt_status st = colmajor_copy(c, nd, c->sizes, &x);
    if (!st) st = colmajor_copy(a, a->ndim, a->sizes, &w);
    if (!st) st = mt__impl_contiguous(tau, &t);
    if (st || c->device == MT_META || !m || !n || !k) goto done;
    int64_t nb = batch_count(nd, c->sizes), astride = a->sizes[a->ndim - 2] * a->sizes[a->ndim - 1] * isz;
    double q[2] = {0, 0};
    ormqr_one(dt, side, trans, m, n, k, mt__data(w), lda, mt__data(t), mat(x, 0), ldc, q, -1);
    int lwork = work_size(dt, q);
    void *work = malloc((size_t)lwork * isz);
    if (!work) st = mt__error(MT_ERR_OOM, ORMQR ": out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++)
        ormqr_one(dt, side, trans, m, n, k, mt__data(w) + i * astride, lda, mt__data(t) + i * k * isz, mat(x, i), ldc,
                  work, lwork);
    free(work);
done:
    mt_tensor_release(w);
    mt_tensor_release(t);
    if (st) { mt_tensor_release(x); return st; }
    *result = x;
    return MT_OK;
}

/* ---- LDL^T / LDL^H (Bunch-Kaufman: sytrf, hetrf) ---------------------------------------------------------- */

static int sytrf_one(int dt, int herm, int n, void *a, int lda, int *ipiv, void *work, int lwork) {
    int info = 0;
    switch (dt) {
    case MT_F32: ssytrf_("L", &n, a, &lda, ipiv, work, &lwork, &info, 1); break;
    case MT_F64: dsytrf_("L", &n, a, &lda, ipiv, work, &lwork, &info, 1); break;
    case MT_C64: (herm ? chetrf_ : csytrf_)("L", &n, a, &lda, ipiv, work, &lwork, &info, 1); break;
    default: (herm ? zhetrf_ : zsytrf_)("L", &n, a, &lda, ipiv, work, &lwork, &info, 1);
    }
    return info;
}

static const mt_lapack_check LDL = {"torch.linalg.ldl_factor_ex", "ldl_factor_kernel_cpu", .square = 1,
                                    .float_check = 1, .cplx = 1};

/* A = L D L^T (L^H when hermitian) in LAPACK's packed lower form; pivots: LAPACK's ipiv (1-based, negative
 * for the 2x2 blocks of D), info per matrix */
mt_status mt__impl_linalg_ldl_factor_ex(mt_tensor *a, int hermitian, mt_tensor **LD, mt_tensor **pivots,
                                        mt_tensor **info) {
    MT_TRY(mt__lapack_check(&LDL, a));
    int nd = a->ndim, n = (int)a->sizes[nd - 1], lda = n > 1 ? n : 1, dt = a->dtype;
    int herm = hermitian && mt__is_complex(dt);
    mt_tensor *w = NULL, *piv = NULL, *inf = NULL;
    mt_status st = colmajor_copy(a, nd, a->sizes, &w);
    if (!st) st = new_tensor(nd - 1, a->sizes, MT_I32, a->device, &piv);
    if (!st) st = new_tensor(nd - 2, a->sizes, MT_I32, a->device, &inf);
    if (st || a->device == MT_META) goto done;
    int64_t nb = batch_count(nd, a->sizes);
    int32_t *ip = (int32_t *)mt__data(inf), *pp = (int32_t *)mt__data(piv);
    if (!n) {
        memset(ip, 0, (size_t)nb * sizeof *ip);
        goto done;
    }
    double q[2] = {0, 0};
    sytrf_one(dt, herm, n, mat(w, 0), lda, pp, q, -1);
    int lwork = work_size(dt, q);
    void *work = malloc((size_t)lwork * (size_t)mt_dtype_itemsize(dt));
    if (!work) st = mt__error(MT_ERR_OOM, "torch.linalg.ldl_factor_ex: out of memory for the workspace");
    for (int64_t i = 0; !st && i < nb; i++) {
        ip[i] = sytrf_one(dt, herm, n, mat(w, i), lda, pp + i * n, work, lwork);
        zero_triangle(dt, mat(w, i), n, 0); /* the factor is the lower triangle, as PyTorch returns it */
    }
    free(work);
done:
    if (st) { MT_DROP(w); MT_DROP(piv); MT_DROP(inf); return st; }
    *LD = w, *pivots = piv, *info = inf;
    return MT_OK;
}

static void sytrs_one(int dt, int herm, int n, int k, const void *a, int ld, const int *ipiv, void *b) {
    int info = 0;
    switch (dt) {
    case MT_F32: ssytrs_("L", &n, &k, a, &ld, ipiv, b, &ld, &info, 1); break;
    case MT_F64: dsytrs_("L", &n, &k, a, &ld, ipiv, b, &ld, &info, 1); break;
    case MT_C64: (herm ? chetrs_ : csytrs_)("L", &n, &k, a, &ld, ipiv, b, &ld, &info, 1); break;
    default: (herm ? zhetrs_ : zsytrs_)("L", &n, &k, a, &ld, ipiv, b, &ld, &info, 1);
    }
}

static const mt_lapack_check LDL_SOLVE = {"torch.linalg.ldl_solve", "ldl_solve_kernel_cpu", .square = 1,
                                          .float_check = 1, .cplx = 1};

/* X with A X = B from ldl_factor's LD and pivots (any integer dtype); batches broadcast */
mt_status mt__impl_linalg_ldl_solve(mt_tensor *LD_, mt_tensor *pivots, mt_tensor *b, int hermitian,
                                    mt_tensor **result) {
    /* PyTorch checks the kernel's dtype last: keep that error for after B's and the pivots' checks */
    mt_status kernel = mt__lapack_check(&LDL_SOLVE, LD_);
    if (kernel && kernel != MT_ERR_NOT_IMPLEMENTED) return kernel;
    if (LD_->dtype != b->dtype)
        return mt__error(MT_ERR_RUNTIME, "Expected b and A to have the same dtype, but found b of type %s and A of type "
                         "%s instead.", mt_dtype_names[b->dtype], mt_dtype_names[LD_->dtype]);
    if (b->ndim < 2)
        return b->ndim ? mt__error(MT_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
                       : mt__error(MT_ERR_INDEX, "Dimension specified as -2 but tensor has no dimensions");
    int64_t n = LD_->sizes[LD_->ndim - 1];
    if (b->sizes[b->ndim - 2] != n)
        return mt__error(MT_ERR_RUNTIME, "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is %lld "
                         "by %lld but each b matrix is %lld by %lld", (long long)n, (long long)n,
                         (long long)b->sizes[b->ndim - 2], (long long)b->sizes[b->ndim - 1]);
    if (pivots->ndim != LD_->ndim - 1 || memcmp(pivots->sizes, LD_->sizes, (size_t)pivots->ndim * sizeof(int64_t))) {
        char buf[256];
        format_batch(pivots, pivots->ndim, buf, sizeof buf);
        return mt__error(MT_ERR_RUNTIME, "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the "
                         "same, but got pivots with shape %s instead", buf);
    }
    if (!mt__is_int(pivots->dtype))
        return mt__error(MT_ERR_RUNTIME, "torch.linalg.ldl_solve: Expected pivots to be integers. Got %s",
                         mt_dtype_names[pivots->dtype]);
    if (kernel) return mt__lapack_check(&LDL_SOLVE, LD_);
    int nd = 0, dt = LD_->dtype;
    int64_t sa[MT_MAX_DIMS], sb[MT_MAX_DIMS];
    MT_TRY(broadcast_batch(LD_, b, &nd, sa, sb));
    if (sb[nd - 1] > INT_MAX || n * sb[nd - 1] > INT_MAX)
        return mt__error(MT_ERR_RUNTIME, "torch.linalg.ldl_solve: B is too large for LAPACK's 32-bit indices");
    mt_tensor *lu = NULL, *piv = NULL, *x = NULL;
    mt_status st = colmajor_copy(LD_, nd, sa, &lu);
    if (!st) st = new_tensor(nd - 1, sa, MT_I32, LD_->device, &piv); /* pivots broadcast to the batch, as int32 */
    if (!st && LD_->device != MT_META) st = mt__impl_copy_(piv, pivots);
    if (!st) st = colmajor_copy(b, nd, sb, &x);
    if (st || LD_->device == MT_META) goto done;
    const int32_t *p = (const int32_t *)mt__data(piv);
    for (int64_t i = 0; i < mt_tensor_numel(piv); i++)
        if (p[i] == 0 || p[i] > n || p[i] < -n) { /* (PyTorch lets a zero through to LAPACK, which reads out of bounds) */
            st = mt__error(MT_ERR_RUNTIME, "Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you "
                           "properly pass the result of ldl_factor?");
            goto done;
        }
    int k = (int)sb[nd - 1], herm = hermitian && mt__is_complex(dt), ld = n > 1 ? (int)n : 1;
    int64_t nb = batch_count(nd, sb);
    for (int64_t i = 0; i < nb && n && k; i++) sytrs_one(dt, herm, (int)n, k, mat(lu, i), ld, p + i * n, mat(x, i));
done:
    mt_tensor_release(lu);
    mt_tensor_release(piv);
    if (st) { mt_tensor_release(x); return st; }
    *result = x;
    return MT_OK;
}

/* ---- least squares ------------------------------------------------------------------------------------------ */

/* one solve of min ||A X - B|| (column-major, in place: X in B's first n rows, the residual terms below);
 * s: singular values (gelsd/gelss), rank (not gels); with lwork -1 a workspace query into work[0] */
typedef struct {
    int driver, m, n, k, lda, ldb, lwork;
    double rcond;
    void *work;
    int *iwork, *jpvt;
    const lapack_fns *lib; /* gels's */
} lstsq_job;

static int lstsq_one(int dt, lstsq_job *j, void *a, void *b, void *s, int *rank) {
    int r = 0;
    float rf = (float)j->rcond;
    if (j->driver == MT_LSTSQ_GELSY && j->lwork != -1) memset(j->jpvt, 0, (size_t)j->n * sizeof(int)); /* all free */
    if (dt == MT_F32) {
        switch (j->driver) {
        case MT_LSTSQ_GELS: j->lib->sgels("N", &j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, j->work, &j->lwork, &r, 1); break;
        case MT_LSTSQ_GELSY: sgelsy_(&j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, j->jpvt, &rf, rank, j->work, &j->lwork, &r); break;
        case MT_LSTSQ_GELSD: sgelsd_(&j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, s, &rf, rank, j->work, &j->lwork, j->iwork, &r); break;
        default: sgelss_(&j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, s, &rf, rank, j->work, &j->lwork, &r);
        }
    } else {
        switch (j->driver) {
        case MT_LSTSQ_GELS: j->lib->dgels("N", &j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, j->work, &j->lwork, &r, 1); break;
        case MT_LSTSQ_GELSY: dgelsy_(&j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, j->jpvt, &j->rcond, rank, j->work, &j->lwork, &r); break;
        case MT_LSTSQ_GELSD: dgelsd_(&j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, s, &j->rcond, rank, j->work, &j->lwork, j->iwork, &r); break;
        default: dgelss_(&j->m, &j->n, &j->k, a, &j->lda, b, &j->ldb, s, &j->rcond, rank, j->work, &j->lwork, &r);
        }
    }
    return r;
}

#define LSTSQ "torch.linalg.lstsq"

/* PyTorch's checks in its order; B a (batch of) vector(s) when it has one dim less than A */
static mt_status lstsq_check(mt_tensor *a, mt_tensor *b, int driver) {
    if (a->ndim < 2) return mt__error(MT_ERR_RUNTIME, LSTSQ ": input must have at least 2 dimensions.");
    if (b->ndim < 1) return mt__error(MT_ERR_RUNTIME, LSTSQ ": other must have at least 1 dimension.");
    if (a->dtype != b->dtype)
        return mt__error(MT_ERR_RUNTIME, LSTSQ ": Expected input and other to have the same dtype, but got input's "
                         "dtype %s and other's dtype %s", mt_dtype_names[a->dtype], mt_dtype_names[b->dtype]);
    if (a->ndim < b->ndim || a->ndim - b->ndim > 1)
        return mt__error(MT_ERR_RUNTIME, LSTSQ ": input.dim() must be greater or equal to other.dim() and "
                         "(input.dim() - other.dim()) <= 1");
    int vec = mt__solve_vector_rhs(a, b);
    if (a->sizes[a->ndim - 2] != b->sizes[b->ndim - (vec ? 1 : 2)])
        return mt__error(MT_ERR_RUNTIME, LSTSQ ": input.size(-2) should match other.size(-2)");
    if (driver < MT_LSTSQ_GELS || driver > MT_LSTSQ_GELSS)
        return mt__error(MT_ERR_RUNTIME, LSTSQ ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
    if (a->dtype != MT_F32 && a->dtype != MT_F64)
        return mt__error(MT_ERR_RUNTIME, "This function doesn't handle types other than float and double");
    int64_t m = a->sizes[a->ndim - 2], n = a->sizes[a->ndim - 1], k = vec ? 1 : b->sizes[b->ndim - 1];
    int64_t ld = m > n ? m : n;
    if (ld > INT_MAX || k > INT_MAX || ld * n > INT_MAX || ld * k > INT_MAX)
        return mt__error(MT_ERR_RUNTIME, LSTSQ ": matrices of %lld by %lld are too large for LAPACK's 32-bit indices",
                         (long long)m, (long long)n);
    return MT_OK;
}

/* the broadcast of two shapes, with PyTorch's message (a: the first) */
static mt_status broadcast_shape(int na, const int64_t *a, int nb, const int64_t *b, int *n, int64_t *out) {
    *n = na > nb ? na : nb;
    for (int i = 0; i < *n; i++) {
        int64_t x = i < *n - na ? 1 : a[i - (*n - na)], y = i < *n - nb ? 1 : b[i - (*n - nb)];
        if (x != y && x != 1 && y != 1)
            return mt__error(MT_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                             "non-singleton dimension %d", (long long)x, (long long)y, i);
        out[i] = x == 1 ? y : x;
    }
    return MT_OK;
}

/* t (a broadcast batch, then per-matrix dims) cut to A's batch shape: rank and singular values depend on
 * A alone, and PyTorch gives them A's batch shape; t is released */
static mt_status to_a_batch(mt_tensor *t, const mt_tensor *a, int nbatch, mt_tensor **out) {
    int na = a->ndim - 2, lead = nbatch - na;
    mt_tensor *v = t, *nv = NULL;
    mt_status st = MT_OK;
    for (int d = lead; d < nbatch && !st; d++)
        if (a->sizes[d - lead] == 1 && v->sizes[d] != 1) {
            st = mt__impl_slice(v, d, 0, 1, 1, &nv);
            mt_tensor_release(v), v = nv;
        }
    for (int d = 0; d < lead && !st; d++) {
        st = mt__impl_select(v, 0, 0, &nv);
        mt_tensor_release(v), v = nv;
    }
    if (!st) st = mt__impl_contiguous(v, out);
    mt_tensor_release(v);
    return st;
}

mt_status mt__impl_linalg_lstsq(mt_tensor *a, mt_tensor *b, int has_rcond, double rcond, int driver,
                                mt_tensor **solution, mt_tensor **residuals, mt_tensor **rank, mt_tensor **svals) {
    MT_TRY(lstsq_check(a, b, driver));
    int vec = mt__solve_vector_rhs(a, b), nd = 0, dt = a->dtype, isz = mt_dtype_itemsize(dt);
    int64_t sa[MT_MAX_DIMS], sb[MT_MAX_DIMS], sx[MT_MAX_DIMS], zero = 0;
    mt_tensor *b2 = NULL, *w = NULL, *x = NULL, *xv = NULL, *sol = NULL, *res = NULL, *rk = NULL, *sv = NULL;
    mt_status st = vec ? mt__impl_unsqueeze(b, -1, &b2) : (mt_tensor_retain(b), b2 = b, MT_OK);
    if (st) return st;
    /* the batch: A's broadcast with B's, which are all but B's last dim when B has one dim less than A
     * without being a vector (PyTorch's rule; B then broadcasts into batch + its last two dims) */
    int short_b = !vec && b->ndim == a->ndim - 1;
    if ((st = broadcast_shape(a->ndim - 2, a->sizes, b2->ndim - 2 + short_b, b2->sizes, &nd, sa))) goto done;
    memcpy(sb, sa, sizeof sb);
    sa[nd] = a->sizes[a->ndim - 2], sa[nd + 1] = a->sizes[a->ndim - 1];
    sb[nd] = b2->sizes[b2->ndim - 2], sb[nd + 1] = b2->sizes[b2->ndim - 1];
    nd += 2;
    if (short_b && (st = broadcast_shape(nd, sb, b2->ndim, b2->sizes, &(int){0}, sx))) goto done;
    int m = (int)sa[nd - 2], n = (int)sa[nd - 1], k = (int)sb[nd - 1], ld = m > n ? m : n, mn = m < n ? m : n;
    int64_t nbat = batch_count(nd, sa);
    /* X's buffer holds max(m, n) rows: B in the first m, zeros below (LAPACK's convention for m < n) */
    memcpy(sx, sb, sizeof sx);
    sx[nd - 2] = ld;
    if ((st = colmajor_copy(a, nd, sa, &w))) goto done;
    if ((st = mt__colmajor_empty(nd, sx, dt, a->device, &x))) goto done;
    int with_rank = driver != MT_LSTSQ_GELS, with_sv = driver == MT_LSTSQ_GELSD || driver == MT_LSTSQ_GELSS;
    st = with_rank ? new_tensor(nd - 2, sa, MT_I64, a->device, &rk) : new_tensor(1, &zero, MT_I64, a->device, &rk);
    if (st) goto done;
    sx[nd - 2] = mn; /* [batch, min(m, n)] */
    st = with_sv ? new_tensor(nd - 1, sx, dt, a->device, &sv) : new_tensor(1, &zero, dt, a->device, &sv);
    if (st) goto done;
    if (a->device != MT_META) {
        if ((st = mt__impl_fill(x, 0, 0, MT_SCALAR_INT))) goto done;
        if ((st = mt__impl_slice(x, -2, 0, m, 1, &xv))) goto done;
        st = mt__impl_copy_(xv, b2);
        MT_DROP(xv);
        if (st) goto done;
    }
    int64_t *rp = with_rank && a->device != MT_META ? (int64_t *)mt__data(rk) : NULL;
    if (a->device != MT_META && m && n && k) {
        lstsq_job j = {driver, m, n, k, m > 1 ? m : 1, ld > 1 ? ld : 1, -1,
                       has_rcond ? rcond : (dt == MT_F32 ? 0x1p-23 : 0x1p-52) * ld, NULL, NULL, NULL,
                       driver == MT_LSTSQ_GELS ? lapack_for(m, n, 1) : &openblas};
        double wq[2] = {0, 0};
        int iq = 1, r0 = 0;
        j.work = wq, j.iwork = &iq;
        lstsq_one(dt, &j, mat(w, 0), mat(x, 0), with_sv ? mt__data(sv) : NULL, &r0);
        float fq;
        memcpy(&fq, wq, sizeof fq); /* a float32 routine wrote a float */
        j.lwork = (int)(dt == MT_F32 ? fq : wq[0]) + 1;
        j.work = malloc((size_t)j.lwork * isz);
        j.iwork = malloc((size_t)(iq > 1 ? iq : 1) * sizeof(int));
        j.jpvt = malloc((size_t)n * sizeof(int));
        if (!j.work || !j.iwork || !j.jpvt) st = mt__error(MT_ERR_OOM, LSTSQ ": out of memory for the workspace");
        for (int64_t i = 0; !st && i < nbat; i++) {
            int r = 0, info = lstsq_one(dt, &j, mat(w, i), mat(x, i), with_sv ? mt__data(sv) + i * mn * isz : NULL, &r);
            if (rp) rp[i] = r;
            if (info > 0 && driver == MT_LSTSQ_GELS)
                st = failed(MT_ERR_LINALG, LSTSQ, w, i, "The least squares solution could not be "
                            "computed because the input matrix does not have full rank (error code: %d).", info);
            else if (info > 0)
                st = not_converged(LSTSQ, "singular values", w, i, info);
        }
        free(j.work), free(j.iwork), free(j.jpvt);
        if (st) goto done;
    } else if (a->device != MT_META) {
        /* an empty A or B: rank 0 as LAPACK's quick returns give (gelsd's LAPACK rejects an empty B, and so
         * does PyTorch's with an internal error: here its singular values are zeros); gels zeroes B */
        for (int64_t i = 0; rp && i < nbat; i++) rp[i] = 0;
        if (with_sv && (st = mt__impl_fill(sv, 0, 0, MT_SCALAR_INT))) goto done;
        if (driver == MT_LSTSQ_GELS && (st = mt__impl_fill(x, 0, 0, MT_SCALAR_INT))) goto done;
    }
    /* residuals: the squared norms of rows n.. of every column, when m > n, the driver is not gelsy and
     * (for gelsd / gelss) every matrix has full column rank; else empty */
    int resid = m > n && driver != MT_LSTSQ_GELSY;
    for (int64_t i = 0; resid && rp && i < nbat; i++) resid = rp[i] == n;
    if (resid) {
        memcpy(sx, sb, sizeof sx);
        sx[nd - 2] = k;
        if ((st = new_tensor(nd - 1, sx, dt, a->device, &res))) goto done;
        for (int64_t i = 0; a->device != MT_META && k && i < nbat; i++) /* k = 0: billions of empty batches */
            for (int64_t c = 0; c < k; c++) {
                double acc = 0;
                for (int64_t r = n; r < m; r++) {
                    double v = get(dt, mat(x, i), c * ld + r);
                    acc += v * v;
                }
                put(dt, mt__data(res), i * k + c, acc);
            }
    } else if ((st = new_tensor(1, &zero, dt, a->device, &res))) {
        goto done;
    }
    if (with_rank) {
        mt_tensor *r1 = rk;
        rk = NULL;
        if ((st = to_a_batch(r1, a, nd - 2, &rk))) goto done;
    }
    if (with_sv) {
        mt_tensor *s1 = sv;
        sv = NULL;
        if ((st = to_a_batch(s1, a, nd - 2, &sv))) goto done;
    }
    if ((st = mt__impl_slice(x, -2, 0, n, 1, &sol))) goto done;
    if (vec) {
        mt_tensor *s1 = NULL;
        st = mt__impl_squeeze(sol, 1, (int64_t[]){-1}, &s1);
        mt_tensor_release(sol);
        sol = s1;
    }
done:
    mt_tensor_release(b2); mt_tensor_release(w); mt_tensor_release(x);
    if (st) { mt_tensor_release(sol); mt_tensor_release(res); mt_tensor_release(rk); mt_tensor_release(sv); return st; }
    *solution = sol, *residuals = res, *rank = rk, *svals = sv;
    return MT_OK;
}
