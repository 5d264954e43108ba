/* gemm_f32.c — float32 GEMM: C = alpha*A@B + beta*C over a batch of strided matrices (and the
 * same strided entry for float64, which OpenBLAS runs).
 *
 * On AVX-512 it is our own, BLIS-style: A is packed into panels of 12 rows ([kc][12]) and B into
 * panels of 32 columns ([kc][32]); a 12x32 block of C lives in 24 zmm registers while the kernel
 * walks kc steps of one broadcast of A and two vector loads of B per row pair. A B panel stays in
 * L1 while the kernel sweeps the A panels of a row block (in L2).
 *
 * Threads share the packed copies: a kc block of a row block of A, or a panel of B, is packed by
 * the first thread that needs it (an atomic claim; the others wait the microseconds it takes),
 * right before that thread's first use, so it is read from memory once and the copy is still in
 * cache (a thread that would wait for a B panel packs a later one of its block meanwhile). With a single row block (M <= 240) no B panel has a second user, so each thread packs
 * the kc x 32 block it is about to use into its own buffer instead. The work is a list of (batch, row
 * block, column block) items taken from an atomic counter, so a thread slowed by another process
 * on its core takes fewer items instead of holding the others up. Every C element sees the same kc
 * blocks in the same order whatever the split: results do not depend on the thread count.
 * Without AVX-512, or with MINDTORCH_SGEMM_OPENBLAS set (A/B measurements), the same call goes to
 * OpenBLAS (the operands then need a unit stride). */
#include <cblas.h>
#include <stdint.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/internal.h"
#include "simd_avx512.h"

#define MR 12
#define NR 32
#define KC 256
#define MC 240             /* rows per row block: 240 x 256 floats of packed A = 240 KiB, in L2 */
#define A_BUDGET (4 << 20) /* floats of packed A per section (16 MiB: 1024 x 3072 in one section) */
#define B_BUDGET (4 << 20) /* floats of packed B per section (16 MiB): larger products go in sections */
#define C_BLOCK (96 << 10) /* floats of C per item at most (384 KiB): it stays in L2 with A's kc block over K */
#define SMALL_SCRATCH 4096 /* floats of scratch kept on the stack */
#define SERIAL_MACS (1 << 20) /* below this many multiply-adds one thread is faster than waking the pool */
#define SERIAL_GEMV_MACS (1 << 17) /* a row of A reads each element of B once: bandwidth, which the threads add */

typedef struct {
    int64_t m, n, k, kcb, mcb, nkb; /* sizes; kc and row block sizes; kc blocks */
    const float *a, *b;
    float *c;
    int64_t sab, sam, sak, sbb, sbk, sbn, scb, scm;
    float alpha, beta;
    /* the section being run: batches [b0, b0 + nbat) x row blocks [rb0, rb0 + nrb) x columns [n0, n0 + ncols) */
    int64_t b0, nbat, rb0, nrb, n0, ncols, npanels, colb, ncb, items;
    float *apk;        /* packed A of the section: row block rb of batch bi at (bi * nrb + rb) * mcb * k */
    float *bpk;        /* packed B of the section: [batch][k][npanels * NR] */
    int *astate, *bstate; /* per (batch, row block, kc block) and (batch, panel): 0 not packed, 1 being packed, 2 ready */
    int64_t next_item;
} sgemm_plan;

#ifdef MT_HAVE_AVX512_HELPERS

/* the mask of the first n of 16 lanes (none for n <= 0, all for n >= 16) */
static inline __mmask16 lanes(int64_t n) { return n <= 0 ? 0 : n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1); }

/* C[mr x nr] (row stride ldc) = alpha * (A panel @ B panel) + beta * C */
static AVX512 void kernel_12x32(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                                float beta, int mr, int nr) {
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
           c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00, c80 = c00,
           c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
    for (int i = 0; i < mr; i++) { /* toward L2 only: in L1 these lines would evict the B panel */
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T1);
        _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T1);
    }
#define ROW(i, x0, x1) { __m512 av = _mm512_set1_ps(ap[i]); x0 = _mm512_fmadd_ps(av, b0, x0); x1 = _mm512_fmadd_ps(av, b1, x1); }
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; p++) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
        ROW(0, c00, c01) ROW(1, c10, c11) ROW(2, c20, c21) ROW(3, c30, c31) ROW(4, c40, c41) ROW(5, c50, c51)
        ROW(6, c60, c61) ROW(7, c70, c71) ROW(8, c80, c81) ROW(9, c90, c91) ROW(10, ca0, ca1) ROW(11, cb0, cb1)
        ap += MR;
        bp += NR;
    }
