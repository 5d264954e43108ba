/* loops.h — macros that stamp out one inner loop per (op, dtype).
 *
 * A dtype row is (TAG, T storage type, CT compute type, LOAD, STORE).
 * float16/bfloat16 load into float, compute there and round back to nearest
 * even; bool computes in int and stores "!= 0". Each loop has a contiguous
 * path the compiler vectorises, a path for a broadcast (stride 0) scalar
 * operand, and a general strided path.
 */
#ifndef MT_LOOPS_H
#define MT_LOOPS_H

#include <math.h>
#include <tgmath.h>
#undef complex /* <complex.h>'s spelling of _Complex: "complex" is an op of the table (torch.complex) */
#undef I

#include "../../core/internal.h"

/* some expressions ignore an operand on purpose (isnan of an integer is 0) */
#pragma GCC diagnostic ignored "-Wunused-variable"

#define ID(x) (x)
#define TOBOOL(x) ((uint8_t)((x) != 0))

#define ROW_BOOL(M, ...) M(bool, uint8_t, int, ID, TOBOOL, __VA_ARGS__)
#define ROWS_INT(M, ...)                                \
    M(u8, uint8_t, uint8_t, ID, ID, __VA_ARGS__)        \
    M(i8, int8_t, int8_t, ID, ID, __VA_ARGS__)          \
    M(i16, int16_t, int16_t, ID, ID, __VA_ARGS__)       \
    M(i32, int32_t, int32_t, ID, ID, __VA_ARGS__)       \
    M(i64, int64_t, int64_t, ID, ID, __VA_ARGS__)
/* the float rows: those computing in float32 (float16, bfloat16, float32), and float64 */
#define ROWS_F32C(M, ...)                                                   \
    M(f16, uint16_t, float, mt__f16_to_f32, mt__f32_to_f16, __VA_ARGS__)    \
    M(bf16, uint16_t, float, mt__bf16_to_f32, mt__f32_to_bf16, __VA_ARGS__) \
    M(f32, float, float, ID, ID, __VA_ARGS__)
#define ROWS_F64(M, ...) M(f64, double, double, ID, ID, __VA_ARGS__)
#define ROWS_FLOAT(M, ...) ROWS_F32C(M, __VA_ARGS__) ROWS_F64(M, __VA_ARGS__)
#define ROWS_NUM(M, ...) ROWS_INT(M, __VA_ARGS__) ROWS_FLOAT(M, __VA_ARGS__)
#define ROWS_ALL(M, ...) ROW_BOOL(M, __VA_ARGS__) ROWS_NUM(M, __VA_ARGS__)
#define ROWS_INTBOOL(M, ...) ROW_BOOL(M, __VA_ARGS__) ROWS_INT(M, __VA_ARGS__)
/* complex64 / complex128 compute in C's complex types (ops.tbl kernels "complex") */
#define ROWS_COMPLEX(M, ...)                                                   \
    M(c64, float _Complex, float _Complex, ID, ID, __VA_ARGS__)                 \
    M(c128, double _Complex, double _Complex, ID, ID, __VA_ARGS__)
/* the real type of a complex row (abs, angle, real, imag store it) and the complex type of a
 * float row (torch.complex, polar) */
#define MT_REALT_c64 float
#define MT_REALT_c128 double
#define MT_CPLXT_f32 float _Complex
#define MT_CPLXT_f64 double _Complex

/* PyTorch's c10::complex arithmetic, not C's Annex G forms (which call __mulsc3/__divsc3 and
 * treat infinities apart): the plain product, and numpy's scaled division that c10 uses */
