/* conv.c — convolution and transposed convolution over 1, 2 or 3 spatial dims (one kernel: the
 * geometry is always depth x height x width, a 1-D or 2-D input having depth and height 1) on
 * im2col/col2im + OpenBLAS GEMM, one sample at a time (GEMM threads inside, im2col/col2im split
 * over channels on the core's pool), and their backward: the input gradient is a GEMM then col2im
 * (or im2col then GEMM, transposed), the weight gradient a GEMM accumulated over the batch. A 1x1
 * kernel with stride 1 and no padding skips im2col. Also the public im2col/col2im (F.unfold/F.fold).
 * float16/bfloat16 compute in float32. */
#include <cblas.h>
#include <stdio.h>

#include "spatial.h"
#include "shape.h"

/* image side (C channels of D x H x W) and columns side (C*kd*kh*kw rows of od*oh*ow); index 0 is
 * depth, 1 height, 2 width */
typedef struct {
    int64_t C, in[3], k[3], s[3], p[3], d[3], o[3];
} geom;

static int direct(const geom *g) {
    for (int i = 0; i < 3; i++)
        if (g->k[i] != 1 || g->s[i] != 1 || g->p[i] != 0 || g->o[i] != g->in[i]) return 0;
    return 1;
}

/* im2col rows [r0, r1) of C*kd*kh*kw (each row, one (channel, kz, ky, kx), is independent): per
 * output row the in-bounds run [lo, hi) of ox is found once, so the copy has no per-element test. */
#define IM2COL(T)                                                                                               \
    static void im2col_##T(const T *img, T *col, const geom *g, int64_t r0, int64_t r1) {                       \
        const int64_t D = g->in[0], H = g->in[1], W = g->in[2], od = g->o[0], oh = g->o[1], ow = g->o[2];       \
        const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2], sw = g->s[2], plane = oh * ow;                  \
        const int64_t sd = g->s[0], sh = g->s[1], pd = g->p[0], ph = g->p[1], dd = g->d[0], dh = g->d[1];       \
        for (int64_t r = r0; r < r1; r++) {                                                                     \
            int64_t c = r / (kd * kh * kw), kz = r / (kh * kw) % kd, ky = r / kw % kh, kx = r % kw;             \
            T *dst = col + r * od * plane;                                                                      \
            int64_t x0 = kx * g->d[2] - g->p[2];                                                                \
            int64_t lo = x0 >= 0 ? 0 : (-x0 - 1) / sw + 1; /* rounded up; no overflow for a huge stride */      \
            int64_t hi = W - 1 - x0 < 0 ? 0 : (W - 1 - x0) / sw + 1;                                            \
            if (hi > ow) hi = ow;                                                                               \
            if (lo > hi) lo = hi;                                                                               \
            for (int64_t oz = 0; oz < od; oz++) {                                                               \
                int64_t iz = oz * sd - pd + kz * dd;                                                            \
                T *dz = dst + oz * plane;                                                                       \
                if (iz < 0 || iz >= D) { memset(dz, 0, plane * sizeof(T)); continue; }                          \
                for (int64_t oy = 0; oy < oh; oy++) {                                                           \
                    int64_t iy = oy * sh - ph + ky * dh;                                                        \
                    T *d = dz + oy * ow;                                                                        \
                    if (iy < 0 || iy >= H) { memset(d, 0, ow * sizeof(T)); continue; }                          \
                    const T *src = img + ((c * D + iz) * H + iy) * W;                                           \
                    for (int64_t ox = 0; ox < lo; ox++) d[ox] = 0;                                              \
                    if (sw == 1) memcpy(d + lo, src + x0 + lo, (size_t)(hi - lo) * sizeof(T));                  \
                    else for (int64_t ox = lo; ox < hi; ox++) d[ox] = src[x0 + ox * sw];                        \
                    for (int64_t ox = hi; ox < ow; ox++) d[ox] = 0;                                             \
                }                                                                                               \
            }                                                                                                   \
        }                                                                                                       \
    }                                                                                                           \
    static void col2im_##T(const T *col, T *img, const geom *g, int64_t c0, int64_t c1) {                       \
        const int64_t D = g->in[0], H = g->in[1], W = g->in[2], od = g->o[0], oh = g->o[1], ow = g->o[2];       \
        const int64_t K = g->k[0] * g->k[1] * g->k[2], L = od * oh * ow, sw = g->s[2];                          \
        const int64_t sd = g->s[0], sh = g->s[1], pd = g->p[0], ph = g->p[1], dd = g->d[0], dh = g->d[1];       \
        for (int64_t c = c0; c < c1; c++)                                                                       \
            for (int64_t kk = 0; kk < K; kk++) {                                                                \
                int64_t kz = kk / (g->k[1] * g->k[2]), ky = kk / g->k[2] % g->k[1], kx = kk % g->k[2];          \
                const T *s = col + (c * K + kk) * L;                                                            \
                int64_t x0 = kx * g->d[2] - g->p[2];                                                            \
                for (int64_t oz = 0; oz < od; oz++) {                                                           \
                    int64_t iz = oz * sd - pd + kz * dd;                                                        \
                    if (iz < 0 || iz >= D) continue;                                                            \
                    for (int64_t oy = 0; oy < oh; oy++) {                                                       \
                        int64_t iy = oy * sh - ph + ky * dh;                                                    \
                        if (iy < 0 || iy >= H) continue;                                                        \
                        T *dst = img + ((c * D + iz) * H + iy) * W;                                             \
                        const T *sr = s + (oz * oh + oy) * ow;                                                  \
                        for (int64_t ox = 0; ox < ow; ox++) {                                                   \
                            int64_t ix = x0 + ox * sw;                                                          \
                            if (ix >= 0 && ix < W) dst[ix] += sr[ox];                                           \
                        }                                                                                       \
                    }                                                                                           \
                }                                                                                               \
            }                                                                                                   \
    }