#undef ROW
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
    /* every load of C before any store: a load 4 KiB after a pending store (C rows a multiple of
     * 1024 floats apart) would wait on it (4K aliasing) */
#define SCALE(i, x0, x1)                                                                         \
    x0 = _mm512_mul_ps(x0, va), x1 = _mm512_mul_ps(x1, va);                                      \
    if (beta != 0 && i < mr) {                                                                   \
        x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, c + i * ldc), x0);                    \
        x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, c + i * ldc + 16), x1);               \
    }
#define STORE(i, x0, x1) \
    if (i < mr) _mm512_mask_storeu_ps(c + i * ldc, m0, x0), _mm512_mask_storeu_ps(c + i * ldc + 16, m1, x1);
    SCALE(0, c00, c01) SCALE(1, c10, c11) SCALE(2, c20, c21) SCALE(3, c30, c31) SCALE(4, c40, c41)
    SCALE(5, c50, c51) SCALE(6, c60, c61) SCALE(7, c70, c71) SCALE(8, c80, c81) SCALE(9, c90, c91)
    SCALE(10, ca0, ca1) SCALE(11, cb0, cb1)
    STORE(0, c00, c01) STORE(1, c10, c11) STORE(2, c20, c21) STORE(3, c30, c31) STORE(4, c40, c41)
    STORE(5, c50, c51) STORE(6, c60, c61) STORE(7, c70, c71) STORE(8, c80, c81) STORE(9, c90, c91)
    STORE(10, ca0, ca1) STORE(11, cb0, cb1)
#undef SCALE
#undef STORE
}

/* rows [0, mc) x cols [0, kc) of A into MR-row panels ap[panel][p][MR], zero-padded */
static AVX512 void pack_a(int64_t mc, int64_t kc, const float *a, int64_t sam, int64_t sak, float *ap) {
    for (int64_t i = 0; i < mc; i += MR, ap += MR * kc) {
        int64_t mr = mt__min64(mc - i, MR);
        const float *s = a + i * sam;
        if (mr < MR) memset(ap, 0, sizeof(float) * MR * kc);
        if (sak == 1) mt__transpose_f32(s, sam, ap, MR, mr, kc); /* rows of A are contiguous */
        else if (sam == 1 && mr == MR)
            for (int64_t p = 0; p < kc; p++) {
                _mm512_mask_storeu_ps(ap + p * MR, 0x0fff, _mm512_maskz_loadu_ps(0x0fff, s + p * sak));
            }
        else
            for (int64_t p = 0; p < kc; p++)
                for (int64_t r = 0; r < mr; r++) ap[p * MR + r] = s[r * sam + p * sak];
    }
}

/* cols [0, nr) (nr <= NR) x rows [0, kc) of B into one panel bp[p][NR], zero-padded */
static AVX512 void pack_b(int64_t kc, int64_t nr, const float *b, int64_t sbk, int64_t sbn, float *bp) {
    if (nr < NR) memset(bp, 0, sizeof(float) * NR * kc);
    if (sbn == 1) {
        __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
        for (int64_t p = 0; p < kc; p++, bp += NR) {
            _mm512_storeu_ps(bp, _mm512_maskz_loadu_ps(m0, b + p * sbk));
            _mm512_storeu_ps(bp + 16, _mm512_maskz_loadu_ps(m1, b + p * sbk + 16));
        }
    } else /* (a B with contiguous columns goes through pack_panel's transposes) */
        for (int64_t p = 0; p < kc; p++)
            for (int64_t q = 0; q < nr; q++) bp[p * NR + q] = b[p * sbk + q * sbn];
}

/* equal blocks of at most `most`, each a multiple of `unit` where possible */
static int64_t block_size(int64_t len, int64_t most, int64_t unit) {
    int64_t nblocks = (len + most - 1) / most, size = (len + nblocks - 1) / nblocks;
    size = (size + unit - 1) / unit * unit;
    return size < most ? size : most;
}

/* where panel j of the kc block at row pc (kc rows) of batch bi sits in the section's packed B */
static float *packed_panel(const sgemm_plan *g, int64_t bi, int64_t pc, int64_t kc, int64_t j) {
    return g->bpk + (bi * g->k + pc) * g->npanels * NR + j * kc * NR;
}

