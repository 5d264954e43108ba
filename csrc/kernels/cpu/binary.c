/* binary.c — elementwise kernels with two inputs (see csrc/ops.tbl). */
/* No implicit a*b+c contraction: results must not depend on which CPU clone runs. Where
 * PyTorch's kernels use a fused multiply-add the expressions below call fma() explicitly. */
#pragma GCC optimize("fp-contract=off")
#include "loops.h"
#include "vecmath.h"

/* wrap-around integer arithmetic without signed-overflow UB */
#define IADD(CT, a, b) ((CT)((uint64_t)(a) + (uint64_t)(b)))
#define ISUB(CT, a, b) ((CT)((uint64_t)(a) - (uint64_t)(b)))
#define IMUL(CT, a, b) ((CT)((uint64_t)(a) * (uint64_t)(b)))

/* alpha reaches the kernel converted to the tensor dtype (bool: alpha != 0); PyTorch's
 * vectorised add is fmadd(other, alpha, self), computed once and rounded once */
ROW_BOOL(B_SAME, add, x || (y && KALPHA(CT)))
ROWS_INT(B_SAME, add, IADD(CT, x, IMUL(CT, y, KALPHA(CT))))
ROWS_FLOAT(B_SAME, add, KALPHA(CT) == 1 ? x + y : fma(y, KALPHA(CT), x))
ROWS_INT(B_SAME, sub, ISUB(CT, x, IMUL(CT, y, KALPHA(CT))))
ROWS_FLOAT(B_SAME, sub, KALPHA(CT) == 1 ? x - y : fma(y, -KALPHA(CT), x))
ROW_BOOL(B_SAME, mul, x && y)
ROWS_INT(B_SAME, mul, IMUL(CT, x, y))
ROWS_FLOAT(B_SAME, mul, x * y)
ROWS_FLOAT(B_SAME, div, x / y)

/* Integer division: a zero divisor flags k->zero_div and the entry point raises. */
#define ZERO_GUARD(b)                                                    \
    if ((b) == 0) {                                                      \
        if (k->zero_div) atomic_store_explicit(k->zero_div, 1, memory_order_relaxed); \
        return 0;                                                        \
    }
