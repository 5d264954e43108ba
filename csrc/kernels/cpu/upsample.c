/* upsample.c — interpolate's nearest, nearest-exact, (bi)linear and bicubic modes over
 * [N, C,] H, W planes (1-D runs with height 1), forward and backward, with
 * PyTorch's index arithmetic (UpSample.h: float scales for nearest, the compute
 * type for linear; align_corners; a given scale_factor used as 1/scale). Each
 * output row/column gets its two source taps and weights once; planes split
 * over the core's pool. float16/bfloat16 compute in float32.
 * antialias=True (bilinear, bicubic) and uint8 (bi)linear/bicubic take PyTorch's separable path
 * (UpSampleKernel.cpp): a span of source taps per output index, the width pass then the height
 * pass; uint8 in its int16 fixed point, so that values equal PyTorch's exactly. Plain bicubic
 * (float types) takes 4 x 4 clamped taps per output, as PyTorch's upsample_bicubic2d. */
#include <math.h>
#include <stdio.h>

#include "spatial.h"

typedef struct {
    int64_t i0, i1;   /* source indices (i1 == i0 for nearest) */
    double w0, w1;    /* their weights */
} tap;

/* PyTorch's area_pixel_compute_scale / compute_scales_value */
static double linear_scale(int64_t in, int64_t out, int align, double scale) {
    if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return scale > 0 ? 1.0 / scale : (double)in / (double)out;
}

/* floor(v) kept inside [0, in - 1] (PyTorch's guard_index_and_lambda); NaN and extreme scales too
 * (found by the fuzzer: a tap index past the input read out of bounds) */
static int64_t guard_index(double v, int64_t in) {
    if (!(v >= 0)) return 0;
    if (v >= (double)(in - 1)) return in - 1;
    return (int64_t)v;
}

static void make_taps(int mode, int f64, int64_t in, int64_t out, int align, double scale, tap *t) {
    for (int64_t o = 0; o < out; o++) {
        tap *p = &t[o];
        if (mode == MT_UPSAMPLE_NEAREST || mode == MT_UPSAMPLE_NEAREST_EXACT) {
            int64_t i;
            float s = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
            if (mode == MT_UPSAMPLE_NEAREST) {
                if (out == in) i = o;
                else if (out == 2 * in) i = o >> 1;
                else i = guard_index(floorf((float)o * s), in);
            } else {
                i = guard_index(floorf(((float)o + 0.5f) * s), in);
            }
            p->i0 = p->i1 = i, p->w0 = 1, p->w1 = 0;
            continue;
        }
        /* linear: src = scale * (o + 0.5) - 0.5 (clamped at 0), or scale * o with align_corners */
        if (f64) {
            double s = linear_scale(in, out, align, scale);
            double src = align ? s * (double)o : s * ((double)o + 0.5) - 0.5;
            if (!align && src < 0) src = 0;
            int64_t i = guard_index(src, in);
            double l1 = fmin(fmax(src - (double)i, 0.0), 1.0);
            if (l1 != l1) l1 = 0;
            p->i0 = i, p->i1 = i + (i < in - 1 ? 1 : 0);
            p->w1 = l1, p->w0 = 1.0 - l1;
        } else {
            float s = (float)linear_scale(in, out, align, scale);
            float src = align ? s * (float)o : s * ((float)o + 0.5f) - 0.5f;
            if (!align && src < 0) src = 0;
            int64_t i = guard_index(src, in);
            float l1 = fminf(fmaxf(src - (float)i, 0.0f), 1.0f);
            if (l1 != l1) l1 = 0;
            p->i0 = i, p->i1 = i + (i < in - 1 ? 1 : 0);
            p->w1 = l1, p->w0 = 1.0f - l1;
        }
    }
}

typedef struct {
    int dt, nearest, backward; /* dt: MT_F32, MT_F64, or MT_U8 (nearest only) */
    int64_t H, W, OH, OW;
    const tap *ty, *tx;
    const void *src;
    void *dst;
} up_job;

