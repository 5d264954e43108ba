/* reduce.c — reductions over any set of dims: sum, prod, mean, amax, amin,
 * all, any, and max/min/argmax/argmin with indices along one dim.
 *
 * Sums are pairwise (blocks of 128 summed in 8 lanes, blocks combined as a
 * tree), accumulating float16/bfloat16/float32 in float, float64 in double and
 * integers in int64, as PyTorch does. The other reductions (and integer sums)
 * fold runs in vector lanes (fold_run). The kept dims are walked outside (split
 * across threads), the reduced dims inside; one long run into one output is
 * split across threads itself (split_sum, fold_split), and columns (the reduced
 * dim strided, adjacent outputs contiguous) reduce many outputs a row at a time. */
#include <math.h>

#include "loops.h"
#include "reduce.h"

/* ---- per-dtype reducers: each returns its accumulator as double or int64 ---- */

#define BLOCK 128

/* A contiguous run sums leaves of up to CBLOCK elements in four vectors of 8 lanes (independent
 * add chains, to keep loads in flight); strided runs use leaves of BLOCK in 8 lanes. */
#define CBLOCK 1024

/* Many runs summed at once (sum_streams): contiguous runs [b, e) of a reduction (rows, or the
 * ranges of one long sum) are cut into NSTREAM parts far apart in memory, and the parts advance in
 * turn, one leaf (<= 4 KiB of float32) each. On AMD Zen 4 one sequential stream per core read
 * 23 GB/s and four streams visited 4 KiB at a time 35 (2 cores: 47 -> 69 GB/s); visits of 8 KiB
 * and more, or four adjacent rows, did not gain (docs/PERFORMANCE.md, session 23): float64, whose
 * leaves are 8 KiB, sums one run at a time (13% slower in streams). Each run is still sum1's tree,
 * walked leaf by leaf with an explicit stack, so every result is bit-identical. */
#define NSTREAM 4
#define STREAM_ITEM_MAX (4096 / CBLOCK) /* element sizes whose leaves are at most 4 KiB */
#define ROWS_MIN 256 /* rows at least this long are summed by sum_streams */
typedef struct { int64_t lo, n, half; int right; } walk_node;
typedef struct {
    const char *(*run)(const void *ctx, int64_t o, int64_t *n); /* run o: its start and length */
    void (*done)(void *ctx, int64_t o, double v);                /* run o's sum */
    void *ctx;
} stream_src;
/* LOAD converts one element (nansum's reads NaN as 0); the contiguous leaves convert with VLOAD and
 * apply VFIX to the vector (nansum's zeroes NaN lanes with a mask: a per-element select did not
 * vectorise, 7x slower than sum) */
#define DEF_SUM(TAG, T, ACC, LOAD, VLOAD, VFIX)                                          \
    MT_SIMD static ACC sum1_##TAG(const char *p, int64_t n, int64_t s) {                  \
        ACC lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                          \
        int64_t i = 0;                                                                   \
        if (s == sizeof(T) && n <= CBLOCK) {                                             \
            typedef ACC vacc __attribute__((vector_size(8 * sizeof(ACC))));              \
            vacc v0 = {0}, v1 = {0}, v2 = {0}, v3 = {0};                                 \
            const T *q = (const T *)p;                                                   \
            _Pragma("GCC unroll 1")                                                      \
            for (; i + 32 <= n; i += 32) {                                               \
                vacc x0, x1, x2, x3;                                                     \
                for (int l = 0; l < 8; l++) x0[l] = (ACC)VLOAD(q[i + l]);                \
                for (int l = 0; l < 8; l++) x1[l] = (ACC)VLOAD(q[i + 8 + l]);            \
                for (int l = 0; l < 8; l++) x2[l] = (ACC)VLOAD(q[i + 16 + l]);           \
                for (int l = 0; l < 8; l++) x3[l] = (ACC)VLOAD(q[i + 24 + l]);           \
                v0 += VFIX(x0), v1 += VFIX(x1), v2 += VFIX(x2), v3 += VFIX(x3);          \
            }                                                                            \
            v0 = (v0 + v1) + (v2 + v3);                                                  \
            for (; i + 8 <= n; i += 8) {                                                 \
                vacc x0;                                                                 \
                for (int l = 0; l < 8; l++) x0[l] = (ACC)VLOAD(q[i + l]);                \
                v0 += VFIX(x0);                                                          \
            }                                                                            \
            for (int l = 0; l < 8; l++) lane[l] = v0[l];                                 \
        } else if (n <= BLOCK) {                                                         \
            for (; i + 8 <= n; i += 8)                                                   \
                for (int l = 0; l < 8; l++) lane[l] += (ACC)LOAD(*(const T *)(p + (i + l) * s)); \
        } else {                                                                         \
            int64_t half = ((n / 2) + BLOCK - 1) / BLOCK * BLOCK;                        \
            return sum1_##TAG(p, half, s) + sum1_##TAG(p + half * s, n - half, s);       \
        }                                                                                \
        for (; i < n; i++) lane[0] += (ACC)LOAD(*(const T *)(p + i * s));                \
        return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])); \
    }                                                                                    \
    static ACC sumr_##TAG(const char *p, const inner_t *in, int d, int64_t lo, int64_t hi) { \
        if (d == in->n - 1) return sum1_##TAG(p + lo * in->stride[d], hi - lo, in->stride[d]); \
        if (hi - lo == 1) return sumr_##TAG(p + lo * in->stride[d], in, d + 1, 0, in->size[d + 1]); \
        int64_t mid = lo + (hi - lo) / 2;                                                \
        return sumr_##TAG(p, in, d, lo, mid) + sumr_##TAG(p, in, d, mid, hi);            \
    }                                                                                    \
    /* sum1's tree over a contiguous run, walked a leaf at a time (see sum_streams) */   \
    typedef struct {                                                                     \
        const char *p;                                                                   \
        int sp;                                                                          \
        int64_t lo, n; /* the next leaf */                                               \
        walk_node st[64];                                                                \
        ACC left[64], result;                                                            \
    } walk_##TAG;                                                                        \
    static void walk_down_##TAG(walk_##TAG *w, int64_t lo, int64_t n) {                  \
        while (n > CBLOCK) {                                                             \
            int64_t half = ((n / 2) + BLOCK - 1) / BLOCK * BLOCK;                        \
            w->st[w->sp++] = (walk_node){lo, n, half, 0};                                \
            n = half;                                                                    \
        }                                                                                \
        w->lo = lo, w->n = n;                                                            \
    }                                                                                    \
    /* v: the sum of the current leaf; returns 0 when the run is done (w->result) */     \
    static int walk_put_##TAG(walk_##TAG *w, ACC v) {                                    \
        for (; w->sp; w->sp--) {                                                         \
            walk_node *f = &w->st[w->sp - 1];                                            \
            if (!f->right) {                                                             \
                w->left[w->sp - 1] = v, f->right = 1;                                    \
                walk_down_##TAG(w, f->lo + f->half, f->n - f->half);                     \
                return 1;                                                                \
            }                                                                            \
            v = w->left[w->sp - 1] + v;                                                  \
        }                                                                                \
        w->result = v;                                                                   \
        return 0;                                                                        \
    }                                                                                    \
    static void sum_streams_##TAG(const stream_src *src, int64_t b, int64_t e) {         \
        walk_##TAG w[NSTREAM];                                                           \
        int64_t o[NSTREAM], end[NSTREAM], m = e - b;                                     \
        int k = m < NSTREAM ? (int)m : NSTREAM, active = k;                              \
        for (int j = 0; j < k; j++) {                                                    \
            o[j] = b + m / k * j + (j < m % k ? j : m % k);                              \
            end[j] = o[j] + m / k + (j < m % k);                                         \
            int64_t n;                                                                   \
            w[j].p = src->run(src->ctx, o[j], &n), w[j].sp = 0;                          \
            walk_down_##TAG(&w[j], 0, n);                                                \
        }                                                                                \
        while (active)                                                                   \
            for (int j = 0; j < k; j++) {                                                \
                if (o[j] == end[j]) continue;                                            \
                walk_##TAG *x = &w[j];                                                   \
                if (walk_put_##TAG(x, sum1_##TAG(x->p + x->lo * (int64_t)sizeof(T), x->n, sizeof(T)))) continue; \
                src->done(src->ctx, o[j], x->result);                                    \
                if (++o[j] == end[j]) { active--; continue; }                            \
                int64_t n;                                                               \
                x->p = src->run(src->ctx, o[j], &n), x->sp = 0;                          \
                walk_down_##TAG(x, 0, n);                                                \
            }                                                                            \
    }

/* one reduction's accumulator: double for floats (f), int64 for integers and counts (i); nan: a
 * float amax/amin saw a NaN */
typedef struct { double f; int64_t i; int nan; } acc_t;

/* nansum's vector leaves: NaN lanes masked to 0 */
#define VSAME(x) (x)
#define VNONAN(x) ((__typeof__(x))((__typeof__((x) == (x)))(x) & ((x) == (x))))
#define NZ(x) ((x) != (x) ? 0 : (x))
#define NZ_F16(x) NZ(mt__f16_to_f32(x))
#define NZ_BF16(x) NZ(mt__bf16_to_f32(x))

/* ---- folds of runs: amax/amin, prod, all/any/count_nonzero, integer sums -------------------
 * A run of n elements s bytes apart folds in FW lanes (a contiguous run vectorises), then into the
 * accumulator. They were element-by-element folds with a branch per element: 1.1 ns per float32
 * element on one thread, 36x PyTorch for a full amax (docs/PERFORMANCE.md, session 25). */
#define FW 32
/* the FW lanes folded as a tree, each level with a constant width so it vectorises (a loop over the
 * widths compiled to scalar steps through the stack: most of a 64-element row's time) */