#define MT_COMPLEX_FNS(SFX, R)                                                                    \
    static inline R _Complex mt__cmul##SFX(R _Complex x, R _Complex y) {                          \
        R a = __real__ x, b = __imag__ x, c = __real__ y, d = __imag__ y;                          \
        R _Complex r;                                                                             \
        __real__ r = a * c - b * d;                                                               \
        __imag__ r = a * d + b * c;                                                               \
        return r;                                                                                 \
    }                                                                                             \
    static inline R _Complex mt__cdiv##SFX(R _Complex x, R _Complex y) {                          \
        R a = __real__ x, b = __imag__ x, c = __real__ y, d = __imag__ y, re, im;                  \
        R ac = c < 0 ? -c : c, ad = d < 0 ? -d : d;                                               \
        if (ac >= ad) {                                                                           \
            if (ac == 0 && ad == 0) {                                                             \
                re = a / ac;                                                                      \
                im = b / ad;                                                                      \
            } else {                                                                              \
                R rat = d / c, scl = (R)1 / (c + d * rat);                                        \
                re = (a + b * rat) * scl;                                                         \
                im = (b - a * rat) * scl;                                                         \
            }                                                                                     \
        } else {                                                                                  \
            R rat = c / d, scl = (R)1 / (d + c * rat);                                            \
            re = (a * rat + b) * scl;                                                             \
            im = (b * rat - a) * scl;                                                             \
        }                                                                                         \
        R _Complex r;                                                                             \
        __real__ r = re;                                                                          \
        __imag__ r = im;                                                                          \
        return r;                                                                                 \
    }                                                                                             \
    static inline R _Complex mt__cmake##SFX(R re, R im) {                                         \
        R _Complex r;                                                                             \
        __real__ r = re;                                                                          \
        __imag__ r = im;                                                                          \
        return r;                                                                                 \
    }
MT_COMPLEX_FNS(f, float)
MT_COMPLEX_FNS(, double)

/* c10's complex log1p (log1p(z) exact near 0: |z| < 0.5 takes log1p(x(2 + x) + y^2) / 2) and
 * PyTorch's complex log-add-exp of two (logaddexp, logcumsumexp): ordered by real part, a NaN
 * part anywhere gives NaN, equal infinite real parts are handled apart (inf - inf). */
#define MT_COMPLEX_LOG_FNS(SFX, R)                                                                \
    static inline R _Complex mt__clog1p##SFX(R _Complex z) {                                      \
        R a = __real__ z, b = __imag__ z, th = atan2(b, a + 1), r = a * (2 + a) + b * b;          \
        if (hypot(a, b) < (R)0.5) return mt__cmake##SFX(r == 0 ? a : (R)0.5 * log1p(r), th);      \
        return mt__cmake##SFX(log(hypot(a + 1, b)), th);                                          \
    }                                                                                             \
    static inline R _Complex mt__clogaddexp##SFX(R _Complex x, R _Complex y) {                    \
        R _Complex lo = y, hi = y;                                                                \
        if (isnan(__real__ y) || isnan(__imag__ y)) {                                             \
        } else if (isnan(__real__ x) || isnan(__imag__ x)) {                                      \
            lo = hi = x;                                                                          \
        } else if (__real__ x < __real__ y) {                                                     \
            lo = x;                                                                               \
        } else {                                                                                  \
            hi = x;                                                                               \
        }                                                                                         \
        if (isnan(__real__ lo) || isnan(__imag__ lo)) return mt__cmake##SFX(NAN, NAN);            \
        if (!isfinite(__real__ lo) && __real__ lo == __real__ hi)                                 \
            return __real__ lo < 0 ? lo : log(exp(lo) + exp(hi));                                 \
        return mt__clog1p##SFX(exp(lo - hi)) + hi;                                                \
    }
