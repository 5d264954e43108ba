/* unary.c — elementwise kernels with one input (see csrc/ops.tbl). */
#include "loops.h"
#include "vecmath.h"
#include "special_math.h"

/* transcendental functions: VM(f, x) is libm's f declared for libmvec's vector versions, VEXP/VLOG/VTANH
 * our float32 ones (vecmath.h); float16/bfloat16 compute in float32 */

/* integer negation and abs through unsigned arithmetic: no signed overflow */
#define INEG(CT, x) ((CT)(0 - (uint64_t)(x)))

ROWS_INT(U_SAME, abs, (x < 0 ? INEG(CT, x) : x))
ROWS_F32F64(U_SAME, abs, fabs(x))
ROWS_INT(U_SAME, neg, INEG(CT, x))
ROWS_F32F64(U_SAME, neg, -x)

/* float16/bfloat16 neg and abs as PyTorch's loops: a contiguous run flips or clears the sign bit in whole
 * vectors (32 elements with AVX-512, 16 without) and leaves the rest, and strided operands, to its scalar path,
 * which goes through float: a NaN comes back quiet (float16, payload kept by the hardware conversions) or as
 * 0x7FC0 (bfloat16's rounding), which QUIET16 does on the bits. Converting every element to float and back
 * made these 2.3x (bfloat16) and 6x (float16) PyTorch's time. */
#define SIGN16_DEF(NAME, TAG, BITS, QUIET16)                                                                \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k_in) {       \
        (void)k_in;                                                                                         \
        int64_t i = 0;                                                                                      \
        if (s[0] == 2 && s[1] == 2) {                                                                       \
            uint16_t *o = (uint16_t *)d[0];                                                                 \
            const uint16_t *a = (const uint16_t *)d[1];                                                     \
            int64_t step = mt__cpu_avx512f() ? 32 : 16, bulk = n / step * step;                             \
            for (; i < bulk; i++) o[i] = (uint16_t)(BITS(a[i]));                                            \
        }                                                                                                   \
        for (; i < n; i++) {                                                                                \
            uint16_t h = AT(d[1], i, s[1], const uint16_t);                                                 \
            AT(d[0], i, s[0], uint16_t) = QUIET16(h, BITS(h));                                              \
        }                                                                                                   \
    }
#define NEG16(h) ((h) ^ 0x8000u)
#define ABS16(h) ((h) & 0x7FFFu)
#define QUIET_F16(h, r) (uint16_t)(((h) & 0x7FFF) > 0x7C00 ? (r) | 0x0200 : (r))
#define QUIET_BF16(h, r) (uint16_t)(((h) & 0x7FFF) > 0x7F80 ? 0x7FC0 : (r))
SIGN16_DEF(neg, f16, NEG16, QUIET_F16)
SIGN16_DEF(neg, bf16, NEG16, QUIET_BF16)
SIGN16_DEF(abs, f16, ABS16, QUIET_F16)
SIGN16_DEF(abs, bf16, ABS16, QUIET_BF16)
ROWS_ALL(U_SAME, sign, (CT)((x > 0) - (x < 0)))

