/* pool.c — 2-D max/avg pooling and adaptive max/avg pooling of [N,] C, H, W
 * inputs, forward and backward, one plane (n, c) per task on the core's pool.
 * Max kinds return PyTorch's int64 indices (flat within the plane; NaN wins).
 * The 1-D ops are these with height 1 (composed in Python, as PyTorch composes
 * them). float16/bfloat16 compute in float32. */
#include <math.h>
#include <stdio.h>

#include "spatial.h"

typedef struct {
    int kind, f64;
    int64_t planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, divisor;
    int count_include_pad;
    const void *in;
    void *out, *grad_in;
    int64_t *ind;
} pool_job;

static inline int64_t start_index(int64_t a, int64_t b, int64_t c) { return (a * c) / b; }
static inline int64_t end_index(int64_t a, int64_t b, int64_t c) { return ((a + 1) * c + b - 1) / b; }

/* the window of output (oy, ox): rows [y0, y1) step ystep, cols [x0, x1) step xstep, avg divisor */
static void window(const pool_job *j, int64_t oy, int64_t ox, int64_t *y0, int64_t *y1, int64_t *x0, int64_t *x1,
                   int64_t *div) {
    if (j->kind == MT_POOL_ADAPTIVE_MAX || j->kind == MT_POOL_ADAPTIVE_AVG) {
        *y0 = start_index(oy, j->OH, j->H), *y1 = end_index(oy, j->OH, j->H);
        *x0 = start_index(ox, j->OW, j->W), *x1 = end_index(ox, j->OW, j->W);
        *div = (*y1 - *y0) * (*x1 - *x0);
        return;
    }
    int64_t hs = oy * j->sh - j->ph, ws = ox * j->sw - j->pw;
    if (j->kind == MT_POOL_MAX) {
        /* the window end in 128 bits: a pad near INT64_MAX / 2 puts it past int64 */
        __int128 he = (__int128)hs + (__int128)(j->kh - 1) * j->dh + 1, we = (__int128)ws + (__int128)(j->kw - 1) * j->dw + 1;
        *y1 = he < j->H ? (int64_t)he : j->H, *x1 = we < j->W ? (int64_t)we : j->W;
        /* the first tap inside: one step, not a loop (a huge pad over a tiny dilation), in 128 bits */
        if (hs < 0) hs = (int64_t)(hs + ((__int128)-hs + j->dh - 1) / j->dh * j->dh);
        if (ws < 0) ws = (int64_t)(ws + ((__int128)-ws + j->dw - 1) / j->dw * j->dw);
        *y0 = hs, *x0 = ws, *div = 1;
        return;
    }
    int64_t he = hs + j->kh < j->H + j->ph ? hs + j->kh : j->H + j->ph;
    int64_t we = ws + j->kw < j->W + j->pw ? ws + j->kw : j->W + j->pw;
    int64_t pool = mt__wmul(he - hs, we - ws); /* a divisor only: huge windows on a tiny input wrap harmlessly */
    hs = hs > 0 ? hs : 0, ws = ws > 0 ? ws : 0;
    he = he < j->H ? he : j->H, we = we < j->W ? we : j->W;
    *y0 = hs, *y1 = he, *x0 = ws, *x1 = we;
    *div = j->divisor ? j->divisor : j->count_include_pad ? pool : (he - hs) * (we - ws);
}

