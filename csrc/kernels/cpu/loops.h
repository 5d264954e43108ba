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
#define ROWS_FLOAT(M, ...)                                              \
    M(f16, uint16_t, float, mt__f16_to_f32, mt__f32_to_f16, __VA_ARGS__)  \
    M(bf16, uint16_t, float, mt__bf16_to_f32, mt__f32_to_bf16, __VA_ARGS__) \
    M(f32, float, float, ID, ID, __VA_ARGS__)                           \
    M(f64, double, double, ID, ID, __VA_ARGS__)
#define ROWS_NUM(M, ...) ROWS_INT(M, __VA_ARGS__) ROWS_FLOAT(M, __VA_ARGS__)
#define ROWS_ALL(M, ...) ROW_BOOL(M, __VA_ARGS__) ROWS_NUM(M, __VA_ARGS__)
#define ROWS_INTBOOL(M, ...) ROW_BOOL(M, __VA_ARGS__) ROWS_INT(M, __VA_ARGS__)

#define IS_FLOAT_CT(CT) _Generic((CT)0, float: 1, double: 1, default: 0)
/* the scalar argument of the op in the compute type */
#define KALPHA(CT) _Generic((CT)0, float: (float)k->alpha, double: k->alpha, default: (CT)k->ialpha)

/* Each loop is compiled for AVX-512, AVX2+FMA and baseline x86-64; the
 * loader picks the best the CPU has (no -march=native in what ships). */
#if defined(__x86_64__) && !defined(MT_NO_CLONES)
#define MT_SIMD __attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#else
#define MT_SIMD
#endif

#define AT(p, i, s, T) (*(T *)((p) + (i) * (s)))

/* ---- unary: out = EXPR(x) ---- */
#define UNARY_DEF(NAME, TAG, TI, CTY, LOAD, TO, STORE, EXPR)                          \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) { \
        typedef CTY CT __attribute__((unused)); (void)k;                                                                     \
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

/* ---- binary: out = EXPR(x, y) ---- */
#define BINARY_DEF(NAME, TAG, TI, CTY, LOAD, TO, STORE, EXPR)                         \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) { \
        typedef CTY CT __attribute__((unused)); (void)k;                                                                     \
        TO *o = (TO *)d[0];                                                          \
        const TI *a = (const TI *)d[1], *b = (const TI *)d[2];                       \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TI) && s[2] == sizeof(TI)) {        \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LOAD(a[i]), y = LOAD(b[i]);                                   \
                o[i] = STORE(EXPR);                                                  \
            }                                                                        \
        } else if (s[0] == sizeof(TO) && s[1] == sizeof(TI) && s[2] == 0) {          \
            const CTY y = LOAD(b[0]);                                                 \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LOAD(a[i]);                                                   \
                o[i] = STORE(EXPR);                                                  \
            }                                                                        \
        } else if (s[0] == sizeof(TO) && s[1] == 0 && s[2] == sizeof(TI)) {          \
            const CTY x = LOAD(a[0]);                                                 \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY y = LOAD(b[i]);                                                   \
                o[i] = STORE(EXPR);                                                  \
            }                                                                        \
        } else {                                                                     \
            for (int64_t i = 0; i < n; i++) {                                        \
                CTY x = LOAD(AT(d[1], i, s[1], const TI)), y = LOAD(AT(d[2], i, s[2], const TI)); \
                AT(d[0], i, s[0], TO) = STORE(EXPR);                                 \
            }                                                                        \
        }                                                                            \
    }
#define B_SAME(TAG, T, CTY, LD, ST, NAME, ...) BINARY_DEF(NAME, TAG, T, CTY, LD, T, ST, (__VA_ARGS__))
#define B_BOOL(TAG, T, CTY, LD, ST, NAME, ...) BINARY_DEF(NAME, TAG, T, CTY, LD, uint8_t, TOBOOL, (__VA_ARGS__))

/* ---- ternary: out = EXPR(x, y, z); operand 1 may be a bool mask (TM) ---- */
#define TERNARY_DEF(NAME, TAG, TX, TY, CTY, LX, LOAD, TO, STORE, EXPR)                  \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) { \
        typedef CTY CT __attribute__((unused)); (void)k;                                                                     \
        for (int64_t i = 0; i < n; i++) {                                            \
            CTY x = LX(AT(d[1], i, s[1], const TX));                                  \
            CTY y = LOAD(AT(d[2], i, s[2], const TY));                                \
            CTY z = LOAD(AT(d[3], i, s[3], const TY));                                \
            AT(d[0], i, s[0], TO) = STORE(EXPR);                                     \
        }                                                                            \
    }
#define T_SAME(TAG, T, CTY, LD, ST, NAME, ...) TERNARY_DEF(NAME, TAG, T, T, CTY, LD, LD, T, ST, (__VA_ARGS__))
#define T_MASK(TAG, T, CTY, LD, ST, NAME, ...) TERNARY_DEF(NAME, TAG, uint8_t, T, CTY, ID, LD, T, ST, (__VA_ARGS__))

#endif