#define LANE_STEP(W, ...) for (int l = 0, w = W; l < W; l++) { __VA_ARGS__; }
#define LANE_TREE(...) LANE_STEP(16, __VA_ARGS__) LANE_STEP(8, __VA_ARGS__) LANE_STEP(4, __VA_ARGS__) \
    LANE_STEP(2, __VA_ARGS__) LANE_STEP(1, __VA_ARGS__)
#define PCHUNK 65536
#define MAXPARTS 256 /* ranges of a split fold */
/* prod's chunks: a function of the run's length only, so the thread split (one chunk per range)
 * gives the serial result */
static int64_t prod_chunk(int64_t n) {
    int64_t c = ((n + MAXPARTS - 1) / MAXPARTS + FW - 1) / FW * FW;
    return c > PCHUNK ? c : PCHUNK;
}

/* Float amax/amin: lanes keep the extreme of the non-NaN elements and whether a NaN was seen. Which
 * element is the result when that is ambiguous (a NaN, or a zero of either sign) is settled after the
 * whole fold by first_special: the first NaN, else the first zero, in memory order, as the
 * element-by-element fold did; so results do not depend on lanes or threads. */
#define DEF_FEXT(TAG, T, F, IT, LOAD, NAME, CMP, INIT)                                    \
    MT_SIMD static void NAME##_##TAG(const char *p, int64_t n, int64_t s, acc_t *a) {    \
        F m = INIT;                                                                      \
        IT nan = 0;                                                                      \
        int64_t i = 0;                                                                   \
        if (s == sizeof(T) && n >= FW) {                                                 \
            const T *q = (const T *)p;                                                   \
            F v[FW];                                                                     \
            IT u[FW];                                                                    \
            for (int l = 0; l < FW; l++) v[l] = INIT, u[l] = 0;                          \
            for (; i + FW <= n; i += FW)                                                 \
                for (int l = 0; l < FW; l++) {                                           \
                    F x = (F)LOAD(q[i + l]);                                             \
                    u[l] |= -(IT)(x != x);                                               \
                    v[l] = x CMP v[l] ? x : v[l];                                        \
                }                                                                        \
            LANE_TREE(u[l] |= u[l + w]; v[l] = v[l + w] CMP v[l] ? v[l + w] : v[l]);      \
            nan = u[0], m = v[0];                                                        \
        }                                                                                \
        for (; i < n; i++) {                                                             \
            F x = (F)LOAD(*(const T *)(p + i * s));                                      \
            nan |= x != x;                                                               \
            m = x CMP m ? x : m;                                                         \
        }                                                                                \
        a->nan |= nan != 0;                                                              \
        if (m CMP a->f) a->f = m;                                                        \
    }

/* float prod: FW lanes, each multiplying in order (a tail element k goes to lane k), combined as a
 * tree; a run is cut into chunks of prod_chunk(n) (fold_run), whose products multiply in order. In
 * the leaves' type (float for float16/bfloat16/float32), as before. Short lanes lose accuracy on
 * factors near 1 (each rounding near 1.0 was biased low: -3e-4 over 200k float32 factors in lanes
 * of 32, 10x PyTorch's error), so each lane runs the whole chunk. */
#define DEF_FPROD(TAG, T, F, LOAD)                                                       \
    MT_SIMD static F prod1_##TAG(const char *p, int64_t n, int64_t s) {                  \
        F v[FW];                                                                         \
        int64_t i = 0;                                                                   \
        for (int l = 0; l < FW; l++) v[l] = 1;                                           \
        if (s == sizeof(T)) {                                                            \
            const T *q = (const T *)p;                                                   \
            for (; i + FW <= n; i += FW)                                                 \
                for (int l = 0; l < FW; l++) v[l] *= (F)LOAD(q[i + l]);                  \
        } else {                                                                         \
            for (; i + FW <= n; i += FW)                                                 \
                for (int l = 0; l < FW; l++) v[l] *= (F)LOAD(*(const T *)(p + (i + l) * s)); \
        }                                                                                \
        for (int l = 0; i < n; i++, l++) v[l] *= (F)LOAD(*(const T *)(p + i * s));      \
        LANE_TREE(v[l] *= v[l + w]);                                                     \
        return v[0];                                                                     \
    }

#define DEF_FFOLDS(TAG, T, F, IT, LOAD)                                                  \
    DEF_FEXT(TAG, T, F, IT, LOAD, fmax, >, -(F)INFINITY)                                 \
    DEF_FEXT(TAG, T, F, IT, LOAD, fmin, <, (F)INFINITY)                                  \
    DEF_FPROD(TAG, T, F, LOAD)

/* integers: amax/amin in lanes of T; prod and sum in uint64 lanes (wrap-around, exact in any order) */
#define DEF_IFOLDS(TAG, T, TMIN, TMAX)                                                   \
    DEF_IEXT(TAG, T, imax, >, TMIN)                                                      \
    DEF_IEXT(TAG, T, imin, <, TMAX)                                                      \
    DEF_IACC(TAG, T, iprod, *=, 1)                                                       \
    DEF_IACC(TAG, T, isum, +=, 0)
#define DEF_IEXT(TAG, T, NAME, CMP, INIT)                                                \
    MT_SIMD static void NAME##_##TAG(const char *p, int64_t n, int64_t s, acc_t *a) {    \
        T m = INIT;                                                                      \
        int64_t i = 0;                                                                   \
        if (s == sizeof(T) && n >= FW) {                                                 \
            const T *q = (const T *)p;                                                   \
            T v[FW];                                                                     \
            for (int l = 0; l < FW; l++) v[l] = INIT;                                    \
            for (; i + FW <= n; i += FW)                                                 \
                for (int l = 0; l < FW; l++) v[l] = q[i + l] CMP v[l] ? q[i + l] : v[l]; \
            LANE_TREE(v[l] = v[l + w] CMP v[l] ? v[l + w] : v[l]);                        \
            m = v[0];                                                                    \
        }                                                                                \
        for (; i < n; i++) {                                                             \
            T x = *(const T *)(p + i * s);                                               \
            m = x CMP m ? x : m;                                                         \
        }                                                                                \
        if ((int64_t)m CMP a->i) a->i = m;                                               \
    }
#define DEF_IACC(TAG, T, NAME, OP, INIT)                                                 \
    MT_SIMD static void NAME##_##TAG(const char *p, int64_t n, int64_t s, acc_t *a) {    \
        uint64_t r = INIT;                                                               \
        int64_t i = 0;                                                                   \
        if (s == sizeof(T) && n >= FW) {                                                 \
            const T *q = (const T *)p;                                                   \
            uint64_t v[FW];                                                              \
            for (int l = 0; l < FW; l++) v[l] = INIT;                                    \
            for (; i + FW <= n; i += FW)                                                 \
                for (int l = 0; l < FW; l++) v[l] OP (uint64_t)(int64_t)q[i + l];        \
            for (int l = 0; l < FW; l++) r OP v[l];                                      \
        }                                                                                \
        for (; i < n; i++) r OP (uint64_t)(int64_t) * (const T *)(p + i * s);            \
        uint64_t acc = (uint64_t)a->i;                                                   \
        acc OP r;                                                                        \
        a->i = (int64_t)acc;                                                             \
    }

/* count_nonzero (and all/any, by blocks): the elements whose bits under MASK are not all zero (a
 * float's bits but the sign: NaN counts, -0.0 does not), by storage width */
#define DEF_CNT(U)                                                                       \
    MT_SIMD static int64_t cnt_##U(const char *p, int64_t n, int64_t s, U mask) {        \
        int64_t c = 0, i = 0;                                                            \
        if (s == sizeof(U))                                                              \
            while (n - i >= FW) {                                                        \
                const U *q = (const U *)p;                                               \
                int64_t e = i + (n - i < ((int64_t)1 << 24) ? n - i : (int64_t)1 << 24) / FW * FW; \
                uint32_t v[FW];                                                          \
                for (int l = 0; l < FW; l++) v[l] = 0;                                   \
                for (; i < e; i += FW)                                                   \
                    for (int l = 0; l < FW; l++) v[l] += (q[i + l] & mask) != 0;         \
                for (int l = 0; l < FW; l++) c += v[l];                                  \
            }                                                                            \
        for (; i < n; i++) c += (*(const U *)(p + i * s) & mask) != 0;                   \
        return c;                                                                        \
    }
DEF_CNT(uint8_t)
DEF_CNT(uint16_t)
DEF_CNT(uint32_t)
DEF_CNT(uint64_t)