#define POOL_LOOPS(T)                                                                                            \
    static void fwd_##T(const pool_job *j, int64_t p) {                                                          \
        const T *in = (const T *)j->in + p * j->H * j->W;                                                        \
        T *out = (T *)j->out + p * j->OH * j->OW;                                                                \
        int64_t *ind = j->ind ? j->ind + p * j->OH * j->OW : NULL;                                               \
        int is_max = j->kind == MT_POOL_MAX || j->kind == MT_POOL_ADAPTIVE_MAX;                                  \
        int64_t ys = j->kind == MT_POOL_MAX ? j->dh : 1, xs = j->kind == MT_POOL_MAX ? j->dw : 1;                \
        for (int64_t oy = 0; oy < j->OH; oy++)                                                                   \
            for (int64_t ox = 0; ox < j->OW; ox++) {                                                             \
                int64_t y0, y1, x0, x1, div;                                                                     \
                window(j, oy, ox, &y0, &y1, &x0, &x1, &div);                                                     \
                int64_t o = oy * j->OW + ox;                                                                     \
                if (is_max) {                                                                                    \
                    T m = -INFINITY;                                                                             \
                    int64_t mi = y0 * j->W + x0;                                                                 \
                    for (int64_t y = y0; y < y1; y += ys)                                                        \
                        for (int64_t x = x0; x < x1; x += xs) {                                                  \
                            T v = in[y * j->W + x];                                                              \
                            if (v > m || v != v) { m = v; mi = y * j->W + x; } /* the last NaN wins */        \
                        }                                                                                        \
                    out[o] = m;                                                                                  \
                    if (ind) ind[o] = mi;                                                                        \
                } else {                                                                                         \
                    if (y0 >= y1 || x0 >= x1) { out[o] = 0; continue; }                                          \
                    T s = 0;                                                                                     \
                    for (int64_t y = y0; y < y1; y++)                                                            \
                        for (int64_t x = x0; x < x1; x++) s += in[y * j->W + x];                                 \
                    out[o] = s / (T)div;                                                                         \
                }                                                                                                \
            }                                                                                                    \
    }                                                                                                            \
    static void bwd_##T(const pool_job *j, int64_t p) {                                                          \
        const T *g = (const T *)j->out + p * j->OH * j->OW;                                                      \
        T *gi = (T *)j->grad_in + p * j->H * j->W;                                                               \
        memset(gi, 0, j->H * j->W * sizeof(T));                                                                  \
        if (j->ind) {                                                                                            \
            const int64_t *ind = j->ind + p * j->OH * j->OW;                                                     \
            for (int64_t o = 0; o < j->OH * j->OW; o++) gi[ind[o]] += g[o];                                      \
            return;                                                                                              \
        }                                                                                                        \
        for (int64_t oy = 0; oy < j->OH; oy++)                                                                   \
            for (int64_t ox = 0; ox < j->OW; ox++) {                                                             \
                int64_t y0, y1, x0, x1, div;                                                                     \
                window(j, oy, ox, &y0, &y1, &x0, &x1, &div);                                                     \
                T v = g[oy * j->OW + ox] / (T)div;                                                               \
                for (int64_t y = y0; y < y1; y++)                                                                \
                    for (int64_t x = x0; x < x1; x++) gi[y * j->W + x] += v;                                     \
            }                                                                                                    \
    }
POOL_LOOPS(float)
POOL_LOOPS(double)

static void fwd_task(void *c, int64_t b, int64_t e) {
    const pool_job *j = c;
    for (int64_t p = b; p < e; p++) j->f64 ? fwd_double(j, p) : fwd_float(j, p);
}
static void bwd_task(void *c, int64_t b, int64_t e) {
    const pool_job *j = c;
    for (int64_t p = b; p < e; p++) j->f64 ? bwd_double(j, p) : bwd_float(j, p);
}

/* PyTorch's pooling_output_shape */
static mt_status out_shape(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, int ceil, int64_t *o) {
    if (s == 0) return mt__error(MT_ERR_RUNTIME, "stride should not be zero");
    if (pad < 0) return mt__error(MT_ERR_RUNTIME, "pad must be non-negative, but got pad: %lld", (long long)pad);
    if (pad > (((__int128)k - 1) * d + 1) / 2)
        return mt__error(MT_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, "
                         "kernel_size=%lld and dilation=%lld", (long long)pad, (long long)k, (long long)d);
    if (s < 0) { *o = 0; return MT_OK; } /* the caller's stride check raises PyTorch's message */
    if (mt__window_out(in, (__int128)2 * pad, k, d, s, ceil ? s - 1 : 0, o))
        return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    if (ceil && (__int128)(*o - 1) * s >= (__int128)in + pad) --*o;
    return MT_OK;
}

static const char *pool_name(int kind) {
    static const char *n[] = {"max_pool2d", "avg_pool2d", "adaptive_max_pool2d", "adaptive_avg_pool2d"};
    return n[kind];
}

