/* elementwise.c — the one entry point that every elementwise op goes through:
 * promote, broadcast, convert, allocate or check the output, run the loop. */
#include <math.h>
#include <stdio.h>

#include "../core/internal.h"

/* ---- type promotion (torch.result_type) ---------------------------------- */

/* -2: a promotion failed (its error is set); -1: no operand in that priority class.
 * PyTorch's combine_categories: categories bool < integral < floating < complex */
static int combine_categories(int higher, int lower) {
    if (higher == -2 || lower == -2) return -2;
    if (higher >= 0 && mt__is_complex(higher)) return higher;
    if (lower >= 0 && mt__is_complex(lower)) { /* a floating higher keeps its precision */
        if (higher < 0 || !mt__is_floating(higher)) return lower;
        int dt = mt__to_complex(higher);
        return dt < 0 ? -2 : dt;
    }
    if (higher >= 0 && mt__is_floating(higher)) return higher;
    if (higher == MT_BOOL || (lower >= 0 && mt__is_floating(lower))) {
        if (higher < 0 || lower < 0) return higher < 0 ? lower : higher;
        int dt = mt_promote_types(higher, lower);
        return dt < 0 ? -2 : dt;
    }
    return higher >= 0 ? higher : lower;
}

static int result_type(int n, mt_tensor *const *ts) {
    int dim = -1, zero = -1, wrap = -1;
    for (int k = 0; k < n; k++) {
        const mt_tensor *t = ts[k];
        if (!t) continue;
        int dt = t->dtype;
        int *slot = t->wrapped ? &wrap : (t->ndim == 0 ? &zero : &dim);
        if (t->wrapped && mt__is_float(dt)) dt = mt__default_float();
        if (t->wrapped && mt__is_complex(dt)) dt = mt__to_complex(mt__default_float()); /* the default complex dtype */
        if (*slot == -2) continue;
        *slot = dt < 0 ? -2 : *slot < 0 ? dt : mt_promote_types(*slot, dt);
        if (*slot < 0) *slot = -2;
    }
    int dt = combine_categories(dim, combine_categories(zero, wrap));
    return dt < 0 ? -1 : dt;
}

int mt_result_type(int n, mt_tensor *const *tensors) { return result_type(n, tensors); } /* -1: error set */

const char *mt_op_name(int op) { return (unsigned)op < MT_NUM_OPS ? mt_ops[op].name : "?"; }

/* ---- the stack scalar: a 0-dim wrapped number that needs no allocation ---- */

typedef struct {
    mt_storage storage;
    mt_tensor tensor;
    union { double f; int64_t i; uint8_t b; double c[2]; } value;
} stack_scalar;

static mt_tensor *stack_scalar_init(stack_scalar *s, double f, int64_t i, int kind) {
    memset(s, 0, sizeof *s);
    atomic_init(&s->storage.refcount, 1 << 30); /* never freed */
    s->storage.data = &s->value;
    s->storage.nbytes = sizeof s->value;
    s->tensor.storage = &s->storage;
    s->tensor.wrapped = 1;
    atomic_init(&s->tensor.refcount, 1 << 30);
    if (kind == MT_SCALAR_FLOAT) { s->tensor.dtype = MT_F64; s->value.f = f; }
    else if (kind == MT_SCALAR_INT) { s->tensor.dtype = MT_I64; s->value.i = i; }
    else { s->tensor.dtype = MT_BOOL; s->value.b = i != 0; }
    return &s->tensor;
}

/* a 0-dim tensor with data converted to dtype, held in s: what convert() makes, without its allocations
 * (a Python number operand reaches every such op as a float64 or int64 scalar) */
static mt_tensor *stack_cast(stack_scalar *s, const mt_tensor *t, int dtype) {
    mt_tensor *r = stack_scalar_init(s, 0, 0, MT_SCALAR_FLOAT);
    r->dtype = dtype;
    r->device = t->device;
    r->wrapped = 0;
    char *src = (char *)t->storage->data + t->offset * mt_dtype_itemsize(t->dtype);
    mt__cast_loop(dtype, t->dtype)((char *[]){(char *)&s->value, src}, (const int64_t[]){0, 0}, 1, NULL);
    return r;
}

/* ---- conversion and copies ---------------------------------------------- */


/* A copy of t converted to dtype with t's shape and a layout following t's. */
static mt_status convert(mt_tensor *t, int dtype, mt_tensor **out) {
    int64_t strides[MT_MAX_DIMS];
    mt__like_strides(t, strides);
    MT_TRY(mt__alloc(t->ndim, t->sizes, strides, dtype, t->device, out));
    mt_tensor *ops[2] = {*out, t};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__copy_iter(&it, dtype, t->dtype);
    return MT_OK;
}

static int overlaps(const mt_tensor *a, const mt_tensor *b) {
    if (a->storage != b->storage || !a->storage->data) return 0;
    if (a->offset == b->offset && a->ndim == b->ndim && a->dtype == b->dtype &&
        !memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t)) &&
        !memcmp(a->strides, b->strides, a->ndim * sizeof(int64_t)))
        return 0; /* identical layout: elementwise in place is safe */
    return 1;
}