#define DEF_FLOAT(TAG, T, ACC, IT, LOAD, NZLOAD)                                         \
    DEF_SUM(TAG, T, ACC, LOAD, LOAD, VSAME)                                              \
    DEF_SUM(nan_##TAG, T, ACC, NZLOAD, LOAD, VNONAN)                                     \
    DEF_FFOLDS(TAG, T, ACC, IT, LOAD)
DEF_FLOAT(f16, uint16_t, float, int32_t, mt__f16_to_f32, NZ_F16)
DEF_FLOAT(bf16, uint16_t, float, int32_t, mt__bf16_to_f32, NZ_BF16)
DEF_FLOAT(f32, float, float, int32_t, ID, NZ)
DEF_FLOAT(f64, double, double, int64_t, ID, NZ)
DEF_IFOLDS(bool, uint8_t, 0, 1)
DEF_IFOLDS(u8, uint8_t, 0, UINT8_MAX)
DEF_IFOLDS(i8, int8_t, INT8_MIN, INT8_MAX)
DEF_IFOLDS(i16, int16_t, INT16_MIN, INT16_MAX)
DEF_IFOLDS(i32, int32_t, INT32_MIN, INT32_MAX)
DEF_IFOLDS(i64, int64_t, INT64_MIN, INT64_MAX)

static int is_fold(int op, int dt) {
    return !((op == MT_RED_SUM || op == MT_RED_MEAN || op == MT_RED_NANSUM) && mt__is_float(dt));
}

static void fold_init(int op, acc_t *a) {
    a->nan = 0;
    a->f = op == MT_RED_AMAX ? -INFINITY : op == MT_RED_AMIN ? INFINITY : op == MT_RED_PROD ? 1 : 0;
    a->i = op == MT_RED_AMAX ? INT64_MIN : op == MT_RED_AMIN ? INT64_MAX : op == MT_RED_PROD || op == MT_RED_ALL;
}

/* all/any decided: nothing more to read */
static int fold_decided(int op, const acc_t *a) {
    return (op == MT_RED_ALL && !a->i) || (op == MT_RED_ANY && a->i);
}

/* b folded into a (b's elements after a's) */
static void fold_combine(int op, int dt, acc_t *a, const acc_t *b) {
    int fl = mt__is_float(dt);
    switch (op) {
    case MT_RED_AMAX: a->nan |= b->nan; if (fl ? b->f > a->f : b->i > a->i) a->f = b->f, a->i = b->i; break;
    case MT_RED_AMIN: a->nan |= b->nan; if (fl ? b->f < a->f : b->i < a->i) a->f = b->f, a->i = b->i; break;
    case MT_RED_PROD:
        if (!fl) a->i = (int64_t)((uint64_t)a->i * (uint64_t)b->i);
        else a->f = dt == MT_F64 ? a->f * b->f : (double)((float)a->f * (float)b->f); /* in the leaves' type */
        break;
    case MT_RED_ALL: a->i = a->i && b->i; break;
    case MT_RED_ANY: a->i = a->i || b->i; break;
    default: a->i = (int64_t)((uint64_t)a->i + (uint64_t)b->i); /* count_nonzero, integer sums */
    }
}

/* all/any/count_nonzero of one run: count_nonzero by blocks, all/any stop at the deciding block (or
 * when another thread's part has decided: *stop) */
static void fold_truth(int op, int dt, const char *p, int64_t n, int64_t s, acc_t *a, const int *stop) {
    int isz = mt_dtype_itemsize(dt);
    enum { TBLK = 4096 };
    for (int64_t b = 0; b < n; b += TBLK) {
        int64_t m = n - b < TBLK ? n - b : TBLK, c;
        const char *q = p + b * s;
        switch (dt) {
        case MT_F16: case MT_BF16: c = cnt_uint16_t(q, m, s, 0x7FFF); break;
        case MT_F32: c = cnt_uint32_t(q, m, s, 0x7FFFFFFFu); break;
        case MT_F64: c = cnt_uint64_t(q, m, s, 0x7FFFFFFFFFFFFFFFull); break;
        default:
            c = isz == 1 ? cnt_uint8_t(q, m, s, 0xFF) : isz == 2 ? cnt_uint16_t(q, m, s, 0xFFFF)
              : isz == 4 ? cnt_uint32_t(q, m, s, 0xFFFFFFFFu) : cnt_uint64_t(q, m, s, ~0ull);
        }
        if (op == MT_RED_COUNT_NONZERO) { a->i += c; continue; }
        if (op == MT_RED_ALL && c < m) { a->i = 0; return; }
        if (op == MT_RED_ANY && c > 0) { a->i = 1; return; }
        if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) return;
    }
}

/* one run folded into a */
/* one case per real dtype: F(tag) for the floating ones, I(tag) for bool and the integers */
#define REAL_DTYPE_SWITCH(dt, F, I)                                                      \
    switch (dt) {                                                                        \
    case MT_F16: F(f16)                                                                  \
    case MT_BF16: F(bf16)                                                                \
    case MT_F32: F(f32)                                                                  \
    case MT_F64: F(f64)                                                                  \
    case MT_BOOL: I(bool)                                                                \
    case MT_U8: I(u8)                                                                    \
    case MT_I8: I(i8)                                                                    \
    case MT_I16: I(i16)                                                                  \
    case MT_I32: I(i32)                                                                  \
    case MT_I64: I(i64)                                                                  \
    }

static void fold_run(int op, int dt, const char *p, int64_t n, int64_t s, acc_t *a, const int *stop) {
    if (op == MT_RED_ALL || op == MT_RED_ANY || op == MT_RED_COUNT_NONZERO) { fold_truth(op, dt, p, n, s, a, stop); return; }
    if (op == MT_RED_PROD && mt__is_float(dt)) {
        for (int64_t c = 0, len = prod_chunk(n); c < n; c += len) {
            const char *q = p + c * s;
            int64_t m = n - c < len ? n - c : len;
            acc_t b = {1, 1, 0};
            switch (dt) {
            case MT_F16: b.f = prod1_f16(q, m, s); break;
            case MT_BF16: b.f = prod1_bf16(q, m, s); break;
            case MT_F32: b.f = prod1_f32(q, m, s); break;
            case MT_F64: b.f = prod1_f64(q, m, s); break;
            }
            fold_combine(op, dt, a, &b);
        }
        return;
    }
#define FCASE(TAG) op == MT_RED_AMAX ? fmax_##TAG(p, n, s, a) : fmin_##TAG(p, n, s, a); break;
#define ICASE(TAG)                                                                       \
    switch (op) {                                                                        \
    case MT_RED_AMAX: imax_##TAG(p, n, s, a); break;                                     \
    case MT_RED_AMIN: imin_##TAG(p, n, s, a); break;                                     \
    case MT_RED_PROD: iprod_##TAG(p, n, s, a); break;                                    \
    default: isum_##TAG(p, n, s, a);                                                     \
    }                                                                                    \
    break;
    REAL_DTYPE_SWITCH(dt, FCASE, ICASE)
#undef FCASE
#undef ICASE
}

/* the block at p (dims d.. of in) folded into a, in memory order */
static void fold_block(int op, int dt, const char *p, const inner_t *in, int d, acc_t *a) {
    int64_t n = in->size[d], s = in->stride[d];
    if (d == in->n - 1) { fold_run(op, dt, p, n, s, a, NULL); return; }
    for (int64_t i = 0; i < n && !fold_decided(op, a); i++) fold_block(op, dt, p + i * s, in, d + 1, a);
}

/* the first NaN (nan) or zero of the block in memory order, into *out; 0 if none */
static int first_special(int dt, const char *p, const inner_t *in, int d, int nan, double *out) {
    int64_t n = in->size[d], s = in->stride[d];
    if (d < in->n - 1) {
        for (int64_t i = 0; i < n; i++)
            if (first_special(dt, p + i * s, in, d + 1, nan, out)) return 1;
        return 0;
    }
#define SCAN(T, LOAD)                                                                    \
    for (int64_t i = 0; i < n; i++) {                                                    \
        double x = LOAD(*(const T *)(p + i * s));                                        \
        if (nan ? x != x : x == 0) { *out = x; return 1; }                               \
    }                                                                                    \
    return 0;
    switch (dt) {
    case MT_F16: SCAN(uint16_t, mt__f16_to_f32)
    case MT_BF16: SCAN(uint16_t, mt__bf16_to_f32)
    case MT_F32: SCAN(float, ID)
    case MT_F64: SCAN(double, ID)
    }
#undef SCAN
    return 0;
}

/* a float amax/amin's ambiguous result settled (see DEF_FEXT) */
static void fold_finish(int op, int dt, const char *p, const inner_t *in, acc_t *a) {
    if ((op == MT_RED_AMAX || op == MT_RED_AMIN) && mt__is_float(dt) && (a->nan || a->f == 0))
        first_special(dt, p, in, 0, a->nan, &a->f);
}

/* one reduction of the block at p, as double (floats) or int64 (integers) */
static acc_t reduce_block(int op, int dt, const char *p, const inner_t *in) {
    acc_t a = {0, 0, 0};
    if (in->n == 0) { /* nothing reduced: the element itself */
        static const int64_t z[2] = {0, 0};
        mt__cast_loop(mt__is_float(dt) ? MT_F64 : MT_I64, dt)((char *[]){mt__is_float(dt) ? (char *)&a.f : (char *)&a.i, (char *)p}, z, 1, NULL);
        if (op == MT_RED_ALL || op == MT_RED_ANY || op == MT_RED_COUNT_NONZERO) a.i = mt__is_float(dt) ? a.f != 0 : a.i != 0;
        if (op == MT_RED_NANSUM && a.f != a.f) a.f = 0;
        return a;
    }
    if (is_fold(op, dt)) {
        fold_init(op, &a);
        fold_block(op, dt, p, in, 0, &a);
        fold_finish(op, dt, p, in, &a);
        return a;
    }
    switch (dt) {
    case MT_F16: a.f = op == MT_RED_NANSUM ? sumr_nan_f16(p, in, 0, 0, in->size[0]) : sumr_f16(p, in, 0, 0, in->size[0]); break;
    case MT_BF16: a.f = op == MT_RED_NANSUM ? sumr_nan_bf16(p, in, 0, 0, in->size[0]) : sumr_bf16(p, in, 0, 0, in->size[0]); break;
    case MT_F32: a.f = op == MT_RED_NANSUM ? sumr_nan_f32(p, in, 0, 0, in->size[0]) : sumr_f32(p, in, 0, 0, in->size[0]); break;
    case MT_F64: a.f = op == MT_RED_NANSUM ? sumr_nan_f64(p, in, 0, 0, in->size[0]) : sumr_f64(p, in, 0, 0, in->size[0]); break;
    }
    return a;
}

