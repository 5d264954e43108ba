/* reduce_stats.c — reductions that look at a whole row of reduced elements:
 * var/std (two passes in double), vector norms, logsumexp, median/nanmedian,
 * mode, quantile; and the row kernels of prod's and cumprod's backward.
 *
 * Each output's reduced elements are gathered (converted) into a contiguous
 * double row (int64 for integer order statistics), one buffer per thread, and
 * a row function turns the row into the output values. The gather is one cast
 * loop per innermost run, so rows of any layout cost one pass; the kept dims
 * are split across threads. Shape/dtype inference and output allocation come
 * first and are all a meta tensor gets. */
#include <math.h>
#include <stdio.h>

#include "loops.h"
#include "reduce.h"
#include "vecmath.h"

/* ---- rows: plan, gather, run ------------------------------------------------ */

typedef struct rows_t rows_t;
/* row o of count elements (double or int64); idx[i] is element i's position along the dim
 * when the plan reduces a single dim (NULL otherwise) */
typedef void (*row_fn)(const rows_t *r, int64_t o, void *row, int64_t *idx);

struct rows_t {
    inner_t in;
    int kn;
    int64_t ksz[MT_MAX_DIMS], kst[MT_MAX_DIMS]; /* kept dims, bytes */
    int64_t count, nout;
    char *base;
    int acc;             /* MT_F64 or MT_I64 */
    int dtype;           /* of the input */
    int want_idx;
    mt_loop_fn load;
    row_fn fn;
    void *ctx;
};

static void plan_rows(rows_t *r, const mt_tensor *x, const int *reduced, int acc) {
    memset(r, 0, sizeof *r);
    mt__reduce_inner(x, reduced, &r->in);
    r->count = 1;
    for (int i = 0; i < r->in.n; i++) r->count *= r->in.size[i];
    int isz = mt_dtype_itemsize(x->dtype);
    for (int d = 0; d < x->ndim; d++)
        if (!reduced[d]) r->ksz[r->kn] = x->sizes[d], r->kst[r->kn++] = mt__wmul(x->strides[d], isz);
    r->nout = mt__numel(r->kn, r->ksz);
    r->base = x->storage->data ? mt__data(x) : NULL;
    r->acc = acc;
    r->dtype = x->dtype;
    r->load = mt__cast_loop(acc, x->dtype);
}

static void gather(const rows_t *r, const char *p, int d, char **dst) {
    const int64_t esz = 8;
    if (r->in.n == 0) { /* nothing reduced: the element itself */
        r->load((char *[]){*dst, (char *)p}, (const int64_t[]){esz, 0}, 1, NULL);
        *dst += esz;
        return;
    }
    int64_t n = r->in.size[d], s = r->in.stride[d];
    if (d == r->in.n - 1) {
        r->load((char *[]){*dst, (char *)p}, (const int64_t[]){esz, s}, n, NULL);
        *dst += n * esz;
        return;
    }
    for (int64_t i = 0; i < n; i++) gather(r, p + i * s, d + 1, dst);
}

static void rows_chunk(void *p, int64_t b, int64_t e) {
    const rows_t *r = p;
    int64_t n = r->count ? r->count : 1;
    char *row = malloc((size_t)n * 8);
    int64_t *idx = r->want_idx ? malloc((size_t)n * 8) : NULL;
    if (!row || (r->want_idx && !idx)) { free(row); free(idx); return; } /* caller pre-checked memory */
    for (int64_t o = b; o < e; o++) {
        int64_t rem = o, off = 0;
        for (int d = r->kn - 1; d >= 0; d--) {
            off += (rem % r->ksz[d]) * r->kst[d];
            rem /= r->ksz[d];
        }
        char *dst = row;
        if (r->count) gather(r, r->base + off, 0, &dst);
        if (idx) for (int64_t i = 0; i < r->count; i++) idx[i] = i;
        r->fn(r, o, row, idx);
    }
    free(row);
    free(idx);
}

static mt_status run_rows(rows_t *r, row_fn fn, void *ctx) {
    if (!r->base || r->nout == 0) return MT_OK; /* meta or empty: shapes only */
    r->fn = fn, r->ctx = ctx;
    void *probe = malloc((size_t)(r->count ? r->count : 1) * 16);
    if (!probe) return mt__error(MT_ERR_OOM, "out of memory");
    free(probe);
    int64_t grain = r->count > 0 ? (MT_GRAIN_SIZE + r->count - 1) / r->count : r->nout;
    mt__parallel_for(r->nout, grain, rows_chunk, r);
    return MT_OK;
}

/* output sizes of a reduction: reduced dims dropped, or kept as 1 */
static int out_sizes(const mt_tensor *x, const int *reduced, int keepdim, int64_t *osz) {
    int n = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!reduced[d]) osz[n++] = x->sizes[d];
        else if (keepdim) osz[n++] = 1;
    }
    return n;
}

static void store_f(mt_tensor *t, int64_t i, double v) {
    static const int64_t z[2] = {0, 0};
    mt__cast_loop(t->dtype, MT_F64)((char *[]){mt__data(t) + i * mt_dtype_itemsize(t->dtype), (char *)&v}, z, 1, NULL);
}
static void store_i(mt_tensor *t, int64_t i, int64_t v) {
    static const int64_t z[2] = {0, 0};
    mt__cast_loop(t->dtype, MT_I64)((char *[]){mt__data(t) + i * mt_dtype_itemsize(t->dtype), (char *)&v}, z, 1, NULL);
}

static mt_status alloc2(int n, const int64_t *sz, int dt1, int dt2, int device, mt_tensor **a, mt_tensor **b) {
    MT_TRY(mt__alloc(n, sz, NULL, dt1, device, a));
    if (!b) return MT_OK;
    mt_status st = mt__alloc(n, sz, NULL, dt2, device, b);
    if (st) { MT_DROP(*a); }
    return st;
}

/* ---- streaming reductions: var/std, norms, logsumexp ------------------------------------
 * A row that is one strided run (the common case, and every contiguous full reduction) is
 * cut into blocks of SBLK elements: each block folds into a partial state (in double), the
 * partial states of a row combine in order. Blocks of all rows are split across threads, so
 * a full reduction of a big tensor is parallel too and needs no row-sized buffer. Rows that
 * are not one run are gathered whole and folded as one block. */

#define SBLK 4096
#define NSTREAM_F 4 /* float32 blocks folded together (stream_chunk) */
typedef struct { double a, b, c; } part_t;
typedef struct {
    void (*fold)(const void *ctx, const double *v, int64_t n, part_t *s); /* s <- the state of v[0, n) */
    void (*comb)(const void *ctx, part_t *s, const part_t *t);            /* s <- s then t */
    void (*fin)(const void *ctx, int64_t o, const part_t *s);            /* store output o */
    const void *ctx;
    /* optional: the folds of k <= NSTREAM_F contiguous float32 runs read in place (no double
     * buffer), s[j] <- the state of v[j][0, n[j]) */
    void (*fold_f32)(const void *ctx, int k, const float *const *v, const int64_t *n, part_t *const *s);
    /* optional: the fold of a contiguous float16 (dtype MT_F16) or bfloat16 run read in place */
    void (*fold16)(const void *ctx, int dtype, const uint16_t *v, int64_t n, part_t *s);
} stream_ops;

