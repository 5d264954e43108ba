/* gemm_amx.c — bfloat16 GEMM on Intel AMX (the tile unit of Sapphire Rapids and later), as
 * PyTorch's oneDNN runs it on such CPUs: products of bf16 pairs accumulate in float32 tiles,
 * and each output rounds once (nearest even) to bfloat16.
 *
 * Per product: A is packed into [Mp x Kp] bf16 rows and B into "VNNI" pairs, 16 columns per
 * panel ([Kp/2][16][2]), both zero-padded to whole tiles (Mp, Np multiples of 32, Kp of 32).
 * A 32x32 block of C lives in four accumulator tiles (tmm0-3) fed by two A tiles (tmm4-5) and
 * two B tiles (tmm6-7) per step of 32 along K. Blocks are split across threads, N-major, so
 * each thread streams A past the B panels it owns. Not available (CPU without AMX-BF16, or a
 * kernel that refuses the tile state): the caller falls back to float32 GEMM. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/internal.h"

#if defined(__x86_64__) && defined(__linux__) && !defined(MT_NO_AMX)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AMX_FN __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))
#define MT_PACK_SIMD __attribute__((target("avx512f,avx512bw,avx512vl"))) /* only called where AMX is */

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

typedef struct {
    const uint16_t *a, *b; /* A [m x k], B [k x n] bf16, element strides below */
    int64_t m, n, k, sam, sak, sbk, sbn;
    uint16_t *ap;          /* A packed */
    int64_t mp, np, kp;    /* padded sizes */
    int64_t mc;            /* row chunks per column pair */
    uint16_t *c;           /* C [m x n] bf16, strides scm, scn */
    int64_t scm, scn;
    float alpha, beta;
} amx_job;

/* A rows [b, e) into ap as whole tiles: tile (row block i of 16, K step s of 32) is 1 KB at
 * ((i * kp/32) + s) * 512 elements, so every tile load reads contiguous memory. Zero past m, k. */
