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

/* ---- glibc's libmvec (glibc >= 2.35; csrc/build_ffi.py checks it and defines MT_LIBMVEC) ----
 * mt_lmv_<f>f / mt_lmv_<f> are libm's own sinf / sin (an asm label names the same symbol), declared
 * with GCC's simd attribute: a loop that calls them, compiled for AVX2 or AVX-512 (the v3/v4 copies
 * of each kernel file), calls libmvec's vector versions (_ZGVdN8v_sinf, _ZGVeN16v_sinf: <= 4 ulp,
 * special values and huge arguments handled in their scalar fallbacks); a scalar call is plain libm.
 * glibc's <math.h> declares these only under -ffast-math, which we cannot use. Without libmvec the
 * same names are plain libm calls: correct, not vectorised (docs/ARCHITECTURE.md, "vecmath"). */
#ifdef MT_LIBMVEC
#define MT_LMV_ATTR __attribute__((simd("notinbranch"), const, nothrow))
#define MT_LMV1(fn)                                                         \
    float mt_lmv_##fn##f(float) __asm__(#fn "f") MT_LMV_ATTR;                \
    double mt_lmv_##fn(double) __asm__(#fn) MT_LMV_ATTR;
#define MT_LMV2(fn)                                                         \
    float mt_lmv_##fn##f(float, float) __asm__(#fn "f") MT_LMV_ATTR;         \
    double mt_lmv_##fn(double, double) __asm__(#fn) MT_LMV_ATTR;
#else
#define MT_LMV1(fn)                                                                               \
    static inline __attribute__((always_inline)) float mt_lmv_##fn##f(float x) { return __builtin_##fn##f(x); } \
    static inline __attribute__((always_inline)) double mt_lmv_##fn(double x) { return __builtin_##fn(x); }
#define MT_LMV2(fn)                                                                                         \
    static inline __attribute__((always_inline)) float mt_lmv_##fn##f(float x, float y) { return __builtin_##fn##f(x, y); } \
    static inline __attribute__((always_inline)) double mt_lmv_##fn(double x, double y) { return __builtin_##fn(x, y); }
#endif
MT_LMV1(sin) MT_LMV1(cos) MT_LMV1(tan) MT_LMV1(asin) MT_LMV1(acos) MT_LMV1(atan)
MT_LMV1(sinh) MT_LMV1(cosh) MT_LMV1(tanh) MT_LMV1(asinh) MT_LMV1(acosh) MT_LMV1(atanh)
MT_LMV1(exp) MT_LMV1(exp2) MT_LMV1(expm1) MT_LMV1(log) MT_LMV1(log1p) MT_LMV1(log2) MT_LMV1(log10)
MT_LMV1(erf) MT_LMV1(erfc)
MT_LMV2(atan2) MT_LMV2(hypot) MT_LMV2(pow)
/* PyTorch's float32 kernels call SLEEF's 1-ulp functions. libmvec's float versions measured over their
 * domains (2^20 values, against the double functions rounded once): <= 1 ulp for atan, sinh, tanh, asinh,
 * acosh, atanh, exp2, log1p, hypot and pow; 2-4 ulp for the rest, enough to move composites that amplify
 * an input's last bit (chebyshev_polynomial_t(x, 600) is cos(600 acos x)). Those compute the float in
 * double and round once (as glibc's scalar float functions do): a third of the float versions' speed,
 * still several times libm's scalar loop. mt_vm_<f>f is the float function each uses. */
#define MT_VM_FLOAT1(fn) \
    static inline __attribute__((always_inline)) float mt_vm_##fn##f(float x) { return mt_lmv_##fn##f(x); }
#define MT_VM_FLOAT2(fn)                                                                 \
    static inline __attribute__((always_inline)) float mt_vm_##fn##f(float x, float y) { \
        return mt_lmv_##fn##f(x, y);                                                     \
    }
#ifdef MT_LIBMVEC
#define MT_VM_DOUBLE1(fn) \
    static inline __attribute__((always_inline)) float mt_vm_##fn##f(float x) { return (float)mt_lmv_##fn((double)x); }