#define UP_LOOPS(T)                                                                                              \
    static void fwd_##T(const up_job *j, int64_t p) {                                                            \
        const T *in = (const T *)j->src + p * j->H * j->W;                                                       \
        T *out = (T *)j->dst + p * j->OH * j->OW;                                                                \
        for (int64_t oy = 0; oy < j->OH; oy++) {                                                                 \
            const tap *y = &j->ty[oy];                                                                           \
            const T *r0 = in + y->i0 * j->W, *r1 = in + y->i1 * j->W;                                            \
            T *o = out + oy * j->OW;                                                                             \
            if (j->nearest) {                                                                                    \
                for (int64_t ox = 0; ox < j->OW; ox++) o[ox] = r0[j->tx[ox].i0];                                 \
                continue;                                                                                        \
            }                                                                                                    \
            T h0 = (T)y->w0, h1 = (T)y->w1;                                                                      \
            for (int64_t ox = 0; ox < j->OW; ox++) {                                                             \
                const tap *x = &j->tx[ox];                                                                       \
                T w0 = (T)x->w0, w1 = (T)x->w1;                                                                  \
                o[ox] = h0 * (w0 * r0[x->i0] + w1 * r0[x->i1]) + h1 * (w0 * r1[x->i0] + w1 * r1[x->i1]);         \
            }                                                                                                    \
        }                                                                                                        \
    }                                                                                                            \
    static void bwd_##T(const up_job *j, int64_t p) {                                                            \
        const T *g = (const T *)j->src + p * j->OH * j->OW;                                                      \
        T *gi = (T *)j->dst + p * j->H * j->W;                                                                   \
        memset(gi, 0, j->H * j->W * sizeof(T));                                                                  \
        for (int64_t oy = 0; oy < j->OH; oy++) {                                                                 \
            const tap *y = &j->ty[oy];                                                                           \
            T *r0 = gi + y->i0 * j->W, *r1 = gi + y->i1 * j->W;                                                  \
            const T *go = g + oy * j->OW;                                                                        \
            for (int64_t ox = 0; ox < j->OW; ox++) {                                                             \
                const tap *x = &j->tx[ox];                                                                       \
                if (j->nearest) { r0[x->i0] += go[ox]; continue; }                                               \
                T v = go[ox], h0 = (T)y->w0, h1 = (T)y->w1, w0 = (T)x->w0, w1 = (T)x->w1;                        \
                r0[x->i0] += h0 * w0 * v;                                                                        \
                r0[x->i1] += h0 * w1 * v;                                                                        \
                r1[x->i0] += h1 * w0 * v;                                                                        \
                r1[x->i1] += h1 * w1 * v;                                                                        \
            }                                                                                                    \
        }                                                                                                        \
    }
UP_LOOPS(float)
UP_LOOPS(double)

static void fwd_nearest_u8(const up_job *j, int64_t p) {
    const uint8_t *in = (const uint8_t *)j->src + p * j->H * j->W;
    uint8_t *out = (uint8_t *)j->dst + p * j->OH * j->OW;
    for (int64_t oy = 0; oy < j->OH; oy++)
        for (int64_t ox = 0; ox < j->OW; ox++) out[oy * j->OW + ox] = in[j->ty[oy].i0 * j->W + j->tx[ox].i0];
}

/* ---- the separable path: antialias=True, and uint8 bilinear -------------------------------- */

typedef struct {
    int64_t min, size; /* the source taps of one output index: [min, min + size) */
} span;

/* a float to int64 as C++'s cast where that is defined; saturating otherwise, NaN to 0 (extreme scales) */
static int64_t sat_i64(double v) {
    if (!(v == v)) return 0;
    return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
}

/* PyTorch computes these weights in the input's type (double for uint8), with its C++ promotions
 * (a float plus a double literal is a double) spelled out below. */
