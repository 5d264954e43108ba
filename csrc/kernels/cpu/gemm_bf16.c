/* gemm_bf16.c — bfloat16 GEMM as PyTorch's oneDNN runs it on x86: products of bf16 pairs accumulate
 * in float32 and each output rounds once (nearest even) to bfloat16, alpha and beta applied in float32
 * before that rounding. Two instruction sets, picked at run time, AMX first:
 *
 * Intel AMX (Sapphire Rapids and later): A is packed into [Mp x Kp] bf16 rows and B into "VNNI" pairs,
 * 16 columns per panel ([Kp/2][16][2]), both zero-padded to whole tiles (Mp, Np multiples of 32, Kp of
 * 32). A 32x32 block of C lives in four accumulator tiles (tmm0-3) fed by two A tiles (tmm4-5) and two B
 * tiles (tmm6-7) per step of 32 along K. Blocks are split across threads, N-major, so each thread
 * streams A past the B panels it owns.
 *
 * AVX512-BF16 without AMX (AMD Zen 4, Intel Cooper Lake): vdpbf16ps adds the products of 16 bf16 pairs
 * into 16 float32 lanes. An A with contiguous rows and even K is read in place; another is packed into
 * panels of 12 rows of pairs ([Kp/2][12] 32-bit words; Kp is K rounded up to even, the pad zero). B goes
 * into the same 16-column VNNI panels as for AMX. A 6x32 block of C lives in 24 ymm accumulators: one
 * broadcast A pair and four B loads feed 24 vdpbf16ps. K goes in steps of KB pairs (the slices then stay
 * in L1), the float32 sums saved and reloaded between steps. With few rows (at most KPANELS panels) a
 * task's panels go through K together and B is packed one step's slice at a time; otherwise each task
 * packs a group of B panels (sized to stay in L2) and sweeps its A panels past it, each through all K.
 * Every output is one sequential float32 sum over K, whatever the thread split: results do not depend
 * on the thread count. Like oneDNN's kernel (the same instruction) it treats bf16 denormal inputs and
 * float32 denormal partial sums as zero.
 *
 * Neither, or a product of at most 4096 multiply-adds (PyTorch leaves those to its own float loop too):
 * the caller runs the float32 GEMM and rounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/internal.h"

#define SMALL_MACS 4096       /* at most this many multiply-adds: the float32 route, as in PyTorch */
#define SERIAL_MACS (1 << 20) /* below this many multiply-adds one thread is faster than waking the pool */

typedef struct {
    const uint16_t *a, *b; /* A [m x k], B [k x n] bf16 (matrix i of a batch at a + i * sab, b + i * sbb) */
    int64_t m, n, k, sab, sam, sak, sbb, sbk, sbn;
    uint16_t *ap;          /* A packed */
    int64_t mp, np, kp;    /* padded sizes */
    int64_t gp;            /* 16-column panels per column group: one task's packed B */
    int64_t groups, mc;    /* column groups per matrix; row chunks per column group */
    uint16_t *c;           /* C [m x n] bf16, strides scb, scm, scn */
    int64_t scb, scm, scn;
    float alpha, beta;
} bf16_job;

#if defined(__x86_64__) && defined(__linux__) && !defined(MT_NO_AMX)
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "simd_avx512.h"

#define AMX_FN __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))
#define BF16_FN __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define MT_PACK_SIMD __attribute__((target("avx512f,avx512bw,avx512vl"))) /* only called where AMX or AVX512-BF16 is */
#define MR 12 /* rows of an A panel (AVX512-BF16) */
#define KB 128 /* pairs of K per step of the AVX512-BF16 kernel: A and B slices of 6 and 16 KiB, in L1 */
/* a task's packed B (AVX512-BF16), in L2 beside an A panel; 384 KiB was 11% slower at 128x3072 @ 3072x768
 * (twice the groups, each reading B's rows in half as long pieces) */
#define B_GROUP_BYTES (768 << 10)
#define KPANELS 12 /* at most this many A panels (144 rows) per matrix: B packed one K step at a time (AVX512-BF16) */

/* 1 once AMX-BF16 is present and the kernel granted this process the tile data state */
static int amx_ready(void) {
    static int state = -1; /* benign race: every thread computes the same answer */
    if (state >= 0) return state;
    unsigned a, b, c, d;
    int ok = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 24)) && (d & (1u << 22)); /* AMX-TILE, AMX-BF16 */
    if (ok && getenv("MINDTORCH_NO_AMX")) ok = 0;
    if (ok) ok = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
    state = ok;
    return ok;
}

/* 1 where the CPU (and the OS's saved state) has AVX512-BF16; MINDTORCH_NO_AVX512BF16 in the environment,
 * read at each call (for A/B measurements), sends products to the float32 route instead */
