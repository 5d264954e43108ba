/* formulas.c — the autograd layer of dispatch for the elementwise, reduction,
 * GEMM, view, copy and indexing entry points (see formula.h). */
#include <stdio.h>
#include "formula.h"


/* ---- elementwise ---------------------------------------------------------- */

/* The unary and binary ops whose derivative csrc/ops.tbl gives have their node names, saved slots and
 * formulas generated (csrc/generated/derivatives.c); the binary ops below are written by hand. */

typedef struct { int op; mt_tensor *x; } unary_ctx;
static mt_status unary_oop(void *p, mt_tensor **r) {
    unary_ctx *u = p;
    return mt_unary(u->op, u->x, NULL, r);
}

mt_status mt_unary(int op, mt_tensor *x, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE_KIND(mt_op_name(op), out && out == x ? MT_PROF_INPLACE : MT_PROF_OP, x);
    if ((unsigned)op < MT_NUM_OPS && mt__unary_identity(op, x) && (!out || out == x)) { /* self, no node */
        mt_tensor_retain(x);
        *result = x;
        return MT_OK;
    }
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || (out && mt__requires_grad(out)));
    if (grad && out && (unsigned)op < MT_NUM_OPS && mt__backward_names[op]) {
        unary_ctx u = {op, x};
        return into_out(mt_op_name(op), out, out == x, unary_oop, &u, result);
    }
    if (out) MT_TRY(mt__check_write(out, grad));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_unary(op, x, out, result);
    mt__grad_pop(prev);
    if (st || !grad || out || !mt__is_differentiable((*result)->dtype)) return st;
    mt_node *n;
    const char *name = mt__backward_names[op] ? mt__backward_names[op] : mt_op_name(op);
    st = mt__record(name, mt__table_backward, 1, &x, 1, result, &n);
    if (!st && n) {
        n->op = op;
        if (table_saves(n, 0)) st = mt__save(n, 0, x, 0);
        if (!st && table_saves(n, 1)) st = mt__save(n, 1, *result, 1);
    }
    if (st) MT_DROP(*result);
    return st;
}

/* the binary ops whose formulas need alpha, an overload's own saves or shared subexpressions */
static const char *const binary_names[MT_NUM_OPS] = {
    [MT_OP_ADD] = "AddBackward0", [MT_OP_SUB] = "SubBackward0", [MT_OP_DIV_TRUNC] = "DivBackward1",
    [MT_OP_DIV_FLOOR] = "DivBackward1", [MT_OP_REMAINDER] = "RemainderBackward0", [MT_OP_FMOD] = "FmodBackward0",
    [MT_OP_POW] = "PowBackward1", [MT_OP_MAXIMUM] = "MaximumBackward0", [MT_OP_MINIMUM] = "MinimumBackward0",
};

static const char *binary_name(int op) { return mt__backward_names[op] ? mt__backward_names[op] : binary_names[op]; }

static mt_status binary_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *a = NULL, *b = NULL;
    double alpha = n->s[0];
    switch (n->op) {
    case MT_OP_ADD:
        if (needs(n, 0)) GIVE(c, out, 0, g);
        if (needs(n, 1)) GIVE(c, out, 1, alpha == 1 ? g : BS(c, MT_OP_MUL, g, alpha));
        break;
    case MT_OP_SUB:
        if (needs(n, 0)) GIVE(c, out, 0, g);
        if (needs(n, 1)) GIVE(c, out, 1, BS(c, MT_OP_MUL, g, -alpha));
        break;
    case MT_OP_DIV_TRUNC: case MT_OP_DIV_FLOOR:
        for (int i = 0; i < 2; i++) if (needs(n, i)) GIVE(c, out, i, ZEROS(c, &n->in_meta[i]));
        break;
    case MT_OP_REMAINDER: case MT_OP_FMOD:
        if (needs(n, 0)) GIVE(c, out, 0, g);
        if (needs(n, 1)) GIVE(c, out, 1, B(c, MT_OP_MUL, U(c, MT_OP_NEG, g),
                                           B(c, n->op == MT_OP_REMAINDER ? MT_OP_DIV_FLOOR : MT_OP_DIV_TRUNC, OPND(c, n, 0), OPND(c, n, 1))));
        break;
    case MT_OP_POW: {
        a = OPND(c, n, 0), b = OPND(c, n, 1);
        if (n->iv[0] == 2 && a && !mt__is_complex(a->dtype)) { /* a real Python exponent: PyTorch's pow_backward */
            double e = (int)n->s[3] == MT_SCALAR_FLOAT ? n->s[1] : (double)n->iv[1];
            /* zeros for e == 0, else grad * (e * x.pow(e - 1)) with the Python-number pow (x.pow(1) a copy, x.pow(2)
             * x * x: the tensor-exponent pow called powf for each element, 1.7 ms for square's 1M floats) */
            if (needs(n, 0))
                GIVE(c, out, 0, e == 0 ? ZEROS(c, &n->in_meta[0])
                                       : B(c, MT_OP_MUL, g, BS(c, MT_OP_MUL, BS(c, MT_OP_POW, a, e - 1.0), e)));
            break;
        }
        mt_tensor *zero = SCALAR(c, 0.0);
        if (needs(n, 0)) { /* grad * conj(e * x^(e-1)), 0 where e == 0 (conj: complex only) */
            mt_tensor *d = U(c, MT_OP_CONJ, B(c, MT_OP_MUL, b, B(c, MT_OP_POW, a, BS(c, MT_OP_SUB, b, 1.0))));
            GIVE(c, out, 0, B(c, MT_OP_MUL, g, WHERE(c, BS(c, MT_OP_EQ, b, 0.0), zero, d)));
        }
        if (needs(n, 1)) { /* grad * conj(x^e * log(x)), 0 where x == 0 and real(e) >= 0 */
            mt_tensor *d = B(c, MT_OP_MUL, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, SAVED(c, n, 2))),
                             U(c, MT_OP_CONJ, U(c, MT_OP_LOG, a)));
            mt_tensor *mask = B(c, MT_OP_LOGICAL_AND, BS(c, MT_OP_EQ, a, 0.0), BS(c, MT_OP_GE, U(c, MT_OP_REAL, b), 0.0));
            GIVE(c, out, 1, WHERE(c, mask, zero, d));
        }
        break;
    }
    case MT_OP_MAXIMUM: case MT_OP_MINIMUM: {
        a = OPND(c, n, 0), b = OPND(c, n, 1);
        mt_tensor *zero = SCALAR(c, 0.0), *half = WHERE(c, B(c, MT_OP_EQ, a, b), BS(c, MT_OP_MUL, g, 0.5), g);
        int lose0 = n->op == MT_OP_MAXIMUM ? MT_OP_LT : MT_OP_GT, lose1 = n->op == MT_OP_MAXIMUM ? MT_OP_GT : MT_OP_LT;
        if (needs(n, 0)) GIVE(c, out, 0, WHERE(c, B(c, lose0, a, b), zero, half));
        if (needs(n, 1)) GIVE(c, out, 1, WHERE(c, B(c, lose1, a, b), zero, half));
        break;
    }
    default: return no_formula(n, grads, out);
    }
    return END(c, out, 2);
}