#define AA_WEIGHTS(T, SUF)                                                                                     \
    static T scale_##SUF(int64_t in, int64_t out, int align, double opt) { /* area_pixel_compute_scale */    \
        if (align) return out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0;                                        \
        return opt > 0 ? (T)(1.0 / opt) : (T)in / (T)out;                                                     \
    }                                                                                                          \
    /* Pillow's triangle; Keys' cubic with a = -0.5 (antialias), or -0.75 (cubic == 2: plain bicubic) */      \
    static T filter_##SUF(T x, int cubic) {                                                                    \
        const T a = cubic == 2 ? (T)-0.75 : (T)-0.5;                                                           \
        x = x < 0 ? -x : x;                                                                                    \
        if (!cubic) return x < 1.0 ? (T)(1.0 - x) : (T)0;                                                      \
        if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;                                               \
        if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;                                         \
        return 0;                                                                                              \
    }                                                                                                          \
    /* taps per output index (max_interp_size, but at most the input's size: a span never holds more, so  \
     * the weights are the same) and the filter's support */                                                   \
    static int64_t taps_##SUF(T scale, int cubic, int64_t in, T *support) {                                    \
        int isz = cubic ? 4 : 2;                                                                               \
        *support = scale >= 1.0 ? (T)((isz * 0.5) * scale) : (T)(isz * 0.5);                                  \
        double k = ceil(*support) * 2 + 1;                                                                     \
        return k < (double)in ? (int64_t)k : in;                                                               \
    }                                                                                                          \
    /* _compute_indices_min_size_weights_aa: output o's span and k weights; the largest weight */             \
    static T aa_span_##SUF(int64_t o, int64_t in, T scale, T support, int cubic, int64_t k, span *s, T *w) {  \
        T center = (T)(scale * (o + 0.5)), total = 0, mx = 0;                                                  \
        T invscale = scale >= 1.0 ? (T)(1.0 / scale) : (T)1.0;                                                 \
        int64_t lo = sat_i64((center - support) + 0.5), hi = sat_i64((center + support) + 0.5), j;             \
        s->min = lo > 0 ? lo : 0;                                                                              \
        s->size = (hi < in ? hi : in) - s->min;                                                                \
        s->size = s->size < 0 ? 0 : s->size > k ? k : s->size;                                                 \
        if (s->min > in - 1) s->min = in - 1; /* only for extreme scales (size 0): the first tap is read */  \
        for (j = 0; j < s->size; j++) {                                                                        \
            w[j] = filter_##SUF((T)(((T)(j + s->min) - center + 0.5) * invscale), cubic);                      \
            total += w[j];                                                                                     \
        }                                                                                                      \
        if (total != 0)                                                                                        \
            for (j = 0; j < s->size; j++) {                                                                    \
                w[j] /= total;                                                                                 \
                mx = mx < w[j] ? w[j] : mx;                                                                    \
            }                                                                                                  \
        for (j = s->size; j < k; j++) w[j] = 0;                                                                \
        return mx;                                                                                             \
    }
AA_WEIGHTS(float, f32)
AA_WEIGHTS(double, f64)

/* _compute_indices_min_size_weights (uint8 bilinear and bicubic without antialias): the k (2 or 4)
 * taps around the source index, with the weights of taps outside the input folded onto the border
 * one, as PyTorch */
static double noaa_span(int64_t o, int64_t in, double scale, int align, int64_t k, span *s, double *w) {
    int cubic = k > 2;
    double real = align ? scale * (double)o : scale * ((double)o + 0.5) - 0.5;
    if (!align && !cubic && real < 0) real = 0; /* only linear clamps the source index at 0 */
    int64_t idx = sat_i64(floorf((float)real)); /* guard_index_and_lambda's floorf */
    if (idx > in - 1) idx = in - 1;
    double lambda = real - (double)idx;
    lambda = lambda < 0 ? 0 : lambda, lambda = 1 < lambda ? 1 : lambda;
    int64_t umin = idx - k / 2 + 1, umax = idx + k / 2 + 1, wi = 0;
    double mx = 0;
    s->min = umin > 0 ? umin : 0;
    s->size = (umax < in ? umax : in) - s->min;
    s->size = s->size < 0 ? 0 : s->size > k ? k : s->size;
    for (int64_t j = 0; j < k; j++) {
        w[j] = 0;
        double v = filter_f64((double)(j + 1 - k / 2) - lambda, cubic ? 2 : 0);
        if (umin + j <= 0) wi = 0;
        else if (umin + j >= in - 1) wi = s->size - 1;
        if (wi < 0 || wi >= k) continue;
        w[wi] += v;
        mx = mx < w[wi] ? w[wi] : mx;
        wi++;
    }
    return mx;
}

/* one dimension's spans and weights (float, double, or for uint8 int16 with their precision) */
typedef struct {
    int64_t in, out, k;
    span *sp;
    void *w;
    unsigned prec;
} axis;