#define MT_VM_DOUBLE2(fn)                                                                 \
    static inline __attribute__((always_inline)) float mt_vm_##fn##f(float x, float y) {  \
        return (float)mt_lmv_##fn((double)x, (double)y);                                  \
    }
#else /* scalar libm: its float functions are as exact */
#define MT_VM_DOUBLE1 MT_VM_FLOAT1
#define MT_VM_DOUBLE2 MT_VM_FLOAT2
#endif
MT_VM_FLOAT1(atan) MT_VM_FLOAT1(sinh) MT_VM_FLOAT1(tanh) MT_VM_FLOAT1(asinh) MT_VM_FLOAT1(acosh) MT_VM_FLOAT1(atanh)
MT_VM_FLOAT1(exp2) MT_VM_FLOAT1(log1p) MT_VM_FLOAT2(hypot) MT_VM_FLOAT2(pow) MT_VM_DOUBLE1(exp) MT_VM_DOUBLE1(log)
MT_VM_DOUBLE1(sin) MT_VM_DOUBLE1(cos) MT_VM_DOUBLE1(tan) MT_VM_DOUBLE1(cosh)
MT_VM_DOUBLE1(expm1) MT_VM_DOUBLE1(log2) MT_VM_DOUBLE1(log10) MT_VM_DOUBLE1(erf) MT_VM_DOUBLE1(erfc)
MT_VM_DOUBLE2(atan2)
/* float acos/asin stay libm's scalar ones: SLEEF's and glibc's float versions agree with each other where
 * the correctly rounded result differs (acos(-0.8f)), and chebyshev_polynomial_u/v(x, 600) magnify that */
static inline __attribute__((always_inline)) float mt_vm_acosf(float x) { return __builtin_acosf(x); }
static inline __attribute__((always_inline)) float mt_vm_asinf(float x) { return __builtin_asinf(x); }
/* double: glibc's scalar sin, cos, tan, asin, acos, atan, exp, exp2, log, log2, atan2, hypot and pow are
 * correctly rounded but for a few cases in a thousand, and so are PyTorch's (SLEEF's 1-ulp) results at the
 * points tests compare exactly (a histogram's edges from sin's extremes); libmvec's double versions are 1-3
 * ulp off in 20-60% of cases (2^19 values against long double): these stay scalar. The others (hyperbolic
 * functions and their inverses, expm1, log1p, log10, erf, erfc) are no better in scalar glibc (1-3 ulp):
 * libmvec's. mt_vd_<f> is the double function each uses. */
#define MT_VD_VEC(fn) \
    static inline __attribute__((always_inline)) double mt_vd_##fn(double x) { return mt_lmv_##fn(x); }
#define MT_VD_SCALAR(fn) \
    static inline __attribute__((always_inline)) double mt_vd_##fn(double x) { return __builtin_##fn(x); }
#define MT_VD_SCALAR2(fn)                                                                   \
    static inline __attribute__((always_inline)) double mt_vd_##fn(double x, double y) {    \
        return __builtin_##fn(x, y);                                                        \
    }
MT_VD_VEC(sinh) MT_VD_VEC(cosh) MT_VD_VEC(tanh) MT_VD_VEC(asinh) MT_VD_VEC(acosh) MT_VD_VEC(atanh)
MT_VD_VEC(expm1) MT_VD_VEC(log1p) MT_VD_VEC(log10) MT_VD_VEC(erf) MT_VD_VEC(erfc)
MT_VD_SCALAR(sin) MT_VD_SCALAR(cos) MT_VD_SCALAR(tan) MT_VD_SCALAR(asin) MT_VD_SCALAR(acos) MT_VD_SCALAR(atan)
MT_VD_SCALAR(exp) MT_VD_SCALAR(exp2) MT_VD_SCALAR(log) MT_VD_SCALAR(log2)
MT_VD_SCALAR2(atan2) MT_VD_SCALAR2(hypot) MT_VD_SCALAR2(pow)
/* VM(sin, x): the function for x's type (float or double) */
#define VM(fn, x) _Generic((x), float: mt_vm_##fn##f, default: mt_vd_##fn)(x)
#define VM2(fn, x, y) _Generic((x), float: mt_vm_##fn##f, default: mt_vd_##fn)((x), (y))
/* exp, log and tanh: ours for float (faster than libmvec's and already matched to PyTorch) */
#define VEXP(v) _Generic((v), float: mt_v_expf, default: mt_vd_exp)(v)
#define VLOG(v) _Generic((v), float: mt_v_logf, default: mt_vd_log)(v)
#define VTANH(v) _Generic((v), float: mt_v_tanhf, default: mt_vd_tanh)(v)