/* whether a binary node saves slot k (0 self, 1 other, 2 result) */
static int binary_saves(mt_node *n, int k) {
    if (mt__backward_names[n->op]) return table_saves(n, k);
    int op = n->op;
    return op == MT_OP_POW || (k < 2 && (op == MT_OP_REMAINDER || op == MT_OP_FMOD || op == MT_OP_MAXIMUM || op == MT_OP_MINIMUM));
}

/* record a binary op; scalar_pos: 0 none, 1 a is a Python scalar, 2 b is */
static mt_status record_binary(int op, mt_tensor *a, mt_tensor *b, int scalar_pos, double f, int64_t i, int kind,
                               double alpha, mt_tensor **result) {
    if (!mt__is_differentiable((*result)->dtype)) return MT_OK;
    mt_tensor *ins[2] = {scalar_pos == 1 ? NULL : a, scalar_pos == 2 ? NULL : b};
    mt_node *n;
    const char *name = binary_name(op) ? binary_name(op) : mt_op_name(op);
    /* PyTorch names the Tensor-Scalar overloads apart */
    if (op == MT_OP_REMAINDER) name = scalar_pos == 2 ? "RemainderBackward0" : "RemainderBackward1";
    if (op == MT_OP_FMOD) name = scalar_pos == 2 ? "FmodBackward0" : "FmodBackward1";
    if (op == MT_OP_COPYSIGN && scalar_pos == 2) name = "CopysignBackward1";
    if (op == MT_OP_XLOGY && scalar_pos) name = scalar_pos == 1 ? "XlogyBackward1" : "XlogyBackward2";
    if (op == MT_OP_POW) name = scalar_pos == 2 ? "PowBackward0" : scalar_pos == 1 ? "PowBackward2" : "PowBackward1";
    if (op == MT_OP_SUB && scalar_pos == 1) name = "RsubBackward1";
    if (op == MT_OP_DIV_TRUNC || op == MT_OP_DIV_FLOOR) name = "DivBackward2";
    MT_TRY(mt__record(name, binary_names[op] ? binary_backward : mt__table_backward, 2, ins, 1, result, &n));
    if (!n) return MT_OK;
    n->op = op;
    n->s[0] = alpha;
    n->iv[0] = scalar_pos;
    n->s[1] = f, n->iv[1] = i, n->s[3] = kind; /* the int scalar whole: a double drops bits past 2^53 */
    if (binary_saves(n, 0)) MT_TRY(mt__save(n, 0, ins[0], 0));
    if (binary_saves(n, 1)) MT_TRY(mt__save(n, 1, ins[1], 0));
    if (binary_saves(n, 2)) MT_TRY(mt__save(n, 2, *result, 1));
    return MT_OK;
}

typedef struct { int op; mt_tensor *a, *b; double f; int64_t i; int kind, reflected; double alpha; int scalar; } binary_ctx;
static mt_status binary_oop(void *p, mt_tensor **r) {
    binary_ctx *u = p;
    if (u->scalar) return mt_binary_scalar(u->op, u->a, u->f, u->i, u->kind, u->reflected, u->alpha, NULL, r);
    return mt_binary(u->op, u->a, u->b, u->alpha, NULL, r);
}

mt_status mt_binary(int op, mt_tensor *a, mt_tensor *b, double alpha, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE_KIND(mt_op_name(op), out && out == a ? MT_PROF_INPLACE : MT_PROF_OP, a, b);
    int grad = mt__grad_enabled() && (mt__requires_grad(a) || mt__requires_grad(b) || (out && mt__requires_grad(out)));
    if (grad && out && (unsigned)op < MT_NUM_OPS && binary_name(op)) {
        binary_ctx u = {op, a, b, 0, 0, 0, 0, alpha, 0};
        return into_out(mt_op_name(op), out, out == a || out == b, binary_oop, &u, result);
    }
    if (out) MT_TRY(mt__check_write(out, grad));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_binary(op, a, b, alpha, out, result);
    mt__grad_pop(prev);
    if (st || !grad || out) return st;
    st = record_binary(op, a, b, 0, 0, 0, 0, alpha, result);
    if (st) MT_DROP(*result);
    return st;
}

mt_status mt_binary_scalar(int op, mt_tensor *a, double f, int64_t i, int kind, int reflected, double alpha,
                           mt_tensor *out, mt_tensor **result) {
    MT_PROFILE_KIND(mt_op_name(op), out && out == a ? MT_PROF_INPLACE : MT_PROF_OP, a);
    int grad = mt__grad_enabled() && (mt__requires_grad(a) || (out && mt__requires_grad(out)));
    if (grad && out && (unsigned)op < MT_NUM_OPS && binary_name(op)) {
        binary_ctx u = {op, a, NULL, f, i, kind, reflected, alpha, 1};
        return into_out(mt_op_name(op), out, out == a, binary_oop, &u, result);
    }
    if (out) MT_TRY(mt__check_write(out, grad));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_binary_scalar(op, a, f, i, kind, reflected, alpha, out, result);
    mt__grad_pop(prev);
    if (st || !grad || out) return st;
    st = reflected ? record_binary(op, NULL, a, 1, f, i, kind, alpha, result)
                   : record_binary(op, a, NULL, 2, f, i, kind, alpha, result);
    if (st) MT_DROP(*result);
    return st;
}

