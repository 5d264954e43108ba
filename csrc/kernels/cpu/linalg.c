/* linalg.c — matrix products on OpenBLAS: mm, bmm, addmm, baddbmm, mv, dot and
 * PyTorch's matmul dispatch over ranks. bfloat16 runs on gemm_bf16.c (AMX or
 * AVX512-BF16) where the CPU has either; otherwise float16/bfloat16 run through
 * float32 GEMM (Debian's OpenBLAS has no bf16 GEMM) and round back; integers use an
 * int64-accumulating loop. Transposed operands go to BLAS without copies. */
#include <cblas.h>
#include <stdio.h>

#include "../../autograd/autograd.h"
#include "shape.h"

mt_status mt__gemm3_bf16(mt_tensor *A, mt_tensor *B, mt_tensor *C, double beta, double alpha); /* gemm_bf16.c */

static const char *cpp_name(int dt) { return mt__typemeta_names[dt]; }

/* Is the matrix (rows r, cols c, strides sr, sc) BLAS-addressable?
 * 0: row-major (ld = sr), 1: column-major (ld = sc), -1: needs a copy. */
static int blas_layout(int64_t r, int64_t c, int64_t sr, int64_t sc, int64_t *ld) {
    if (sc == 1 && (sr >= (c > 1 ? c : 1) || r == 1)) { *ld = r == 1 ? (c > 1 ? c : 1) : sr; return 0; }
    if (sr == 1 && (sc >= (r > 1 ? r : 1) || c == 1)) { *ld = c == 1 ? (r > 1 ? r : 1) : sc; return 1; }
    return -1;
}

/* C[i] = beta*C[i] + alpha*A[i]@B[i] for 3-D A [b,m,k], B [b,k,n], C [b,m,n] of one float dtype
 * (f32/f64), each matrix already BLAS-addressable. */
static void gemm_blas(mt_tensor *A, mt_tensor *B, mt_tensor *C, double beta, double alpha) {
    int64_t nb = A->sizes[0], m = A->sizes[1], k = A->sizes[2], n = B->sizes[2];
    const int64_t *sa = A->strides, *sb = B->strides, *sc = C->strides;
    if (A->dtype == MT_F32)
        mt__sgemm(nb, m, n, k, (float)alpha, (const float *)mt__data(A), sa[0], sa[1], sa[2], (const float *)mt__data(B),
                  sb[0], sb[1], sb[2], (float)beta, (float *)mt__data(C), sc[0], sc[1], sc[2]);
    else
        mt__dgemm(nb, m, n, k, alpha, (const double *)mt__data(A), sa[0], sa[1], sa[2], (const double *)mt__data(B),
                  sb[0], sb[1], sb[2], beta, (double *)mt__data(C), sc[0], sc[1], sc[2]);
}

/* complex64/complex128 C[i] = beta*C[i] + alpha*A[i]@B[i] on OpenBLAS's cgemm/zgemm, one call per
 * batch; A and B BLAS-addressable (a column-major one goes in transposed), C row-major */
static void gemm_complex(mt_tensor *A, mt_tensor *B, mt_tensor *C, double beta, double alpha) {
    int64_t nb = A->sizes[0], m = A->sizes[1], k = A->sizes[2], n = B->sizes[2], lda, ldb, ldc;
    int ta = blas_layout(m, k, A->strides[1], A->strides[2], &lda), tb = blas_layout(k, n, B->strides[1], B->strides[2], &ldb);
    blas_layout(m, n, C->strides[1], C->strides[2], &ldc);
    int isz = mt_dtype_itemsize(C->dtype);
    const double al[2] = {alpha, 0}, be[2] = {beta, 0};
    const float alf[2] = {(float)alpha, 0}, bef[2] = {(float)beta, 0};
    char *a = mt__data(A), *b = mt__data(B), *c = mt__data(C);
    for (int64_t i = 0; i < nb; i++) {
        void *ai = a + i * A->strides[0] * isz, *bi = b + i * B->strides[0] * isz, *ci = c + i * C->strides[0] * isz;
        if (C->dtype == MT_C64)
            cblas_cgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                        (int)k, alf, ai, (int)lda, bi, (int)ldb, bef, ci, (int)ldc);
        else
            cblas_zgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                        (int)k, al, ai, (int)lda, bi, (int)ldb, be, ci, (int)ldc);
    }
}