/* erfinv as PyTorch's calc_erfinv computes it (Pavlis's rational first guess, two branches by |y| <= 0.7,
 * then Newton steps x -= (erf(x) - y) / (2/sqrt(pi) exp(-x^2))), both branches evaluated and one picked, so
 * the loop vectorises. float32 compute: the guess in float (relative error < 1e-5), ONE Newton step in
 * double (error squared: < 1e-9 relative, the float result within an ulp of two double steps' result);
 * double: the guess and two steps in double. */
#define MT_ERFINV_GUESS(R, y, ay, SQRT, LOG)                                                   \
    ({                                                                                         \
        R z_ = (y) * (y), w_ = SQRT(-LOG(((R)1 - (ay)) / (R)2));                               \
        R cn_ = (((R)-0.140543331 * z_ + (R)0.914624893) * z_ + (R)-1.645349621) * z_ + (R)0.886226899; \
        R cd_ = ((((R)0.012229801 * z_ + (R)-0.329097515) * z_ + (R)1.442710462) * z_ + (R)-2.118377725) * z_ + (R)1; \
        R tn_ = (((R)1.641345311 * w_ + (R)3.429567803) * w_ + (R)-1.624906493) * w_ + (R)-1.970840454; \
        R td_ = ((R)1.637067800 * w_ + (R)3.543889200) * w_ + (R)1;                            \
        /* the tail's NaN (|y| >= 1) in the condition keeps log's call ahead of it (GCC would sink a call \
         * used only in one arm into that branch, and a call in a branch does not vectorise) */     \
        ((ay) <= (R)0.7) | (tn_ != tn_) ? (y) * cn_ / cd_ : __builtin_copysign(tn_ / td_, (y));   \
    })
#define MT_ERFINV_NEWTON(x, y) ((x) - (mt_lmv_erf(x) - (y)) / (1.128379167095512573896 * mt_lmv_exp(-(x) * (x))))
static inline __attribute__((always_inline)) float mt_v_erfinvf(float y) {
    float ay = __builtin_fabsf(y);
    double x = MT_ERFINV_GUESS(float, y, ay, __builtin_sqrtf, mt_v_logf);
    float r = (float)MT_ERFINV_NEWTON(x, (double)y);
    /* |y| >= 1: y / 0 + 0 = +-inf at +-1, NaN beyond (sqrt) and for NaN (arithmetic, not a select of
     * constants: GCC makes a nested select a branch); r named in the test, as above */
    return (ay >= 1.0f) | (r != r) ? y / (1.0f - ay) + __builtin_sqrtf(1.0f - ay) : r;
}
static inline __attribute__((always_inline)) double mt_v_erfinv(double y) {
    double ay = __builtin_fabs(y);
    double x = MT_ERFINV_GUESS(double, y, ay, __builtin_sqrt, mt_lmv_log);
    x = MT_ERFINV_NEWTON(x, y);
    x = MT_ERFINV_NEWTON(x, y);
    return (ay >= 1.0) | (x != x) ? y / (1.0 - ay) + __builtin_sqrt(1.0 - ay) : x;
}

/* exp over a contiguous float32 row with AVX-512 (exp_avx512.c); same bits as mt_v_expf */
void mt__exp_f32_avx512(float *o, const float *a, int64_t n);

#endif
