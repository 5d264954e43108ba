/* norm.c — layer_norm forward and backward over the last dims (PyTorch's
 * native_layer_norm / native_layer_norm_backward on CPU).
 *
 * Rows of N elements are split across the thread pool. Per row: mean and
 * variance (two passes in lanes), rstd = 1/sqrt(var + eps), then
 * y = (x * rstd - mean * rstd) * w + b, the form PyTorch's kernel uses. The
 * backward follows PyTorch's closed form dx = a*dy*w + b*x + c per row; the
 * weight and bias gradients are summed per chunk of rows, then across chunks. */
#include <stdio.h>

#include "loops.h"
#include "nn.h"
#include "shape.h"

typedef struct {
    const char *x, *g, *w, *b; /* w, b: compute dtype or NULL */
    char *y, *mean, *rstd, *gw; /* gw: [nchunks][2N] partial weight/bias gradients */
    int64_t M, N, nchunks;
    double eps;
} ln_ctx;

#define DEF_LN(SUF, T)                                                                   \
    MT_SIMD static void ln_fwd_##SUF(void *p, int64_t b0, int64_t e0) {                  \
        const ln_ctx *c = p;                                                             \
        int64_t N = c->N;                                                                \
        const T *w = (const T *)c->w, *bb = (const T *)c->b;                             \
        for (int64_t r = b0; r < e0; r++) {                                              \
            const T *x = (const T *)c->x + r * N;                                        \
            T *y = (T *)c->y + r * N;                                                    \
            T mean = mt__rsum_##SUF(x, N) / (T)N;                                        \
            T acc[MT_LANES] = {0}, var = 0;                                              \
            int64_t i = 0;                                                               \
            for (; i + MT_LANES <= N; i += MT_LANES)                                     \
                for (int l = 0; l < MT_LANES; l++) {                                     \
                    T d = x[i + l] - mean;                                               \
                    acc[l] += d * d;                                                     \
                }                                                                        \
            for (; i < N; i++) var += (x[i] - mean) * (x[i] - mean);                     \
            for (int l = 0; l < MT_LANES; l++) var += acc[l];                            \
            var /= (T)N;                                                                 \
            T rstd = (T)1 / sqrt(var + (T)c->eps), bias = -mean * rstd;                  \
            if (w && bb)                                                                 \
                for (i = 0; i < N; i++) y[i] = (x[i] * rstd + bias) * w[i] + bb[i];      \
            else if (w)                                                                  \
                for (i = 0; i < N; i++) y[i] = (x[i] * rstd + bias) * w[i];              \
            else if (bb)                                                                 \
                for (i = 0; i < N; i++) y[i] = (x[i] * rstd + bias) + bb[i];             \
            else                                                                         \
                for (i = 0; i < N; i++) y[i] = x[i] * rstd + bias;                       \
            ((T *)c->mean)[r] = mean;                                                    \
            ((T *)c->rstd)[r] = rstd;                                                    \
        }                                                                                \
    }                                                                                    \
    /* one chunk of rows: dx (if wanted) and this chunk's dw/db partial sums */          \
    MT_SIMD static void ln_bwd_##SUF(void *p, int64_t c0, int64_t c1) {                  \
        const ln_ctx *c = p;                                                             \
        int64_t N = c->N;                                                                \
        const T *w = (const T *)c->w;                                                    \
        for (int64_t ch = c0; ch < c1; ch++) {                                           \
            int64_t rb = ch * c->M / c->nchunks, re = (ch + 1) * c->M / c->nchunks;      \
            T *dw = c->gw ? (T *)c->gw + ch * 2 * N : NULL, *db = dw ? dw + N : NULL;    \
            if (dw) for (int64_t i = 0; i < 2 * N; i++) dw[i] = 0;                       \
            for (int64_t r = rb; r < re; r++) {                                          \
                const T *x = (const T *)c->x + r * N, *dy = (const T *)c->g + r * N;     \
                T mean = ((const T *)c->mean)[r], rstd = ((const T *)c->rstd)[r];        \
                if (dw)                                                                  \
                    for (int64_t i = 0; i < N; i++) {                                    \
                        dw[i] += dy[i] * (x[i] - mean) * rstd;                           \
                        db[i] += dy[i];                                                  \
                    }                                                                    \
                if (!c->y) continue;                                                     \
                T *dx = (T *)c->y + r * N;                                               \
                T ds = 0, dbs = 0;                                                       \
                {                                                                        \
                    T a1[MT_LANES] = {0}, a2[MT_LANES] = {0};                            \
                    int64_t i = 0;                                                       \
                    for (; i + MT_LANES <= N; i += MT_LANES)                             \
                        for (int l = 0; l < MT_LANES; l++) {                             \
                            T gg = w ? dy[i + l] * w[i + l] : dy[i + l];                 \
                            a1[l] += gg * x[i + l];                                      \
                            a2[l] += gg;                                                 \
                        }                                                                \
                    for (; i < N; i++) {                                                 \
                        T gg = w ? dy[i] * w[i] : dy[i];                                 \
                        ds += gg * x[i];                                                 \
                        dbs += gg;                                                       \
                    }                                                                    \
                    for (int l = 0; l < MT_LANES; l++) ds += a1[l], dbs += a2[l];        \
                }                                                                        \
                T scale = (T)1 / (T)N;                                                   \
                T b = (dbs * mean - ds) * rstd * rstd * rstd * scale;                    \
                T cc = -b * mean - dbs * rstd * scale;                                   \
                if (w)                                                                   \
                    for (int64_t i = 0; i < N; i++) dx[i] = rstd * dy[i] * w[i] + b * x[i] + cc; \
                else                                                                     \
                    for (int64_t i = 0; i < N; i++) dx[i] = rstd * dy[i] + b * x[i] + cc; \
            }                                                                            \
        }                                                                                \
    }

