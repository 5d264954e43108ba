/* exp_avx512.c — float32 exp over a contiguous row with AVX-512 intrinsics. The portable
 * mt_v_expf (vecmath.h) spends half its instructions on the two-step 2^n scaling and the
 * range selects; here vscalefps does the scaling with IEEE overflow, underflow and
 * subnormal rounding in one instruction (PyTorch's MKL VML kernel does the same). The
 * arithmetic is mt_v_expf's, step for step (its x86-64-v4 copy contracts to the same
 * FMAs), so both give the same bits: y * 2^n rounds once either way. */
#include <stdint.h>

#include "../../core/internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx512f"))) void mt__exp_f32_avx512(float *o, const float *a, int64_t n) {
    const __m512 lo = _mm512_set1_ps(-104.0f), hi = _mm512_set1_ps(89.0f);
    const __m512 l2e = _mm512_set1_ps(1.44269504088896341f), magic = _mm512_set1_ps(12582912.0f);
    const __m512 c1 = _mm512_set1_ps(0.693359375f), c2 = _mm512_set1_ps(-2.12194440e-4f);
    const __m512 p0 = _mm512_set1_ps(1.9875691500e-4f), p1 = _mm512_set1_ps(1.3981999507e-3f),
                 p2 = _mm512_set1_ps(8.3334519073e-3f), p3 = _mm512_set1_ps(4.1665795894e-2f),
                 p4 = _mm512_set1_ps(1.6666665459e-1f), p5 = _mm512_set1_ps(5.0000001201e-1f),
                 one = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        __m512 x = _mm512_maskz_loadu_ps(m, a + i);
        x = _mm512_min_ps(hi, _mm512_max_ps(lo, x)); /* a NaN (second operand) passes through */
        __m512 nf = _mm512_sub_ps(_mm512_fmadd_ps(x, l2e, magic), magic);
        __m512 r = _mm512_fnmadd_ps(nf, c1, x);
        r = _mm512_fnmadd_ps(nf, c2, r);
        __m512 p = _mm512_fmadd_ps(p0, r, p1);
        p = _mm512_fmadd_ps(p, r, p2);
        p = _mm512_fmadd_ps(p, r, p3);
        p = _mm512_fmadd_ps(p, r, p4);
        p = _mm512_fmadd_ps(p, r, p5);
        __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), one);
        _mm512_mask_storeu_ps(o + i, m, _mm512_scalef_ps(y, nf));
    }
}
#else
int mt__exp_f32_avx512_ok(void) { return 0; }
void mt__exp_f32_avx512(float *o, const float *a, int64_t n) { (void)o; (void)a; (void)n; }
#endif