static int avx512bf16_ready(void) {
    static int state = -1;
    if (state < 0)
        state = mt__cpu_avx512f() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512bf16");
    return state && !getenv("MINDTORCH_NO_AVX512BF16");
}

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tilecfg;

AMX_FN static void tiles_on(void) {
    tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

/* A rows [b, e) into ap as whole tiles: tile (row block i of 16, K step s of 32) is 1 KB at
 * ((i * kp/32) + s) * 512 elements, so every tile load reads contiguous memory. Zero past m, k. */
static void pack_a_tiles(void *p, int64_t b, int64_t e) {
    const bf16_job *j = p;
    for (int64_t r = b; r < e; r++) {
        uint16_t *dst = j->ap + (r / 16) * (j->kp * 16) + (r % 16) * 32;
        const uint16_t *src = j->a + r * j->sam;
        for (int64_t q0 = 0; q0 < j->kp; q0 += 32, dst += 512) {
            int64_t w = r >= j->m ? 0 : j->k - q0 < 32 ? (j->k - q0 > 0 ? j->k - q0 : 0) : 32;
            if (j->sak == 1) memcpy(dst, src + q0, (size_t)w * 2);
            else for (int64_t q = 0; q < w; q++) dst[q] = src[(q0 + q) * j->sak];
            memset(dst + w, 0, (size_t)(32 - w) * 2);
        }
    }
}

/* A panels [b, e) of MR rows (numbered across the batch) into [kp/2][MR] pairs, the pad of an odd K
 * zero (rows past m are never read) */
static void pack_a_pairs(void *p, int64_t b, int64_t e) {
    const bf16_job *j = p;
    int64_t kq = j->kp / 2, panels = j->mp / MR;
    for (int64_t pn = b; pn < e; pn++) {
        int64_t bi = pn / panels, r0 = pn % panels * MR;
        uint32_t *dst = (uint32_t *)j->ap + pn * MR * kq;
        for (int64_t i = 0; i < MR && r0 + i < j->m; i++) {
            const uint16_t *s = j->a + bi * j->sab + (r0 + i) * j->sam;
            int64_t q = 0;
            if (j->sak == 1)
                for (; q < j->k / 2; q++) {
                    uint32_t w;
                    memcpy(&w, s + 2 * q, 4);
                    dst[q * MR + i] = w;
                }
            for (; q < kq; q++)
                dst[q * MR + i] = s[2 * q * j->sak] | (2 * q + 1 < j->k ? (uint32_t)s[(2 * q + 1) * j->sak] << 16 : 0);
        }
    }
}

/* pack_b for a B whose columns are contiguous (sbk == 1: Linear's weight): 16 columns x 16 pairs are 16
 * rows of 16 32-bit pairs in memory, transposed in registers */
MT_PACK_SIMD static void pack_b_cols(const bf16_job *j, const uint16_t *b, int64_t c0, uint16_t *bp, int64_t ps,
                                     int64_t qa, int64_t qb) {
    int64_t whole = j->k / 32 * 16; /* pairs in whole 16-pair blocks inside K (qa is a multiple of 16) */
    for (int64_t h = 0; h < j->gp; h++) {
        uint32_t *panel = (uint32_t *)(bp + h * ps); /* pair row q at panel + (q - qa) * 16 */
        int64_t cc = c0 + h * 16, q = qa;
        if (cc >= j->n) { memset(panel, 0, (size_t)(qb - qa) * 64); continue; }
        if (cc + 16 <= j->n)
            for (; q < whole && q < qb; q += 16) {
                __m512 r[16];
                for (int c = 0; c < 16; c++) {
                    const uint16_t *s = b + (cc + c) * j->sbn + 2 * q;
                    r[c] = _mm512_loadu_ps((const float *)s); /* bit moves only: a NaN pattern stays as it is */
                    if (2 * q + 128 < j->k) _mm_prefetch((const char *)(s + 128), _MM_HINT_T0);
                }
                mt__transpose16(r);
                for (int c = 0; c < 16; c++) _mm512_storeu_ps((float *)(panel + (q - qa + c) * 16), r[c]);
            }
        for (; q < qb; q++)
            for (int64_t c = 0; c < 16; c++) {
                const uint16_t *s = b + (cc + c) * j->sbn;
                panel[(q - qa) * 16 + c] = cc + c >= j->n ? 0 : s[2 * q] | (2 * q + 1 < j->k ? (uint32_t)s[2 * q + 1] << 16 : 0);
            }
    }
}

/* B (one matrix, at b) columns [c0, c0 + 16 * gp), pair rows [qa, qb), into the panels at bp, ps elements
 * apart (each task packs the panels it multiplies, into its own cache-resident buffer; gp panels at once,
 * so each row of B is read as one stretch and few pages are touched): in panel h, pair row q (at
 * (q - qa) * 32) holds B[2q][c], B[2q+1][c] for each of its 16 columns c as one 32-bit word, zero past k and n. */
MT_PACK_SIMD static void pack_b(const bf16_job *j, const uint16_t *b, int64_t c0, uint16_t *bp, int64_t ps, int64_t qa,
                                int64_t qb) {
    static const uint16_t zero[1] = {0};
    if (j->sbk == 1 && j->sbn != 1) { pack_b_cols(j, b, c0, bp, ps, qa, qb); return; }
    if (j->sbn == 1 && 2 * qb <= j->k && c0 + 16 * j->gp <= j->n) {
        /* whole pairs of rows, whole panels: 32 columns (two panels, gp is even) at a time, down K, the two
         * rows' words interleaved by two word permutes. Panel pair by panel pair, so the stores run
         * sequentially: panel by panel across each row pair (16 stores ps apart, one cache set of L1) took
         * 4% longer at 128x3072 @ 3072x768. */
        const __m512i ilv_lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38,
                                                6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
        const __m512i ilv_hi = _mm512_add_epi16(ilv_lo, _mm512_set1_epi16(16));
        int64_t gp = j->gp, sbk = j->sbk;
        for (int64_t h = 0; h < gp; h += 2) {
            const uint16_t *s0 = b + 2 * qa * sbk + c0 + h * 16;
            uint16_t *row = bp + h * ps;
            for (int64_t q = qa; q < qb; q++, s0 += 2 * sbk, row += 32) {
                __m512i r0 = _mm512_loadu_si512(s0), r1 = _mm512_loadu_si512(s0 + sbk);
                _mm512_storeu_si512(row, _mm512_permutex2var_epi16(r0, ilv_lo, r1));
                _mm512_storeu_si512(row + ps, _mm512_permutex2var_epi16(r0, ilv_hi, r1));
            }
        }
        return;
    }
    for (int64_t q = qa; q < qb; q++) {
        const uint16_t *s0 = 2 * q < j->k ? b + 2 * q * j->sbk : zero;
        const uint16_t *s1 = 2 * q + 1 < j->k ? b + (2 * q + 1) * j->sbk : zero;
        int64_t i0 = s0 == zero ? 0 : j->sbn, i1 = s1 == zero ? 0 : j->sbn;
        if (2 * q + 49 < j->k && j->sbn == 1) /* rows 48 ahead, each on its own page (16 ahead: 7% slower at K=3072) */
            for (int64_t l = 0; l < 16 * j->gp && c0 + l < j->n; l += 32) {
                _mm_prefetch((const char *)(s0 + 48 * j->sbk + c0 + l), _MM_HINT_T0);
                _mm_prefetch((const char *)(s1 + 48 * j->sbk + c0 + l), _MM_HINT_T0);
            }
        for (int64_t h = 0; h < j->gp; h++) {
            uint32_t *row = (uint32_t *)(bp + h * ps + (q - qa) * 32);
            int64_t cc = c0 + h * 16;
            if (cc + 16 <= j->n && i0 == 1 && i1 == 1) {
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(s0 + cc)));
                __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(s1 + cc)));
                _mm512_storeu_si512(row, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
                continue;
            }
            for (int c = 0; c < 16; c++)
                row[c] = cc + c < j->n ? s0[(cc + c) * i0] | (uint32_t)s1[(cc + c) * i1] << 16 : 0;
        }
    }
}