mt_status mt__impl_copy_(mt_tensor *dst, mt_tensor *src) {
    if (dst->device != src->device && ((!src->wrapped && src->ndim) || src->device == MT_META)) {
        if (src->device == MT_META) return mt__error(MT_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
        if (dst->device != MT_META) return mt__error(MT_ERR_RUNTIME, "Expected all tensors to be on the same device");
        /* into a meta tensor: the shape checks only (the loop below skips a tensor with no data) */
    }
    int ndim;
    int64_t sizes[MT_MAX_DIMS];
    mt_tensor *pair[2] = {dst, src};
    MT_TRY(mt__broadcast_shapes(2, pair, &ndim, sizes));
    if (ndim != dst->ndim || memcmp(sizes, dst->sizes, ndim * sizeof(int64_t))) {
        char a[256], b[256];
        return mt__error(MT_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                         mt__fmt_sizes(a, sizeof a, dst->ndim, dst->sizes), mt__fmt_sizes(b, sizeof b, ndim, sizes));
    }
    mt_tensor *tmp = NULL;
    if (overlaps(dst, src)) {
        MT_TRY(mt_clone(src, &tmp));
        src = tmp;
    }
    mt_tensor *ops[2] = {dst, src};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__copy_iter(&it, dst->dtype, src->dtype);
    mt_tensor_release(tmp);
    mt_tensor_bump_version(dst);
    return MT_OK;
}

mt_status mt__impl_clone(mt_tensor *t, mt_tensor **out) { return convert(t, t->dtype, out); }

mt_status mt__impl_to_dtype(mt_tensor *t, int dtype, int copy, mt_tensor **out) {
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype);
    if (dtype == t->dtype && !copy) {
        mt_tensor_retain(t);
        *out = t;
        return MT_OK;
    }
    return convert(t, dtype, out);
}

mt_status mt__impl_contiguous(mt_tensor *t, mt_tensor **out) {
    if (mt_tensor_is_contiguous(t)) {
        mt_tensor_retain(t);
        *out = t;
        return MT_OK;
    }
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, out));
    mt_tensor *ops[2] = {*out, t};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__copy_iter(&it, t->dtype, t->dtype);
    return MT_OK;
}

mt_status mt__impl_fill(mt_tensor *t, double f, int64_t i, int kind) {
    stack_scalar s;
    return mt_copy_(t, stack_scalar_init(&s, f, i, kind));
}

mt_status mt_scalar_tensor(double f, int64_t i, int kind, int dtype, int wrapped, mt_tensor **out) {
    MT_TRY(mt__alloc(0, NULL, NULL, dtype, MT_CPU, out));
    stack_scalar s;
    mt_tensor *src = stack_scalar_init(&s, f, i, kind);
    mt__cast_loop(dtype, src->dtype)((char *[]){(*out)->storage->data, (char *)&s.value},
                                     (const int64_t[]){0, 0}, 1, NULL);
    (*out)->wrapped = wrapped;
    return MT_OK;
}

mt_status mt_scalar_complex(double re, double im, int dtype, int wrapped, mt_tensor **out) {
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype);
    MT_TRY(mt__alloc(0, NULL, NULL, dtype, MT_CPU, out));
    double v[2] = {re, im};
    mt__cast_loop(dtype, MT_C128)((char *[]){(*out)->storage->data, (char *)v}, (const int64_t[]){0, 0}, 1, NULL);
    (*out)->wrapped = wrapped;
    return MT_OK;
}