IM2COL(float)
IM2COL(double)

typedef struct { const void *src; void *dst; const geom *g; int f64, to_col; } colctx;
static void col_task(void *p, int64_t b, int64_t e) {
    colctx *c = p;
    if (c->to_col) {
        if (c->f64) im2col_double(c->src, c->dst, c->g, b, e);
        else im2col_float(c->src, c->dst, c->g, b, e);
    } else {
        if (c->f64) col2im_double(c->src, c->dst, c->g, b, e);
        else col2im_float(c->src, c->dst, c->g, b, e);
    }
}
/* im2col (to_col, split over rows) or col2im (accumulating into a zeroed image, split over
 * channels: the rows of one channel add into the same pixels) */
static void run_cols(const void *src, void *dst, const geom *g, int f64, int to_col) {
    colctx c = {src, dst, g, f64, to_col};
    int64_t K = g->k[0] * g->k[1] * g->k[2], per = g->o[0] * g->o[1] * g->o[2] * (to_col ? 1 : K);
    mt__parallel_for(to_col ? g->C * K : g->C, per > 0 ? 1 + MT_GRAIN_SIZE / per : 1, col_task, &c);
}

/* row-major C[m,n] = A[m,k] @ B[k,n] (+ beta*C), A/B transposed as flagged */
static void gemm(int f64, int ta, int tb, int64_t m, int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                 int64_t ldb, double beta, void *C, int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        if (beta == 0)
            for (int64_t i = 0; i < m; i++) memset((char *)C + i * ldc * (f64 ? 8 : 4), 0, n * (f64 ? 8 : 4));
        return;
    }
    if (f64)
        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, 1.0, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    else /* a row-major [r x c] with leading dimension ld; transposed: element (i, j) at j*ld + i */
        mt__sgemm(1, m, n, k, 1.0f, A, 0, ta ? 1 : lda, ta ? lda : 1, B, 0, tb ? 1 : ldb, tb ? ldb : 1, (float)beta, C, 0,
                  ldc, 1);
}

/* ---- argument checks and shapes (PyTorch's check_shape_forward) ---------------- */

static const char *cpp_type(int dt) {
    static const char *const n[] = {"bool", "unsigned char", "signed char", "short int", "int", "long int", "c10::Half",
                                    "c10::BFloat16", "float", "double", "c10::Float8_e5m2", "c10::Float8_e4m3fn",
                                    "c10::Float8_e5m2fnuz", "c10::Float8_e4m3fnuz", "c10::Float8_e8m0fnu",
                                    "c10::complex<float>", "c10::complex<double>"};
    MT_DTYPE_TABLE(n);
    return n[dt];
}

/* output channels; 1 when the product overflows */
static int conv_cout(mt_tensor *w, const mt_conv_args *a, int64_t *cout) {
    if (!a->transposed) return *cout = w->sizes[0], 0;
    return __builtin_mul_overflow(w->sizes[1], a->groups, cout);
}

/* v over the dims PyTorch's CPU kernels report: 3-D as is, 1-D and 2-D as 2-D (1-D runs with a
 * height of 1, whose value is fill); returns the count */
static int kernel_dims(const int64_t *v, int nd, int64_t fill, int64_t *out) {
    int m = nd == 3 ? 3 : 2;
    for (int i = 0; i < m; i++) out[i] = i < m - nd ? fill : v[i - (m - nd)];
    return m;
}

/* appends "name_height: v<sep>name_width: v" (with name_depth first in 3-D) to buf at n */
static int fmt_named(char *buf, size_t cap, int n, const char *name, const int64_t *v, int nd, int64_t fill,
                     const char *sep) {
    static const char *const dims[] = {"depth", "height", "width"};
    int64_t e[3];
    int m = kernel_dims(v, nd, fill, e);
    for (int i = 0; i < m && n < (int)cap; i++)
        n += snprintf(buf + n, cap - n, "%s%s_%s: %lld", n ? sep : "", name, dims[3 - m + i], (long long)e[i]);
    return n;
}

/* "a x b x c" into buf */
static void fmt_cross(char *buf, size_t cap, const int64_t *v, int n) {
    int k = 0;
    for (int i = 0; i < n && k < (int)cap; i++) k += snprintf(buf + k, cap - k, i ? " x %lld" : "%lld", (long long)v[i]);
}

/* prefix and v in decimal (v may pass int64) into buf; returns the characters written (at most cap - 1) */
static int fmt_i128(char *buf, size_t cap, const char *prefix, __int128 v) {
    char d[48];
    int n = 0;
    unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    do d[n++] = (char)('0' + (int)(u % 10)); while ((u /= 10) && n < 47);
    int k = snprintf(buf, cap, "%s%s", prefix, v < 0 ? "-" : "");
    while (n && k + 1 < (int)cap) buf[k++] = d[--n];
    buf[k < (int)cap ? k : (int)cap - 1] = 0;
    return k < (int)cap ? k : (int)cap - 1;
}

/* PyTorch's own guard on 2 * padding (check_shape_forward, both kinds) */
static mt_status pad_guard(const mt_conv_args *a) {
    for (int i = 0; i < a->nd; i++)
        if (a->padding[i] > INT64_MAX - a->padding[i])
            return mt__error(MT_ERR_RUNTIME, "Given padding=%lld at dimension %d , expected padding to be at most %lld",
                             (long long)a->padding[i], i, (long long)(INT64_MAX / 2));
    return MT_OK;
}

