/* distance.c — pdist and cdist's direct form (PyTorch's _pdist_forward / _cdist_forward) and their
 * backward kernels (_pdist_backward / _cdist_backward), float32 and float64 as PyTorch's CPU kernels
 * (float16/bfloat16 reach its "not implemented" error). No autograd here: mindtorch_v2/_nn_ops.py
 * records PdistBackward0 / CdistBackward0 around these.
 *
 * Forward: one output per pair of rows, the rows' differences reduced in MT_LANES lanes (vectorised
 * without -ffast-math; PyTorch's pdist sums in Vectorized lanes too), threaded over the outputs.
 * Backward: each thread owns rows of the input's gradient and adds, for one row r, every other
 * row's term in row order: the order of PyTorch's column-wise loop (pairs (j, r) with j < r first,
 * then (r, j)), with the same per-element expressions, so the sums match it. */
#include "loops.h"
#include "nn.h"
#include "shape.h"

enum { D_ZERO, D_ONE, D_TWO, D_INF, D_LT2, D_P };

/* PyTorch's choice of norm: the forward has no D_LT2 (it takes the general form), the backward
 * uses it below 2 (p == 0: a zero gradient) */
static int dist_kind(double p, int backward) {
    if (p == 0) return D_ZERO;
    if (p == 1) return D_ONE;
    if (p == 2) return D_TWO;
    if (isinf(p)) return D_INF;
    return backward && p < 2 ? D_LT2 : D_P;
}

