/* copy.c — the dtype conversion loops mt__cast_loops[dst][src]. Floats reach
 * int64 directly and narrower integers through int32 (as PyTorch's CPU casts do), float16 and
 * bfloat16 round to nearest even; float8 converts through float32 both ways (c10's Float8 types
 * have only a float constructor and a float conversion); complex to real takes the real part. */
#include "loops.h"
#include "simd_avx512.h"

/* load any dtype into the widest type of its kind */
#define LD_bool(p) ((int64_t)(*(const uint8_t *)(p) != 0))
#define LD_u8(p) ((int64_t) * (const uint8_t *)(p))
#define LD_i8(p) ((int64_t) * (const int8_t *)(p))
#define LD_i16(p) ((int64_t) * (const int16_t *)(p))
#define LD_i32(p) ((int64_t) * (const int32_t *)(p))
#define LD_i64(p) (*(const int64_t *)(p))
#define LD_f16(p) ((double)mt__f16_to_f32(*(const uint16_t *)(p)))
#define LD_bf16(p) ((double)mt__bf16_to_f32(*(const uint16_t *)(p)))
#define LD_f32(p) (*(const float *)(p))
#define LD_f64(p) (*(const double *)(p))
#define LD_f8e5m2(p) ((double)mt__e5m2_to_f32(*(const uint8_t *)(p)))
#define LD_f8e4m3fn(p) ((double)mt__e4m3fn_to_f32(*(const uint8_t *)(p)))
#define LD_f8e5m2fnuz(p) ((double)mt__fnuz_to_f32(*(const uint8_t *)(p), 5, 2))
#define LD_f8e4m3fnuz(p) ((double)mt__fnuz_to_f32(*(const uint8_t *)(p), 4, 3))
#define LD_f8e8m0fnu(p) ((double)mt__e8m0_to_f32(*(const uint8_t *)(p)))
#define LD_c64(p) (*(const float _Complex *)(p))
#define LD_c128(p) (*(const double _Complex *)(p))

/* Float to int32 as x86's cvttsd2si does (INT32_MIN for NaN and out of range), which is what
 * PyTorch's casts to int32 and, truncating that, to int16/int8/uint8 give. */
static inline int32_t f2i32(double x) {
    return x > -2147483649.0 && x < 2147483648.0 ? (int32_t)x : INT32_MIN;
}

/* store from int64 (ints), double/float (floats) or complex (its real part, as PyTorch's casts to a
 * real dtype take it): generic on the value type */
#define ST_INT(T, v) _Generic((v), double: (T)f2i32(v), float: (T)f2i32(v), float _Complex: (T)f2i32(creal(v)), \
                              double _Complex: (T)f2i32(creal(v)), default: (T)(v))
#define ST_bool(p, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))
#define ST_u8(p, v) (*(uint8_t *)(p) = ST_INT(uint8_t, v))
#define ST_i8(p, v) (*(int8_t *)(p) = ST_INT(int8_t, v))
#define ST_i16(p, v) (*(int16_t *)(p) = ST_INT(int16_t, v))
#define ST_i32(p, v) (*(int32_t *)(p) = ST_INT(int32_t, v))
#define ST_i64(p, v) (*(int64_t *)(p) = _Generic((v), double: mt__f2i(v), float: mt__f2i(v), \
                                                   float _Complex: mt__f2i(creal(v)), double _Complex: mt__f2i(creal(v)), \
                                                   default: (int64_t)(v)))
#define ST_f16(p, v) (*(uint16_t *)(p) = mt__f32_to_f16((float)(v)))
#define ST_bf16(p, v) (*(uint16_t *)(p) = mt__f32_to_bf16((float)(v)))
#define ST_f32(p, v) (*(float *)(p) = (float)(v))
#define ST_f64(p, v) (*(double *)(p) = (double)(v))
#define ST_f8e5m2(p, v) (*(uint8_t *)(p) = mt__f32_to_e5m2((float)(v)))
#define ST_f8e4m3fn(p, v) (*(uint8_t *)(p) = mt__f32_to_e4m3fn((float)(v)))
#define ST_f8e5m2fnuz(p, v) (*(uint8_t *)(p) = mt__f32_to_fnuz((float)(v), 5))
#define ST_f8e4m3fnuz(p, v) (*(uint8_t *)(p) = mt__f32_to_fnuz((float)(v), 4))
#define ST_f8e8m0fnu(p, v) (*(uint8_t *)(p) = mt__f32_to_e8m0((float)(v)))
#define ST_c64(p, v) (*(float _Complex *)(p) = (float _Complex)(v))
#define ST_c128(p, v) (*(double _Complex *)(p) = (double _Complex)(v))

