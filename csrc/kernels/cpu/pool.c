/* pool.c — 2-D and 3-D max/avg pooling and adaptive max/avg pooling of [N,] C, (D,) H, W
 * inputs, forward and backward, one plane (n, c) per task on the core's pool; one kernel
 * walks three spatial dims, a 2-D input having a unit depth. Max kinds return PyTorch's
 * int64 indices (flat within the plane; NaN wins). The 1-D ops are the 2-D ones with
 * height 1 (composed in Python, as PyTorch composes them). float16/bfloat16 compute in
 * float32. */
#include <math.h>
#include <stdio.h>

#include "spatial.h"

/* every pool runs in three spatial dims (depth, height, width): 2-D inputs have a unit depth */
typedef struct {
    int kind, f64;
    int64_t planes, isz[3], osz[3], k[3], s[3], p[3], d[3], divisor;
    int count_include_pad;
    const void *x;
    void *y, *gx; /* forward: y is the output; backward: y is the output's gradient, gx the input's */
    int64_t *ind;
} pool_job;

static int is_max_kind(int kind) { return kind == MT_POOL_MAX || kind == MT_POOL_ADAPTIVE_MAX; }

/* the window of output position o along spatial dim a: taps [lo, hi), every d-th for MT_POOL_MAX;
 * len: the avg window's extent with its padding (count_include_pad's divisor) */
static void span(const pool_job *j, int a, int64_t o, int64_t *lo, int64_t *hi, int64_t *len) {
    int64_t I = j->isz[a], O = j->osz[a];
    if (j->kind == MT_POOL_ADAPTIVE_MAX || j->kind == MT_POOL_ADAPTIVE_AVG) {
        *lo = (o * I) / O, *hi = ((o + 1) * I + O - 1) / O, *len = *hi - *lo;
        return;
    }
    int64_t st = o * j->s[a] - j->p[a];
    if (j->kind == MT_POOL_MAX) {
        /* the window end in 128 bits: a pad near INT64_MAX / 2 puts it past int64 */
        __int128 e = (__int128)st + (__int128)(j->k[a] - 1) * j->d[a] + 1;
        *hi = e < I ? (int64_t)e : I;
        /* the first tap inside: one step, not a loop (a huge pad over a tiny dilation), in 128 bits */
        if (st < 0) st = (int64_t)(st + ((__int128)-st + j->d[a] - 1) / j->d[a] * j->d[a]);
        *lo = st, *len = 1;
        return;
    }
    int64_t e = st + j->k[a] < I + j->p[a] ? st + j->k[a] : I + j->p[a];
    *len = e - st;
    *lo = st > 0 ? st : 0, *hi = e < I ? e : I;
}

/* the window of output (ot, oy, ox) in every dim: w[a] = {lo, hi, len}; always 1 (a loop condition) */
static int window(const pool_job *j, int64_t ot, int64_t oy, int64_t ox, int64_t (*w)[3]) {
    span(j, 0, ot, &w[0][0], &w[0][1], &w[0][2]);
    span(j, 1, oy, &w[1][0], &w[1][1], &w[1][2]);
    span(j, 2, ox, &w[2][0], &w[2][1], &w[2][2]);
    return 1;
}

/* the outputs of one plane in order, o flat, w their windows */
#define FOR_WINDOWS(j, w, o)                                                                                     \
    for (int64_t ot = 0, o = 0; ot < (j)->osz[0]; ot++)                                                          \
        for (int64_t oy = 0; oy < (j)->osz[1]; oy++)                                                             \
            for (int64_t ox = 0, w[3][3]; ox < (j)->osz[2] && window(j, ot, oy, ox, w); ox++, o++)

/* the avg divisor of window w */
static int64_t avg_div(const pool_job *j, int64_t (*w)[3]) {
    if (j->divisor) return j->divisor;
    if (j->count_include_pad) /* a divisor only: huge windows on a tiny input wrap harmlessly */
        return mt__wmul(mt__wmul(w[0][2], w[1][2]), w[2][2]);
    return (w[0][1] - w[0][0]) * (w[1][1] - w[1][0]) * (w[2][1] - w[2][0]);
}