/* sum_streams of float16/bfloat16/float32: runs are contiguous; nansum reads NaN as 0 */
static void sum_streams(int nan, int dt, const stream_src *src, int64_t b, int64_t e) {
    switch (dt) {
    case MT_F16: nan ? sum_streams_nan_f16(src, b, e) : sum_streams_f16(src, b, e); break;
    case MT_BF16: nan ? sum_streams_nan_bf16(src, b, e) : sum_streams_bf16(src, b, e); break;
    case MT_F32: nan ? sum_streams_nan_f32(src, b, e) : sum_streams_f32(src, b, e); break;
    }
}

/* ---- planning: which dims are kept and which are reduced ------------------ */

mt_status mt__reduce_dims(const mt_tensor *x, int ndims, const int64_t *dims, int *reduced) {
    memset(reduced, 0, MT_MAX_DIMS * sizeof(int));
    if (ndims <= 0) { /* all dims */
        for (int d = 0; d < x->ndim; d++) reduced[d] = 1;
        return MT_OK;
    }
    for (int k = 0; k < ndims; k++) {
        int64_t d = dims[k];
        MT_TRY(mt__wrap_dim(&d, x->ndim));
        if (x->ndim == 0) continue;
        if (reduced[d]) return mt__error(MT_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
        reduced[d] = 1;
    }
    return MT_OK;
}

void mt__reduce_inner(const mt_tensor *x, const int *reduced, inner_t *in) {
    int isz = mt_dtype_itemsize(x->dtype);
    in->n = 0;
    if (mt_tensor_numel(x) == 0) { /* nothing is read; an empty view's strides may be anything (fuzzer) */
        in->n = 1, in->size[0] = 0, in->stride[0] = 0;
        return;
    }
    for (int d = 0; d < x->ndim; d++)
        if (reduced[d] && x->sizes[d] != 1) {
            in->size[in->n] = x->sizes[d];
            in->stride[in->n++] = mt__wmul(x->strides[d], isz);
        }
    /* order by stride, largest outside, then merge dims that address memory as one */
    for (int i = 1; i < in->n; i++)
        for (int j = i; j > 0 && in->stride[j - 1] < in->stride[j]; j--) {
            int64_t s = in->stride[j], z = in->size[j];
            in->stride[j] = in->stride[j - 1], in->size[j] = in->size[j - 1];
            in->stride[j - 1] = s, in->size[j - 1] = z;
        }
    int m = 0;
    for (int i = 1; i < in->n; i++) {
        int64_t span; /* an empty input's other dims may be huge: an overflow just doesn't merge */
        if (!__builtin_mul_overflow(in->stride[i], in->size[i], &span) && in->stride[m] == span) {
            in->size[m] *= in->size[i];
            in->stride[m] = in->stride[i];
        } else {
            m++;
            in->size[m] = in->size[i], in->stride[m] = in->stride[i];
        }
    }
    if (in->n) in->n = m + 1;
}

static const char *red_name(int op) {
    static const char *names[] = {"sum", "prod", "mean", "amax", "amin", "all", "any", "nansum", "count_nonzero"};
    return (unsigned)op < sizeof names / sizeof *names ? names[op] : "reduce";
}

typedef struct {
    int op, dtype, res_dt;
    int64_t count;
    int kn;
    const int64_t *ksz, *kst;
    char *base, *obase;
    int osize, out_from;
    mt_loop_fn store;
    const inner_t *in;
} reduce_task;

/* outputs [b, e): walk the kept dims, reduce each block of reduced dims */
static void reduce_chunk(void *p, int64_t b, int64_t e) {
    const reduce_task *t = p;
    static const int64_t z[2] = {0, 0};
    for (int64_t o = b; o < e; o++) {
        int64_t rem = o, off = 0;
        for (int d = t->kn - 1; d >= 0; d--) {
            off += (rem % t->ksz[d]) * t->kst[d];
            rem /= t->ksz[d];
        }
        acc_t a;
        if (t->count == 0) {
            a.f = t->op == MT_RED_PROD ? 1.0 : (t->op == MT_RED_MEAN ? NAN : 0.0);
            a.i = (t->op == MT_RED_PROD || t->op == MT_RED_ALL) ? 1 : 0;
        } else {
            a = reduce_block(t->op, t->dtype, t->base + off, t->in);
        }
        if (t->op == MT_RED_MEAN) a.f = t->count ? a.f / (double)t->count : NAN;
        void *v = t->out_from == MT_F64 ? (void *)&a.f : (void *)&a.i;
        t->store((char *[]){t->obase + o * t->osize, (char *)v}, z, 1, NULL);
    }
}

/* folds and float sums of rows (one reduced run per output): results gathered and stored 256 at a time (per output,
 * the call chain, the returned struct and a one-element store call were most of a 64-element row) */
static void rows_fold_chunk(void *p, int64_t b, int64_t e) {
    const reduce_task *t = p;
    enum { OB = 256 };
    union { double f[OB]; int64_t i[OB]; } res;
    int fl = t->out_from == MT_F64;
    int64_t n = t->in->size[0], s = t->in->stride[0];
    for (int64_t o0 = b; o0 < e; o0 += OB) {
        int64_t m = e - o0 < OB ? e - o0 : OB;
        for (int64_t k = 0; k < m; k++) {
            int64_t rem = o0 + k, off = 0;
            for (int d = t->kn - 1; d >= 0; d--) {
                off += (rem % t->ksz[d]) * t->kst[d];
                rem /= t->ksz[d];
            }
            const char *q = t->base + off;
            if (!is_fold(t->op, t->dtype)) { /* a float sum: sum1's tree, as reduce_block sums it */
                int nan = t->op == MT_RED_NANSUM;
                double v = 0;
                switch (t->dtype) {
                case MT_F16: v = nan ? sum1_nan_f16(q, n, s) : sum1_f16(q, n, s); break;
                case MT_BF16: v = nan ? sum1_nan_bf16(q, n, s) : sum1_bf16(q, n, s); break;
                case MT_F32: v = nan ? sum1_nan_f32(q, n, s) : sum1_f32(q, n, s); break;
                case MT_F64: v = nan ? sum1_nan_f64(q, n, s) : sum1_f64(q, n, s); break;
                }
                res.f[k] = t->op == MT_RED_MEAN ? v / (double)t->count : v;
                continue;
            }
            acc_t a;
            fold_init(t->op, &a);
            fold_run(t->op, t->dtype, q, n, s, &a, NULL);
            fold_finish(t->op, t->dtype, q, t->in, &a);
            if (fl) res.f[k] = a.f;
            else res.i[k] = a.i;
        }
        t->store((char *[]){t->obase + o0 * t->osize, (char *)&res}, (const int64_t[]){t->osize, 8}, m, NULL);
    }
}

/* float sums of contiguous rows (one reduced dim of unit stride), outputs [b, e) by sum_streams */
static const char *row_run(const void *p, int64_t o, int64_t *n) {
    const reduce_task *t = p;
    int64_t rem = o, off = 0;
    for (int d = t->kn - 1; d >= 0; d--) {
        off += (rem % t->ksz[d]) * t->kst[d];
        rem /= t->ksz[d];
    }
    *n = t->count;
    return t->base + off;
}
static void row_done(void *p, int64_t o, double v) {
    const reduce_task *t = p;
    static const int64_t z[2] = {0, 0};
    if (t->op == MT_RED_MEAN) v /= (double)t->count;
    t->store((char *[]){t->obase + o * t->osize, (char *)&v}, z, 1, NULL);
}
static void rows_sum_chunk(void *p, int64_t b, int64_t e) {
    const reduce_task *t = p;
    stream_src src = {row_run, row_done, p};
    sum_streams(t->op == MT_RED_NANSUM, t->dtype, &src, b, e);
}

/* A float sum of one long run into a single output: the top levels of sum1's pairwise tree are
 * cut into SPLIT ranges (at the tree's own split points, so the result is bit-identical) that run
 * on the threads, then combine as the tree does. */
#define SPLIT_DEPTH 8 /* at most; deep enough for NSTREAM ranges per thread */
typedef struct { int op, dt; const char *p; int64_t s, lo[1 << SPLIT_DEPTH], n[1 << SPLIT_DEPTH]; double part[1 << SPLIT_DEPTH]; } split_task;

static void split_ranges(split_task *t, int64_t lo, int64_t n, int depth, int *k) {
    if (depth == 0 || n <= BLOCK) { t->lo[*k] = lo, t->n[(*k)++] = n; return; }
    int64_t half = ((n / 2) + BLOCK - 1) / BLOCK * BLOCK;
    split_ranges(t, lo, half, depth - 1, k);
    split_ranges(t, lo + half, n - half, depth - 1, k);
}
static double split_combine(const split_task *t, int64_t n, int depth, int *k) {
    if (depth == 0 || n <= BLOCK) return t->part[(*k)++];
    int64_t half = ((n / 2) + BLOCK - 1) / BLOCK * BLOCK;
    double a = split_combine(t, half, depth - 1, k), b = split_combine(t, n - half, depth - 1, k);
    return t->dt == MT_F64 ? a + b : (double)((float)a + (float)b); /* the tree adds in its accumulator type */
}
static const char *split_run(const void *p, int64_t i, int64_t *n) {
    const split_task *t = p;
    *n = t->n[i];
    return t->p + t->lo[i] * t->s;
}
static void split_done(void *p, int64_t i, double v) { ((split_task *)p)->part[i] = v; }
static void split_chunk(void *p, int64_t b, int64_t e) {
    split_task *t = p;
    if (t->s == mt_dtype_itemsize(t->dt) && t->s <= STREAM_ITEM_MAX) { /* the ranges advance together (sum_streams) */
        stream_src src = {split_run, split_done, p};
        sum_streams(t->op == MT_RED_NANSUM, t->dt, &src, b, e);
        return;
    }
    for (int64_t i = b; i < e; i++) {
        inner_t in = {.n = 1};
        in.size[0] = t->n[i], in.stride[0] = t->s;
        t->part[i] = reduce_block(t->op, t->dt, t->p + t->lo[i] * t->s, &in).f;
    }
}
static double split_sum(int op, int dt, const char *p, int64_t n, int64_t s) {
    split_task t;
    t.op = op, t.dt = dt, t.p = p, t.s = s;
    int k = 0, depth = 3;
    while (depth < SPLIT_DEPTH && (1 << depth) < NSTREAM * mt_get_num_threads()) depth++;
    split_ranges(&t, 0, n, depth, &k);
    mt__parallel_for(k, 1, split_chunk, &t);
    k = 0;
    return split_combine(&t, n, depth, &k);
}

/* A fold of one long run into a single output: cut into ranges (for a float prod, its chunks, so the
 * result is the serial one whatever the thread count; the other folds do not depend on order), folded
 * on the threads and combined in order. all/any stop every range once one has decided. */
#define FOLD_SPLIT_MIN (2 * MT_GRAIN_SIZE)
typedef struct {
    int op, dt, stop;
    const char *p;
    int64_t s, n, len;
    acc_t part[MAXPARTS];
} fold_split_task;
static void fold_split_chunk(void *p, int64_t b, int64_t e) {
    fold_split_task *t = p;
    for (int64_t i = b; i < e; i++) {
        acc_t *a = &t->part[i];
        fold_init(t->op, a);
        if (__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) continue;
        int64_t lo = i * t->len, m = t->n - lo < t->len ? t->n - lo : t->len;
        fold_run(t->op, t->dt, t->p + lo * t->s, m, t->s, a, &t->stop);
        if (fold_decided(t->op, a)) __atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
    }
}
static acc_t fold_split(int op, int dt, const char *p, const inner_t *in) {
    fold_split_task t;
    t.op = op, t.dt = dt, t.stop = 0, t.p = p, t.s = in->stride[0], t.n = in->size[0];
    int nparts = 4 * mt_get_num_threads();
    if (nparts > MAXPARTS) nparts = MAXPARTS;
    t.len = op == MT_RED_PROD && mt__is_float(dt) ? prod_chunk(t.n) : ((t.n + nparts - 1) / nparts + FW - 1) / FW * FW;
    int64_t k = (t.n + t.len - 1) / t.len;
    mt__parallel_for(k, 1, fold_split_chunk, &t);
    acc_t a = t.part[0];
    for (int64_t i = 1; i < k; i++) fold_combine(op, dt, &a, &t.part[i]);
    fold_finish(op, dt, p, in, &a);
    return a;
}

/* Column sums (one reduced dim whose elements lie a row apart, the innermost kept dim
 * contiguous: a bias gradient, sum(dim=0)): adjacent outputs are summed together, a run of
 * W columns per row, so rows stream through the cache once rather than once per column;
 * pairwise over the rows as sum1 is (leaves of BLOCK rows). Tasks take COLW columns (W = COLW,
 * then 16 for what is left, then one by one). */
#define COLW 128
#define DEF_COLSUM(TAG, T, ACC, LOAD, W)                                                 \
    MT_SIMD static void colsum##W##_##TAG(const char *p, int64_t n, int64_t rs, ACC *out) { \
        if (n > BLOCK) {                                                                 \
            int64_t half = ((n / 2) + BLOCK - 1) / BLOCK * BLOCK;                        \
            ACC b[W];                                                                    \
            colsum##W##_##TAG(p, half, rs, out);                                         \
            colsum##W##_##TAG(p + half * rs, n - half, rs, b);                           \
            for (int l = 0; l < W; l++) out[l] += b[l];                                  \
            return;                                                                      \
        }                                                                                \
        ACC a[W] = {0};                                                                  \
        for (int64_t r = 0; r < n; r++) {                                                \
            const T *q = (const T *)(p + r * rs);                                        \
            for (int l = 0; l < W; l++) a[l] += (ACC)LOAD(q[l]);                         \
        }                                                                                \
        for (int l = 0; l < W; l++) out[l] = a[l];                                       \
    }