/* element sizes, so contiguous runs get a loop with constant strides that vectorises */
#define SZ_bool 1
#define SZ_u8 1
#define SZ_i8 1
#define SZ_i16 2
#define SZ_i32 4
#define SZ_i64 8
#define SZ_f16 2
#define SZ_bf16 2
#define SZ_f32 4
#define SZ_f64 8
#define SZ_f8e5m2 1
#define SZ_f8e4m3fn 1
#define SZ_f8e5m2fnuz 1
#define SZ_f8e4m3fnuz 1
#define SZ_f8e8m0fnu 1
#define SZ_c64 8
#define SZ_c128 16

/* one value (its W bytes at v) stored n times: a fill, or a copy from a broadcast source */
MT_SIMD static void splat(char *o, int64_t stride, int64_t n, int w, const char *v) {
    int zero = 1;
    for (int b = 0; b < w; b++) zero &= v[b] == 0;
    if (zero && stride == w) { memset(o, 0, (size_t)(n * w)); return; }
#define SPLAT(T)                                                                       \
    {                                                                                  \
        T x;                                                                           \
        memcpy(&x, v, sizeof x);                                                       \
        if (stride == sizeof x)                                                        \
            for (int64_t i = 0; i < n; i++) ((T *)o)[i] = x;                           \
        else                                                                           \
            for (int64_t i = 0; i < n; i++) AT(o, i, stride, T) = x;                   \
        return;                                                                        \
    }
    switch (w) {
    case 1: SPLAT(uint8_t)
    case 2: SPLAT(uint16_t)
    case 4: SPLAT(uint32_t)
    case 8: SPLAT(uint64_t)
    default: SPLAT(mt_bytes16)
    }
#undef SPLAT
}