#define POOL_LOOPS(T)                                                                                            \
    static void fwd_##T(const pool_job *j, int64_t p) {                                                          \
        int64_t HW = j->isz[1] * j->isz[2], W = j->isz[2], ovol = j->osz[0] * j->osz[1] * j->osz[2];             \
        const T *in = (const T *)j->x + p * j->isz[0] * HW;                                                      \
        T *out = (T *)j->y + p * ovol;                                                                           \
        int64_t *ind = j->ind ? j->ind + p * ovol : NULL;                                                        \
        int64_t step = j->kind == MT_POOL_MAX, ts = step ? j->d[0] : 1, ys = step ? j->d[1] : 1,                 \
                xs = step ? j->d[2] : 1;                                                                         \
        FOR_WINDOWS(j, w, o) {                                                                                   \
            if (is_max_kind(j->kind)) {                                                                          \
                T m = -INFINITY;                                                                                 \
                int64_t mi = w[0][0] * HW + w[1][0] * W + w[2][0];                                               \
                for (int64_t t = w[0][0]; t < w[0][1]; t += ts)                                                  \
                    for (int64_t y = w[1][0]; y < w[1][1]; y += ys)                                              \
                        for (int64_t x = w[2][0]; x < w[2][1]; x += xs) {                                        \
                            T v = in[t * HW + y * W + x];                                                        \
                            if (v > m || v != v) { m = v; mi = t * HW + y * W + x; } /* the last NaN wins */    \
                        }                                                                                        \
                out[o] = m;                                                                                      \
                if (ind) ind[o] = mi;                                                                            \
                continue;                                                                                        \
            }                                                                                                    \
            if (w[0][0] >= w[0][1] || w[1][0] >= w[1][1] || w[2][0] >= w[2][1]) { out[o] = 0; continue; }       \
            T sum = 0;                                                                                           \
            for (int64_t t = w[0][0]; t < w[0][1]; t++)                                                          \
                for (int64_t y = w[1][0]; y < w[1][1]; y++)                                                      \
                    for (int64_t x = w[2][0]; x < w[2][1]; x++) sum += in[t * HW + y * W + x];                   \
            out[o] = sum / (T)avg_div(j, w);                                                                     \
        }                                                                                                        \
    }                                                                                                            \
    static void bwd_##T(const pool_job *j, int64_t p) {                                                          \
        int64_t HW = j->isz[1] * j->isz[2], W = j->isz[2], ovol = j->osz[0] * j->osz[1] * j->osz[2];             \
        const T *g = (const T *)j->y + p * ovol;                                                                 \
        T *gi = (T *)j->gx + p * j->isz[0] * HW;                                                                 \
        memset(gi, 0, j->isz[0] * HW * sizeof(T));                                                               \
        if (j->ind) {                                                                                            \
            const int64_t *ind = j->ind + p * ovol;                                                              \
            for (int64_t o = 0; o < ovol; o++) gi[ind[o]] += g[o];                                               \
            return;                                                                                              \
        }                                                                                                        \
        FOR_WINDOWS(j, w, o) {                                                                                   \
            T v = g[o] / (T)avg_div(j, w);                                                                       \
            for (int64_t t = w[0][0]; t < w[0][1]; t++)                                                          \
                for (int64_t y = w[1][0]; y < w[1][1]; y++)                                                      \
                    for (int64_t x = w[2][0]; x < w[2][1]; x++) gi[t * HW + y * W + x] += v;                     \
        }                                                                                                        \
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

static const char *pool_name(int kind, int nsp) {
    static const char *n[2][4] = {{"max_pool2d", "avg_pool2d", "adaptive_max_pool2d", "adaptive_avg_pool2d"},
                                  {"max_pool3d", "avg_pool3d", "adaptive_max_pool3d", "adaptive_avg_pool3d"}};
    return n[nsp == 3][kind];
}