/* cols [j*NR, j*NR + nr) x rows [pc, pc + kc) of batch bi's B into one panel bp[kc][NR] */
static AVX512 void pack_b_block(const sgemm_plan *g, int64_t bi, int64_t pc, int64_t kc, int64_t j, float *bp) {
    int64_t nr = mt__min64(g->ncols - j * NR, NR);
    const float *b = g->b + (g->b0 + bi) * g->sbb + (g->n0 + j * NR) * g->sbn + pc * g->sbk;
    if (g->sbk == 1 && g->sbn != 1) { /* transposed B: columns contiguous */
        if (nr < NR) memset(bp, 0, sizeof(float) * NR * kc);
        for (int64_t i = 0; i < nr; i += 16)
            mt__transpose_f32(b + i * g->sbn, g->sbn, bp + i, NR, mt__min64(nr - i, 16), kc);
    } else
        pack_b(kc, nr, b, g->sbk, g->sbn, bp);
}

/* B's columns [j*NR, j*NR + nr) of batch bi, every kc block, into the section's packed copy. A
 * transposed B (columns contiguous) is read a 16-column group at a time along all of K, so each
 * of its rows is one sequential stream rather than kc-sized pieces fetched in separate passes. */
static AVX512 void pack_panel(const sgemm_plan *g, int64_t bi, int64_t j) {
    int64_t nr = mt__min64(g->ncols - j * NR, NR);
    const float *b = g->b + (g->b0 + bi) * g->sbb + (g->n0 + j * NR) * g->sbn;
    if (!(g->sbk == 1 && g->sbn != 1)) {
        for (int64_t pc = 0; pc < g->k; pc += g->kcb) {
            int64_t kc = mt__min64(g->k - pc, g->kcb);
            pack_b_block(g, bi, pc, kc, j, packed_panel(g, bi, pc, kc, j));
        }
        return;
    }
    for (int64_t i = 0; i < nr; i += 16)
        for (int64_t pc = 0; pc < g->k; pc += g->kcb) {
            int64_t kc = mt__min64(g->k - pc, g->kcb);
            float *panel = packed_panel(g, bi, pc, kc, j);
            if (nr < NR && i == 0) memset(panel, 0, sizeof(float) * NR * kc);
            mt__transpose_f32(b + i * g->sbn + pc, g->sbn, panel + i, NR, mt__min64(nr - i, 16), kc);
        }
}

/* 1: the caller packs the part `st` guards, then calls publish(st); 0: it is ready (another
 * thread may have packed it while this one waited) */