MT_COMPLEX_LOG_FNS(f, float)
MT_COMPLEX_LOG_FNS(, double)
#define CLOG1P(x) _Generic((x), float _Complex: mt__clog1pf, default: mt__clog1p)(x)
#define CLOGADDEXP(x, y) _Generic((x), float _Complex: mt__clogaddexpf, default: mt__clogaddexp)((x), (y))
#define CMUL(x, y) _Generic((x), float _Complex: mt__cmulf, default: mt__cmul)((x), (y))
#define CDIV(x, y) _Generic((x), float _Complex: mt__cdivf, default: mt__cdiv)((x), (y))
/* re + im*i in the complex type of CT (a real or complex compute type) */
#define CMAKE(CT, re, im) _Generic((CT)0, float: mt__cmakef, float _Complex: mt__cmakef, default: mt__cmake)((re), (im))
#define ROWS_F32F64(M, ...) M(f32, float, float, ID, ID, __VA_ARGS__) M(f64, double, double, ID, ID, __VA_ARGS__)

#define IS_FLOAT_CT(CT) _Generic((CT)0, float: 1, double: 1, default: 0)
/* the scalar argument of the op in the compute type */
#define KALPHA(CT) _Generic((CT)0, float: (float)k->alpha, double: k->alpha, float _Complex: (float)k->alpha, \
                                   double _Complex: k->alpha, default: (CT)k->ialpha)

/* Each loop is compiled for AVX-512, AVX2+FMA and baseline x86-64; the loader picks the best the
 * CPU has (no -march=native in what ships). csrc/build_ffi.py compiles a file that uses MT_SIMD once
 * per ISA level (build_ffi.USES_SIMD finds it), defining MT_SIMD_TARGET as "arch=x86-64-v4" or "arch=x86-64-v3"
 * (levels dispatched on CPU features, not on the CPU model), and dispatches the file's functions at
 * load. Only the loops get the level: the rest of the file is baseline code in every copy, as its
 * floating-point contraction must not depend on the CPU. Without MT_SIMD_TARGET: baseline. */
#ifdef MT_SIMD_TARGET
#define MT_SIMD __attribute__((target(MT_SIMD_TARGET)))
#else
#define MT_SIMD
#endif

#define AT(p, i, s, T) (*(T *)((p) + (i) * (s)))

/* RND(v): v rounded to the storage dtype of the loop (float16/bfloat16 rows), for ops whose
 * PyTorch kernels round intermediate results to the tensor dtype; a no-op elsewhere. Each loop
 * declares rnd_kind_ from its row tag. */
enum { MT_RND_bool = 0, MT_RND_u8 = 0, MT_RND_i8 = 0, MT_RND_i16 = 0, MT_RND_i32 = 0, MT_RND_i64 = 0,
       MT_RND_f16 = 1, MT_RND_bf16 = 2, MT_RND_f32 = 0, MT_RND_f64 = 0, MT_RND_c64 = 0, MT_RND_c128 = 0 };
/* bfloat16: nearest even on the float's bits, a NaN kept as it is (a select of two floats, which GCC if-converts
 * inside a branch of a loop where mt__f32_to_bf16's select of 16-bit words kept floor division's loop scalar;
 * the NaN's payload differs, but every store of a bfloat16 makes any NaN 0x7FC0) */
