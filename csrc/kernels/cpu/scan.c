/* scan.c — cumulative ops along one dim: cumsum, cumprod, logcumsumexp (and
 * their reversed forms, which the backward formulas use).
 *
 * Accumulation follows PyTorch's CPU acc_type: double for float32/float64,
 * float for float16/bfloat16 (rounded to the dtype at each store), int64 with
 * wrap-around for integers. The input is first converted to the result dtype
 * (cumsum(x, dtype=...) converts, as PyTorch does). Lines are split across
 * threads; the result is contiguous. */
#include <math.h>

#include "loops.h"

typedef struct {
    int op, reverse;
    const mt_tensor *x;
    mt_tensor *out;
    int64_t dim, n;
} scan_task;

static double log_add_exp(double x, double y) { /* PyTorch's _log_add_exp_helper */
    if (x != x || y != y) return NAN;
    double mn = x < y ? x : y, mx = x < y ? y : x;
    if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
    return x;
}

/* w lines scanned together, lane l at element l of the line group: w adjacent lines of a scan along
 * an outer dim (cumsum(x, 0) of a matrix) advance a row at a time, reading and writing contiguous runs;
 * one line at a time read each strided element's cache line once per line (4096x4096 cumsum(0): 120 ms,
 * PyTorch's 140). Each lane's operations are the single line's, in its order. One loop per op, with the
 * op, length and direction in locals: the stores through char pointers may alias *c, so a loop that read
 * c->op reloaded it at every element; and a single line keeps its sum in a register, not in acc[0]
 * (bfloat16 cumsum of rows of 2048: 1.55x PyTorch's time before both). */
#define SCAN_W 256
#define SCAN_OP(T, ACC, LOAD, STORE, INIT, STEP)                                                \
    if (w == 1) {                                                                               \
        ACC acc = (INIT);                                                                       \
        const char *sp = src;                                                                   \
        char *dp = dst;                                                                         \
        for (int64_t j = 0; j < n; j++, sp += sstep, dp += dstep) {                             \
            ACC v = (ACC)LOAD(*(const T *)sp);                                                  \
            acc = STEP;                                                                         \
            *(T *)dp = STORE(acc);                                                              \
        }                                                                                       \
    } else {                                                                                    \
        ACC accs[SCAN_W];                                                                       \
        for (int l = 0; l < w; l++) accs[l] = (INIT);                                           \
        const char *sp = src;                                                                   \
        char *dp = dst;                                                                         \
        for (int64_t j = 0; j < n; j++, sp += sstep, dp += dstep) {                             \
            const T *s = (const T *)sp;                                                         \
            T *d = (T *)dp;                                                                     \
            for (int l = 0; l < w; l++) {                                                       \
                ACC acc = accs[l], v = (ACC)LOAD(s[l]);                                         \
                acc = STEP;                                                                     \
                accs[l] = acc;                                                                  \
                d[l] = STORE(acc);                                                              \
            }                                                                                   \
        }                                                                                       \
    }
#define SCAN_LINES(T, ACC, LOAD, STORE)                                                         \
    {                                                                                           \
        if (op == MT_SCAN_CUMSUM) { SCAN_OP(T, ACC, LOAD, STORE, (ACC)0, ADD(acc, v)) }         \
        else if (op == MT_SCAN_CUMPROD) { SCAN_OP(T, ACC, LOAD, STORE, (ACC)1, MUL(acc, v)) }   \
        else { SCAN_OP(T, ACC, LOAD, STORE, (ACC)-INFINITY, LAE(v, acc)) }                      \
    }

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define LAE(v, acc) ((__typeof__(acc))log_add_exp((double)(v), (double)(acc)))
#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WMUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))

/* float16 cumsum/cumprod along a contiguous line: blocks converted to float and back by loops that vectorise,
 * around the serial float scan (the same operations: the conversions per element took 3/4 of the time) */
#define F16_BLOCK 256
MT_SIMD static void f16_scan_line(int op, const uint16_t *s, uint16_t *d, int64_t n) {
    float buf[F16_BLOCK], acc = op == MT_SCAN_CUMSUM ? 0.0f : 1.0f;
    for (int64_t b = 0; b < n; b += F16_BLOCK) {
        int m = n - b < F16_BLOCK ? (int)(n - b) : F16_BLOCK;
        for (int i = 0; i < m; i++) buf[i] = mt__f16_to_f32(s[b + i]);
        if (op == MT_SCAN_CUMSUM)
            for (int i = 0; i < m; i++) buf[i] = acc = acc + buf[i];
        else
            for (int i = 0; i < m; i++) buf[i] = acc = acc * buf[i];
        for (int i = 0; i < m; i++) d[b + i] = mt__f32_to_f16(buf[i]);
    }
}