/* integer GEMM with int64 accumulation and wrap-around (A, B, C int64 contiguous) */
static void gemm_int(mt_tensor *A, mt_tensor *B, mt_tensor *C, int64_t beta, int64_t alpha) {
    int64_t nb = A->sizes[0], m = A->sizes[1], k = A->sizes[2], n = B->sizes[2];
    const int64_t *a = (const int64_t *)mt__data(A), *b = (const int64_t *)mt__data(B);
    int64_t *c = (int64_t *)mt__data(C);
    for (int64_t i = 0; i < nb; i++)
        for (int64_t r = 0; r < m; r++)
            for (int64_t q = 0; q < n; q++) {
                uint64_t acc = 0;
                for (int64_t p = 0; p < k; p++)
                    acc += (uint64_t)a[(i * m + r) * k + p] * (uint64_t)b[(i * k + p) * n + q];
                int64_t *dst = &c[(i * m + r) * n + q];
                *dst = (int64_t)((beta ? (uint64_t)beta * (uint64_t)*dst : 0) + (uint64_t)alpha * acc);
            }
}

static mt_status as_dtype_layout(mt_tensor *t, int dtype, int need_blas, mt_tensor **out) {
    int64_t ld;
    if (t->dtype == dtype && (!need_blas || blas_layout(t->sizes[1], t->sizes[2], t->strides[1], t->strides[2], &ld) >= 0)) {
        mt_tensor_retain(t);
        *out = t;
        return MT_OK;
    }
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, dtype, t->device, out));
    mt_status st = mt_copy_(*out, t);
    if (st) MT_DROP(*out);
    return st;
}

/* The core: C (3-D, already shaped [b,m,n]) = beta*C + alpha*A@B. */
static mt_status gemm3(mt_tensor *A, mt_tensor *B, mt_tensor *C, double beta, double alpha) {
    int dt = C->dtype;
    if (!mt__is_floating(dt) && !mt__is_complex(dt)) /* integer GEMMs take beta/alpha as int64, checked as PyTorch's Scalar */
        for (int i = 0; i < 2; i++) {
            double v = i ? alpha : beta;
            if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
                return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
        }
    MT_TRY(mt__same_device(A, B)); /* a meta operand beside CPU ones has no data to read */
    MT_TRY(mt__same_device(A, C));
    if (A->device == MT_META || mt_tensor_numel(C) == 0) return MT_OK;
    if (A->sizes[2] == 0 || alpha == 0) { /* empty inner dimension: C = beta * C */
        if (beta == 0) return mt_fill(C, 0, 0, MT_SCALAR_INT);
        mt_tensor *r;
        MT_TRY(mt_binary_scalar(MT_OP_MUL, C, beta, mt__f2i(beta), mt__is_floating(dt) || mt__is_complex(dt) ? MT_SCALAR_FLOAT : MT_SCALAR_INT, 0, 1, C, &r));
        mt_tensor_release(r);
        return MT_OK;
    }
    if ((dt == MT_BF16 || dt == MT_F16) && A->dtype == dt && B->dtype == dt && A->sizes[1] == 1 && B->sizes[2] == 1 &&
        (A->strides[2] == 1 || A->sizes[2] == 1) && (B->strides[1] == 1 || B->sizes[1] == 1) &&
        !mt__dot16(dt, A->sizes[0], A->sizes[2], (float)alpha, (const uint16_t *)mt__data(A), A->strides[0],
                   (const uint16_t *)mt__data(B), B->strides[0], (float)beta, (uint16_t *)mt__data(C), C->strides[0])) {
        /* one row times one column (dot, a full tensordot): the float32 dot product's chunks, as the small
         * products' float32 route below takes them; the GEMM would run one K chain (12 ms for K = 2^20) */
        mt_tensor_bump_version(C);
        return MT_OK;
    }
    if (dt == MT_BF16 && A->dtype == MT_BF16 && B->dtype == MT_BF16 && C->storage != A->storage &&
        C->storage != B->storage) { /* AMX or AVX512-BF16 where the CPU has it (writes C as it goes: no aliasing) */
        mt_status st = mt__gemm3_bf16(A, B, C, beta, alpha);
        if (st <= 0) { if (!st) mt_tensor_bump_version(C); return st; }
    }
    /* float16/bfloat16/float8 multiply and accumulate in float32, rounded once into C */
    int work = (dt == MT_F32 || dt == MT_F64 || mt__is_complex(dt)) ? dt : (mt__is_floating(dt) ? MT_F32 : MT_I64);
    int blas = work != MT_I64;
    mt_tensor *a = NULL, *b = NULL, *c = NULL;
    mt_status st = as_dtype_layout(A, work, blas, &a);
    if (!st) st = as_dtype_layout(B, work, blas, &b);
    if (!st) {
        int64_t ld;
        int lay = blas_layout(C->sizes[1], C->sizes[2], C->strides[1], C->strides[2], &ld);
        int direct = C->dtype == work && (!blas || (mt__is_complex(work) ? lay == 0 : lay >= 0)) /* complex: C row-major */
                     && (blas || mt_tensor_is_contiguous(C));
        if (direct) { c = C; mt_tensor_retain(c); }
        else if (!(st = mt__alloc(3, C->sizes, NULL, work, C->device, &c)) && beta != 0) st = mt_copy_(c, C);
    }
    if (!st) {
        if (!blas && (!mt_tensor_is_contiguous(a) || !mt_tensor_is_contiguous(b))) {
            mt_tensor *ca, *cb;
            st = mt_contiguous(a, &ca);
            if (!st) { mt_tensor_release(a); a = ca; st = mt_contiguous(b, &cb); }
            if (!st) { mt_tensor_release(b); b = cb; }
        }
        if (!st) {
            if (mt__is_complex(work)) gemm_complex(a, b, c, beta, alpha);
            else if (blas) gemm_blas(a, b, c, beta, alpha);
            else gemm_int(a, b, c, (int64_t)beta, (int64_t)alpha);
            if (c != C) st = mt_copy_(C, c);
            else mt_tensor_bump_version(C);
        }
    }
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_tensor_release(c);
    return st;
}

