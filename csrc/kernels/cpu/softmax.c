/* softmax.c — softmax / log_softmax along one dim, and their backward
 * (PyTorch's _softmax_backward_data / _log_softmax_backward_data).
 *
 * The input is viewed as [outer, n, inner] (contiguous). With inner == 1 each
 * row is done in turn as PyTorch's vec_softmax_lastdim does: max, exp(x - max)
 * written to the output and summed, then scaled by 1/sum. Otherwise blocks of
 * columns are walked with per-column max/sum so the inner loops stay
 * contiguous. Rows (or column blocks) are split across the thread pool. */
#include "loops.h"
#include "nn.h"
#include "shape.h"
#include "vecmath.h"

#define COLS 256 /* columns per block when softmax runs over a non-last dim */

typedef struct {
    const char *x, *g; /* forward: x; backward: g = grad, x = output */
    char *y;
    int64_t outer, n, inner, nblk;
    int log;
} sm_ctx;

#define EXP_f mt_v_expf
#define EXP_d exp
#define LOG_f mt_v_logf
#define LOG_d log

#define DEF_SOFTMAX(SUF, T)                                                              \
    MT_SIMD static void rows_##SUF(void *p, int64_t b, int64_t e) {                      \
        const sm_ctx *c = p;                                                             \
        int64_t n = c->n;                                                                \
        for (int64_t r = b; r < e; r++) {                                                \
            const T *x = (const T *)c->x + r * n;                                        \
            T *y = (T *)c->y + r * n;                                                    \
            T m = mt__rmax_##SUF(x, n);                                                  \
            if (c->log) {                                                                \
                T acc[MT_LANES] = {0}, s = 0;                                            \
                int64_t i = 0;                                                           \
                for (; i + MT_LANES <= n; i += MT_LANES)                                 \
                    for (int l = 0; l < MT_LANES; l++) acc[l] += EXP_##SUF(x[i + l] - m); \
                for (; i < n; i++) s += EXP_##SUF(x[i] - m);                             \
                for (int l = 0; l < MT_LANES; l++) s += acc[l];                          \
                T ls = LOG_##SUF(s);                                                     \
                for (i = 0; i < n; i++) y[i] = x[i] - m - ls;                            \
            } else {                                                                     \
                for (int64_t i = 0; i < n; i++) y[i] = EXP_##SUF(x[i] - m);              \
                T inv = (T)1 / mt__rsum_##SUF(y, n);                                     \
                for (int64_t i = 0; i < n; i++) y[i] *= inv;                             \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    MT_SIMD static void cols_##SUF(void *p, int64_t b, int64_t e) {                      \
        const sm_ctx *c = p;                                                             \
        int64_t n = c->n, in = c->inner;                                                 \
        T m[COLS], s[COLS];                                                              \
        for (int64_t t = b; t < e; t++) {                                                \
            int64_t o = t / c->nblk, c0 = (t % c->nblk) * COLS;                          \
            int64_t w = in - c0 < COLS ? in - c0 : COLS;                                 \
            const T *x = (const T *)c->x + o * n * in + c0;                              \
            T *y = (T *)c->y + o * n * in + c0;                                          \
            for (int64_t i = 0; i < w; i++) m[i] = -(T)INFINITY, s[i] = 0;               \
            for (int64_t j = 0; j < n; j++)                                              \
                for (int64_t i = 0; i < w; i++) {                                        \
                    T v = x[j * in + i];                                                 \
                    m[i] = (v > m[i] || v != v) ? v : m[i];                              \
                }                                                                        \
            for (int64_t j = 0; j < n; j++)                                              \
                for (int64_t i = 0; i < w; i++) {                                        \
                    T ev = EXP_##SUF(x[j * in + i] - m[i]);                              \
                    s[i] += ev;                                                          \
                    if (!c->log) y[j * in + i] = ev;                                     \
                }                                                                        \
            if (c->log) {                                                                \
                for (int64_t i = 0; i < w; i++) s[i] = LOG_##SUF(s[i]);                  \
                for (int64_t j = 0; j < n; j++)                                          \
                    for (int64_t i = 0; i < w; i++) y[j * in + i] = x[j * in + i] - m[i] - s[i]; \
            } else {                                                                     \
                for (int64_t i = 0; i < w; i++) s[i] = (T)1 / s[i];                      \
                for (int64_t j = 0; j < n; j++)                                          \
                    for (int64_t i = 0; i < w; i++) y[j * in + i] *= s[i];               \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    /* softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g) */      \
    MT_SIMD static void brows_##SUF(void *p, int64_t b, int64_t e) {                     \
        const sm_ctx *c = p;                                                             \
        int64_t n = c->n;                                                                \
        for (int64_t r = b; r < e; r++) {                                                \
            const T *g = (const T *)c->g + r * n, *y = (const T *)c->x + r * n;          \
            T *o = (T *)c->y + r * n;                                                    \
            if (c->log) {                                                                \
                T s = mt__rsum_##SUF(g, n);                                              \
                for (int64_t i = 0; i < n; i++) o[i] = g[i] - EXP_##SUF(y[i]) * s;       \
            } else {                                                                     \
                T s = mt__rdot_##SUF(g, y, n);                                           \
                for (int64_t i = 0; i < n; i++) o[i] = y[i] * (g[i] - s);                \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    MT_SIMD static void bcols_##SUF(void *p, int64_t b, int64_t e) {                     \
        const sm_ctx *c = p;                                                             \
        int64_t n = c->n, in = c->inner;                                                 \
        T s[COLS];                                                                       \
        for (int64_t t = b; t < e; t++) {                                                \
            int64_t o = t / c->nblk, c0 = (t % c->nblk) * COLS;                          \
            int64_t w = in - c0 < COLS ? in - c0 : COLS, base = o * n * in + c0;         \
            const T *g = (const T *)c->g + base, *y = (const T *)c->x + base;            \
            T *out = (T *)c->y + base;                                                   \
            for (int64_t i = 0; i < w; i++) s[i] = 0;                                    \
            for (int64_t j = 0; j < n; j++)                                              \
                for (int64_t i = 0; i < w; i++)                                          \
                    s[i] += c->log ? g[j * in + i] : g[j * in + i] * y[j * in + i];      \
            for (int64_t j = 0; j < n; j++)                                              \
                for (int64_t i = 0; i < w; i++) {                                        \
                    int64_t k = j * in + i;                                              \
                    out[k] = c->log ? g[k] - EXP_##SUF(y[k]) * s[i] : y[k] * (g[k] - s[i]); \
                }                                                                        \
        }                                                                                \
    }

DEF_SOFTMAX(f, float)
DEF_SOFTMAX(d, double)

/* ---- helpers shared by the NN kernels --------------------------------------------- */

mt_status mt__nn_contig(mt_tensor *t, int dtype, mt_tensor **out) {
    if (t->dtype == dtype) return mt__impl_contiguous(t, out);
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, dtype, t->device, out));
    mt_status st = mt__impl_copy_(*out, t);
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt__nn_narrow(mt_tensor *r, int dtype, mt_tensor **out) {
    if (r->dtype == dtype) { *out = r; return MT_OK; }
    mt_status st = mt__impl_to_dtype(r, dtype, 0, out);
    mt_tensor_release(r);
    return st;
}

/* ---- entry points ------------------------------------------------------------------ */

static void shape3(const mt_tensor *t, int64_t d, sm_ctx *c) {
    c->outer = c->inner = 1;
    c->n = t->ndim ? t->sizes[d] : 1;
    for (int i = 0; i < t->ndim; i++) {
        if (i < d) c->outer = mt__wmul(c->outer, t->sizes[i]); /* wraps only for an empty t: then unused */
        if (i > d) c->inner = mt__wmul(c->inner, t->sizes[i]);
    }
    c->nblk = (c->inner + COLS - 1) / COLS;
}

static void run(sm_ctx *c, int dbl, int backward) {
    if (!c->outer || !c->n || !c->inner) return;
    if (c->inner == 1) {
        mt_task_fn fn = backward ? (dbl ? brows_d : brows_f) : (dbl ? rows_d : rows_f);
        mt__parallel_for(c->outer, 1 + MT_GRAIN_SIZE / (4 * c->n), fn, c);
    } else {
        mt_task_fn fn = backward ? (dbl ? bcols_d : bcols_f) : (dbl ? cols_d : cols_f);
        int64_t per = c->n * (c->inner < COLS ? c->inner : COLS);
        mt__parallel_for(c->outer * c->nblk, 1 + MT_GRAIN_SIZE / (4 * per), fn, c);
    }
}

mt_status mt__impl_softmax(mt_tensor *x, int64_t dim, int log, int dtype, mt_tensor **out) {
    mt_tensor *conv = NULL;
    if (dtype >= 0 && dtype != x->dtype) {
        MT_TRY(mt__impl_to_dtype(x, dtype, 0, &conv));
        x = conv;
    }
    int64_t d = dim;
    mt_status st = mt__wrap_dim(&d, x->ndim);
    int last = x->ndim == 0 || d == x->ndim - 1;
    if (!st && !mt__is_float(x->dtype))
        st = mt__not_implemented(log ? (last ? "log_softmax_lastdim_kernel_impl" : "log_softmax_kernel_impl")
                                        : (last ? "softmax_lastdim_kernel_impl" : "softmax_kernel_impl"), x->dtype);
    if (st) { mt_tensor_release(conv); return st; }
    int cd = mt__nn_compute_dtype(x->dtype);
    mt_tensor *xc = NULL, *y = NULL;
    if (x->device == MT_META) {
        st = mt__alloc(x->ndim, x->sizes, NULL, x->dtype, MT_META, out);
        mt_tensor_release(conv);
        return st;
    }
    st = mt__nn_contig(x, cd, &xc);
    if (!st) st = mt__alloc(x->ndim, x->sizes, NULL, cd, MT_CPU, &y);
    if (!st) {
        sm_ctx c = {.x = mt__data(xc), .y = mt__data(y), .log = log};
        shape3(x, d, &c);
        run(&c, cd == MT_F64, 0);
        st = mt__nn_narrow(y, x->dtype, out);
        y = NULL;
    }
    mt_tensor_release(y);
    mt_tensor_release(xc);
    mt_tensor_release(conv);
    return st;
}

mt_status mt__impl_softmax_backward(mt_tensor *grad, mt_tensor *output, int64_t dim, int log, mt_tensor **out) {
    int64_t d = dim;
    MT_TRY(mt__wrap_dim(&d, output->ndim));
    if (grad->ndim != output->ndim || memcmp(grad->sizes, output->sizes, output->ndim * sizeof(int64_t)))
        return mt__error(MT_ERR_RUNTIME, "grad_output and output must have the same shape");
    if (!mt__is_float(output->dtype))
        return mt__not_implemented(log ? "log_softmax_backward_lastdim_kernel_impl"
                                          : "softmax_backward_lastdim_kernel_impl", output->dtype);
    MT_TRY(mt__same_device(grad, output)); /* a meta grad has no data to read */
    if (output->device == MT_META) return mt__alloc(output->ndim, output->sizes, NULL, output->dtype, MT_META, out);
    int cd = mt__nn_compute_dtype(output->dtype);
    mt_tensor *gc = NULL, *yc = NULL, *r = NULL;
    mt_status st = mt__nn_contig(grad, cd, &gc);
    if (!st) st = mt__nn_contig(output, cd, &yc);
    if (!st) st = mt__alloc(output->ndim, output->sizes, NULL, cd, MT_CPU, &r);
    if (!st) {
        sm_ctx c = {.g = mt__data(gc), .x = mt__data(yc), .y = mt__data(r), .log = log};
        shape3(output, d, &c);
        run(&c, cd == MT_F64, 1);
        st = mt__nn_narrow(r, output->dtype, out);
        r = NULL;
    }
    mt_tensor_release(r);
    mt_tensor_release(gc);
    mt_tensor_release(yc);
    return st;
}