/* float16/bfloat16 accumulate in float; nansum's read NaN as 0 */
#define DEF_COLSUMS(TAG, T, ACC, LOAD, NZLOAD)                                           \
    DEF_COLSUM(TAG, T, ACC, LOAD, 128) DEF_COLSUM(TAG, T, ACC, LOAD, 16)                 \
    DEF_COLSUM(nan_##TAG, T, ACC, NZLOAD, 128) DEF_COLSUM(nan_##TAG, T, ACC, NZLOAD, 16)
DEF_COLSUMS(f16, uint16_t, float, mt__f16_to_f32, NZ_F16)
DEF_COLSUMS(bf16, uint16_t, float, mt__bf16_to_f32, NZ_BF16)
DEF_COLSUMS(f32, float, float, ID, NZ)
DEF_COLSUMS(f64, double, double, ID, NZ)

typedef struct { const reduce_task *t; int64_t ncol, nblk; } colsum_task;

/* W outputs from o0 on (adjacent columns of one row of outputs) */
static void colsum_run(const reduce_task *t, int64_t o0, int w) {
    static const int64_t z[2] = {0, 0};
    int64_t rem = o0, off = 0;
    for (int d = t->kn - 1; d >= 0; d--) {
        off += (rem % t->ksz[d]) * t->kst[d];
        rem /= t->ksz[d];
    }
    const char *p = t->base + off;
    int64_t n = t->in->size[0], rs = t->in->stride[0];
    double v[COLW];
    float f[COLW];
    int nan = t->op == MT_RED_NANSUM;
#define CS(TAG, OUT) w == COLW ? colsum128_##TAG(p, n, rs, OUT) : colsum16_##TAG(p, n, rs, OUT)
    switch (t->dtype) {
    case MT_F16: nan ? CS(nan_f16, f) : CS(f16, f); break;
    case MT_BF16: nan ? CS(nan_bf16, f) : CS(bf16, f); break;
    case MT_F32: nan ? CS(nan_f32, f) : CS(f32, f); break;
    default: nan ? CS(nan_f64, v) : CS(f64, v);
    }
#undef CS
    if (t->dtype != MT_F64)
        for (int l = 0; l < w; l++) v[l] = f[l];
    for (int l = 0; l < w; l++) {
        if (t->op == MT_RED_MEAN) v[l] /= (double)t->count;
        t->store((char *[]){t->obase + (o0 + l) * t->osize, (char *)&v[l]}, z, 1, NULL);
    }
}

/* tasks [b, e): (row of outputs, block of COLW columns) */
static void colsum_chunk(void *p, int64_t b, int64_t e) {
    const colsum_task *c = p;
    for (int64_t k = b; k < e; k++) {
        int64_t row = k / c->nblk, c0 = k % c->nblk * COLW, end = c0 + COLW < c->ncol ? c0 + COLW : c->ncol;
        if (end - c0 == COLW) { colsum_run(c->t, row * c->ncol + c0, COLW); continue; }
        for (; c0 + 16 <= end; c0 += 16) colsum_run(c->t, row * c->ncol + c0, 16);
        if (c0 < end) reduce_chunk((void *)c->t, row * c->ncol + c0, row * c->ncol + end);
    }
}

/* amax/amin of columns (the colsum layout): CW adjacent outputs fold together, a row of CW
 * elements at a time, so rows stream through the cache once (per column, each element was a cache
 * line of its own: amax(dim=0) of 512x2048 float32 took 25x PyTorch's time). Ambiguous float
 * results are settled per column as in the row folds. */
#define CW 64
#define DEF_COLEXT(TAG, T, F, IT, LOAD, NAME, CMP, INIT, FLT)                              \
    MT_SIMD static void NAME##_##TAG(const char *p, int64_t n, int64_t rs, int w, acc_t *out) { \
        F v[CW];                                                                         \
        IT u[CW];                                                                        \
        for (int l = 0; l < CW; l++) v[l] = INIT, u[l] = 0;                              \
        for (int64_t r = 0; r < n; r++) {                                                \
            const T *q = (const T *)(p + r * rs);                                        \
            if (w == CW)                                                                 \
                for (int l = 0; l < CW; l++) {                                           \
                    F x = (F)LOAD(q[l]);                                                 \
                    u[l] |= -(IT)(x != x);                                               \
                    v[l] = x CMP v[l] ? x : v[l];                                        \
                }                                                                        \
            else                                                                         \
                for (int l = 0; l < w; l++) {                                            \
                    F x = (F)LOAD(q[l]);                                                 \
                    u[l] |= -(IT)(x != x);                                               \
                    v[l] = x CMP v[l] ? x : v[l];                                        \
                }                                                                        \
        }                                                                                \
        for (int l = 0; l < w; l++) {                                                    \
            if (FLT) out[l].f = v[l];                                                    \
            else out[l].i = (int64_t)v[l];                                               \
            out[l].nan = u[l] != 0;                                                      \
        }                                                                                \
    }
#define DEF_COLEXT2(TAG, T, F, IT, LOAD, LO, HI, FLT)                                    \
    DEF_COLEXT(TAG, T, F, IT, LOAD, colmax, >, LO, FLT)                                  \
    DEF_COLEXT(TAG, T, F, IT, LOAD, colmin, <, HI, FLT)