/* Columns: a reduced dim of stride > the element (x.var(0) of a matrix) whose adjacent outputs are
 * adjacent elements. Folding one output at a time read each strided element's cache line once per
 * output, and a power-of-two stride maps them all to a few cache sets: 4096x4096 norm(dim=0) took 57 ms
 * (PyTorch's too). The column path gathers COLS_W outputs' blocks of COLS_BLK elements together, a row
 * of COLS_W adjacent elements at a time, into a tile whose columns are then folded; its units are
 * block-major (unit k * nout + o), so that adjacent units are adjacent outputs. */
#define COLS_W 64
#define COLS_BLK 1024
#define COLS_LD (COLS_BLK + 8) /* tile columns apart by a stride that is no power of two */
typedef struct { const rows_t *r; const stream_ops *ops; int64_t nblk; int cols; part_t *parts; } stream_task;

static int is_cols(const rows_t *r) {
    int64_t isz = mt_dtype_itemsize(r->dtype);
    return r->in.n == 1 && r->in.stride[0] != isz && r->kn > 0 && r->kst[r->kn - 1] == isz && r->ksz[r->kn - 1] > 1;
}
static part_t *part_of(const stream_task *t, int64_t o, int64_t k) {
    return &t->parts[t->cols ? k * t->r->nout + o : o * t->nblk + k];
}

static int64_t row_offset(const rows_t *r, int64_t o) {
    int64_t rem = o, off = 0;
    for (int d = r->kn - 1; d >= 0; d--) {
        off += (rem % r->ksz[d]) * r->kst[d];
        rem /= r->ksz[d];
    }
    return off;
}

/* the block of unit u as a contiguous float32 run */
static const float *f32_block(const stream_task *t, int64_t u, int64_t *n) {
    const rows_t *r = t->r;
    int64_t o = u / t->nblk, lo = u % t->nblk * SBLK;
    *n = r->count - lo < SBLK ? r->count - lo : SBLK;
    return (const float *)(r->base + row_offset(r, o)) + lo;
}

static void cols_chunk(const stream_task *t, int64_t b, int64_t e) {
    const rows_t *r = t->r;
    double *tile = malloc((size_t)COLS_W * COLS_LD * sizeof(double));
    if (!tile) return; /* run_stream probed the memory */
    int64_t st = r->in.stride[0], isz = mt_dtype_itemsize(r->dtype), inner = r->ksz[r->kn - 1];
    for (int64_t u = b; u < e;) {
        int64_t k = u / r->nout, o = u % r->nout, lo = k * COLS_BLK;
        int64_t n = r->count - lo < COLS_BLK ? r->count - lo : COLS_BLK, w = COLS_W;
        if (w > e - u) w = e - u;
        if (w > inner - o % inner) w = inner - o % inner; /* outputs adjacent in memory */
        const char *src = r->base + row_offset(r, o) + lo * st;
        for (int64_t i = 0; i < n; i++)
            r->load((char *[]){(char *)(tile + i), (char *)src + i * st}, (const int64_t[]){COLS_LD * 8, isz}, w, NULL);
        for (int64_t j = 0; j < w; j++) t->ops->fold(t->ops->ctx, tile + j * COLS_LD, n > 0 ? n : 0, &t->parts[u + j]);
        u += w;
    }
    free(tile);
}

static void stream_chunk(void *p, int64_t b, int64_t e) {
    const stream_task *t = p;
    const rows_t *r = t->r;
    int run = r->in.n <= 1;
    if (t->cols) {
        cols_chunk(t, b, e);
    } else if (run && t->ops->fold_f32 && r->dtype == MT_F32 && (r->in.n ? r->in.stride[0] : 0) == 4) {
        /* [b, e) in NSTREAM_F parts far apart, a block of each folded together */
        int64_t m = e - b, o[NSTREAM_F], end[NSTREAM_F];
        int k = m < NSTREAM_F ? (int)m : NSTREAM_F;
        for (int j = 0; j < k; j++) {
            o[j] = b + m / k * j + (j < m % k ? j : m % k);
            end[j] = o[j] + m / k + (j < m % k);
        }
        for (;;) {
            const float *v[NSTREAM_F];
            int64_t n[NSTREAM_F];
            part_t *s[NSTREAM_F];
            int c = 0;
            for (int j = 0; j < k; j++)
                if (o[j] < end[j]) {
                    v[c] = f32_block(t, o[j], &n[c]);
                    s[c++] = &t->parts[o[j]++];
                }
            if (!c) break;
            t->ops->fold_f32(t->ops->ctx, c, v, n, s);
        }
    } else if (run && t->ops->fold16 && (r->dtype == MT_F16 || r->dtype == MT_BF16) &&
               (r->in.n ? r->in.stride[0] : 0) == 2) {
        for (int64_t u = b; u < e; u++) {
            int64_t lo = u % t->nblk * SBLK, n = r->count - lo < SBLK ? r->count - lo : SBLK;
            const uint16_t *v = (const uint16_t *)(r->base + row_offset(r, u / t->nblk)) + lo;
            t->ops->fold16(t->ops->ctx, r->dtype, v, n > 0 ? n : 0, &t->parts[u]);
        }
    } else {
        double *buf = malloc((size_t)(run ? SBLK : (r->count ? r->count : 1)) * sizeof(double));
        if (!buf) return; /* run_stream probed the memory */
        for (int64_t u = b; u < e; u++) {
            int64_t o = u / t->nblk, k = u % t->nblk, n;
            const char *base = r->base + row_offset(r, o);
            if (run) {
                int64_t lo = k * SBLK, st = r->in.n ? r->in.stride[0] : 0;
                n = r->count - lo < SBLK ? r->count - lo : SBLK;
                if (n > 0) r->load((char *[]){(char *)buf, (char *)base + lo * st}, (const int64_t[]){8, st}, n, NULL);
            } else {
                char *dst = (char *)buf;
                if (r->count) gather(r, base, 0, &dst);
                n = r->count;
            }
            t->ops->fold(t->ops->ctx, buf, n > 0 ? n : 0, &t->parts[u]);
        }
        free(buf);
    }
    /* rows of one block are done: stored here, on the threads, once the folds are over (a store per
     * row between the folds made 4096 rows of 4096 float32 1.5x slower on AMD Zen 4) */
    if (t->nblk == 1)
        for (int64_t u = b; u < e; u++) t->ops->fin(t->ops->ctx, u, &t->parts[u]);
}

static void stream_finish(void *p, int64_t b, int64_t e) {
    const stream_task *t = p;
    for (int64_t o = b; o < e; o++) {
        part_t s = *part_of(t, o, 0);
        for (int64_t k = 1; k < t->nblk; k++) t->ops->comb(t->ops->ctx, &s, part_of(t, o, k));
        t->ops->fin(t->ops->ctx, o, &s);
    }
}

static mt_status run_stream(const rows_t *r, const stream_ops *ops) {
    if (!r->base || r->nout == 0) return MT_OK; /* meta or empty: shapes only */
    int cols = is_cols(r);
    int64_t blk = cols ? COLS_BLK : SBLK, nblk = r->in.n <= 1 && r->count > blk ? (r->count + blk - 1) / blk : 1;
    part_t *parts = malloc((size_t)(r->nout * nblk) * sizeof(part_t));
    void *probe = malloc((cols ? (size_t)COLS_W * COLS_LD : (size_t)(r->in.n <= 1 ? SBLK : (r->count ? r->count : 1))) *
                         sizeof(double));
    if (!parts || !probe) { free(parts); free(probe); return mt__error(MT_ERR_OOM, "out of memory"); }
    free(probe);
    stream_task t = {r, ops, nblk, cols, parts};
    int64_t per = r->count < blk ? (r->count ? r->count : 1) : blk;
    mt__parallel_for(r->nout * nblk, (MT_GRAIN_SIZE + per - 1) / per, stream_chunk, &t);
    if (nblk > 1) /* rows of one block were stored by stream_chunk, on the threads */
        mt__parallel_for(r->nout, 64, stream_finish, &t);
    free(parts);
    return MT_OK;
}

