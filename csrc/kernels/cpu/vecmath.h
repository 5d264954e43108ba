/* vecmath.h — float32 transcendental functions written so GCC vectorises
 * them (no libm calls inside loops): Cephes-style range reduction and
 * minimax polynomials, about 1-2 ulp, with IEEE special values handled. */
#ifndef MT_VECMATH_H
#define MT_VECMATH_H

#include <stdint.h>
#include <string.h>

static inline __attribute__((always_inline)) float mt_v_bits_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t mt_v_f_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* 2^n for integral n in [-126, 127] (any n: no undefined behaviour, a meaningless value) */
static inline __attribute__((always_inline)) float mt_v_pow2i(int32_t n) { return mt_v_bits_f((uint32_t)(n + 127) << 23); }

/* exp(x): n = round(x / ln2) read from the bits of a magic-number sum (no float-to-int
 * conversion, so NaN needs no select: it flows through the arithmetic and comes out NaN);
 * x is clamped so 2^n stays in two normal factors: overflow gives inf, deep underflow 0. */
static inline __attribute__((always_inline)) float mt_v_expf(float x) {
    float xc = x < -104.0f ? -104.0f : x; /* NaN compares false: kept */
    xc = xc > 89.0f ? 89.0f : xc;
    float t = xc * 1.44269504088896341f + 12582912.0f; /* 1.5 * 2^23: rounds to nearest even */
    float n = t - 12582912.0f;
    int32_t ni = (int32_t)(mt_v_f_bits(t) - 0x4B400000u); /* the integer n, from t's low bits */
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * (r * r) + r + 1.0f;
    int32_t n1 = ni >> 1, n2 = ni - n1; /* two steps: no overflow of the exponent field */
    return y * mt_v_pow2i(n1) * mt_v_pow2i(n2);
}

static inline __attribute__((always_inline)) float mt_v_logf(float x) {
    /* x = m * 2^e with m in [sqrt(1/2), sqrt(2)); subnormals are scaled up first */
    int sub = x < 1.17549435e-38f;
    uint32_t u = mt_v_f_bits(sub ? x * 8388608.0f : x);
    int32_t e = (int32_t)((u >> 23) & 0xFF) - (sub ? 150 : 127);
    float m = mt_v_bits_f((u & 0x007FFFFFu) | 0x3F800000u); /* [1, 2) */
    int big = m > 1.41421356f;
    m = big ? m * 0.5f : m;
    e = big ? e + 1 : e;
    float f = m - 1.0f, z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    float y = f * z * p - 0.5f * z;
    float ef = (float)e;
    float res = f + y + ef * 0.693359375f + ef * -2.12194440e-4f;
    /* special values: log(nan) = nan, log(<0) = nan, log(0) = -inf, log(inf) = inf */
    res = x == __builtin_inff() ? x : res;
    res = x == 0.0f ? -__builtin_inff() : res;
    res = x < 0.0f ? __builtin_nanf("") : res;
    return x != x ? x : res;
}

static inline __attribute__((always_inline)) float mt_v_sigmoidf(float x) { return 1.0f / (1.0f + mt_v_expf(-x)); }

static inline __attribute__((always_inline)) float mt_v_tanhf(float x) {
    float ax = x < 0 ? -x : x;
    float e = mt_v_expf(2.0f * ax);
    float big = 1.0f - 2.0f / (e + 1.0f); /* |x| >= 0.625; exp overflow gives 1 */
    float z = x * x;                      /* |x| < 0.625: Cephes polynomial */
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    float small = x + x * z * p;
    float r = ax < 0.625f ? small : (x < 0 ? -big : big);
    return (x != x || x == 0.0f) ? x : r; /* keeps nan and -0.0 */
}

/* exp over a contiguous float32 row with AVX-512 (exp_avx512.c); same bits as mt_v_expf */
void mt__exp_f32_avx512(float *o, const float *a, int64_t n);

#endif