static mt_status ternary_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *zero = SCALAR(c, 0.0);
    double v = n->s[0];
    switch (n->op) {
    case MT_OP_WHERE: { /* inputs: cond, a, b */
        mt_tensor *cond = SAVED(c, n, 0);
        if (needs(n, 1)) GIVE(c, out, 1, WHERE(c, cond, g, zero));
        if (needs(n, 2)) GIVE(c, out, 2, WHERE(c, cond, zero, g));
        break;
    }
    case MT_OP_CLAMP: { /* inputs: x, lo, hi; iv[1]: which bounds were given */
        mt_tensor *x = SAVED(c, n, 0), *lo = n->iv[1] & 1 ? SAVED(c, n, 1) : NULL, *hi = n->iv[1] & 2 ? SAVED(c, n, 2) : NULL;
        mt_tensor *in = NULL;
        if (lo) in = B(c, MT_OP_GE, x, lo);
        if (hi) in = in ? B(c, MT_OP_LOGICAL_AND, in, B(c, MT_OP_LE, x, hi)) : B(c, MT_OP_LE, x, hi);
        if (needs(n, 0)) GIVE(c, out, 0, WHERE(c, in, g, zero));
        /* with both bounds, min > max makes the result max (PyTorch's clamp_backward_min_max) */
        mt_tensor *lo_mask = lo ? B(c, MT_OP_LT, x, lo) : NULL, *hi_mask = hi ? B(c, MT_OP_GT, x, hi) : NULL;
        if (lo && hi) {
            lo_mask = B(c, MT_OP_LOGICAL_AND, lo_mask, B(c, MT_OP_LT, lo, hi));
            hi_mask = B(c, MT_OP_LOGICAL_OR, hi_mask, B(c, MT_OP_LT, hi, lo));
        }
        if (needs(n, 1) && lo) GIVE(c, out, 1, WHERE(c, lo_mask, g, zero));
        if (needs(n, 2) && hi) GIVE(c, out, 2, WHERE(c, hi_mask, g, zero));
        break;
    }
    case MT_OP_LERP: { /* start, end, weight; complex: the conjugate factors (PyTorch's formulas) */
        if (n->iv[2]) { /* a Python number weight: PyTorch's formula takes it as a double */
            if (needs(n, 0)) GIVE(c, out, 0, BS(c, MT_OP_MUL, g, 1.0 - n->s[1]));
            if (needs(n, 1)) GIVE(c, out, 1, BS(c, MT_OP_MUL, g, n->s[1]));
            break;
        }
        mt_tensor *w = U(c, MT_OP_CONJ, SAVED(c, n, 2));
        if (needs(n, 0)) GIVE(c, out, 0, B(c, MT_OP_MUL, g, SB(c, MT_OP_SUB, 1.0, w)));
        if (needs(n, 1)) GIVE(c, out, 1, B(c, MT_OP_MUL, g, w));
        if (needs(n, 2))
            GIVE(c, out, 2, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, B(c, MT_OP_SUB, SAVED(c, n, 1), SAVED(c, n, 0)))));
        break;
    }
    case MT_OP_ADDCMUL:
        if (needs(n, 0)) GIVE(c, out, 0, g);
        if (needs(n, 1)) GIVE(c, out, 1, BS(c, MT_OP_MUL, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, SAVED(c, n, 2))), v));
        if (needs(n, 2)) GIVE(c, out, 2, BS(c, MT_OP_MUL, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, SAVED(c, n, 1))), v));
        break;
    case MT_OP_ADDCDIV: {
        mt_tensor *t1 = U(c, MT_OP_CONJ, SAVED(c, n, 1)), *t2 = U(c, MT_OP_CONJ, SAVED(c, n, 2));
        if (needs(n, 0)) GIVE(c, out, 0, g);
        if (needs(n, 1)) GIVE(c, out, 1, BS(c, MT_OP_MUL, B(c, MT_OP_DIV, g, t2), v));
        if (needs(n, 2)) GIVE(c, out, 2, BS(c, MT_OP_MUL, B(c, MT_OP_DIV, B(c, MT_OP_MUL, g, t1), B(c, MT_OP_MUL, t2, t2)), -v));
        break;
    }
    case MT_OP_MASKED_FILL: { /* self, mask, value */
        mt_tensor *mask = SAVED(c, n, 1);
        if (needs(n, 0)) GIVE(c, out, 0, WHERE(c, mask, zero, g));
        if (needs(n, 2)) {
            mt_tensor *r = NULL, *m = WHERE(c, mask, g, zero);
            if (m) KEEP(c, mt_reduce(MT_RED_SUM, m, 0, NULL, 0, -1, NULL, &r), r);
            GIVE(c, out, 2, r);
        }
        break;
    }
    case MT_OP_NAN_TO_NUM:
        if (needs(n, 0)) GIVE(c, out, 0, WHERE(c, U(c, MT_OP_ISFINITE, SAVED(c, n, 0)), g, zero));
        break;
    default: return no_formula(n, grads, out);
    }
    return END(c, out, 3);
}

static const char *ternary_name(int op) {
    switch (op) {
    case MT_OP_WHERE: return "WhereBackward0";
    case MT_OP_CLAMP: return "ClampBackward0";
    case MT_OP_LERP: return "LerpBackward1";
    case MT_OP_ADDCMUL: return "AddcmulBackward0";
    case MT_OP_ADDCDIV: return "AddcdivBackward0";
    case MT_OP_MASKED_FILL: return "MaskedFillBackward1";
    case MT_OP_NAN_TO_NUM: return "NanToNumBackward0";
    }
    return NULL;
}

typedef struct { int op; mt_tensor *a, *b, *c; double s; } ternary_ctx;
static mt_status ternary_oop(void *p, mt_tensor **r) {
    ternary_ctx *u = p;
    return mt_ternary(u->op, u->a, u->b, u->c, u->s, NULL, r);
}