/* PyTorch's front checks (convNd's bias type, check_shape_forward), in its order */
static mt_status conv_check(mt_tensor *x, mt_tensor *w, mt_tensor *b, const mt_conv_args *a) {
    char s1[256], s2[256];
    int nd = a->nd;
    MT_TRY(mt__same_device(x, w)); /* a meta weight or bias beside a CPU input has no data to read */
    if (b) MT_TRY(mt__same_device(x, b));
    if (!a->transposed && b && b->dtype != x->dtype)
        return mt__error(MT_ERR_RUNTIME, "Input type (%s) and bias type (%s) should be the same", cpp_type(x->dtype),
                         cpp_type(b->dtype));
    for (int i = 0; i < nd; i++) if (a->padding[i] < 0) return mt__error(MT_ERR_RUNTIME, "negative padding is not supported");
    for (int i = 0; i < nd; i++)
        if (a->output_padding[i] < 0) return mt__error(MT_ERR_RUNTIME, "negative output_padding is not supported");
    for (int i = 0; i < nd; i++) if (a->stride[i] <= 0) return mt__error(MT_ERR_RUNTIME, "non-positive stride is not supported");
    /* a zero dilation passes here and is refused by the kernels (conv_kernel_check) */
    for (int i = 0; i < nd; i++) if (a->dilation[i] < 0) return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero");
    if (a->groups <= 0) return mt__error(MT_ERR_RUNTIME, "non-positive groups is not supported");
    if (w->ndim != x->ndim)
        return mt__error(MT_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                         "%d-dimensional input of size %s instead", w->ndim, w->ndim, MT_SZ(s1, w), x->ndim, MT_SZ(s2, x));
    if (x->ndim != nd + 2) return mt__error(MT_ERR_RUNTIME, "convolution: expected %dD batched input", nd + 2);
    if (w->sizes[0] < a->groups)
        return mt__error(MT_ERR_RUNTIME, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but "
                         "got weight of size %s instead", (long long)a->groups, (long long)a->groups, MT_SZ(s1, w));
    if (w->sizes[0] % a->groups)
        return mt__error(MT_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, "
                         "but got weight of size [%s] instead", (long long)a->groups, (long long)a->groups, MT_SZ(s1, w));
    if (!a->transposed) {
        if (x->sizes[1] != w->sizes[1] * a->groups)
            return mt__error(MT_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld "
                             "channels, but got %lld channels instead", (long long)a->groups, MT_SZ(s1, w),
                             MT_SZ(s2, x), (long long)(w->sizes[1] * a->groups), (long long)x->sizes[1]);
        if (b && (b->ndim != 1 || b->sizes[0] != w->sizes[0]))
            return mt__error(MT_ERR_RUNTIME, "Given weight of size %s, expected bias to be 1-dimensional with %lld "
                             "elements, but got bias of size %s instead", MT_SZ(s1, w), (long long)w->sizes[0],
                             MT_SZ(s2, b));
        MT_TRY(pad_guard(a));
        int ok = 1;
        int n1 = 0, n2 = 0;
        for (int i = 0; i < nd; i++) {
            /* in 128 bits: a huge dilation must not overflow (conv_out_sizes reports it); printed exactly */
            __int128 in = (__int128)x->sizes[2 + i] + (__int128)2 * a->padding[i] + a->pad_extra[i];
            __int128 k = (__int128)a->dilation[i] * (w->sizes[2 + i] - 1) + 1;
            if (in < k) ok = 0;
            n1 += fmt_i128(s1 + n1, sizeof s1 - n1, i ? " x " : "", in);
            n2 += fmt_i128(s2 + n2, sizeof s2 - n2, i ? " x " : "", k);
        }
        if (!ok)
            return mt__error(MT_ERR_RUNTIME, "Calculated padded input size per channel: (%s). Kernel size: (%s). Kernel "
                             "size can't be greater than actual input size", s1, s2);
    } else {
        MT_TRY(pad_guard(a));
        if (x->sizes[1] != w->sizes[0])
            return mt__error(MT_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected input%s to have %lld "
                             "channels, but got %lld channels instead", MT_SZ(s1, w), MT_SZ(s2, x),
                             (long long)w->sizes[0], (long long)x->sizes[1]);
        if (b && (b->ndim != 1 || b->sizes[0] != w->sizes[1] * a->groups))
            return mt__error(MT_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected bias to be 1-dimensional "
                             "with %lld elements, but got bias of size %s instead", MT_SZ(s1, w),
                             (long long)(w->sizes[1] * a->groups), MT_SZ(s2, b));
    }
    return MT_OK;
}

/* Whether PyTorch 2.13 runs this convolution on oneDNN (its use_mkldnn: bfloat16 always, float32 unless
 * small and single-threaded), whose checks word some errors differently. */
static int onednn(mt_tensor *x, mt_tensor *w, const mt_conv_args *a) {
    if (x->dtype == MT_BF16) return 1;
    if (x->dtype != MT_F32) return 0;
    int64_t kw = w->sizes[w->ndim - 1], kh = a->nd > 1 ? w->sizes[w->ndim - 2] : 1, N = x->sizes[0], big = 1;
    int spaced = 0;
    for (int i = 0; i < a->nd; i++) spaced |= a->stride[i] != 1 || a->dilation[i] != 1;
    for (int i = 0; i < 4; i++) big = mt__wmul(big, a->nd == 1 && i == 2 ? 1 : x->sizes[i]); /* 1-D as N, C, 1, W */
    return (spaced || N >= 16 || kw != 1 || kh != 1 || mt_get_num_threads() > 1) &&
           (a->groups > 1 || (kw > 3 && kh > 3) || N > 1 || big > 20480);
}

/* a tensor's type as PyTorch's toString() prints it */
static const char *type_str(char *buf, size_t cap, int dt) {
    snprintf(buf, cap, dt == MT_BF16 ? "CPU%sType" : "torch.%sTensor", mt_dtype_names[dt]);
    return buf;
}

/* The checks of PyTorch's CPU kernels (slow_conv2d/3d, the dilated and transposed ones), which an
 * empty input never reaches (it takes PyTorch's empty path): a zero dilation, then the transposed
 * kernels' weight and output padding. */