static mt_status axis_make(axis *a, int dt, int mode, int64_t in, int64_t out, int align, double opt) {
    int cubic = mode == MT_UPSAMPLE_BICUBIC_AA || mode == MT_UPSAMPLE_BICUBIC;
    int aa = mode == MT_UPSAMPLE_BILINEAR_AA || mode == MT_UPSAMPLE_BICUBIC_AA;
    a->in = in, a->out = out, a->prec = 0;
    float sf = 0, suf = 0;
    double sd = 0, sud = 0;
    if (!aa) a->k = cubic ? 4 : 2;
    else if (dt == MT_F32) sf = scale_f32(in, out, align, opt), a->k = taps_f32(sf, cubic, in, &suf);
    else sd = scale_f64(in, out, align, opt), a->k = taps_f64(sd, cubic, in, &sud);
    if (out > ((int64_t)1 << 62) / (8 * a->k)) return mt__error(MT_ERR_OOM, "out of memory in interpolate");
    a->sp = malloc((size_t)out * sizeof(span));
    a->w = malloc((size_t)(out * a->k) * (dt == MT_F32 ? sizeof(float) : sizeof(double)));
    if (!a->sp || !a->w) return mt__error(MT_ERR_OOM, "out of memory in interpolate");
    double mx = 0;
    for (int64_t o = 0; o < out; o++) {
        if (dt == MT_F32) aa_span_f32(o, in, sf, suf, cubic, a->k, a->sp + o, (float *)a->w + o * a->k);
        else {
            double *w = (double *)a->w + o * a->k, m;
            if (aa) m = aa_span_f64(o, in, sd, sud, cubic, a->k, a->sp + o, w);
            else m = noaa_span(o, in, scale_f64(in, out, align, opt), align, a->k, a->sp + o, w);
            mx = mx < m ? m : mx;
        }
    }
    if (dt == MT_U8) { /* _compute_index_ranges_int16_weights: the widest precision that fits int16 */
        while (a->prec < 22 && (int)(0.5 + mx * (1 << (a->prec + 1))) < (1 << 15)) a->prec++;
        const double *w = a->w;
        int16_t *q = a->w; /* in place: each int16 is written after its double is read */
        for (int64_t i = 0; i < out * a->k; i++) {
            double v = w[i] * (1 << a->prec);
            q[i] = (int16_t)(v < 0 ? (int)(-0.5 + v) : (int)(0.5 + v));
        }
    }
    return MT_OK;
}

static void axis_free(axis *a) {
    free(a->sp);
    free(a->w);
}

typedef struct {
    int dt, horizontal;
    int64_t rows, cols; /* each plane of the source: rows x cols; the pass resamples cols or rows */
    const axis *a;
    const void *src;
    void *dst;
} pass_job;

/* output = t0 * w0 + t1 * w1 + ... in order, as interpolate_aa_single_dim; uint8 rounds once */
#define PASS_LOOP(T, ACC, INIT, STORE)                                                                         \
    static void pass_##T(const pass_job *j, int64_t p) {                                                       \
        const axis *a = j->a;                                                                                  \
        int64_t orows = j->horizontal ? j->rows : a->out, ocols = j->horizontal ? a->out : j->cols;            \
        const T *in = (const T *)j->src + p * j->rows * j->cols;                                               \
        T *out = (T *)j->dst + p * orows * ocols;                                                              \
        int64_t step = j->horizontal ? 1 : j->cols;                                                            \
        for (int64_t r = 0; r < orows; r++)                                                                    \
            for (int64_t c = 0; c < ocols; c++) {                                                              \
                int64_t o = j->horizontal ? c : r;                                                             \
                const span *s = &a->sp[o];                                                                     \
                const T *t = in + (j->horizontal ? r * j->cols + s->min : s->min * j->cols + c);               \
                const ACC##_w *w = (const ACC##_w *)a->w + o * a->k;                                           \
                ACC v = INIT;                                                                                  \
                v += (ACC)t[0] * w[0];                                                                         \
                for (int64_t i = 1; i < s->size; i++) v += (ACC)t[i * step] * w[i];                            \
                out[r * ocols + c] = STORE;                                                                    \
            }                                                                                                  \
    }
typedef float float_w;
typedef double double_w;
typedef int16_t int_w;
PASS_LOOP(float, float, 0, v)
PASS_LOOP(double, double, 0, v)
PASS_LOOP(uint8_t, int, 1 << (a->prec - 1), (uint8_t)(v >> a->prec < 0 ? 0 : v >> a->prec > 255 ? 255 : v >> a->prec))