mt_status mt_ternary(int op, mt_tensor *a, mt_tensor *b, mt_tensor *c, double s, mt_tensor *out,
                     mt_tensor **result) {
    MT_PROFILE_KIND(mt_op_name(op), out && out == a ? MT_PROF_INPLACE : MT_PROF_OP, a, b, c);
    int grad = mt__grad_enabled() && (mt__requires_grad(a) || mt__requires_grad(b) || mt__requires_grad(c) ||
                                      (out && mt__requires_grad(out)));
    if (grad && out && ternary_name(op)) {
        ternary_ctx u = {op, a, b, c, s};
        return into_out(mt_op_name(op), out, out == a || out == b || out == c, ternary_oop, &u, result);
    }
    if (out) MT_TRY(mt__check_write(out, grad));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_ternary(op, a, b, c, s, out, result);
    mt__grad_pop(prev);
    if (st || !grad || out || !mt__is_differentiable((*result)->dtype)) return st;
    mt_tensor *ins[3] = {a, b, c};
    if (op == MT_OP_NAN_TO_NUM) ins[1] = ins[2] = NULL;
    mt_node *n;
    const char *name = ternary_name(op) ? ternary_name(op) : mt_op_name(op);
    /* Scalar overloads have their own names */
    if (op == MT_OP_CLAMP && (!b || b->wrapped) && (!c || c->wrapped)) name = "ClampBackward1";
    if (op == MT_OP_MASKED_FILL && c->wrapped) name = "MaskedFillBackward0";
    if (op == MT_OP_LERP && c->wrapped) name = "LerpBackward0";
    st = mt__record(name, ternary_name(op) ? ternary_backward : no_formula, 3, ins, 1, result, &n);
    if (!st && n) {
        n->op = op;
        n->s[0] = s;
        n->iv[1] = (b ? 1 : 0) | (c ? 2 : 0);
        if (op == MT_OP_LERP && c->wrapped && c->dtype == MT_F64) n->iv[2] = 1, n->s[1] = *(double *)mt_tensor_data_ptr(c);
        for (int k = 0; k < 3 && !st; k++) st = mt__save(n, k, ins[k], 0);
    }
    if (st) MT_DROP(*result);
    return st;
}

/* ---- reductions ------------------------------------------------------------- */

/* g (reduced over iv[2..] dims, keepdim iv[1]) reshaped so it broadcasts against the input */
static mt_tensor *KEEPDIM(F *c, mt_node *n, mt_tensor *g) {
    if (n->iv[1] || !g) return g;
    const mt_meta *m = &n->in_meta[0];
    mt_meta k = *m;
    int reduced[MT_MAX_DIMS] = {0};
    if (n->niv == 0) for (int d = 0; d < m->ndim; d++) reduced[d] = 1;
    for (int i = 0; i < n->niv; i++) { int64_t d = n->iv[2 + i]; if (d < 0) d += m->ndim; if (d >= 0 && d < m->ndim) reduced[d] = 1; }
    for (int d = 0; d < m->ndim; d++) if (reduced[d]) k.sizes[d] = 1;
    return RESHAPE(c, g, &k);
}

static mt_tensor *EXPAND_TO(F *c, mt_tensor *g, const mt_meta *m) {
    mt_tensor *r = NULL;
    return OK2(g, 1) ? KEEP(c, mt_expand(g, m->ndim, m->sizes, &r), r) : NULL;
}

static mt_status reduce_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = KEEPDIM(c, n, grads[0]);
    const mt_meta *m = &n->in_meta[0];
    switch (n->op) {
    case MT_RED_SUM: GIVE(c, out, 0, EXPAND_TO(c, g, m)); break;
    case MT_RED_MEAN: {
        int64_t count = 1;
        for (int d = 0; d < m->ndim; d++) count *= m->sizes[d];
        int64_t kept = 1;
        if (g) for (int d = 0; d < g->ndim; d++) kept *= g->sizes[d];
        GIVE(c, out, 0, EXPAND_TO(c, BS(c, MT_OP_DIV, g, (double)(kept ? count / kept : 1)), m));
        break;
    }
    case MT_RED_AMAX: case MT_RED_AMIN: { /* shared evenly among the extremes */
        mt_tensor *x = SAVED(c, n, 0), *y = KEEPDIM(c, n, SAVED(c, n, 1));
        mt_tensor *mask = B(c, MT_OP_EQ, x, y);
        mt_tensor *maskf = NULL, *cnt = NULL;
        if (mask) maskf = KEEP(c, mt_to_dtype(mask, m->dtype, 0, &maskf), maskf);
        if (maskf) {
            int64_t dims[MT_MAX_DIMS];
            int nd = n->niv;
            for (int i = 0; i < nd; i++) dims[i] = n->iv[2 + i];
            cnt = KEEP(c, mt_reduce(MT_RED_SUM, maskf, nd, dims, 1, -1, NULL, &cnt), cnt);
        }
        GIVE(c, out, 0, B(c, MT_OP_DIV, B(c, MT_OP_MUL, maskf, g), cnt));
        break;
    }
    default: return no_formula(n, grads, out);
    }
    return END(c, out, 1);
}

mt_status mt_reduce(int op, mt_tensor *x, int ndims, const int64_t *dims, int keepdim, int dtype, mt_tensor *out,
                    mt_tensor **result) {
    MT_PROFILE(MT_PROF_NAME(mt__names_reduce, op), x);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    if (grad && out) return out_arg_error("sum");
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_reduce(op, x, ndims, dims, keepdim, dtype, out, result);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_differentiable((*result)->dtype)) return st;
    static const char *names[] = {"SumBackward1", "ProdBackward1", "MeanBackward1", "AmaxBackward0", "AminBackward0",
                                  NULL, NULL, "NansumBackward0"};
    if (op > MT_RED_NANSUM || !names[op]) return MT_OK; /* all/any/count_nonzero: not differentiable */
    const char *name = ndims <= 0 && (op == MT_RED_SUM || op == MT_RED_MEAN || op == MT_RED_PROD)
                           ? (op == MT_RED_SUM ? "SumBackward0" : op == MT_RED_MEAN ? "MeanBackward0" : "ProdBackward0")
                           : names[op];
    /* prod's and nansum's formulas live in formulas_reduce.c */
    mt_backward_fn fn = op == MT_RED_PROD ? mt__prod_backward : op == MT_RED_NANSUM ? mt__nansum_backward : reduce_backward;
    mt_node *n;
    st = mt__record(name, fn, 1, &x, 1, result, &n);
    if (!st && n) {
        n->op = op;
        n->iv[1] = keepdim;
        n->niv = ndims > 0 ? ndims : 0;
        for (int i = 0; i < n->niv && i < MT_MAX_DIMS; i++) n->iv[2 + i] = dims[i];
        if (op == MT_RED_AMAX || op == MT_RED_AMIN || op == MT_RED_PROD || op == MT_RED_NANSUM) {
            st = mt__save(n, 0, x, 0);
            if (!st && op != MT_RED_NANSUM) st = mt__save(n, 1, *result, 1);
        }
    }
    if (st) MT_DROP(*result);
    return st;
}

