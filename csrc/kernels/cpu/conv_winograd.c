/* conv_winograd.c — float32 3x3 stride-1 convolution by Winograd F(2x2, 3x3) (Lavin & Gray 2015).
 * Each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A of its 4x4 input patch d, so the sum over
 * input channels becomes 16 independent GEMMs, one per transformed position, with 2.25x fewer
 * multiply-adds than im2col's. The transforms use only 0, +-1 and +-1/2: the rounding stays that
 * of a direct sum (the larger F(4x4, 3x3) would amplify it by its 4s and 8s).
 * Channels sit in the AVX-512 lanes. Tiles are taken in blocks whose transformed input and output
 * fit L2 (a pool task runs whole blocks), a block in segments of one tile row: a segment's four
 * input rows are transposed to NHWC into a small buffer (16x16 in registers), and its two output
 * rows are transposed back into the NCHW result, so no pass over the whole tensor is added.
 * The GEMMs run on a 6-tile x 64-channel register tile with the transformed weights streamed,
 * so nothing is packed per call but the weights. The input gradient is the same correlation with
 * the kernel rotated; the weight gradient is the transposed algorithm, F(3x3, 2x2), below.
 * Without AVX-512, conv.c keeps im2col + GEMM. */
#include <stdlib.h>
#include <string.h>

#include "simd_avx512.h"
#include "spatial.h"

#define WG_RT 6   /* tiles per register tile */
#define WG_BUDGET (768 << 10) /* bytes of a block's transformed input + output (L2 is 1.25-2 MB) */

typedef struct {
    int64_t N, C, H, W, K, OH, OW, ph, pw;
    int64_t th, tw, T, Kp, TB; /* tile rows/cols per image, tiles, K rounded up to 16, tiles per block */
    const float *x;            /* [N][C][H][W] */
    const float *U;            /* transformed weights [16][C][Kp], zero past K (u_index) */
    const float *bias;         /* [Kp] (zero past K) or NULL */
    float *out;                /* [N][K][OH][OW] */
    int64_t ldv;               /* row stride of the transformed input: C, or C rounded up to 6 (weight gradient) */
    const float *go;           /* weight gradient: the output gradient [N][K][OH][OW] */
    float *P;                  /* weight gradient: per slice of blocks, the sums [16][ldv][Kp] */
    int64_t nslices;
    int failed;                /* a block's scratch could not be allocated */
} wg_plan;

int mt__winograd_fits(int64_t C, int64_t K, int64_t OH, int64_t OW) {
    /* 16+ channels a side: with fewer, most lanes of the channel vectors would be empty */
    return mt__cpu_avx512f() && C >= 16 && K >= 16 && OH >= 2 && OW >= 2;
}

#ifdef MT_HAVE_AVX512_HELPERS

/* ---- weights: U[4i+j][c][k] = (G g G^T)[i][j], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1], stored
 * as one [C][64] panel per 64 output channels (the last one narrower) so the GEMM streams it ---- */
static int64_t u_index(const wg_plan *p, int x, int64_t c, int64_t k) {
    int64_t k0 = k / 64 * 64, cw = p->Kp - k0 < 64 ? p->Kp - k0 : 64;
    return x * p->C * p->Kp + k0 * p->C + c * cw + (k - k0);
}
typedef struct { const float *w; wg_plan *p; int flip; } wt_ctx;
/* items: groups of 16 output channels (the lanes), each input channel's 16 kernels at once */
static AVX512 void weight_task(void *ctx, int64_t k0, int64_t k1) {
    wt_ctx *c = ctx;
    const wg_plan *p = c->p;
    const __m512 h = _mm512_set1_ps(0.5f);
    for (int64_t kb = k0 * 16; kb < k1 * 16; kb += 16)
        for (int64_t ci = 0; ci < p->C; ci++) {
            float g[9][16];
            for (int l = 0; l < 16; l++) {
                int64_t k = kb + l;
                /* flip: the weight of conv_transpose / the input gradient, w[ci][k] rotated by 180 degrees */
                const float *s = k >= p->K ? NULL : c->flip ? c->w + (ci * p->K + k) * 9 : c->w + (k * p->C + ci) * 9;
                for (int a = 0; a < 9; a++) g[a][l] = s ? s[c->flip ? 8 - a : a] : 0.0f;
            }
            __m512 t[4][3];
            for (int b = 0; b < 3; b++) {
                __m512 g0 = _mm512_loadu_ps(g[b]), g1 = _mm512_loadu_ps(g[3 + b]), g2 = _mm512_loadu_ps(g[6 + b]);
                t[0][b] = g0;
                t[1][b] = _mm512_mul_ps(h, _mm512_add_ps(_mm512_add_ps(g0, g1), g2));
                t[2][b] = _mm512_mul_ps(h, _mm512_add_ps(_mm512_sub_ps(g0, g1), g2));
                t[3][b] = g2;
            }
            float *U = (float *)p->U + u_index(p, 0, ci, kb);
            for (int i = 0; i < 4; i++) {
                __m512 u[4] = {t[i][0], _mm512_mul_ps(h, _mm512_add_ps(_mm512_add_ps(t[i][0], t[i][1]), t[i][2])),
                               _mm512_mul_ps(h, _mm512_add_ps(_mm512_sub_ps(t[i][0], t[i][1]), t[i][2])), t[i][2]};
                for (int j = 0; j < 4; j++) _mm512_storeu_ps(U + (4 * i + j) * p->C * p->Kp, u[j]);
            }
        }
}