static int claim(int *st) {
    if (__atomic_load_n(st, __ATOMIC_ACQUIRE) == 2) return 0;
    int expect = 0;
    if (__atomic_compare_exchange_n(st, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
    for (int spins = 0; __atomic_load_n(st, __ATOMIC_ACQUIRE) != 2; spins++)
        if (spins < 4096) _mm_pause();
        else sched_yield(); /* the packing thread was preempted */
    return 0;
}
/* 1: the caller now packs the part `st` guards (it was not claimed); never waits */
static int try_claim(int *st) {
    int expect = 0;
    return __atomic_load_n(st, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(st, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}
static void publish(int *st) { __atomic_store_n(st, 2, __ATOMIC_RELEASE); }

/* where the kc block at column pc of row block rb (section-relative) of batch bi sits in packed A */
static float *packed_a(const sgemm_plan *g, int64_t bi, int64_t rb, int64_t pc) {
    return g->apk + (bi * g->nrb + rb) * g->mcb * g->k + pc * g->mcb;
}

/* one item: row block rb x the panels of column block cb, for batch bi of the section. Each kc
 * block of the row block is packed by the first item that needs it. With one row block in the
 * section (M <= MC: every Linear on a short sequence) each B panel has one user, so it is packed
 * right before use into this thread's own buffer, in L1; else B panels are packed (whole K) on
 * first use into the section's shared copy, for the other row blocks. */
static AVX512 void gemm_item(sgemm_plan *g, int64_t bi, int64_t rb, int64_t cb) {
    int64_t r0 = (g->rb0 + rb) * g->mcb, mc = mt__min64(g->m - r0, g->mcb);
    int64_t j0 = cb * g->colb, j1 = j0 + g->colb < g->npanels ? j0 + g->colb : g->npanels;
    float *c = g->c + (g->b0 + bi) * g->scb + r0 * g->scm + g->n0;
    const float *a = g->a + (g->b0 + bi) * g->sab + r0 * g->sam;
    float own[KC * NR] __attribute__((aligned(64)));
    for (int64_t pc = 0, kb = 0; pc < g->k; pc += g->kcb, kb++) {
        int64_t kc = mt__min64(g->k - pc, g->kcb);
        float beta = pc ? 1.0f : g->beta, *ap = packed_a(g, bi, rb, pc);
        int *ast = g->astate + (bi * g->nrb + rb) * g->nkb + kb;
        if (claim(ast)) pack_a(mc, kc, a + pc * g->sak, g->sam, g->sak, ap), publish(ast);
        for (int64_t j = j0; j < j1; j++) {
            const float *panel = own;
            if (g->nrb == 1) pack_b_block(g, bi, pc, kc, j, own);
            else {
                int *bst = g->bstate + bi * g->npanels + j;
                if (!pc) {
                    /* another thread is packing this panel: pack a later one of the block meanwhile */
                    for (int64_t h = j + 1; h < j1 && __atomic_load_n(bst, __ATOMIC_ACQUIRE) == 1; h++)
                        if (try_claim(bst + h - j)) pack_panel(g, bi, h), publish(bst + h - j);
                    if (claim(bst)) pack_panel(g, bi, j), publish(bst);
                }
                panel = packed_panel(g, bi, pc, kc, j);
            }
            int nr = (int)mt__min64(g->ncols - j * NR, NR);
            for (int64_t ir = 0; ir < mc; ir += MR)
                kernel_12x32(kc, ap + ir * kc, panel, c + ir * g->scm + j * NR, g->scm, g->alpha, beta,
                             (int)mt__min64(mc - ir, MR), nr);
        }
    }
}

static void sgemm_task(void *ctx, int64_t t0, int64_t t1) { /* one call per thread: items until none is left */
    (void)t0, (void)t1;
    sgemm_plan *g = ctx;
    int64_t per_batch = g->nrb * g->ncb;
    for (int64_t i; (i = __atomic_fetch_add(&g->next_item, 1, __ATOMIC_RELAXED)) < g->items;)
        gemm_item(g, i / per_batch, i % per_batch % g->nrb, i % per_batch / g->nrb);
}

/* ---- one row of A (M = 1: a Linear on one token, as in decoding) ----
 * The packed path copies all of B to make one row of C; here B is read once where it lies: row-major B
 * (unit column stride) 16 columns at a time, a transposed one (unit row stride: Linear's weight) as 16x16
 * tiles transposed in registers. Each C element sees the same kc blocks, the same sequential FMA chain
 * within a block and the same alpha/beta steps as kernel_12x32 gives it, so the row's bits are those of
 * the same row in a bigger product, at any thread count. */
#define GEMV_COLS 16 /* columns of C per work item */
#define GEMV_AHEAD 128 /* floats ahead on each of a tile's 16 rows: more streams than the prefetcher follows */
#define GEMV_FAR (2 << 20) /* floats of B (8 MiB) from which it streams from memory */

/* r[i] <- column i of the 16x16 tile whose rows are r[0..15] */
static inline __attribute__((always_inline)) AVX512 void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2)
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    for (int i = 0; i < 16; i += 4) { /* r[4g + q], 128-bit lane L: rows 4g..4g+3 of column 4L + q */
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44), r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44), r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int q = 0; q < 4; q++) {
        t[q] = _mm512_shuffle_f32x4(r[q], r[q + 4], 0x88), t[q + 4] = _mm512_shuffle_f32x4(r[q], r[q + 4], 0xDD);
        t[q + 8] = _mm512_shuffle_f32x4(r[q + 8], r[q + 12], 0x88);
        t[q + 12] = _mm512_shuffle_f32x4(r[q + 8], r[q + 12], 0xDD);
    }
    for (int i = 0; i < 8; i++) r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88), r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
}