/* max_pool2d / avg_pool2d's checks, in PyTorch's order (pool2d_shape_check) */
static mt_status check_window2d(mt_tensor *x, const pool_job *j) {
    char b1[256];
    int nd = x->ndim;
    const int64_t *k = j->k + 1, *s = j->s + 1, *p = j->p + 1, *d = j->d + 1;
    if (k[0] <= 0 || k[1] <= 0)
        return mt__error(MT_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                         (long long)k[0], (long long)k[1]);
    if (s[0] <= 0 || s[1] <= 0)
        return mt__error(MT_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld",
                         (long long)s[0], (long long)s[1]);
    if (d[0] <= 0 || d[1] <= 0)
        return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero, but got dilationH: %lld dilationW: "
                         "%lld", (long long)d[0], (long long)d[1]);
    int valid = x->sizes[1] != 0 && x->sizes[2] != 0;
    if (!((nd == 3 && x->sizes[0] != 0 && valid) || (nd == 4 && valid && x->sizes[3] != 0)))
        return mt__error(MT_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                         "input, but got:%s", MT_SZ(b1, x));
    if (k[1] / 2 < p[1] || k[0] / 2 < p[0])
        return mt__error(MT_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got padW = "
                         "%lld, padH = %lld, kW = %lld, kH = %lld", (long long)p[1], (long long)p[0], (long long)k[1],
                         (long long)k[0]);
    if (j->osz[1] < 1 || j->osz[2] < 1)
        return mt__error(MT_ERR_RUNTIME, "Given input size: (%lldx%lldx%lld). Calculated output size: "
                         "(%lldx%lldx%lld). Output size is too small", (long long)x->sizes[nd - 3], (long long)j->isz[1],
                         (long long)j->isz[2], (long long)x->sizes[nd - 3], (long long)j->osz[1], (long long)j->osz[2]);
    return MT_OK;
}

/* max_pool3d / avg_pool3d's checks, in PyTorch's order (pool3d_shape_check) */
static mt_status check_window3d(int kind, mt_tensor *x, const pool_job *j) {
    char b1[256];
    int nd = x->ndim;
    const int64_t *k = j->k, *s = j->s, *p = j->p, *d = j->d, *I = j->isz, *O = j->osz;
    if (k[0] <= 0 || k[1] <= 0 || k[2] <= 0)
        return mt__error(MT_ERR_RUNTIME, "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld",
                         (long long)k[0], (long long)k[1], (long long)k[2]);
    if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0)
        return mt__error(MT_ERR_RUNTIME, "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld",
                         (long long)s[0], (long long)s[1], (long long)s[2]);
    if (d[0] <= 0 || d[1] <= 0 || d[2] <= 0)
        return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero, but got dilationT: %lld dilationH: "
                         "%lld dilationW: %lld", (long long)d[0], (long long)d[1], (long long)d[2]);
    for (int i = nd == 5; i < nd; i++) /* a batch of 0 is fine */
        if (x->sizes[i] <= 0)
            return mt__error(MT_ERR_RUNTIME, "%s: Expected input's non-batch dimensions to have positive length, but "
                             "input has a shape of %s and non-batch dimension %lld has length zero!",
                             kind == MT_POOL_MAX ? "max_pool3d_with_indices_out_cpu_template()" : "avg_pool3d()",
                             MT_SZ(b1, x), (long long)x->sizes[i]);
    if (kind == MT_POOL_AVG && (I[0] < k[0] || I[1] < k[1] || I[2] < k[2]))
        return mt__error(MT_ERR_RUNTIME, "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld "
                         "kH: %lld kW: %lld)", (long long)I[0], (long long)I[1], (long long)I[2], (long long)k[0],
                         (long long)k[1], (long long)k[2]);
    if (k[0] / 2 < p[0] || k[2] / 2 < p[2] || k[1] / 2 < p[1])
        return mt__error(MT_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got kT: %lld "
                         "kW: %lld kH: %lld padT: %lld padW: %lld padH: %lld", (long long)k[0], (long long)k[2],
                         (long long)k[1], (long long)p[0], (long long)p[2], (long long)p[1]);
    if (O[0] < 1 || O[1] < 1 || O[2] < 1) {
        long long c = (long long)x->sizes[nd - 4];
        return mt__error(MT_ERR_RUNTIME, "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: "
                         "(%lldx%lldx%lldx%lld). Output size is too small", c, (long long)I[0], (long long)I[1],
                         (long long)I[2], c, (long long)O[0], (long long)O[1], (long long)O[2]);
    }
    return MT_OK;
}