static void pass_task(void *c, int64_t b, int64_t e) {
    const pass_job *j = c;
    for (int64_t p = b; p < e; p++) {
        if (j->dt == MT_U8) pass_uint8_t(j, p);
        else if (j->dt == MT_F64) pass_double(j, p);
        else pass_float(j, p);
    }
}

/* antialias backward (cpu_upsample_genNd_backward_aa): grad_input[y, x] += wx * wy * grad */
#define AA_BWD(T)                                                                                              \
    static void aa_bwd_##T(const axis *ay, const axis *ax, const T *g, T *gi) {                                \
        memset(gi, 0, (size_t)(ay->in * ax->in) * sizeof(T));                                                 \
        for (int64_t oy = 0; oy < ay->out; oy++) {                                                             \
            const span *sy = &ay->sp[oy];                                                                      \
            const T *wy = (const T *)ay->w + oy * ay->k;                                                       \
            for (int64_t ox = 0; ox < ax->out; ox++) {                                                         \
                const span *sx = &ax->sp[ox];                                                                  \
                const T *wx = (const T *)ax->w + ox * ax->k, v = g[oy * ax->out + ox];                         \
                for (int64_t y = 0; y < sy->size; y++)                                                         \
                    for (int64_t x = 0; x < sx->size; x++)                                                     \
                        gi[(sy->min + y) * ax->in + sx->min + x] += wx[x] * wy[y] * v;                         \
            }                                                                                                  \
        }                                                                                                      \
    }
AA_BWD(float)
AA_BWD(double)

typedef struct {
    int f64;
    const axis *ay, *ax;
    const void *g;
    void *gi;
} bwd_job;

static void aa_bwd_task(void *c, int64_t b, int64_t e) {
    const bwd_job *j = c;
    int64_t isz = j->ay->in * j->ax->in, osz = j->ay->out * j->ax->out;
    for (int64_t p = b; p < e; p++) {
        if (j->f64) aa_bwd_double(j->ay, j->ax, (const double *)j->g + p * osz, (double *)j->gi + p * isz);
        else aa_bwd_float(j->ay, j->ax, (const float *)j->g + p * osz, (float *)j->gi + p * isz);
    }
}

/* separable_upsample_generic_Nd_kernel_impl: src [planes, H, W] contiguous -> r [planes, OH, OW]; a
 * dimension whose size stays is not resampled, and the backward spreads each gradient at once */
static mt_status separable_run(int backward, const void *src, void *r, int dt, int64_t planes, int mode,
                               const int64_t *isz, const int64_t *osz, const double *scales, int align) {
    axis ax[2] = {{0}, {0}};
    mt_status st = MT_OK;
    void *tmp = NULL;
    size_t item = dt == MT_U8 ? 1 : dt == MT_F64 ? 8 : 4;
    for (int d = 0; d < 2 && !st; d++)
        if (backward || isz[d] != osz[d]) st = axis_make(&ax[d], dt, mode, isz[d], osz[d], align, scales[d]);
    if (!st && backward) {
        bwd_job b = {dt == MT_F64, &ax[0], &ax[1], src, r};
        mt__parallel_for(planes, 1 + MT_GRAIN_SIZE / (isz[0] * isz[1] + osz[0] * osz[1] + 1), aa_bwd_task, &b);
    } else if (!st) {
        const void *from = src;
        int64_t rows = isz[0], cols = isz[1];
        if (isz[1] != osz[1] && isz[0] != osz[0]) {
            tmp = malloc((size_t)(planes * isz[0] * osz[1]) * item);
            if (!tmp) st = mt__error(MT_ERR_OOM, "out of memory in interpolate");
        }
        if (isz[0] == osz[0] && isz[1] == osz[1]) memcpy(r, src, (size_t)(planes * isz[0] * isz[1]) * item);
        for (int d = 1; d >= 0 && !st; d--) {
            if (isz[d] == osz[d]) continue;
            void *to = d == 1 && tmp ? tmp : r;
            pass_job j = {dt, d == 1, rows, cols, &ax[d], from, to};
            mt__parallel_for(planes, 1 + MT_GRAIN_SIZE / (rows * cols + 1), pass_task, &j);
            from = to;
            if (d == 1) cols = osz[1];
        }
    }
    free(tmp);
    axis_free(&ax[0]);
    axis_free(&ax[1]);
    return st;
}

/* ---- plain bicubic (upsample_bicubic2d): cubic convolution with A = -0.75 over 4 x 4 taps -------- */