static inline __attribute__((always_inline)) float mt__rnd_bf16(float v) {
    uint32_t u = mt__f32_bits(v);
    float r = mt__bits_f32((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u);
    return v != v ? v : r;
}
static inline __attribute__((always_inline)) float mt__rnd_f(int kind, float v) {
    return kind == 1 ? mt__f16_to_f32(mt__f32_to_f16(v)) : kind == 2 ? mt__rnd_bf16(v) : v;
}
#define RND(v) _Generic((v), float: mt__rnd_f(rnd_kind_, (v)), default: (v))
/* the same, also inside the scalar_last branch (which turns RND off) */
#define RND_ROW(v) _Generic((v), float: mt__rnd_f(rnd_row_, (v)), default: (v))

/* The loops read their arguments through k, a local copy (zeros when there are none): output
 * stores cannot alias it and it is never NULL, so the compiler hoists k->alpha etc. out of the
 * loops, even from one arm of a select (leaky_relu's x * alpha), and vectorises them. */
#define KARGS_LOCAL                                                                  \
    mt_kargs kc_ = {0};                                                              \
    if (k_in) kc_ = *k_in;                                                           \
    const mt_kargs *const k = &kc_;                                                  \
    (void)k;

/* ---- unary: out = EXPR(x) ---- */
#define UNARY_DEF(NAME, TAG, TI, CTY, LOAD, TO, STORE, EXPR)                          \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k_in) { \
        typedef CTY CT __attribute__((unused));                                      \
        KARGS_LOCAL                                                                  \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TI)) {                              \
            TO *o = (TO *)d[0];                                                      \
            const TI *a = (const TI *)d[1];                                          \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LOAD(a[i]);                                                   \
                o[i] = STORE(EXPR);                                                  \
            }                                                                        \
        } else {                                                                     \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LOAD(AT(d[1], i, s[1], const TI));                            \
                AT(d[0], i, s[0], TO) = STORE(EXPR);                                 \
            }                                                                        \
        }                                                                            \
    }
#define U_SAME(TAG, T, CTY, LD, ST, NAME, ...) UNARY_DEF(NAME, TAG, T, CTY, LD, T, ST, (__VA_ARGS__))
#define U_BOOL(TAG, T, CTY, LD, ST, NAME, ...) UNARY_DEF(NAME, TAG, T, CTY, LD, uint8_t, TOBOOL, (__VA_ARGS__))
/* complex in, its real type out (abs, angle, real, imag) */
#define U_TOREAL(TAG, T, CTY, LD, ST, NAME, ...) UNARY_DEF(NAME, TAG, T, CTY, LD, MT_REALT_##TAG, ID, (__VA_ARGS__))

/* ---- binary: out = EXPR(x, y) ---- */
#define BINARY_DEF(NAME, TAG, TI, CTY, LOAD, TO, STORE, EXPR)                         \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k_in) { \
        typedef CTY CT __attribute__((unused));                                      \
        KARGS_LOCAL                                                                  \
        const int rnd_row_ = MT_RND_##TAG;                                          \
        TO *o = (TO *)d[0];                                                          \
        const TI *a = (const TI *)d[1], *b = (const TI *)d[2];                       \
        const int scalar_ = k && k->scalar_last; /* y is a number in the compute type */ \
        const int dense_x = s[0] == sizeof(TO) && s[1] == sizeof(TI);                \
        if (scalar_ || (dense_x && s[2] == 0)) { /* one y for every x */             \
            /* PyTorch's scalar paths keep intermediates: no rounding to the dtype */ \
            const int rnd_kind_ = scalar_ ? 0 : MT_RND_##TAG;                        \
            const CTY y = scalar_ ? (CTY)k->sv : LOAD(b[0]);                          \
            if (dense_x) {                                                           \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY x = LOAD(a[i]);                                               \
                    o[i] = STORE(EXPR);                                              \
                }                                                                    \
            } else {                                                                 \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY x = LOAD(AT(d[1], i, s[1], const TI));                        \
                    AT(d[0], i, s[0], TO) = STORE(EXPR);                             \
                }                                                                    \
            }                                                                        \
        } else {                                                                     \
            const int rnd_kind_ = MT_RND_##TAG;                                     \
            if (dense_x && s[2] == sizeof(TI)) {                                     \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY x = LOAD(a[i]), y = LOAD(b[i]);                               \
                    o[i] = STORE(EXPR);                                              \
                }                                                                    \
            } else if (s[0] == sizeof(TO) && s[1] == 0 && s[2] == sizeof(TI)) {      \
                const CTY x = LOAD(a[0]);                                             \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY y = LOAD(b[i]);                                               \
                    o[i] = STORE(EXPR);                                              \
                }                                                                    \
            } else {                                                                 \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY x = LOAD(AT(d[1], i, s[1], const TI)), y = LOAD(AT(d[2], i, s[2], const TI)); \
                    AT(d[0], i, s[0], TO) = STORE(EXPR);                             \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }
#define B_SAME(TAG, T, CTY, LD, ST, NAME, ...) BINARY_DEF(NAME, TAG, T, CTY, LD, T, ST, (__VA_ARGS__))
#define B_BOOL(TAG, T, CTY, LD, ST, NAME, ...) BINARY_DEF(NAME, TAG, T, CTY, LD, uint8_t, TOBOOL, (__VA_ARGS__))
/* two reals in, their complex type out (torch.complex, polar) */
#define B_TOCOMPLEX(TAG, T, CTY, LD, ST, NAME, ...) BINARY_DEF(NAME, TAG, T, CTY, LD, MT_CPLXT_##TAG, ID, (__VA_ARGS__))

/* ---- ternary: out = EXPR(x, y, z); operand 1 may be a bool mask (TM) ---- */
#define TERNARY_DEF(NAME, TAG, TX, TY, CTY, LX, LOAD, TO, STORE, EXPR)                  \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k_in) { \
        typedef CTY CT __attribute__((unused));                                      \
        KARGS_LOCAL                                                                  \
        const int dense = s[0] == sizeof(TO) && s[1] == sizeof(TX) && s[2] == sizeof(TY); \
        if (k && k->scalar_last) { /* z is a number in the compute type */           \
            const CTY z = (CTY)k->sv;                                                 \
            if (dense) {                                                             \
                TO *o = (TO *)d[0];                                                  \
                const TX *a = (const TX *)d[1];                                      \
                const TY *b = (const TY *)d[2];                                      \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY x = LX(a[i]), y = LOAD(b[i]);                                 \
                    o[i] = STORE(EXPR);                                              \
                }                                                                    \
            } else {                                                                 \
                for (int64_t i = 0; i < n; i++) {                                    \
                    CTY x = LX(AT(d[1], i, s[1], const TX));                          \
                    CTY y = LOAD(AT(d[2], i, s[2], const TY));                        \
                    AT(d[0], i, s[0], TO) = STORE(EXPR);                             \
                }                                                                    \
            }                                                                        \
        } else if (s[0] == sizeof(TO) && s[1] == sizeof(TX) && s[2] == 0 && s[3] == 0) { \
            TO *o = (TO *)d[0];                                                      \
            const TX *a = (const TX *)d[1];                                          \
            const CTY y = LOAD(*(const TY *)d[2]), z = LOAD(*(const TY *)d[3]);      \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LX(a[i]);                                                     \
                o[i] = STORE(EXPR);                                                  \
            }                                                                        \
        } else if (dense && s[3] == sizeof(TY)) {                                    \
            TO *o = (TO *)d[0];                                                      \
            const TX *a = (const TX *)d[1];                                          \
            const TY *b = (const TY *)d[2], *c = (const TY *)d[3];                   \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LX(a[i]), y = LOAD(b[i]), z = LOAD(c[i]);                     \
                o[i] = STORE(EXPR);                                                  \
            }                                                                        \
        } else {                                                                     \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LX(AT(d[1], i, s[1], const TX));                              \
                CTY y = LOAD(AT(d[2], i, s[2], const TY));                            \
                CTY z = LOAD(AT(d[3], i, s[3], const TY));                            \
                AT(d[0], i, s[0], TO) = STORE(EXPR);                                 \
            }                                                                        \
        }                                                                            \
    }
#define T_SAME(TAG, T, CTY, LD, ST, NAME, ...) TERNARY_DEF(NAME, TAG, T, T, CTY, LD, LD, T, ST, (__VA_ARGS__))
#define T_MASK(TAG, T, CTY, LD, ST, NAME, ...) TERNARY_DEF(NAME, TAG, uint8_t, T, CTY, ID, LD, T, ST, (__VA_ARGS__))

#endif
