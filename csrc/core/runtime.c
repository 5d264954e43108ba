/* runtime.c — errors, thread settings, default dtype, dtype traits. */
#include <stdarg.h>
#include <stdio.h>

#include <unistd.h>

#include "internal.h"

static _Thread_local char err_buf[2048];
/* process-wide, as in PyTorch (set_default_dtype in one thread is seen by all) */
static atomic_int default_dtype = MT_F32;
static atomic_int num_threads = 0;

const char *mt_last_error(void) { return err_buf; }

mt_status mt__error(int kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_buf, sizeof err_buf, fmt, ap);
    va_end(ap);
    return kind;
}

int mt__cpu_avx512f(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static int state = -1; /* benign race: every thread computes the same answer */
    if (state < 0) state = __builtin_cpu_supports("avx512f");
    return state;
#else
    return 0;
#endif
}

const char *mt_cpu_capability(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (mt__cpu_avx512f()) return "AVX512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2";
#endif
    return "DEFAULT";
}

void openblas_set_num_threads(int num_threads); /* from OpenBLAS */

/* One setting for both pools: our OpenMP loops and OpenBLAS's GEMM threads. */
void mt_set_num_threads(int n) {
    n = n > 0 ? n : 1;
    atomic_store(&num_threads, n);
    openblas_set_num_threads(n);
}
int mt_get_num_threads(void) {
    int n = atomic_load(&num_threads);
    if (n == 0) {
        n = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1) n = 1;
        atomic_store(&num_threads, n);
    }
    return n;
}

void mt_set_default_dtype(int dtype) { atomic_store_explicit(&default_dtype, dtype, memory_order_relaxed); }
int mt_get_default_dtype(void) { return atomic_load_explicit(&default_dtype, memory_order_relaxed); }
int mt__default_float(void) { return atomic_load_explicit(&default_dtype, memory_order_relaxed); }

const char *const mt_dtype_names[] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float",
                                      "Double", "Float8_e5m2", "Float8_e4m3fn", "Float8_e5m2fnuz",
                                      "Float8_e4m3fnuz", "Float8_e8m0fnu", "ComplexFloat", "ComplexDouble"};
MT_DTYPE_TABLE(mt_dtype_names);
const char *const mt__typemeta_names[] = {"bool", "unsigned char", "signed char", "short int", "int", "long int",
                                          "c10::Half", "c10::BFloat16", "float", "double", "c10::Float8_e5m2",
                                          "c10::Float8_e4m3fn", "c10::Float8_e5m2fnuz", "c10::Float8_e4m3fnuz",
                                          "c10::Float8_e8m0fnu", "c10::complex<float>", "c10::complex<double>"};
MT_DTYPE_TABLE(mt__typemeta_names);
static const int itemsizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1, 1, 1, 1, 8, 16};
MT_DTYPE_TABLE(itemsizes);
int mt_dtype_itemsize(int dtype) { return (unsigned)dtype < MT_NUM_DTYPES ? itemsizes[dtype] : 0; } /* 0: no such dtype */

uint16_t mt_f32_to_f16(float x) { return mt__f32_to_f16(x); }
float mt_f16_to_f32(uint16_t h) { return mt__f16_to_f32(h); }
uint16_t mt_f32_to_bf16(float x) { return mt__f32_to_bf16(x); }
float mt_bf16_to_f32(uint16_t h) { return mt__bf16_to_f32(h); }

mt_status mt__not_implemented(const char *kernel, int dtype) {
    return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel,
                     (unsigned)dtype < MT_NUM_DTYPES ? mt_dtype_names[dtype] : "?");
}

/* PyTorch's toComplexType: bfloat16 gives complex64 there too; float16's complex32 is not supported */
int mt__to_complex(int dt) {
    switch (dt) {
    case MT_BF16: case MT_F32: case MT_C64: return MT_C64;
    case MT_F64: case MT_C128: return MT_C128;
    case MT_F16:
        mt__error(MT_ERR_NOT_IMPLEMENTED, "complex32 (ComplexHalf) tensors are not supported in mindtorch_v2");
        return -1;
    }
    mt__error(MT_ERR_RUNTIME, "Unknown Complex ScalarType for %s", (unsigned)dt < MT_NUM_DTYPES ? mt_dtype_names[dt] : "?");
    return -1;
}

/* PyTorch's promoteTypes for the dtypes we have. */
int mt_promote_types(int a, int b) {
    if (a == b) return a;
    if (mt__is_float8(a) || mt__is_float8(b)) {
        mt__error(MT_ERR_RUNTIME, "Promotion for Float8 Types is not supported, attempted to promote %s and %s",
                  mt_dtype_names[a], mt_dtype_names[b]);
        return -1;
    }
    if (mt__is_complex(a) || mt__is_complex(b)) { /* the complex type of the wider real parts */
        int ra = mt__complex_to_real(a), rb = mt__complex_to_real(b);
        return ra == MT_F64 || rb == MT_F64 ? MT_C128 : MT_C64;
    }
    if (a == MT_BOOL) return b;
    if (b == MT_BOOL) return a;
    int fa = mt__is_float(a), fb = mt__is_float(b);
    if (fa && fb) {
        if ((a == MT_F16 && b == MT_BF16) || (a == MT_BF16 && b == MT_F16)) return MT_F32;
        return a > b ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* both integers: uint8 with a signed type needs the next signed width */
    if (a == MT_U8 || b == MT_U8) {
        int other = a == MT_U8 ? b : a;
        return other == MT_I8 ? MT_I16 : other;
    }
    return a > b ? a : b;
}

/* PyTorch's canCast: no complex->real, no float->int, no int->bool, no (non-bool)->bool narrowing. */
int mt_can_cast(int from, int to) {
    if (mt__is_complex(from) && !mt__is_complex(to)) return 0;
    if (mt__is_floating(from) && !mt__is_floating(to) && !mt__is_complex(to)) return 0;
    if (from != MT_BOOL && to == MT_BOOL) return 0;
    return 1;
}

const char *mt__fmt_sizes(char *buf, size_t cap, int ndim, const int64_t *sizes) {
    size_t n = 0;
    n += snprintf(buf + n, cap - n, "[");
    for (int i = 0; i < ndim && n < cap; i++)
        n += snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

mt_status mt__wrap_dim(int64_t *dim, int ndim) {
    int64_t n = ndim > 0 ? ndim : 1; /* a 0-dim tensor accepts dim 0 and -1 */
    if (*dim < -n || *dim >= n)
        return mt__error(MT_ERR_INDEX,
                         "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                         (long long)-n, (long long)(n - 1), (long long)*dim);
    if (*dim < 0) *dim += n;
    return MT_OK;
}