typedef struct {
    int64_t i[4]; /* source indices, clamped into the input (border replication) */
    double w[4];  /* their weights, computed in the compute type */
} ctap;

/* the source index (no clamping at 0, unlike linear), its floor and fraction (guard_index_and_lambda,
 * whose floorf we keep), and Keys' weights of the taps floor - 1 .. floor + 2 */
#define CUBIC_TAPS(T, SUF)                                                                                     \
    static void cubic_taps_##SUF(int64_t in, int64_t out, int align, double opt, ctap *t) {                    \
        const T A = (T)-0.75, s = scale_##SUF(in, out, align, opt);                                            \
        for (int64_t o = 0; o < out; o++) {                                                                    \
            T src = align ? s * (T)o : s * ((T)o + (T)0.5) - (T)0.5;                                           \
            int64_t f = sat_i64(floorf((float)src));                                                           \
            if (f > in - 1) f = in - 1;                                                                        \
            T l = src - (T)f, m;                                                                               \
            l = l < 0 ? 0 : l > 1 ? 1 : l;                                                                     \
            m = 1 - l;                                                                                         \
            T d[4] = {l + 1, l, m, m + 1}; /* distances to the four taps */                                    \
            for (int k = 0; k < 4; k++) {                                                                      \
                T x = d[k];                                                                                    \
                t[o].w[k] = k == 1 || k == 2 ? ((A + 2) * x - (A + 3)) * x * x + 1                             \
                                             : ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;                      \
                int64_t i = f - 1 + k;                                                                         \
                t[o].i[k] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;                                               \
            }                                                                                                  \
        }                                                                                                      \
    }
CUBIC_TAPS(float, f32)
CUBIC_TAPS(double, f64)

typedef struct {
    int f64, backward;
    int64_t H, W, OH, OW;
    const ctap *ty, *tx;
    const void *src;
    void *dst;
} cubic_job;

/* forward: each row's 4 taps along x, then those 4 rows along y, in tap order as PyTorch sums them;
 * backward: each gradient spread over the same 16 taps (x outer, as upsample_bicubic2d_backward) */
#define CUBIC_LOOPS(T)                                                                                         \
    static void cubic_fwd_##T(const cubic_job *j, int64_t p) {                                                 \
        const T *in = (const T *)j->src + p * j->H * j->W;                                                     \
        T *out = (T *)j->dst + p * j->OH * j->OW;                                                              \
        for (int64_t oy = 0; oy < j->OH; oy++) {                                                               \
            const ctap *y = &j->ty[oy];                                                                        \
            for (int64_t ox = 0; ox < j->OW; ox++) {                                                           \
                const ctap *x = &j->tx[ox];                                                                    \
                T v = 0;                                                                                       \
                for (int a = 0; a < 4; a++) {                                                                  \
                    const T *r = in + y->i[a] * j->W;                                                          \
                    T h = r[x->i[0]] * (T)x->w[0];                                                             \
                    for (int b = 1; b < 4; b++) h += r[x->i[b]] * (T)x->w[b];                                  \
                    v = a ? v + h * (T)y->w[a] : h * (T)y->w[a];                                               \
                }                                                                                              \
                out[oy * j->OW + ox] = v;                                                                      \
            }                                                                                                  \
        }                                                                                                      \
    }                                                                                                          \
    static void cubic_bwd_##T(const cubic_job *j, int64_t p) {                                                 \
        const T *g = (const T *)j->src + p * j->OH * j->OW;                                                    \
        T *gi = (T *)j->dst + p * j->H * j->W;                                                                 \
        memset(gi, 0, (size_t)(j->H * j->W) * sizeof(T));                                                      \
        for (int64_t oy = 0; oy < j->OH; oy++) {                                                               \
            const ctap *y = &j->ty[oy];                                                                        \
            for (int64_t ox = 0; ox < j->OW; ox++) {                                                           \
                const ctap *x = &j->tx[ox];                                                                    \
                T v = g[oy * j->OW + ox];                                                                      \
                for (int a = 0; a < 4; a++)                                                                    \
                    for (int b = 0; b < 4; b++) gi[y->i[b] * j->W + x->i[a]] += v * (T)y->w[b] * (T)x->w[a];   \
            }                                                                                                  \
        }                                                                                                      \
    }
CUBIC_LOOPS(float)
CUBIC_LOOPS(double)