static mt_status conv_kernel_check(mt_tensor *x, mt_tensor *w, const mt_conv_args *a) {
    char s[512];
    int nd = a->nd, zero = 0, n = 0;
    for (int i = 0; i < nd; i++) zero |= a->dilation[i] == 0;
    if (zero && onednn(x, w, a))
        return mt__error(MT_ERR_RUNTIME, a->transposed ? "dimensions are invalid" : "non-positive dilation is not supported");
    if (zero && !a->transposed) {
        int64_t e[3];
        int m = kernel_dims(a->dilation, nd, 1, e);
        for (int i = 0; i < m; i++) n += snprintf(s + n, sizeof s - n, i ? ", %lld" : "%lld", (long long)e[i]);
        return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero, but got [%s]", s);
    }
    if (!a->transposed) return MT_OK;
    if (zero) {
        fmt_named(s, sizeof s, 0, "dilation", a->dilation, nd, 1, ", ");
        return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero, but got %s", s);
    }
    if (mt_tensor_numel(w) == 0) {
        char s1[256];
        int64_t shown[5];  /* a 1-D weight as the 2-D kernel sees it */
        int m = nd == 1 ? 4 : w->ndim;
        for (int i = 0, j = 0; i < m; i++) shown[i] = nd == 1 && i == 2 ? 1 : w->sizes[j++];
        mt__fmt_sizes(s1, sizeof s1, m, shown);
        if (nd == 3)
            return mt__error(MT_ERR_RUNTIME, "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height "
                             "x kernel_width) tensor expected for weight, but got: %s", s1);
        return mt__error(MT_ERR_RUNTIME, "non-empty 2D or 4D weight tensor expected, but got: %s", s1);
    }
    for (int i = 0; i < nd; i++)
        if (a->output_padding[i] >= a->stride[i] && a->output_padding[i] >= a->dilation[i]) {
            n = fmt_named(s, sizeof s, 0, "output_padding", a->output_padding, nd, 0, " ");
            n = fmt_named(s, sizeof s, n, "stride", a->stride, nd, 1, " ");
            fmt_named(s, sizeof s, n, "dilation", a->dilation, nd, 1, " ");
            return mt__error(MT_ERR_RUNTIME, "output padding must be smaller than either stride or dilation, but got %s", s);
        }
    return MT_OK;
}

/* the kernels' dtype checks, after the output sizes */
static mt_status conv_dtype_check(mt_tensor *x, mt_tensor *w, mt_tensor *b, const mt_conv_args *a) {
    mt_tensor *other[2] = {w, a->transposed ? b : NULL};
    for (int i = 0; i < 2; i++) {
        mt_tensor *t = other[i];
        char s1[64], s2[64];
        if (!t || t->dtype == x->dtype) continue;
        if (onednn(x, w, a))
            return mt__error(MT_ERR_RUNTIME, "Input type (%s) and %s type (%s) should be the same or input should be a "
                             "MKLDNN tensor and %s is a dense tensor", type_str(s1, sizeof s1, x->dtype),
                             i ? "bias" : "weight", type_str(s2, sizeof s2, t->dtype), i ? "bias" : "weight");
        return mt__error(MT_ERR_RUNTIME, "expected scalar type %s but found %s", MT_DTNAME(x), MT_DTNAME(t));
    }
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "convolution on integer tensors (%s) is not implemented",
                         MT_DTNAME(x));
    return MT_OK;
}

/* output spatial sizes; an empty input's negative size is refused by the allocation, as in PyTorch */
static mt_status conv_out_sizes(mt_tensor *x, mt_tensor *w, const mt_conv_args *a, int64_t *o) {
    int ok = 1;
    for (int i = 0; i < a->nd; i++) {
        int64_t in = x->sizes[2 + i], k = w->sizes[2 + i];
        int over = !a->transposed
            ? mt__window_out(in, (__int128)2 * a->padding[i] + a->pad_extra[i], k, a->dilation[i], a->stride[i], 0,
                             &o[i])
            : mt__narrow((__int128)(in - 1) * a->stride[i] - (__int128)2 * a->padding[i] +
                         (__int128)a->dilation[i] * (k - 1) + a->output_padding[i] + 1, &o[i]);
        if (over) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
        if (o[i] <= 0) ok = 0;
    }
    if (!ok && mt_tensor_numel(x) == 0) {
        for (int i = 0; i < a->nd; i++)
            if (o[i] < 0) {
                char s1[256];
                int64_t shape[5] = {x->sizes[0], 0};
                if (conv_cout(w, a, &shape[1])) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
                memcpy(shape + 2, o, a->nd * sizeof *o);
                return mt__error(MT_ERR_RUNTIME, "invalid shape dimension %lld at index %d of shape %s",
                                 (long long)o[i], i + 2, mt__fmt_sizes(s1, sizeof s1, a->nd + 2, shape));
            }
    } else if (!ok) {
        char s1[256], s2[256];
        int64_t in[3], out[3];
        int m = kernel_dims(x->sizes + 2, a->nd, 1, in);
        kernel_dims(o, a->nd, 1, out);
        fmt_cross(s1, sizeof s1, in, m);
        fmt_cross(s2, sizeof s2, out, m);
        return mt__error(MT_ERR_RUNTIME, "Given input size per channel: (%s). Calculated output size per channel: (%s). "
                         "Output size is too small", s1, s2);
    }
    return MT_OK;
}

/* the image/columns geometry: image = input (conv) or output (transposed) of one sample; the
 * convolution's nd dims fill the last of the three slots, the others are a size-1 identity */