DEF_COLEXT2(f16, uint16_t, float, int32_t, mt__f16_to_f32, -INFINITY, INFINITY, 1)
DEF_COLEXT2(bf16, uint16_t, float, int32_t, mt__bf16_to_f32, -INFINITY, INFINITY, 1)
DEF_COLEXT2(f32, float, float, int32_t, ID, -INFINITY, INFINITY, 1)
DEF_COLEXT2(f64, double, double, int64_t, ID, -INFINITY, INFINITY, 1)
DEF_COLEXT2(bool, uint8_t, uint8_t, uint8_t, ID, 0, 1, 0)
DEF_COLEXT2(u8, uint8_t, uint8_t, uint8_t, ID, 0, UINT8_MAX, 0)
DEF_COLEXT2(i8, int8_t, int8_t, int8_t, ID, INT8_MIN, INT8_MAX, 0)
DEF_COLEXT2(i16, int16_t, int16_t, int16_t, ID, INT16_MIN, INT16_MAX, 0)
DEF_COLEXT2(i32, int32_t, int32_t, int32_t, ID, INT32_MIN, INT32_MAX, 0)
DEF_COLEXT2(i64, int64_t, int64_t, int64_t, ID, INT64_MIN, INT64_MAX, 0)

/* prod, all/any/count_nonzero and integer sums of columns, the same way: products in order per column
 * (in the leaves' type: float for float16/bfloat16/float32, uint64 wrapping for integers), counts of
 * nonzero elements, wrapping uint64 sums */
#define COLROWS(...)                                                                     \
    for (int64_t r = 0; r < n; r++) {                                                    \
        const T *q = (const T *)(p + r * rs);                                            \
        if (w == CW) for (int l = 0; l < CW; l++) { __VA_ARGS__; }                       \
        else for (int l = 0; l < w; l++) { __VA_ARGS__; }                                \
    }
#define DEF_COLFOLD(TAG, TT, F, LOAD, PT, FLT)                                           \
    MT_SIMD static void colfold_##TAG(int op, const char *p, int64_t n, int64_t rs, int w, acc_t *out) { \
        typedef TT T;                                                                    \
        if (op == MT_RED_PROD) {                                                         \
            PT v[CW];                                                                    \
            for (int l = 0; l < CW; l++) v[l] = 1;                                       \
            COLROWS(v[l] *= (PT)LOAD(q[l]))                                              \
            for (int l = 0; l < w; l++) {                                                \
                if (FLT) out[l].f = (double)v[l];                                        \
                else out[l].i = (int64_t)v[l];                                           \
            }                                                                            \
        } else if (op == MT_RED_ALL || op == MT_RED_ANY || op == MT_RED_COUNT_NONZERO) { \
            int64_t c[CW];                                                               \
            for (int l = 0; l < CW; l++) c[l] = 0;                                       \
            COLROWS(c[l] += (F)LOAD(q[l]) != 0)                                          \
            for (int l = 0; l < w; l++)                                                  \
                out[l].i = op == MT_RED_COUNT_NONZERO ? c[l] : op == MT_RED_ALL ? c[l] == n : c[l] > 0; \
        } else if (!FLT) {                                                               \
            uint64_t v[CW];                                                              \
            for (int l = 0; l < CW; l++) v[l] = 0;                                       \
            COLROWS(v[l] += (uint64_t)(int64_t)q[l])                                     \
            for (int l = 0; l < w; l++) out[l].i = (int64_t)v[l];                        \
        }                                                                                \
    }
DEF_COLFOLD(f16, uint16_t, float, mt__f16_to_f32, float, 1)
DEF_COLFOLD(bf16, uint16_t, float, mt__bf16_to_f32, float, 1)
DEF_COLFOLD(f32, float, float, ID, float, 1)
DEF_COLFOLD(f64, double, double, ID, double, 1)
DEF_COLFOLD(bool, uint8_t, uint8_t, ID, uint64_t, 0)
DEF_COLFOLD(u8, uint8_t, uint8_t, ID, uint64_t, 0)
DEF_COLFOLD(i8, int8_t, int8_t, ID, uint64_t, 0)
DEF_COLFOLD(i16, int16_t, int16_t, ID, uint64_t, 0)
DEF_COLFOLD(i32, int32_t, int32_t, ID, uint64_t, 0)
DEF_COLFOLD(i64, int64_t, int64_t, ID, uint64_t, 0)

