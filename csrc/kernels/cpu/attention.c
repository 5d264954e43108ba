/* attention.c — the fused CPU attention kernel (PyTorch's
 * _scaled_dot_product_flash_attention_for_cpu) and its backward.
 *
 * q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, E] with Hq a multiple of Hk
 * (query head h reads key/value head h / (Hq / Hk): grouped-query attention
 * without repeating k/v). Forward: each task takes a block of query rows of one
 * (batch, head) and walks the keys in blocks (online softmax: a running row max
 * and sum, the accumulator rescaled when the max grows), so the [L, S] score
 * matrix is never materialised, nor is a causal mask. It saves the row
 * logsumexp; the backward recomputes each probability block from it. Scores,
 * probabilities and accumulators are float (double for float64). The block
 * products run on a register-blocked micro-kernel (6 rows x up to four vectors
 * of columns, four only with AVX-512's 32 registers; GCC vector extensions,
 * compiled per ISA by MT_SIMD): for these small, many products it is faster
 * than OpenBLAS's packing GEMM, and it runs on the pool thread that calls it.
 * Transposed operands are packed per block.
 * A row with every key masked gives 0 (and a zero gradient), as PyTorch's
 * kernel does. */

#include "loops.h"
#include "nn.h"
#include "simd_avx512.h"
#include "vecmath.h"

mt_status mt__impl_expand(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);

#define BK 128 /* keys per block */
#define BQ 64  /* query rows per block */

enum { MASK_NONE, MASK_BOOL, MASK_ADD };

typedef struct {
    const char *q, *k, *v, *go, *o; /* compute dtype; rows contiguous */
    const char *mask;               /* [B, Hq, L, S] by mstr (0 where broadcast) */
    char *out, *lse, *gq, *gk, *gv;
    int64_t B, Hq, Hk, L, S, E, nqb;
    struct share *share; /* each thread's run of tasks (run_tasks) */
    int parts;
    int64_t qs[3], ks[3], vs[3], os[3], gos[3], mstr[4]; /* element strides: batch, head, row (mask: + col) */
    int mask_kind, causal;
    double scale;
} att;


#define EXPF_f mt_v_expf
#define EXPF_d exp
#define LOGF_f logf
#define LOGF_d log
typedef float vec_f __attribute__((vector_size(64)));
typedef double vec_d __attribute__((vector_size(64)));

/* the tile for the rows left (6 or fewer), with NV vectors of columns */
#define TILES(SUF, NV, rows, ...)                                                                  \
    switch ((rows) < 6 ? (int)(rows) : 6) {                                                        \
    case 6: tile_##SUF(6, NV, __VA_ARGS__); break;                                                 \
    case 5: tile_##SUF(5, NV, __VA_ARGS__); break;                                                 \
    case 4: tile_##SUF(4, NV, __VA_ARGS__); break;                                                 \
    case 3: tile_##SUF(3, NV, __VA_ARGS__); break;                                                 \
    case 2: tile_##SUF(2, NV, __VA_ARGS__); break;                                                 \
    default: tile_##SUF(1, NV, __VA_ARGS__);                                                       \
    }
#define TILES_f(...) TILES(f, __VA_ARGS__)
#define TILES_d(...) TILES(d, __VA_ARGS__)

/* One form of the block product (A's layout, acc), out of line: inlined at each of its seven calls,
 * the micro-kernel's 18 tiles made this file take minutes to compile. acc stays a constant, so the
 * tile's alpha * AB + C contracts to the same FMAs as when it was inlined. The 4-vector tiles
 * (AVX-512 only: 24 accumulators need its 32 vector registers) are a function of their own:
 * compiled beside the narrower ones, they had one B vector spilled to the stack. */