/* max/min along a dim: the gradient goes to the position of the index */
static mt_status max_dim_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    const mt_meta *m = &n->in_meta[0];
    mt_tensor *g = KEEPDIM(c, n, grads[0]), *idx = KEEPDIM(c, n, SAVED(c, n, 0));
    int64_t dim = n->iv[2];
    mt_tensor *ar = NULL;
    if (!c->st) ar = KEEP(c, mt_arange(0, (double)(m->ndim ? m->sizes[dim] : 1), 1, MT_I64, MT_CPU, &ar), ar);
    mt_meta shape = {.ndim = m->ndim, .dtype = MT_I64};
    for (int d = 0; d < m->ndim; d++) shape.sizes[d] = d == dim ? m->sizes[d] : 1;
    mt_tensor *mask = B(c, MT_OP_EQ, RESHAPE(c, ar, &shape), idx);
    GIVE(c, out, 0, WHERE(c, mask, g, SCALAR(c, 0.0)));
    return END(c, out, 1);
}

mt_status mt_max_dim(int is_min, mt_tensor *x, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices) {
    MT_PROFILE(is_min ? "min" : "max", x);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_max_dim(is_min, x, dim, keepdim, values, indices);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    st = mt__record(is_min ? "MinBackward0" : "MaxBackward0", max_dim_backward, 1, &x, 1, values, &n);
    if (!st && n) {
        n->iv[1] = keepdim;
        n->niv = 1;
        int64_t d = dim;
        mt__wrap_dim(&d, x->ndim);
        n->iv[2] = d;
        st = mt__save(n, 0, *indices, 0);
    }
    if (st) { MT_DROP(*values); MT_DROP(*indices); }
    return st;
}

/* ---- matrix products ---------------------------------------------------------- */

/* inputs: [self,] a, b; s[0] beta, s[1] alpha; iv[0]: has self */
static int col_major(const mt_tensor *t) {
    return t->ndim == 2 && t->strides[0] == 1 && t->strides[1] == t->sizes[0];
}

static mt_status gemm_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0];
    int o = (int)n->iv[0];
    double beta = n->s[0], alpha = n->s[1];
    if (o && needs(n, 0)) GIVE(c, out, 0, beta == 1 ? g : BS(c, MT_OP_MUL, g, beta));
    /* PyTorch's mm_mat1/mat2_backward: a column-major operand (a transposed weight) gets its
     * gradient as the transpose of a row-major product, so it is in the operand's own layout */
    if (needs(n, o)) {
        mt_tensor *b = U(c, MT_OP_CONJ, SAVED(c, n, 1)); /* complex: grad @ b^H (conj: identity on reals) */
        mt_tensor *r = n->iv[1] ? TR(c, MM(c, b, TR(c, g))) : MM(c, g, TR(c, b));
        GIVE(c, out, o, alpha == 1 ? r : BS(c, MT_OP_MUL, r, alpha));
    }
    if (needs(n, o + 1)) {
        mt_tensor *a = U(c, MT_OP_CONJ, SAVED(c, n, 0));
        mt_tensor *r = n->iv[2] ? TR(c, MM(c, TR(c, g), a)) : MM(c, TR(c, a), g);
        GIVE(c, out, o + 1, alpha == 1 ? r : BS(c, MT_OP_MUL, r, alpha));
    }
    return END(c, out, 3);
}

static mt_status record_gemm(const char *name, mt_tensor *self, mt_tensor *a, mt_tensor *b, double beta, double alpha,
                             mt_tensor **result) {
    mt_tensor *ins[3] = {self, a, b};
    mt_node *n;
    int o = self ? 1 : 0;
    MT_TRY(mt__record(name, gemm_backward, 2 + o, ins + (1 - o), 1, result, &n));
    if (!n) return MT_OK;
    n->iv[0] = o;
    n->iv[1] = col_major(a), n->iv[2] = col_major(b); /* the operands' layouts, as PyTorch records them */
    n->s[0] = beta;
    n->s[1] = alpha;
    MT_TRY(mt__save(n, 0, a, 0));
    return mt__save(n, 1, b, 0);
}

mt_status mt_mm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE("mm", a, b);
    int grad = mt__grad_enabled() && (mt__requires_grad(a) || mt__requires_grad(b));
    if (grad && out) return out_arg_error("mm");
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_mm(a, b, out, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    if ((st = record_gemm("MmBackward0", NULL, a, b, 0, 1, result))) MT_DROP(*result);
    return st;
}

mt_status mt_bmm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE("bmm", a, b);
    int grad = mt__grad_enabled() && (mt__requires_grad(a) || mt__requires_grad(b));
    if (grad && out) return out_arg_error("bmm");
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_bmm(a, b, out, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    if ((st = record_gemm("BmmBackward0", NULL, a, b, 0, 1, result))) MT_DROP(*result);
    return st;
}

