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

/* Store one double or int64 value as element i of a contiguous tensor. */
static void store_f(mt_tensor *t, int64_t i, double v) {
    int64_t z[2] = {0, 0};
    mt__cast_loop(t->dtype, MT_F64)((char *[]){mt__data(t) + i * mt_dtype_itemsize(t->dtype), (char *)&v}, z, 1, NULL);
}
static void store_i(mt_tensor *t, int64_t i, int64_t v) {
    int64_t z[2] = {0, 0};
    mt__cast_loop(t->dtype, MT_I64)((char *[]){mt__data(t) + i * mt_dtype_itemsize(t->dtype), (char *)&v}, z, 1, NULL);
}

mt_status mt_arange(double start, double end, double step, int dtype, int device, mt_tensor **out) {
    if (step == 0) return mt__error(MT_ERR_RUNTIME, "step must be nonzero");
    if (!isfinite(start) || !isfinite(end))
        return mt__error(MT_ERR_RUNTIME, "unsupported range: %g -> %g", start, end);
    if ((step > 0 && end < start) || (step < 0 && end > start))
        return mt__error(MT_ERR_RUNTIME, "upper bound and larger bound inconsistent with step sign");
    double n = ceil((end - start) / step);
    if (!(n >= 0 && n < 9.0e18))
        return mt__error(MT_ERR_RUNTIME, "invalid size, possible overflow?");
    int64_t size = (int64_t)n;
    MT_TRY(mt__alloc(1, &size, NULL, dtype, device, out));
    if (device == MT_META) return MT_OK;
    if (mt__is_float(dtype)) {
        for (int64_t i = 0; i < size; i++) store_f(*out, i, start + (double)i * step);
    } else {
        int64_t s = (int64_t)start, st = (int64_t)step;
        for (int64_t i = 0; i < size; i++) store_i(*out, i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)st));
    }
    return MT_OK;
}

/* PyTorch's linspace: the first half counts up from start, the second down from end,
 * in the dtype's own arithmetic (float for float32, double for float64 and integers). */
mt_status mt_linspace(double start, double end, int64_t steps, int dtype, int device, mt_tensor **out) {
    if (steps < 0) return mt__error(MT_ERR_RUNTIME, "number of steps must be non-negative");
    MT_TRY(mt__alloc(1, &steps, NULL, dtype, device, out));
    if (device == MT_META || steps == 0) return MT_OK;
    if (steps == 1) {
        store_f(*out, 0, start);
        return MT_OK;
    }
    int64_t half = steps / 2;
    if (dtype == MT_F32 || dtype == MT_F16 || dtype == MT_BF16) {
        float s = (float)start, e = (float)end, step = (e - s) / (float)(steps - 1);
        for (int64_t i = 0; i < steps; i++)
            store_f(*out, i, i < half ? s + step * (float)i : e - step * (float)(steps - i - 1));
    } else {
        double step = (end - start) / (double)(steps - 1);
        for (int64_t i = 0; i < steps; i++)
            store_f(*out, i, i < half ? start + step * (double)i : end - step * (double)(steps - i - 1));
    }
    return MT_OK;
}

mt_status mt_eye(int64_t n, int64_t m, int dtype, int device, mt_tensor **out) {
    if (n < 0) return mt__error(MT_ERR_RUNTIME, "n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return mt__error(MT_ERR_RUNTIME, "m must be greater or equal to 0, got %lld", (long long)m);
    int64_t sizes[2] = {n, m};
    MT_TRY(mt__alloc(2, sizes, NULL, dtype, device, out));
    if (device == MT_META) return MT_OK;
    memset((*out)->storage->data, 0, (size_t)(n * m * mt_dtype_itemsize(dtype)));
    for (int64_t i = 0; i < n && i < m; i++) store_i(*out, i * m + i, 1);
    return MT_OK;
}