ROWS_FLOAT(U_SAME, sqrt, sqrt(x))
ROWS_FLOAT(U_SAME, rsqrt, (CT)1 / sqrt(x))
U_SAME(f16, uint16_t, float, mt__f16_to_f32, mt__f32_to_f16, exp, mt_v_expf(x))
U_SAME(bf16, uint16_t, float, mt__bf16_to_f32, mt__f32_to_bf16, exp, mt_v_expf(x))
U_SAME(f32, float, float, ID, ID, exp_portable, mt_v_expf(x))
U_SAME(f64, double, double, ID, ID, exp, exp(x))
void mt_cpu_exp_f32(char **d, const int64_t *s, int64_t n, const mt_kargs *k) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float) && mt__cpu_avx512f())
        mt__exp_f32_avx512((float *)d[0], (const float *)d[1], n);
    else
        mt_cpu_exp_portable_f32(d, s, n, k);
}
ROWS_FLOAT(U_SAME, expm1, VM(expm1, x))
ROWS_FLOAT(U_SAME, log, VLOG(x))
ROWS_FLOAT(U_SAME, log1p, VM(log1p, x))
ROWS_FLOAT(U_SAME, log2, VM(log2, x))
ROWS_FLOAT(U_SAME, log10, VM(log10, x))
ROWS_FLOAT(U_SAME, sin, VM(sin, x))
ROWS_FLOAT(U_SAME, cos, VM(cos, x))
ROWS_FLOAT(U_SAME, tan, VM(tan, x))
ROWS_FLOAT(U_SAME, tanh, VTANH(x))
ROWS_FLOAT(U_SAME, sigmoid, _Generic((x), float: mt_v_sigmoidf(x), default: (CT)1 / ((CT)1 + exp(-x))))
ROWS_F32F64(U_SAME, erf, VM(erf, x))
/* float16/bfloat16: PyTorch's vector erf for them (float32 takes an accurate one), Abramowitz and Stegun's
 * 7.1.26 in float with fused multiply-adds: 1 - t (p1 + p2 t + ... + p5 t^4) exp(-x^2), t = 1 / (1 + p |x|),
 * the sign of x; rounded to the dtype it is PyTorch's bits for every input (the double erf differed in 44%
 * of bfloat16 inputs, small ones mostly, where this form's absolute error shows) and 2-3x faster */
static inline __attribute__((always_inline)) float erf_as(float x) {
    float ax = fabsf(x), t = 1.0f / fmaf(0.3275911f, ax, 1.0f);
    float r = fmaf(fmaf(fmaf(fmaf(1.061405429f, t, -1.453152027f), t, 1.421413741f), t, -0.284496736f), t, 0.254829592f);
    float e = mt_v_expf(-(x * x));
    return copysignf(fmaf(-e * t, r, 1.0f), x);
}
U_SAME(f16, uint16_t, float, mt__f16_to_f32, mt__f32_to_f16, erf, erf_as(x))
U_SAME(bf16, uint16_t, float, mt__bf16_to_f32, mt__f32_to_bf16, erf, erf_as(x))
ROWS_FLOAT(U_SAME, reciprocal, (CT)1 / x)

ROWS_INT(U_SAME, floor, x)
ROWS_FLOAT(U_SAME, floor, floor(x))
ROWS_INT(U_SAME, ceil, x)
ROWS_FLOAT(U_SAME, ceil, ceil(x))
ROWS_INT(U_SAME, round, x)
ROWS_FLOAT(U_SAME, round, nearbyint(x))
ROWS_INT(U_SAME, trunc, x)
ROWS_FLOAT(U_SAME, trunc, trunc(x))

ROW_BOOL(U_SAME, bitwise_not, !x)
ROWS_INT(U_SAME, bitwise_not, ~x)
ROWS_ALL(U_BOOL, logical_not, !x)

ROWS_INTBOOL(U_BOOL, isnan, 0)
ROWS_FLOAT(U_BOOL, isnan, x != x)
ROWS_INTBOOL(U_BOOL, isinf, 0)
ROWS_FLOAT(U_BOOL, isinf, isinf(x))
ROWS_INTBOOL(U_BOOL, isfinite, 1)
ROWS_FLOAT(U_BOOL, isfinite, isfinite(x))

/* trigonometric and hyperbolic inverses, exp2, the error and gamma functions */
ROWS_FLOAT(U_SAME, acos, VM(acos, x))
ROWS_FLOAT(U_SAME, asin, VM(asin, x))
ROWS_FLOAT(U_SAME, atan, VM(atan, x))
ROWS_FLOAT(U_SAME, sinh, VM(sinh, x))
ROWS_FLOAT(U_SAME, cosh, VM(cosh, x))
ROWS_FLOAT(U_SAME, asinh, VM(asinh, x))
ROWS_FLOAT(U_SAME, acosh, VM(acosh, x))
ROWS_FLOAT(U_SAME, atanh, VM(atanh, x))
ROWS_FLOAT(U_SAME, exp2, VM(exp2, x))
ROWS_FLOAT(U_SAME, erfc, VM(erfc, x))
ROWS_FLOAT(U_SAME, erfinv, _Generic((x), float: mt_v_erfinvf, default: mt_v_erfinv)(x))
/* frexp's two halves (torch.frexp runs both, the exponent stored in the input dtype, then made int32: exact,
 * as |e| <= 1074 and float16/bfloat16 exponents fit their significands): read from the bits, subnormals scaled
 * to normal first; 0, inf and NaN give themselves and exponent 0. Selects only: the loops vectorise. */