mt_status mt_addmm(mt_tensor *self, mt_tensor *m1, mt_tensor *m2, double beta, double alpha, mt_tensor *out,
                   mt_tensor **result) {
    MT_PROFILE("addmm", self, m1, m2);
    int grad = mt__grad_enabled() && (mt__requires_grad(self) || mt__requires_grad(m1) || mt__requires_grad(m2));
    if (grad && out) return out_arg_error("addmm");
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_addmm(self, m1, m2, beta, alpha, out, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    if ((st = record_gemm("AddmmBackward0", self, m1, m2, beta, alpha, result))) MT_DROP(*result);
    return st;
}

mt_status mt_baddbmm(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha, mt_tensor *out,
                     mt_tensor **result) {
    MT_PROFILE("baddbmm", self, b1, b2);
    int grad = mt__grad_enabled() && (mt__requires_grad(self) || mt__requires_grad(b1) || mt__requires_grad(b2));
    if (grad && out) return out_arg_error("baddbmm");
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_baddbmm(self, b1, b2, beta, alpha, out, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    if ((st = record_gemm("BaddbmmBackward0", self, b1, b2, beta, alpha, result))) MT_DROP(*result);
    return st;
}

/* ---- views and copies --------------------------------------------------------- */

enum { V_RESHAPE, V_TRANSPOSE, V_PERMUTE, V_EXPAND, V_SELECT, V_SLICE, V_UNFOLD, V_NONE };

/* unfold's backward: window i's element j came from position i*step + j along dim, so the
 * gradient (windows at dim, elements last) moves its last dim after dim, flattens the two and
 * index_adds into zeros at those positions (overlapping windows add up) */
static mt_tensor *unfold_backward(F *c, mt_tensor *g, const mt_meta *m, int64_t dim, int64_t size, int64_t step) {
    if (!OK2(g, 1)) return NULL;
    int nd = m->ndim, d0 = nd ? (int)dim : 0;
    int64_t perm[MT_MAX_DIMS + 1], nw = g->sizes[d0], at = 0;
    for (int d = 0; d <= nd; d++) perm[d] = d <= d0 ? d : d == d0 + 1 ? nd : d - 1;
    mt_meta flat = *m;
    flat.ndim = nd ? nd : 1;
    flat.sizes[d0] = nw * size;
    mt_meta im = {1, MT_I64, {nw * size}};
    mt_tensor *idx = ZEROS(c, &im), *p = NULL, *r = NULL;
    if (c->st) return NULL;
    int64_t *ix = mt_tensor_data_ptr(idx);
    for (int64_t i = 0; i < nw; i++)
        for (int64_t j = 0; j < size; j++) ix[at++] = i * step + j;
    p = KEEP(c, mt_permute(g, nd + 1, perm, &p), p);
    mt_tensor *src = RESHAPE(c, p, &flat);
    mt_meta zm = *m;
    zm.ndim = flat.ndim;
    if (!nd) zm.sizes[0] = 1;
    mt_tensor *z = ZEROS(c, &zm);
    if (OK2(src, z)) r = KEEP(c, mt_index_op(MT_INDEX_ADD, z, d0, idx, src, 1, 0, &r), r);
    return nd ? r : RESHAPE(c, r, m);
}


static mt_status view_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0];
    const mt_meta *m = &n->in_meta[0];
    switch (n->op) {
    case V_RESHAPE: GIVE(c, out, 0, RESHAPE(c, g, m)); break;
    case V_TRANSPOSE: {
        mt_tensor *r = NULL;
        if (!c->st) r = KEEP(c, mt_transpose(g, n->iv[0], n->iv[1], &r), r);
        GIVE(c, out, 0, r);
        break;
    }
    case V_PERMUTE: {
        int64_t inv[MT_MAX_DIMS];
        for (int i = 0; i < m->ndim; i++) inv[n->iv[i]] = i;
        mt_tensor *r = NULL;
        if (!c->st) r = KEEP(c, mt_permute(g, m->ndim, inv, &r), r);
        GIVE(c, out, 0, r);
        break;
    }
    case V_EXPAND: GIVE(c, out, 0, g); break; /* the engine sums back to the input's shape */
    case V_UNFOLD: GIVE(c, out, 0, unfold_backward(c, g, m, n->iv[0], n->iv[1], n->iv[2])); break;
    case V_SELECT: case V_SLICE: {
        mt_tensor *z = ZEROS(c, m), *v = NULL;
        if (!c->st) {
            mt_status st = n->op == V_SELECT ? mt__impl_select(z, n->iv[0], n->iv[1], &v)
                                             : mt__impl_slice(z, n->iv[0], n->iv[1], n->iv[2], n->iv[3], &v);
            COPY_INTO_VIEW(c, z, keep(c, st, v), g);
        }
        GIVE(c, out, 0, z);
        break;
    }
    default: return no_formula(n, grads, out);
    }
    return END(c, out, 1);
}

/* Record a view (its base is tracked by mt__track_view, for in-place writes into it). */
static mt_status record_view(const char *name, int kind, mt_tensor *x, mt_tensor **result, const int64_t *args, int nargs) {
    mt_node *n;
    mt_tensor *r = *result;
    if (r == x) return MT_OK;
    MT_TRY(mt__record(name, kind == V_NONE ? no_formula : view_backward, 1, &x, 1, result, &n));
    if (!n) return MT_OK;
    n->op = kind;
    for (int i = 0; i < nargs && i < MT_MAX_DIMS; i++) n->iv[i] = args[i];
    return MT_OK;
}

#define VIEW_WRAPPER(CALL, NAME, KIND, ARGS, NARGS)                                         \
    int grad = mt__grad_enabled() && mt__requires_grad(t);                                 \
    int prev = mt__grad_push(0);                                                           \
    mt_status st = CALL;                                                                   \
    mt__grad_pop(prev);                                                                    \
    if (!st) mt__track_view(*out, t);                                                      \
    if (st || !grad) return st;                                                            \
    if ((st = record_view(NAME, KIND, t, out, ARGS, NARGS))) MT_DROP(*out);      \
    return st;