static mt_status check_same_dtype(const mt_tensor *a, const mt_tensor *b) {
    if (a->dtype != b->dtype)
        return mt__error(MT_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                         cpp_name(a->dtype), cpp_name(b->dtype));
    if (a->dtype == MT_BOOL)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    return MT_OK;
}

static mt_status as3d(mt_tensor *t, mt_tensor **out) { return mt_unsqueeze(t, 0, out); }

/* out (if given) gets the result's shape; returns the tensor to write into */
static mt_status prepare_out(mt_tensor *out, int ndim, const int64_t *sizes, int dtype, int device, mt_tensor **res) {
    if (!out) return mt__alloc(ndim, sizes, NULL, dtype, device, res);
    if (out->dtype != dtype)
        return mt__error(MT_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                         cpp_name(dtype), cpp_name(out->dtype));
    if (out->ndim != ndim || memcmp(out->sizes, sizes, ndim * sizeof(int64_t))) MT_TRY(mt_resize_(out, ndim, sizes));
    mt_tensor_retain(out);
    *res = out;
    return MT_OK;
}

/* addmm: result = beta*self + alpha*(m1 @ m2); self broadcast to [n, p]. self may be NULL (mm). */
static mt_status addmm_impl(mt_tensor *self, mt_tensor *m1, mt_tensor *m2, double beta, double alpha, mt_tensor *out,
                            mt_tensor **result) {
    if (m1->ndim != 2) return mt__error(MT_ERR_RUNTIME, "self must be a matrix");
    if (m2->ndim != 2) return mt__error(MT_ERR_RUNTIME, "mat2 must be a matrix");
    if (m1->sizes[1] != m2->sizes[0]) /* PyTorch checks the shapes before the dtypes */
        return mt__error(MT_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                         (long long)m1->sizes[0], (long long)m1->sizes[1], (long long)m2->sizes[0], (long long)m2->sizes[1]);
    MT_TRY(check_same_dtype(m1, m2));
    int64_t sz[2] = {m1->sizes[0], m2->sizes[1]};
    mt_tensor *r;
    MT_TRY(prepare_out(out, 2, sz, m1->dtype, m1->device, &r));
    mt_status st = MT_OK;
    if (self && beta != 0) st = mt_copy_(r, self); /* broadcasts self */
    mt_tensor *a = NULL, *b = NULL, *c = NULL;
    if (!st) st = as3d(m1, &a);
    if (!st) st = as3d(m2, &b);
    if (!st) st = as3d(r, &c);
    if (!st) st = gemm3(a, b, c, self ? beta : 0, alpha);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_tensor_release(c);
    if (st) { mt_tensor_release(r); return st; }
    *result = r;
    return MT_OK;
}

mt_status mt__impl_mm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result) {
    return addmm_impl(NULL, a, b, 0, 1, out, result);
}

mt_status mt__impl_addmm(mt_tensor *self, mt_tensor *m1, mt_tensor *m2, double beta, double alpha, mt_tensor *out,
                   mt_tensor **result) {
    return addmm_impl(self, m1, m2, beta, alpha, out, result);
}