/* the four input rows of a segment of `seg` tiles from tile column tx0 of tile row ty, as NHWC
 * S[4][2*seg+2][C] with the padding as zeros */
static AVX512 void stage_input(const wg_plan *p, int64_t n, int64_t ty, int64_t tx0, int64_t seg, float *S) {
    int64_t C = p->C, ncols = 2 * seg + 2, ix0 = 2 * tx0 - p->pw;
    int64_t lo = ix0 < 0 ? -ix0 : 0, hi = p->W - ix0 < ncols ? p->W - ix0 : ncols;
    if (hi < lo) hi = lo;
    for (int r = 0; r < 4; r++) {
        int64_t iy = 2 * ty - p->ph + r;
        float *row = S + r * ncols * C;
        if (iy < 0 || iy >= p->H) {
            memset(row, 0, ncols * C * sizeof(float));
            continue;
        }
        memset(row, 0, lo * C * sizeof(float));
        memset(row + hi * C, 0, (ncols - hi) * C * sizeof(float));
        mt__transpose_f32(p->x + (n * C * p->H + iy) * p->W + ix0 + lo, p->H * p->W, row + lo * C, C, C, hi - lo);
    }
}

/* rows of B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] applied to four vectors */
#define BT(d0, d1, d2, d3, o0, o1, o2, o3) \
    o0 = _mm512_sub_ps(d0, d2), o1 = _mm512_add_ps(d1, d2), o2 = _mm512_sub_ps(d2, d1), o3 = _mm512_sub_ps(d1, d3)

/* V[16][TB][C] rows t..t+seg from the staged rows S: a tile's columns 2, 3 are the next one's 0, 1,
 * so each column is loaded and transformed once */
static AVX512 void input_transform(const wg_plan *p, const float *S, int64_t seg, float *V) {
    int64_t C = p->C, ncols = 2 * seg + 2, xs = p->TB * p->ldv;
    for (int64_t c = 0; c < C; c += 16) {
        __mmask16 m = C - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (C - c)) - 1);
        __m512 e[4][4]; /* B^T applied down the columns of the current tile */
        for (int q = 0; q < 2; q++) {
            const float *col = S + q * C + c;
            BT(_mm512_maskz_loadu_ps(m, col), _mm512_maskz_loadu_ps(m, col + ncols * C),
               _mm512_maskz_loadu_ps(m, col + 2 * ncols * C), _mm512_maskz_loadu_ps(m, col + 3 * ncols * C),
               e[0][q], e[1][q], e[2][q], e[3][q]);
        }
        for (int64_t s = 0; s < seg; s++) {
            for (int q = 2; q < 4; q++) {
                const float *col = S + (2 * s + q) * C + c;
                BT(_mm512_maskz_loadu_ps(m, col), _mm512_maskz_loadu_ps(m, col + ncols * C),
                   _mm512_maskz_loadu_ps(m, col + 2 * ncols * C), _mm512_maskz_loadu_ps(m, col + 3 * ncols * C),
                   e[0][q], e[1][q], e[2][q], e[3][q]);
            }
            float *v = V + s * p->ldv + c;
            for (int i = 0; i < 4; i++) {
                __m512 o[4];
                BT(e[i][0], e[i][1], e[i][2], e[i][3], o[0], o[1], o[2], o[3]);
                for (int j = 0; j < 4; j++) _mm512_mask_storeu_ps(v + (4 * i + j) * xs, m, o[j]);
                e[i][0] = e[i][2], e[i][1] = e[i][3];
            }
        }
    }
}