static void cubic_task(void *c, int64_t b, int64_t e) {
    const cubic_job *j = c;
    for (int64_t p = b; p < e; p++) {
        if (j->backward) j->f64 ? cubic_bwd_double(j, p) : cubic_bwd_float(j, p);
        else j->f64 ? cubic_fwd_double(j, p) : cubic_fwd_float(j, p);
    }
}

/* src [planes, H, W] contiguous in the compute type -> r [planes, OH, OW] (backward: the reverse);
 * dt: the tensor's dtype, whose precision PyTorch's forward stores the weights in */
static mt_status cubic_run(int backward, const void *src, void *r, int dt, int64_t planes, const int64_t *isz,
                           const int64_t *osz, const double *scales, int align) {
    int f64 = dt == MT_F64;
    ctap *t = malloc((size_t)(osz[0] + osz[1]) * sizeof(ctap));
    if (!t) return mt__error(MT_ERR_OOM, "out of memory in interpolate");
    for (int d = 0; d < 2; d++) {
        ctap *td = d ? t + osz[0] : t;
        if (f64) cubic_taps_f64(isz[d], osz[d], align, scales[d], td);
        else cubic_taps_f32(isz[d], osz[d], align, scales[d], td);
        for (int64_t o = 0; o < osz[d] && !backward && (dt == MT_F16 || dt == MT_BF16); o++)
            for (int k = 0; k < 4; k++) {
                float w = (float)td[o].w[k];
                td[o].w[k] = dt == MT_F16 ? mt__f16_to_f32(mt__f32_to_f16(w)) : mt__bf16_to_f32(mt__f32_to_bf16(w));
            }
    }
    cubic_job j = {f64, backward, isz[0], isz[1], osz[0], osz[1], t, t + osz[0], src, r};
    mt__parallel_for(planes, 1 + MT_GRAIN_SIZE / (16 * osz[0] * osz[1] + 1), cubic_task, &j);
    free(t);
    return MT_OK;
}

static void up_task(void *c, int64_t b, int64_t e) {
    const up_job *j = c;
    for (int64_t p = b; p < e; p++) {
        if (j->dt == MT_U8) fwd_nearest_u8(j, p);
        else if (j->backward) j->dt == MT_F64 ? bwd_double(j, p) : bwd_float(j, p);
        else j->dt == MT_F64 ? fwd_double(j, p) : fwd_float(j, p);
    }
}

static const char *up_name(int mode, int nd) {
    static const char *n[2][3] = {{"upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_linear1d"},
                                  {"upsample_nearest2d", "_upsample_nearest_exact2d", "upsample_bilinear2d"}};
    return n[nd - 1][mode];
}