#define GEMM_FORM(SUF, T, NAME, ARS, APS, ACC)                                                     \
    MT_SIMD __attribute__((noinline)) static int64_t NAME##_wide_##SUF(int64_t m, int64_t n, int64_t k, T alpha, \
                                                                       const T *A, int64_t lda, const T *B, \
                                                                       int64_t ldb, T *C, int64_t ldc) { \
        enum { W = sizeof(vec_##SUF) / sizeof(T) };                                                \
        int64_t n4 = n / (4 * W) * (4 * W);                                                        \
        panels_##SUF(4, 0, n4, m, k, alpha, A, ARS, APS, B, ldb, ACC, C, ldc);                     \
        return n4;                                                                                 \
    }                                                                                              \
    MT_SIMD __attribute__((noinline)) static void NAME##_##SUF(int64_t m, int64_t n, int64_t k, T alpha, const T *A, \
                                                               int64_t lda, const T *B, int64_t ldb, T *C, int64_t ldc) { \
        int64_t j0 = mt__cpu_avx512f() ? NAME##_wide_##SUF(m, n, k, alpha, A, lda, B, ldb, C, ldc) : 0; \
        gemm_##SUF(j0, m, n, k, alpha, A, ARS, APS, B, ldb, ACC, C, ldc);                          \
    }

/* dst[c, r] = src[r, c] for an r x c block (ld: row strides). Element by element, the transposed
 * copies of K and V (backward) and of the query block (forward) took a fifth of the kernels' time
 * outside the block products on Zen 4: strided single-float stores. */
static inline void pack_t_d(int64_t r, int64_t c, const double *src, int64_t lds, double *dst, int64_t ldd) {
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) dst[j * ldd + i] = src[i * lds + j];
}
static inline void pack_t_f(int64_t r, int64_t c, const float *src, int64_t lds, float *dst, int64_t ldd) {
#ifdef MT_HAVE_AVX512_HELPERS
    if (mt__cpu_avx512f()) { mt__transpose_f32(src, lds, dst, ldd, r, c); return; }
#endif
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) dst[j * ldd + i] = src[i * lds + j];
}

/* Thread p runs tasks [p * chunk, (p + 1) * chunk) in order, as a fixed split does, then takes what is left
 * of the others' runs: on a loaded host a thread kept off its core for milliseconds no longer holds up the
 * call. (A shared counter, tasks dealt alternately, measured 7-11% slower undisturbed than the fixed
 * split: neighbouring tasks went to different threads.) A task's results do not depend on its thread. */
struct share {
    _Alignas(64) int64_t next; /* atomic */
    int64_t end;
};
static int64_t take(const att *a, int p) {
    for (int r = 0; r < a->parts; r++) {
        struct share *q = &a->share[(p + r) % a->parts];
        int64_t t = __atomic_load_n(&q->next, __ATOMIC_RELAXED) < q->end ? __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED) : q->end;
        if (t < q->end) return t;
    }
    return -1;
}