/* float32 lanes to bfloat16 as mt__f32_to_bf16 rounds them: nearest even, NaN as 0x7FC0 */
static inline MT_PACK_SIMD __m256i round_bf16(__m512 x) {
    __m512i u = _mm512_castps_si512(x);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), odd), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
    return _mm512_cvtepi32_epi16(r);
}

/* C[r0 + r][c0 + q] = round(alpha * acc[r][q] + beta * C[..]) for r < rn and the columns below n (at most
 * 32 from c0); acc's rows are lda floats apart. beta == 0 never reads C (a NaN there does not survive). */
MT_PACK_SIMD static void store_rows(const bf16_job *j, uint16_t *c, const float *acc, int64_t lda, int64_t r0,
                                    int64_t rn, int64_t c0) {
    int64_t cn = j->n - c0 < 32 ? j->n - c0 : 32;
    __m512 va = _mm512_set1_ps(j->alpha), vb = _mm512_set1_ps(j->beta);
    for (int64_t r = 0; r < rn; r++)
        for (int64_t h = 0; h < 32 && h < cn; h += 16) {
            int w = cn - h < 16 ? (int)(cn - h) : 16;
            __mmask16 mk = (__mmask16)((1u << w) - 1);
            uint16_t *o = c + (r0 + r) * j->scm + (c0 + h) * j->scn, t[16] = {0};
            __m512 x = _mm512_loadu_ps(acc + r * lda + h);
            if (j->alpha != 1) x = _mm512_mul_ps(x, va);
            if (j->beta != 0) {
                __m256i cv;
                if (j->scn == 1) cv = _mm256_maskz_loadu_epi16(mk, o);
                else {
                    for (int q = 0; q < w; q++) t[q] = o[q * j->scn];
                    cv = _mm256_loadu_si256((const __m256i *)t);
                }
                x = _mm512_fmadd_ps(vb, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(cv), 16)), x);
            }
            __m256i y = round_bf16(x);
            if (j->scn == 1) _mm256_mask_storeu_epi16(o, mk, y);
            else {
                _mm256_storeu_si256((__m256i *)t, y);
                for (int q = 0; q < w; q++) o[q * j->scn] = t[q];
            }
        }
}