/* columns [n0, n0 + w) (w <= 16) of C's row in batch bi */
static AVX512 void gemv_cols(const sgemm_plan *g, int64_t bi, int64_t n0, int w) {
    const float *a = g->a + bi * g->sab, *b = g->b + bi * g->sbb + n0 * g->sbn;
    float *c = g->c + bi * g->scb + n0;
    __mmask16 mw = lanes(w);
    int far = g->n * g->k >= GEMV_FAR; /* B comes from memory: prefetch (in cache, it only costs) */
    for (int64_t pc = 0; pc < g->k; pc += g->kcb) {
        int64_t kc = mt__min64(g->k - pc, g->kcb);
        __m512 acc = _mm512_setzero_ps();
        if (g->sbn == 1) {
            for (int64_t p = pc; p < pc + kc; p++)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(a[p * g->sak]), _mm512_maskz_loadu_ps(mw, b + p * g->sbk), acc);
        } else { /* sbk == 1 */
            for (int64_t p = pc; p < pc + kc; p += 16) {
                int r = (int)mt__min64(16, pc + kc - p);
                __m512 t[16];
                if (far && p + GEMV_AHEAD < g->k)
                    for (int i = 0; i < w; i++) _mm_prefetch((const char *)(b + i * g->sbn + p + GEMV_AHEAD), _MM_HINT_T0);
                for (int i = 0; i < 16; i++)
                    t[i] = i < w ? _mm512_maskz_loadu_ps(lanes(r), b + i * g->sbn + p) : _mm512_setzero_ps();
                transpose16(t);
                for (int q = 0; q < r; q++) acc = _mm512_fmadd_ps(_mm512_set1_ps(a[(p + q) * g->sak]), t[q], acc);
            }
        }
        float beta = pc ? 1.0f : g->beta;
        acc = _mm512_mul_ps(acc, _mm512_set1_ps(g->alpha));
        if (beta != 0) acc = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(mw, c), acc);
        _mm512_mask_storeu_ps(c, mw, acc);
    }
}

static void gemv_task(void *ctx, int64_t t0, int64_t t1) {
    sgemm_plan *g = ctx;
    int64_t per_batch = (g->n + GEMV_COLS - 1) / GEMV_COLS;
    for (int64_t t = t0; t < t1; t++) {
        int64_t n0 = t % per_batch * GEMV_COLS;
        gemv_cols(g, t / per_batch, n0, (int)mt__min64(GEMV_COLS, g->n - n0));
    }
}

/* m == n == 1 with A's row and B's column contiguous along k (dot, a full tensordot): a dot product.
 * gemv_cols would run one lane and one FMA chain (1 ms for k = 2^20, 20x PyTorch). Each DOT_CHUNK
 * elements give a partial sum (four 16-lane accumulators); the threads share the chunks and the
 * partials are added in chunk order, so the result does not depend on the thread count. float16 and
 * bfloat16 operands are widened to float32 as they are loaded (exactly), so their sums are the bits
 * of the float32 dot product of the widened vectors, which their small products take (linalg.c). */
#define DOT_CHUNK 4096
typedef struct {
    const char *a, *b;  /* vector i of the batch at a + i * sab elements, b + i * sbb */
    int64_t sab, sbb, k, nchunks;
    int kind;           /* element type: 0 float32, 1 float16, 2 bfloat16 */
    float *part;
} dot_plan;