/* M[x][t0..t0+6][k0..k0+16*NV] = V[x][t0..t0+6][:] @ U's panel [C][16*NV]: 6 x NV accumulators,
 * per input channel NV weight vectors loaded and 6 broadcasts */
static inline __attribute__((always_inline)) AVX512 void gemm_tile(const float *V, int64_t ldv, const float *U,
                                                                   float *M, int64_t C, int64_t Kp, int NV) {
    __m512 acc[WG_RT][4];
    for (int r = 0; r < WG_RT; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    for (int64_t c = 0; c < C; c++) {
        __m512 u[4];
        for (int v = 0; v < NV; v++) u[v] = _mm512_loadu_ps(U + c * 16 * NV + 16 * v);
        for (int r = 0; r < WG_RT; r++) {
            __m512 b = _mm512_set1_ps(V[r * ldv + c]);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(b, u[v], acc[r][v]);
        }
    }
    for (int r = 0; r < WG_RT; r++)
        for (int v = 0; v < NV; v++) _mm512_storeu_ps(M + r * Kp + 16 * v, acc[r][v]);
}
/* nv weight vectors (1-4): a constant in each case, so every variant keeps its accumulators in registers */
static AVX512 void gemm_tiles(int nv, const float *V, int64_t ldv, const float *U, float *M, int64_t C, int64_t Kp) {
    switch (nv) {
    case 4: gemm_tile(V, ldv, U, M, C, Kp, 4); break;
    case 3: gemm_tile(V, ldv, U, M, C, Kp, 3); break;
    case 2: gemm_tile(V, ldv, U, M, C, Kp, 2); break;
    default: gemm_tile(V, ldv, U, M, C, Kp, 1); break;
    }
}

/* rows of A^T = [1 1 1 0; 0 1 -1 -1] */
#define AT2(m0, m1, m2, m3, o0, o1) o0 = _mm512_add_ps(_mm512_add_ps(m0, m1), m2), o1 = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3)

/* a segment's outputs from M[16][TB][Kp] rows t..t+seg, bias added, as two NHWC rows
 * S[2][2*seg][Kp], then transposed into the result's rows 2*ty, 2*ty+1 */
static AVX512 void output_transform(const wg_plan *p, const float *M, int64_t n, int64_t ty, int64_t tx0,
                                    int64_t seg, float *S) {
    int64_t Kp = p->Kp, xs = p->TB * Kp, row = 2 * seg * Kp;
    for (int64_t s = 0; s < seg; s++) {
        const float *ms = M + s * Kp;
        float *o = S + 2 * s * Kp;
        for (int64_t k = 0; k < Kp; k += 16) {
            __m512 m[4][4], a[2][4], y[4];
            for (int x = 0; x < 16; x++) m[x / 4][x % 4] = _mm512_loadu_ps(ms + x * xs + k);
            for (int j = 0; j < 4; j++) AT2(m[0][j], m[1][j], m[2][j], m[3][j], a[0][j], a[1][j]);
            AT2(a[0][0], a[0][1], a[0][2], a[0][3], y[0], y[1]);
            AT2(a[1][0], a[1][1], a[1][2], a[1][3], y[2], y[3]);
            if (p->bias) {
                __m512 b = _mm512_loadu_ps(p->bias + k);
                for (int q = 0; q < 4; q++) y[q] = _mm512_add_ps(y[q], b);
            }
            _mm512_storeu_ps(o + k, y[0]);
            _mm512_storeu_ps(o + Kp + k, y[1]);
            _mm512_storeu_ps(o + row + k, y[2]);
            _mm512_storeu_ps(o + row + Kp + k, y[3]);
        }
    }
    int64_t ox = 2 * tx0, ncols = p->OW - ox < 2 * seg ? p->OW - ox : 2 * seg;
    for (int dy = 0; dy < 2 && 2 * ty + dy < p->OH; dy++)
        mt__transpose_f32(S + dy * row, Kp, p->out + (n * p->K * p->OH + 2 * ty + dy) * p->OW + ox, p->OH * p->OW, ncols,
                       p->K);
}

/* weight vectors per register tile for the 64-channel panel at k (the last one may be narrower) */
static int panel_vectors(const wg_plan *p, int64_t k) { return (int)((p->Kp - k) / 16 < 4 ? (p->Kp - k) / 16 : 4); }

/* rows nt..TB of each of the 16 row blocks of buf [16][TB][ld]: a short block's padding tiles */
static void zero_tail(float *buf, int64_t TB, int64_t nt, int64_t ld) {
    for (int x = 0; x < 16 && nt < TB; x++) memset(buf + (x * TB + nt) * ld, 0, (TB - nt) * ld * sizeof(float));
}

/* a block of tiles [t0, t0 + nt) in segments of one tile row: (n, ty, tx .. tx + seg) at block row t */
#define SEGMENTS(body)                                                                                    \
    for (int64_t t = 0, seg; t < nt; t += seg) {                                                         \
        int64_t g = t0 + t, n = g / (p->th * p->tw), ty = g % (p->th * p->tw) / p->tw, tx = g % p->tw;   \
        seg = p->tw - tx < nt - t ? p->tw - tx : nt - t;                                                 \
        body;                                                                                             \
    }

static AVX512 void block_task(void *ctx, int64_t b0, int64_t b1) {
    wg_plan *p = ctx;
    int64_t TB = p->TB, C = p->C, Kp = p->Kp, ldv = p->ldv;
    int64_t smax = TB < p->tw ? TB : p->tw; /* the longest segment */
    int64_t nV = 16 * TB * ldv, nM = 16 * TB * Kp, nSi = 4 * (2 * smax + 2) * C;
    float *V = malloc((size_t)(nV + nM + nSi + 4 * smax * Kp) * sizeof(float));
    if (!V) {
        __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    float *M = V + nV, *Si = M + nM, *So = Si + nSi;
    for (int64_t b = b0; b < b1; b++) {
        int64_t t0 = b * TB, nt = p->T - t0 < TB ? p->T - t0 : TB;
        SEGMENTS(stage_input(p, n, ty, tx, seg, Si); input_transform(p, Si, seg, V + t * ldv))
        zero_tail(V, TB, nt, ldv);
        for (int64_t k = 0; k < Kp; k += 64) {
            int nv = panel_vectors(p, k);
            for (int x = 0; x < 16; x++) {
                const float *Vx = V + x * TB * ldv, *Ux = p->U + u_index(p, x, 0, k);
                float *Mx = M + x * TB * Kp + k;
                for (int64_t t = 0; t < TB; t += WG_RT) {
                    const float *Vt = Vx + t * ldv;
                    float *Mt = Mx + t * Kp;
                    gemm_tiles(nv, Vt, ldv, Ux, Mt, C, Kp);
                }
            }
        }
        SEGMENTS(output_transform(p, M + t * Kp, n, ty, tx, seg, So))
    }
    free(V);
}

/* tiles per block: a block's share of the scratch that must stay in L2 together (tile_bytes per
 * tile) fits the budget, and the blocks are a multiple of `parts` (the threads, or the weight
 * gradient's slices) of near-equal size, so the parts get equal work */
static void plan_tiles(wg_plan *p, int64_t parts, int64_t tile_bytes) {
    p->th = (p->OH + 1) / 2, p->tw = (p->OW + 1) / 2, p->T = p->N * p->th * p->tw;
    int64_t most = WG_BUDGET / tile_bytes > WG_RT ? WG_BUDGET / tile_bytes : WG_RT;
    int64_t nb = (p->T + most - 1) / most;
    nb = (nb + parts - 1) / parts * parts;
    p->TB = ((p->T + nb - 1) / nb + WG_RT - 1) / WG_RT * WG_RT;
}

mt_status mt__conv3x3_winograd(const float *x, const float *w, const float *bias, float *out, int64_t N, int64_t C,
                               int64_t H, int64_t W, int64_t K, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int flip) {
    wg_plan p = {.N = N, .C = C, .H = H, .W = W, .K = K, .OH = OH, .OW = OW, .ph = ph, .pw = pw, .x = x, .out = out,
                 .ldv = C, .Kp = (K + 15) / 16 * 16};
    /* the output transform needs all 16 transformed positions of a tile: V and M of a block in L2;
     * each output is one block's, so any split gives the same bits */
    plan_tiles(&p, mt_get_num_threads(), 16 * 4 * (C + p.Kp));
    /* the weights as a tensor: a large block comes from the allocator's cache, not fresh pages */
    int64_t n_u = 16 * C * p.Kp + p.Kp; /* then the bias, padded */
    mt_tensor *tu;
    MT_TRY(mt__alloc(1, &n_u, NULL, MT_F32, MT_CPU, &tu));
    float *U = (float *)mt__data(tu);
    memset(U, 0, n_u * sizeof(float));
    if (bias) p.bias = memcpy(U + 16 * C * p.Kp, bias, K * sizeof(float));
    p.U = U;
    wt_ctx wc = {w, &p, flip};
    mt__parallel_for(p.Kp / 16, 1 + 4096 / (C * 144), weight_task, &wc);
    mt__parallel_for((p.T + p.TB - 1) / p.TB, 1, block_task, &p);
    mt_tensor_release(tu);
    return p.failed ? mt__error(MT_ERR_OOM, "out of memory in convolution") : MT_OK;
}

/* ---- the weight gradient, F(3x3, 2x2): gw = G^T [sum over tiles (A go A^T) . (B^T d B)] G ----
 * (the transpose of the forward's algorithm: y = A^T [(G g G^T) . (B^T d B)] A), with the tiles
 * and input transform of the forward. The sum over tiles runs in a fixed number of slices of
 * blocks, added in order at the end, so the result does not depend on the thread count. */
#define WG_SLICES 4

/* the output gradient's two rows of a segment as NHWC S[2][2*seg][Kp], zero past OH/OW (the
 * channels past K stay zero from the allocation) */
static AVX512 void stage_go(const wg_plan *p, int64_t n, int64_t ty, int64_t tx0, int64_t seg, float *S) {
    int64_t Kp = p->Kp, ncols = 2 * seg, ox = 2 * tx0, valid = p->OW - ox < ncols ? p->OW - ox : ncols;
    for (int dy = 0; dy < 2; dy++) {
        float *row = S + dy * ncols * Kp;
        int64_t oy = 2 * ty + dy;
        if (oy >= p->OH) {
            memset(row, 0, ncols * Kp * sizeof(float));
            continue;
        }
        memset(row + valid * Kp, 0, (ncols - valid) * Kp * sizeof(float));
        mt__transpose_f32(p->go + (n * p->K * p->OH + oy) * p->OW + ox, p->OH * p->OW, row, Kp, p->K, valid);
    }
}

/* A go A^T of each tile of the segment, A = [1 0; 1 1; 1 -1; 0 -1], into G[16][TB][Kp] rows t.. */
#define A4(g0, g1, o0, o1, o2, o3) \
    o0 = g0, o1 = _mm512_add_ps(g0, g1), o2 = _mm512_sub_ps(g0, g1), o3 = _mm512_sub_ps(_mm512_setzero_ps(), g1)
static AVX512 void go_transform(const wg_plan *p, const float *S, int64_t seg, float *G) {
    int64_t Kp = p->Kp, xs = p->TB * Kp, row = 2 * seg * Kp;
    for (int64_t s = 0; s < seg; s++)
        for (int64_t k = 0; k < Kp; k += 16) {
            const float *g = S + 2 * s * Kp + k;
            __m512 h[4][2], o[4];
            for (int j = 0; j < 2; j++)
                A4(_mm512_loadu_ps(g + j * Kp), _mm512_loadu_ps(g + row + j * Kp), h[0][j], h[1][j], h[2][j], h[3][j]);
            for (int i = 0; i < 4; i++) {
                A4(h[i][0], h[i][1], o[0], o[1], o[2], o[3]);
                for (int j = 0; j < 4; j++) _mm512_storeu_ps(G + (4 * i + j) * xs + s * Kp + k, o[j]);
            }
        }
}

/* P[c0..c0+6][k0..k0+16*NV] (+)= sum over TB tiles of V[t][c0..c0+6] (broadcast) x G[t][k0..];
 * a slice's first block stores (P is not zeroed) */
static inline __attribute__((always_inline)) AVX512 void wgrad_tile(const float *V, int64_t ldv, const float *G,
                                                                    int64_t Kp, int64_t TB, float *P, int first,
                                                                    int NV) {
    __m512 acc[WG_RT][4];
    for (int r = 0; r < WG_RT; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(P + r * Kp + 16 * v);
    for (int64_t t = 0; t < TB; t++) {
        __m512 u[4];
        for (int v = 0; v < NV; v++) u[v] = _mm512_loadu_ps(G + t * Kp + 16 * v);
        for (int r = 0; r < WG_RT; r++) {
            __m512 b = _mm512_set1_ps(V[t * ldv + r]);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(b, u[v], acc[r][v]);
        }
    }
    for (int r = 0; r < WG_RT; r++)
        for (int v = 0; v < NV; v++) _mm512_storeu_ps(P + r * Kp + 16 * v, acc[r][v]);
}
static AVX512 void wgrad_tiles(int nv, const float *V, int64_t ldv, const float *G, int64_t Kp, int64_t TB, float *P,
                               int first) {
    switch (nv) {
    case 4: wgrad_tile(V, ldv, G, Kp, TB, P, first, 4); break;
    case 3: wgrad_tile(V, ldv, G, Kp, TB, P, first, 3); break;
    case 2: wgrad_tile(V, ldv, G, Kp, TB, P, first, 2); break;
    default: wgrad_tile(V, ldv, G, Kp, TB, P, first, 1); break;
    }
}

static AVX512 void wgrad_task(void *ctx, int64_t s0, int64_t s1) { /* items: slices */
    wg_plan *p = ctx;
    int64_t TB = p->TB, C = p->C, Kp = p->Kp, ldv = p->ldv, nb = (p->T + TB - 1) / TB;
    int64_t smax = TB < p->tw ? TB : p->tw; /* the longest segment */
    int64_t nV = 16 * TB * ldv, nG = 16 * TB * Kp, nSi = 4 * (2 * smax + 2) * C;
    float *V = calloc((size_t)(nV + nG + nSi + 4 * smax * Kp), sizeof(float)); /* padding channels stay zero */
    if (!V) {
        __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    float *G = V + nV, *Si = G + nG, *Sg = Si + nSi;
    for (int64_t sl = s0; sl < s1; sl++) {
        float *P = p->P + sl * 16 * ldv * Kp;
        int64_t b_first = sl * nb / p->nslices;
        for (int64_t b = b_first; b < (sl + 1) * nb / p->nslices; b++) {
            int64_t t0 = b * TB, nt = p->T - t0 < TB ? p->T - t0 : TB;
            SEGMENTS(stage_input(p, n, ty, tx, seg, Si); input_transform(p, Si, seg, V + t * ldv);
                     stage_go(p, n, ty, tx, seg, Sg); go_transform(p, Sg, seg, G + t * Kp))
            zero_tail(V, TB, nt, ldv);
            zero_tail(G, TB, nt, Kp);
            for (int x = 0; x < 16; x++)
                for (int64_t c = 0; c < ldv; c += WG_RT)
                    for (int64_t k = 0; k < Kp; k += 64) {
                        const float *Vx = V + x * TB * ldv + c, *Gx = G + x * TB * Kp + k;
                        float *Px = P + (x * ldv + c) * Kp + k;
                        wgrad_tiles(panel_vectors(p, k), Vx, ldv, Gx, Kp, TB, Px, b == b_first);
                    }
        }
    }
    free(V);
}

/* gw[k][c] = G^T X G of X = the slices' sums, G^T = [1 .5 .5 0; 0 .5 -.5 0; 0 .5 .5 1];
 * items: groups of 16 output channels (the lanes) */
typedef struct { const wg_plan *p; float *gw; int flip; } wo_ctx;
static AVX512 void wgrad_out_task(void *ctx, int64_t k0, int64_t k1) {
    wo_ctx *c = ctx;
    const wg_plan *p = c->p;
    const __m512 h = _mm512_set1_ps(0.5f);
    int64_t slice = 16 * p->ldv * p->Kp;
    for (int64_t kb = k0 * 16; kb < k1 * 16; kb += 16)
        for (int64_t ci = 0; ci < p->C; ci++) {
            __m512 X[16], r[3][4];
            for (int x = 0; x < 16; x++) {
                const float *s = p->P + (x * p->ldv + ci) * p->Kp + kb;
                X[x] = _mm512_loadu_ps(s);
                for (int64_t sl = 1; sl < p->nslices; sl++) X[x] = _mm512_add_ps(X[x], _mm512_loadu_ps(s + sl * slice));
            }
            for (int j = 0; j < 4; j++) {
                __m512 bd = _mm512_mul_ps(h, _mm512_add_ps(X[4 + j], X[8 + j]));
                r[0][j] = _mm512_add_ps(X[j], bd);
                r[1][j] = _mm512_mul_ps(h, _mm512_sub_ps(X[4 + j], X[8 + j]));
                r[2][j] = _mm512_add_ps(bd, X[12 + j]);
            }
            float o[9][16];
            for (int i = 0; i < 3; i++) {
                __m512 bd = _mm512_mul_ps(h, _mm512_add_ps(r[i][1], r[i][2]));
                _mm512_storeu_ps(o[3 * i], _mm512_add_ps(r[i][0], bd));
                _mm512_storeu_ps(o[3 * i + 1], _mm512_mul_ps(h, _mm512_sub_ps(r[i][1], r[i][2])));
                _mm512_storeu_ps(o[3 * i + 2], _mm512_add_ps(bd, r[i][3]));
            }
            for (int l = 0; l < 16 && kb + l < p->K; l++) {
                int64_t k = kb + l;
                /* flip: the [C][K] weight of conv_transpose, rotated */
                float *d = c->flip ? c->gw + (ci * p->K + k) * 9 : c->gw + (k * p->C + ci) * 9;
                for (int a = 0; a < 9; a++) d[c->flip ? 8 - a : a] = o[a][l];
            }
        }
}

mt_status mt__conv3x3_winograd_wgrad(const float *x, const float *go, float *gw, int64_t N, int64_t C, int64_t H,
                                     int64_t W, int64_t K, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int flip) {
    wg_plan p = {.N = N, .C = C, .H = H, .W = W, .K = K, .OH = OH, .OW = OW, .ph = ph, .pw = pw, .x = x, .go = go,
                 .ldv = (C + WG_RT - 1) / WG_RT * WG_RT, .Kp = (K + 15) / 16 * 16};
    /* a GEMM reduces one transformed position over the block's tiles: its rows of both inputs in L2.
     * Parts are the slices, not the threads: the blocks fix the order of the sums */
    plan_tiles(&p, WG_SLICES, 4 * (p.ldv + p.Kp));
    int64_t nb = (p.T + p.TB - 1) / p.TB;
    p.nslices = nb < WG_SLICES ? nb : WG_SLICES;
    int64_t n_p = p.nslices * 16 * p.ldv * p.Kp;
    mt_tensor *tp;
    MT_TRY(mt__alloc(1, &n_p, NULL, MT_F32, MT_CPU, &tp));
    p.P = (float *)mt__data(tp);
    mt__parallel_for(p.nslices, 1, wgrad_task, &p);
    if (!p.failed) {
        wo_ctx oc = {&p, gw, flip};
        mt__parallel_for(p.Kp / 16, 1 + 4096 / (C * 256), wgrad_out_task, &oc);
    }
    mt_tensor_release(tp);
    return p.failed ? mt__error(MT_ERR_OOM, "out of memory in convolution backward") : MT_OK;
}

#else
mt_status mt__conv3x3_winograd(const float *x, const float *w, const float *bias, float *out, int64_t N, int64_t C,
                               int64_t H, int64_t W, int64_t K, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int flip) {
    (void)x, (void)w, (void)bias, (void)out, (void)N, (void)C, (void)H, (void)W, (void)K, (void)OH, (void)OW, (void)ph,
        (void)pw, (void)flip;
    return mt__error(MT_ERR_RUNTIME, "conv3x3_winograd: needs AVX-512");
}
mt_status mt__conv3x3_winograd_wgrad(const float *x, const float *go, float *gw, int64_t N, int64_t C, int64_t H,
                                     int64_t W, int64_t K, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int flip) {
    (void)x, (void)go, (void)gw, (void)N, (void)C, (void)H, (void)W, (void)K, (void)OH, (void)OW, (void)ph, (void)pw,
        (void)flip;
    return mt__error(MT_ERR_RUNTIME, "conv3x3_winograd_wgrad: needs AVX-512");
}
#endif