/* x: [N, C, (H,) W]; the result (or, backward, the input gradient from g) */
static mt_status upsample_run(int backward, mt_tensor *x, mt_tensor *g, int mode, int nd, const int64_t *osz,
                              const double *scales, int align, mt_tensor **out) {
    char b[256];
    if ((unsigned)mode >= MT_NUM_UPSAMPLE) return mt__error(MT_ERR_NOT_IMPLEMENTED, "interpolation mode %d is not implemented", mode);
    if (nd < 1 || nd > 2) return mt__error(MT_ERR_NOT_IMPLEMENTED, "interpolation over %d dims is not implemented", nd);
    int aa = mode == MT_UPSAMPLE_BILINEAR_AA || mode == MT_UPSAMPLE_BICUBIC_AA, cubic = mode == MT_UPSAMPLE_BICUBIC;
    if (aa && nd != 2) return mt__error(MT_ERR_RUNTIME, "antialiased interpolation needs a 4-D input");
    if (cubic && nd != 2) return mt__error(MT_ERR_RUNTIME, "bicubic interpolation needs a 4-D input");
    if (x->ndim != nd + 2)
        return mt__error(MT_ERR_RUNTIME, "It is expected input_size equals to %d, but got size %d", nd + 2, x->ndim);
    for (int i = 0; i < nd; i++)
        if (x->sizes[2 + i] <= 0 || osz[i] <= 0) {
            char o[256];
            return mt__error(MT_ERR_RUNTIME, "Input and output sizes should be greater than 0, but got input (%s) output "
                             "(%s)", nd == 1 ? (snprintf(b, sizeof b, "W: %lld", (long long)x->sizes[2]), b)
                                             : (snprintf(b, sizeof b, "H: %lld, W: %lld", (long long)x->sizes[2], (long long)x->sizes[3]), b),
                             nd == 1 ? (snprintf(o, sizeof o, "W: %lld", (long long)osz[0]), o)
                                     : (snprintf(o, sizeof o, "H: %lld, W: %lld", (long long)osz[0], (long long)osz[1]), o));
        }
    if (x->sizes[1] == 0 && !backward)
        return mt__error(MT_ERR_RUNTIME, "Non-empty %dD data tensor expected but got a tensor with sizes %s", x->ndim,
                         MT_SZ(b, x));
    /* uint8: nearest, and the separable path's 2-D (bi)linear and antialiased modes (forward only) */
    int u8 = x->dtype == MT_U8 && !backward && (mode < MT_UPSAMPLE_LINEAR || nd == 2);
    if (cubic && !u8 && !mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"compute_indices_weights_cubic\" not implemented for '%s'", MT_DTNAME(x));
    if (aa && !u8 && x->dtype != MT_F32 && x->dtype != MT_F64)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"compute_index_ranges_weights\" not implemented for '%s'", MT_DTNAME(x));
    if (!mt__is_float(x->dtype) && !u8)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", up_name(mode, nd), MT_DTNAME(x));
    int cdt = u8 ? MT_U8 : mt__compute_dtype(x->dtype);
    up_job j = {cdt, mode != MT_UPSAMPLE_LINEAR, backward, 1, x->sizes[nd + 1], 1, osz[nd - 1], NULL, NULL, NULL, NULL};
    if (nd == 2) j.H = x->sizes[2], j.OH = osz[0];
    int64_t sz[4] = {x->sizes[0], x->sizes[1], osz[0], osz[nd - 1]};
    mt_tensor *r, *src = NULL;
    if (backward) MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &r));
    else MT_TRY(mt__alloc(x->ndim, sz, NULL, cdt, x->device, &r));
    if (x->device == MT_META || mt_tensor_numel(r) == 0) return mt__from_compute(r, x->dtype, out);
    int separable = aa || (u8 && (mode == MT_UPSAMPLE_LINEAR || cubic));
    cubic = cubic && !u8;
    tap *t = separable || cubic ? NULL : malloc((size_t)(j.OH + j.OW) * sizeof(tap));
    mt_status st = t || separable || cubic ? MT_OK : mt__error(MT_ERR_OOM, "out of memory in interpolate");
    if (!st) st = mt__as_contig(backward ? g : x, cdt, &src);
    if (!st && cubic) {
        int64_t isz[2] = {j.H, j.W}, o2[2] = {j.OH, j.OW};
        st = cubic_run(backward, mt__data(src), mt__data(r), x->dtype, x->sizes[0] * x->sizes[1], isz, o2, scales,
                       align);
    } else if (!st && separable) {
        int64_t isz[2] = {j.H, j.W}, o2[2] = {j.OH, j.OW};
        st = separable_run(backward, mt__data(src), mt__data(r), cdt, x->sizes[0] * x->sizes[1], mode, isz, o2,
                           scales, align);
    } else if (!st) {
        double sh = nd == 2 ? scales[0] : 0, sw = scales[nd - 1];
        make_taps(mode, cdt == MT_F64, j.H, j.OH, align, sh, t);
        make_taps(mode, cdt == MT_F64, j.W, j.OW, align, sw, t + j.OH);
        j.ty = t, j.tx = t + j.OH, j.src = mt__data(src), j.dst = mt__data(r);
        int64_t planes = x->sizes[0] * x->sizes[1];
        mt__parallel_for(planes, 1 + MT_GRAIN_SIZE / (j.OH * j.OW + 1), up_task, &j);
    }
    free(t);
    mt_tensor_release(src);
    if (st) { mt_tensor_release(r); return st; }
    return mt__from_compute(r, x->dtype, out);
}

mt_status mt__impl_upsample(mt_tensor *x, int mode, int nd, const int64_t *osz, const double *scales, int align,
                            mt_tensor **out) {
    return upsample_run(0, x, NULL, mode, nd, osz, scales, align, out);
}

mt_status mt__impl_upsample_backward(mt_tensor *g, mt_tensor *x, int mode, int nd, const int64_t *osz,
                                     const double *scales, int align, mt_tensor **out) {
    return upsample_run(1, x, g, mode, nd, osz, scales, align, out);
}