mt_status mt_as_strided(mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, mt_tensor **out) {
    MT_PROFILE("as_strided", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_as_strided(t, ndim, sizes, strides, offset, out);
    mt__grad_pop(prev);
    if (!st) mt__track_view(*out, t);
    if (!st && grad && *out != t && (st = mt__record_as_strided(t, *out))) MT_DROP(*out);
    return st;
}
mt_status mt_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    MT_PROFILE("view", t);
    VIEW_WRAPPER(mt__impl_view(t, ndim, sizes, out), "ViewBackward0", V_RESHAPE, NULL, 0)
}
mt_status mt_reshape(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    MT_PROFILE("reshape", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_reshape(t, ndim, sizes, out);
    mt__grad_pop(prev);
    if (!st) mt__track_view(*out, t);
    if (st || !grad) return st;
    int is_view = (*out)->storage == t->storage;
    if ((st = record_view(is_view ? "ViewBackward0" : "UnsafeViewBackward0", V_RESHAPE, t, out, NULL, 0)))
        MT_DROP(*out);
    return st;
}
mt_status mt_transpose(mt_tensor *t, int64_t d0, int64_t d1, mt_tensor **out) {
    MT_PROFILE("transpose", t);
    int64_t args[2] = {d0, d1};
    VIEW_WRAPPER(mt__impl_transpose(t, d0, d1, out), "TransposeBackward0", V_TRANSPOSE, args, 2)
}
mt_status mt_permute(mt_tensor *t, int ndim, const int64_t *dims, mt_tensor **out) {
    MT_PROFILE("permute", t);
    int64_t args[MT_MAX_DIMS];
    for (int i = 0; i < ndim && i < MT_MAX_DIMS; i++) { args[i] = dims[i] < 0 ? dims[i] + ndim : dims[i]; }
    VIEW_WRAPPER(mt__impl_permute(t, ndim, dims, out), "PermuteBackward0", V_PERMUTE, args, ndim)
}
mt_status mt_expand(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    MT_PROFILE("expand", t);
    VIEW_WRAPPER(mt__impl_expand(t, ndim, sizes, out), "ExpandBackward0", V_EXPAND, NULL, 0)
}
mt_status mt_squeeze(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out) {
    MT_PROFILE("squeeze", t);
    VIEW_WRAPPER(mt__impl_squeeze(t, ndims, dims, out), ndims < 0 ? "SqueezeBackward0" : "SqueezeBackward1", V_RESHAPE, NULL, 0)
}
mt_status mt_unsqueeze(mt_tensor *t, int64_t dim, mt_tensor **out) {
    MT_PROFILE("unsqueeze", t);
    VIEW_WRAPPER(mt__impl_unsqueeze(t, dim, out), "UnsqueezeBackward0", V_RESHAPE, NULL, 0)
}
mt_status mt_select(mt_tensor *t, int64_t dim, int64_t index, mt_tensor **out) {
    MT_PROFILE("select", t);
    int64_t d = dim, args[2] = {dim, index};
    if (t->ndim && !mt__wrap_dim(&d, t->ndim)) /* a bad dim: the kernel reports it */
        args[0] = d, args[1] = index < 0 ? index + t->sizes[d] : index;
    VIEW_WRAPPER(mt__impl_select(t, dim, index, out), "SelectBackward0", V_SELECT, args, 2)
}
mt_status mt_slice(mt_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step, mt_tensor **out) {
    MT_PROFILE("slice", t);
    int64_t d = dim, args[4];
    if (t->ndim) mt__wrap_dim(&d, t->ndim);
    args[0] = d, args[1] = start, args[2] = end, args[3] = step;
    VIEW_WRAPPER(mt__impl_slice(t, dim, start, end, step, out), "SliceBackward0", V_SLICE, args, 4)
}
mt_status mt_unfold(mt_tensor *t, int64_t dim, int64_t size, int64_t step, mt_tensor **out) {
    MT_PROFILE("unfold", t);
    int64_t args[3] = {dim < 0 ? dim + (t->ndim ? t->ndim : 1) : dim, size, step};
    VIEW_WRAPPER(mt__impl_unfold(t, dim, size, step, out), "UnfoldBackward0", V_UNFOLD, args, 3)
}

static mt_status pass_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    (void)n;
    mt_tensor_retain(grads[0]);
    out[0] = grads[0]; /* the engine casts back to the input's dtype */
    return MT_OK;
}

static mt_status record_copy(const char *name, mt_tensor *t, mt_tensor **out) {
    if (*out == t) return MT_OK; /* no copy was made: the same tensor, same history */
    mt_node *n;
    return mt__record(name, pass_backward, 1, &t, 1, out, &n);
}

mt_status mt_clone(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("clone", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_clone(t, out);
    mt__grad_pop(prev);
    if (!st && grad && (st = record_copy("CloneBackward0", t, out))) MT_DROP(*out);
    return st;
}
mt_status mt_contiguous(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("contiguous", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_contiguous(t, out);
    mt__grad_pop(prev);
    if (!st && grad && (st = record_copy("CloneBackward0", t, out))) MT_DROP(*out);
    return st;
}
mt_status mt_to_dtype(mt_tensor *t, int dtype, int copy, mt_tensor **out) {
    MT_PROFILE("to", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t) && mt__is_differentiable(dtype);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_to_dtype(t, dtype, copy, out);
    mt__grad_pop(prev);
    if (!st && grad && (st = record_copy("ToCopyBackward0", t, out))) MT_DROP(*out);
    return st;
}

/* The index tensors an advanced-indexing node keeps, with their versions: written in place before the backward,
 * it raises PyTorch's error (check_indices), as PyTorch's saved indices do. */
static void keep_indices(mt_node *n, int nidx, mt_tensor *const *idx) {
    n->nindex = nidx < MT_MAX_DIMS ? nidx : MT_MAX_DIMS;
    for (int i = 0; i < n->nindex; i++) {
        if (idx[i]) mt_tensor_retain(idx[i]);
        n->index[i] = idx[i];
        n->index_version[i] = idx[i] ? mt_tensor_version(idx[i]) : 0;
    }
}

static mt_status check_indices(const mt_node *n) {
    for (int i = 0; i < n->nindex; i++) {
        const mt_tensor *t = n->index[i];
        if (!t || mt_tensor_version(t) == n->index_version[i]) continue;
        char type[40];  /* PyTorch names a boolean mask by its dispatch type, any other index as a tensor type */
        snprintf(type, sizeof type, t->dtype == MT_BOOL ? "CPU%sType" : "torch.%sTensor", mt_dtype_names[t->dtype]);
        return mt__modified_error(t, n->index_version[i], type, "");
    }
    return MT_OK;
}

/* copy_/fill_/index_put_ overwrite (part of) dst: inputs are (old dst, source) */
static mt_status overwrite_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0];
    if (n->op == 0) { /* copy_ / fill_: all of dst is replaced */
        if (needs(n, 0)) GIVE(c, out, 0, ZEROS(c, &n->in_meta[0]));
        if (needs(n, 1)) GIVE(c, out, 1, g);
    } else { /* index_put_: the indexed positions of dst are replaced (or added to) */
        if (!c->st) c->st = check_indices(n);
        if (needs(n, 0)) {
            if (n->iv[0]) GIVE(c, out, 0, g);
            else {
                mt_tensor *r = NULL, *z = NULL;
                if (!c->st) r = KEEP(c, mt__impl_clone(g, &r), r);
                if (!c->st) z = KEEP(c, mt_scalar_tensor(0, 0, MT_SCALAR_INT, g->dtype, 0, &z), z);
                if (!c->st) c->st = mt__impl_index_put_(r, n->nindex, n->index, z, 0);
                GIVE(c, out, 0, r);
            }
        }
        if (needs(n, 1)) {
            mt_tensor *r = NULL;
            if (!c->st) r = KEEP(c, mt_index(g, n->nindex, n->index, &r), r);
            GIVE(c, out, 1, r);
        }
    }
    return END(c, out, 2);
}