static geom make_geom(const mt_conv_args *a, int64_t C, const int64_t *img, const int64_t *cols, const int64_t *k) {
    geom g = {C, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}};
    for (int i = 0, j = 3 - a->nd; i < a->nd; i++, j++)
        g.in[j] = img[i], g.k[j] = k[i], g.s[j] = a->stride[i], g.p[j] = a->padding[i], g.d[j] = a->dilation[i],
        g.o[j] = cols[i];
    return g;
}

typedef struct {
    int f64, es;
    int64_t N, Cin, Cout, G, K, Lin, Lout; /* K: kernel elements, Lin/Lout: input/output spatial elements */
    geom g;
} plan;

/* the products wrap only for empty tensors with huge dims (then the output's allocation refuses
 * the shape or nothing is computed); Cout is a size of the output, so its overflow is an error */
static mt_status make_plan(mt_tensor *x, mt_tensor *w, const mt_conv_args *a, const int64_t *osz, int cdt, plan *p) {
    p->f64 = cdt == MT_F64, p->es = p->f64 ? 8 : 4;
    p->N = x->sizes[0], p->Cin = x->sizes[1], p->G = a->groups;
    if (conv_cout(w, a, &p->Cout))
        return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    p->K = 1, p->Lin = 1, p->Lout = 1;
    for (int i = 0; i < a->nd; i++)
        p->K = mt__wmul(p->K, w->sizes[2 + i]), p->Lin = mt__wmul(p->Lin, x->sizes[2 + i]), p->Lout = mt__wmul(p->Lout, osz[i]);
    if (!a->transposed) p->g = make_geom(a, p->Cin, x->sizes + 2, osz, w->sizes + 2);
    else p->g = make_geom(a, p->Cout, osz, x->sizes + 2, w->sizes + 2);
    return MT_OK;
}

/* Winograd F(2x2, 3x3) (conv_winograd.c) takes float32 3x3 kernels of stride 1 and dilation 1 in one
 * group, for a correlation of C channels into K of oh x ow (mt__winograd_fits). pad gets its
 * padding: the convolution's own, or 2 - p when the kernel is rotated (flip: a transposed
 * convolution, or a convolution's input gradient). */
static int winograd(const plan *p, const mt_conv_args *a, int flip, int64_t C, int64_t K, int64_t oh, int64_t ow,
                    int64_t *pad) {
    const geom *g = &p->g;
    if (p->f64 || a->nd != 2 || p->G != 1 || g->k[1] != 3 || g->k[2] != 3 || g->s[1] != 1 || g->s[2] != 1 ||
        g->d[1] != 1 || g->d[2] != 1)
        return 0;
    pad[0] = flip ? 2 - g->p[1] : g->p[1], pad[1] = flip ? 2 - g->p[2] : g->p[2];
    return pad[0] >= 0 && pad[1] >= 0 && mt__winograd_fits(C, K, oh, ow);
}

#define AT(ptr, i) ((char *)(ptr) + (int64_t)(i) * p.es)
#define F32(t) ((float *)mt__data(t)) /* a float32 compute tensor's elements */

static void add_bias(const plan *pp, void *out, const void *b) {
    plan p = *pp;
    for (int64_t n = 0; n < p.N; n++)
        for (int64_t o = 0; o < p.Cout; o++) {
            if (p.f64) { double *d = (double *)AT(out, (n * p.Cout + o) * p.Lout), v = ((const double *)b)[o]; for (int64_t i = 0; i < p.Lout; i++) d[i] += v; }
            else { float *d = (float *)AT(out, (n * p.Cout + o) * p.Lout), v = ((const float *)b)[o]; for (int64_t i = 0; i < p.Lout; i++) d[i] += v; }
        }
}

mt_status mt__impl_convolution(mt_tensor *x, mt_tensor *w, mt_tensor *b, const mt_conv_args *a, mt_tensor **out) {
    MT_TRY(conv_check(x, w, b, a));
    int empty = mt_tensor_numel(x) == 0;
    if (!empty) MT_TRY(conv_kernel_check(x, w, a));
    int64_t osz[3], shape[5];
    MT_TRY(conv_out_sizes(x, w, a, osz));
    if (!empty) MT_TRY(conv_dtype_check(x, w, b, a));
    int cdt = mt__compute_dtype(x->dtype);
    plan p;
    MT_TRY(make_plan(x, w, a, osz, cdt, &p));
    shape[0] = p.N, shape[1] = p.Cout;
    memcpy(shape + 2, osz, a->nd * sizeof *osz);
    mt_tensor *r, *xc = NULL, *wc = NULL, *bc = NULL;
    MT_TRY(mt__alloc(2 + a->nd, shape, NULL, cdt, x->device, &r));
    if (x->device == MT_META || mt_tensor_numel(r) == 0) return mt__from_compute(r, x->dtype, out);
    mt_status st = mt__as_contig(x, cdt, &xc);
    if (!st) st = mt__as_contig(w, cdt, &wc);
    if (!st && b) st = mt__as_contig(b, cdt, &bc);
    int dir = direct(&p.g);
    int64_t rows = (a->transposed ? p.Cout : p.Cin) * p.K, cols = a->transposed ? p.Lin : p.Lout, wp[2];
    void *buf = NULL;
    if (!st && winograd(&p, a, a->transposed, p.Cin, p.Cout, osz[0], osz[1], wp)) {
        st = mt__conv3x3_winograd(F32(xc), F32(wc), bc ? F32(bc) : NULL, F32(r), p.N, p.Cin, x->sizes[2], x->sizes[3],
                                  p.Cout, osz[0], osz[1], wp[0], wp[1], a->transposed);
    } else if (!st && !dir && !(buf = malloc((size_t)(rows * cols * p.es + 1))))
        st = mt__error(MT_ERR_OOM, "out of memory in convolution");
    else if (!st) {
        char *X = mt__data(xc), *W = mt__data(wc), *O = mt__data(r);
        int64_t Cig = p.Cin / p.G, Cog = p.Cout / p.G;
        for (int64_t n = 0; n < p.N; n++) {
            char *xn = AT(X, n * p.Cin * p.Lin), *on = AT(O, n * p.Cout * p.Lout);
            if (!a->transposed) { /* out_g[Cog, L] = W_g[Cog, Cig*K] @ cols_g[Cig*K, L] */
                const char *cl = xn;
                if (!dir) run_cols(xn, buf, &p.g, p.f64, 1), cl = buf;
                for (int64_t g = 0; g < p.G; g++)
                    gemm(p.f64, 0, 0, Cog, p.Lout, Cig * p.K, AT(W, g * Cog * Cig * p.K), Cig * p.K,
                         AT(cl, g * Cig * p.K * p.Lout), p.Lout, 0, AT(on, g * Cog * p.Lout), p.Lout);
            } else { /* cols_g[Cog*K, Lin] = W_g^T @ x_g[Cig, Lin]; out = col2im(cols) */
                char *cl = dir ? on : buf;
                for (int64_t g = 0; g < p.G; g++)
                    gemm(p.f64, 1, 0, Cog * p.K, p.Lin, Cig, AT(W, g * Cig * Cog * p.K), Cog * p.K,
                         AT(xn, g * Cig * p.Lin), p.Lin, 0, AT(cl, g * Cog * p.K * p.Lin), p.Lin);
                if (!dir) {
                    memset(on, 0, p.Cout * p.Lout * p.es);
                    run_cols(buf, on, &p.g, p.f64, 0);
                }
            }
        }
        if (bc) add_bias(&p, O, mt__data(bc));
    }
    free(buf);
    mt_tensor_release(xc);
    mt_tensor_release(wc);
    mt_tensor_release(bc);
    if (st) { mt_tensor_release(r); return st; }
    return mt__from_compute(r, x->dtype, out);
}