/* checks and output size; fills the job's geometry */
static mt_status pool_setup(int kind, mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                            const int64_t *d, int ceil, int64_t divisor, pool_job *j) {
    char b1[256];
    memset(j, 0, sizeof *j);
    j->kind = kind;
    int nd = x->ndim;
    if (kind == MT_POOL_MAX || kind == MT_POOL_AVG) {
        if (kind == MT_POOL_MAX && nd != 3 && nd != 4)
            return mt__error(MT_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
        int64_t dm3 = -3;
        MT_TRY(mt__wrap_dim(&dm3, nd));
        int64_t dil_h = kind == MT_POOL_MAX ? d[0] : 1, dil_w = kind == MT_POOL_MAX ? d[1] : 1;
        j->H = x->sizes[nd - 2], j->W = x->sizes[nd - 1];
        MT_TRY(out_shape(j->H, k[0], p[0], s[0], dil_h, ceil, &j->OH));
        MT_TRY(out_shape(j->W, k[1], p[1], s[1], dil_w, ceil, &j->OW));
        if (k[0] <= 0 || k[1] <= 0)
            return mt__error(MT_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                             (long long)k[0], (long long)k[1]);
        if (s[0] <= 0 || s[1] <= 0)
            return mt__error(MT_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld",
                             (long long)s[0], (long long)s[1]);
        if (dil_h <= 0 || dil_w <= 0)
            return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero, but got dilationH: %lld dilationW: "
                             "%lld", (long long)dil_h, (long long)dil_w);
        int valid = x->sizes[1] != 0 && x->sizes[2] != 0;
        if (!((nd == 3 && x->sizes[0] != 0 && valid) || (nd == 4 && valid && x->sizes[3] != 0)))
            return mt__error(MT_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                             "input, but got:%s", MT_SZ(b1, x));
        if (k[1] / 2 < p[1] || k[0] / 2 < p[0])
            return mt__error(MT_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got padW = "
                             "%lld, padH = %lld, kW = %lld, kH = %lld", (long long)p[1], (long long)p[0], (long long)k[1],
                             (long long)k[0]);
        if (j->OH < 1 || j->OW < 1)
            return mt__error(MT_ERR_RUNTIME, "Given input size: (%lldx%lldx%lld). Calculated output size: "
                             "(%lldx%lldx%lld). Output size is too small", (long long)x->sizes[nd - 3], (long long)j->H,
                             (long long)j->W, (long long)x->sizes[nd - 3], (long long)j->OH, (long long)j->OW);
        j->kh = k[0], j->kw = k[1], j->sh = s[0], j->sw = s[1], j->ph = p[0], j->pw = p[1], j->dh = dil_h, j->dw = dil_w;
        j->divisor = kind == MT_POOL_AVG ? divisor : 0; /* 0: no divisor_override */
    } else {
        if (nd != 3 && nd != 4)
            return mt__error(MT_ERR_RUNTIME, kind == MT_POOL_ADAPTIVE_AVG ? "%s(): Expected 3D or 4D tensor, but got %s"
                                                                          : "%s(): Expected 3D or 4D tensor, but got: %s",
                             pool_name(kind), MT_SZ(b1, x));
        if (kind == MT_POOL_ADAPTIVE_AVG && (k[0] < 0 || k[1] < 0))
            return mt__error(MT_ERR_RUNTIME, "adaptive_avg_pool2d: elements of output_size must be greater than or equal "
                             "to 0 but received {%lld, %lld}", (long long)k[0], (long long)k[1]);
        if (kind == MT_POOL_ADAPTIVE_AVG) /* the spatial dims only (max checks every non-batch dim) */
            for (int i = nd - 2; i < nd; i++)
                if (x->sizes[i] <= 0)
                    return mt__error(MT_ERR_RUNTIME, "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                                     "non-batch dimensions, but input has sizes %s with dimension %d being empty",
                                     MT_SZ(b1, x), i);
        if (kind == MT_POOL_ADAPTIVE_MAX) {
            for (int i = 1; i < nd; i++)
                if (x->sizes[i] <= 0)
                    return mt__error(MT_ERR_RUNTIME, "adaptive_max_pool2d(): Expected input to have non-zero size for "
                                     "non-batch dimensions, but input has sizes %s with dimension %d being empty",
                                     MT_SZ(b1, x), i);
            if (k[0] < 0 || k[1] < 0) {
                int64_t sz[4];
                memcpy(sz, x->sizes, (nd - 2) * sizeof(int64_t));
                sz[nd - 2] = k[0], sz[nd - 1] = k[1];
                return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                                 (long long)(k[0] < 0 ? k[0] : k[1]), mt__fmt_sizes(b1, sizeof b1, nd, sz));
            }
        }
        j->H = x->sizes[nd - 2], j->W = x->sizes[nd - 1], j->OH = k[0], j->OW = k[1];
    }
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, kind <= MT_POOL_AVG ? "%s on integer tensors (%s) is not implemented"
                                                                     : "\"%s\" not implemented for '%s'",
                         pool_name(kind), MT_DTNAME(x));
    j->count_include_pad = 1;
    j->planes = mt__numel(nd - 2, x->sizes);
    j->f64 = mt__compute_dtype(x->dtype) == MT_F64;
    return MT_OK;
}