/* adaptive pooling's checks, in PyTorch's order (which differs between 2-D and 3-D) */
static mt_status check_adaptive(int kind, int nsp, mt_tensor *x, const int64_t *k) {
    char b1[256];
    int nd = x->ndim, avg = kind == MT_POOL_ADAPTIVE_AVG;
    const char *name = pool_name(kind, nsp);
    int ndim_ok = nd == nsp + 1 || nd == nsp + 2;
    if (!ndim_ok && (nsp == 2 || !avg)) /* 3-D avg checks the sizes first */
        return mt__error(MT_ERR_RUNTIME, avg ? "%s(): Expected %dD or %dD tensor, but got %s"
                                             : "%s(): Expected %dD or %dD tensor, but got: %s",
                         name, nsp + 1, nsp + 2, MT_SZ(b1, x));
    int neg = 0;
    for (int a = 0; a < nsp; a++) neg |= k[a] < 0;
    if (avg && neg) {
        if (nsp == 2)
            return mt__error(MT_ERR_RUNTIME, "adaptive_avg_pool2d: elements of output_size must be greater than or "
                             "equal to 0 but received {%lld, %lld}", (long long)k[0], (long long)k[1]);
        return mt__error(MT_ERR_RUNTIME, "adaptive_avg_pool3d: elements of output_size must be greater than or equal "
                         "to 0 but received {%lld, %lld,%lld}", (long long)k[0], (long long)k[1], (long long)k[2]);
    }
    /* 2-D avg checks the spatial dims only, the others every non-batch dim */
    for (int i = avg && nsp == 2 ? nd - 2 : 1; i < nd; i++)
        if (x->sizes[i] <= 0)
            return mt__error(MT_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, "
                             "but input has sizes %s with dimension %d being empty", name, MT_SZ(b1, x), i);
    if (!ndim_ok)
        return mt__error(MT_ERR_RUNTIME, "%s(): Expected %dD or %dD tensor, but got %s", name, nsp + 1, nsp + 2,
                         MT_SZ(b1, x));
    if (neg) {
        int64_t sz[5];
        memcpy(sz, x->sizes, (nd - nsp) * sizeof(int64_t));
        int64_t bad = 0;
        for (int a = 0; a < nsp; a++) {
            sz[nd - nsp + a] = k[a];
            if (!bad && k[a] < 0) bad = k[a];
        }
        return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s", (long long)bad,
                         mt__fmt_sizes(b1, sizeof b1, nd, sz));
    }
    return MT_OK;
}

/* PyTorch's CPU dtypes: max_pool3d takes every float, avg_pool3d float32/float64 (and int64, not
 * here), the 2-D kinds and adaptive ones every float */
static mt_status check_dtype(int kind, int nsp, mt_tensor *x) {
    int dt = x->dtype;
    if (nsp == 3 && kind == MT_POOL_AVG && dt != MT_F32 && dt != MT_F64 && dt != MT_I64)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"avg_pool3d_out_frame\" not implemented for '%s'", MT_DTNAME(x));
    if (nsp == 3 && kind == MT_POOL_MAX && dt == MT_BOOL)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"max_pool3d\" not implemented for 'Bool'");
    if (mt__is_float(dt)) return MT_OK;
    if (kind <= MT_POOL_AVG) /* PyTorch takes integers here; we do not yet */
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "%s on integer tensors (%s) is not implemented", pool_name(kind, nsp),
                         MT_DTNAME(x));
    return mt__error(MT_ERR_NOT_IMPLEMENTED, nsp == 3 ? "\"%s_cpu\" not implemented for '%s'"
                                                      : "\"%s\" not implemented for '%s'",
                     pool_name(kind, nsp), MT_DTNAME(x));
}