DEF_LN(f, float)
DEF_LN(d, double)

static const char *fmt(char *buf, size_t cap, int n, const int64_t *s) { return mt__fmt_sizes(buf, cap, n, s); }

/* PyTorch's checks: shapes, then the mixed-dtype rules (bf16/f16 input may have float parameters) */
static mt_status ln_check(mt_tensor *x, int nnorm, const int64_t *shape, mt_tensor *w, mt_tensor *b) {
    char s1[256], s2[256];
    if (nnorm < 1)
        return mt__error(MT_ERR_RUNTIME, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                                         "least one element, but got normalized_shape = []");
    mt_tensor *ps[2] = {w, b};
    const char *pn[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) /* a meta weight or bias beside a CPU input has no data to read */
        if (ps[k]) MT_TRY(mt__same_device(x, ps[k]));
    for (int k = 0; k < 2; k++)
        if (ps[k] && (ps[k]->ndim != nnorm || memcmp(ps[k]->sizes, shape, nnorm * sizeof(int64_t))))
            return mt__error(MT_ERR_RUNTIME,
                             "Expected %s to be of same shape as normalized_shape, but got %s of shape %s and "
                             "normalized_shape = %s", pn[k], pn[k], fmt(s1, sizeof s1, ps[k]->ndim, ps[k]->sizes),
                             fmt(s2, sizeof s2, nnorm, shape));
    int bad = x->ndim < nnorm;
    for (int i = 0; !bad && i < nnorm; i++) bad = x->sizes[x->ndim - nnorm + i] != shape[i];
    if (bad) {
        char s3[300];
        snprintf(s3, sizeof s3, "%s", fmt(s1, sizeof s1, nnorm, shape));
        s3[strlen(s3) - 1] = 0; /* "[*, 2, 3]": drop the bracket the list opened */
        return mt__error(MT_ERR_RUNTIME, "Given normalized_shape=%s, expected input with shape [*, %s], but got "
                                         "input of size%s", fmt(s2, sizeof s2, nnorm, shape), s3 + 1,
                         fmt(s1, sizeof s1, x->ndim, x->sizes));
    }
    int pt = w ? w->dtype : b ? b->dtype : -1;
    if (pt >= 0 && pt != x->dtype) { /* PyTorch's check_mixed_data_type: the parameters, then the input */
        for (int k = 0; k < 2; k++)
            if (ps[k] && ps[k]->dtype != MT_F32)
                return mt__error(MT_ERR_RUNTIME, "mixed dtype (CPU): expect parameter to have scalar type of Float");
        if (x->dtype != MT_BF16 && x->dtype != MT_F16)
            return mt__error(MT_ERR_RUNTIME, "mixed dtype (CPU): all inputs must share same datatype.");
    } else {
        for (int k = 0; k < 2; k++)
            if (ps[k] && ps[k]->dtype != x->dtype)
                return mt__error(MT_ERR_RUNTIME, "expected scalar type %s but found %s", mt_dtype_names[x->dtype],
                                 mt_dtype_names[ps[k]->dtype]);
    }
    if (!mt__is_float(x->dtype)) return mt__not_implemented("LayerNormKernelImpl", x->dtype);
    return MT_OK;
}