/* tasks [b, e): (row of outputs, block of CW columns) */
static void colfold_chunk(void *p, int64_t b, int64_t e) {
    const colsum_task *c = p;
    const reduce_task *t = c->t;
    static const int64_t z[2] = {0, 0};
    int64_t n = t->in->size[0], rs = t->in->stride[0], isz = mt_dtype_itemsize(t->dtype);
    int mx = t->op == MT_RED_AMAX, ext = mx || t->op == MT_RED_AMIN;
    for (int64_t k = b; k < e; k++) {
        int64_t row = k / c->nblk, c0 = k % c->nblk * CW, o0 = row * c->ncol + c0;
        int w = (int)(c0 + CW < c->ncol ? CW : c->ncol - c0);
        int64_t rem = o0, off = 0;
        for (int d = t->kn - 1; d >= 0; d--) {
            off += (rem % t->ksz[d]) * t->kst[d];
            rem /= t->ksz[d];
        }
        const char *q = t->base + off;
        acc_t a[CW];
#define COLCASE(TAG)                                                                     \
    ext ? (mx ? colmax_##TAG(q, n, rs, w, a) : colmin_##TAG(q, n, rs, w, a)) : colfold_##TAG(t->op, q, n, rs, w, a); break;
        REAL_DTYPE_SWITCH(t->dtype, COLCASE, COLCASE)
#undef COLCASE
        for (int l = 0; l < w; l++) {
            fold_finish(t->op, t->dtype, q + l * isz, t->in, &a[l]);
            t->store((char *[]){t->obase + (o0 + l) * t->osize, t->out_from == MT_F64 ? (char *)&a[l].f : (char *)&a[l].i}, z, 1, NULL);
        }
    }
}

mt_status mt__impl_view_as_real(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_view_as_complex(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_permute(mt_tensor *t, int ndim, const int64_t *dims, mt_tensor **out);
mt_status mt__impl_contiguous(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_clone(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_reduce(int op, mt_tensor *x, int ndims, const int64_t *dims, int keepdim, int dtype,
                          mt_tensor *out, mt_tensor **result);

/* prod of complex rows: x permuted to kept dims first, reduced last, made contiguous; each output
 * multiplies its row in order (c10's complex product) */
static mt_status complex_prod(mt_tensor *x, const int *reduced, mt_tensor *buf) {
    int64_t perm[MT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < x->ndim; d++) if (!reduced[d]) perm[k++] = d;
    for (int d = 0; d < x->ndim; d++) if (reduced[d]) perm[k++] = d;
    mt_tensor *p = NULL, *c = NULL;
    MT_TRY(mt__impl_permute(x, x->ndim, perm, &p));
    mt_status st = mt__impl_contiguous(p, &c);
    mt_tensor_release(p);
    if (st) return st;
    int64_t nout = mt_tensor_numel(buf), count = nout ? mt_tensor_numel(c) / nout : 0;
#define PROD_ROWS(T)                                                                                 \
    do {                                                                                             \
        const T *a = (const T *)mt__data(c);                                                         \
        T *o = (T *)mt__data(buf);                                                                   \
        for (int64_t i = 0; i < nout; i++) {                                                         \
            T re = 1, im = 0;                                                                        \
            for (int64_t j = 0; j < count; j++) {                                                    \
                T br = a[2 * (i * count + j)], bi = a[2 * (i * count + j) + 1], t = re * br - im * bi; \
                im = re * bi + im * br, re = t;                                                      \
            }                                                                                        \
            o[2 * i] = re, o[2 * i + 1] = im;                                                        \
        }                                                                                            \
    } while (0)
    if (x->dtype == MT_C64) PROD_ROWS(float);
    else PROD_ROWS(double);
#undef PROD_ROWS
    mt_tensor_release(c);
    return MT_OK;
}

/* sum/mean/nansum of complex: the same reduction of the (..., 2) real view, viewed back; prod
 * by complex_prod; the other reductions raise PyTorch's errors */
static mt_status complex_reduce(int op, mt_tensor *x, int ndims, const int64_t *dims, int keepdim, int dtype,
                                mt_tensor *out, mt_tensor **result) {
    static const char *const kname[] = {NULL, NULL, NULL, "max_values_cpu", "min_values_cpu"};
    if (op == MT_RED_AMAX || op == MT_RED_AMIN) return mt__not_implemented(kname[op], x->dtype);
    if (op == MT_RED_NANSUM) return mt__error(MT_ERR_RUNTIME, "nansum on CPU does not support complex inputs");
    if (op != MT_RED_SUM && op != MT_RED_MEAN && op != MT_RED_PROD) { /* all, any, count_nonzero: z != 0 */
        mt_tensor *b;
        MT_TRY(mt__impl_to_dtype(x, MT_BOOL, 0, &b));
        mt_status st = mt__impl_reduce(op, b, ndims, dims, keepdim, dtype, out, result);
        mt_tensor_release(b);
        return st;
    }
    if (dtype >= 0 && dtype != x->dtype) {
        if (!mt__is_complex(dtype))
            return mt__error(MT_ERR_NOT_IMPLEMENTED, "reducing a complex tensor to %s", mt_dtype_names[dtype]);
        mt_tensor *c;
        MT_TRY(mt__impl_to_dtype(x, dtype, 0, &c));
        mt_status st = complex_reduce(op, c, ndims, dims, keepdim, -1, out, result);
        mt_tensor_release(c);
        return st;
    }
    if (out) return mt__error(MT_ERR_NOT_IMPLEMENTED, "%s of a complex tensor with out=", red_name(op));
    int reduced[MT_MAX_DIMS];
    MT_TRY(mt__reduce_dims(x, ndims, dims, reduced));
    int64_t osz[MT_MAX_DIMS], rdims[MT_MAX_DIMS];
    int ond = 0, nr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!reduced[d]) osz[ond++] = x->sizes[d];
        else {
            rdims[nr++] = d;
            if (keepdim) osz[ond++] = 1;
        }
    }
    if (op == MT_RED_PROD) {
        MT_TRY(mt__alloc(ond, osz, NULL, x->dtype, x->device, result));
        if (x->device != MT_CPU) return MT_OK;
        mt_status st = complex_prod(x, reduced, *result);
        if (st) MT_DROP(*result);
        return st;
    }
    mt_tensor *r = NULL, *s = NULL;
    MT_TRY(mt__impl_view_as_real(x, &r));
    mt_status st;
    if (nr == 0) st = mt__impl_clone(r, &s); /* a 0-dim input, or no dim reduced: the pair dim stays */
    else st = mt__impl_reduce(op, r, nr, rdims, keepdim, -1, NULL, &s);
    mt_tensor_release(r);
    if (st) return st;
    st = mt__impl_view_as_complex(s, result);
    mt_tensor_release(s);
    return st;
}

mt_status mt__impl_reduce(int op, mt_tensor *x, int ndims, const int64_t *dims, int keepdim, int dtype,
                    mt_tensor *out, mt_tensor **result) {
    if ((unsigned)op >= MT_NUM_RED) return mt__error(MT_ERR_VALUE, "unknown reduction %d", op);
    if (dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_VALUE, "unknown dtype %d", dtype);
    if (mt__is_complex(x->dtype)) return complex_reduce(op, x, ndims, dims, keepdim, dtype, out, result);
    if (mt__is_float8(x->dtype) && (dtype < 0 || mt__is_float8(dtype))) {
        /* PyTorch's CPU reduces float8 only in all/any: the truth of each element, exact in float32 */
        static const char *const kname[] = {"sum_cpu", "prod_out_cpu", "sum_cpu", "max_values_cpu", "min_values_cpu",
                                            NULL, NULL, "nansum_cpu", "nonzero_count_cpu"};
        if (kname[op]) return mt__not_implemented(kname[op], x->dtype);
        mt_tensor *f;
        MT_TRY(mt__impl_to_dtype(x, MT_F32, 0, &f));
        mt_status st = mt__impl_reduce(op, f, ndims, dims, keepdim, dtype, out, result);
        mt_tensor_release(f);
        return st;
    }
    int reduced[MT_MAX_DIMS];
    /* result dtype, as PyTorch picks it */
    int res_dt;
    if (dtype >= 0) res_dt = dtype;
    else if (op == MT_RED_COUNT_NONZERO) res_dt = MT_I64;
    else if (op == MT_RED_SUM || op == MT_RED_PROD || op == MT_RED_NANSUM) res_dt = mt__is_float(x->dtype) ? x->dtype : MT_I64;
    else if (op == MT_RED_ALL || op == MT_RED_ANY) res_dt = x->dtype == MT_U8 ? MT_U8 : MT_BOOL;
    else res_dt = x->dtype;
    if (op == MT_RED_MEAN && !mt__is_float(res_dt))
        return mt__error(MT_ERR_RUNTIME,
                         "mean(): could not infer output dtype. %s dtype must be either a floating point or "
                         "complex dtype. Got: %s",
                         dtype >= 0 ? "Optional" : "Input", mt_dtype_names[res_dt]);
    MT_TRY(mt__reduce_dims(x, ndims, dims, reduced));
    if (ndims <= 0 && (op == MT_RED_AMAX || op == MT_RED_AMIN) && mt_tensor_numel(x) == 0)
        return mt__error(MT_ERR_RUNTIME,
                         "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                         "reduction dim with the 'dim' argument.", red_name(op));
    if (op == MT_RED_AMAX || op == MT_RED_AMIN) /* named as given, in the order given (PyTorch's meta check) */
        for (int i = 0; i < ndims; i++) {
            int64_t d = dims[i];
            if (!mt__wrap_dim(&d, x->ndim) && x->ndim && x->sizes[d] == 0)
                return mt__error(MT_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", red_name(op),
                                 (long long)dims[i]);
        }
    int64_t osz[MT_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!reduced[d]) osz[ond++] = x->sizes[d];
        else if (keepdim) osz[ond++] = 1;
    }
    /* sum/prod with dtype= convert the input first */
    mt_tensor *src = x, *tmp = NULL;
    if ((op == MT_RED_SUM || op == MT_RED_PROD || op == MT_RED_MEAN || op == MT_RED_NANSUM) && dtype >= 0 && dtype != x->dtype) {
        MT_TRY(mt_to_dtype(x, dtype, 0, &tmp));
        src = tmp;
    }
    mt_tensor *buf = NULL;
    mt_status st = mt__alloc(ond, osz, NULL, res_dt, x->device, &buf);
    if (st) { mt_tensor_release(tmp); return st; }
    if (x->device == MT_CPU && mt_tensor_numel(buf) > 0) {
        inner_t in;
        mt__reduce_inner(src, reduced, &in);
        int64_t count = 1;
        for (int i = 0; i < in.n; i++) count *= in.size[i];
        /* kept dims of the input, with the output's element index running row-major */
        int kn = 0;
        int64_t ksz[MT_MAX_DIMS], kst[MT_MAX_DIMS];
        int isz = mt_dtype_itemsize(src->dtype);
        for (int d = 0; d < src->ndim; d++)
            if (!reduced[d]) ksz[kn] = src->sizes[d], kst[kn++] = mt__wmul(src->strides[d], isz);
        int64_t nout = mt__numel(kn, ksz);
        char *base = mt__data(src), *obase = mt__data(buf);
        int osize = mt_dtype_itemsize(res_dt), acc_float = mt__is_float(src->dtype);
        int out_from = acc_float ? MT_F64 : MT_I64;
        if (op == MT_RED_ALL || op == MT_RED_ANY || op == MT_RED_COUNT_NONZERO) out_from = MT_I64;
        mt_loop_fn store = mt__cast_loop(res_dt, out_from);
        reduce_task t = {op, src->dtype, res_dt, count, kn, ksz, kst, base, obase, osize, out_from, store, &in};
        int64_t grain = count > 0 ? (MT_GRAIN_SIZE + count - 1) / count : nout;
        if (count == 0) { /* every output is the identity: one fill (the output of an empty reduction can be huge) */
            int one = op == MT_RED_PROD || op == MT_RED_ALL;
            st = mt_fill(buf, op == MT_RED_MEAN ? NAN : one, one, mt__is_float(res_dt) ? MT_SCALAR_FLOAT : MT_SCALAR_INT);
        } else if (nout == 1 && in.n == 1 && count >= 8 * MT_GRAIN_SIZE && mt__is_float(src->dtype) &&
            (op == MT_RED_SUM || op == MT_RED_MEAN || op == MT_RED_NANSUM)) { /* one long sum: split it */
            static const int64_t z[2] = {0, 0};
            double v = split_sum(op, src->dtype, base, count, in.stride[0]);
            if (op == MT_RED_MEAN) v /= (double)count;
            store((char *[]){obase, (char *)&v}, z, 1, NULL);
        } else if (nout == 1 && in.n == 1 && count >= FOLD_SPLIT_MIN && is_fold(op, src->dtype)) {
            static const int64_t z[2] = {0, 0};
            acc_t a = fold_split(op, src->dtype, base, &in);
            store((char *[]){obase, out_from == MT_F64 ? (char *)&a.f : (char *)&a.i}, z, 1, NULL);
        } else if (is_fold(op, src->dtype) && in.n == 1 && kn > 0 && kst[kn - 1] == isz &&
                   ksz[kn - 1] >= 16 && in.stride[0] != isz) {
            colsum_task c = {&t, ksz[kn - 1], (ksz[kn - 1] + CW - 1) / CW};
            mt__parallel_for(nout / c.ncol * c.nblk, 1 + MT_GRAIN_SIZE / (count * CW), colfold_chunk, &c);
        } else if (!is_fold(op, src->dtype) && in.n == 1 && count > 0 && kn > 0 && kst[kn - 1] == isz && ksz[kn - 1] >= 16) {
            colsum_task c = {&t, ksz[kn - 1], (ksz[kn - 1] + COLW - 1) / COLW};
            int64_t ntask = nout / c.ncol * c.nblk;
            mt__parallel_for(ntask, 1 + MT_GRAIN_SIZE / (count * COLW), colsum_chunk, &c);
        } else if ((op == MT_RED_SUM || op == MT_RED_MEAN || op == MT_RED_NANSUM) && mt__is_float(src->dtype) &&
                   in.n == 1 && in.stride[0] == isz && isz <= STREAM_ITEM_MAX && count >= ROWS_MIN) {
            mt__parallel_for(nout, grain, rows_sum_chunk, &t);
        } else if (in.n == 1) { /* one run per output, of any stride */
            mt__parallel_for(nout, grain, rows_fold_chunk, &t);
        } else {
            mt__parallel_for(nout, grain, reduce_chunk, &t);
        }
    }
    mt_tensor_release(tmp);
    if (st) { mt_tensor_release(buf); return st; }
    if (out) {
        if (out->ndim != buf->ndim || memcmp(out->sizes, buf->sizes, buf->ndim * sizeof(int64_t)))
            st = mt_resize_(out, buf->ndim, buf->sizes);
        if (!st) st = mt_copy_(out, buf);
        mt_tensor_release(buf);
        if (st) return st;
        mt_tensor_retain(out);
        *result = out;
        return MT_OK;
    }
    *result = buf;
    return MT_OK;
}

/* ---- max/min along one dim with the index of the first extreme (NaN counts as extreme) ----
 * Rows (the dim contiguous): the extreme by the row fold, then the first element equal to it (or the
 * first NaN), a block of FW checked at a time. Columns (the dim strided, adjacent outputs contiguous):
 * CW outputs a row at a time, each lane keeping its first extreme. Else one element at a time. */
#define DEF_FIND(TAG, T, F, LOAD)                                                        \
    MT_SIMD static int64_t find_##TAG(const char *p, int64_t n, int nan, F m) {          \
        const T *q = (const T *)p;                                                       \
        int64_t i = 0;                                                                   \
        for (; i + FW <= n; i += FW) {                                                   \
            int hit = 0;                                                                 \
            if (nan)                                                                     \
                for (int l = 0; l < FW; l++) { F x = (F)LOAD(q[i + l]); hit |= x != x; } \
            else                                                                         \
                for (int l = 0; l < FW; l++) hit |= (F)LOAD(q[i + l]) == m;              \
            if (hit) break;                                                              \
        }                                                                                \
        for (; i < n; i++) {                                                             \
            F x = (F)LOAD(q[i]);                                                         \
            if (nan ? x != x : x == m) return i;                                         \
        }                                                                                \
        return 0; /* not reached: the extreme is an element */                           \
    }
#define DEF_COLARG(TAG, T, F, LOAD, NAME, CMP)                                           \
    MT_SIMD static void NAME##_##TAG(const char *p, int64_t n, int64_t rs, int w, int64_t *idx) { \
        F v[CW];                                                                         \
        int64_t ix[CW];                                                                  \
        for (int l = 0; l < CW; l++) v[l] = (F)LOAD(((const T *)p)[l < w ? l : 0]), ix[l] = 0; \
        for (int64_t r = 1; r < n; r++) {                                                \
            const T *q = (const T *)(p + r * rs);                                        \
            if (w == CW)                                                                 \
                for (int l = 0; l < CW; l++) {                                           \
                    F x = (F)LOAD(q[l]);                                                 \
                    int up = (v[l] == v[l]) & ((x != x) | (x CMP v[l]));                 \
                    v[l] = up ? x : v[l], ix[l] = up ? r : ix[l];                        \
                }                                                                        \
            else                                                                         \
                for (int l = 0; l < w; l++) {                                            \
                    F x = (F)LOAD(q[l]);                                                 \
                    int up = (v[l] == v[l]) & ((x != x) | (x CMP v[l]));                 \
                    v[l] = up ? x : v[l], ix[l] = up ? r : ix[l];                        \
                }                                                                        \
        }                                                                                \
        for (int l = 0; l < w; l++) idx[l] = ix[l];                                      \
    }
#define DEF_ARG(TAG, T, F, LOAD)                                                         \
    DEF_FIND(TAG, T, F, LOAD) DEF_COLARG(TAG, T, F, LOAD, argmaxc, >) DEF_COLARG(TAG, T, F, LOAD, argminc, <)
DEF_ARG(f16, uint16_t, float, mt__f16_to_f32)
DEF_ARG(bf16, uint16_t, float, mt__bf16_to_f32)
DEF_ARG(f32, float, float, ID)
DEF_ARG(f64, double, double, ID)
DEF_ARG(bool, uint8_t, uint8_t, ID)
DEF_ARG(u8, uint8_t, uint8_t, ID)
DEF_ARG(i8, int8_t, int8_t, ID)
DEF_ARG(i16, int16_t, int16_t, ID)
DEF_ARG(i32, int32_t, int32_t, ID)
DEF_ARG(i64, int64_t, int64_t, ID)

typedef struct {
    int is_min, dt, kn, isz;
    const int64_t *ksz, *kst;
    int64_t n, sd, ncol, nblk; /* sd: the dim's stride in bytes; columns: outputs per row, blocks of CW */
    const char *base;
    char *vbase;
    int64_t *ibase;
} maxdim_task;

static int64_t kept_offset(const maxdim_task *t, int64_t o) {
    int64_t off = 0;
    for (int d = t->kn - 1; d >= 0; d--) {
        off += (o % t->ksz[d]) * t->kst[d];
        o /= t->ksz[d];
    }
    return off;
}

/* the index of the first extreme of the run at p (n elements, sd bytes apart) */
static int64_t arg_run(const maxdim_task *t, const char *p) {
    int64_t n = t->n, sd = t->sd;
    if (sd == t->isz) {
        int op = t->is_min ? MT_RED_AMIN : MT_RED_AMAX;
        acc_t a;
        fold_init(op, &a);
        fold_run(op, t->dt, p, n, sd, &a, NULL);
#define FIND(TAG, F, M) return find_##TAG(p, n, a.nan, (F)(M));
        switch (t->dt) {
        case MT_F16: FIND(f16, float, a.f)
        case MT_BF16: FIND(bf16, float, a.f)
        case MT_F32: FIND(f32, float, a.f)
        case MT_F64: FIND(f64, double, a.f)
        case MT_BOOL: FIND(bool, uint8_t, a.i)
        case MT_U8: FIND(u8, uint8_t, a.i)
        case MT_I8: FIND(i8, int8_t, a.i)
        case MT_I16: FIND(i16, int16_t, a.i)
        case MT_I32: FIND(i32, int32_t, a.i)
        case MT_I64: FIND(i64, int64_t, a.i)
        }
#undef FIND
    }
    int64_t best = 0;
    if (mt__is_float(t->dt)) {
        double bf = 0;
        for (int64_t i = 0; i < n; i++) {
            double v;
            switch (t->dt) {
            case MT_F16: v = mt__f16_to_f32(*(const uint16_t *)(p + i * sd)); break;
            case MT_BF16: v = mt__bf16_to_f32(*(const uint16_t *)(p + i * sd)); break;
            case MT_F32: v = *(const float *)(p + i * sd); break;
            default: v = *(const double *)(p + i * sd);
            }
            if (i == 0) { bf = v; continue; }
            if (bf != bf) break; /* a NaN wins and stays */
            if (v != v || (t->is_min ? v < bf : v > bf)) bf = v, best = i;
        }
        return best;
    }
    static const int64_t z[2] = {0, 0};
    mt_loop_fn to_i = mt__cast_loop(MT_I64, t->dt);
    int64_t bi = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        to_i((char *[]){(char *)&v, (char *)(p + i * sd)}, z, 1, NULL);
        if (i == 0 || (t->is_min ? v < bi : v > bi)) bi = v, best = i;
    }
    return best;
}