/* ---- AMX ---- */

AMX_FN static void amx_blocks(void *p, int64_t b, int64_t e) {
    const bf16_job *j = p;
    int64_t mb = j->mp / 32, steps = j->kp / 32, packed = -1;
    float acc[32 * 32];
    uint16_t *bp = aligned_alloc(64, (size_t)(j->kp * 32 * j->gp));
    if (!bp) return; /* the caller probed the memory */
    tiles_on();
    for (int64_t u = b; u < e; u++) {
        int64_t grp = u / j->mc, ch = u % j->mc;
        if (grp != packed) pack_b(j, j->b, grp * 16 * j->gp, bp, j->kp * 16, 0, j->kp / 2), packed = grp;
        /* an A block (32 rows) is read from memory once per group and reused from L2 for its pairs */
        for (int64_t blk = ch * mb / j->mc; blk < (ch + 1) * mb / j->mc; blk++) {
            const char *a0 = (const char *)(j->ap + blk * 32 * j->kp), *a1 = a0 + j->kp * 32;
            for (int64_t pr = 0; pr < j->gp / 2 && grp * 16 * j->gp + pr * 32 < j->n; pr++) {
                const char *b0 = (const char *)bp + pr * j->kp * 64, *b1 = b0 + j->kp * 32;
                _tile_zero(0);
                _tile_zero(1);
                _tile_zero(2);
                _tile_zero(3);
                for (int64_t s = 0; s < steps; s++) {
                    /* tiles are not renamed: each load follows the last use of its tile */
                    _tile_loadd(4, a0 + s * 1024, 64);
                    _tile_loadd(6, b0 + s * 1024, 64);
                    _tile_dpbf16ps(0, 4, 6);
                    _tile_loadd(7, b1 + s * 1024, 64);
                    _tile_dpbf16ps(1, 4, 7);
                    _tile_loadd(5, a1 + s * 1024, 64);
                    _tile_dpbf16ps(2, 5, 6);
                    _tile_dpbf16ps(3, 5, 7);
                }
                _tile_stored(0, acc, 128);
                _tile_stored(1, acc + 16, 128);
                _tile_stored(2, acc + 16 * 32, 128);
                _tile_stored(3, acc + 16 * 32 + 16, 128);
                int64_t r0 = blk * 32;
                store_rows(j, j->c, acc, 32, r0, j->m - r0 < 32 ? j->m - r0 : 32, grp * 16 * j->gp + pr * 32);
            }
        }
    }
    _tile_release();
    free(bp);
}

/* one matrix (the job's a, b, c): 0 done, 1 AMX not available or the product too small, 2 out of memory
 * (nothing written) */
static int gemm_amx(bf16_job *j) {
    if (j->m * j->n * j->k < (1 << 15) || !amx_ready()) return 1;
    j->mp = (j->m + 31) / 32 * 32, j->np = (j->n + 31) / 32 * 32, j->kp = (j->k + 31) / 32 * 32, j->gp = 8;
    int64_t groups = (j->np + 16 * j->gp - 1) / (16 * j->gp), mb = j->mp / 32;
    j->mc = groups >= 8 ? 1 : (8 + groups - 1) / groups < mb ? (8 + groups - 1) / groups : mb; /* >= 8 tasks if possible */
    j->ap = aligned_alloc(64, (size_t)(j->mp * j->kp * 2));
    void *probe = aligned_alloc(64, (size_t)(j->kp * 32 * j->gp)); /* a worker's panel buffer */
    if (!j->ap || !probe) { free(j->ap); free(probe); return 2; }
    free(probe);
    mt__parallel_for(j->mp, (MT_GRAIN_SIZE + j->kp - 1) / j->kp, pack_a_tiles, j);
    mt__parallel_for(groups * j->mc, 1, amx_blocks, j);
    free(j->ap);
    return 0;
}

/* ---- AVX512-BF16 ---- */