mt_status mt_read(mt_tensor *t, int dst_dtype, void *dst, int64_t capacity) {
    int64_t n = mt_tensor_numel(t);
    if ((unsigned)dst_dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dst_dtype);
    if (n > capacity) return mt__error(MT_ERR_RUNTIME, "mt_read: buffer too small");
    if (!t->storage->data) return mt__error(MT_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    mt_tensor *view;
    MT_TRY(mt_from_blob(dst, n * mt_dtype_itemsize(dst_dtype), t->ndim, t->sizes, NULL, 0, dst_dtype,
                        NULL, NULL, &view));
    mt_tensor *ops[2] = {view, t};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__copy_iter(&it, dst_dtype, t->dtype);
    mt_tensor_release(view);
    return MT_OK;
}

mt_status mt_item(mt_tensor *t, double *f, int64_t *i) {
    MT_PROFILE("item", t);
    int64_t n = mt_tensor_numel(t);
    if (n != 1)
        return mt__error(MT_ERR_RUNTIME, "a Tensor with %lld elements cannot be converted to Scalar",
                         (long long)n);
    if (!t->storage->data)
        return mt__error(MT_ERR_NOT_IMPLEMENTED,
                         "Tensor.item() cannot be called on meta tensors");
    char *p = mt__data(t);
    mt__cast_loop(MT_F64, t->dtype)((char *[]){(char *)f, p}, (const int64_t[]){0, 0}, 1, NULL);
    mt__cast_loop(MT_I64, t->dtype)((char *[]){(char *)i, p}, (const int64_t[]){0, 0}, 1, NULL);
    return MT_OK;
}

/* ---- running an op -------------------------------------------------------- */

/* The C++ type names some PyTorch messages print (typeid names, not ScalarType names). */
#define cpp_names mt__typemeta_names

/* The kernel name PyTorch's "not implemented" error names for an op. */
static const char *kernel_name(int op, char *buf, size_t cap) {
    switch (op) {
    case MT_OP_FLOOR: case MT_OP_CEIL: case MT_OP_ROUND: case MT_OP_TRUNC:
        snprintf(buf, cap, "%s_vml_cpu", mt_ops[op].name);
        return buf;
    case MT_OP_ERF: case MT_OP_ERFC: case MT_OP_ERFINV: case MT_OP_LGAMMA:
        snprintf(buf, cap, "%s_vml_cpu", mt_ops[op].name);
        return buf;
    case MT_OP_DIGAMMA: return "digamma";
    case MT_OP_POW: return "pow";
    case MT_OP_ADDCMUL: return "addcmul_cpu_out";
    case MT_OP_BITWISE_LEFT_SHIFT: return "lshift_cpu";
    case MT_OP_BITWISE_RIGHT_SHIFT: return "rshift_cpu";
    }
    snprintf(buf, cap, "%s_cpu", mt_ops[op].name);
    return buf;
}

#define not_implemented mt__not_implemented

/* PyTorch's checked Scalar conversion (c10::overflows): a Python number that an op converts to
 * the tensor dtype (masked_fill value, clamp bounds, alpha) must fit. Integers may wrap into
 * unsigned types; infinities fit any float type; bool takes anything. */
mt_status mt__check_fits(double f, int64_t i, int is_float, int dtype) {
    static const char *const names[MT_NUM_DTYPES] = {
        "bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t", "c10::Half", "c10::BFloat16", "float", "double"};
    static const double lo[MT_NUM_DTYPES] = {0, 0, -128, -32768, -2147483648.0, -9223372036854775808.0, -65504.0,
                                             -3.3895313892515355e38, -3.4028234663852886e38, 0};
    static const double hi[MT_NUM_DTYPES] = {1, 255, 127, 32767, 2147483647.0, 9223372036854775807.0, 65504.0,
                                             3.3895313892515355e38, 3.4028234663852886e38, 0};
    int bad = 0;
    if (dtype == MT_BOOL || dtype == MT_F64 || mt__is_float8(dtype) || mt__is_complex(dtype))
        return MT_OK; /* float8: PyTorch checks nothing; complex: a real number fits */
    if (mt__is_float(dtype)) {
        double v = is_float ? f : (double)i;
        bad = !isinf(v) && (v < lo[dtype] || v > hi[dtype]);
    } else if (is_float) {
        bad = !(f >= lo[dtype] && f <= hi[dtype]); /* NaN too; 2^63 passes as in PyTorch (then INT64_MIN) */
    } else if (dtype == MT_U8) {
        bad = i > 255 || i < -255; /* negative values wrap (two's complement) */
    } else if (dtype != MT_I64) {
        bad = i < (int64_t)lo[dtype] || i > (int64_t)hi[dtype];
    }
    if (bad) return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type %s without overflow", names[dtype]);
    return MT_OK;
}

static mt_status check_scalar_fits(mt_tensor *v, int dtype) {
    double f;
    int64_t i;
    if (!v->storage->data) return MT_OK;
    MT_TRY(mt_item(v, &f, &i));
    return mt__check_fits(f, i, mt__is_float(v->dtype), dtype);
}

/* x rounded to a float dtype's precision (alpha is converted to the tensor dtype) */
static double round_to(int dtype, double x) {
    if (dtype == MT_F16) return mt__f16_to_f32(mt__f32_to_f16((float)x));
    if (dtype == MT_BF16) return mt__bf16_to_f32(mt__f32_to_bf16((float)x));
    if (dtype == MT_F32) return (float)x;
    return x;
}

static int is_operand(const mt_tensor *out, int nin, mt_tensor *const *ins) {
    for (int k = 0; k < nin; k++)
        if (ins[k] == out) return 1;
    return 0;
}

/* PyTorch's memory-overlap checks for a written-to tensor (TensorIterator's compute_mem_overlaps). */
static mt_status check_overlaps(const mt_tensor *out, int nin, mt_tensor *const *ins) {
    if (!out->storage->data || mt_tensor_numel(out) == 0) return MT_OK;
    int dense = mt__non_overlapping_and_dense(out);
    if (!dense)
        for (int d = 0; d < out->ndim; d++)
            if (out->strides[d] == 0 && out->sizes[d] > 1)
                return mt__error(MT_ERR_RUNTIME,
                                 "unsupported operation: more than one element of the written-to tensor refers to a "
                                 "single memory location. Please clone() the tensor before performing the operation.");
    for (int k = 0; k < nin; k++) /* a full overlap is an elementwise op in place: fine */
        if (ins[k] && ins[k] != out && dense && mt__overlap(out, ins[k]) == MT_OVERLAP_PARTIAL)
            return mt__error(MT_ERR_RUNTIME,
                             "unsupported operation: some elements of the input tensor and the written-to tensor "
                             "refer to a single memory location. Please clone() the tensor before performing the "
                             "operation.");
    return MT_OK;
}

/* How an op differs from the plain TensorIterator rules. */
typedef struct {
    unsigned keep_dtype; /* bit k: input k is not converted to the compute dtype */
    const char *kname;   /* the kernel name for "not implemented" (default from the op) */
    int same_dtype_out;  /* out= must have exactly the result dtype ("Found dtype ... but expected ...") */
    int cpp_cast_names;  /* the can't-cast error prints out's C++ type name (ops with Scalar arguments) */
    int contiguous;      /* a new result is contiguous instead of following the inputs' layout */
} run_opts;

static mt_status run(int op, int nin, mt_tensor **ins, int compute, int result_dt, const run_opts *o,
                     mt_tensor *out, const mt_kargs *k, mt_tensor **result) {
    static const run_opts plain = {0};
    if (!o) o = &plain;
    const mt_op_desc *desc = &mt_ops[op];
    mt_loop_fn loop = desc->loops[compute];
    if (out) MT_TRY(check_overlaps(out, nin, ins));
    int device = MT_CPU, seen = 0;
    for (int i = 0; i < nin; i++) {
        if (ins[i]->wrapped) continue;
        if (seen && ins[i]->device != device && ins[i]->ndim)
            return mt__error(MT_ERR_RUNTIME,
                             "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                             mt__device_name(device), mt__device_name(ins[i]->device));
        if (!seen || ins[i]->ndim) device = ins[i]->device;
        seen = 1;
    }
    /* a 0-dim meta input has no data to broadcast into a CPU result; nor has a meta result for out= */
    for (int i = 0; i < nin; i++)
        if (device == MT_CPU && ins[i]->device == MT_META)
            return mt__error(MT_ERR_RUNTIME, "Tensor on device meta is not on the expected device cpu!");
    if (out && out->device != device)
        return mt__error(MT_ERR_RUNTIME, "Attempting to copy from device %s to device %s, but cross-device copies are "
                         "not allowed!", mt__device_name(device), mt__device_name(out->device));
    int ndim;
    int64_t sizes[MT_MAX_DIMS];
    MT_TRY(mt__broadcast_shapes(nin, ins, &ndim, sizes));

    /* the checks PyTorch makes while building its iterator, before it looks for a kernel */
    if (out) {
        if (ndim != out->ndim || memcmp(sizes, out->sizes, ndim * sizeof(int64_t))) {
            if (is_operand(out, nin, ins) || out->wrapped) {
                char a[256], b[256];
                return mt__error(MT_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                                 mt__fmt_sizes(a, sizeof a, out->ndim, out->sizes),
                                 mt__fmt_sizes(b, sizeof b, ndim, sizes));
            }
        }
        if (o->same_dtype_out && out->dtype != result_dt)
            return mt__error(MT_ERR_RUNTIME, "Found dtype %s but expected %s", mt_dtype_names[out->dtype],
                             mt_dtype_names[result_dt]);
        if (out->dtype != result_dt && !mt_can_cast(result_dt, out->dtype))
            return mt__error(MT_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                             mt_dtype_names[result_dt],
                             o->cpp_cast_names ? cpp_names[out->dtype] : mt_dtype_names[out->dtype]);
    }
    if (!loop) {
        char buf[64];
        return not_implemented(o->kname ? o->kname : kernel_name(op, buf, sizeof buf), compute);
    }
    if (out && (ndim != out->ndim || memcmp(sizes, out->sizes, ndim * sizeof(int64_t))))
        MT_TRY(mt_resize_(out, ndim, sizes));

    mt_tensor *temps[MT_MAX_OPERANDS] = {0};
    mt_tensor *buf = NULL;
    mt_status st = MT_OK;
    mt_tensor *opv[MT_MAX_OPERANDS];
    stack_scalar cast[MT_MAX_OPERANDS];
    for (int i = 0; i < nin; i++) {
        opv[i + 1] = ins[i];
        if (!(o->keep_dtype >> i & 1) && ins[i]->dtype != compute) {
            if (!ins[i]->ndim && ins[i]->storage->data) {
                opv[i + 1] = stack_cast(&cast[i], ins[i], compute);
                continue;
            }
            if ((st = convert(ins[i], compute, &temps[i]))) goto done;
            opv[i + 1] = temps[i];
        }
    }
    int direct = out && out->dtype == result_dt;
    for (int i = 0; direct && i < nin; i++)
        if (overlaps(out, opv[i + 1])) direct = 0;
    if (direct) {
        buf = out;
        mt_tensor_retain(buf);
    } else {
        int64_t strides[MT_MAX_DIMS];
        /* the layout follows the inputs as converted to the compute dtype (PyTorch's
         * TensorIterator swaps in the converted copies before it orders dimensions) */
        if (o->contiguous) mt__contiguous_strides(ndim, sizes, strides);
        else mt__output_strides(nin, opv + 1, ndim, sizes, strides);
        if ((st = mt__alloc(ndim, sizes, strides, result_dt, device, &buf))) goto done;
    }
    opv[0] = buf;
    mt_iter it;
    mt__iter_init(&it, nin + 1, opv);
    mt__iter_run(&it, loop, k);
    if (k && k->zero_div && *k->zero_div) {
        st = mt__error(MT_ERR_RUNTIME, "ZeroDivisionError");
        goto done;
    }
    if (out) {
        if (buf != out && (st = mt_copy_(out, buf))) goto done;
        if (buf == out) mt_tensor_bump_version(out);
        mt_tensor_retain(out);
        *result = out;
    } else {
        *result = buf;
        buf = NULL;
    }
done:
    for (int i = 0; i < nin; i++) mt_tensor_release(temps[i]);
    mt_tensor_release(buf);
    return st;
}

static mt_status check_op(int op, int kind) {
    if ((unsigned)op >= MT_NUM_OPS || mt_ops[op].kind != kind)
        return mt__error(MT_ERR_VALUE, "op %d is not a %s op", op,
                         kind == MT_KIND_UNARY ? "unary" : kind == MT_KIND_BINARY ? "binary" : "ternary");
    return MT_OK;
}

static int compute_dtype(int op, int promoted) {
    int r = mt_ops[op].result;
    if ((r == MT_RESULT_FLOAT || r == MT_RESULT_FREAL) && !mt__is_floating(promoted) && !mt__is_complex(promoted))
        return mt__default_float();
    return promoted;
}

static int result_dtype(int op, int compute) {
    switch (mt_ops[op].result) {
    case MT_RESULT_BOOL: return MT_BOOL;
    case MT_RESULT_REAL: case MT_RESULT_FREAL: return mt__complex_to_real(compute);
    case MT_RESULT_COMPLEX: return compute == MT_F32 ? MT_C64 : compute == MT_F64 ? MT_C128 : compute;
    }
    return compute;
}

/* the ops PyTorch rejects for complex inputs with their own texts rather than a missing kernel
 * ("is not supported" ones are NotImplementedError there, "not implemented" ones RuntimeError) */
static mt_status complex_unsupported(int op, int dtype) {
    if (!mt__is_complex(dtype)) return MT_OK;
    switch (op) {
    case MT_OP_SIGN:
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "Unlike NumPy, torch.sign is not intended to support complex "
                                                 "numbers. Please use torch.sgn instead.");
    case MT_OP_FLOOR: case MT_OP_CEIL: case MT_OP_TRUNC:
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "%s is not supported for complex inputs", mt_ops[op].name);
    case MT_OP_SIGNBIT: return mt__error(MT_ERR_NOT_IMPLEMENTED, "signbit is not implemented for complex tensors.");
    case MT_OP_DEG2RAD: case MT_OP_RAD2DEG:
        return mt__error(MT_ERR_RUNTIME, "%s is not supported for complex tensors.", mt_ops[op].name);
    case MT_OP_MAXIMUM: case MT_OP_MINIMUM: case MT_OP_FMAX: case MT_OP_FMIN:
        return mt__error(MT_ERR_RUNTIME, "%s not implemented for complex tensors.", mt_ops[op].name);
    }
    return MT_OK;
}