mt_status mt__impl_convolution_backward(mt_tensor *go, mt_tensor *x, mt_tensor *w, const mt_conv_args *a, int mask,
                                        mt_tensor **gx, mt_tensor **gw, mt_tensor **gb) {
    int64_t osz[3];
    MT_TRY(conv_out_sizes(x, w, a, osz));
    int cdt = mt__compute_dtype(x->dtype);
    plan p;
    MT_TRY(make_plan(x, w, a, osz, cdt, &p));
    mt_tensor *rx = NULL, *rw = NULL, *rb = NULL, *xc = NULL, *wc = NULL, *gc = NULL;
    mt_status st = MT_OK;
    /* the input gradient correlates the output gradient with the kernel (rotated for a convolution,
     * as it is for a transposed one): Winograd where that applies, which writes all of it */
    int64_t wp[2], wpw[2];
    int wgx = (mask & 1) && x->device != MT_META &&
              winograd(&p, a, !a->transposed, p.Cout, p.Cin, x->sizes[2], x->sizes[3], wp);
    /* and the weight gradient correlates the input with the output gradient */
    int wgw = (mask & 2) && x->device != MT_META && winograd(&p, a, a->transposed, p.Cin, p.Cout, osz[0], osz[1], wpw);
    if (mask & 1) st = mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &rx);
    if (!st && (mask & 2)) st = mt__alloc(w->ndim, w->sizes, NULL, cdt, x->device, &rw);
    if (!st && (mask & 4)) st = mt__alloc(1, &p.Cout, NULL, cdt, x->device, &rb);
    if (!st && x->device != MT_META) {
        if (rx && !wgx) memset(mt__data(rx), 0, mt_tensor_numel(rx) * p.es);
        if (rw && !wgw) memset(mt__data(rw), 0, mt_tensor_numel(rw) * p.es);
        st = mt__as_contig(go, cdt, &gc);
        if (!st) st = mt__as_contig(x, cdt, &xc);
        if (!st) st = mt__as_contig(w, cdt, &wc);
    }
    int dir = direct(&p.g);
    int64_t rows = (a->transposed ? p.Cout : p.Cin) * p.K, cols = a->transposed ? p.Lin : p.Lout;
    void *buf = NULL;
    if (!st && x->device != MT_META && !dir && ((rx && !wgx) || (rw && !wgw)) && !(buf = malloc((size_t)(rows * cols * p.es + 1))))
        st = mt__error(MT_ERR_OOM, "out of memory in convolution backward");
    if (!st && wgx)
        st = mt__conv3x3_winograd(F32(gc), F32(wc), NULL, F32(rx), p.N, p.Cout, osz[0], osz[1], p.Cin, x->sizes[2],
                                  x->sizes[3], wp[0], wp[1], !a->transposed);
    if (!st && wgw)
        st = mt__conv3x3_winograd_wgrad(F32(xc), F32(gc), F32(rw), p.N, p.Cin, x->sizes[2], x->sizes[3], p.Cout, osz[0],
                                        osz[1], wpw[0], wpw[1], a->transposed);
    if (!st && x->device != MT_META) {
        char *X = mt__data(xc), *W = mt__data(wc), *GO = mt__data(gc);
        int64_t Cig = p.Cin / p.G, Cog = p.Cout / p.G, CK = Cig * p.K, OK_ = Cog * p.K;
        for (int64_t n = 0; n < p.N; n++) {
            char *xn = AT(X, n * p.Cin * p.Lin), *gn = AT(GO, n * p.Cout * p.Lout);
            double beta = n ? 1.0 : 0.0;
            if (!a->transposed) {
                if (rx && !wgx) { /* cols_g[Cig*K, L] = W_g^T @ go_g; gx = col2im(cols) */
                    char *gxn = AT(mt__data(rx), n * p.Cin * p.Lin), *cl = dir ? gxn : buf;
                    for (int64_t g = 0; g < p.G; g++)
                        gemm(p.f64, 1, 0, CK, p.Lout, Cog, AT(W, g * Cog * CK), CK, AT(gn, g * Cog * p.Lout), p.Lout, 0,
                             AT(cl, g * CK * p.Lout), p.Lout);
                    if (!dir) run_cols(buf, gxn, &p.g, p.f64, 0);
                }
                if (rw && !wgw) { /* gw_g[Cog, Cig*K] += go_g[Cog, L] @ cols_g^T */
                    const char *cl = xn;
                    if (!dir) run_cols(xn, buf, &p.g, p.f64, 1), cl = buf;
                    for (int64_t g = 0; g < p.G; g++)
                        gemm(p.f64, 0, 1, Cog, CK, p.Lout, AT(gn, g * Cog * p.Lout), p.Lout, AT(cl, g * CK * p.Lout),
                             p.Lout, beta, AT(mt__data(rw), g * Cog * CK), CK);
                }
            } else {
                const char *cl = gn; /* cols of the output gradient [Cout*K, Lin] */
                if (!dir && buf) run_cols(gn, buf, &p.g, p.f64, 1), cl = buf;
                if (rx && !wgx) /* gx_g[Cig, Lin] = W_g[Cig, Cog*K] @ cols_g */
                    for (int64_t g = 0; g < p.G; g++)
                        gemm(p.f64, 0, 0, Cig, p.Lin, OK_, AT(W, g * Cig * OK_), OK_, AT(cl, g * OK_ * p.Lin), p.Lin, 0,
                             AT(mt__data(rx), n * p.Cin * p.Lin + g * Cig * p.Lin), p.Lin);
                if (rw && !wgw) /* gw_g[Cig, Cog*K] += x_g[Cig, Lin] @ cols_g^T */
                    for (int64_t g = 0; g < p.G; g++)
                        gemm(p.f64, 0, 1, Cig, OK_, p.Lin, AT(xn, g * Cig * p.Lin), p.Lin, AT(cl, g * OK_ * p.Lin), p.Lin,
                             beta, AT(mt__data(rw), g * Cig * OK_), OK_);
            }
        }
        if (rb)
            for (int64_t o = 0; o < p.Cout; o++) {
                double s = 0;
                for (int64_t n = 0; n < p.N; n++) {
                    char *gp = AT(GO, (n * p.Cout + o) * p.Lout);
                    if (p.f64) for (int64_t i = 0; i < p.Lout; i++) s += ((double *)gp)[i];
                    else for (int64_t i = 0; i < p.Lout; i++) s += ((float *)gp)[i];
                }
                if (p.f64) ((double *)mt__data(rb))[o] = s;
                else ((float *)mt__data(rb))[o] = (float)s;
            }
    }
    free(buf);
    mt_tensor_release(xc);
    mt_tensor_release(wc);
    mt_tensor_release(gc);
    if (!st && rx) st = mt__from_compute(rx, x->dtype, gx), rx = NULL;
    if (!st && rw) st = mt__from_compute(rw, x->dtype, gw), rw = NULL;
    if (!st && rb) st = mt__from_compute(rb, x->dtype, gb), rb = NULL;
    mt_tensor_release(rx);
    mt_tensor_release(rw);
    mt_tensor_release(rb);
    return st;
}