/* ---- var / std: per block (n, mean, M2) by two passes, blocks combined by Chan's formula ---- */

typedef struct { double correction; int take_sqrt; mt_tensor *var, *mean; } var_ctx;

/* both passes in 16 lanes added as a tree (one running sum was an add-latency chain: a full var of
 * 1M float32 took 2x PyTorch's time) */
#define VL 16
#define VL_TOTAL(a) (VL_STEP(a, 8) VL_STEP(a, 4) VL_STEP(a, 2) VL_STEP(a, 1) a[0])
#define VL_STEP(a, W) ({ for (int l = 0; l < W; l++) a[l] += a[l + W]; }),
MT_SIMD static void var_fold(const void *ctx, const double *v, int64_t n, part_t *s) {
    (void)ctx;
    double a[VL] = {0}, b[VL] = {0};
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        for (int l = 0; l < VL; l++) a[l] += v[i + l];
    double sum = VL_TOTAL(a);
    for (; i < n; i++) sum += v[i];
    double mean = n ? sum / (double)n : 0, m2;
    for (i = 0; i + VL <= n; i += VL)
        for (int l = 0; l < VL; l++) b[l] += (v[i + l] - mean) * (v[i + l] - mean);
    m2 = VL_TOTAL(b);
    for (; i < n; i++) m2 += (v[i] - mean) * (v[i] - mean);
    *s = (part_t){(double)n, mean, m2};
}
static void var_comb(const void *ctx, part_t *s, const part_t *t) {
    (void)ctx;
    if (t->a == 0) return;
    if (s->a == 0) { *s = *t; return; }
    double n = s->a + t->a, d = t->b - s->b;
    s->c += t->c + d * d * s->a * t->a / n;
    s->b += d * t->a / n;
    s->a = n;
}
static void var_fin(const void *ctx, int64_t o, const part_t *s) {
    const var_ctx *c = ctx;
    double n = s->a, div = n > c->correction ? n - c->correction : 0;
    double var = n ? s->c / div : NAN; /* NaN for an empty row, as PyTorch */
    store_f(c->var, o, c->take_sqrt ? sqrt(var) : var);
    if (c->mean) store_f(c->mean, o, n ? s->b : NAN);
}

mt_status mt__impl_var(mt_tensor *x, int ndims, const int64_t *dims, double correction, int keepdim, int take_sqrt,
                       mt_tensor **result, mt_tensor **mean) {
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_RUNTIME, "%s only support floating point and complex dtypes",
                         mean ? (take_sqrt ? "std_mean" : "var_mean") : "std and var");
    int reduced[MT_MAX_DIMS];
    MT_TRY(mt__reduce_dims(x, ndims, dims, reduced));
    int64_t osz[MT_MAX_DIMS];
    int ond = out_sizes(x, reduced, keepdim, osz);
    MT_TRY(alloc2(ond, osz, x->dtype, x->dtype, x->device, result, mean));
    rows_t r;
    plan_rows(&r, x, reduced, MT_F64);
    var_ctx c = {correction, take_sqrt, *result, mean ? *mean : NULL};
    stream_ops ops = {var_fold, var_comb, var_fin, &c};
    mt_status st = run_stream(&r, &ops);
    if (st) { MT_DROP(*result); if (mean) MT_DROP(*mean); }
    return st;
}

/* ---- vector norm --------------------------------------------------------------- */

typedef struct { double p; mt_tensor *out; } norm_ctx;

/* Sums over a block in LANES independent partial sums (vectorised, and off the add-latency
 * chain), added pairwise at the end. */
#define LANES 16
static inline double lanes_total(double *a) {
    for (int w = LANES / 2; w; w /= 2)
        for (int l = 0; l < w; l++) a[l] += a[l + w];
    return a[0];
}
MT_SIMD static double sum_sq(const double *v, int64_t n) {
    double a[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) a[l] += v[i + l] * v[i + l];
    for (; i < n; i++) a[i % LANES] += v[i] * v[i];
    return lanes_total(a);
}
MT_SIMD static double sum_abs(const double *v, int64_t n) {
    double a[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) a[l] += fabs(v[i + l]);
    for (; i < n; i++) a[i % LANES] += fabs(v[i]);
    return lanes_total(a);
}

/* sum of |v|^p: libmvec's vector pow (the scalar loop of glibc's pow took 2x PyTorch's time for
 * vector_norm(x, 3)); the norm is a tolerance's answer, not correctly rounded, in PyTorch too */
MT_SIMD static double sum_pow(const double *v, int64_t n, double p) {
    double a[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) a[l] += mt_lmv_pow(fabs(v[i + l]), p);
    for (; i < n; i++) a[i % LANES] += mt_lmv_pow(fabs(v[i]), p);
    return lanes_total(a);
}

/* max / min of |x| with NaN propagating */
static double ext_abs(double acc, double a, int is_max) {
    if (a != a || acc != acc) return acc != acc ? acc : a;
    return is_max ? (a > acc ? a : acc) : (a < acc ? a : acc);
}
static void norm_fold(const void *ctx, const double *v, int64_t n, part_t *s) {
    double p = ((const norm_ctx *)ctx)->p, acc = 0;
    if (p == 0) {
        for (int64_t i = 0; i < n; i++) acc += v[i] != 0;
    } else if (isinf(p)) {
        acc = p > 0 ? 0 : INFINITY;
        for (int64_t i = 0; i < n; i++) acc = ext_abs(acc, fabs(v[i]), p > 0);
    } else if (p == 1) {
        acc = sum_abs(v, n);
    } else if (p == 2) {
        acc = sum_sq(v, n);
    } else {
        acc = sum_pow(v, n, p);
    }
    s->a = acc;
}
/* float32 rows accumulate in float, as PyTorch's vectorised norm does (its acc type for float),
 * but in 64 lanes (4 vectors aK of 16: independent add chains) rather than one vector of lanes;
 * the lanes and the blocks then add in double. The lanes live in 256-bit vectors (lane l of aK is
 * lane l % 8 of h[2K + l / 8]), and NSTREAM_F blocks far apart advance in turn, FOLD_STEP elements
 * each (as reduce.c's sum_streams): on AMD Zen 4 the fold read 19-24 GB/s with 512-bit loads, 24
 * with 256-bit ones, and 30-33 with 256-bit ones and four blocks in turn (docs/PERFORMANCE.md,
 * session 23). Each lane sees the operations it saw before either change, in the same order. */