/* torch.complex / torch.polar: two tensors of one float dtype, no promotion */
static mt_status check_complex_parts(mt_tensor *a, mt_tensor *b) {
    int fa = a->dtype == MT_F16 || a->dtype == MT_F32 || a->dtype == MT_F64;
    int fb = b->dtype == MT_F16 || b->dtype == MT_F32 || b->dtype == MT_F64;
    if (!fa || !fb)
        return mt__error(MT_ERR_RUNTIME, "Expected both inputs to be Half, Float or Double tensors but got %s and %s",
                         mt_dtype_names[a->dtype], mt_dtype_names[b->dtype]);
    if (a->dtype != b->dtype)
        return mt__error(MT_ERR_RUNTIME, "Expected object of scalar type %s but got scalar type %s for second argument",
                         mt_dtype_names[a->dtype], mt_dtype_names[b->dtype]);
    if (a->dtype == MT_F16) return mt__to_complex(MT_F16) < 0 ? MT_ERR_NOT_IMPLEMENTED : MT_OK;
    return MT_OK;
}

static int is_reduced(int dtype) { return dtype == MT_F16 || dtype == MT_BF16; }

/* conj, conj_physical and real are the identity on real dtypes (PyTorch returns self) */
int mt__unary_identity(int op, const mt_tensor *x) {
    return (op == MT_OP_CONJ || op == MT_OP_CONJ_PHYSICAL || op == MT_OP_REAL) && !mt__is_complex(x->dtype);
}