static void maxdim_put(const maxdim_task *t, int64_t o, const char *p, int64_t best) {
    memcpy(t->vbase + o * t->isz, p + best * t->sd, (size_t)t->isz);
    t->ibase[o] = best;
}

static void maxdim_rows(void *p, int64_t b, int64_t e) {
    const maxdim_task *t = p;
    for (int64_t o = b; o < e; o++) {
        const char *q = t->base + kept_offset(t, o);
        maxdim_put(t, o, q, arg_run(t, q));
    }
}

/* tasks [b, e): (row of outputs, block of CW columns) */
static void maxdim_cols(void *p, int64_t b, int64_t e) {
    const maxdim_task *t = p;
    for (int64_t k = b; k < e; k++) {
        int64_t row = k / t->nblk, c0 = k % t->nblk * CW, o0 = row * t->ncol + c0, idx[CW];
        int w = (int)(c0 + CW < t->ncol ? CW : t->ncol - c0);
        const char *q = t->base + kept_offset(t, o0);
#define COLCASE(TAG) t->is_min ? argminc_##TAG(q, t->n, t->sd, w, idx) : argmaxc_##TAG(q, t->n, t->sd, w, idx); break;
        REAL_DTYPE_SWITCH(t->dt, COLCASE, COLCASE)
#undef COLCASE
        for (int l = 0; l < w; l++) maxdim_put(t, o0 + l, q + l * t->isz, idx[l]);
    }
}

mt_status mt__impl_max_dim(int is_min, mt_tensor *x, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices) {
    MT_TRY(mt__wrap_dim(&dim, x->ndim));
    if (mt__is_complex(x->dtype))
        return mt__error(MT_ERR_RUNTIME, "%s(): does not support complex input", is_min ? "min" : "max");
    MT_NO_FLOAT8(x->dtype, is_min ? "min_cpu" : "max_cpu");
    int64_t n = x->ndim ? x->sizes[dim] : 1, st_d = x->ndim ? x->strides[dim] : 0;
    const char *name = is_min ? "min" : "max";
    if (n == 0)
        return mt__error(MT_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", name, (long long)dim);
    int64_t osz[MT_MAX_DIMS], ksz[MT_MAX_DIMS], kst[MT_MAX_DIMS];
    int ond = 0, kn = 0, isz = mt_dtype_itemsize(x->dtype);
    for (int d = 0; d < x->ndim; d++) {
        if (d == dim) { if (keepdim) osz[ond++] = 1; continue; }
        osz[ond++] = x->sizes[d];
        ksz[kn] = x->sizes[d], kst[kn++] = mt__wmul(x->strides[d], isz);
    }
    MT_TRY(mt__alloc(ond, osz, NULL, x->dtype, x->device, values));
    mt_status st = mt__alloc(ond, osz, NULL, MT_I64, x->device, indices);
    if (st) { MT_DROP(*values); return st; }
    if (x->device != MT_CPU) return MT_OK;
    int64_t nout = mt__numel(kn, ksz);
    if (nout == 0) return MT_OK;
    maxdim_task t = {is_min, x->dtype, kn, isz, ksz, kst, n, mt__wmul(st_d, isz), 0, 0,
                     mt__data(x), mt__data(*values), (int64_t *)mt__data(*indices)};
    if (t.sd != isz && kn > 0 && kst[kn - 1] == isz && ksz[kn - 1] >= 16) {
        t.ncol = ksz[kn - 1], t.nblk = (t.ncol + CW - 1) / CW;
        mt__parallel_for(nout / t.ncol * t.nblk, 1 + MT_GRAIN_SIZE / (n * CW), maxdim_cols, &t);
    } else {
        mt__parallel_for(nout, 1 + MT_GRAIN_SIZE / n, maxdim_rows, &t);
    }
    return MT_OK;
}
