/* upsample.c — interpolate's nearest, nearest-exact and (bi)linear modes over
 * [N, C,] H, W planes (1-D runs with height 1), forward and backward, with
 * PyTorch's index arithmetic (UpSample.h: float scales for nearest, the compute
 * type for linear; align_corners; a given scale_factor used as 1/scale). Each
 * output row/column gets its two source taps and weights once; planes split
 * over the core's pool. float16/bfloat16 compute in float32. */
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
    int f64, nearest, backward;
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

static void up_task(void *c, int64_t b, int64_t e) {
    const up_job *j = c;
    for (int64_t p = b; p < e; p++) {
        if (j->backward) j->f64 ? bwd_double(j, p) : bwd_float(j, p);
        else j->f64 ? fwd_double(j, p) : fwd_float(j, p);
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
    if (mode < 0 || mode > MT_UPSAMPLE_LINEAR) return mt__error(MT_ERR_NOT_IMPLEMENTED, "interpolation mode %d is not implemented", mode);
    if (nd < 1 || nd > 2) return mt__error(MT_ERR_NOT_IMPLEMENTED, "interpolation over %d dims is not implemented", nd);
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
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", up_name(mode, nd), MT_DTNAME(x));
    int cdt = mt__compute_dtype(x->dtype);
    up_job j = {cdt == MT_F64, mode != MT_UPSAMPLE_LINEAR, backward, 1, x->sizes[nd + 1], 1, osz[nd - 1], NULL, NULL, NULL, NULL};
    if (nd == 2) j.H = x->sizes[2], j.OH = osz[0];
    int64_t sz[4] = {x->sizes[0], x->sizes[1], osz[0], osz[nd - 1]};
    mt_tensor *r, *src = NULL;
    if (backward) MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &r));
    else MT_TRY(mt__alloc(x->ndim, sz, NULL, cdt, x->device, &r));
    if (x->device == MT_META || mt_tensor_numel(r) == 0) return mt__from_compute(r, x->dtype, out);
    tap *t = malloc((size_t)(j.OH + j.OW) * sizeof(tap));
    mt_status st = t ? MT_OK : mt__error(MT_ERR_OOM, "out of memory in interpolate");
    if (!st) st = mt__as_contig(backward ? g : x, cdt, &src);
    if (!st) {
        double sh = nd == 2 ? scales[0] : 0, sw = scales[nd - 1];
        make_taps(mode, j.f64, j.H, j.OH, align, sh, t);
        make_taps(mode, j.f64, j.W, j.OW, align, sw, t + j.OH);
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