#define DEF_ATT(SUF, T)                                                                            \
    /* one MR x (NV vectors) tile of C; MR, NV constants after inlining, so the up to 24       \
     * accumulators stay in registers. A's element (r, p) is a[r * ars + p * aps]. */            \
    static inline __attribute__((always_inline)) void tile_##SUF(const int MR, const int NV, int64_t k, T alpha, \
                                                                const T *a, int64_t ars, int64_t aps, \
                                                                const T *B, int64_t ldb, int acc, T *C, int64_t ldc) { \
        enum { W = sizeof(vec_##SUF) / sizeof(T) };                                                \
        vec_##SUF c[6][4] = {{{0}}}, bv[4] = {{0}};                                                \
        for (int64_t p = 0; p < k; p++) {                                                          \
            for (int v = 0; v < NV; v++) memcpy(&bv[v], B + p * ldb + v * W, sizeof bv[v]);      \
            for (int r = 0; r < MR; r++) {                                                         \
                T x = a[r * ars + p * aps];                                                        \
                for (int v = 0; v < NV; v++) c[r][v] += x * bv[v];                                 \
            }                                                                                      \
        }                                                                                          \
        for (int r = 0; r < MR; r++)                                                               \
            for (int v = 0; v < NV; v++) {                                                         \
                vec_##SUF o = c[r][v] * alpha;                                                     \
                if (acc) { vec_##SUF old; memcpy(&old, C + r * ldc + v * W, sizeof old); o += old; } \
                memcpy(C + r * ldc + v * W, &o, sizeof o);                                         \
            }                                                                                      \
    }                                                                                              \
    /* columns [j0, j1) of C in tiles of NV vectors, all rows (j1 - j0: a multiple of NV vectors) */ \
    static inline __attribute__((always_inline)) void panels_##SUF(const int NV, int64_t j0, int64_t j1, int64_t m, \
                                                                  int64_t k, T alpha, const T *A, int64_t ars, \
                                                                  int64_t aps, const T *B, int64_t ldb, int acc, \
                                                                  T *C, int64_t ldc) {              \
        enum { W = sizeof(vec_##SUF) / sizeof(T) };                                                \
        for (; j0 < j1; j0 += NV * W)                                                              \
            for (int64_t i0 = 0; i0 < m; i0 += 6)                                                  \
                TILES_##SUF(NV, m - i0, k, alpha, A + i0 * ars, ars, aps, B + j0, ldb, acc, C + i0 * ldc + j0, ldc); \
    }                                                                                              \
    /* row-major C[m,n] = alpha * A[m,k] @ B[k,n] (+ C when acc), A by (ars, aps) as above; the      \
     * columns from j0 on (those before it: done by the 4-vector tiles) */                         \
    static inline __attribute__((always_inline)) void gemm_##SUF(int64_t j0, int64_t m, int64_t n, int64_t k, T alpha, \
                                                                const T *A, int64_t ars, int64_t aps, \
                                                                const T *B, int64_t ldb, int acc, T *C, int64_t ldc) { \
        enum { W = sizeof(vec_##SUF) / sizeof(T) };                                                \
        int64_t j2 = j0 + (n - j0) / (2 * W) * (2 * W), j1 = j2 + (n - j2) / W * W;                \
        panels_##SUF(2, j0, j2, m, k, alpha, A, ars, aps, B, ldb, acc, C, ldc);                    \
        panels_##SUF(1, j2, j1, m, k, alpha, A, ars, aps, B, ldb, acc, C, ldc);                    \
        if (j1 < n) /* the last columns: rows of axpys */                                          \
            for (int64_t i = 0; i < m; i++) {                                                      \
                T cr[W] = {0};                                                                     \
                for (int64_t p = 0; p < k; p++)                                                    \
                    for (int64_t j = j1; j < n; j++) cr[j - j1] += A[i * ars + p * aps] * B[p * ldb + j]; \
                for (int64_t j = j1; j < n; j++)                                                   \
                    C[i * ldc + j] = alpha * cr[j - j1] + (acc ? C[i * ldc + j] : 0);              \
            }                                                                                      \
    }                                                                                              \
    GEMM_FORM(SUF, T, gemm_set, lda, 1, 0)  /* C = alpha * A B */                                 \
    GEMM_FORM(SUF, T, gemm_add, lda, 1, 1)  /* C += alpha * A B */                                \
    GEMM_FORM(SUF, T, gemm_tadd, 1, lda, 1) /* C += alpha * A^T B, A stored [k, m] */             \
    /* scores of rows [i0, i0+nq) x keys [j0, j0+nk): scale * q k^T + mask, -inf where masked;  \
     * kt: the key block transposed */                                                             \
    static inline __attribute__((always_inline)) void scores_##SUF(const att *a, int64_t b, int64_t h, int64_t i0, int64_t nq, int64_t j0, \
                             int64_t nk, const T *Q, const T *kt, T *s) {                          \
        gemm_set_##SUF(nq, nk, a->E, (T)a->scale, Q, a->qs[2], kt, BK, s, BK);                      \
        for (int64_t r = 0; r < nq; r++) {                                                         \
            T *sr = s + r * BK;                                                                    \
            int64_t i = i0 + r;                                                                    \
            if (a->mask_kind != MASK_NONE) {                                                       \
                int64_t mo = b * a->mstr[0] + h * a->mstr[1] + i * a->mstr[2], ms = a->mstr[3];    \
                if (a->mask_kind == MASK_BOOL) {                                                   \
                    const uint8_t *mk = (const uint8_t *)a->mask + mo + j0 * ms;                   \
                    for (int64_t j = 0; j < nk; j++) sr[j] = mk[j * ms] ? sr[j] : -(T)INFINITY;    \
                } else {                                                                           \
                    const T *mk = (const T *)a->mask + mo + j0 * ms;                               \
                    if (ms == 1) /* a separate loop, so that it vectorises */                      \
                        for (int64_t j = 0; j < nk; j++) sr[j] += mk[j];                           \
                    else                                                                           \
                        for (int64_t j = 0; j < nk; j++) sr[j] += mk[j * ms];                      \
                }                                                                                  \
            }                                                                                      \
            if (a->causal)                                                                         \
                for (int64_t j = i + 1 - j0 > 0 ? i + 1 - j0 : 0; j < nk; j++) sr[j] = -(T)INFINITY; \
        }                                                                                          \
    }                                                                                              \
    /* Scores are computed transposed, st[j][r] = key j . (scale * query r), from keys as they    \
     * lie (no transposed copy of K per block) and the block's queries transposed once; the       \
     * softmax then runs down columns, each step a vector across queries. */                      \
    MT_SIMD static void fwd_##SUF(void *p, int64_t part, int64_t t1) { /* one call per thread */   \
        (void)t1;                                                                                  \
        const att *a = p;                                                                          \
        enum { W = sizeof(vec_##SUF) / sizeof(T) };                                                \
        int64_t E = a->E, G = a->Hq / a->Hk;                                                       \
        T *st = malloc(sizeof(T) * (2 * BK * BQ + BQ * E + 4 * BQ + E * BQ));                      \
        if (!st) return; /* the caller pre-checked a probe allocation of this size */             \
        T *acc = st + BK * BQ, *m = acc + BQ * E, *l = m + BQ, *al = l + BQ, *ref = al + BQ, *qt = ref + BQ; \
        T *mt = qt + E * BQ; /* a float mask's block, transposed as the scores are */              \
        for (int64_t t; (t = take(a, (int)part)) >= 0;) {                                          \
            int64_t b = t / (a->Hq * a->nqb), h = t / a->nqb % a->Hq, i0 = t % a->nqb * BQ;        \
            int64_t nq = mt__min64(BQ, a->L - i0), kend = a->causal ? mt__min64(a->S, i0 + nq) : a->S;     \
            int64_t nqp = (nq + W - 1) / W * W; /* columns padded to whole vectors (BQ % W == 0) */ \
            const T *Q = (const T *)a->q + b * a->qs[0] + h * a->qs[1] + i0 * a->qs[2];            \
            const T *K = (const T *)a->k + b * a->ks[0] + h / G * a->ks[1];                        \
            const T *V = (const T *)a->v + b * a->vs[0] + h / G * a->vs[1];                        \
            pack_t_##SUF(nq, E, Q, a->qs[2], qt, BQ);                                              \
            for (int64_t e = 0; e < E; e++)                                                        \
                for (int64_t r = 0; r < nqp; r++) qt[e * BQ + r] = r < nq ? qt[e * BQ + r] * (T)a->scale : 0; \
            for (int64_t r = 0; r < nqp; r++) m[r] = -(T)INFINITY, l[r] = 0;                       \
            memset(acc, 0, sizeof(T) * nq * E);                                                    \
            for (int64_t j0 = 0; j0 < kend; j0 += BK) {                                            \
                int64_t nk = mt__min64(BK, kend - j0);                                                 \
                gemm_set_##SUF(nk, nqp, E, 1, K + j0 * a->ks[2], a->ks[2], qt, BQ, st, BQ);      \
                if (a->mask_kind == MASK_ADD && a->mstr[3] == 1 && a->mstr[2] != 0) {              \
                    /* read down its columns element by element, the mask took a tenth of the forward */ \
                    pack_t_##SUF(nq, nk, (const T *)a->mask + b * a->mstr[0] + h * a->mstr[1] + i0 * a->mstr[2] + j0, \
                                 a->mstr[2], mt, BQ);                                              \
                    for (int64_t j = 0; j < nk; j++)                                               \
                        for (int64_t r = 0; r < nq; r++) st[j * BQ + r] += mt[j * BQ + r];         \
                } else if (a->mask_kind != MASK_NONE)                                              \
                    for (int64_t j = 0; j < nk; j++) {                                             \
                        int64_t mo = b * a->mstr[0] + h * a->mstr[1] + i0 * a->mstr[2] + (j0 + j) * a->mstr[3], ms = a->mstr[2]; \
                        T *row = st + j * BQ;                                                      \
                        if (a->mask_kind == MASK_BOOL)                                             \
                            for (int64_t r = 0; r < nq; r++) row[r] = ((const uint8_t *)a->mask)[mo + r * ms] ? row[r] : -(T)INFINITY; \
                        else                                                                       \
                            for (int64_t r = 0; r < nq; r++) row[r] += ((const T *)a->mask)[mo + r * ms]; \
                    }                                                                              \
                if (a->causal) /* key j0 + j is hidden from queries before it */                   \
                    for (int64_t j = 0; j < nk; j++)                                               \
                        for (int64_t r = 0; r < mt__min64(nq, j0 + j - i0); r++) st[j * BQ + r] = -(T)INFINITY; \
                for (int64_t r = 0; r < nqp; r++) ref[r] = m[r];                                   \
                for (int64_t j = 0; j < nk; j++)                                                   \
                    for (int64_t r = 0; r < nqp; r++) ref[r] = st[j * BQ + r] > ref[r] ? st[j * BQ + r] : ref[r]; \
                for (int64_t r = 0; r < nqp; r++) { /* running max; 0 stands for it while a column is all masked */ \
                    T mn = ref[r];                                                                 \
                    ref[r] = mn == -(T)INFINITY ? 0 : mn;                                          \
                    al[r] = EXPF_##SUF(m[r] - ref[r]);                                             \
                    m[r] = mn;                                                                     \
                    l[r] *= al[r];                                                                 \
                }                                                                                  \
                for (int64_t j = 0; j < nk; j++)                                                   \
                    for (int64_t r = 0; r < nqp; r++) {                                            \
                        T e = EXPF_##SUF(st[j * BQ + r] - ref[r]);                                 \
                        st[j * BQ + r] = e;                                                        \
                        l[r] += e;                                                                 \
                    }                                                                              \
                for (int64_t r = 0; r < nq; r++)                                                   \
                    if (al[r] != 1)                                                                \
                        for (int64_t e = 0; e < E; e++) acc[r * E + e] *= al[r];                   \
                gemm_tadd_##SUF(nq, E, nk, 1, st, BQ, V + j0 * a->vs[2], a->vs[2], acc, E);       \
            }                                                                                      \
            T *lse = (T *)a->lse + (b * a->Hq + h) * a->L + i0;                                    \
            for (int64_t r = 0; r < nq; r++) {                                                     \
                T *o = (T *)a->out + b * a->os[0] + h * a->os[1] + (i0 + r) * a->os[2];            \
                T inv = l[r] > 0 ? 1 / l[r] : 0;                                                   \
                for (int64_t e = 0; e < E; e++) o[e] = acc[r * E + e] * inv;                       \
                lse[r] = l[r] > 0 ? m[r] + LOGF_##SUF(l[r]) : (T)INFINITY;                         \
            }                                                                                      \
        }                                                                                          \
        free(st);                                                                                  \
    }                                                                                              \
    /* one task per (batch, key head): it owns dk, dv of that head and dq of its query heads. Key   \
     * blocks are the outer loop, so each is transposed once for all the query blocks of the group */ \
    MT_SIMD static void bwd_##SUF(void *p, int64_t part, int64_t t1) { /* one call per thread */   \
        (void)t1;                                                                                  \
        const att *a = p;                                                                          \
        int64_t E = a->E, G = a->Hq / a->Hk;                                                       \
        T *s = malloc(sizeof(T) * (2 * BQ * BK + 2 * E * BK + G * a->L));                          \
        if (!s) return;                                                                            \
        T *dp = s + BQ * BK, *kt = dp + BQ * BK, *vt = kt + E * BK, *D = vt + E * BK;              \
        for (int64_t t; (t = take(a, (int)part)) >= 0;) {                                          \
            int64_t b = t / a->Hk, hk = t % a->Hk;                                                 \
            const T *K = (const T *)a->k + b * a->ks[0] + hk * a->ks[1];                           \
            const T *V = (const T *)a->v + b * a->vs[0] + hk * a->vs[1];                           \
            T *gk = (T *)a->gk + (b * a->Hk + hk) * a->S * E, *gv = (T *)a->gv + (b * a->Hk + hk) * a->S * E; \
            /* the task's own gradients zeroed here, in parallel and while they stay in cache */     \
            memset(gk, 0, sizeof(T) * a->S * E);                                                   \
            memset(gv, 0, sizeof(T) * a->S * E);                                                   \
            memset((T *)a->gq + b * a->Hq * a->L * E + hk * G * a->L * E, 0, sizeof(T) * G * a->L * E); \
            for (int64_t h = hk * G; h < (hk + 1) * G; h++) /* D = rowsum(go * o) */               \
                for (int64_t i = 0; i < a->L; i++)                                                 \
                    D[(h - hk * G) * a->L + i] =                                                   \
                        mt__rdot_##SUF((const T *)a->go + b * a->gos[0] + h * a->gos[1] + i * a->gos[2], \
                                       (const T *)a->o + b * a->os[0] + h * a->os[1] + i * a->os[2], E); \
            for (int64_t j0 = 0; j0 < a->S; j0 += BK) {                                            \
                int64_t nk = mt__min64(BK, a->S - j0);                                                 \
                const T *Kj = K + j0 * a->ks[2], *Vj = V + j0 * a->vs[2];                          \
                pack_t_##SUF(nk, E, Kj, a->ks[2], kt, BK);                                         \
                pack_t_##SUF(nk, E, Vj, a->vs[2], vt, BK);                                         \
                for (int64_t h = hk * G; h < (hk + 1) * G; h++)                                    \
                    for (int64_t i0 = 0; i0 < a->L; i0 += BQ) {                                    \
                        int64_t nq = mt__min64(BQ, a->L - i0);                                         \
                        if (a->causal && j0 >= i0 + nq) continue; /* every key of the block is hidden */ \
                        int64_t nkq = a->causal ? mt__min64(nk, i0 + nq - j0) : nk;                    \
                        const T *Q = (const T *)a->q + b * a->qs[0] + h * a->qs[1] + i0 * a->qs[2]; \
                        const T *GO = (const T *)a->go + b * a->gos[0] + h * a->gos[1] + i0 * a->gos[2]; \
                        const T *lse = (const T *)a->lse + (b * a->Hq + h) * a->L + i0;            \
                        const T *Dq = D + (h - hk * G) * a->L + i0;                                \
                        T *gq = (T *)a->gq + ((b * a->Hq + h) * a->L + i0) * E;                    \
                        scores_##SUF(a, b, h, i0, nq, j0, nkq, Q, kt, s);                           \
                        for (int64_t r = 0; r < nq; r++) {                                         \
                            T *sr = s + r * BK, ls = lse[r];                                       \
                            for (int64_t j = 0; j < nkq; j++) sr[j] = EXPF_##SUF(sr[j] - ls);       \
                            if (ls == (T)INFINITY)                                                 \
                                for (int64_t j = 0; j < nkq; j++) sr[j] = 0;                        \
                        }                                                                          \
                        gemm_tadd_##SUF(nkq, E, nq, 1, s, BK, GO, a->gos[2], gv + j0 * E, E); /* p^T go */ \
                        gemm_set_##SUF(nq, nkq, E, 1, GO, a->gos[2], vt, BK, dp, BK);            \
                        for (int64_t r = 0; r < nq; r++)                                           \
                            for (int64_t j = 0; j < nkq; j++)                                       \
                                dp[r * BK + j] = s[r * BK + j] * (dp[r * BK + j] - Dq[r]);         \
                        gemm_add_##SUF(nq, E, nkq, (T)a->scale, dp, BK, Kj, a->ks[2], gq, E);    \
                        gemm_tadd_##SUF(nkq, E, nq, (T)a->scale, dp, BK, Q, a->qs[2], gk + j0 * E, E); \
                    }                                                                              \
            }                                                                                      \
        }                                                                                          \
        free(s);                                                                                   \
    }

DEF_ATT(f, float)
DEF_ATT(d, double)

/* ---- entry points ------------------------------------------------------------------ */

/* t in the compute dtype with contiguous, BLAS-addressable rows (t itself, retained, when it is) */
static mt_status rows_ok(mt_tensor *t, int cd, mt_tensor **out) {
    int64_t n = t->sizes[3];
    if (t->dtype == cd && (t->strides[3] == 1 || n == 1) && t->strides[2] >= (n > 1 ? n : 1)) {
        mt_tensor_retain(t);
        *out = t;
        return MT_OK;
    }
    return mt__nn_contig(t, cd, out);
}

/* fn on as many threads as the tasks' work is worth (see take) */
static void run_tasks(att *a, int64_t tasks, int64_t work, mt_task_fn fn) {
    int64_t grain = 1 + MT_GRAIN_SIZE / (work > 0 ? work : 1), parts = mt__min64(mt_get_num_threads(), tasks / grain);
    struct share sh[64];
    a->parts = parts < 1 ? 1 : parts > 64 ? 64 : (int)parts;
    a->share = sh;
    int64_t chunk = (tasks + a->parts - 1) / a->parts;
    for (int p = 0; p < a->parts; p++) sh[p].next = mt__min64(p * chunk, tasks), sh[p].end = mt__min64((p + 1) * chunk, tasks);
    mt__parallel_for(a->parts, 1, fn, a);
}

static void strides3(const mt_tensor *t, int64_t *s) { s[0] = t->strides[0], s[1] = t->strides[1], s[2] = t->strides[2]; }

/* the mask in the kernel's form: bool as is, additive in the compute dtype, expanded to [B, Hq, L, S] */
static mt_status prep_mask(mt_tensor *mask, int cd, const int64_t *full, att *a, mt_tensor **keep) {
    *keep = NULL;
    if (!mask) { a->mask_kind = MASK_NONE; return MT_OK; }
    mt_tensor *m = NULL, *e = NULL;
    if (mask->dtype == MT_BOOL || mask->dtype == cd) {
        mt_tensor_retain(mask);
        m = mask;
    } else {
        MT_TRY(mt__impl_to_dtype(mask, cd, 0, &m));
    }
    mt_status st = mt__impl_expand(m, 4, full, &e);
    mt_tensor_release(m);
    if (st) return st;
    a->mask_kind = mask->dtype == MT_BOOL ? MASK_BOOL : MASK_ADD;
    a->mask = mt__data(e);
    for (int i = 0; i < 4; i++) a->mstr[i] = e->strides[i];
    *keep = e;
    return MT_OK;
}

static void setup(att *a, mt_tensor *q, mt_tensor *k, int causal, double scale) {
    a->B = q->sizes[0], a->Hq = q->sizes[1], a->L = q->sizes[2], a->E = q->sizes[3];
    a->Hk = k->sizes[1], a->S = k->sizes[2];
    a->causal = causal, a->scale = scale;
    a->nqb = (a->L + BQ - 1) / BQ;
}

mt_status mt__impl_sdpa_flash(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask, int causal, double scale,
                              mt_tensor **out, mt_tensor **lse) {
    int cd = mt__nn_compute_dtype(q->dtype);
    int64_t strides[4], lsz[3] = {q->sizes[0], q->sizes[1], q->sizes[2]};
    mt__like_strides(q, strides);
    if (q->device == MT_META) {
        MT_TRY(mt__alloc(4, q->sizes, strides, q->dtype, MT_META, out));
        mt_status st = mt__alloc(3, lsz, NULL, cd, MT_META, lse);
        if (st) MT_DROP(*out);
        return st;
    }
    att a = {0};
    setup(&a, q, k, causal, scale);
    int64_t full[4] = {a.B, a.Hq, a.L, a.S};
    mt_tensor *qc = NULL, *kc = NULL, *vc = NULL, *mk = NULL, *o = NULL, *ls = NULL;
    mt_status st = rows_ok(q, cd, &qc);
    if (!st) st = rows_ok(k, cd, &kc);
    if (!st) st = rows_ok(v, cd, &vc);
    if (!st) st = prep_mask(mask, cd, full, &a, &mk);
    if (!st) st = mt__alloc(4, q->sizes, strides, cd, MT_CPU, &o);
    if (!st) st = mt__alloc(3, lsz, NULL, cd, MT_CPU, &ls);
    if (!st) {
        void *probe = malloc(mt_dtype_itemsize(cd) * (3 * BQ * BK + 2 * BQ + 2 * a.E * BK + BQ * a.E));
        if (!probe) st = mt__error(MT_ERR_OOM, "scaled_dot_product_attention: out of memory");
        free(probe);
    }
    if (!st) {
        a.q = mt__data(qc), a.k = mt__data(kc), a.v = mt__data(vc), a.out = mt__data(o), a.lse = mt__data(ls);
        strides3(qc, a.qs), strides3(kc, a.ks), strides3(vc, a.vs), strides3(o, a.os);
        run_tasks(&a, a.B * a.Hq * a.nqb, BQ * a.S * a.E, cd == MT_F64 ? fwd_d : fwd_f);
        st = mt__nn_narrow(o, q->dtype, out);
        o = NULL;
        if (!st) { *lse = ls; ls = NULL; }
    }
    mt_tensor_release(qc), mt_tensor_release(kc), mt_tensor_release(vc), mt_tensor_release(mk);
    mt_tensor_release(o), mt_tensor_release(ls);
    return st;
}

mt_status mt__impl_sdpa_flash_backward(mt_tensor *grad, mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *out,
                                       mt_tensor *lse, mt_tensor *mask, int causal, double scale, mt_tensor **gq,
                                       mt_tensor **gk, mt_tensor **gv) {
    int cd = mt__nn_compute_dtype(q->dtype);
    *gq = *gk = *gv = NULL;
    if (q->device == MT_META) {
        MT_TRY(mt__alloc(4, q->sizes, NULL, q->dtype, MT_META, gq));
        MT_TRY(mt__alloc(4, k->sizes, NULL, k->dtype, MT_META, gk));
        return mt__alloc(4, v->sizes, NULL, v->dtype, MT_META, gv);
    }
    att a = {0};
    setup(&a, q, k, causal, scale);
    int64_t full[4] = {a.B, a.Hq, a.L, a.S};
    mt_tensor *qc = NULL, *kc = NULL, *vc = NULL, *gc = NULL, *oc = NULL, *mk = NULL, *lc = NULL;
    mt_tensor *rq = NULL, *rk = NULL, *rv = NULL;
    mt_status st = rows_ok(q, cd, &qc);
    if (!st) st = rows_ok(k, cd, &kc);
    if (!st) st = rows_ok(v, cd, &vc);
    if (!st) st = rows_ok(grad, cd, &gc);
    if (!st) st = rows_ok(out, cd, &oc);
    if (!st) st = mt__nn_contig(lse, cd, &lc);
    if (!st) st = prep_mask(mask, cd, full, &a, &mk);
    if (!st) st = mt__alloc(4, q->sizes, NULL, cd, MT_CPU, &rq);
    if (!st) st = mt__alloc(4, k->sizes, NULL, cd, MT_CPU, &rk);
    if (!st) st = mt__alloc(4, v->sizes, NULL, cd, MT_CPU, &rv);
    if (!st) {
        void *probe = malloc(mt_dtype_itemsize(cd) * (2 * BQ * BK + 2 * a.E * BK + a.Hq / a.Hk * a.L));
        if (!probe) st = mt__error(MT_ERR_OOM, "scaled_dot_product_attention backward: out of memory");
        free(probe);
    }
    if (!st) {
        a.q = mt__data(qc), a.k = mt__data(kc), a.v = mt__data(vc), a.go = mt__data(gc), a.o = mt__data(oc);
        a.lse = mt__data(lc), a.gq = mt__data(rq), a.gk = mt__data(rk), a.gv = mt__data(rv);
        strides3(qc, a.qs), strides3(kc, a.ks), strides3(vc, a.vs), strides3(oc, a.os), strides3(gc, a.gos);
        run_tasks(&a, a.B * a.Hk, (a.Hq / a.Hk) * a.L * a.S * a.E, cd == MT_F64 ? bwd_d : bwd_f);
        st = mt__nn_narrow(rq, q->dtype, gq);
        rq = NULL;
        if (!st) st = mt__nn_narrow(rk, k->dtype, gk);
        rk = NULL;
        if (!st) st = mt__nn_narrow(rv, v->dtype, gv);
        rv = NULL;
        if (st) {
            MT_DROP(*gq);
            MT_DROP(*gk);
        }
    }
    mt_tensor_release(qc), mt_tensor_release(kc), mt_tensor_release(vc), mt_tensor_release(gc);
    mt_tensor_release(oc), mt_tensor_release(mk), mt_tensor_release(lc);
    mt_tensor_release(rq), mt_tensor_release(rk), mt_tensor_release(rv);
    return st;
}