static mt_status record_overwrite(const char *name, mt_tensor *dst, mt_tensor *src, int kind, int accumulate, int nidx,
                                  mt_tensor *const *idx) {
    mt_tensor *ins[2] = {dst, src};
    mt_node *n;
    MT_TRY(mt__record(name, overwrite_backward, src ? 2 : 1, ins, 1, &dst, &n));
    if (!n) return MT_OK;
    n->op = kind;
    n->iv[0] = accumulate;
    keep_indices(n, nidx, idx);
    return mt__inplace_recorded(dst);
}

mt_status mt_copy_(mt_tensor *dst, mt_tensor *src) {
    MT_PROFILE("copy_", dst, src);
    int grad = mt__grad_enabled() && (mt__requires_grad(dst) || mt__requires_grad(src));
    MT_TRY(mt__check_write(dst, grad));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_copy_(dst, src);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_differentiable(dst->dtype)) return st;
    return record_overwrite("CopyBackwards", dst, src, 0, 0, 0, NULL);
}

mt_status mt_fill(mt_tensor *t, double f, int64_t i, int kind) {
    MT_PROFILE("fill_", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    MT_TRY(mt__check_write(t, grad));
    MT_TRY(mt__impl_fill(t, f, i, kind));
    return grad ? record_overwrite("FillBackward0", t, NULL, 0, 0, 0, NULL) : MT_OK;
}

static mt_status index_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    c->st = check_indices(n);
    mt_tensor *z = ZEROS(c, &n->in_meta[0]);
    if (!c->st) /* recorded (IndexPutBackward0, as PyTorch) when the gradient requires grad */
        c->st = mt__grad_enabled() && mt__requires_grad(grads[0]) ? mt_index_put_(z, n->nindex, n->index, grads[0], 1)
                                                                   : mt__impl_index_put_(z, n->nindex, n->index, grads[0], 1);
    GIVE(c, out, 0, z);
    return END(c, out, 1);
}

mt_status mt_index(mt_tensor *t, int nidx, mt_tensor *const *indices, mt_tensor **out) {
    MT_PROFILE("index", t);
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_index(t, nidx, indices, out);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    if (!(st = mt__record("IndexBackward0", index_backward, 1, &t, 1, out, &n)) && n) keep_indices(n, nidx, indices);
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_index_put_(mt_tensor *t, int nidx, mt_tensor *const *indices, mt_tensor *values, int accumulate) {
    MT_PROFILE("index_put_", t, values);
    int grad = mt__grad_enabled() && (mt__requires_grad(t) || mt__requires_grad(values));
    MT_TRY(mt__check_write(t, grad));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_index_put_(t, nidx, indices, values, accumulate);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_differentiable(t->dtype)) return st;
    return record_overwrite("IndexPutBackward0", t, values, 1, accumulate, nidx, indices);
}

mt_status mt__unsafe_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    int grad = mt__grad_enabled() && mt__requires_grad(t); /* not a view for autograd: no base */
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_view(t, ndim, sizes, out);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    if ((st = record_view("UnsafeViewBackward0", V_RESHAPE, t, out, NULL, 0))) MT_DROP(*out);
    return st;
}

/* dot(a, b) and mv(m, v): inputs saved in slots 0 and 1 */
static mt_status vec_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    /* complex: the conjugates of the saved operands (conj: the identity on reals) */
    mt_tensor *g = grads[0], *a = U(c, MT_OP_CONJ, SAVED(c, n, 0)), *b = U(c, MT_OP_CONJ, SAVED(c, n, 1));
    if (n->op == 0) { /* dot */
        if (needs(n, 0)) GIVE(c, out, 0, B(c, MT_OP_MUL, g, b));
        if (needs(n, 1)) GIVE(c, out, 1, B(c, MT_OP_MUL, g, a));
    } else { /* mv */
        if (needs(n, 0)) {
            mt_tensor *gc = NULL;
            if (g) gc = KEEP(c, mt_unsqueeze(g, 1, &gc), gc);
            GIVE(c, out, 0, B(c, MT_OP_MUL, gc, b));
        }
        if (needs(n, 1)) GIVE(c, out, 1, MM(c, TR(c, a), g));
    }
    return END(c, out, 2);
}

static mt_status record_vec(const char *name, int kind, mt_tensor *a, mt_tensor *b, mt_tensor **result) {
    mt_tensor *ins[2] = {a, b};
    mt_node *n;
    MT_TRY(mt__record(name, vec_backward, 2, ins, 1, result, &n));
    if (!n) return MT_OK;
    n->op = kind;
    MT_TRY(mt__save(n, 0, a, 0));
    return mt__save(n, 1, b, 0);
}

mt_status mt_dot(mt_tensor *a, mt_tensor *b, mt_tensor **result) {
    MT_PROFILE("dot", a, b);
    int grad = mt__grad_enabled() && (mt__requires_grad(a) || mt__requires_grad(b));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_dot(a, b, result);
    mt__grad_pop(prev);
    if (!st && grad && (st = record_vec("DotBackward0", 0, a, b, result))) MT_DROP(*result);
    return st;
}

mt_status mt_mv(mt_tensor *m, mt_tensor *v, mt_tensor **result) {
    MT_PROFILE("mv", m, v);
    int grad = mt__grad_enabled() && (mt__requires_grad(m) || mt__requires_grad(v));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_mv(m, v, result);
    mt__grad_pop(prev);
    if (!st && grad && (st = record_vec("MvBackward0", 1, m, v, result))) MT_DROP(*result);
    return st;
}
