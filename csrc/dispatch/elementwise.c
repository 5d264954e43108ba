/* elementwise.c — the one entry point that every elementwise op goes through:
 * promote, broadcast, convert, allocate or check the output, run the loop. */
#include "../core/internal.h"

/* ---- type promotion (torch.result_type) ---------------------------------- */

static int combine_categories(int higher, int lower) {
    if (higher >= 0 && mt__is_float(higher)) return higher;
    if (higher == MT_BOOL || (lower >= 0 && mt__is_float(lower)))
        return higher < 0 ? lower : (lower < 0 ? higher : mt_promote_types(higher, lower));
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
        *slot = *slot < 0 ? dt : mt_promote_types(*slot, dt);
    }
    return combine_categories(dim, combine_categories(zero, wrap));
}

int mt_result_type(int n, mt_tensor *const *tensors) { return result_type(n, tensors); }

const char *mt_op_name(int op) { return (unsigned)op < MT_NUM_OPS ? mt_ops[op].name : "?"; }

/* ---- the stack scalar: a 0-dim wrapped number that needs no allocation ---- */

typedef struct {
    mt_storage storage;
    mt_tensor tensor;
    union { double f; int64_t i; uint8_t b; } value;
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

/* ---- conversion and copies ---------------------------------------------- */


/* A copy of t converted to dtype with t's shape and a layout following t's. */
static mt_status convert(mt_tensor *t, int dtype, mt_tensor **out) {
    int64_t strides[MT_MAX_DIMS];
    mt__output_strides(1, &t, t->ndim, t->sizes, strides);
    MT_TRY(mt__alloc(t->ndim, t->sizes, strides, dtype, t->device, out));
    mt_tensor *ops[2] = {*out, t};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__iter_run(&it, mt__cast_loop(dtype, t->dtype), NULL);
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
    if (dst->device != src->device && !src->wrapped && src->ndim)
        return mt__error(MT_ERR_RUNTIME, "Expected all tensors to be on the same device");
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
    mt__iter_run(&it, mt__cast_loop(dst->dtype, src->dtype), NULL);
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
    mt__iter_run(&it, mt__cast_loop(t->dtype, t->dtype), NULL);
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

mt_status mt_read(mt_tensor *t, int dst_dtype, void *dst, int64_t capacity) {
    int64_t n = mt_tensor_numel(t);
    if (n > capacity) return mt__error(MT_ERR_RUNTIME, "mt_read: buffer too small");
    if (!t->storage->data) return mt__error(MT_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    mt_tensor *view;
    MT_TRY(mt_from_blob(dst, n * mt_dtype_itemsize(dst_dtype), t->ndim, t->sizes, NULL, 0, dst_dtype,
                        NULL, NULL, &view));
    mt_tensor *ops[2] = {view, t};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__iter_run(&it, mt__cast_loop(dst_dtype, t->dtype), NULL);
    mt_tensor_release(view);
    return MT_OK;
}

mt_status mt_item(mt_tensor *t, double *f, int64_t *i) {
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

static mt_status not_implemented(int op, int dtype) {
    return mt__error(MT_ERR_RUNTIME, "\"%s_cpu\" not implemented for '%s'", mt_ops[op].name,
                     mt_dtype_names[dtype]);
}

static int is_operand(const mt_tensor *out, int nin, mt_tensor *const *ins) {
    for (int k = 0; k < nin; k++)
        if (ins[k] == out) return 1;
    return 0;
}

/* ins[k] is converted to `compute` unless bit k of keep_dtype is set. */
static mt_status run(int op, int nin, mt_tensor **ins, int compute, int result_dt, unsigned keep_dtype,
                     mt_tensor *out, const mt_kargs *k, mt_tensor **result) {
    const mt_op_desc *desc = &mt_ops[op];
    mt_loop_fn loop = desc->loops[compute];
    if (!loop) return not_implemented(op, compute);
    int device = MT_CPU, seen = 0;
    for (int i = 0; i < nin; i++) {
        if (ins[i]->wrapped) continue;
        if (seen && ins[i]->device != device && ins[i]->ndim)
            return mt__error(MT_ERR_RUNTIME,
                             "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                             device == MT_META ? "meta" : "cpu", ins[i]->device == MT_META ? "meta" : "cpu");
        if (!seen || ins[i]->ndim) device = ins[i]->device;
        seen = 1;
    }
    int ndim;
    int64_t sizes[MT_MAX_DIMS];
    MT_TRY(mt__broadcast_shapes(nin, ins, &ndim, sizes));

    mt_tensor *temps[MT_MAX_OPERANDS] = {0};
    mt_tensor *buf = NULL;
    mt_status st = MT_OK;
    mt_tensor *opv[MT_MAX_OPERANDS];
    for (int i = 0; i < nin; i++) {
        opv[i + 1] = ins[i];
        if (!(keep_dtype >> i & 1) && ins[i]->dtype != compute) {
            if ((st = convert(ins[i], compute, &temps[i]))) goto done;
            opv[i + 1] = temps[i];
        }
    }
    if (out) {
        if (ndim != out->ndim || memcmp(sizes, out->sizes, ndim * sizeof(int64_t))) {
            if (is_operand(out, nin, ins) || out->wrapped) {
                char a[256], b[256];
                st = mt__error(MT_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                               mt__fmt_sizes(a, sizeof a, out->ndim, out->sizes),
                               mt__fmt_sizes(b, sizeof b, ndim, sizes));
                goto done;
            }
            if ((st = mt_resize_(out, ndim, sizes))) goto done;
        }
        if (out->dtype != result_dt) {
            if (!mt_can_cast(result_dt, out->dtype)) {
                st = mt__error(MT_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                               mt_dtype_names[result_dt], mt_dtype_names[out->dtype]);
                goto done;
            }
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
        mt__output_strides(nin, ins, ndim, sizes, strides);
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
    if (mt_ops[op].result == MT_RESULT_FLOAT && !mt__is_float(promoted)) return mt__default_float();
    return promoted;
}

static int result_dtype(int op, int compute) {
    return mt_ops[op].result == MT_RESULT_BOOL ? MT_BOOL : compute;
}

mt_status mt__impl_unary(int op, mt_tensor *x, mt_tensor *out, mt_tensor **result) {
    MT_TRY(check_op(op, MT_KIND_UNARY));
    int compute = compute_dtype(op, x->dtype);
    if (op == MT_OP_NEG && x->dtype == MT_BOOL)
        return mt__error(MT_ERR_RUNTIME,
                         "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                         "to invert a mask, use the `~` or `logical_not()` operator instead.");
    mt_tensor *ins[1] = {x};
    return run(op, 1, ins, compute, result_dtype(op, compute), 0, out, NULL, result);
}

static int is_int_division(int op) {
    return op == MT_OP_DIV_TRUNC || op == MT_OP_DIV_FLOOR || op == MT_OP_REMAINDER || op == MT_OP_FMOD;
}

static mt_status binary(int op, mt_tensor *a, mt_tensor *b, double alpha, mt_tensor *out, mt_tensor **result) {
    MT_TRY(check_op(op, MT_KIND_BINARY));
    mt_tensor *ins[2] = {a, b};
    int compute = compute_dtype(op, result_type(2, ins));
    if (op == MT_OP_SUB && (a->dtype == MT_BOOL || b->dtype == MT_BOOL)) {
        if (a->dtype == MT_BOOL && b->dtype == MT_BOOL)
            return mt__error(MT_ERR_RUNTIME, "Subtraction, the `-` operator, with two bool tensors is not "
                                             "supported. Use the `^` or `logical_xor()` operator instead.");
        return mt__error(MT_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                         "If you are trying to invert a mask, use the `~` or `logical_not()` "
                                         "operator instead.");
    }
    atomic_int zero_div = 0;
    mt_kargs k = {.alpha = alpha, .ialpha = (int64_t)alpha};
    if (mt__is_int(compute) && is_int_division(op)) k.zero_div = &zero_div;
    return run(op, 2, ins, compute, result_dtype(op, compute), 0, out, &k, result);
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

mt_status mt__impl_ternary(int op, mt_tensor *a, mt_tensor *b, mt_tensor *c, double s, mt_tensor *out,
                     mt_tensor **result) {
    MT_TRY(check_op(op, MT_KIND_TERNARY));
    mt_kargs k = {.alpha = s, .ialpha = (int64_t)s};
    switch (op) {
    case MT_OP_WHERE: { /* where(cond=a, b, c) */
        if (a->dtype != MT_BOOL)
            return mt__error(MT_ERR_RUNTIME,
                             "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                             mt_dtype_names[a->dtype]);
        mt_tensor *vals[2] = {b, c}, *ins[3] = {a, b, c};
        int dt = result_type(2, vals);
        return run(op, 3, ins, dt, dt, 1, out, &k, result);
    }
    case MT_OP_MASKED_FILL: { /* masked_fill(self=a, mask=b, value=c) */
        if (b->dtype != MT_BOOL)
            return mt__error(MT_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                             b->dtype == MT_U8 ? "unsigned char" : mt_dtype_names[b->dtype]);
        if (c->ndim != 0)
            return mt__error(MT_ERR_RUNTIME,
                             "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                             c->ndim);
        mt_tensor *ins[3] = {b, a, c};
        return run(op, 3, ins, a->dtype, a->dtype, 1, out, &k, result);
    }
    case MT_OP_CLAMP: { /* clamp(a, min=b or NULL, max=c or NULL) */
        if (!b && !c) return mt__error(MT_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
        k.ialpha = (b ? 1 : 0) | (c ? 2 : 0);
        mt_tensor *ins[3] = {a, b ? b : a, c ? c : a};
        int dt = result_type(3, ins);
        if (dt == MT_BOOL) return not_implemented(op, dt);
        return run(op, 3, ins, dt, dt, 0, out, &k, result);
    }
    case MT_OP_LERP: { /* lerp(start=a, end=b, weight=c) */
        if (a->dtype != b->dtype)
            return mt__error(MT_ERR_RUNTIME, "expected dtype %s for `end` but got dtype %s",
                             mt_dtype_names[a->dtype], mt_dtype_names[b->dtype]);
        if (!c->wrapped && c->dtype != a->dtype)
            return mt__error(MT_ERR_RUNTIME, "expected dtype %s for `weight` but got dtype %s",
                             mt_dtype_names[a->dtype], mt_dtype_names[c->dtype]);
        mt_tensor *ins[3] = {a, b, c};
        return run(op, 3, ins, a->dtype, a->dtype, 0, out, &k, result);
    }
    case MT_OP_ADDCMUL:
    case MT_OP_ADDCDIV: {
        mt_tensor *ins[3] = {a, b, c};
        int dt = result_type(3, ins);
        if (op == MT_OP_ADDCDIV && !mt__is_float(dt))
            return mt__error(MT_ERR_RUNTIME,
                             "Integer division with addcdiv is no longer supported, and in a future release "
                             "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                             "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                             "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                             "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                             "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
        if (dt == MT_BOOL) return not_implemented(op, dt);
        return run(op, 3, ins, dt, dt, 0, out, &k, result);
    }
    case MT_OP_NAN_TO_NUM: { /* nan_to_num(a): s = nan; posinf/neginf come in b, c as 0-dim tensors */
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
        return run(op, 3, ins, a->dtype, a->dtype, 0, out, &k, result);
    }
    }
    return mt__error(MT_ERR_NOT_IMPLEMENTED, "ternary op %s", mt_ops[op].name);
}