#define DEF_DIST(SUF, T, POW, SQRT, FABS)                                                         \
    /* the p-norm of a - b over m elements */                                                     \
    MT_SIMD static T dist_##SUF(const T *a, const T *b, int64_t m, int kind, T p) {               \
        T acc[MT_LANES] = {0}, s = 0;                                                             \
        int64_t i = 0;                                                                            \
        switch (kind) {                                                                           \
        case D_TWO:                                                                               \
            for (; i + MT_LANES <= m; i += MT_LANES)                                              \
                for (int l = 0; l < MT_LANES; l++) {                                              \
                    T d = a[i + l] - b[i + l];                                                    \
                    acc[l] += d * d;                                                              \
                }                                                                                 \
            for (; i < m; i++) s += (a[i] - b[i]) * (a[i] - b[i]);                                \
            for (int l = 0; l < MT_LANES; l++) s += acc[l];                                       \
            return SQRT(s);                                                                       \
        case D_ONE:                                                                               \
            for (; i + MT_LANES <= m; i += MT_LANES)                                              \
                for (int l = 0; l < MT_LANES; l++) acc[l] += FABS(a[i + l] - b[i + l]);          \
            for (; i < m; i++) s += FABS(a[i] - b[i]);                                            \
            for (int l = 0; l < MT_LANES; l++) s += acc[l];                                       \
            return s;                                                                             \
        case D_ZERO: /* min(ceil(|d|), 1): 1 for any nonzero difference, NaN kept */             \
            for (; i + MT_LANES <= m; i += MT_LANES)                                              \
                for (int l = 0; l < MT_LANES; l++) {                                              \
                    T d = a[i + l] - b[i + l];                                                    \
                    acc[l] += d != d ? d : (T)(d != 0);                                           \
                }                                                                                 \
            for (; i < m; i++) {                                                                  \
                T d = a[i] - b[i];                                                                \
                s += d != d ? d : (T)(d != 0);                                                    \
            }                                                                                     \
            for (int l = 0; l < MT_LANES; l++) s += acc[l];                                       \
            return s;                                                                             \
        case D_INF: /* the largest |d|, NaN propagating (Vectorized maximum) */                   \
            for (; i + MT_LANES <= m; i += MT_LANES)                                              \
                for (int l = 0; l < MT_LANES; l++) {                                              \
                    T d = FABS(a[i + l] - b[i + l]);                                              \
                    acc[l] = (d > acc[l] || d != d) ? d : acc[l];                                 \
                }                                                                                 \
            for (; i < m; i++) {                                                                  \
                T d = FABS(a[i] - b[i]);                                                          \
                s = (d > s || d != d) ? d : s;                                                    \
            }                                                                                     \
            for (int l = 0; l < MT_LANES; l++) s = (acc[l] > s || acc[l] != acc[l]) ? acc[l] : s; \
            return s;                                                                             \
        default:                                                                                  \
            for (; i + MT_LANES <= m; i += MT_LANES)                                              \
                for (int l = 0; l < MT_LANES; l++) acc[l] += POW(FABS(a[i + l] - b[i + l]), p);   \
            for (; i < m; i++) s += POW(FABS(a[i] - b[i]), p);                                    \
            for (int l = 0; l < MT_LANES; l++) s += acc[l];                                       \
            return (T)pow((double)s, 1.0 / (double)p); /* std::pow(scalar_t, double) */            \
        }                                                                                         \
    }                                                                                             \
    /* res[0, m) += the gradient term of the pair whose difference is a - b (PyTorch's            \
     * per-norm backward expressions, in its order of operations) */                              \
    MT_SIMD static void dist_bwd_##SUF(T *res, const T *a, const T *b, int64_t m, int kind, T p,  \
                                       T g, T dist) {                                             \
        switch (kind) {                                                                           \
        case D_ONE:                                                                               \
            for (int64_t i = 0; i < m; i++) {                                                     \
                T d = a[i] - b[i];                                                                \
                res[i] += g * (T)((d > 0) - (d < 0));                                             \
            }                                                                                     \
            return;                                                                               \
        case D_TWO:                                                                               \
            if (dist == 0) return;                                                                \
            for (int64_t i = 0; i < m; i++) res[i] += g * (a[i] - b[i]) / dist;                   \
            return;                                                                               \
        case D_INF:                                                                               \
            for (int64_t i = 0; i < m; i++) {                                                     \
                T d = a[i] - b[i];                                                                \
                res[i] += g * (T)((d > 0) - (d < 0)) * (T)(FABS(d) == dist);                      \
            }                                                                                     \
            return;                                                                               \
        case D_LT2: {                                                                             \
            if (dist == 0) return;                                                                \
            T dp = POW(dist, p - 1);                                                              \
            for (int64_t i = 0; i < m; i++) {                                                     \
                T d = a[i] - b[i];                                                                \
                /* zero where d == 0 below p = 1 (PyTorch's blend; 0 * inf would be NaN) */       \
                res[i] += (d == 0 && p < 1) ? (T)0                                                \
                                            : (T)((d > 0) - (d < 0)) * POW(FABS(d), p - 1) * g / dp; \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        case D_P: {                                                                               \
            if (dist == 0) return;                                                                \
            T dp = POW(dist, p - 1);                                                              \
            for (int64_t i = 0; i < m; i++) {                                                     \
                T d = a[i] - b[i];                                                                \
                res[i] += d * POW(FABS(d), p - 2) * g / dp;                                       \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        default: return; /* p == 0 */                                                             \
        }                                                                                         \
    }
DEF_DIST(f32, float, powf, sqrtf, fabsf)
DEF_DIST(f64, double, pow, sqrt, fabs)

typedef struct {
    const char *x1, *x2, *grad, *dist;
    char *out;
    int64_t n, r1, r2, m;
    int kind, f64;
    double p;
} dist_ctx;

/* the first pair index of row i among pdist's pairs (i, j > i) of n rows */
static inline int64_t pair_start(int64_t i, int64_t n) { return i * n - i * (i + 1) / 2; }

/* pdist outputs [b, e): the pair of each found from the first by walking (i, j) */
static void pdist_part(void *p, int64_t b, int64_t e) {
    const dist_ctx *c = p;
    int64_t n = c->n, m = c->m, i = 0;
    while (pair_start(i + 1, n) <= b) i++;
    int64_t j = b - pair_start(i, n) + i + 1;
    for (int64_t k = b; k < e; k++) {
        if (c->f64)
            ((double *)c->out)[k] = dist_f64((const double *)c->x1 + i * m, (const double *)c->x1 + j * m, m, c->kind, c->p);
        else
            ((float *)c->out)[k] = dist_f32((const float *)c->x1 + i * m, (const float *)c->x1 + j * m, m, c->kind,
                                            (float)c->p);
        if (++j == n) i++, j = i + 1;
    }
}

/* cdist outputs [b, e) of (B, r1, r2) */
static void cdist_part(void *p, int64_t b, int64_t e) {
    const dist_ctx *c = p;
    int64_t r1 = c->r1, r2 = c->r2, m = c->m;
    for (int64_t k = b; k < e; k++) {
        int64_t bt = k / (r1 * r2), i = k / r2 % r1, j = k % r2;
        int64_t o1 = (bt * r1 + i) * m, o2 = (bt * r2 + j) * m;
        if (c->f64)
            ((double *)c->out)[k] = dist_f64((const double *)c->x1 + o1, (const double *)c->x2 + o2, m, c->kind, c->p);
        else
            ((float *)c->out)[k] = dist_f32((const float *)c->x1 + o1, (const float *)c->x2 + o2, m, c->kind,
                                            (float)c->p);
    }
}

/* rows [b, e) of pdist's input gradient */
static void pdist_bwd_part(void *p, int64_t b, int64_t e) {
    const dist_ctx *c = p;
    int64_t n = c->n, m = c->m;
    for (int64_t r = b; r < e; r++)
        for (int64_t j = 0; j < n; j++) {
            if (j == r) continue;
            /* the pair (min, max); the term of row r is the pair's with the difference x_r - x_j, which is
             * exactly the negated term PyTorch subtracts for the pair's second row */
            int64_t k = j < r ? pair_start(j, n) + r - j - 1 : pair_start(r, n) + j - r - 1;
            if (c->f64)
                dist_bwd_f64((double *)c->out + r * m, (const double *)c->x1 + r * m, (const double *)c->x1 + j * m, m,
                             c->kind, c->p, ((const double *)c->grad)[k], ((const double *)c->dist)[k]);
            else
                dist_bwd_f32((float *)c->out + r * m, (const float *)c->x1 + r * m, (const float *)c->x1 + j * m, m,
                             c->kind, (float)c->p, ((const float *)c->grad)[k], ((const float *)c->dist)[k]);
        }
}

/* rows [b, e) of the (B * r1) rows of cdist's x1 gradient */
static void cdist_bwd_part(void *p, int64_t b, int64_t e) {
    const dist_ctx *c = p;
    int64_t r1 = c->r1, r2 = c->r2, m = c->m;
    for (int64_t r = b; r < e; r++) {
        int64_t bt = r / r1;
        for (int64_t j = 0; j < r2; j++) {
            int64_t k = r * r2 + j, o2 = (bt * r2 + j) * m;
            if (c->f64)
                dist_bwd_f64((double *)c->out + r * m, (const double *)c->x1 + r * m, (const double *)c->x2 + o2, m,
                             c->kind, c->p, ((const double *)c->grad)[k], ((const double *)c->dist)[k]);
            else
                dist_bwd_f32((float *)c->out + r * m, (const float *)c->x1 + r * m, (const float *)c->x2 + o2, m,
                             c->kind, (float)c->p, ((const float *)c->grad)[k], ((const float *)c->dist)[k]);
        }
    }
}

static mt_status check_dist(const char *fn, const mt_tensor *t, int ndim, int dtype) {
    if (t->ndim != ndim) return mt__error(MT_ERR_RUNTIME, "%s: expected a %d-D tensor, got %d-D", fn, ndim, t->ndim);
    if (t->dtype != dtype) return mt__error(MT_ERR_RUNTIME, "%s: expected all tensors of one dtype", fn);
    return MT_OK;
}

/* contiguous references of up to four tensors (NULL entries stay NULL); on failure none is kept */
static mt_status contig_all(mt_tensor *const *in, mt_tensor **out, int n) {
    for (int i = 0; i < n; i++) out[i] = NULL;
    for (int i = 0; i < n; i++) {
        mt_status st = in[i] ? mt__impl_contiguous(in[i], &out[i]) : MT_OK;
        if (st) {
            for (int k = 0; k < i; k++) mt_tensor_release(out[k]);
            return st;
        }
    }
    return MT_OK;
}

static void release_all(mt_tensor **t, int n) {
    for (int i = 0; i < n; i++) mt_tensor_release(t[i]);
}

/* n(n-1)/2 pairs, or -1 past int64 (an empty input may have 2^40 rows) */
static int64_t npairs(int64_t n) {
    int64_t p;
    if (n < 2) return 0;
    return __builtin_mul_overflow(n, n - 1, &p) ? -1 : p / 2;
}

/* a part per ~16K element visits (PyTorch's GRAIN_SIZE / (16 m) pairs) */
static int64_t pair_grain(int64_t m) { return m > 2048 ? 1 : 2048 / (m ? m : 1); }

mt_status mt_pdist_forward(mt_tensor *x, double p, mt_tensor **out) {
    MT_PROFILE("_pdist_forward", x);
    *out = NULL;
    if (x->dtype != MT_F32 && x->dtype != MT_F64) return mt__not_implemented("pdist", x->dtype);
    MT_TRY(check_dist("_pdist_forward", x, 2, x->dtype));
    if (!(p >= 0)) return mt__error(MT_ERR_RUNTIME, "pdist only supports non-negative p values");
    int64_t n = x->sizes[0], m = x->sizes[1], np = npairs(n);
    if (np < 0) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    MT_TRY(mt__alloc(1, &np, NULL, x->dtype, x->device, out));
    if (x->device == MT_META || np == 0) return MT_OK;
    if (m == 0) {
        memset(mt__data(*out), 0, np * mt_dtype_itemsize(x->dtype));
        return MT_OK;
    }
    mt_tensor *xc;
    mt_status st = mt__impl_contiguous(x, &xc);
    if (st) { MT_DROP(*out); return st; }
    dist_ctx c = {.x1 = mt__data(xc), .out = mt__data(*out), .n = n, .m = m, .kind = dist_kind(p, 0),
                  .f64 = x->dtype == MT_F64, .p = p};
    mt__parallel_for(np, pair_grain(m), pdist_part, &c);
    mt_tensor_release(xc);
    return MT_OK;
}

mt_status mt_pdist_backward(mt_tensor *grad, mt_tensor *x, double p, mt_tensor *dist, mt_tensor **out) {
    MT_PROFILE("_pdist_backward", grad, x, dist);
    *out = NULL;
    if (x->dtype != MT_F32 && x->dtype != MT_F64) return mt__not_implemented("pdist_backward", x->dtype);
    MT_TRY(check_dist("_pdist_backward", x, 2, x->dtype));
    MT_TRY(check_dist("_pdist_backward", grad, 1, x->dtype));
    MT_TRY(check_dist("_pdist_backward", dist, 1, x->dtype));
    int64_t n = x->sizes[0], m = x->sizes[1], np = npairs(n);
    if (np < 0 || grad->sizes[0] != np || dist->sizes[0] != np)
        return mt__error(MT_ERR_RUNTIME, "_pdist_backward requires grad and dist to have n(n-1)/2 elements");
    MT_TRY(mt__same_device(x, grad));
    MT_TRY(mt__same_device(x, dist));
    MT_TRY(mt__alloc(2, x->sizes, NULL, x->dtype, x->device, out));
    if (x->device == MT_META) return MT_OK;
    memset(mt__data(*out), 0, n * m * mt_dtype_itemsize(x->dtype));
    if (np == 0 || m == 0 || !(p >= 0) || p == 0) return MT_OK;
    mt_tensor *in[3] = {x, grad, dist}, *cc[3];
    mt_status st = contig_all(in, cc, 3);
    if (st) { MT_DROP(*out); return st; }
    dist_ctx c = {.x1 = mt__data(cc[0]), .grad = mt__data(cc[1]), .dist = mt__data(cc[2]), .out = mt__data(*out),
                  .n = n, .m = m, .kind = dist_kind(p, 1), .f64 = x->dtype == MT_F64, .p = p};
    mt__parallel_for(n, 1, pdist_bwd_part, &c);
    release_all(cc, 3);
    return MT_OK;
}

/* x1 (B, r1, m), x2 (B, r2, m): the batch already broadcast by the caller */
static mt_status check_cdist(const char *fn, mt_tensor *x1, mt_tensor *x2) {
    if (x1->dtype != MT_F32 && x1->dtype != MT_F64) return mt__not_implemented(fn, x1->dtype);
    MT_TRY(check_dist(fn, x1, 3, x1->dtype));
    MT_TRY(check_dist(fn, x2, 3, x1->dtype));
    if (x1->sizes[0] != x2->sizes[0] || x1->sizes[2] != x2->sizes[2])
        return mt__error(MT_ERR_RUNTIME, "%s: x1 and x2 must have the same batch size and number of columns", fn);
    return mt__same_device(x1, x2);
}

mt_status mt_cdist_forward(mt_tensor *x1, mt_tensor *x2, double p, mt_tensor **out) {
    MT_PROFILE("_cdist_forward", x1, x2);
    *out = NULL;
    MT_TRY(check_cdist("cdist", x1, x2));
    if (!(p >= 0)) return mt__error(MT_ERR_RUNTIME, "cdist only supports non-negative p values");
    int64_t B = x1->sizes[0], r1 = x1->sizes[1], r2 = x2->sizes[1], m = x1->sizes[2];
    int64_t sizes[3] = {B, r1, r2};
    MT_TRY(mt__alloc(3, sizes, NULL, x1->dtype, x1->device, out));
    int64_t total = mt_tensor_numel(*out); /* the sizes' product passed mt__alloc's overflow check */
    if (x1->device == MT_META || total == 0) return MT_OK;
    if (m == 0) {
        memset(mt__data(*out), 0, total * mt_dtype_itemsize(x1->dtype));
        return MT_OK;
    }
    mt_tensor *in[2] = {x1, x2}, *cc[2];
    mt_status st = contig_all(in, cc, 2);
    if (st) { MT_DROP(*out); return st; }
    dist_ctx c = {.x1 = mt__data(cc[0]), .x2 = mt__data(cc[1]), .out = mt__data(*out), .r1 = r1, .r2 = r2, .m = m,
                  .kind = dist_kind(p, 0), .f64 = x1->dtype == MT_F64, .p = p};
    mt__parallel_for(total, pair_grain(m), cdist_part, &c);
    release_all(cc, 2);
    return MT_OK;
}

mt_status mt_cdist_backward(mt_tensor *grad, mt_tensor *x1, mt_tensor *x2, double p, mt_tensor *dist,
                            mt_tensor **out) {
    MT_PROFILE("_cdist_backward", grad, x1, x2, dist);
    *out = NULL;
    MT_TRY(check_cdist("cdist_backward", x1, x2));
    MT_TRY(check_dist("_cdist_backward", grad, 3, x1->dtype));
    MT_TRY(check_dist("_cdist_backward", dist, 3, x1->dtype));
    int64_t B = x1->sizes[0], r1 = x1->sizes[1], r2 = x2->sizes[1], m = x1->sizes[2];
    for (int d = 0; d < 3; d++)
        if (grad->sizes[d] != (int64_t[]){B, r1, r2}[d] || dist->sizes[d] != grad->sizes[d])
            return mt__error(MT_ERR_RUNTIME, "_cdist_backward: grad and cdist must be (B, r1, r2)");
    MT_TRY(mt__same_device(x1, grad));
    MT_TRY(mt__same_device(x1, dist));
    MT_TRY(mt__alloc(3, x1->sizes, NULL, x1->dtype, x1->device, out));
    if (x1->device == MT_META) return MT_OK;
    memset(mt__data(*out), 0, B * r1 * m * mt_dtype_itemsize(x1->dtype));
    if (B * r1 * r2 == 0 || m == 0 || !(p >= 0) || p == 0) return MT_OK;
    mt_tensor *in[4] = {x1, x2, grad, dist}, *cc[4];
    mt_status st = contig_all(in, cc, 4);
    if (st) { MT_DROP(*out); return st; }
    dist_ctx c = {.x1 = mt__data(cc[0]), .x2 = mt__data(cc[1]), .grad = mt__data(cc[2]), .dist = mt__data(cc[3]),
                  .out = mt__data(*out), .r1 = r1, .r2 = r2, .m = m, .kind = dist_kind(p, 1),
                  .f64 = x1->dtype == MT_F64, .p = p};
    mt__parallel_for(B * r1, 1, cdist_bwd_part, &c);
    release_all(cc, 4);
    return MT_OK;
}