/* 16 elements from p (r < 16: the first r, the rest zero) widened to float32 */
static inline __attribute__((always_inline)) AVX512 __m512 dot_load(int kind, const char *p, int64_t r) {
    if (kind == 0) return r < 16 ? _mm512_maskz_loadu_ps(lanes(r), p) : _mm512_loadu_ps((const float *)p);
    __m256i h;
    if (r < 16) {
        uint16_t t[16] = {0};
        memcpy(t, p, r * 2);
        h = _mm256_loadu_si256((const __m256i *)t);
    } else {
        h = _mm256_loadu_si256((const __m256i *)p);
    }
    if (kind == 1) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline __attribute__((always_inline)) AVX512 void dot_chunks(const dot_plan *d, int kind, int64_t t0, int64_t t1) {
    int64_t es = kind ? 2 : 4;
    for (int64_t t = t0; t < t1; t++) {
        int64_t bi = t / d->nchunks, p0 = t % d->nchunks * DOT_CHUNK, kc = mt__min64(DOT_CHUNK, d->k - p0);
        const char *a = d->a + (bi * d->sab + p0) * es, *b = d->b + (bi * d->sbb + p0) * es;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        int64_t p = 0;
        for (; p + 64 <= kc; p += 64) {
            s0 = _mm512_fmadd_ps(dot_load(kind, a + p * es, 16), dot_load(kind, b + p * es, 16), s0);
            s1 = _mm512_fmadd_ps(dot_load(kind, a + (p + 16) * es, 16), dot_load(kind, b + (p + 16) * es, 16), s1);
            s2 = _mm512_fmadd_ps(dot_load(kind, a + (p + 32) * es, 16), dot_load(kind, b + (p + 32) * es, 16), s2);
            s3 = _mm512_fmadd_ps(dot_load(kind, a + (p + 48) * es, 16), dot_load(kind, b + (p + 48) * es, 16), s3);
        }
        for (; p < kc; p += 16)
            s0 = _mm512_fmadd_ps(dot_load(kind, a + p * es, kc - p), dot_load(kind, b + p * es, kc - p), s0);
        d->part[t] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    }
}

static AVX512 void dot_task(void *ctx, int64_t t0, int64_t t1) {
    const dot_plan *d = ctx;
    if (d->kind == 0) dot_chunks(d, 0, t0, t1);
    else if (d->kind == 1) dot_chunks(d, 1, t0, t1);
    else dot_chunks(d, 2, t0, t1);
}

/* the nb sums of d (its a, b, sab, sbb, k, kind set) into sums[i * ssum]: 0 when done, 1 when the
 * partials have no memory */
static int dot_run(dot_plan *d, int64_t nb, int nt, float *sums, int64_t ssum) {
    d->nchunks = (d->k + DOT_CHUNK - 1) / DOT_CHUNK;
    float small[256];
    d->part = nb * d->nchunks <= 256 ? small : malloc(nb * d->nchunks * sizeof(float));
    if (!d->part) return 1;
    mt__parallel_for(nb * d->nchunks, nt > 1 ? 1 : nb * d->nchunks, dot_task, d);
    for (int64_t bi = 0; bi < nb; bi++) {
        float s = 0;
        for (int64_t i = 0; i < d->nchunks; i++) s += d->part[bi * d->nchunks + i];
        sums[bi * ssum] = s;
    }
    if (d->part != small) free(d->part);
    return 0;
}

/* 0 when done; 1 when the partials have no memory (the caller takes the gemv path) */
static int sgemm_dot(const sgemm_plan *g, int64_t nb, int nt) {
    dot_plan d = {.a = (const char *)g->a, .b = (const char *)g->b, .sab = g->sab, .sbb = g->sbb, .k = g->k};
    float small[64], *s = nb <= 64 ? small : malloc(nb * sizeof(float));
    if (!s || dot_run(&d, nb, nt, s, 1)) { if (s != small) free(s); return 1; }
    for (int64_t bi = 0; bi < nb; bi++) {
        float *c = g->c + bi * g->scb;
        *c = g->beta != 0 ? g->alpha * s[bi] + g->beta * *c : g->alpha * s[bi];
    }
    if (s != small) free(s);
    return 0;
}

static int sgemm_avx512(sgemm_plan *g, int64_t nb) {
    if (!mt__cpu_avx512f() || getenv("MINDTORCH_SGEMM_OPENBLAS")) return 1; /* the switch: for A/B runs */
    int nt = mt_get_num_threads();
    int gemv = g->m == 1 && (g->sbn == 1 || g->sbk == 1);
    if ((double)nb * g->m * g->n * g->k < (gemv ? SERIAL_GEMV_MACS : SERIAL_MACS)) nt = 1;
    g->kcb = block_size(g->k, KC, 1), g->mcb = block_size(g->m, MC, MR), g->nkb = (g->k + g->kcb - 1) / g->kcb;
    if (gemv && g->n == 1 && g->sak == 1 && g->sbk == 1 && !sgemm_dot(g, nb, nt)) return 0;
    if (gemv) {
        int64_t items = nb * ((g->n + GEMV_COLS - 1) / GEMV_COLS);
        mt__parallel_for(items, nt > 1 ? 1 : items, gemv_task, g);
        return 0;
    }
    /* sections: whole batches while their packed A and B fit the budgets, else row blocks and
     * column ranges of one matrix (A is then packed again per column range, B per row range) */
    int64_t rblocks = (g->m + g->mcb - 1) / g->mcb, npad = (g->n + NR - 1) / NR * NR;
    int64_t asz = rblocks * g->mcb * g->k, bsz = g->k * npad, nbat = 1, nrb = rblocks, ncols = g->n;
    if (asz <= A_BUDGET && bsz <= B_BUDGET) nbat = mt__min64(nb, mt__min64(A_BUDGET / asz, B_BUDGET / bsz));
    if (asz > A_BUDGET) nrb = A_BUDGET / (g->mcb * g->k) > 1 ? A_BUDGET / (g->mcb * g->k) : 1;
    if (bsz > B_BUDGET && nrb > 1) ncols = B_BUDGET / g->k / NR * NR > NR ? B_BUDGET / g->k / NR * NR : NR;
    int64_t npanels = (ncols + NR - 1) / NR;
    int64_t afl = nbat * nrb * g->mcb * g->k, bfl = nrb > 1 ? nbat * g->k * npanels * NR : 0;
    int64_t total = afl + bfl + nbat * (nrb * g->nkb + npanels) + 16;
    float small[SMALL_SCRATCH] __attribute__((aligned(64))); /* tiny products skip the allocator */
    mt_tensor *scratch = NULL;
    if (total > SMALL_SCRATCH && mt__alloc(1, &total, NULL, MT_F32, MT_CPU, &scratch))
        return 1; /* out of memory: OpenBLAS needs none */
    g->apk = scratch ? (float *)mt__data(scratch) : small;
    g->bpk = g->apk + afl;
    g->astate = (int *)(g->bpk + bfl);
    for (int64_t b0 = 0; b0 < nb; b0 += nbat)
        for (int64_t rb0 = 0; rb0 < rblocks; rb0 += nrb)
            for (int64_t n0 = 0; n0 < g->n; n0 += ncols) {
                g->b0 = b0, g->nbat = mt__min64(nb - b0, nbat), g->rb0 = rb0, g->nrb = mt__min64(rblocks - rb0, nrb);
                g->n0 = n0, g->ncols = mt__min64(g->n - n0, ncols), g->npanels = (g->ncols + NR - 1) / NR;
                /* column blocks: enough items for the threads to balance (4 each), at least 2 panels wide,
                 * an item's C no larger than C_BLOCK (1024x768x3072 -1.5%, the 1x1 convolution's
                 * 256x3136x64 -14%), and where it can be, a count the threads divide: with 9 equal items
                 * for 2 threads one of them ran a ninth of the section alone (1024x3072x768 lost 8%) */
                int64_t rows = g->nbat * g->nrb, most = g->npanels / 2 > 1 ? g->npanels / 2 : 1;
                int64_t want = nt > 1 ? mt__min64((4 * nt + rows - 1) / rows, most) : 1;
                int64_t cmax = C_BLOCK / (g->mcb * NR) > 2 ? C_BLOCK / (g->mcb * NR) : 2;
                int64_t need = mt__min64((g->npanels + cmax - 1) / cmax, most);
                if (g->nrb == 1 && g->nkb == 1) need = 1; /* C written once, each B block used once */
                g->ncb = want = want > need ? want : need;
                for (int64_t c = want; nt > 1 && c <= mt__min64(most, want + nt); c++) {
                    int64_t colb = (g->npanels + c - 1) / c;
                    if (rows * ((g->npanels + colb - 1) / colb) % nt == 0) { g->ncb = c; break; }
                }
                g->colb = (g->npanels + g->ncb - 1) / g->ncb, g->ncb = (g->npanels + g->colb - 1) / g->colb;
                g->items = rows * g->ncb;
                memset(g->astate, 0, sizeof(int) * g->nbat * g->nrb * g->nkb);
                g->bstate = g->astate + nbat * nrb * g->nkb; /* the largest section's: fixed across sections */
                /* row sections of one matrix share the packed B when it holds every column: packed once */
                if (rb0 == 0 || g->ncols < g->n) memset(g->bstate, 0, sizeof(int) * g->nbat * g->npanels);
                g->next_item = 0;
                mt__parallel_for(mt__min64(nt, g->items), 1, sgemm_task, g);
            }
    if (scratch) mt_tensor_release(scratch);
    return 0;
}

/* internal.h: float16/bfloat16 dot products on the chunks above */
int mt__dot16(int dtype, int64_t nb, int64_t k, float alpha, const uint16_t *a, int64_t sab, const uint16_t *b,
              int64_t sbb, float beta, uint16_t *c, int64_t scb) {
    if (!mt__cpu_avx512f() || (dtype != MT_F16 && dtype != MT_BF16)) return 1;
    int nt = (double)nb * k < SERIAL_GEMV_MACS ? 1 : mt_get_num_threads();
    dot_plan d = {.a = (const char *)a, .b = (const char *)b, .sab = sab, .sbb = sbb, .k = k, .kind = dtype == MT_F16 ? 1 : 2};
    float small[64], *s = nb <= 64 ? small : malloc(nb * sizeof(float));
    if (!s || dot_run(&d, nb, nt, s, 1)) { if (s != small) free(s); return 1; }
    for (int64_t bi = 0; bi < nb; bi++) {
        uint16_t *ci = c + bi * scb;
        float v = alpha * s[bi];
        if (beta != 0) v += beta * (dtype == MT_F16 ? mt__f16_to_f32(*ci) : mt__bf16_to_f32(*ci));
        *ci = dtype == MT_F16 ? mt__f32_to_f16(v) : mt__f32_to_bf16(v);
    }
    if (s != small) free(s);
    return 0;
}

#else
static int sgemm_avx512(sgemm_plan *g, int64_t nb) { (void)g, (void)nb; return 1; }
int mt__dot16(int dtype, int64_t nb, int64_t k, float alpha, const uint16_t *a, int64_t sab, const uint16_t *b,
              int64_t sbb, float beta, uint16_t *c, int64_t scb) {
    (void)dtype, (void)nb, (void)k, (void)alpha, (void)a, (void)sab, (void)b, (void)sbb, (void)beta, (void)c, (void)scb;
    return 1;
}
#endif

/* BLAS's leading dimension of a row-major [rows x cols] matrix with row stride `stride`: a single
 * row's stride is free (a view may give it any value), BLAS still wants at least cols */
static int64_t blas_ld(int64_t rows, int64_t cols, int64_t stride) {
    return rows == 1 || stride < 1 ? (cols > 1 ? cols : 1) : stride;
}

/* The strided GEMM behind mt__sgemm and mt__dgemm: a column-major C becomes a row-major one
 * (C^T = B^T A^T), then float32 runs our kernel where it can and the rest goes to OpenBLAS */
static void gemm_strided(int f64, int64_t nb, int64_t m, int64_t n, int64_t k, double alpha, const char *a,
                         int64_t sab, int64_t sam, int64_t sak, const char *b, int64_t sbb, int64_t sbk, int64_t sbn,
                         double beta, char *c, int64_t scb, int64_t scm, int64_t scn) {
    if (nb <= 0 || m <= 0 || n <= 0 || k <= 0) return;
    if (scn != 1) { /* column-major C: C^T = B^T A^T */
        const char *tp = a; a = b; b = tp;
        int64_t t = m; m = n; n = t;
        t = sab; sab = sbb; sbb = t;
        t = sam; sam = sbn; sbn = t;
        t = sak; sak = sbk; sbk = t;
        scm = scn;
    }
    if (!f64) {
        sgemm_plan g = {.m = m, .n = n, .k = k, .a = (const float *)a, .b = (const float *)b, .c = (float *)c,
                        .sab = sab, .sam = sam, .sak = sak, .sbb = sbb, .sbk = sbk, .sbn = sbn, .scb = scb,
                        .scm = scm, .alpha = (float)alpha, .beta = (float)beta};
        if (!sgemm_avx512(&g, nb)) return;
    }
    int ta = sak != 1, tb = sbn != 1; /* OpenBLAS: each operand has a unit stride (the callers see to it) */
    int64_t lda = ta ? blas_ld(k, m, sak) : blas_ld(m, k, sam), ldb = tb ? blas_ld(n, k, sbn) : blas_ld(k, n, sbk);
    int64_t ldc = blas_ld(m, n, scm), es = f64 ? 8 : 4;
    for (int64_t i = 0; i < nb; i++) {
        const char *ai = a + i * sab * es, *bi = b + i * sbb * es;
        char *ci = c + i * scb * es;
        if (f64)
            cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                        (int)k, alpha, (const double *)ai, (int)lda, (const double *)bi, (int)ldb, beta, (double *)ci,
                        (int)ldc);
        else
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                        (int)k, (float)alpha, (const float *)ai, (int)lda, (const float *)bi, (int)ldb, (float)beta,
                        (float *)ci, (int)ldc);
    }
}

void mt__sgemm(int64_t nb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t sab, int64_t sam,
               int64_t sak, const float *b, int64_t sbb, int64_t sbk, int64_t sbn, float beta, float *c, int64_t scb,
               int64_t scm, int64_t scn) {
    gemm_strided(0, nb, m, n, k, alpha, (const char *)a, sab, sam, sak, (const char *)b, sbb, sbk, sbn, beta,
                 (char *)c, scb, scm, scn);
}

void mt__dgemm(int64_t nb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t sab, int64_t sam,
               int64_t sak, const double *b, int64_t sbb, int64_t sbk, int64_t sbn, double beta, double *c,
               int64_t scb, int64_t scm, int64_t scn) {
    gemm_strided(1, nb, m, n, k, alpha, (const char *)a, sab, sam, sak, (const char *)b, sbb, sbk, sbn, beta,
                 (char *)c, scb, scm, scn);
}