#define FOLD_STEP 1024
typedef float vf8 __attribute__((vector_size(32)));
typedef struct { vf8 h[8]; } lanes64;
#define DEF_FOLD_F32(NAME, TERM)                                                              \
    MT_SIMD static void NAME##_run(lanes64 *st, const float *v, int64_t i, int64_t end) {    \
        vf8 h0 = st->h[0], h1 = st->h[1], h2 = st->h[2], h3 = st->h[3];                      \
        vf8 h4 = st->h[4], h5 = st->h[5], h6 = st->h[6], h7 = st->h[7];                      \
        for (; i + 64 <= end; i += 64)                                                       \
            for (int l = 0; l < 8; l++) {                                                    \
                h0[l] += TERM(v[i + l]), h1[l] += TERM(v[i + 8 + l]);                        \
                h2[l] += TERM(v[i + 16 + l]), h3[l] += TERM(v[i + 24 + l]);                  \
                h4[l] += TERM(v[i + 32 + l]), h5[l] += TERM(v[i + 40 + l]);                  \
                h6[l] += TERM(v[i + 48 + l]), h7[l] += TERM(v[i + 56 + l]);                  \
            }                                                                                \
        st->h[0] = h0, st->h[1] = h1, st->h[2] = h2, st->h[3] = h3;                          \
        st->h[4] = h4, st->h[5] = h5, st->h[6] = h6, st->h[7] = h7;                          \
    }                                                                                        \
    static void NAME##_k(int k, const float *const *v, const int64_t *n, double *out) {      \
        lanes64 st[NSTREAM_F];                                                               \
        int64_t full = 0;                                                                    \
        for (int j = 0; j < k; j++) {                                                        \
            for (int c = 0; c < 8; c++) st[j].h[c] = (vf8){0}; /* a memset was rep stos: slow */ \
            if (n[j] / 64 * 64 > full) full = n[j] / 64 * 64;                                \
        }                                                                                    \
        for (int64_t i = 0; i < full; i += FOLD_STEP)                                        \
            for (int j = 0; j < k; j++) {                                                    \
                int64_t e = n[j] / 64 * 64;                                                  \
                if (i < e) NAME##_run(&st[j], v[j], i, i + FOLD_STEP < e ? i + FOLD_STEP : e); \
            }                                                                                \
        for (int j = 0; j < k; j++) {                                                        \
            const vf8 *h = st[j].h; /* lanes 0-7 of (a0 + a1) + (a2 + a3), then lanes 8-15 */ \
            vf8 lo = (h[0] + h[2]) + (h[4] + h[6]), hi = (h[1] + h[3]) + (h[5] + h[7]);      \
            double t = 0;                                                                    \
            for (int l = 0; l < 8; l++) t += (double)lo[l];                                  \
            for (int l = 0; l < 8; l++) t += (double)hi[l];                                  \
            for (int64_t i = n[j] / 64 * 64; i < n[j]; i++) t += (double)TERM(v[j][i]);      \
            out[j] = t;                                                                      \
        }                                                                                    \
    }
#define SQ_TERM(x) ((x) * (x))
DEF_FOLD_F32(sum_sq_f, SQ_TERM)
DEF_FOLD_F32(sum_abs_f, fabsf)
/* p = 1 and 2 read float32 in place; the other orders go through the double row */
static void norm_fold_f32(const void *ctx, int k, const float *const *v, const int64_t *n, part_t *const *s) {
    double r[NSTREAM_F];
    if (((const norm_ctx *)ctx)->p == 2) sum_sq_f_k(k, v, n, r);
    else sum_abs_f_k(k, v, n, r);
    for (int j = 0; j < k; j++) s[j]->a = r[j];
}
/* float16/bfloat16 p = 1 and 2 read in place, widened as they are read: the lanes and order of sum_abs and
 * sum_sq over the double row they were converted into before (the same bits; squares of 16-bit floats are
 * exact in double), without that conversion pass (bfloat16 rows of 2048: 1.8x PyTorch's time) */
#define DEF_SUM16(NAME, LD, TERM)                                                              \
    MT_SIMD static double NAME(const uint16_t *v, int64_t n) {                                 \
        double a[LANES] = {0};                                                                 \
        int64_t i = 0;                                                                         \
        for (; i + LANES <= n; i += LANES)                                                     \
            for (int l = 0; l < LANES; l++) {                                                  \
                double x = LD(v[i + l]);                                                       \
                a[l] += TERM(x);                                                               \
            }                                                                                  \
        for (; i < n; i++) {                                                                   \
            double x = LD(v[i]);                                                               \
            a[i % LANES] += TERM(x);                                                           \
        }                                                                                      \
        return lanes_total(a);                                                                 \
    }
DEF_SUM16(sum_sq_bf16, mt__bf16_to_f32, SQ_TERM)
DEF_SUM16(sum_abs_bf16, mt__bf16_to_f32, fabs)
DEF_SUM16(sum_sq_f16, mt__f16_to_f32, SQ_TERM)
DEF_SUM16(sum_abs_f16, mt__f16_to_f32, fabs)
static void norm_fold16(const void *ctx, int dtype, const uint16_t *v, int64_t n, part_t *s) {
    int sq = ((const norm_ctx *)ctx)->p == 2;
    s->a = dtype == MT_BF16 ? (sq ? sum_sq_bf16(v, n) : sum_abs_bf16(v, n)) : (sq ? sum_sq_f16(v, n) : sum_abs_f16(v, n));
}
static void norm_comb(const void *ctx, part_t *s, const part_t *t) {
    double p = ((const norm_ctx *)ctx)->p;
    s->a = isinf(p) ? ext_abs(s->a, t->a, p > 0) : s->a + t->a;
}
static void norm_fin(const void *ctx, int64_t o, const part_t *s) {
    const norm_ctx *c = ctx;
    double p = c->p, v = s->a;
    store_f(c->out, o, p == 2 ? sqrt(v) : (p == 0 || p == 1 || isinf(p)) ? v : pow(v, 1.0 / p));
}

static void fmt_ord(char *buf, size_t cap, double p) {
    if (isinf(p)) snprintf(buf, cap, "%s", p > 0 ? "inf" : "-inf");
    else snprintf(buf, cap, "%g", p);
}

mt_status mt__impl_vector_norm(mt_tensor *x, double p, int ndims, const int64_t *dims, int keepdim, int dtype,
                               mt_tensor **result) {
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_RUNTIME, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                         mt_dtype_names[x->dtype]);
    if (dtype >= 0 && dtype != x->dtype) {
        if (!mt__is_float(dtype) || mt_promote_types(x->dtype, dtype) != dtype)
            return mt__error(MT_ERR_RUNTIME,
                             "linalg.vector_norm: the dtype of the input (%s) should be convertible without narrowing to "
                             "the specified dtype (%s)", mt_dtype_names[x->dtype], mt_dtype_names[dtype]);
    }
    int reduced[MT_MAX_DIMS];
    MT_TRY(mt__reduce_dims(x, ndims, dims, reduced));
    if (p < 0 || isinf(p)) { /* no identity: empty reductions are errors */
        char ord[32];
        fmt_ord(ord, sizeof ord, p);
        if (ndims <= 0 && mt_tensor_numel(x) == 0)
            return mt__error(MT_ERR_RUNTIME, "linalg.vector_norm cannot compute the %s norm on an empty tensor because "
                             "the operation does not have an identity", ord);
        for (int k = 0; k < ndims && x->ndim; k++) {
            int64_t d = dims[k] < 0 ? dims[k] + x->ndim : dims[k];
            if (x->sizes[d] == 0)
                return mt__error(MT_ERR_RUNTIME, "linalg.vector_norm cannot compute the %s norm on the dimension %lld"
                                 "because this dimension is empty and the operation does not have an identity",
                                 ord, (long long)dims[k]);
        }
    }
    int64_t osz[MT_MAX_DIMS];
    int ond = out_sizes(x, reduced, keepdim, osz);
    MT_TRY(mt__alloc(ond, osz, NULL, dtype >= 0 ? dtype : x->dtype, x->device, result));
    rows_t r;
    plan_rows(&r, x, reduced, MT_F64);
    norm_ctx c = {p, *result};
    int f32 = (dtype < 0 ? x->dtype : dtype) == MT_F32; /* dtype=float64 computes in double */
    stream_ops ops = {norm_fold, norm_comb, norm_fin, &c, f32 && (p == 1 || p == 2) ? norm_fold_f32 : NULL,
                      p == 1 || p == 2 ? norm_fold16 : NULL};
    mt_status st = run_stream(&r, &ops);
    if (st) MT_DROP(*result);
    return st;
}