static void scan_chunk(void *p, int64_t b, int64_t e) {
    const scan_task *c = p;
    const mt_tensor *x = c->x;
    int isz = mt_dtype_itemsize(x->dtype);
    int64_t ss = mt__wmul(x->ndim ? x->strides[c->dim] : 0, isz), ds = mt__wmul(x->ndim ? c->out->strides[c->dim] : 0, isz);
    /* lines adjacent in the last dim, when it is not the scanned one and both tensors are dense in it */
    int last = x->ndim - 1, group = x->ndim >= 2 && c->dim != last && x->strides[last] == 1 && c->out->strides[last] == 1;
    for (int64_t o = b, w; o < e; o += w) {
        w = 1;
        if (group) {
            w = x->sizes[last] - o % x->sizes[last];
            if (w > e - o) w = e - o;
            if (w > SCAN_W) w = SCAN_W;
        }
        int64_t rem = o, xo = 0, oo = 0;
        for (int d = x->ndim - 1; d >= 0; d--) {
            if (d == c->dim) continue;
            int64_t i = rem % x->sizes[d];
            rem /= x->sizes[d];
            xo += i * x->strides[d];
            oo += i * c->out->strides[d];
        }
        const int op = c->op;
        const int64_t n = c->n, sstep = c->reverse ? -ss : ss, dstep = c->reverse ? -ds : ds;
        const char *src = mt__data(x) + xo * isz + (c->reverse && n ? (n - 1) * ss : 0);
        char *dst = mt__data(c->out) + oo * isz + (c->reverse && n ? (n - 1) * ds : 0);
        switch (x->dtype) {
        case MT_F16:
            if (w == 1 && sstep == 2 && dstep == 2 && op != MT_SCAN_LOGCUMSUMEXP) {
                f16_scan_line(op, (const uint16_t *)src, (uint16_t *)dst, n);
                break;
            }
            SCAN_LINES(uint16_t, float, mt__f16_to_f32, mt__f32_to_f16) break;
        case MT_BF16: SCAN_LINES(uint16_t, float, mt__bf16_to_f32, mt__f32_to_bf16) break;
        case MT_F32: SCAN_LINES(float, double, ID, (float)) break;
        case MT_F64: SCAN_LINES(double, double, ID, ID) break;
#undef MUL
#define MUL CMUL
#undef LAE
#define LAE(v, acc) mt__clogaddexp((v), (acc))
        /* complex: complex<double> accumulation as PyTorch's acc_type (-inf + 0i starts logcumsumexp) */
        case MT_C64: SCAN_LINES(float _Complex, double _Complex, ID, (float _Complex)) break;
        case MT_C128: SCAN_LINES(double _Complex, double _Complex, ID, ID) break;
#undef ADD
#undef MUL
#undef LAE
#define LAE(v, acc) (acc) /* integers: refused before */
#define ADD WADD
#define MUL WMUL
        case MT_U8: SCAN_LINES(uint8_t, int64_t, ID, (uint8_t)) break;
        case MT_I8: SCAN_LINES(int8_t, int64_t, ID, (int8_t)) break;
        case MT_I16: SCAN_LINES(int16_t, int64_t, ID, (int16_t)) break;
        case MT_I32: SCAN_LINES(int32_t, int64_t, ID, (int32_t)) break;
        case MT_I64: SCAN_LINES(int64_t, int64_t, ID, ID) break;
        case MT_BOOL: SCAN_LINES(uint8_t, int64_t, ID, TOBOOL) break;
        }
    }
}

static const char *scan_kernel(int op) {
    return op == MT_SCAN_CUMSUM ? "cumsum_out_cpu" : op == MT_SCAN_CUMPROD ? "cumprod_out_cpu" : "logcumsumexp_out_cpu";
}

/* the result dtype of a scan (PyTorch: integral inputs give int64 unless dtype= says otherwise) */
int mt__scan_dtype(int op, int xdt, int dtype) {
    if (dtype >= 0) return dtype;
    if (op != MT_SCAN_LOGCUMSUMEXP && !mt__is_float(xdt) && !mt__is_complex(xdt)) return MT_I64;
    return xdt;
}

mt_status mt__impl_scan(int op, mt_tensor *x, int64_t dim, int dtype, int reverse, mt_tensor *out, mt_tensor **result) {
    if ((unsigned)op >= MT_NUM_SCAN) return mt__error(MT_ERR_VALUE, "unknown scan %d", op);
    if (dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype); /* C callers only */
    MT_TRY(mt__wrap_dim(&dim, x->ndim));
    int rdt = mt__scan_dtype(op, x->dtype, dtype);
    if (mt__is_float8(rdt)) return mt__not_implemented(scan_kernel(op), rdt);
    if (out && out->dtype != rdt && dtype < 0 && op != MT_SCAN_LOGCUMSUMEXP) rdt = out->dtype; /* out= picks the dtype */
    if (op == MT_SCAN_LOGCUMSUMEXP && !mt__is_float(rdt) && !mt__is_complex(rdt))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", scan_kernel(op), mt_dtype_names[rdt]);
    mt_tensor *src = x, *tmp = NULL, *buf = NULL;
    if (x->dtype != rdt) {
        MT_TRY(mt_to_dtype(x, rdt, 0, &tmp));
        src = tmp;
    }
    mt_status st = mt__alloc(x->ndim, x->sizes, NULL, rdt, x->device, &buf);
    if (!st && x->device == MT_CPU && mt_tensor_numel(x) > 0) {
        int64_t n = x->ndim ? x->sizes[dim] : 1;
        scan_task t = {op, reverse, src, buf, dim, n};
        mt__parallel_for(mt_tensor_numel(x) / n, (MT_GRAIN_SIZE + n - 1) / n, scan_chunk, &t);
    }
    mt_tensor_release(tmp);
    if (st) return st;
    if (out) {
        if (out->dtype != rdt) st = mt__error(MT_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                                              mt_dtype_names[rdt], mt_dtype_names[out->dtype]);
        if (!st && (out->ndim != buf->ndim || memcmp(out->sizes, buf->sizes, buf->ndim * sizeof(int64_t))))
            st = mt_resize_(out, buf->ndim, buf->sizes);
        if (!st) st = mt_copy_(out, buf);
        mt_tensor_release(buf);
        if (st) return st;
        mt_tensor_retain(out);
        *result = out;
        return MT_OK;
    }
    *result = buf;
    return MT_OK;
}