/* acc[i][0..32) = the sums over kq pairs of row i of an A panel (ap: [kq][MR] pairs) times two B panels
 * (b0, b1: [kq][16] pairs each), for i < mr <= 6 (a constant where this is inlined). 256-bit vectors: on
 * the Zen 4 host (which splits a zmm operation in two halves) a 6x32 ymm block and a 12x32 zmm one ran
 * at the same rate, ~230 GFLOP/s on one core with L1-resident panels and within 2% in the GEMM; the
 * ymm one needs only 6 rows per block, less padding on short row tails. */
static inline __attribute__((always_inline)) BF16_FN void dot_block(const int mr, int64_t kq, const char *ap,
                                                                     int64_t ars, int64_t aqs, const uint32_t *b0,
                                                                     const uint32_t *b1, float *acc, int first) {
    __m256 x0[6], x1[6], x2[6], x3[6];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) /* later K blocks go on from the sums so far: the same additions in order */
        if (first) x0[i] = x1[i] = x2[i] = x3[i] = _mm256_setzero_ps();
        else {
            x0[i] = _mm256_loadu_ps(acc + i * 32), x1[i] = _mm256_loadu_ps(acc + i * 32 + 8);
            x2[i] = _mm256_loadu_ps(acc + i * 32 + 16), x3[i] = _mm256_loadu_ps(acc + i * 32 + 24);
        }
    for (int64_t q = 0; q < kq; q++, ap += aqs, b0 += 16, b1 += 16) {
        __m256bh v0 = (__m256bh)_mm256_loadu_si256((const __m256i *)b0);
        __m256bh v1 = (__m256bh)_mm256_loadu_si256((const __m256i *)(b0 + 8));
        __m256bh v2 = (__m256bh)_mm256_loadu_si256((const __m256i *)b1);
        __m256bh v3 = (__m256bh)_mm256_loadu_si256((const __m256i *)(b1 + 8));
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            int32_t w;
            memcpy(&w, ap + i * ars, 4); /* a pair of row i (unaligned in an unpacked A of odd row stride) */
            __m256bh av = (__m256bh)_mm256_set1_epi32(w);
            x0[i] = _mm256_dpbf16_ps(x0[i], av, v0);
            x1[i] = _mm256_dpbf16_ps(x1[i], av, v1);
            x2[i] = _mm256_dpbf16_ps(x2[i], av, v2);
            x3[i] = _mm256_dpbf16_ps(x3[i], av, v3);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        _mm256_storeu_ps(acc + i * 32, x0[i]), _mm256_storeu_ps(acc + i * 32 + 8, x1[i]);
        _mm256_storeu_ps(acc + i * 32 + 16, x2[i]), _mm256_storeu_ps(acc + i * 32 + 24, x3[i]);
    }
}

/* dot_block for mr <= MR rows: two blocks of up to 6, of equal size when mr > 6 (a 2-row block, 8 sums
 * for 4 B loads, runs at about half rate: the last 8 rows of 128 as 6 + 2 cost 1-2% of 128 x 3072 @
 * 3072 x 768). Pair q of row i of A is at ap + i * ars + q * aqs (bytes): a packed panel (4, MR * 4) or A
 * itself (its row stride, 4). */
BF16_FN static void dot_rows(int mr, int64_t kq, const char *ap, int64_t ars, int64_t aqs, const uint32_t *b0,
                             const uint32_t *b1, float *acc, int first) {
    for (int r = 0, h = mr > 6 ? (mr + 1) / 2 : mr; r < mr; r += h, ap += h * ars, acc += h * 32, h = mr - r)
        switch (h) { /* one copy per row count: the accumulators stay in registers */
        case 6: dot_block(6, kq, ap, ars, aqs, b0, b1, acc, first); break;
        case 5: dot_block(5, kq, ap, ars, aqs, b0, b1, acc, first); break;
        case 4: dot_block(4, kq, ap, ars, aqs, b0, b1, acc, first); break;
        case 3: dot_block(3, kq, ap, ars, aqs, b0, b1, acc, first); break;
        case 2: dot_block(2, kq, ap, ars, aqs, b0, b1, acc, first); break;
        default: dot_block(1, kq, ap, ars, aqs, b0, b1, acc, first); break;
        }
}

/* Tasks: task u is matrix u / (groups * mc), its column group u / mc % groups, times the u % mc-th of mc
 * chunks of its A panels. Each thread owns a contiguous range of tasks (so it packs a group of B once)
 * and takes them from the front; a thread done with its own takes tasks from the back of another's
 * (a core shared with another process then holds up no one). A range is one 64-bit word, first << 32 |
 * end, changed by compare-and-swap. */