#define FREXP_PARTS(x, m, e)                                                                                 \
    _Generic((x), float: ({                                                                                  \
        uint32_t u_ = mt_v_f_bits((float)(x)), sub_ = (u_ & 0x7F800000u) == 0;                              \
        uint32_t us_ = mt_v_f_bits(sub_ ? (float)(x) * 0x1p25f : (float)(x));                                \
        int fin_ = ((float)(x) != 0) & ((u_ & 0x7F800000u) != 0x7F800000u);                                  \
        m = fin_ ? mt_v_bits_f((us_ & 0x807FFFFFu) | 0x3F000000u) : (x);                                     \
        e = fin_ ? (CT)((int32_t)((us_ >> 23) & 0xFF) - 126 - (sub_ ? 25 : 0)) : 0;                          \
    }), default: ({                                                                                          \
        uint64_t u_, us_;                                                                                    \
        double xd_ = (double)(x), xs_;                                                                       \
        memcpy(&u_, &xd_, 8);                                                                                \
        int sub_ = (u_ & 0x7FF0000000000000u) == 0;                                                          \
        xs_ = sub_ ? xd_ * 0x1p54 : xd_;                                                                     \
        memcpy(&us_, &xs_, 8);                                                                               \
        int fin_ = (xd_ != 0) & ((u_ & 0x7FF0000000000000u) != 0x7FF0000000000000u);                         \
        uint64_t mb_ = (us_ & 0x800FFFFFFFFFFFFFu) | 0x3FE0000000000000u;                                    \
        double md_;                                                                                          \
        memcpy(&md_, &mb_, 8);                                                                               \
        m = fin_ ? md_ : (x);                                                                                \
        e = fin_ ? (CT)((int64_t)((us_ >> 52) & 0x7FF) - 1022 - (sub_ ? 54 : 0)) : 0;                        \
    }))
ROWS_FLOAT(U_SAME, frexp_mantissa, ({ CT m_, e_; FREXP_PARTS(x, m_, e_); m_; }))
ROWS_FLOAT(U_SAME, frexp_exponent, ({ CT m_, e_; FREXP_PARTS(x, m_, e_); e_; }))
ROWS_FLOAT(U_SAME, lgamma, (CT)mt__lgamma(x))
ROWS_FLOAT(U_SAME, digamma, (CT)mt__digamma(x))
ROWS_FLOAT(U_SAME, trigamma, (CT)mt__trigamma(x))
/* at 0 the quotient is 0/0: its NaN in the test keeps sin's call out of a branch (vectorised) */
ROWS_FLOAT(U_SAME, sinc, ({
    CT q_ = VM(sin, (CT)M_PI * x) / ((CT)M_PI * x);
    (q_ != q_) & (x == 0) ? (CT)1 : q_;
}))
/* complex: pi as a complex number times x (c10's product), then c10's division */
ROWS_COMPLEX(U_SAME, sinc, x == 0 ? (CT)1 : ({
    CT px_ = CMUL(CMAKE(CT, M_PI, 0), x);
    CDIV(sin(px_), px_);
}))
ROWS_FLOAT(U_SAME, deg2rad, x * (CT)(M_PI / 180.0))
ROWS_FLOAT(U_SAME, rad2deg, x * (CT)(180.0 / M_PI))
ROWS_FLOAT(U_SAME, frac, x - trunc(x))
ROWS_ALL(U_SAME, sgn, (CT)((x > 0) - (x < 0)))
ROWS_INTBOOL(U_BOOL, signbit, x < 0)
ROWS_FLOAT(U_BOOL, signbit, copysign((CT)1, x) < 0) /* signbit(x): a GCC 12 ICE when vectorised */