mt_status mt__impl_unary(int op, mt_tensor *x, mt_tensor *out, mt_tensor **result) {
    MT_TRY(check_op(op, MT_KIND_UNARY));
    if (mt__unary_identity(op, x) && (!out || out == x)) {
        *result = x;
        mt_tensor_retain(x);
        return MT_OK;
    }
    int compute = compute_dtype(op, x->dtype);
    if (op == MT_OP_NEG && x->dtype == MT_BOOL)
        return mt__error(MT_ERR_RUNTIME,
                         "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                         "to invert a mask, use the `~` or `logical_not()` operator instead.");
    if (op == MT_OP_SIGNBIT && out && out->dtype != MT_BOOL)
        return mt__error(MT_ERR_RUNTIME, "signbit does not support non-boolean outputs.");
    MT_TRY(complex_unsupported(op, compute));
    mt_tensor *ins[1] = {x};
    /* ops whose result has the input's dtype take an out= of exactly that dtype */
    run_opts o = {.same_dtype_out = mt_ops[op].result == MT_RESULT_SAME || mt_ops[op].result == MT_RESULT_REAL};
    return run(op, 1, ins, compute, result_dtype(op, compute), &o, out, NULL, result);
}

static int is_int_division(int op) {
    return op == MT_OP_DIV_TRUNC || op == MT_OP_DIV_FLOOR || op == MT_OP_REMAINDER || op == MT_OP_FMOD;
}

static mt_status binary(int op, mt_tensor *a, mt_tensor *b, double alpha, mt_tensor *out, mt_tensor **result) {
    MT_TRY(check_op(op, MT_KIND_BINARY));
    mt_tensor *ins[2] = {a, b};
    int promoted = result_type(2, ins);
    if (promoted < 0) return MT_ERR_RUNTIME;
    int compute = compute_dtype(op, promoted);
    if (op == MT_OP_COMPLEX || op == MT_OP_POLAR) MT_TRY(check_complex_parts(a, b));
    MT_TRY(complex_unsupported(op, compute));
    if (op == MT_OP_SUB && (a->dtype == MT_BOOL || b->dtype == MT_BOOL)) {
        if (a->dtype == MT_BOOL && b->dtype == MT_BOOL)
            return mt__error(MT_ERR_RUNTIME, "Subtraction, the `-` operator, with two bool tensors is not "
                                             "supported. Use the `^` or `logical_xor()` operator instead.");
        return mt__error(MT_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                         "If you are trying to invert a mask, use the `~` or `logical_not()` "
                                         "operator instead.");
    }
    /* pow(x, 0) and pow(x, 1) with a Python exponent do not reach a kernel in PyTorch: the result
     * is filled with ones or is a copy (any dtype, bool included). x * exponent gives the result
     * with the right dtype, shape and out= handling. */
    if (op == MT_OP_POW && b->wrapped && !a->wrapped && b->storage->data && !mt__is_complex(b->dtype)) {
        double e;
        int64_t ie;
        MT_TRY(mt_item(b, &e, &ie));
        if (e == 0 || e == 1) {
            MT_TRY(binary(MT_OP_MUL, a, b, 1, out, result));
            if (e == 0) {
                mt_status st = mt__impl_fill(*result, 1, 1, MT_SCALAR_INT);
                if (st) MT_DROP(*result);
                return st;
            }
            return MT_OK;
        }
        MT_TRY(mt__check_fits(e, ie, mt__is_float(b->dtype), compute)); /* exp.to<scalar_t>() */
    }
    atomic_int zero_div = 0;
    mt_kargs k = {.alpha = alpha, .ialpha = mt__f2i(alpha)};
    /* float32/float64/bfloat16 ** Python number: PyTorch's special cases (the exponent converted
     * to the tensor dtype): 2 -> x*x, -1 -> reciprocal, 0.5 -> sqrt, -0.5 -> rsqrt run those
     * kernels; 3 and -2 are forms of the pow kernel. float16 always calls pow. */
    if (op == MT_OP_POW && b->wrapped && !a->wrapped && b->storage->data &&
        (compute == MT_F32 || compute == MT_F64 || compute == MT_BF16)) {
        double e;
        int64_t ie;
        MT_TRY(mt_item(b, &e, &ie));
        e = round_to(compute, e);
        mt_tensor *xx[2] = {a, a};
        int special = e == 2 ? MT_OP_MUL : e == -1 ? MT_OP_RECIPROCAL : e == 0.5 ? MT_OP_SQRT
                    : e == -0.5 ? MT_OP_RSQRT : -1;
        if (special == MT_OP_MUL) {
            mt_kargs k1 = {0};
            return run(special, 2, xx, compute, compute, NULL, out, &k1, result);
        }
        if (special >= 0) return run(special, 1, xx, compute, compute, NULL, out, NULL, result);
        if (e == 3 || e == -2) {
            k.sv = e;
            k.scalar_last = 1;
        }
    }
    if (op == MT_OP_ADD || op == MT_OP_SUB) { /* alpha.to<scalar_t>() */
        if (alpha != 1) MT_TRY(mt__check_fits(alpha, mt__f2i(alpha), mt__is_float(compute), compute));
        if (compute == MT_BOOL) k.ialpha = alpha != 0;
        k.alpha = round_to(compute, alpha);
    }
    /* float16/bfloat16 mul and div by a one-element second operand: PyTorch computes in float
     * with that operand's original value, unrounded to the tensor dtype */
    if (is_reduced(compute) && mt_tensor_numel(b) == 1 && b->storage->data &&
        (op == MT_OP_MUL || op == MT_OP_DIV || op == MT_OP_DIV_TRUNC || op == MT_OP_DIV_FLOOR)) {
        int64_t i;
        MT_TRY(mt_item(b, &k.sv, &i));
        k.scalar_last = 1;
    }
    if (mt__is_int(compute) && is_int_division(op)) k.zero_div = &zero_div;
    return run(op, 2, ins, compute, result_dtype(op, compute), NULL, out, &k, result);
}

mt_status mt__impl_binary(int op, mt_tensor *a, mt_tensor *b, double alpha, mt_tensor *out, mt_tensor **result) {
    return binary(op, a, b, alpha, out, result);
}

mt_status mt__impl_binary_scalar(int op, mt_tensor *a, double f, int64_t i, int kind, int reflected, double alpha,
                           mt_tensor *out, mt_tensor **result) {
    stack_scalar s;
    mt_tensor *b = stack_scalar_init(&s, f, i, kind);
    return reflected ? binary(op, b, a, alpha, out, result) : binary(op, a, b, alpha, out, result);
}

/* grad_input of mse_loss / huber_loss / smooth_l1_loss (op: MT_OP_<loss>_BACKWARD) from input x, target t
 * and grad_output g, as PyTorch's *_loss_backward: a new contiguous tensor of x's dtype, computed in the
 * inputs' common dtype (huber: one dtype for all, as its iterator does not promote) */
mt_status mt__loss_backward(int op, mt_tensor *x, mt_tensor *t, mt_tensor *g, double norm, double p,
                            mt_tensor **result) {
    *result = NULL;
    MT_TRY(check_op(op, MT_KIND_TERNARY));
    mt_tensor *ins[3] = {x, t, g};
    if (op == MT_OP_HUBER_BACKWARD)
        for (int i = 1; i < 3; i++)
            if (ins[i]->dtype != x->dtype)
                return mt__error(MT_ERR_RUNTIME, "Found dtype %s but expected %s", mt_dtype_names[ins[i]->dtype],
                                 mt_dtype_names[x->dtype]);
    int dt = result_type(3, ins);
    if (dt < 0) return MT_ERR_RUNTIME;
    mt_kargs k = {.alpha = p, .s1 = norm};
    run_opts o = {.contiguous = 1};
    mt_tensor *r = NULL;
    MT_TRY(run(op, 3, ins, dt, dt, &o, NULL, &k, &r));
    if (r->dtype == x->dtype) {
        *result = r;
        return MT_OK;
    }
    mt_status st = convert(r, x->dtype, result);
    mt_tensor_release(r);
    return st;
}

mt_status mt__impl_ternary(int op, mt_tensor *a, mt_tensor *b, mt_tensor *c, double s, mt_tensor *out,
                     mt_tensor **result) {
    MT_TRY(check_op(op, MT_KIND_TERNARY));
    /* only clamp takes missing (NULL) operands: its bounds */
    if (!a || (op != MT_OP_CLAMP && (!b || !c)))
        return mt__error(MT_ERR_TYPE, "%s(): expected a Tensor operand, got NULL", mt_op_name(op));
    mt_kargs k = {.alpha = s, .ialpha = mt__f2i(s)};
    switch (op) {
    case MT_OP_WHERE: { /* where(cond=a, b, c); uint8 conditions are still accepted (deprecated) */
        if (a->dtype != MT_BOOL && a->dtype != MT_U8)
            return mt__error(MT_ERR_RUNTIME,
                             "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                             mt_dtype_names[a->dtype]);
        mt_tensor *vals[2] = {b, c}, *ins[3] = {a, b, c};
        int dt = result_type(2, vals);
        if (dt < 0) return MT_ERR_RUNTIME;
        if (out && out->dtype != dt)
            return mt__error(MT_ERR_RUNTIME, "Expected out type to be %s but got %s", mt_dtype_names[dt],
                             mt_dtype_names[out->dtype]);
        run_opts o = {.keep_dtype = 1};
        return run(op, 3, ins, dt, dt, &o, out, &k, result);
    }
    case MT_OP_MASKED_FILL: { /* masked_fill(self=a, mask=b, value=c) */
        if (b->dtype != MT_BOOL)
            return mt__error(MT_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                             cpp_names[b->dtype]);
        if (c->ndim != 0)
            return mt__error(MT_ERR_RUNTIME,
                             "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                             c->ndim);
        MT_TRY(check_scalar_fits(c, a->dtype));
        mt_tensor *ins[3] = {b, a, c};
        run_opts o = {.keep_dtype = 1, .contiguous = 1}; /* PyTorch: a contiguous clone, filled in place */
        return run(op, 3, ins, a->dtype, a->dtype, &o, out, &k, result);
    }
    case MT_OP_CLAMP: { /* clamp(a, min=b or NULL, max=c or NULL) */
        if (!b && !c) return mt__error(MT_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
        if (mt__is_complex(a->dtype) || (b && mt__is_complex(b->dtype)) || (c && mt__is_complex(c->dtype)))
            return mt__error(MT_ERR_NOT_IMPLEMENTED, "clamp is not supported for complex types");
        /* one tensor bound: PyTorch's clamp_min / clamp_max run maximum / minimum */
        if (!b && !c->wrapped) return binary(MT_OP_MINIMUM, a, c, 1, out, result);
        if (!c && !b->wrapped) return binary(MT_OP_MAXIMUM, a, b, 1, out, result);
        k.ialpha = (b ? 1 : 0) | (c ? 2 : 0);
        mt_tensor *ins[3] = {a, b ? b : c, c ? c : b}; /* a missing bound: the other one, unused */
        int dt = result_type(3, ins);
        if (dt < 0) return MT_ERR_RUNTIME;
        int scalars = (!b || b->wrapped) && (!c || c->wrapped);
        /* with Python bounds PyTorch runs a unary op on self.to(result type): out= must have that
         * dtype exactly, and in place the can't-cast error names self's C++ type */
        run_opts o = {.kname = !scalars ? "clamp_cpu" : !b ? "clamp_max_scalar_cpu" : !c ? "clamp_min_scalar_cpu"
                                                                                         : "clamp_scalar_cpu",
                      .cpp_cast_names = scalars, .same_dtype_out = scalars && out != a};
        if (dt == MT_BOOL) return not_implemented(o.kname, dt); /* checked before out= in PyTorch */
        if (scalars) {
            if (b) MT_TRY(check_scalar_fits(b, dt));
            if (c) MT_TRY(check_scalar_fits(c, dt));
        }
        return run(op, 3, ins, dt, dt, &o, out, &k, result);
    }
    case MT_OP_LERP: { /* lerp(start=a, end=b, weight=c) */
        if (a->dtype != b->dtype)
            return mt__error(MT_ERR_RUNTIME, "expected dtype %s for `end` but got dtype %s", cpp_names[a->dtype],
                             cpp_names[b->dtype]);
        if (!c->wrapped && c->dtype != a->dtype)
            return mt__error(MT_ERR_RUNTIME, "expected dtype %s for `weight` but got dtype %s", cpp_names[a->dtype],
                             cpp_names[c->dtype]);
        run_opts o = {.kname = c->wrapped ? "lerp_kernel_scalar" : "lerp_kernel_tensor"};
        /* a real Python weight: in the compute type, unrounded (a complex one is converted as an operand) */
        if (c->wrapped && c->storage->data && !mt__is_complex(a->dtype)) {
            int64_t i;
            MT_TRY(mt_item(c, &k.sv, &i));
            k.scalar_last = 1;
        }
        mt_tensor *ins[3] = {a, b, c};
        return run(op, 3, ins, a->dtype, a->dtype, &o, out, &k, result);
    }
    case MT_OP_ADDCMUL:
    case MT_OP_ADDCDIV: {
        mt_tensor *ins[3] = {a, b, c};
        int dt = result_type(3, ins);
        if (dt < 0) return MT_ERR_RUNTIME;
        if (op == MT_OP_ADDCDIV && !mt__is_float(b->dtype) && !mt__is_float(c->dtype) && !mt__is_complex(dt))
            return mt__error(MT_ERR_RUNTIME,
                             "Integer division with addcdiv is no longer supported, and in a future  release "
                             "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                             "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                             "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                             "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                             "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
        if (s != 1) /* value.to<opmath_t>(); the binding passes it as a double */
            MT_TRY(mt__check_fits(s, mt__f2i(s), !(s == trunc(s) && fabs(s) < 0x1p63), is_reduced(dt) ? MT_F32 : dt));
        return run(op, 3, ins, dt, dt, NULL, out, &k, result);
    }
    case MT_OP_GLU_BACKWARD: { /* (sigmoid(b), a, grad) -> the gradient of glu's second half */
        mt_tensor *ins[3] = {a, b, c};
        int dt = result_type(3, ins);
        if (dt < 0) return MT_ERR_RUNTIME;
        return run(op, 3, ins, dt, dt, NULL, out, &k, result);
    }
    case MT_OP_NAN_TO_NUM: { /* nan_to_num(a): s = nan; posinf/neginf come in b, c as 0-dim tensors */
        if (out && out->dtype != a->dtype)
            return mt__error(MT_ERR_RUNTIME, "nan_to_num: dtype of out: %s should be same as input: %s",
                             mt_dtype_names[out->dtype], mt_dtype_names[a->dtype]);
        if (!mt__is_float(a->dtype)) {
            if (out) { MT_TRY(mt_copy_(out, a)); mt_tensor_retain(out); *result = out; return MT_OK; }
            return mt_clone(a, result);
        }
        double p, n;
        int64_t ip;
        MT_TRY(mt_item(b, &p, &ip));
        MT_TRY(mt_item(c, &n, &ip));
        k.s1 = p;
        k.s2 = n;
        mt_tensor *ins[3] = {a, a, a};
        return run(op, 3, ins, a->dtype, a->dtype, NULL, out, &k, result);
    }
    }
    return mt__error(MT_ERR_NOT_IMPLEMENTED, "ternary op %s", mt_ops[op].name);
}