static int64_t take(uint64_t *range, int back) {
    uint64_t w = __atomic_load_n(range, __ATOMIC_RELAXED), nw;
    do {
        uint64_t lo = w >> 32, hi = w & 0xffffffffu;
        if (lo >= hi) return -1;
        nw = back ? lo << 32 | (hi - 1) : (lo + 1) << 32 | hi;
    } while (!__atomic_compare_exchange_n(range, &w, nw, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return back ? (int64_t)(w & 0xffffffffu) - 1 : (int64_t)(w >> 32);
}

typedef struct {
    const bf16_job *j;
    uint64_t *ranges;
    int64_t nranges;
    char *bufs;      /* packed-B buffers, one per range, bsz bytes apart; NULL: each thread's own (thread_buffer) */
    size_t bsz;
    int slices;      /* B packed one K step at a time, the sums of the task's panels kept between steps */
    int failed;      /* a thread found no memory for its buffer */
} avx_sched;

/* A buffer of at least n bytes (64-byte aligned) kept by the calling thread across calls, freed when the
 * thread exits; NULL when out of memory. Each thread packing B into the same memory call after call finds
 * it in its own L2: 128x768 @ 768x3072 at 2 threads was ~2% slower with buffers that moved between calls. */
#define THREAD_BUF_MAX (2 << 20)
static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static int buf_key_ok;
static void buf_key_make(void) { buf_key_ok = pthread_key_create(&buf_key, free) == 0; }
static void *thread_buffer(size_t n) {
    pthread_once(&buf_once, buf_key_make);
    if (!buf_key_ok) return NULL;
    size_t *h = pthread_getspecific(buf_key); /* h[0]: the size, the data 64 bytes on */
    if (h && h[0] >= n) return (char *)h + 64;
    free(h);
    pthread_setspecific(buf_key, NULL);
    if (!(h = aligned_alloc(64, 64 + (n + 63) / 64 * 64))) return NULL;
    h[0] = n;
    pthread_setspecific(buf_key, h);
    return (char *)h + 64;
}

/* A's rows of panel pn of matrix bi: packed (pairs of K interleaved) or read in place from contiguous
 * rows; *ars and *aqs get the byte steps between rows and between K pairs */
static inline const char *a_panel(const bf16_job *j, int64_t bi, int64_t panels, int64_t pn, int64_t *ars,
                                  int64_t *aqs) {
    if (j->ap) return *ars = 4, *aqs = MR * 4, (const char *)(j->ap + (bi * panels + pn) * MR * j->kp);
    return *ars = 2 * j->sam, *aqs = 4, (const char *)(j->a + bi * j->sab + pn * MR * j->sam);
}

/* ranges [t0, t1) are this thread's (one each when the pool runs the job, all of them inline) */
BF16_FN static void avx_blocks(void *p, int64_t t0, int64_t t1) {
    const avx_sched *sc = p;
    const bf16_job *j = sc->j;
    int64_t kq = j->kp / 2, panels = j->mp / MR, per = j->groups * j->mc, packed = -1;
    float acc[8 * MR * 32] __attribute__((aligned(64))); /* float32 sums of an A panel times the group (gp <= 16) */
    char *buf = sc->bufs ? sc->bufs + t0 * sc->bsz : thread_buffer(sc->bsz);
    if (!buf) { __atomic_store_n((int *)&sc->failed, 1, __ATOMIC_RELAXED); return; } /* others take its tasks */
    uint16_t *bp = (uint16_t *)buf;
    const uint32_t *bq = (const uint32_t *)bp;
    for (int64_t r = t0;;) {
        int64_t u = -1;
        while (r < t1 && (u = take(&sc->ranges[r], 0)) < 0) r++;
        for (int64_t n = 1; u < 0 && n <= sc->nranges; n++) u = take(&sc->ranges[(t1 - 1 + n) % sc->nranges], 1);
        if (u < 0) break;
        int64_t bi = u / per, grp = u % per / j->mc, ch = u % j->mc, c0 = grp * 16 * j->gp;
        int64_t pairs = (mt__min64(j->n - c0, 16 * j->gp) + 31) / 32, pb = ch * panels / j->mc, pe = (ch + 1) * panels / j->mc;
        if (sc->slices) {
            /* Few rows: the task's panels go through K together, KB pairs at a time, each step's slice of
             * the group's B packed just before use into the same small buffer (L1/L2-resident), the sums
             * kept between steps after it, and the next step's rows of a row-major B prefetched into L2
             * while this one computes. Packing B took 9% of 128x3072 @ 3072x768 on one thread (0.25 ms,
             * bound by reading B); this way that product and 128x768 @ 768x3072 ran 2-4% faster than
             * packing the whole group first (768 KiB, as below) with the same packing loops. */
            float *sums = (float *)(buf + (size_t)j->gp * KB * 64); /* [panel][column pair][MR][32] */
            int64_t width = mt__min64(j->n - c0, 16 * j->gp), calls = (pe - pb) * pairs;
            for (int64_t q0 = 0; q0 < kq; q0 += KB) {
                int64_t qn = mt__min64(KB, kq - q0);
                pack_b(j, j->b + bi * j->sbb, c0, bp, KB * 32, q0, q0 + qn);
                /* the next step's rows of B, no rows of sl lines so bytes apart, spread over this step's
                 * kernel calls (a Linear weight's columns were no faster that way: not done) */
                const char *pf = NULL;
                int64_t so = 0, sl = 0, no = 0, done = 0, total = 0, po = 0, pl = 0;
                if (q0 + KB < kq && j->sbn == 1) {
                    int64_t r0 = 2 * (q0 + KB);
                    pf = (const char *)(j->b + bi * j->sbb + r0 * j->sbk + c0), so = 2 * j->sbk;
                    sl = (2 * width + 63) / 64, no = mt__min64(2 * KB, j->k - r0);
                    total = no * sl;
                }
                int64_t call = 0;
                for (int64_t pn = pb; pn < pe; pn++) {
                    int mr = (int)(j->m - pn * MR < MR ? j->m - pn * MR : MR);
                    int64_t ars, aqs;
                    const char *ap = a_panel(j, bi, panels, pn, &ars, &aqs);
                    for (int64_t pr = 0; pr < pairs; pr++) {
                        dot_rows(mr, qn, ap + q0 * aqs, ars, aqs, bq + 2 * pr * KB * 16, bq + (2 * pr + 1) * KB * 16,
                                 sums + ((pn - pb) * 8 + pr) * MR * 32, q0 == 0);
                        for (int64_t to = total * ++call / calls; done < to; done++) {
                            _mm_prefetch(pf + po * so + pl * 64, _MM_HINT_T1);
                            if (++pl == sl) pl = 0, po++;
                        }
                    }
                }
            }
            for (int64_t pn = pb; pn < pe; pn++)
                for (int64_t pr = 0; pr < pairs; pr++)
                    store_rows(j, j->c + bi * j->scb, sums + ((pn - pb) * 8 + pr) * MR * 32, 32, pn * MR,
                               j->m - pn * MR < MR ? j->m - pn * MR : MR, c0 + pr * 32);
            continue;
        }
        if (u / j->mc != packed) pack_b(j, j->b + bi * j->sbb, c0, bp, j->kp * 16, 0, kq), packed = u / j->mc;
        /* the group stays in L2; an A panel is multiplied by it KB pairs of K at a time, so the A slice and
         * a column pair's B slice are reused from L1 (B read from L2 once per panel, not once per 6 rows) */
        for (int64_t pn = pb; pn < pe; pn++) {
            int mr = (int)(j->m - pn * MR < MR ? j->m - pn * MR : MR);
            int64_t ars, aqs;
            const char *ap = a_panel(j, bi, panels, pn, &ars, &aqs);
            for (int64_t q0 = 0; q0 < kq; q0 += KB)
                for (int64_t pr = 0; pr < pairs; pr++)
                    dot_rows(mr, mt__min64(KB, kq - q0), ap + q0 * aqs, ars, aqs, bq + (2 * pr * kq + q0) * 16,
                             bq + ((2 * pr + 1) * kq + q0) * 16, acc + pr * MR * 32, q0 == 0);
            for (int64_t pr = 0; pr < pairs; pr++)
                store_rows(j, j->c + bi * j->scb, acc + pr * MR * 32, 32, pn * MR, mr, c0 + pr * 32);
        }
    }
}

/* nb matrices: 0 done, 1 AVX512-BF16 not available, 2 out of memory (C possibly in part written) */
static int gemm_avx512bf16(bf16_job *j, int64_t nb) {
    if (!avx512bf16_ready()) return 1;
    j->kp = (j->k + 1) / 2 * 2, j->mp = (j->m + MR - 1) / MR * MR, j->np = (j->n + 31) / 32 * 32;
    j->gp = B_GROUP_BYTES / (j->kp * 32) / 2 * 2;
    j->gp = j->gp < 2 ? 2 : j->gp > 16 ? 16 : j->gp;
    j->groups = (j->n + 16 * j->gp - 1) / (16 * j->gp);
    int64_t panels = j->mp / MR, per = nb * j->groups, nt = mt_get_num_threads();
    if ((double)nb * j->m * j->n * j->k < SERIAL_MACS) nt = 1;
    /* >= 8 tasks if possible; with B packed per K step, each task packs its own slices: a group is split
     * into row chunks only when there are fewer than two groups per thread */
    int slices = panels <= KPANELS, want = slices ? 2 * (int)nt : 8;
    j->mc = per >= want ? 1 : (want + per - 1) / per < panels ? (want + per - 1) / per : panels;
    /* a whole number of tasks per thread: 9 tasks on 2 threads (1024x768 @ 768x768) left one thread a
     * task behind, which the other then took, packing its group of B once more (2 threads 1.75x one) */
    while (j->mc < panels && per * j->mc % nt) j->mc++;
    int64_t tasks = per * j->mc;
    if (nt > tasks) nt = tasks;
    uint64_t ranges[64];
    if (nt > 64) nt = 64;
    for (int64_t t = 0; t < nt; t++) ranges[t] = (uint64_t)(t * tasks / nt) << 32 | (uint64_t)((t + 1) * tasks / nt);
    /* Packed A (and packed-B buffers too large for thread_buffer) in one block from the tensor allocator,
     * whose cache keeps it mapped between calls: fresh aligned_alloc blocks this large were new mappings
     * each call, ~360 page faults (0.1-0.4 ms) per 128x3072 @ 3072x768. An A with contiguous rows of even
     * length is read in place: its pairs are already adjacent. */
    int direct = j->sak == 1 && j->k % 2 == 0;
    size_t asz = direct ? 0 : (size_t)(nb * j->mp * j->kp * 2 + 63) / 64 * 64;
    size_t bsz = slices ? (size_t)j->gp * KB * 64 + KPANELS * 8 * MR * 32 * 4 : (size_t)(j->kp * 32 * j->gp);
    size_t own = bsz > THREAD_BUF_MAX ? nt * bsz : 0;
    int64_t total = (int64_t)(asz + own + 64);
    mt_tensor *scratch = NULL;
    if ((asz || own) && mt__alloc(1, &total, NULL, MT_U8, MT_CPU, &scratch)) return 2;
    char *base = scratch ? (char *)(((uintptr_t)mt__data(scratch) + 63) & ~(uintptr_t)63) : NULL;
    j->ap = direct ? NULL : (uint16_t *)base;
    avx_sched sc = {j, ranges, nt, own ? base + asz : NULL, bsz, slices, 0};
    if (!direct)
        mt__parallel_for(nb * panels, nt == 1 ? nb * panels : (MT_GRAIN_SIZE + MR * j->kp - 1) / (MR * j->kp), pack_a_pairs, j);
    mt__parallel_for(nt, 1, avx_blocks, &sc);
    if (scratch) mt_tensor_release(scratch);
    /* the tasks of a thread without a buffer went to the others; if none had one, C is incomplete */
    for (int64_t t = 0; sc.failed && t < nt; t++)
        if ((ranges[t] >> 32) < (ranges[t] & 0xffffffffu)) return 2;
    return 0;
}

#else
static int gemm_amx(bf16_job *j) { (void)j; return 1; }
static int gemm_avx512bf16(bf16_job *j, int64_t nb) { (void)j, (void)nb; return 1; }
#endif

/* C[i] = beta*C[i] + alpha*A[i]@B[i] for 3-D bfloat16 A [b,m,k], B [b,k,n], C [b,m,n] of any strides
 * (C not overlapping A or B): MT_OK when done, 1 when no bf16 route applies (nothing written), or an error */
mt_status mt__gemm3_bf16(mt_tensor *A, mt_tensor *B, mt_tensor *C, double beta, double alpha) {
    int64_t nb = A->sizes[0], m = A->sizes[1], k = A->sizes[2], n = B->sizes[2];
    if (m * n * k <= SMALL_MACS) return 1;
    const int64_t *sa = A->strides, *sb = B->strides, *sc = C->strides;
    bf16_job j = {.a = (const uint16_t *)mt__data(A), .b = (const uint16_t *)mt__data(B), .m = m, .n = n, .k = k,
                  .sab = sa[0], .sam = sa[1], .sak = sa[2], .sbb = sb[0], .sbk = sb[1], .sbn = sb[2],
                  .c = (uint16_t *)mt__data(C), .scb = sc[0], .scm = sc[1], .scn = sc[2],
                  .alpha = (float)alpha, .beta = (float)beta};
    if (j.scn != 1 && j.scm == 1) { /* column-major C: C^T = B^T A^T */
        const uint16_t *t = j.a;
        j.a = j.b, j.b = t;
        int64_t x;
        x = j.m, j.m = j.n, j.n = x;
        x = j.sab, j.sab = j.sbb, j.sbb = x;
        x = j.sam, j.sam = j.sbn, j.sbn = x;
        x = j.sak, j.sak = j.sbk, j.sbk = x;
        j.scm = j.scn, j.scn = 1;
    }
    int r = 1;
    for (int64_t i = 0; i < nb; i++) { /* AMX: one matrix at a time */
        bf16_job one = j;
        one.a += i * j.sab, one.b += i * j.sbb, one.c += i * j.scb;
        if ((r = gemm_amx(&one)) != 0) break; /* only the first can refuse: the size and the CPU are the same for all */
    }
    if (r == 1) r = gemm_avx512bf16(&j, nb);
    if (r == 2) return mt__error(MT_ERR_OOM, "out of memory");
    return r ? 1 : MT_OK;
}