/* ---- logsumexp ------------------------------------------------------------------ */

/* state (max m, sum of exp(x - shift(m))); shift(m) = m, or 0 where m is infinite (PyTorch's mask) */
static double lse_shift(double m) { return isinf(m) ? 0 : m; }
typedef struct { mt_tensor *out; int f32; } lse_ctx;
/* sum of exp(v - sh) for float32/16-bit inputs: exp in float32 (vecmath, as PyTorch computes it),
 * summed in double lanes */
MT_SIMD static double sum_exp_f(const double *v, int64_t n, double sh) {
    double a[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) a[l] += mt_v_expf((float)(v[i + l] - sh));
    for (; i < n; i++) a[i % LANES] += mt_v_expf((float)(v[i] - sh));
    return lanes_total(a);
}
static void lse_fold(const void *ctx, const double *v, int64_t n, part_t *s) {
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] != v[i] || m != m) m = m != m ? m : v[i];
        else if (v[i] > m) m = v[i];
    }
    double sh = lse_shift(m);
    if (((const lse_ctx *)ctx)->f32) sum = sum_exp_f(v, n, sh);
    else for (int64_t i = 0; i < n; i++) sum += exp(v[i] - sh);
    s->a = m, s->b = sum;
}
/* max with NaN propagating, and the sum of exp(v - shift), from float32 in place */
MT_SIMD static void lse_fold_f32(const void *ctx, const float *v, int64_t n, part_t *s) {
    (void)ctx;
    float m[LANES];
    int nan = 0;
    for (int l = 0; l < LANES; l++) m[l] = -INFINITY;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            nan |= v[i + l] != v[i + l];
            m[l] = v[i + l] > m[l] ? v[i + l] : m[l];
        }
    for (; i < n; i++) {
        nan |= v[i] != v[i];
        m[0] = v[i] > m[0] ? v[i] : m[0];
    }
    for (int l = 1; l < LANES; l++) m[0] = m[l] > m[0] ? m[l] : m[0];
    if (nan) { s->a = NAN, s->b = NAN; return; }
    double sh = lse_shift(m[0]), a[LANES] = {0};
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) a[l] += mt_v_expf((float)((double)v[i + l] - sh));
    for (; i < n; i++) a[i % LANES] += mt_v_expf((float)((double)v[i] - sh));
    s->a = m[0], s->b = lanes_total(a);
}
/* each block alone: it reads its block twice, from cache the second time */
static void lse_fold_f32_k(const void *ctx, int k, const float *const *v, const int64_t *n, part_t *const *s) {
    for (int j = 0; j < k; j++) lse_fold_f32(ctx, v[j], n[j], s[j]);
}
static void lse_comb(const void *ctx, part_t *s, const part_t *t) {
    (void)ctx;
    double m = (s->a != s->a || t->a != t->a) ? NAN : (t->a > s->a ? t->a : s->a), sh = lse_shift(m);
    double a = s->b == 0 ? 0 : s->b * exp(lse_shift(s->a) - sh), b = t->b == 0 ? 0 : t->b * exp(lse_shift(t->a) - sh);
    s->a = m, s->b = a + b;
}
static void lse_fin(const void *ctx, int64_t o, const part_t *s) {
    store_f(((const lse_ctx *)ctx)->out, o, log(s->b) + lse_shift(s->a));
}

mt_status mt__impl_logsumexp(mt_tensor *x, int ndims, const int64_t *dims, int keepdim, mt_tensor **result) {
    int reduced[MT_MAX_DIMS];
    MT_TRY(mt__reduce_dims(x, ndims, dims, reduced));
    int64_t osz[MT_MAX_DIMS];
    int ond = out_sizes(x, reduced, keepdim, osz);
    MT_TRY(mt__alloc(ond, osz, NULL, mt__is_float(x->dtype) ? x->dtype : mt__default_float(), x->device, result));
    rows_t r;
    plan_rows(&r, x, reduced, MT_F64);
    lse_ctx c = {*result, x->dtype != MT_F64};
    stream_ops ops = {lse_fold, lse_comb, lse_fin, &c, lse_fold_f32_k};
    mt_status st = run_stream(&r, &ops);
    if (st) MT_DROP(*result);
    return st;
}

/* ---- median / nanmedian / mode ------------------------------------------------------ */