/* ---- im2col / col2im (F.unfold / F.fold): [N, C, H, W] <-> [N, C*kh*kw, L] -------------- */

static mt_status col_args_check(const char *what, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s) {
    if (k[0] <= 0 || k[1] <= 0)
        return mt__error(MT_ERR_RUNTIME, "kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld",
                         (long long)k[0], (long long)k[1]);
    if (s[0] <= 0 || s[1] <= 0)
        return mt__error(MT_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld stride_width: %lld",
                         (long long)s[0], (long long)s[1]);
    if (d[0] <= 0 || d[1] <= 0)
        return mt__error(MT_ERR_RUNTIME, "dilation should be greater than zero, but got dilation_height: %lld dilation_width: %lld",
                         (long long)d[0], (long long)d[1]);
    if (p[0] < 0 || p[1] < 0)
        return mt__error(MT_ERR_RUNTIME, "padding should be non-negative, but got pad_height: %lld pad_width: %lld",
                         (long long)p[0], (long long)p[1]);
    (void)what;
    return MT_OK;
}

/* im2col/col2im's sliding blocks along one dim. A padded extent past int64 is refused: the kernels' index
 * sums could not hold it (ATen's size arithmetic overflows there, and its results vary from build to build). */
static mt_status col_blocks(int64_t in, int64_t p, int64_t k, int64_t d, int64_t s, int64_t *out) {
    if ((__int128)in + 2 * (__int128)p > INT64_MAX || mt__window_out(in, (__int128)2 * p, k, d, s, 0, out))
        return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    return MT_OK;
}

static geom col_geom(int64_t C, int64_t H, int64_t W, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s,
                     int64_t oh, int64_t ow) {
    geom g = {C, {1, H, W}, {1, k[0], k[1]}, {1, s[0], s[1]}, {0, p[0], p[1]}, {1, d[0], d[1]}, {1, oh, ow}};
    return g;
}