static void pack_a(void *p, int64_t b, int64_t e) {
    const amx_job *j = p;
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

/* B columns [c0, c0 + 16 * GP) into the panels bp (each thread packs the panels it multiplies,
 * into its own cache-resident buffer; GP panels at once, so each row of B is read as 512 bytes
 * and few pages are touched): in panel h, pair row q holds B[2q][c], B[2q+1][c] for each of its
 * 16 columns c as one 32-bit word, zero past k and n. */
#define GP 8
MT_PACK_SIMD static void pack_b(const amx_job *j, int64_t c0, uint16_t *bp) {
    static const uint16_t zero[1] = {0};
    for (int64_t q = 0; q < j->kp / 2; q++) {
        const uint16_t *s0 = 2 * q < j->k ? j->b + 2 * q * j->sbk : zero;
        const uint16_t *s1 = 2 * q + 1 < j->k ? j->b + (2 * q + 1) * j->sbk : zero;
        int64_t i0 = s0 == zero ? 0 : j->sbn, i1 = s1 == zero ? 0 : j->sbn;
        if (2 * q + 17 < j->k && j->sbn == 1) /* rows 16 ahead: each row is on its own page */
            for (int64_t l = 0; l < 16 * GP && c0 + l < j->n; l += 32) {
                _mm_prefetch((const char *)(s0 + 16 * j->sbk + c0 + l), _MM_HINT_T0);
                _mm_prefetch((const char *)(s1 + 16 * j->sbk + c0 + l), _MM_HINT_T0);
            }
        for (int64_t h = 0; h < GP; h++) {
            uint32_t *row = (uint32_t *)(bp + h * (j->kp * 16) + q * 32);
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

/* tasks [b, e): task u is the column group u / mc (GP panels of 16 columns) times the u % mc-th of
 * mc row chunks */
/* C[r0.., c0..] = round(alpha * acc + beta * C) for the valid part of a 32x32 float block */
AMX_FN static void store_block(const amx_job *j, const float *acc, int64_t r0, int64_t c0) {
    int64_t rn = j->m - r0 < 32 ? j->m - r0 : 32, cn = j->n - c0 < 32 ? j->n - c0 : 32;
    if (cn == 32 && j->scn == 1 && j->alpha == 1 && j->beta == 0) { /* rounding in hardware (RNE) */
        for (int64_t r = 0; r < rn; r++) {
            __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(acc + r * 32 + 16), _mm512_loadu_ps(acc + r * 32));
            _mm512_storeu_si512(j->c + (r0 + r) * j->scm + c0, (__m512i)h);
        }
        return;
    }
    for (int64_t r = 0; r < rn; r++) {
        uint16_t *out = j->c + (r0 + r) * j->scm + c0 * j->scn;
        const float *v = acc + r * 32;
        for (int64_t c = 0; c < cn; c++) {
            float x = j->alpha == 1 ? v[c] : j->alpha * v[c];
            if (j->beta != 0) x += j->beta * mt__bf16_to_f32(out[c * j->scn]);
            out[c * j->scn] = mt__f32_to_bf16(x);
        }
    }
}

AMX_FN static void amx_blocks(void *p, int64_t b, int64_t e) {
    const amx_job *j = p;
    int64_t mb = j->mp / 32, steps = j->kp / 32, packed = -1;
    float acc[32 * 32];
    uint16_t *bp = aligned_alloc(64, (size_t)(j->kp * 32 * GP));
    if (!bp) return; /* the caller probed the memory */
    tiles_on();
    for (int64_t u = b; u < e; u++) {
        int64_t grp = u / j->mc, ch = u % j->mc;
        if (grp != packed) pack_b(j, grp * 16 * GP, bp), packed = grp;
        /* an A block (32 rows) is read from memory once per group and reused from L2 for its pairs */
        for (int64_t blk = ch * mb / j->mc; blk < (ch + 1) * mb / j->mc; blk++) {
            const char *a0 = (const char *)(j->ap + blk * 32 * j->kp), *a1 = a0 + j->kp * 32;
            for (int64_t pr = 0; pr < GP / 2 && grp * 16 * GP + pr * 32 < j->n; pr++) {
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
                store_block(j, acc, blk * 32, grp * 16 * GP + pr * 32);
            }
        }
    }
    _tile_release();
    free(bp);
}

/* 0: done, 1: AMX not available or the product too small, 2: out of memory (nothing written) */
static int gemm_bf16_amx(const uint16_t *a, int64_t sam, int64_t sak, const uint16_t *b, int64_t sbk, int64_t sbn,
                         uint16_t *c, int64_t scm, int64_t scn, int64_t m, int64_t n, int64_t k, float alpha, float beta) {
    if (m * n * k < (1 << 15) || !amx_ready()) return 1;
    amx_job j = {a, b, m, n, k, sam, sak, sbk, sbn, NULL, (m + 31) / 32 * 32, (n + 31) / 32 * 32,
                 (k + 31) / 32 * 32, 1, c, scm, scn, alpha, beta};
    int64_t groups = (j.np + 16 * GP - 1) / (16 * GP), mb = j.mp / 32;
    j.mc = groups >= 8 ? 1 : (8 + groups - 1) / groups < mb ? (8 + groups - 1) / groups : mb; /* >= 8 tasks if possible */
    j.ap = aligned_alloc(64, (size_t)(j.mp * j.kp * 2));
    void *probe = aligned_alloc(64, (size_t)(j.kp * 32 * GP)); /* a worker's panel buffer */
    if (!j.ap || !probe) { free(j.ap); free(probe); return 2; }
    free(probe);
    mt__parallel_for(j.mp, (MT_GRAIN_SIZE + j.kp - 1) / j.kp, pack_a, &j);
    mt__parallel_for(groups * j.mc, 1, amx_blocks, &j);
    free(j.ap);
    return 0;
}

#else
static int gemm_bf16_amx(const uint16_t *a, int64_t sam, int64_t sak, const uint16_t *b, int64_t sbk, int64_t sbn,
                         uint16_t *c, int64_t scm, int64_t scn, int64_t m, int64_t n, int64_t k, float alpha, float beta) {
    (void)a, (void)sam, (void)sak, (void)b, (void)sbk, (void)sbn, (void)c, (void)scm, (void)scn;
    (void)m, (void)n, (void)k, (void)alpha, (void)beta;
    return 1;
}
#endif

/* C[i] = beta*C[i] + alpha*A[i]@B[i] for 3-D bfloat16 A [b,m,k], B [b,k,n], C [b,m,n] of any
 * strides: MT_OK when done, 1 when AMX does not apply (nothing written), or an error */
mt_status mt__gemm3_bf16_amx(mt_tensor *A, mt_tensor *B, mt_tensor *C, double beta, double alpha) {
    int64_t nb = A->sizes[0], m = A->sizes[1], k = A->sizes[2], n = B->sizes[2];
    const uint16_t *a = (const uint16_t *)mt__data(A), *b = (const uint16_t *)mt__data(B);
    uint16_t *c = (uint16_t *)mt__data(C);
    for (int64_t i = 0; i < nb; i++) {
        int r = gemm_bf16_amx(a + i * A->strides[0], A->strides[1], A->strides[2], b + i * B->strides[0], B->strides[1],
                              B->strides[2], c + i * C->strides[0], C->strides[1], C->strides[2], m, n, k,
                              (float)alpha, (float)beta);
        if (r == 2) return mt__error(MT_ERR_OOM, "out of memory");
        if (r) return 1; /* only the first can refuse: the size and the CPU are the same for all */
    }
    return MT_OK;
}