/* Order statistics over (value, index) pairs; NaN sorts last (equal to NaN). */
#define ORDER_FNS(TAG, T, ISNAN)                                                          \
    static inline int lt_##TAG(T a, T b) { return ISNAN(b) ? !ISNAN(a) : a < b; }        \
    /* (value, index) order of non-NaN values: PyTorch's median comparator, a total order */ \
    static inline int lti_##TAG(T a, int64_t ia, T b, int64_t ib) { return a < b || (a == b && ia < ib); } \
    /* k-th smallest of the non-NaN v[0..n) into place k (quickselect, median of three) */ \
    static void select_##TAG(T *v, int64_t *ix, int64_t n, int64_t k) {                   \
        int64_t lo = 0, hi = n - 1;                                                       \
        while (hi > lo) {                                                                 \
            int64_t mid = lo + (hi - lo) / 2;                                             \
            if (lti_##TAG(v[hi], ix[hi], v[lo], ix[lo])) SWAP2(T, v, ix, hi, lo);         \
            if (lti_##TAG(v[mid], ix[mid], v[lo], ix[lo])) SWAP2(T, v, ix, mid, lo);      \
            if (lti_##TAG(v[hi], ix[hi], v[mid], ix[mid])) SWAP2(T, v, ix, hi, mid);      \
            T pv = v[mid];                                                                \
            int64_t pi = ix[mid], i = lo, j = hi;                                         \
            while (i <= j) {                                                              \
                while (lti_##TAG(v[i], ix[i], pv, pi)) i++;                               \
                while (lti_##TAG(pv, pi, v[j], ix[j])) j--;                               \
                if (i <= j) { SWAP2(T, v, ix, i, j); i++; j--; }                          \
            }                                                                             \
            if (k <= j) hi = j;                                                           \
            else if (k >= i) lo = i;                                                      \
            else return;                                                                  \
        }                                                                                 \
    }

#define SWAP2(T, v, ix, a, b)                                   \
    do {                                                        \
        T t_ = v[a]; v[a] = v[b]; v[b] = t_;                    \
        int64_t u_ = ix[a]; ix[a] = ix[b]; ix[b] = u_;          \
    } while (0)
#define ISNAN_F(x) ((x) != (x))
#define ISNAN_I(x) 0
ORDER_FNS(f, double, ISNAN_F)
ORDER_FNS(i, int64_t, ISNAN_I)

typedef struct { int op; mt_tensor *values, *indices; } sel_ctx;

/* Which element libstdc++'s std::nth_element(first, first, last) leaves first when all n
 * elements are equivalent (PyTorch's nanmedian of an all-NaN row): its introselect's
 * pivot and partition swaps, replayed on positions. */
static int64_t all_equal_nth0(int64_t n) {
    int64_t *p = malloc((size_t)n * sizeof(int64_t)), r = 0;
    if (!p) return 0;
    for (int64_t i = 0; i < n; i++) p[i] = i;
    int64_t hi = n, depth = 0;
    for (int64_t m = n; m > 1; m >>= 1) depth += 2;
    while (hi > 3 && depth-- > 0) {
        int64_t t = p[0]; p[0] = p[hi / 2]; p[hi / 2] = t; /* median of three: the middle */
        int64_t f = 1, l = hi;
        for (;;) { /* unguarded partition: nothing compares less, so every pair swaps */
            l--;
            if (f >= l) break;
            t = p[f]; p[f] = p[l]; p[l] = t;
            f++;
        }
        hi = f; /* the cut is past nth = 0 */
    }
    r = p[0];
    free(p);
    return r;
}

/* the lower median; median: the first NaN if there is one; nanmedian: of the non-NaN values */
static void median_row(const rows_t *r, int64_t o, void *row, int64_t *ix) {
    const sel_ctx *c = r->ctx;
    int64_t n = r->count;
    if (n == 0) { store_f(c->values, o, NAN); return; } /* PyTorch's NaN, cast (INT64_MIN for long) */
    if (r->acc == MT_I64) {
        int64_t *v = row, k = (n - 1) / 2;
        select_i(v, ix, n, k);
        store_i(c->values, o, v[k]);
        if (c->indices) store_i(c->indices, o, ix[k]);
        return;
    }
    double *v = row;
    int64_t valid = 0, first_nan = -1;
    for (int64_t i = 0; i < n; i++) { /* non-NaN values to the front */
        if (v[i] != v[i]) { if (first_nan < 0) first_nan = ix[i]; continue; }
        SWAP2(double, v, ix, valid, i);
        valid++;
    }
    if (first_nan >= 0 && (c->op == MT_SEL_MEDIAN || valid == 0)) {
        store_f(c->values, o, NAN);
        if (c->indices) store_i(c->indices, o, c->op == MT_SEL_MEDIAN ? first_nan : all_equal_nth0(n));
        return;
    }
    int64_t k = (valid - 1) / 2;
    select_f(v, ix, valid, k);
    store_f(c->values, o, v[k]);
    if (c->indices) store_i(c->indices, o, ix[k]);
}

/* libstdc++'s std::sort (introsort, then insertion sort), replayed step for step on
 * (value, index) pairs with a value-only comparator, as PyTorch's mode kernel sorts: equal
 * values end up in the order it leaves them, so the index PyTorch reports is the same. */
#define GNU_SORT(TAG, T)                                                                   \
    typedef struct { T v; int64_t i; } pr_##TAG;                                           \
    static void adjust_heap_##TAG(pr_##TAG *f, int64_t hole, int64_t len, pr_##TAG val) {  \
        int64_t top = hole, child = hole;                                                  \
        while (child < (len - 1) / 2) {                                                    \
            child = 2 * (child + 1);                                                       \
            if (f[child].v < f[child - 1].v) child--;                                      \
            f[hole] = f[child];                                                            \
            hole = child;                                                                  \
        }                                                                                  \
        if ((len & 1) == 0 && child == (len - 2) / 2) {                                    \
            child = 2 * (child + 1);                                                       \
            f[hole] = f[child - 1];                                                        \
            hole = child - 1;                                                              \
        }                                                                                  \
        int64_t parent = (hole - 1) / 2;                                                   \
        while (hole > top && f[parent].v < val.v) {                                        \
            f[hole] = f[parent];                                                           \
            hole = parent;                                                                 \
            parent = (hole - 1) / 2;                                                       \
        }                                                                                  \
        f[hole] = val;                                                                     \
    }                                                                                      \
    static void heap_sort_##TAG(pr_##TAG *f, int64_t len) {                                \
        for (int64_t parent = (len - 2) / 2; len >= 2; parent--) {                         \
            adjust_heap_##TAG(f, parent, len, f[parent]);                                  \
            if (parent == 0) break;                                                        \
        }                                                                                  \
        for (int64_t last = len - 1; last > 0; last--) {                                   \
            pr_##TAG val = f[last];                                                        \
            f[last] = f[0];                                                                \
            adjust_heap_##TAG(f, 0, last, val);                                            \
        }                                                                                  \
    }                                                                                      \
    static void introsort_##TAG(pr_##TAG *f, int64_t n, int depth) {                       \
        while (n > 16) {                                                                   \
            if (depth == 0) { heap_sort_##TAG(f, n); return; }                             \
            depth--;                                                                       \
            pr_##TAG *a = f + 1, *b = f + n / 2, *c = f + n - 1, *m, t;                    \
            if (a->v < b->v) m = b->v < c->v ? b : (a->v < c->v ? c : a);                  \
            else m = a->v < c->v ? a : (b->v < c->v ? c : b);                              \
            t = *f; *f = *m; *m = t;                                                       \
            int64_t lo = 1, hi = n;                                                        \
            for (;;) {                                                                     \
                while (f[lo].v < f[0].v) lo++;                                             \
                hi--;                                                                      \
                while (f[0].v < f[hi].v) hi--;                                             \
                if (!(lo < hi)) break;                                                     \
                t = f[lo]; f[lo] = f[hi]; f[hi] = t;                                       \
                lo++;                                                                      \
            }                                                                              \
            introsort_##TAG(f + lo, n - lo, depth);                                        \
            n = lo;                                                                        \
        }                                                                                  \
    }                                                                                      \
    static void linear_insert_##TAG(pr_##TAG *f, int64_t k) {                              \
        pr_##TAG val = f[k];                                                               \
        while (val.v < f[k - 1].v) { f[k] = f[k - 1]; k--; }                               \
        f[k] = val;                                                                        \
    }                                                                                      \
    static void insertion_sort_##TAG(pr_##TAG *f, int64_t n) {                             \
        for (int64_t k = 1; k < n; k++) {                                                  \
            if (f[k].v < f[0].v) {                                                         \
                pr_##TAG val = f[k];                                                       \
                memmove(f + 1, f, (size_t)k * sizeof *f);                                  \
                f[0] = val;                                                                \
            } else {                                                                       \
                linear_insert_##TAG(f, k);                                                 \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void gnu_sort_##TAG(pr_##TAG *f, int64_t n) {                                   \
        if (n < 2) return;                                                                 \
        int lg = 63 - __builtin_clzll((unsigned long long)n);                             \
        introsort_##TAG(f, n, 2 * lg);                                                     \
        if (n > 16) {                                                                      \
            insertion_sort_##TAG(f, 16);                                                   \
            for (int64_t k = 16; k < n; k++) linear_insert_##TAG(f, k);                    \
        } else {                                                                           \
            insertion_sort_##TAG(f, n);                                                    \
        }                                                                                  \
    }                                                                                      \
    /* the most frequent value (the smallest of equally frequent ones), PyTorch's index */ \
    static void mode_##TAG(const T *v, int64_t n, T *mode, int64_t *modei) {               \
        pr_##TAG *f = malloc((size_t)n * sizeof *f);                                       \
        if (!f) return;                                                                    \
        for (int64_t k = 0; k < n; k++) f[k].v = v[k], f[k].i = k;                         \
        gnu_sort_##TAG(f, n);                                                              \
        int64_t freq = 0, best = 0;                                                        \
        *mode = 0, *modei = 0;                                                             \
        for (int64_t k = 0; k < n; k++) {                                                  \
            freq++;                                                                        \
            if (k == n - 1 || f[k].v != f[k + 1].v) {                                      \
                if (freq > best) *mode = f[k].v, *modei = f[k].i, best = freq;             \
                freq = 0;                                                                  \
            }                                                                              \
        }                                                                                  \
        free(f);                                                                           \
    }
GNU_SORT(f, double)
GNU_SORT(i, int64_t)

static void mode_row(const rows_t *r, int64_t o, void *row, int64_t *idx) {
    (void)idx;
    const sel_ctx *c = r->ctx;
    int64_t mi = 0;
    if (r->acc == MT_I64) {
        int64_t m = 0;
        mode_i(row, r->count, &m, &mi);
        store_i(c->values, o, m);
    } else {
        double m = 0;
        mode_f(row, r->count, &m, &mi);
        store_f(c->values, o, m);
    }
    if (c->indices) store_i(c->indices, o, mi); /* none without a dim (values only) */
}

mt_status mt__impl_median(int op, mt_tensor *x, int has_dim, int64_t dim, int keepdim, mt_tensor **values,
                          mt_tensor **indices) {
    static const char *names[] = {"median", "median", "mode"}; /* PyTorch says median() for nanmedian too */
    static const char *kernels[] = {"median_cpu", "median_out"};
    if ((unsigned)op >= MT_NUM_SEL) return mt__error(MT_ERR_VALUE, "unknown order statistic %d", op);
    if (mt__is_complex(x->dtype)) /* PyTorch's CPU kernels have no complex instance */
        return mt__not_implemented(op == MT_SEL_MODE ? "mode_cpu" : kernels[has_dim], x->dtype);
    int bool_err = x->dtype == MT_BOOL && op != MT_SEL_MODE; /* after the dim checks; median() of empty is NaN */
    if (bool_err && !has_dim && mt_tensor_numel(x) > 0)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", kernels[0]);
    int reduced[MT_MAX_DIMS] = {0};
    if (has_dim) {
        MT_TRY(mt__reduce_dims(x, 1, &dim, reduced));
        if (dim < 0) dim += x->ndim ? x->ndim : 1;
        if (x->ndim && x->sizes[dim] == 0)
            return mt__error(MT_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", names[op],
                             (long long)dim);
        if (bool_err) return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", kernels[1]);
    } else {
        MT_TRY(mt__reduce_dims(x, 0, NULL, reduced));
    }
    int64_t osz[MT_MAX_DIMS];
    int ond = out_sizes(x, reduced, has_dim && keepdim, osz);
    MT_TRY(alloc2(ond, osz, x->dtype, MT_I64, x->device, values, has_dim ? indices : NULL));
    rows_t r;
    plan_rows(&r, x, reduced, mt__is_float(x->dtype) ? MT_F64 : MT_I64);
    r.want_idx = 1;
    sel_ctx c = {op, *values, has_dim ? *indices : NULL};
    mt_status st = run_rows(&r, op == MT_SEL_MODE ? mode_row : median_row, &c);
    if (st) { MT_DROP(*values); if (has_dim) MT_DROP(*indices); }
    return st;
}

/* ---- quantile -------------------------------------------------------------------------- */

typedef struct { const double *q; int64_t nq; int interp, ignore_nan, f32; mt_tensor *out; } q_ctx;

static double lerp_(double a, double b, double w, int f32) { /* PyTorch's lerp, in the tensor's precision */
    if (f32) {
        float fa = (float)a, fb = (float)b, fw = (float)w;
        return fabsf(fw) < 0.5f ? fa + fw * (fb - fa) : fb - (fb - fa) * (1.0f - fw);
    }
    return fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1.0 - w);
}