static inline int64_t idiv_trunc(int64_t a, int64_t b, const mt_kargs *k) {
    ZERO_GUARD(b)
    return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static inline int64_t idiv_floor(int64_t a, int64_t b, const mt_kargs *k) {
    ZERO_GUARD(b)
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t imod(int64_t a, int64_t b, const mt_kargs *k) {
    ZERO_GUARD(b)
    return b == -1 ? 0 : a % b;
}
static inline int64_t iremainder(int64_t a, int64_t b, const mt_kargs *k) {
    ZERO_GUARD(b)
    int64_t r = imod(a, b, k);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
/* PyTorch's div_floor_floating (its vectorised form). For float16/bfloat16 tensors PyTorch
 * computes each step in the tensor dtype: RND rounds every intermediate result. */
#define FDIV_FLOOR(CT, a, b, FM)                                                           \
    ({                                                                                   \
        CT a_ = (a), b_ = (b), r_;                                                       \
        if (b_ == 0) {                                                                   \
            r_ = a_ / b_;                                                                \
        } else {                                                                         \
            CT mod_ = FM(a_, b_), div_ = RND(RND(a_ - mod_) / b_);                       \
            if (mod_ != 0 && ((b_ < 0) != (mod_ < 0))) div_ = RND(div_ - 1);             \
            if (div_ != 0) {                                                             \
                r_ = floor(div_);                                                        \
                if (RND(div_ - r_) > (CT)0.5) r_ = RND(r_ + 1);                          \
            } else {                                                                     \
                r_ = copysign((CT)0, a_ / b_);                                           \
            }                                                                            \
        }                                                                                \
        r_;                                                                              \
    })
#define FREMAINDER(CT, a, b, FM)                                                           \
    ({                                                                                   \
        CT a_ = (a), b_ = (b), m_ = FM(a_, b_);                                          \
        if (m_ != 0 && ((b_ < 0) != (m_ < 0))) m_ += b_;                                 \
        m_;                                                                              \
    })

ROWS_INT(B_SAME, div_trunc, (CT)idiv_trunc(x, y, k))
ROWS_FLOAT(B_SAME, div_trunc, trunc(RND(x / y)))
ROWS_INT(B_SAME, div_floor, (CT)idiv_floor(x, y, k))
ROWS_F64(B_SAME, div_floor, FDIV_FLOOR(CT, x, y, fmod))
ROWS_F32C(B_SAME, div_floor_libm, FDIV_FLOOR(CT, x, y, fmod))
ROWS_INT(B_SAME, remainder, (CT)iremainder(x, y, k))
ROWS_F64(B_SAME, remainder, FREMAINDER(CT, x, y, fmod))
ROWS_F32C(B_SAME, remainder_libm, FREMAINDER(CT, x, y, fmod))
ROWS_INT(B_SAME, fmod, (CT)imod(x, y, k))
ROWS_F64(B_SAME, fmod, fmod(x, y))
ROWS_F32C(B_SAME, fmod_libm, fmod(x, y))
/* float32 compute (float32, float16, bfloat16): fmod is exact, and so is x - trunc(x / y) * y in double when
 * |x / y| < 2^29: a non-integral quotient of two floats is at least 2^-24 from an integer (x - m y is a
 * nonzero multiple of y's last bit, |y| < 2^(its exponent + 1)) and the double quotient is within 2^-25 of
 * it, so trunc is exact; the product of a 29-bit integer and a 24-bit significand fits 53 bits, and so does
 * the difference. A block of 64 pairs all within that bound (finite y) takes this vectorised form; any other
 * block, a number y or a strided layout, libm's fmod per element (the *_libm kernels). */
#define FMOD_FAST(a, b)                                                                            \
    ({                                                                                             \
        double fx_ = (a), fy_ = (b);                                                               \
        (float)__builtin_copysign(fx_ - __builtin_trunc(fx_ / fy_) * fy_, fx_); /* -0 for -x */    \
    })
#define FMOD_BLOCKS(TAG, T, CTY, LOAD, STORE, NAME, EXPR)                                               \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) {    \
        typedef CTY CT;                                                                                \
        const int rnd_kind_ = MT_RND_##TAG;                                                            \
        if ((k && k->scalar_last) || s[0] != sizeof(T) || s[1] != sizeof(T) || s[2] != sizeof(T)) {   \
            mt_cpu_##NAME##_libm_##TAG(d, s, n, k);                                                    \
            return;                                                                                    \
        }                                                                                              \
        T *o = (T *)d[0];                                                                              \
        const T *a = (const T *)d[1], *b = (const T *)d[2];                                            \
        for (int64_t i0 = 0; i0 < n; i0 += 64) {                                                       \
            int64_t m = n - i0 < 64 ? n - i0 : 64;                                                     \
            int fast = 1;                                                                              \
            for (int64_t i = 0; i < m; i++) {                                                          \
                double xd = LOAD(a[i0 + i]), yd = LOAD(b[i0 + i]);                                     \
                fast &= (__builtin_fabs(xd / yd) < 0x1p29) & (__builtin_fabs(yd) < __builtin_inf());   \
            }                                                                                          \
            if (fast) {                                                                                \
                for (int64_t i = 0; i < m; i++) {                                                      \
                    CT x = LOAD(a[i0 + i]), y = LOAD(b[i0 + i]);                                       \
                    o[i0 + i] = STORE(EXPR);                                                           \
                }                                                                                      \
            } else {                                                                                   \
                char *dd[3] = {(char *)(o + i0), (char *)(a + i0), (char *)(b + i0)};                  \
                mt_cpu_##NAME##_libm_##TAG(dd, s, m, k);                                               \
            }                                                                                          \
        }                                                                                              \
    }
#define FMOD_ROWS(NAME, ...) ROWS_F32C(FMOD_BLOCKS, NAME, (__VA_ARGS__))
FMOD_ROWS(fmod, FMOD_FAST(x, y))
FMOD_ROWS(remainder, FREMAINDER(CT, x, y, FMOD_FAST))
/* floor division: float16/bfloat16 round each step to the dtype (RND) */
FMOD_ROWS(div_floor, FDIV_FLOOR(CT, x, y, FMOD_FAST))
/* PyTorch's xlogy: NaN if y is NaN, else 0 where x == 0, else x * log(y) */
ROWS_FLOAT(B_SAME, xlogy, y != y ? y : (x == 0 ? (CT)0 : x * (CT)log(y)))

/* integer power by squaring; negative exponents follow PyTorch (1, -1 or 0) */
static inline int64_t ipow(int64_t base, int64_t e) {
    if (e < 0) {
        if (base == 1) return 1;
        if (base == -1) return (e & 1) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, b = (uint64_t)base;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}
ROWS_INT(B_SAME, pow, (CT)ipow(x, y))
/* scalar_last: a Python exponent of 3 or -2 (float32/float64/bfloat16), PyTorch's x*x*x and
 * 1/(x*x), bfloat16 rounding the inner product; the dispatcher maps 2, -1, 0.5, -0.5 to mul,
 * reciprocal, sqrt and rsqrt */
ROWS_FLOAT(B_SAME, pow, k->scalar_last ? ((y) == 3 ? RND_ROW(x * x) * x : (CT)1 / RND_ROW(x * x)) : VM2(pow, x, y))

/* PyTorch's fused backward kernels: tanh_backward(g, y) = g * (1 - y*y) with 1 - y*y rounded once
 * (its vectorised fma); sigmoid_backward(g, y) = g * (1 - y) * y, float16 rounding each step as
 * PyTorch's Half kernel does, bfloat16 computing in float */
ROWS_FLOAT(B_SAME, tanh_backward, x * (CT)fma(-(double)y, (double)y, 1.0))
ROWS_FLOAT(B_SAME, sigmoid_backward, rnd_kind_ == MT_RND_f16 ? RND(RND(x * RND((CT)1 - y)) * y) : x * ((CT)1 - y) * y)

/* PyTorch's logit_backward(grad x, input y; alpha: eps, < 0 for none) in the dtype's arithmetic (float16 and
 * bfloat16 round each step): NaN outside [0, 1] and grad * inf at 0 and 1 without eps, 0 outside
 * [eps, 1 - eps] with it, else grad / (y * (1 - y)). With eps a NaN input gives 0 in PyTorch's vector form
 * (it selects the quotient inside the range) and NaN in its scalar form (zero outside it); the vector form
 * runs over 128-byte blocks of a row whose operands are dense, or dense but one broadcast (measured). */
#define LOGITB_Q(y) RND(x / RND((y) * RND((CT)1 - (y))))
#define LOGITB_S(CT)                                                                                   \
    (e_ < 0 ? ((y < 0) | (y > 1) ? (CT)NAN : ((y == 0) | (y == 1) ? x * (CT)INFINITY : LOGITB_Q(y)))   \
            : ((y < e_) | (y > h_) ? (CT)0 : LOGITB_Q(y)))
#define LOGITB_V(CT) (e_ < 0 ? LOGITB_S(CT) : ((y >= e_) & (y <= h_) ? LOGITB_Q(y) : (CT)0))
#define LOGITB_DEF(TAG, T, CTY, LOAD, STORE, ...)                                                      \
    MT_SIMD void mt_cpu_logit_backward_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k_in) { \
        typedef CTY CT;                                                                                \
        KARGS_LOCAL                                                                                    \
        const int rnd_kind_ = MT_RND_##TAG;                                                            \
        const CT e_ = RND(KALPHA(CT)), h_ = RND((CT)1 - e_);                                           \
        const int64_t sz = sizeof(T);                                                                  \
        const int vec = s[0] == sz && ((s[1] == sz && (s[2] == sz || !s[2])) || (!s[1] && s[2] == sz)); \
        const int64_t nv = vec ? n / (128 / sz) * (128 / sz) : 0;                                      \
        for (int64_t i = 0; i < nv; i++) {                                                             \
            CT x = LOAD(AT(d[1], i, s[1], const T)), y = LOAD(AT(d[2], i, s[2], const T));             \
            ((T *)d[0])[i] = STORE(LOGITB_V(CT));                                                      \
        }                                                                                              \
        for (int64_t i = nv; i < n; i++) {                                                             \
            CT x = LOAD(AT(d[1], i, s[1], const T)), y = LOAD(AT(d[2], i, s[2], const T));             \
            AT(d[0], i, s[0], T) = STORE(LOGITB_S(CT));                                                \
        }                                                                                              \
    }
ROWS_FLOAT(LOGITB_DEF)

/* the losses' pointwise terms, as PyTorch's kernels compute them (z = |x - y|; alpha: delta / beta).
 * Its reduced-float kernels differ: mse rounds each step to the dtype for float16 and bfloat16, huber
 * for bfloat16 only (delta rounded too; float16 computes in float), smooth_l1 for float16 only. */
#define RNDIF(r, v) ((r) ? RND(v) : (v))
ROWS_FLOAT(B_SAME, mse, ({ CT d_ = RND(x - y); d_ * d_; }))
ROWS_FLOAT(B_SAME, huber, ({
               const int r_ = rnd_kind_ == MT_RND_bf16;
               CT d_ = RNDIF(r_, KALPHA(CT)), z_ = (CT)fabs(RNDIF(r_, x - y));
               z_ < d_ ? RNDIF(r_, (CT)0.5 * z_) * z_ : d_ * RNDIF(r_, z_ - RNDIF(r_, (CT)0.5 * d_));
           }))
ROWS_FLOAT(B_SAME, smooth_l1, ({
               const int r_ = rnd_kind_ == MT_RND_f16;
               CT b_ = RNDIF(r_, KALPHA(CT)), z_ = (CT)fabs(RNDIF(r_, x - y));
               z_ < b_ ? RNDIF(r_, RNDIF(r_, (CT)0.5 * z_) * z_) / b_ : z_ - RNDIF(r_, (CT)0.5 * b_);
           }))
#undef RNDIF

ROWS_INTBOOL(B_SAME, maximum, x > y ? x : y)
ROWS_FLOAT(B_SAME, maximum, (x != x || y != y) ? x + y : (x > y ? x : y))
ROWS_INTBOOL(B_SAME, minimum, x < y ? x : y)
ROWS_FLOAT(B_SAME, minimum, (x != x || y != y) ? x + y : (x < y ? x : y))

ROWS_INTBOOL(B_SAME, bitwise_and, x & y)
ROWS_INTBOOL(B_SAME, bitwise_or, x | y)
ROWS_INTBOOL(B_SAME, bitwise_xor, x ^ y)
/* PyTorch's shifts: a shift past the width (or negative) gives 0 to the left, the sign to the right */
#define SIGNED_T(x) ((__typeof__(x))-1 < 0)
#define WIDTH_T(x) ((int64_t)sizeof(x) * 8)
ROWS_INT(B_SAME, bitwise_left_shift, ((int64_t)y < 0 || (int64_t)y >= WIDTH_T(x)) ? (CT)0 : (CT)((uint64_t)x << y))
ROWS_INT(B_SAME, bitwise_right_shift, ((int64_t)y < 0 || (int64_t)y >= WIDTH_T(x) - SIGNED_T(x))
                                           ? (CT)(x >> (WIDTH_T(x) - SIGNED_T(x))) : (CT)(x >> y))

ROWS_ALL(B_BOOL, eq, x == y)
ROWS_ALL(B_BOOL, ne, x != y)
ROWS_ALL(B_BOOL, lt, x < y)
ROWS_ALL(B_BOOL, le, x <= y)
ROWS_ALL(B_BOOL, gt, x > y)
ROWS_ALL(B_BOOL, ge, x >= y)
ROWS_ALL(B_BOOL, logical_and, (x != 0) && (y != 0))
ROWS_ALL(B_BOOL, logical_or, (x != 0) || (y != 0))
ROWS_ALL(B_BOOL, logical_xor, (x != 0) != (y != 0))

/* the next float16/bfloat16 after x towards y, stepping the bits (x and y hold values of that type) */
static inline float next_half(float x, float y, int bf16) {
    if (x != x || y != y) return x + y;
    if (x == y) return y;
    uint16_t h = bf16 ? mt__f32_to_bf16(x) : mt__f32_to_f16(x);
    if (x == 0) h = y > 0 ? 1 : 0x8001; /* the smallest subnormal towards y */
    else h += (x < y) == (x > 0) ? 1 : -1;
    return bf16 ? mt__bf16_to_f32(h) : mt__f16_to_f32(h);
}
/* float32/float64: the same bit step with selects only (libm's nextafter is a call per element) */
#define NEXT_BITS(UT, x, y)                                                                              \
    ({                                                                                                   \
        CT x_ = (x), y_ = (y), r_;                                                                       \
        UT u_;                                                                                           \
        memcpy(&u_, &x_, sizeof u_);                                                                     \
        u_ += ((x_ < y_) == (x_ > 0)) ? (UT)1 : (UT)-1;                                                  \
        u_ = x_ == 0 ? (y_ > 0 ? (UT)1 : (UT)1 << (sizeof(UT) * 8 - 1) | 1) : u_;                        \
        memcpy(&r_, &u_, sizeof u_);                                                                     \
        r_ = x_ == y_ ? y_ : r_;                                                                         \
        (x_ != x_) | (y_ != y_) ? x_ + y_ : r_;                                                          \
    })
ROWS_FLOAT(B_SAME, nextafter, rnd_row_ == MT_RND_f16    ? next_half(x, y, 0)
                              : rnd_row_ == MT_RND_bf16 ? next_half(x, y, 1)
                                                        : _Generic((CT)0, float: NEXT_BITS(uint32_t, x, y),
                                                                   default: NEXT_BITS(uint64_t, x, y)))

/* atan2, hypot, copysign, the NaN-ignoring extremes and log-sum-exp of two */
ROWS_FLOAT(B_SAME, atan2, VM2(atan2, x, y))
ROWS_FLOAT(B_SAME, hypot, VM2(hypot, x, y))
ROWS_F32F64(B_SAME, copysign, copysign(x, y))
/* float16/bfloat16: the magnitude's bits with the sign bit of y, as PyTorch's vector and scalar paths alike (a NaN
 * keeps its payload; through float it came back quiet, or 0x7FC0 for bfloat16, and 2-6x slower) */
#define COPYSIGN16_DEF(TAG)                                                                                 \
    MT_SIMD void mt_cpu_copysign_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) {          \
        if ((k && k->scalar_last) || s[2] == 0) { /* one sign for every x */                                \
            uint16_t sy = k && k->scalar_last ? (signbit(k->sv) ? 0x8000 : 0) : (*(const uint16_t *)d[2] & 0x8000); \
            if (s[0] == 2 && s[1] == 2) {                                                                   \
                uint16_t *o = (uint16_t *)d[0];                                                             \
                const uint16_t *a = (const uint16_t *)d[1];                                                 \
                for (int64_t i = 0; i < n; i++) o[i] = (uint16_t)((a[i] & 0x7FFF) | sy);                    \
            } else {                                                                                        \
                for (int64_t i = 0; i < n; i++)                                                             \
                    AT(d[0], i, s[0], uint16_t) = (uint16_t)((AT(d[1], i, s[1], const uint16_t) & 0x7FFF) | sy); \
            }                                                                                               \
        } else if (s[0] == 2 && s[1] == 2 && s[2] == 2) {                                                   \
            uint16_t *o = (uint16_t *)d[0];                                                                 \
            const uint16_t *a = (const uint16_t *)d[1], *b = (const uint16_t *)d[2];                        \
            for (int64_t i = 0; i < n; i++) o[i] = (uint16_t)((a[i] & 0x7FFF) | (b[i] & 0x8000));           \
        } else {                                                                                            \
            for (int64_t i = 0; i < n; i++)                                                                 \
                AT(d[0], i, s[0], uint16_t) = (uint16_t)((AT(d[1], i, s[1], const uint16_t) & 0x7FFF) |      \
                                                         (AT(d[2], i, s[2], const uint16_t) & 0x8000));     \
        }                                                                                                   \
    }
COPYSIGN16_DEF(f16)
COPYSIGN16_DEF(bf16)
ROWS_INTBOOL(B_SAME, fmax, x > y ? x : y)
ROWS_FLOAT(B_SAME, fmax, fmax(x, y))
ROWS_INTBOOL(B_SAME, fmin, x < y ? x : y)
ROWS_FLOAT(B_SAME, fmin, fmin(x, y))
/* PyTorch's: infinities of one sign give themselves (inf - inf would be NaN). The sum is computed first and
 * its NaN is part of the test, so that its calls stay outside the branch (vecmath.h, erfinv) and vectorise. */
#define LOGADDEXP(CT, x, y, E, SCALE)                                                      \
    ({                                                                                     \
        CT s_ = ((x) > (y) ? (x) : (y)) + VM(log1p, E(-fabs((x) - (y)))) * (SCALE);         \
        (s_ != s_) & isinf(x) & ((x) == (y)) ? (x) : s_;                                   \
    })
#define VEXP2(v) VM(exp2, v)
ROWS_FLOAT(B_SAME, logaddexp, LOGADDEXP(CT, x, y, VEXP, (CT)1))
ROWS_FLOAT(B_SAME, logaddexp2, LOGADDEXP(CT, x, y, VEXP2, (CT)(1 / M_LN2)))
#undef VEXP2
ROWS_COMPLEX(B_SAME, logaddexp, CLOGADDEXP(x, y))
/* PyTorch's calc_gcd/lcm in the tensor's own type: the magnitudes wrap at the type's minimum as
 * std::abs does there, through unsigned arithmetic (no signed-overflow UB) */
#define IABS(CT, v) ((v) < 0 ? (CT)(0 - (uint64_t)(v)) : (v))
static inline int64_t igcd(int64_t a, int64_t b) {
    while (a != 0) {
        int64_t c = a;
        a = b % a;
        b = c;
    }
    return b;
}
ROWS_INT(B_SAME, gcd, (CT)igcd(IABS(CT, x), IABS(CT, y)))
/* lcm's |a / g * b|: types narrower than int compute in int (C's promotion) before the result is
 * truncated; int32/int64 wrap, with a / -1 as a negation (INT_MIN / -1 traps) */
ROWS_INT(B_SAME, lcm, ({
    CT g_ = (CT)igcd(IABS(CT, x), IABS(CT, y));
    g_ == 0                    ? (CT)0
    : sizeof(CT) < sizeof(int) ? (CT)abs((int)x / (int)g_ * (int)y)
                               : IABS(CT, IMUL(CT, g_ == -1 ? ISUB(CT, 0, x) : (CT)(x / g_), y));
}))

/* ---- complex64 / complex128 (c10's product and division, loops.h) ---- */
ROWS_COMPLEX(B_SAME, add, KALPHA(CT) == 1 ? x + y : x + y * KALPHA(CT))
ROWS_COMPLEX(B_SAME, sub, KALPHA(CT) == 1 ? x - y : x - y * KALPHA(CT))
ROWS_COMPLEX(B_SAME, mul, CMUL(x, y))
ROWS_COMPLEX(B_SAME, div, CDIV(x, y))
ROWS_COMPLEX(B_SAME, pow, pow(x, y))
ROWS_COMPLEX(B_BOOL, eq, x == y)
ROWS_COMPLEX(B_BOOL, ne, x != y)
ROWS_COMPLEX(B_BOOL, logical_and, (x != 0) && (y != 0))
ROWS_COMPLEX(B_BOOL, logical_or, (x != 0) || (y != 0))
ROWS_COMPLEX(B_BOOL, logical_xor, (x != 0) != (y != 0))
/* PyTorch's tanh_backward / sigmoid_backward for complex: grad * conj(1 - y*y), grad * conj((1 - y) * y) */
ROWS_COMPLEX(B_SAME, tanh_backward, CMUL(x, conj((CT)1 - CMUL(y, y))))
ROWS_COMPLEX(B_SAME, sigmoid_backward, CMUL(x, conj(CMUL((CT)1 - y, y))))
/* torch.complex(real, imag) and torch.polar(abs, angle): two reals make one complex */
ROWS_F32F64(B_TOCOMPLEX, complex, CMAKE(CT, x, y))
ROWS_F32F64(B_TOCOMPLEX, polar, CMAKE(CT, x * VM(cos, y), x * VM(sin, y)))