mt_status mt__impl_im2col(mt_tensor *x, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s,
                          mt_tensor **out) {
    MT_TRY(col_args_check("im2col", k, d, p, s));
    char s1[256];
    int batched = x->ndim == 4;
    for (int64_t dd = 1; dd <= 2; dd++) { int64_t d2 = dd; MT_TRY(mt__wrap_dim(&d2, x->ndim)); } /* input.size(1), size(2) */
    if (!((x->ndim == 3 && x->sizes[0] != 0 && x->sizes[1] != 0 && x->sizes[2] != 0) ||
          (batched && x->sizes[1] != 0 && x->sizes[2] != 0 && x->sizes[3] != 0)))
        return mt__error(MT_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                         "non-zero dimensions for input, but got: %s", MT_SZ(s1, x));
    int64_t N = batched ? x->sizes[0] : 1, C = x->sizes[batched], H = x->sizes[batched + 1], W = x->sizes[batched + 2];
    int64_t oh = 0, ow = 0;
    MT_TRY(col_blocks(H, p[0], k[0], d[0], s[0], &oh));
    MT_TRY(col_blocks(W, p[1], k[1], d[1], s[1], &ow));
    if (oh < 1 || ow < 1)
        return mt__error(MT_ERR_RUNTIME, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), "
                         "dilation=(%lld, %lld), padding=(%lld, %lld), calculated shape of the array of sliding blocks "
                         "as (%lld, %lld), but its components must be at least one.", (long long)H, (long long)W,
                         (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1], (long long)p[0],
                         (long long)p[1], (long long)oh, (long long)ow);
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"im2col_out_cpu\" not implemented for '%s'", MT_DTNAME(x));
    int cdt = mt__compute_dtype(x->dtype), es = cdt == MT_F64 ? 8 : 4;
    int64_t sz[3] = {N, 0, 0};
    if (__builtin_mul_overflow(C, k[0], &sz[1]) || __builtin_mul_overflow(sz[1], k[1], &sz[1]) ||
        __builtin_mul_overflow(oh, ow, &sz[2]))
        return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    mt_tensor *r, *xc;
    MT_TRY(mt__alloc(batched ? 3 : 2, batched ? sz : sz + 1, NULL, cdt, x->device, &r));
    if (x->device == MT_META || N == 0) return mt__from_compute(r, x->dtype, out);
    mt_status st = mt__as_contig(x, cdt, &xc);
    if (st) { mt_tensor_release(r); return st; }
    geom g = col_geom(C, H, W, k, d, p, s, oh, ow);
    for (int64_t n = 0; n < N; n++)
        run_cols(mt__data(xc) + n * C * H * W * es, mt__data(r) + n * sz[1] * sz[2] * es, &g, cdt == MT_F64, 1);
    mt_tensor_release(xc);
    return mt__from_compute(r, x->dtype, out);
}

mt_status mt__impl_col2im(mt_tensor *x, const int64_t *osz, const int64_t *k, const int64_t *d, const int64_t *p,
                          const int64_t *s, mt_tensor **out) {
    char s1[256];
    MT_TRY(col_args_check("col2im", k, d, p, s));
    int batched = x->ndim == 3;
    for (int64_t dd = 0; dd <= 1; dd++) { int64_t d2 = dd; MT_TRY(mt__wrap_dim(&d2, x->ndim)); }
    if (!((x->ndim == 2 && x->sizes[0] != 0 && x->sizes[1] != 0) || (batched && x->sizes[1] != 0 && x->sizes[2] != 0)))
        return mt__error(MT_ERR_RUNTIME, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size "
                         "and non-zero dimensions for input, but got: %s", MT_SZ(s1, x));
    int64_t N = batched ? x->sizes[0] : 1, CK = x->sizes[batched], L = x->sizes[batched + 1], kk;
    uint64_t kk_u; /* PyTorch's guard is on the unsigned product; past int64 its remainder fails */
    if (__builtin_mul_overflow((uint64_t)k[1], (uint64_t)k[0], &kk_u))
        return mt__error(MT_ERR_RUNTIME, "Given kernel_width = %lld and kernel_height = %lld the product of "
                         "kernel_width and kernel_height overflowed.", (long long)k[1], (long long)k[0]);
    if (__builtin_mul_overflow(k[0], k[1], &kk) || CK % kk)
        return mt__error(MT_ERR_RUNTIME, "Expected size of input's dimension 1 to be divisible by the product of "
                         "kernel_size, but got input.size(1)=%lld and kernel_size=(%lld, %lld).", (long long)CK,
                         (long long)k[0], (long long)k[1]);
    int64_t oh = 0, ow = 0;
    MT_TRY(col_blocks(osz[0], p[0], k[0], d[0], s[0], &oh));
    MT_TRY(col_blocks(osz[1], p[1], k[1], d[1], s[1], &ow));
    int64_t blocks;
    if (__builtin_mul_overflow(oh, ow, &blocks)) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    if (blocks != L)
        return mt__error(MT_ERR_RUNTIME, "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, "
                         "%lld), padding=(%lld, %lld), stride=(%lld, %lld), expected size of input's dimension 2 to match "
                         "the calculated number of sliding blocks %lld * %lld = %lld, but got input.size(2)=%lld.",
                         (long long)osz[0], (long long)osz[1], (long long)k[0], (long long)k[1], (long long)d[0],
                         (long long)d[1], (long long)p[0], (long long)p[1], (long long)s[0], (long long)s[1],
                         (long long)oh, (long long)ow, (long long)blocks, (long long)L);
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"col2im_out_cpu\" not implemented for '%s'", MT_DTNAME(x));
    int cdt = mt__compute_dtype(x->dtype), es = cdt == MT_F64 ? 8 : 4;
    int64_t C = CK / kk, sz[4] = {N, C, osz[0], osz[1]};
    mt_tensor *r, *xc;
    MT_TRY(mt__alloc(batched ? 4 : 3, batched ? sz : sz + 1, NULL, cdt, x->device, &r));
    if (x->device == MT_META || N == 0) return mt__from_compute(r, x->dtype, out);
    memset(mt__data(r), 0, mt_tensor_numel(r) * es);
    mt_status st = mt__as_contig(x, cdt, &xc);
    if (st) { mt_tensor_release(r); return st; }
    geom g = col_geom(C, osz[0], osz[1], k, d, p, s, oh, ow);
    for (int64_t n = 0; n < N; n++)
        run_cols(mt__data(xc) + n * CK * L * es, mt__data(r) + n * C * osz[0] * osz[1] * es, &g, cdt == MT_F64, 0);
    mt_tensor_release(xc);
    return mt__from_compute(r, x->dtype, out);
}