static int cmp_nan_last(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    if (a != a) return b != b ? 0 : 1;
    if (b != b) return -1;
    return a < b ? -1 : a > b;
}

static void quantile_row(const rows_t *r, int64_t o, void *row, int64_t *idx) {
    (void)idx;
    const q_ctx *c = r->ctx;
    double *v = row;
    int64_t n = r->count;
    qsort(v, (size_t)n, sizeof(double), cmp_nan_last);
    int64_t valid = 0;
    while (valid < n && v[valid] == v[valid]) valid++;
    for (int64_t j = 0; j < c->nq; j++) {
        double res;
        if ((!c->ignore_nan && valid < n) || valid == 0) {
            res = NAN;
        } else {
            double q = c->q[j];
            double rank = c->f32 ? (double)((float)q * (float)(valid - 1)) : q * (double)(valid - 1);
            int64_t below = (int64_t)rank, above = (int64_t)ceil(rank);
            if (above > valid - 1) above = valid - 1;
            switch (c->interp) {
            case MT_QUANTILE_LOWER: res = v[below]; break;
            case MT_QUANTILE_HIGHER: res = v[above]; break;
            case MT_QUANTILE_NEAREST: res = v[(int64_t)nearbyint(rank)]; break;
            case MT_QUANTILE_MIDPOINT: res = lerp_(v[below], v[above], 0.5, c->f32); break;
            default: {
                double w = c->f32 ? (double)((float)rank - (float)below) : rank - (double)below;
                res = lerp_(v[below], v[above], w, c->f32);
            }
            }
        }
        store_f(c->out, o * c->nq + j, res); /* q innermost in memory */
    }
}

mt_status mt__impl_quantile(mt_tensor *x, mt_tensor *q, double qs, int has_dim, int64_t dim, int keepdim, int interp,
                            int ignore_nan, mt_tensor **result) {
    const char *name = "quantile"; /* PyTorch's checks say quantile() for nanquantile too */
    if ((unsigned)interp > MT_QUANTILE_NEAREST)
        return mt__error(MT_ERR_RUNTIME, "%s() interpolation must be one of linear, lower, higher, midpoint or nearest", name);
    int64_t nq = 1;
    double *qv = NULL;
    if (!q && !(qs >= 0 && qs <= 1))
        return mt__error(MT_ERR_RUNTIME, "%s() q must be in the range [0, 1] but got %g", name, qs);
    if (mt_tensor_numel(x) == 0) return mt__error(MT_ERR_RUNTIME, "%s() input tensor must be non-empty", name);
    if (q && q->ndim > 1) return mt__error(MT_ERR_RUNTIME, "%s() q must be a scalar or 1D tensor", name);
    if (x->dtype != MT_F32 && x->dtype != MT_F64)
        return mt__error(MT_ERR_RUNTIME, "%s() input tensor must be either float or double dtype", name);
    if (q) {
        if (q->dtype != x->dtype)
            return mt__error(MT_ERR_RUNTIME, "%s() q tensor must be same dtype as the input tensor", name);
        if (q->device != x->device)
            return mt__error(MT_ERR_RUNTIME, "%s() q tensor must be on the same device as the input tensor", name);
        nq = mt_tensor_numel(q);
    }
    int reduced[MT_MAX_DIMS];
    MT_TRY(mt__reduce_dims(x, has_dim ? 1 : 0, has_dim ? &dim : NULL, reduced));
    /* result: q's dim first, then the reduced shape (keepdim without dim keeps every dim as 1) */
    int64_t osz[MT_MAX_DIMS + 1];
    int ond = 0;
    if (q && q->ndim == 1) osz[ond++] = nq;
    ond += out_sizes(x, reduced, keepdim, osz + ond);
    /* PyTorch's layout: computed with q innermost, then q's dim moved to the front */
    int64_t ost[MT_MAX_DIMS + 1];
    mt__contiguous_strides(ond, osz, ost);
    if (q && q->ndim == 1) {
        int64_t step = 1;
        for (int d = ond - 1; d >= 1; d--) { ost[d] = step * nq; step *= osz[d]; }
        ost[0] = 1;
    }
    if (x->device != MT_CPU) return mt__alloc(ond, osz, ost, x->dtype, x->device, result);
    qv = malloc((size_t)(nq ? nq : 1) * sizeof(double));
    if (!qv) return mt__error(MT_ERR_OOM, "out of memory");
    if (q) {
        mt_status st = mt_read(q, MT_F64, qv, nq);
        if (st) { free(qv); return st; }
        for (int64_t j = 0; j < nq; j++)
            if (!(qv[j] >= 0 && qv[j] <= 1)) {
                free(qv);
                return mt__error(MT_ERR_RUNTIME, "%s() q values must be in the range [0, 1]", name);
            }
    } else {
        qv[0] = qs;
    }
    mt_status st = mt__alloc(ond, osz, ost, x->dtype, x->device, result);
    if (st) { free(qv); return st; }
    rows_t r;
    plan_rows(&r, x, reduced, MT_F64);
    q_ctx c = {qv, nq, interp, ignore_nan, x->dtype == MT_F32, *result};
    st = run_rows(&r, quantile_row, &c);
    free(qv);
    if (st) MT_DROP(*result);
    return st;
}