mt_status mt__impl_layer_norm(mt_tensor *x, int nnorm, const int64_t *shape, mt_tensor *weight, mt_tensor *bias,
                              double eps, mt_tensor **out, mt_tensor **mean, mt_tensor **rstd) {
    MT_TRY(ln_check(x, nnorm, shape, weight, bias));
    int64_t N = 1, M = 1;
    for (int i = 0; i < x->ndim; i++) /* an empty x can have huge other dims: the mean's size must fit */
        if (__builtin_mul_overflow(*(i < x->ndim - nnorm ? &M : &N), x->sizes[i], i < x->ndim - nnorm ? &M : &N))
            return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    int cd = mt__nn_compute_dtype(x->dtype);
    if (x->device == MT_META) {
        MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, x->dtype, MT_META, out));
        if (mean) mean[0] = rstd[0] = NULL;
        return MT_OK;
    }
    mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL, *mu = NULL, *rs = NULL;
    mt_status st = mt__nn_contig(x, cd, &xc);
    if (!st && weight) st = mt__nn_contig(weight, cd, &wc);
    if (!st && bias) st = mt__nn_contig(bias, cd, &bc);
    if (!st) st = mt__alloc(x->ndim, x->sizes, NULL, cd, MT_CPU, &y);
    if (!st) st = mt__alloc(1, &M, NULL, cd, MT_CPU, &mu);
    if (!st) st = mt__alloc(1, &M, NULL, cd, MT_CPU, &rs);
    if (!st && N > 0) {
        ln_ctx c = {.x = mt__data(xc), .w = wc ? mt__data(wc) : NULL, .b = bc ? mt__data(bc) : NULL,
                    .y = mt__data(y), .mean = mt__data(mu), .rstd = mt__data(rs), .M = M, .N = N, .eps = eps};
        mt__parallel_for(M, 1 + MT_GRAIN_SIZE / (4 * N), cd == MT_F64 ? ln_fwd_d : ln_fwd_f, &c);
    }
    if (!st) { st = mt__nn_narrow(y, x->dtype, out); y = NULL; }
    if (!st && mean) { *mean = mu; *rstd = rs; mu = rs = NULL; }
    mt_tensor_release(xc); mt_tensor_release(wc); mt_tensor_release(bc);
    mt_tensor_release(y); mt_tensor_release(mu); mt_tensor_release(rs);
    return st;
}

mt_status mt__impl_layer_norm_backward(mt_tensor *grad, mt_tensor *x, int nnorm, mt_tensor *mean, mt_tensor *rstd,
                                       mt_tensor *weight, mt_tensor *bias, int mask, mt_tensor **gx, mt_tensor **gw,
                                       mt_tensor **gb) {
    int64_t N = 1, M = 1; /* they fitted in the forward */
    for (int i = 0; i < x->ndim; i++) *(i < x->ndim - nnorm ? &M : &N) = mt__wmul(*(i < x->ndim - nnorm ? &M : &N), x->sizes[i]);
    int cd = mt__nn_compute_dtype(x->dtype);
    if (!weight) mask &= ~2;
    if (!bias) mask &= ~4;
    mt_tensor *xc = NULL, *gc = NULL, *wc = NULL, *dx = NULL, *part = NULL;
    mt_status st = mt__nn_contig(x, cd, &xc);
    if (!st) st = mt__nn_contig(grad, cd, &gc);
    if (!st && weight) st = mt__nn_contig(weight, cd, &wc);
    if (!st && (mask & 1)) st = mt__alloc(x->ndim, x->sizes, NULL, cd, MT_CPU, &dx);
    int64_t nch = mt_get_num_threads();
    if (nch > M) nch = M > 0 ? M : 1;
    if (!st && (mask & 6)) {
        int64_t ps[2] = {nch, 2 * N};
        st = mt__alloc(2, ps, NULL, cd, MT_CPU, &part);
    }
    if (!st && N > 0 && M > 0) {
        ln_ctx c = {.x = mt__data(xc), .g = mt__data(gc), .w = wc ? mt__data(wc) : NULL, .y = dx ? mt__data(dx) : NULL,
                    .mean = mt__data(mean), .rstd = mt__data(rstd), .gw = part ? mt__data(part) : NULL,
                    .M = M, .N = N, .nchunks = nch};
        mt__parallel_for(nch, 1, cd == MT_F64 ? ln_bwd_d : ln_bwd_f, &c);
    }
    if (!st && (mask & 1)) { st = mt__nn_narrow(dx, x->dtype, gx); dx = NULL; }
    for (int k = 0; k < 2 && !st; k++) {
        if (!(mask & (2 << k))) continue;
        mt_tensor *r, *p = k ? bias : weight;
        if ((st = mt__alloc(p->ndim, p->sizes, NULL, cd, MT_CPU, &r))) break;
        if (M == 0 || N == 0) memset(mt__data(r), 0, N * mt_dtype_itemsize(cd));
        else if (cd == MT_F64) {
            double *o = (double *)mt__data(r), *pp = (double *)mt__data(part);
            for (int64_t i = 0; i < N; i++) o[i] = 0;
            for (int64_t ch = 0; ch < nch; ch++)
                for (int64_t i = 0; i < N; i++) o[i] += pp[ch * 2 * N + k * N + i];
        } else {
            float *o = (float *)mt__data(r), *pp = (float *)mt__data(part);
            for (int64_t i = 0; i < N; i++) o[i] = 0;
            for (int64_t ch = 0; ch < nch; ch++)
                for (int64_t i = 0; i < N; i++) o[i] += pp[ch * 2 * N + k * N + i];
        }
        st = mt__nn_narrow(r, p->dtype, k ? gb : gw);
    }
    if (st && gx && (mask & 1)) { MT_DROP(*gx); }
    if (st && (mask & 2)) { MT_DROP(*gw); }
    mt_tensor_release(xc); mt_tensor_release(gc); mt_tensor_release(wc);
    mt_tensor_release(dx); mt_tensor_release(part);
    return st;
}