/* ---- complex64 / complex128: C's complex functions (glibc's, which libstdc++'s std::complex
 * functions that c10 calls forward to), c10's own forms where it has them ---- */
ROWS_COMPLEX(U_TOREAL, abs, hypot(creal(x), cimag(x)))
ROWS_COMPLEX(U_TOREAL, angle, atan2(cimag(x), creal(x)))
ROWS_FLOAT(U_SAME, angle, x != x ? x : (x < 0 ? (CT)M_PI : (CT)0))
ROWS_COMPLEX(U_TOREAL, real, creal(x))
ROWS_COMPLEX(U_TOREAL, imag, cimag(x))
ROWS_COMPLEX(U_SAME, conj, conj(x))
ROWS_COMPLEX(U_SAME, conj_physical, conj(x))
ROWS_ALL(U_SAME, conj_physical, x) /* reals: a copy into out= (without out=, the input itself) */
ROWS_COMPLEX(U_SAME, neg, -x)
ROWS_COMPLEX(U_SAME, sgn, x == 0 ? (CT)0 : x / hypot(creal(x), cimag(x)))
ROWS_COMPLEX(U_SAME, sqrt, sqrt(x))
ROWS_COMPLEX(U_SAME, rsqrt, CDIV((CT)1, sqrt(x)))
ROWS_COMPLEX(U_SAME, exp, exp(x))
/* c10's expm1: (expm1(a) cos(b) - 2 sin(b/2)^2) + i exp(a) sin(b), exact near 0 */
ROWS_COMPLEX(U_SAME, expm1, CMAKE(CT, expm1(creal(x)) * cos(cimag(x)) - 2 * sin(cimag(x) / 2) * sin(cimag(x) / 2),
                                  exp(creal(x)) * sin(cimag(x))))
#define RT(x) __typeof__(creal(x)) /* the real type of a complex value */
ROWS_COMPLEX(U_SAME, exp2, exp(x * (RT(x))M_LN2))
ROWS_COMPLEX(U_SAME, log, log(x))
ROWS_COMPLEX(U_SAME, log1p, CLOG1P(x))
ROWS_COMPLEX(U_SAME, log2, log(x) / (RT(x))M_LN2)
ROWS_COMPLEX(U_SAME, log10, log(x) / (RT(x))M_LN10)
ROWS_COMPLEX(U_SAME, sin, sin(x))
ROWS_COMPLEX(U_SAME, cos, cos(x))
ROWS_COMPLEX(U_SAME, tan, tan(x))
ROWS_COMPLEX(U_SAME, tanh, tanh(x))
ROWS_COMPLEX(U_SAME, sinh, sinh(x))
ROWS_COMPLEX(U_SAME, cosh, cosh(x))
ROWS_COMPLEX(U_SAME, asin, asin(x))
ROWS_COMPLEX(U_SAME, acos, acos(x))
ROWS_COMPLEX(U_SAME, atan, atan(x))
ROWS_COMPLEX(U_SAME, asinh, asinh(x))
ROWS_COMPLEX(U_SAME, acosh, acosh(x))
ROWS_COMPLEX(U_SAME, atanh, atanh(x))
ROWS_COMPLEX(U_SAME, sigmoid, CDIV((CT)1, (CT)1 + exp(-x)))
ROWS_COMPLEX(U_SAME, reciprocal, CDIV((CT)1, x))
ROWS_COMPLEX(U_BOOL, logical_not, x == 0)
ROWS_COMPLEX(U_BOOL, isnan, x != x)
ROWS_COMPLEX(U_BOOL, isinf, isinf(creal(x)) || isinf(cimag(x)))
ROWS_COMPLEX(U_BOOL, isfinite, isfinite(creal(x)) && isfinite(cimag(x)))