#define CAST_DEF(DST, SRC)                                                             \
    MT_SIMD static void cast_##DST##_##SRC(char **d, const int64_t *s, int64_t n, const mt_kargs *k) { \
        (void)k;                                                                       \
        char *o = d[0], *a = d[1];                                                     \
        if (s[1] == 0 && n > 1) { /* converted once */                                 \
            _Alignas(16) char v[SZ_##DST];                                             \
            ST_##DST(v, LD_##SRC(a));                                                  \
            splat(o, s[0], n, SZ_##DST, v);                                            \
        } else if (s[0] == SZ_##DST && s[1] == SZ_##SRC)                               \
            for (int64_t i = 0; i < n; i++) ST_##DST(o + i * SZ_##DST, LD_##SRC(a + i * SZ_##SRC)); \
        else                                                                           \
            for (int64_t i = 0; i < n; i++) ST_##DST(o + i * s[0], LD_##SRC(a + i * s[1])); \
    }
#define CAST_ROW(DST)                                                                   \
    CAST_DEF(DST, bool) CAST_DEF(DST, u8) CAST_DEF(DST, i8) CAST_DEF(DST, i16) CAST_DEF(DST, i32) \
    CAST_DEF(DST, i64) CAST_DEF(DST, f16) CAST_DEF(DST, bf16) CAST_DEF(DST, f32) CAST_DEF(DST, f64) \
    CAST_DEF(DST, f8e5m2) CAST_DEF(DST, f8e4m3fn) CAST_DEF(DST, f8e5m2fnuz) CAST_DEF(DST, f8e4m3fnuz) \
    CAST_DEF(DST, f8e8m0fnu) CAST_DEF(DST, c64) CAST_DEF(DST, c128)
CAST_ROW(bool) CAST_ROW(u8) CAST_ROW(i8) CAST_ROW(i16) CAST_ROW(i32)
CAST_ROW(i64) CAST_ROW(f16) CAST_ROW(bf16) CAST_ROW(f32) CAST_ROW(f64)
CAST_ROW(f8e5m2) CAST_ROW(f8e4m3fn) CAST_ROW(f8e5m2fnuz) CAST_ROW(f8e4m3fnuz) CAST_ROW(f8e8m0fnu)
CAST_ROW(c64) CAST_ROW(c128)

/* same-dtype copies move bytes */
#define COPY_DEF(W, T)                                                                 \
    MT_SIMD static void copy_##W(char **d, const int64_t *s, int64_t n, const mt_kargs *k) { \
        (void)k;                                                                       \
        if (n <= 0) return; /* an empty source may be a NULL pointer */                \
        if (s[0] == W && s[1] == W) { memmove(d[0], d[1], (size_t)(n * W)); return; }  \
        if (s[1] == 0 && n > 1) { splat(d[0], s[0], n, W, d[1]); return; }            \
        if (s[0] == W && s[1] == -W && (d[0] + n * W <= d[1] - (n - 1) * W || d[0] >= d[1] + W)) { \
            /* a reversed row (flip's innermost dim), not overlapping: vector loads and permutes */ \
            T *o = (T *)d[0];                                                          \
            const T *a = (const T *)d[1];                                              \
            for (int64_t i = 0; i < n; i++) o[i] = a[-i];                              \
            return;                                                                    \
        }                                                                              \
        for (int64_t i = 0; i < n; i++) AT(d[0], i, s[0], T) = AT(d[1], i, s[1], const T); \
    }
COPY_DEF(1, uint8_t)
COPY_DEF(2, uint16_t)
COPY_DEF(4, uint32_t)
COPY_DEF(8, uint64_t)
COPY_DEF(16, double _Complex)

#define ROW_ENTRIES(DST)                                                               \
    {cast_##DST##_bool, cast_##DST##_u8, cast_##DST##_i8, cast_##DST##_i16, cast_##DST##_i32, \
     cast_##DST##_i64, cast_##DST##_f16, cast_##DST##_bf16, cast_##DST##_f32, cast_##DST##_f64,      \
     cast_##DST##_f8e5m2, cast_##DST##_f8e4m3fn, cast_##DST##_f8e5m2fnuz, cast_##DST##_f8e4m3fnuz,   \
     cast_##DST##_f8e8m0fnu, cast_##DST##_c64, cast_##DST##_c128}
static const mt_loop_fn casts[][MT_NUM_DTYPES] = {
    ROW_ENTRIES(bool), ROW_ENTRIES(u8), ROW_ENTRIES(i8), ROW_ENTRIES(i16), ROW_ENTRIES(i32),
    ROW_ENTRIES(i64), ROW_ENTRIES(f16), ROW_ENTRIES(bf16), ROW_ENTRIES(f32), ROW_ENTRIES(f64),
    ROW_ENTRIES(f8e5m2), ROW_ENTRIES(f8e4m3fn), ROW_ENTRIES(f8e5m2fnuz), ROW_ENTRIES(f8e4m3fnuz),
    ROW_ENTRIES(f8e8m0fnu), ROW_ENTRIES(c64), ROW_ENTRIES(c128)};
MT_DTYPE_TABLE(casts);

static const mt_loop_fn copies[] = {copy_1, copy_1, copy_1, copy_2, copy_4, copy_8, copy_2, copy_2,
                                    copy_4, copy_8, copy_1, copy_1, copy_1, copy_1, copy_1, copy_8, copy_16};
MT_DTYPE_TABLE(copies);

mt_loop_fn mt__cast_loop(int dst, int src) { return dst == src ? copies[dst] : casts[dst][src]; }

/* ---- transposed same-dtype copies: tiles instead of a strided gather ---------------------------
 * A copy whose two fastest iterator dims are a transpose (the output contiguous along dim 0, the input
 * along dim 1: x.t().contiguous(), t_copy, permute(...).contiguous()) read one element per cache line
 * in the element loop (512x2048 float32: 3 ms against PyTorch's 0.55). Here each part takes blocks of
 * output rows and moves 16x16 tiles (AVX-512 register transposes for 4-byte elements), the outer dims
 * being a batch. Bytes move unchanged, so the result is the element loop's. */
#define TR_ROWS 64 /* output rows per item */

typedef struct {
    const mt_iter *it;
    int isz;
    int64_t rblocks, nbatch;
} tr_ctx;

#define TR_TILE(T)                                                                                   \
    static void tr_tile_##T(const char *s, int64_t ss, char *d, int64_t ds, int64_t ni, int64_t nj) { \
        for (int64_t j0 = 0; j0 < nj; j0 += 16)                                                      \
            for (int64_t i = 0; i < ni; i++)                                                         \
                for (int64_t j = j0; j < nj && j < j0 + 16; j++)                                     \
                    *(T *)(d + i * ds + j * sizeof(T)) = *(const T *)(s + j * ss + i * sizeof(T));   \
    }
TR_TILE(uint8_t)
TR_TILE(uint16_t)
TR_TILE(uint32_t)
TR_TILE(uint64_t)

static void tr_task(void *p, int64_t b, int64_t e) {
    const tr_ctx *c = p;
    const mt_iter *it = c->it;
    int64_t C = it->shape[0], R = it->shape[1], isz = c->isz;
    int64_t ds = it->strides[0][1], ss = it->strides[1][0]; /* output row stride, input row stride */
    for (int64_t t = b; t < e; t++) {
        int64_t bt = t / c->rblocks, i0 = t % c->rblocks * TR_ROWS, ni = mt__min64(TR_ROWS, R - i0);
        char *d = it->data[0];
        const char *s = it->data[1];
        for (int k = 2; k < it->ndim; k++) { /* the batch index over the outer dims */
            int64_t q = bt % it->shape[k];
            bt /= it->shape[k];
            d += q * it->strides[0][k], s += q * it->strides[1][k];
        }
        d += i0 * ds, s += i0 * isz;
        /* output rows i (stride ds) of C contiguous elements j; input element (i, j) at s + j*ss + i*isz */
#ifdef MT_HAVE_AVX512_HELPERS
        if (isz == 4 && mt__cpu_avx512f()) {
            for (int64_t j0 = 0; j0 < C; j0 += 256)
                mt__transpose_f32((const float *)s + j0 * (ss / 4), ss / 4, (float *)d + j0, ds / 4, mt__min64(256, C - j0),
                                  ni);
            continue;
        }
#endif
        for (int64_t j0 = 0; j0 < C; j0 += 256) {
            int64_t nj = mt__min64(256, C - j0);
            switch (isz) {
            case 1: tr_tile_uint8_t(s + j0 * ss, ss, d + j0, ds, ni, nj); break;
            case 2: tr_tile_uint16_t(s + j0 * ss, ss, d + j0 * 2, ds, ni, nj); break;
            case 4: tr_tile_uint32_t(s + j0 * ss, ss, d + j0 * 4, ds, ni, nj); break;
            default: tr_tile_uint64_t(s + j0 * ss, ss, d + j0 * 8, ds, ni, nj);
            }
        }
    }
}

/* 1 when it (a same-dtype copy of isz-byte elements) was a transpose and is done */
static int copy_transposed(const mt_iter *it, int isz) {
    if (it->nops != 2 || it->ndim < 2 || !it->data[0] || it->numel < 4096 || (isz != 1 && isz != 2 && isz != 4 && isz != 8))
        return 0;
    int64_t ds = it->strides[0][1], ss = it->strides[1][0];
    if (it->strides[0][0] != isz || it->strides[1][1] != isz || ds <= 0 || ss <= 0 || ds % isz || ss % isz ||
        it->shape[0] < 16 || it->shape[1] < 16)
        return 0;
    tr_ctx c = {.it = it, .isz = isz, .rblocks = (it->shape[1] + TR_ROWS - 1) / TR_ROWS,
                .nbatch = it->numel / (it->shape[0] * it->shape[1])};
    int64_t items = c.nbatch * c.rblocks;
    mt__parallel_for(items, it->numel < MT_GRAIN_SIZE ? items : 1, tr_task, &c);
    return 1;
}

void mt__copy_iter(const mt_iter *it, int dst, int src) {
    if (dst == src && copy_transposed(it, mt_dtype_itemsize(dst))) return;
    mt__iter_run(it, mt__cast_loop(dst, src), NULL);
}