static mt_status baddbmm_impl(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha,
                              mt_tensor *out, mt_tensor **result) {
    if (b1->ndim != 3) return mt__error(MT_ERR_RUNTIME, "batch1 must be a 3D tensor");
    if (b2->ndim != 3) return mt__error(MT_ERR_RUNTIME, "batch2 must be a 3D tensor");
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2])
        return mt__error(MT_ERR_RUNTIME,
                         "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                         (long long)b1->sizes[0], (long long)b1->sizes[2], (long long)b2->sizes[0], (long long)b2->sizes[1]);
    if (b1->dtype != b2->dtype)
        return mt__error(MT_ERR_RUNTIME, "expected scalar type %s but found %s", mt_dtype_names[b1->dtype],
                         mt_dtype_names[b2->dtype]);
    if (b1->dtype == MT_BOOL || mt__is_float8(b1->dtype)) /* PyTorch's CPU has float8 mm, not bmm */
        return mt__not_implemented(self ? "baddbmm" : "bmm", b1->dtype);
    int64_t sz[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    mt_tensor *r, *se = NULL;
    if (self) MT_TRY(mt_expand(self, 3, sz, &se)); /* PyTorch's expand error for a self of the wrong shape */
    mt_status st = prepare_out(out, 3, sz, b1->dtype, b1->device, &r);
    if (st) { mt_tensor_release(se); return st; }
    if (self && beta != 0) st = mt_copy_(r, se);
    mt_tensor_release(se);
    if (!st) st = gemm3(b1, b2, r, self ? beta : 0, alpha);
    if (st) { mt_tensor_release(r); return st; }
    *result = r;
    return MT_OK;
}

mt_status mt__impl_bmm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result) {
    return baddbmm_impl(NULL, a, b, 0, 1, out, result);
}

mt_status mt__impl_baddbmm(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha, mt_tensor *out,
                     mt_tensor **result) {
    return baddbmm_impl(self, b1, b2, beta, alpha, out, result);
}