/* ---- backward kernels: products of the other elements along a line ---------------------- */

/* out[i] = prod_{j != i} x[j] along dim (prod's gradient where x has zeros) */
typedef struct { mt_tensor *x, *g, *out; int64_t dim; int cumprod; } line_ctx;

static void line_walk(mt_tensor *t, int64_t dim, int64_t o, int64_t *off) {
    int64_t rem = o;
    *off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (d == dim) continue;
        *off += (rem % t->sizes[d]) * t->strides[d];
        rem /= t->sizes[d];
    }
}

/* one line kernel per accumulation type: double for real dtypes, double _Complex (c10's product and
 * quotient) for complex ones, whose gradients are these same polynomials in conj(x) */
#define RMUL(a, b) ((a) * (b))
#define RDIV(a, b) ((a) / (b))
#define LINES_CHUNK(NAME, T, ACC_DT, MUL, DIV)                                                                    \
    static void NAME(const line_ctx *c, int64_t b, int64_t e) {                                                  \
        int64_t n = c->x->ndim ? c->x->sizes[c->dim] : 1;                                                        \
        T *xv = malloc((size_t)n * sizeof(T) * 3);                                                               \
        if (!xv) return;                                                                                         \
        T *gv = xv + n, *res = xv + 2 * n;                                                                       \
        mt_loop_fn lx = mt__cast_loop(ACC_DT, c->x->dtype), st = mt__cast_loop(c->out->dtype, ACC_DT);           \
        int xs = mt_dtype_itemsize(c->x->dtype), os = mt_dtype_itemsize(c->out->dtype);                          \
        for (int64_t o = b; o < e; o++) {                                                                        \
            int64_t xo, oo, go = 0;                                                                              \
            line_walk(c->x, c->dim, o, &xo);                                                                     \
            line_walk(c->out, c->dim, o, &oo);                                                                   \
            int64_t sx = c->x->ndim ? c->x->strides[c->dim] : 0, so = c->out->ndim ? c->out->strides[c->dim] : 0; \
            lx((char *[]){(char *)xv, mt__data(c->x) + xo * xs}, (const int64_t[]){sizeof(T), sx * xs}, n, NULL); \
            if (c->cumprod) {                                                                                    \
                line_walk(c->g, c->dim, o, &go);                                                                 \
                int64_t sg = c->g->ndim ? c->g->strides[c->dim] : 0, gs = mt_dtype_itemsize(c->g->dtype);        \
                mt__cast_loop(ACC_DT, c->g->dtype)((char *[]){(char *)gv, mt__data(c->g) + go * gs},             \
                                                   (const int64_t[]){sizeof(T), sg * gs}, n, NULL);              \
                /* d/dx_k of sum_j g_j prod_{i<=j} x_i, exact around the first zero z */                         \
                int64_t z = 0;                                                                                   \
                while (z < n && xv[z] != 0) z++;                                                                 \
                T pre = 1, acc = 0;                                                                              \
                for (int64_t k = 0; k < n; k++) res[k] = 0;                                                      \
                T *P = malloc((size_t)(z + 1) * sizeof(T));                                                      \
                if (!P) { free(xv); return; }                                                                    \
                for (int64_t k = 0; k < z; k++) { pre = MUL(pre, xv[k]); P[k] = pre; }                           \
                for (int64_t k = z - 1; k >= 0; k--) { acc += MUL(gv[k], P[k]); res[k] = DIV(acc, xv[k]); }     \
                if (z < n) {                                                                                     \
                    T before = z ? P[z - 1] : 1, q = 1, s = 0;                                                   \
                    for (int64_t j = z; j < n; j++) { if (j > z) q = MUL(q, xv[j]); s += MUL(gv[j], q); }        \
                    res[z] = MUL(before, s);                                                                     \
                }                                                                                                \
                free(P);                                                                                         \
            } else {                                                                                             \
                T pre = 1;                                                                                       \
                for (int64_t k = 0; k < n; k++) { res[k] = pre; pre = MUL(pre, xv[k]); }                         \
                T suf = 1;                                                                                       \
                for (int64_t k = n - 1; k >= 0; k--) { res[k] = MUL(res[k], suf); suf = MUL(suf, xv[k]); }      \
            }                                                                                                    \
            st((char *[]){mt__data(c->out) + oo * os, (char *)res}, (const int64_t[]){so * os, sizeof(T)}, n, NULL); \
        }                                                                                                        \
        free(xv);                                                                                                \
    }
LINES_CHUNK(lines_real, double, MT_F64, RMUL, RDIV)
LINES_CHUNK(lines_complex, double _Complex, MT_C128, CMUL, CDIV)

static void lines_chunk(void *p, int64_t b, int64_t e) {
    const line_ctx *c = p;
    if (mt__is_complex(c->x->dtype)) lines_complex(c, b, e);
    else lines_real(c, b, e);
}

static mt_status run_lines(mt_tensor *x, mt_tensor *g, int64_t dim, int cumprod, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&dim, x->ndim));
    MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, x->dtype, x->device, out));
    if (x->device != MT_CPU || mt_tensor_numel(x) == 0) return MT_OK;
    int64_t n = x->ndim ? x->sizes[dim] : 1, lines = mt_tensor_numel(x) / n;
    line_ctx c = {x, g, *out, dim, cumprod};
    mt__parallel_for(lines, (MT_GRAIN_SIZE + n - 1) / n, lines_chunk, &c);
    return MT_OK;
}

/* product of the other elements along dim (prod's backward where the input has zeros) */
mt_status mt__prod_others(mt_tensor *x, int64_t dim, mt_tensor **out) { return run_lines(x, NULL, dim, 0, out); }
/* cumprod's input gradient for output gradient g along dim (any zeros in x) */
mt_status mt__cumprod_grad(mt_tensor *x, mt_tensor *g, int64_t dim, mt_tensor **out) {
    return run_lines(x, g, dim, 1, out);
}