mt_status mt__impl_pool2d(int kind, mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d,
                          int ceil, int count_include_pad, int64_t divisor, mt_tensor **out, mt_tensor **indices) {
    if ((unsigned)kind > MT_POOL_ADAPTIVE_AVG) return mt__error(MT_ERR_VALUE, "unknown pooling %d", kind);
    pool_job j;
    MT_TRY(pool_setup(kind, x, k, s, p, d, ceil, divisor, &j));
    j.count_include_pad = count_include_pad;
    int cdt = mt__compute_dtype(x->dtype), nd = x->ndim;
    int64_t sz[4];
    memcpy(sz, x->sizes, nd * sizeof(int64_t));
    sz[nd - 2] = j.OH, sz[nd - 1] = j.OW;
    mt_tensor *r = NULL, *ind = NULL, *xc = NULL;
    MT_TRY(mt__alloc(nd, sz, NULL, cdt, x->device, &r));
    mt_status st = MT_OK;
    int is_max = kind == MT_POOL_MAX || kind == MT_POOL_ADAPTIVE_MAX;
    if (is_max) st = mt__alloc(nd, sz, NULL, MT_I64, x->device, &ind);
    if (!st && x->device != MT_META && mt_tensor_numel(r) > 0) {
        st = mt__as_contig(x, cdt, &xc);
        if (!st) {
            j.in = mt__data(xc), j.out = mt__data(r), j.ind = ind ? (int64_t *)mt__data(ind) : NULL;
            uint64_t per = (uint64_t)j.OH * (uint64_t)j.OW * /* a grain estimate: saturated below, never exact */
                           (kind <= MT_POOL_AVG ? (uint64_t)j.kh * (uint64_t)j.kw
                                                : (uint64_t)(j.H / (j.OH ? j.OH : 1) + 1) * (uint64_t)(j.W / (j.OW ? j.OW : 1) + 1));
            if (per == 0 || per > ((uint64_t)1 << 62)) per = (uint64_t)1 << 62; /* saturated: one plane per task */
            mt__parallel_for(j.planes, 1 + MT_GRAIN_SIZE / (int64_t)per, fwd_task, &j);
        }
    }
    mt_tensor_release(xc);
    if (!st) st = mt__from_compute(r, x->dtype, out), r = NULL;
    mt_tensor_release(r);
    if (st) { mt_tensor_release(ind); return st; }
    if (indices) *indices = ind;
    else mt_tensor_release(ind);
    return MT_OK;
}

mt_status mt__impl_pool2d_backward(int kind, mt_tensor *g, mt_tensor *x, mt_tensor *indices, const int64_t *k,
                                   const int64_t *s, const int64_t *p, const int64_t *d, int ceil, int count_include_pad,
                                   int64_t divisor, mt_tensor **out) {
    pool_job j;
    MT_TRY(pool_setup(kind, x, k, s, p, d, ceil, divisor, &j));
    j.count_include_pad = count_include_pad;
    int cdt = mt__compute_dtype(x->dtype);
    mt_tensor *r = NULL, *gc = NULL, *ic = NULL;
    MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &r));
    mt_status st = MT_OK;
    if (x->device != MT_META && mt_tensor_numel(r) > 0) {
        st = mt__as_contig(g, cdt, &gc);
        if (!st && indices) st = mt__as_contig(indices, MT_I64, &ic);
        if (!st) {
            j.out = mt__data(gc), j.grad_in = mt__data(r), j.ind = ic ? (int64_t *)mt__data(ic) : NULL;
            mt__parallel_for(j.planes, 1 + MT_GRAIN_SIZE / (j.H * j.W + 1), bwd_task, &j);
        }
    }
    mt_tensor_release(gc);
    mt_tensor_release(ic);
    if (st) { mt_tensor_release(r); return st; }
    return mt__from_compute(r, x->dtype, out);
}
