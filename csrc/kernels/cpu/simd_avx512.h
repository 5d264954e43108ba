/* simd_avx512.h — AVX-512 helpers shared by the kernels that have an AVX-512 path (compiled per
 * function with target attributes, so the rest of the library runs on any x86-64; callers check
 * mt__cpu_avx512f() first). MT_HAVE_AVX512_HELPERS is defined where the compiler can build them. */
#ifndef MT_SIMD_AVX512_H
#define MT_SIMD_AVX512_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdint.h>
#define MT_HAVE_AVX512_HELPERS 1
#define AVX512 __attribute__((target("avx512f")))

/* r[i][j] <- r[j][i] for a 16x16 float block in registers */
static inline __attribute__((always_inline)) AVX512 void mt__transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; i++)
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]), t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    for (int i = 0; i < 4; i++)
        for (int h = 0; h < 2; h++) {
            __m512d a = _mm512_castps_pd(t[4 * i + h]), b = _mm512_castps_pd(t[4 * i + h + 2]);
            r[4 * i + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
            r[4 * i + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xDD);
        }
    for (int j = 0; j < 8; j++)
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88), r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
}

/* dst[j][i] = src[i][j] for i < R, j < Cc (row strides lds, ldd); writes only those elements */
static inline AVX512 void mt__transpose_f32(const float *src, int64_t lds, float *dst, int64_t ldd, int64_t R,
                                            int64_t Cc) {
    for (int64_t i = 0; i < R; i += 16)
        for (int64_t j = 0; j < Cc; j += 16) {
            int nr = R - i < 16 ? (int)(R - i) : 16, nc = Cc - j < 16 ? (int)(Cc - j) : 16;
            const float *s = src + i * lds + j;
            float *d = dst + j * ldd + i;
            __mmask16 mc = (__mmask16)((1u << nc) - 1), mr = (__mmask16)((1u << nr) - 1);
            __m512 r[16];
            for (int q = 0; q < 16; q++) {
                r[q] = q < nr ? _mm512_maskz_loadu_ps(mc, s + q * lds) : _mm512_setzero_ps();
                if (q < nr && j + 64 < Cc) _mm_prefetch((const char *)(s + q * lds + 64), _MM_HINT_T0);
            }
            mt__transpose16(r);
            for (int q = 0; q < nc; q++) _mm512_mask_storeu_ps(d + q * ldd, mr, r[q]);
        }
}
#endif

#endif