/* checks and output size; fills the job's geometry (2-D as 3-D with a unit depth) */
static mt_status pool_setup(int kind, int nsp, mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                            const int64_t *d, int ceil, int64_t divisor, pool_job *j) {
    memset(j, 0, sizeof *j);
    if ((unsigned)kind >= MT_NUM_POOL) return mt__error(MT_ERR_VALUE, "unknown pooling %d", kind);
    if (nsp != 2 && nsp != 3) return mt__error(MT_ERR_VALUE, "pooling over %d dims: 2 or 3 expected", nsp);
    j->kind = kind;
    for (int a = 0; a < 3; a++) j->isz[a] = j->osz[a] = j->k[a] = j->s[a] = j->d[a] = 1;
    int nd = x->ndim, lead = 3 - nsp;
    if (kind == MT_POOL_MAX || kind == MT_POOL_AVG) {
        if (nsp == 3 && nd != 4 && nd != 5)
            return mt__error(MT_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
        if (nsp == 2 && kind == MT_POOL_MAX && nd != 3 && nd != 4)
            return mt__error(MT_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
        int64_t dm3 = -3;
        MT_TRY(mt__wrap_dim(&dm3, nd));
        for (int a = 0; a < nsp; a++) {
            int64_t *ia = j->isz + lead + a, dil = kind == MT_POOL_MAX ? d[a] : 1;
            *ia = x->sizes[nd - nsp + a];
            MT_TRY(out_shape(*ia, k[a], p[a], s[a], dil, ceil, &j->osz[lead + a]));
            j->k[lead + a] = k[a], j->s[lead + a] = s[a], j->p[lead + a] = p[a], j->d[lead + a] = dil;
        }
        MT_TRY(nsp == 2 ? check_window2d(x, j) : check_window3d(kind, x, j));
        j->divisor = kind == MT_POOL_AVG ? divisor : 0; /* 0: no divisor_override */
    } else {
        MT_TRY(check_adaptive(kind, nsp, x, k));
        for (int a = 0; a < nsp; a++) j->isz[lead + a] = x->sizes[nd - nsp + a], j->osz[lead + a] = k[a];
    }
    MT_TRY(check_dtype(kind, nsp, x));
    j->count_include_pad = 1;
    j->planes = mt__numel(nd - nsp, x->sizes);
    j->f64 = mt__compute_dtype(x->dtype) == MT_F64;
    return MT_OK;
}

mt_status mt__impl_pool(int kind, int nsp, mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                        const int64_t *d, int ceil, int count_include_pad, int64_t divisor, mt_tensor **out,
                        mt_tensor **indices) {
    pool_job j;
    MT_TRY(pool_setup(kind, nsp, x, k, s, p, d, ceil, divisor, &j));
    j.count_include_pad = count_include_pad;
    int cdt = mt__compute_dtype(x->dtype), nd = x->ndim;
    int64_t sz[5];
    memcpy(sz, x->sizes, nd * sizeof(int64_t));
    for (int a = 0; a < nsp; a++) sz[nd - nsp + a] = j.osz[3 - nsp + a];
    mt_tensor *r = NULL, *ind = NULL, *xc = NULL;
    if (kind == MT_POOL_ADAPTIVE_AVG) MT_TRY(mt__check_numel(nd, sz)); /* PyTorch resizes its result */
    MT_TRY(mt__alloc(nd, sz, NULL, cdt, x->device, &r));
    mt_status st = MT_OK;
    if (is_max_kind(kind)) st = mt__alloc(nd, sz, NULL, MT_I64, x->device, &ind);
    if (!st && x->device != MT_META && mt_tensor_numel(r) > 0) {
        st = mt__as_contig(x, cdt, &xc);
        if (!st) {
            j.x = mt__data(xc), j.y = mt__data(r), j.ind = ind ? (int64_t *)mt__data(ind) : NULL;
            /* a grain estimate (outputs times taps), saturated: never exact */
            uint64_t per = 1;
            for (int a = 0; a < 3 && per <= ((uint64_t)1 << 62); a++) {
                uint64_t taps = kind <= MT_POOL_AVG ? (uint64_t)j.k[a] : (uint64_t)(j.isz[a] / (j.osz[a] ? j.osz[a] : 1) + 1);
                uint64_t f = (uint64_t)j.osz[a] * taps;
                per = f && per > (((uint64_t)1 << 62) / f) ? ((uint64_t)1 << 62) + 1 : per * f;
            }
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

mt_status mt__impl_pool_backward(int kind, int nsp, mt_tensor *g, mt_tensor *x, mt_tensor *indices, const int64_t *k,
                                 const int64_t *s, const int64_t *p, const int64_t *d, int ceil, int count_include_pad,
                                 int64_t divisor, mt_tensor **out) {
    pool_job j;
    MT_TRY(pool_setup(kind, nsp, x, k, s, p, d, ceil, divisor, &j));
    j.count_include_pad = count_include_pad;
    int cdt = mt__compute_dtype(x->dtype);
    mt_tensor *r = NULL, *gc = NULL, *ic = NULL;
    MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &r));
    mt_status st = MT_OK;
    if (x->device != MT_META && mt_tensor_numel(r) > 0) {
        st = mt__as_contig(g, cdt, &gc);
        if (!st && indices) st = mt__as_contig(indices, MT_I64, &ic);
        if (!st) {
            j.y = mt__data(gc), j.gx = mt__data(r), j.ind = ic ? (int64_t *)mt__data(ic) : NULL;
            mt__parallel_for(j.planes, 1 + MT_GRAIN_SIZE / (j.isz[0] * j.isz[1] * j.isz[2] + 1), bwd_task, &j);
        }
    }
    mt_tensor_release(gc);
    mt_tensor_release(ic);
    if (st) { mt_tensor_release(r); return st; }
    return mt__from_compute(r, x->dtype, out);
}
