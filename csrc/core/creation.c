/* creation.c — factories that fill new tensors: from host data, ranges, eye. */
#include <math.h>

#include "internal.h"

mt_status mt_from_data(const void *src, int src_dtype, int ndim, const int64_t *sizes, int dtype,
                       mt_tensor **out) {
    if ((unsigned)src_dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", src_dtype);
    MT_TRY(mt__alloc(ndim, sizes, NULL, dtype, MT_CPU, out));
    int64_t n = mt__numel(ndim, sizes);
    int64_t s[2] = {mt_dtype_itemsize(dtype), mt_dtype_itemsize(src_dtype)};
    mt__cast_loop(dtype, src_dtype)((char *[]){(*out)->storage->data, (char *)src}, s, n, NULL);
    return MT_OK;
}

/* Values reach the tensor in blocks: computed as int64 or double into a buffer, then cast by one loop call */
enum { STORE_BLOCK = 256 };
static void store_block(mt_tensor *t, int64_t first, int64_t n, int src_dtype, const void *values) {
    int64_t steps[2] = {mt_dtype_itemsize(t->dtype), 8};
    mt__cast_loop(t->dtype, src_dtype)((char *[]){mt__data(t) + first * steps[0], (char *)values}, steps, n, NULL);
}
static void store_f(mt_tensor *t, int64_t i, double v) { store_block(t, i, 1, MT_F64, &v); }
static void store_i(mt_tensor *t, int64_t i, int64_t v) { store_block(t, i, 1, MT_I64, &v); }

static float round_half(int dtype, float x) { /* through float16/bfloat16 and back */
    return dtype == MT_F16 ? mt__f16_to_f32(mt__f32_to_f16(x)) : mt__bf16_to_f32(mt__f32_to_bf16(x));
}

/* Chunks PyTorch's parallel_for cuts [0, n) into: tasks of ceil(n / tasks), tasks = min(threads,
 * ceil(n / grain)) when n exceeds the grain. Values depend on the chunking, not on the threads. */
static int64_t range_chunk(int64_t n) {
    const int64_t grain = 32768;
    int64_t threads = mt_get_num_threads();
    if (n <= grain || threads <= 1) return n > 0 ? n : 1;
    int64_t tasks = (n + grain - 1) / grain;
    if (tasks > threads) tasks = threads;
    return (n + tasks - 1) / tasks;
}

/* PyTorch's CPU arange, value for value. Checks and size in the accumulate type (int64 for
 * integers, float for float16/bfloat16, double otherwise); integers take int64 arithmetic. For
 * floats its kernel runs, per parallel chunk, pairs of 256-bit vectors then a scalar tail: the
 * scalar path gives T(start + i*step), a vector starting at b gives T(base + k*step) with
 * base = T(start + b*step), each with one fused multiply-add in the accumulate type. */
mt_status mt_arange(double start, double end, double step, int dtype, int device, mt_tensor **out) {
    MT_PROFILE("arange");
    if (mt__is_float8(dtype) || mt__is_complex(dtype)) return mt__not_implemented("arange_cpu", dtype);
    if ((unsigned)dtype >= MT_NUM_DTYPES || dtype == MT_BOOL)
        return mt__error(MT_ERR_RUNTIME, "\"arange_cpu\" not implemented for '%s'",
                         (unsigned)dtype < MT_NUM_DTYPES ? mt_dtype_names[dtype] : "?");
    int is_int = !mt__is_float(dtype), is_half = dtype == MT_F16 || dtype == MT_BF16;
    if (!(step > 0 || step < 0)) return mt__error(MT_ERR_RUNTIME, "step must be nonzero"); /* NaN too */
    if (!isfinite(start) || !isfinite(end))
        return mt__error(MT_ERR_RUNTIME, "unsupported range: %g -> %g", start, end);
    if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
        return mt__error(MT_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
    /* PyTorch reads the step in int64 for every integer dtype, the bounds too for int64, before the size;
     * a smaller integer type reads its start in int64 after the size. Its overflow check in double lets
     * 2^63 through, which gives no valid size as an int64 step or int64 bound, and INT64_MIN (x86's
     * conversion) as a smaller integer type's start */
    double read[3] = {dtype == MT_I64 ? start : 0, dtype == MT_I64 ? end : 0, step};
    for (int i = 0; is_int && i < 3; i++)
        if (!(read[i] >= -9.2233720368547758e18 && read[i] <= 9.2233720368547758e18))
            return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
    for (int i = 0; is_int && i < 3; i++)
        if (read[i] == 9.2233720368547758e18 && (i == 2 || dtype == MT_I64))
            return mt__error(MT_ERR_RUNTIME, "invalid size, possible overflow?");
    double xs = trunc(start), xst = trunc(step), n; /* integers compute from truncated bounds */
    if (xs == 9.2233720368547758e18) xs = -xs;
    if (dtype == MT_I64) { /* and int64 counts in integer arithmetic */
        int64_t a = (int64_t)xs, b = (int64_t)trunc(end), c = (int64_t)xst, sgn = c > 0 ? 1 : -1;
        if (c == 0) return mt__error(MT_ERR_VALUE, "step must be nonzero");
        __int128 span = (__int128)b - a; /* PyTorch's end - start in int64: past it, its size is nonsense */
        if (span > INT64_MAX || span < INT64_MIN) return mt__error(MT_ERR_RUNTIME, "invalid size, possible overflow?");
        n = (double)((span + c - sgn) / c);
    } else {
        n = ceil((end - start) / step);
    }
    if (!(n >= 0 && n <= 9.2233720368547758e18)) return mt__error(MT_ERR_RUNTIME, "invalid size, possible overflow?");
    if (is_int && !(start >= -9.2233720368547758e18 && start <= 9.2233720368547758e18))
        return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
    /* n = 2^63 passes PyTorch's check; its conversion (undefined in C, INT64_MIN on x86) then meets
     * the SymInt check */
    int64_t size = mt__f2i(n);
    if (size < 0)
        return mt__error(MT_ERR_RUNTIME, "IntArrayRef contains an int that cannot be represented as a SymInt: %lld",
                         (long long)size);
    MT_TRY(mt__alloc(1, &size, NULL, dtype, device, out));
    if (device == MT_META) return MT_OK;
    if (is_int) {
        uint64_t a = (uint64_t)(int64_t)xs, c = (uint64_t)(int64_t)xst;
        int64_t buf[STORE_BLOCK];
        for (int64_t b = 0; b < size; b += STORE_BLOCK) {
            int64_t n = mt__min64(STORE_BLOCK, size - b);
            for (int64_t i = 0; i < n; i++) buf[i] = (int64_t)(a + (uint64_t)(b + i) * c);
            store_block(*out, b, n, MT_I64, buf);
        }
        return MT_OK;
    }
    int64_t vec = 32 / mt_dtype_itemsize(dtype), chunk = range_chunk(size);
    float sf = (float)start, stf = (float)step;
    double buf[STORE_BLOCK];
    int64_t nbuf = 0;
    for (int64_t b = 0; b < size; b += chunk) {
        int64_t e = b + chunk < size ? b + chunk : size, vec_end = b + (e - b) / (2 * vec) * (2 * vec);
        for (int64_t i = b; i < e; i++) {
            int64_t base = i < vec_end ? b + (i - b) / vec * vec : i, k = i - base;
            double v;
            if (is_half) {
                float x = fmaf(stf, (float)base, sf);
                float kstep = (float)k * stf; /* PyTorch's Vectorized<Half/BFloat16>::arange: the product rounded, then added */
                v = k ? kstep + round_half(dtype, x) : x;
            } else if (dtype == MT_F32) {
                double x = fma(step, (double)base, start);
                v = k ? fma((double)k, step, (double)(float)x) : x;
            } else {
                double x = fma(step, (double)base, start);
                v = k ? fma((double)k, step, x) : x;
            }
            buf[nbuf++] = v;
            if (nbuf == STORE_BLOCK || i == size - 1) store_block(*out, i + 1 - nbuf, nbuf, MT_F64, buf), nbuf = 0;
        }
    }
    return MT_OK;
}

/* PyTorch's CPU linspace, value for value: the first half counts up from start, the second down
 * from end, in the dtype's own arithmetic: one fused multiply-add in float32/float64 (as its
 * compiled kernel has), float16/bfloat16 rounded after every operation, double for integers
 * (from start and end truncated to the dtype). */
mt_status mt_linspace(double start, double end, int64_t steps, int dtype, int device, mt_tensor **out) {
    MT_PROFILE("linspace");
    if (steps < 0) return mt__error(MT_ERR_RUNTIME, "number of steps must be non-negative");
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype);
    if (dtype == MT_BOOL && steps > 1)
        return mt__error(MT_ERR_RUNTIME, "\"linspace_cpu\" not implemented for 'Bool'");
    MT_NO_FLOAT8(dtype, "linspace_cpu");
    MT_TRY(mt__alloc(1, &steps, NULL, dtype, device, out));
    if (device == MT_META || steps == 0) return MT_OK;
    if (steps == 1) {
        store_f(*out, 0, start);
        return MT_OK;
    }
    int64_t half = steps / 2;
    if (dtype == MT_F64) {
        double st = (end - start) / (double)(steps - 1);
        for (int64_t i = 0; i < steps; i++)
            store_f(*out, i, i < half ? fma(st, (double)i, start) : fma(-st, (double)(steps - i - 1), end));
    } else if (dtype == MT_F32) {
        float s = (float)start, e = (float)end, st = (e - s) / (float)(steps - 1);
        for (int64_t i = 0; i < steps; i++)
            store_f(*out, i, i < half ? fmaf(st, (float)i, s) : fmaf(-st, (float)(steps - i - 1), e));
    } else if (dtype == MT_F16 || dtype == MT_BF16) {
#define H(x) round_half(dtype, (x))
        float s = H((float)start), e = H((float)end), st = H(H(e - s) / H((float)(steps - 1)));
        for (int64_t i = 0; i < steps; i++)
            store_f(*out, i, i < half ? H(s + H(st * H((float)i))) : H(e - H(st * H((float)(steps - i - 1)))));
#undef H
    } else { /* integers: bounds truncated (the caller checked they fit the dtype), steps in double */
        double s = (double)mt__f2i(start), e = (double)mt__f2i(end), st = (e - s) / (double)(steps - 1);
        for (int64_t i = 0; i < steps; i++)
            store_i(*out, i, mt__f2i(i < half ? fma(st, (double)i, s) : fma(-st, (double)(steps - i - 1), e)));
    }
    return MT_OK;
}

mt_status mt_eye(int64_t n, int64_t m, int dtype, int device, mt_tensor **out) {
    MT_PROFILE("eye");
    if (n < 0) return mt__error(MT_ERR_RUNTIME, "n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return mt__error(MT_ERR_RUNTIME, "m must be greater or equal to 0, got %lld", (long long)m);
    int64_t sizes[2] = {n, m};
    MT_TRY(mt__check_numel(2, sizes)); /* PyTorch resizes its result */
    MT_TRY(mt__alloc(2, sizes, NULL, dtype, device, out));
    if (device == MT_META) return MT_OK;
    memset((*out)->storage->data, 0, (size_t)(n * m * mt_dtype_itemsize(dtype)));
    for (int64_t i = 0; i < n && i < m; i++) store_i(*out, i * m + i, 1);
    return MT_OK;
}