mt_status mt__impl_dot(mt_tensor *a, mt_tensor *b, mt_tensor **result) {
    if (a->ndim != 1 || b->ndim != 1)
        return mt__error(MT_ERR_RUNTIME, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
    if (a->dtype != b->dtype)
        return mt__error(MT_ERR_RUNTIME, "dot : expected both vectors to have same dtype, but found %s and %s",
                         mt_dtype_names[a->dtype], mt_dtype_names[b->dtype]);
    if (a->dtype == MT_BOOL || mt__is_float8(a->dtype)) return mt__not_implemented("dot", a->dtype);
    if (a->sizes[0] != b->sizes[0])
        return mt__error(MT_ERR_RUNTIME,
                         "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                         "elements, but got %lld and %lld elements respectively",
                         (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0], (long long)b->sizes[0]);
    mt_tensor *a2 = NULL, *b2 = NULL, *r = NULL;
    mt_status st = mt_unsqueeze(a, 0, &a2);
    if (!st) st = mt_unsqueeze(b, 1, &b2);
    if (!st) st = mt_mm(a2, b2, NULL, &r);
    if (!st) st = mt_view(r, 0, NULL, result);
    mt_tensor_release(a2);
    mt_tensor_release(b2);
    mt_tensor_release(r);
    return st;
}

mt_status mt__impl_mv(mt_tensor *m, mt_tensor *v, mt_tensor **result) {
    if (mt__is_float8(m->dtype)) return mt__not_implemented("addmv_impl_cpu", m->dtype); /* complex: mm's cgemm */
    if (m->ndim != 2 || v->ndim != 1 || m->sizes[1] != v->sizes[0])
        return mt__error(MT_ERR_RUNTIME, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                         (long long)(m->ndim ? m->sizes[0] : 0), (long long)(m->ndim ? m->sizes[0] : 0),
                         (long long)(m->ndim > 1 ? m->sizes[1] : 0), (long long)(v->ndim ? v->sizes[0] : 0));
    mt_tensor *v2 = NULL, *r = NULL;
    mt_status st = mt_unsqueeze(v, 1, &v2);
    if (!st) st = mt_mm(m, v2, NULL, &r);
    if (!st) st = mt_view(r, 1, m->sizes, result);
    mt_tensor_release(v2);
    mt_tensor_release(r);
    return st;
}

/* PyTorch's matmul: dot, mv, mm, folded mm, or broadcast batched bmm */
mt_status mt_matmul(mt_tensor *a, mt_tensor *b, mt_tensor **result) {
    MT_PROFILE("matmul", a, b);
    int da = a->ndim, db = b->ndim;
    if (da == 0 || db == 0)
        return mt__error(MT_ERR_RUNTIME, "both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                         da, db);
    if (da == 1 && db == 1) return mt_dot(a, b, result);
    if (da == 2 && db == 1) return mt_mv(a, b, result);
    if (da == 2 && db == 2) return mt_mm(a, b, NULL, result);
    mt_status st;
    if (da == 1 && db == 2) {
        mt_tensor *a2 = NULL, *r = NULL;
        st = mt_unsqueeze(a, 0, &a2);
        if (!st) st = mt_mm(a2, b, NULL, &r);
        if (!st) st = mt_squeeze(r, 1, (int64_t[]){0}, result);
        mt_tensor_release(a2);
        mt_tensor_release(r);
        return st;
    }
    if (da >= 3 && db <= 2) { /* fold a's batch dims into rows */
        MT_TRY(check_same_dtype(a, b));
        int64_t k = a->sizes[da - 1], rows = mt__numel(da - 1, a->sizes);
        mt_tensor *a2 = NULL, *b2 = NULL, *r = NULL;
        st = mt_reshape(a, 2, (int64_t[]){rows, k}, &a2);
        if (!st) st = db == 1 ? mt_unsqueeze(b, 1, &b2) : (mt_tensor_retain(b), b2 = b, MT_OK);
        if (!st) st = mt_mm(a2, b2, NULL, &r);
        if (!st) {
            int64_t sz[MT_MAX_DIMS];
            memcpy(sz, a->sizes, (da - 1) * sizeof(int64_t));
            if (db == 2) sz[da - 1] = b->sizes[1];
            st = mt__unsafe_view(r, db == 2 ? da : da - 1, sz, result);
        }
        mt_tensor_release(a2);
        mt_tensor_release(b2);
        mt_tensor_release(r);
        return st;
    }
    /* general: broadcast batch dims, bmm, reshape */
    MT_TRY(check_same_dtype(a, b));
    mt_tensor *a1 = NULL, *b1 = NULL;
    st = da == 1 ? mt_unsqueeze(a, 0, &a1) : (mt_tensor_retain(a), a1 = a, MT_OK);
    if (!st) st = db == 1 ? mt_unsqueeze(b, 1, &b1) : (mt_tensor_retain(b), b1 = b, MT_OK);
    if (st) { mt_tensor_release(a1); return st; }
    int na = a1->ndim - 2, nb = b1->ndim - 2;
    int64_t n = a1->sizes[na], m = a1->sizes[na + 1], m2 = b1->sizes[nb], p = b1->sizes[nb + 1];
    /* broadcast the batch shapes */
    mt_tensor *ab = NULL, *bb = NULL;
    int64_t bshape[MT_MAX_DIMS];
    int bnd = na > nb ? na : nb;
    for (int i = 0; i < bnd; i++) {
        int ia = i - (bnd - na), ib = i - (bnd - nb);
        int64_t x = ia >= 0 ? a1->sizes[ia] : 1, y = ib >= 0 ? b1->sizes[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            mt_tensor_release(a1);
            mt_tensor_release(b1);
            return mt__error(MT_ERR_RUNTIME,
                             "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                             (long long)x, (long long)y, i);
        }
        bshape[i] = x == 1 ? y : x;
    }
    int64_t batch = mt__numel(bnd, bshape);
    int64_t ea[MT_MAX_DIMS], eb[MT_MAX_DIMS];
    memcpy(ea, bshape, bnd * sizeof(int64_t));
    memcpy(eb, bshape, bnd * sizeof(int64_t));
    ea[bnd] = n, ea[bnd + 1] = m, eb[bnd] = m2, eb[bnd + 1] = p;
    mt_tensor *a3 = NULL, *b3 = NULL, *r = NULL;
    st = mt_expand(a1, bnd + 2, ea, &ab);
    if (!st) st = mt_expand(b1, bnd + 2, eb, &bb);
    if (!st) st = mt_reshape(ab, 3, (int64_t[]){batch, n, m}, &a3);
    if (!st) st = mt_reshape(bb, 3, (int64_t[]){batch, m2, p}, &b3);
    if (!st) st = mt_bmm(a3, b3, NULL, &r);
    if (!st) {
        int64_t rs[MT_MAX_DIMS];
        int rn = 0;
        for (int i = 0; i < bnd; i++) rs[rn++] = bshape[i];
        if (da > 1) rs[rn++] = n;
        if (db > 1) rs[rn++] = p;
        st = mt__unsafe_view(r, rn, rs, result);
    }
    mt_tensor_release(a1); mt_tensor_release(b1); mt_tensor_release(ab); mt_tensor_release(bb);
    mt_tensor_release(a3); mt_tensor_release(b3); mt_tensor_release(r);
    return st;
}
