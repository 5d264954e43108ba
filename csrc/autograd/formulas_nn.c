/* formulas_nn.c — the autograd layer of the NN kernels (see formula.h).
 *
 * Backward passes run the fused backward kernels (softmax_backward_data,
 * native_layer_norm_backward, <act>_backward). When the backward itself is
 * being recorded (create_graph, or a gradient that requires grad) they are
 * written with the public ops instead, so double backward works through them. */
#include "../kernels/cpu/nn.h"
#include "formula.h"

static mt_tensor *AND(F *c, mt_tensor *a, mt_tensor *b) { return B(c, MT_OP_LOGICAL_AND, a, b); }

/* the backward is recorded: grad mode is on and something it reads requires grad */
static int recorded(mt_tensor *a, mt_tensor *b, mt_tensor *d) {
    return mt__grad_enabled() && (mt__requires_grad(a) || mt__requires_grad(b) || mt__requires_grad(d));
}

/* ---- softmax / log_softmax ------------------------------------------------------- */

mt_status mt_softmax_backward(mt_tensor *grad, mt_tensor *output, int64_t dim, int log, mt_tensor **out) {
    MT_PROFILE(log ? "_log_softmax_backward_data" : "_softmax_backward_data", grad, output);
    if (!recorded(grad, output, NULL)) {
        int prev = mt__grad_push(0);
        mt_status st = mt__impl_softmax_backward(grad, output, dim, log, out);
        mt__grad_pop(prev);
        return st;
    }
    F c0 = {0}, *c = &c0;
    mt_tensor *r;
    if (log) /* g - exp(y) * sum(g) */
        r = B(c, MT_OP_SUB, grad, B(c, MT_OP_MUL, U(c, MT_OP_EXP, output), REDUCE(c, MT_RED_SUM, grad, 1, &dim, 1)));
    else /* y * (g - sum(g * y)) */
        r = B(c, MT_OP_MUL, output, B(c, MT_OP_SUB, grad, REDUCE(c, MT_RED_SUM, B(c, MT_OP_MUL, grad, output), 1, &dim, 1)));
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status softmax_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *y = SAVED(c, n, 0), *r = NULL;
    if (y) KEEP(c, mt_softmax_backward(grads[0], y, n->iv[0], (int)n->iv[1], &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

mt_status mt_softmax(mt_tensor *x, int64_t dim, int log, int dtype, mt_tensor **out) {
    MT_PROFILE(log ? "log_softmax" : "softmax", x);
    mt_tensor *conv = NULL;
    if (dtype >= 0 && dtype != x->dtype) { /* the conversion is recorded on its own (ToCopyBackward0) */
        MT_TRY(mt_to_dtype(x, dtype, 0, &conv));
        x = conv;
    }
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_softmax(x, dim, log, -1, out);
    mt__grad_pop(prev);
    if (!st && grad) {
        mt_node *n;
        st = mt__record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", softmax_bw, 1, &x, 1, out, &n);
        if (!st && n) {
            int64_t d = dim;
            mt__wrap_dim(&d, x->ndim);
            n->iv[0] = d;
            n->iv[1] = log;
            st = mt__save(n, 0, *out, 1);
        }
        if (st) MT_DROP(*out);
    }
    mt_tensor_release(conv);
    return st;
}

/* ---- layer_norm ---------------------------------------------------------------------- */

/* saved: 0 x, 1 weight, 2 bias, 3 mean, 4 rstd; iv[0] nnorm; s[0] eps */
static mt_status layer_norm_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *x = SAVED(c, n, 0), *w = has_saved(n, 1) ? SAVED(c, n, 1) : NULL;
    mt_tensor *b = has_saved(n, 2) ? SAVED(c, n, 2) : NULL;
    int nnorm = (int)n->iv[0], nd = x ? x->ndim : 0;
    int mask = (needs(n, 0) ? 1 : 0) | (needs(n, 1) ? 2 : 0) | (needs(n, 2) ? 4 : 0);
    if (c->st) return END(c, out, 3);
    if (!recorded(g, x, w)) {
        mt_tensor *r[3] = {NULL, NULL, NULL}, *mean = SAVED(c, n, 3), *rstd = SAVED(c, n, 4);
        if (c->st) return END(c, out, 3);
        int prev = mt__grad_push(0);
        c->st = mt__impl_layer_norm_backward(g, x, nnorm, mean, rstd, w, b, mask, &r[0], &r[1], &r[2]);
        mt__grad_pop(prev);
        for (int k = 0; k < 3; k++) {
            keep(c, c->st, r[k]);
            if (r[k]) GIVE(c, out, k, r[k]);
        }
        return END(c, out, 3);
    }
    /* with public ops: xhat from x itself, so the result is differentiable in x */
    int64_t nrm[MT_MAX_DIMS], outer[MT_MAX_DIMS];
    for (int i = 0; i < nnorm; i++) nrm[i] = nd - nnorm + i;
    for (int i = 0; i < nd - nnorm; i++) outer[i] = i;
    mt_tensor *xm = B(c, MT_OP_SUB, x, REDUCE(c, MT_RED_MEAN, x, nnorm, nrm, 1));
    mt_tensor *rstd = U(c, MT_OP_RSQRT, BS(c, MT_OP_ADD, REDUCE(c, MT_RED_MEAN, B(c, MT_OP_MUL, xm, xm), nnorm, nrm, 1), n->s[0]));
    mt_tensor *xhat = B(c, MT_OP_MUL, xm, rstd);
    if (mask & 1) {
        mt_tensor *gh = w ? B(c, MT_OP_MUL, g, w) : g;
        mt_tensor *t = B(c, MT_OP_SUB, gh, REDUCE(c, MT_RED_MEAN, gh, nnorm, nrm, 1));
        t = B(c, MT_OP_SUB, t, B(c, MT_OP_MUL, xhat, REDUCE(c, MT_RED_MEAN, B(c, MT_OP_MUL, gh, xhat), nnorm, nrm, 1)));
        GIVE(c, out, 0, B(c, MT_OP_MUL, rstd, t));
    }
    /* the weight/bias gradients: summed over the outer dims (none: the engine takes them as they are) */
    if (mask & 2) {
        mt_tensor *t = B(c, MT_OP_MUL, g, xhat);
        GIVE(c, out, 1, nd > nnorm ? REDUCE(c, MT_RED_SUM, t, nd - nnorm, outer, 0) : t);
    }
    if (mask & 4) GIVE(c, out, 2, nd > nnorm ? REDUCE(c, MT_RED_SUM, g, nd - nnorm, outer, 0) : g);
    return END(c, out, 3);
}

mt_status mt_layer_norm(mt_tensor *x, int nnorm, const int64_t *shape, mt_tensor *weight, mt_tensor *bias,
                        double eps, mt_tensor **out) {
    MT_PROFILE("layer_norm", x, weight, bias);
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || mt__requires_grad(weight) || mt__requires_grad(bias));
    mt_tensor *mean = NULL, *rstd = NULL;
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_layer_norm(x, nnorm, shape, weight, bias, eps, out, grad ? &mean : NULL,
                                       grad ? &rstd : NULL);
    mt__grad_pop(prev);
    if (!st && grad && mt__is_float(x->dtype)) {
        mt_tensor *ins[3] = {x, weight, bias};
        mt_node *n;
        st = mt__record("NativeLayerNormBackward0", layer_norm_bw, 3, ins, 1, out, &n);
        if (!st && n) {
            n->iv[0] = nnorm;
            n->s[0] = eps;
            for (int k = 0; k < 3 && !st; k++) st = mt__save(n, k, ins[k], 0);
            if (!st) st = mt__save(n, 3, mean, 0);
            if (!st) st = mt__save(n, 4, rstd, 0);
        }
        if (st) MT_DROP(*out);
    }
    mt_tensor_release(mean);
    mt_tensor_release(rstd);
    return st;
}

/* ---- activations ----------------------------------------------------------------------- */

/* f'(y) * g with public ops (differentiable in g and y) */
static mt_tensor *act_grad_ops(F *c, int act, mt_tensor *g, mt_tensor *y, double a, double b, double cc) {
    mt_tensor *zero = SCALAR(c, 0.0);
    switch (act) {
    case MT_ACT_RELU: return WHERE(c, BS(c, MT_OP_LE, y, 0.0), zero, g);
    case MT_ACT_HARDTANH:
        return WHERE(c, B(c, MT_OP_LOGICAL_OR, BS(c, MT_OP_LE, y, a), BS(c, MT_OP_GE, y, b)), zero, g);
    case MT_ACT_LEAKY_RELU: return WHERE(c, BS(c, MT_OP_GT, y, 0.0), g, BS(c, MT_OP_MUL, g, a));
    case MT_ACT_ELU: case MT_ACT_CELU:
        return WHERE(c, BS(c, MT_OP_LE, y, 0.0), B(c, MT_OP_MUL, BS(c, MT_OP_MUL, g, cc * a * b), U(c, MT_OP_EXP, BS(c, MT_OP_MUL, y, cc))),
                     BS(c, MT_OP_MUL, g, b));
    case MT_ACT_SILU: {
        mt_tensor *s = U(c, MT_OP_SIGMOID, y);
        return B(c, MT_OP_MUL, B(c, MT_OP_MUL, g, s), BS(c, MT_OP_ADD, B(c, MT_OP_MUL, y, SB(c, MT_OP_SUB, 1.0, s)), 1.0));
    }
    case MT_ACT_MISH: {
        mt_tensor *t = U(c, MT_OP_TANH, U(c, MT_OP_LOG1P, U(c, MT_OP_EXP, y)));
        mt_tensor *d = B(c, MT_OP_MUL, B(c, MT_OP_MUL, y, U(c, MT_OP_SIGMOID, y)), SB(c, MT_OP_SUB, 1.0, B(c, MT_OP_MUL, t, t)));
        return B(c, MT_OP_MUL, g, B(c, MT_OP_ADD, t, d));
    }
    case MT_ACT_GELU: {
        mt_tensor *cdf = BS(c, MT_OP_MUL, BS(c, MT_OP_ADD, U(c, MT_OP_ERF, BS(c, MT_OP_MUL, y, M_SQRT1_2)), 1.0), 0.5);
        mt_tensor *pdf = BS(c, MT_OP_MUL, U(c, MT_OP_EXP, BS(c, MT_OP_MUL, B(c, MT_OP_MUL, y, y), -0.5)), M_2_SQRTPI * M_SQRT1_2 * 0.5);
        return B(c, MT_OP_MUL, g, B(c, MT_OP_ADD, cdf, B(c, MT_OP_MUL, y, pdf)));
    }
    case MT_ACT_GELU_TANH: {
        const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
        mt_tensor *y2 = B(c, MT_OP_MUL, y, y);
        mt_tensor *t = U(c, MT_OP_TANH, BS(c, MT_OP_MUL, B(c, MT_OP_ADD, y, BS(c, MT_OP_MUL, B(c, MT_OP_MUL, y2, y), kappa)), beta));
        mt_tensor *left_d = BS(c, MT_OP_MUL, BS(c, MT_OP_ADD, t, 1.0), 0.5);
        mt_tensor *inner_d = BS(c, MT_OP_MUL, BS(c, MT_OP_ADD, BS(c, MT_OP_MUL, y2, 3 * kappa), 1.0), beta);
        mt_tensor *right = B(c, MT_OP_MUL, B(c, MT_OP_MUL, BS(c, MT_OP_MUL, y, 0.5), SB(c, MT_OP_SUB, 1.0, B(c, MT_OP_MUL, t, t))), inner_d);
        return B(c, MT_OP_MUL, g, B(c, MT_OP_ADD, left_d, right));
    }
    case MT_ACT_SOFTPLUS: {
        mt_tensor *yb = BS(c, MT_OP_MUL, y, a);
        return WHERE(c, BS(c, MT_OP_GT, yb, b), g, B(c, MT_OP_MUL, g, U(c, MT_OP_SIGMOID, yb)));
    }
    case MT_ACT_HARDSIGMOID:
        return WHERE(c, AND(c, BS(c, MT_OP_GT, y, -3.0), BS(c, MT_OP_LT, y, 3.0)), BS(c, MT_OP_MUL, g, (double)(1.0f / 6.0f)), zero);
    case MT_ACT_HARDSWISH:
        return WHERE(c, BS(c, MT_OP_LE, y, -3.0), zero,
                     WHERE(c, BS(c, MT_OP_LT, y, 3.0), B(c, MT_OP_MUL, g, BS(c, MT_OP_ADD, BS(c, MT_OP_DIV, y, 3.0), 0.5)), g));
    case MT_ACT_SOFTSHRINK: case MT_ACT_HARDSHRINK:
        return WHERE(c, AND(c, BS(c, MT_OP_GE, y, -a), BS(c, MT_OP_LE, y, a)), zero, g);
    case MT_ACT_LOGSIGMOID: return B(c, MT_OP_MUL, g, U(c, MT_OP_SIGMOID, U(c, MT_OP_NEG, y)));
    case MT_ACT_THRESHOLD: return WHERE(c, BS(c, MT_OP_LE, y, a), zero, g);
    }
    if (!c->st) c->st = mt__error(MT_ERR_VALUE, "unknown activation %d", act);
    return NULL;
}

/* piecewise-linear activations: their backward is linear in grad with a mask from the input,
 * recorded as one node as PyTorch records <act>_backward (the input's gradient is zero) */
static const char *linear_backward_name(int act) {
    switch (act) {
    case MT_ACT_RELU: case MT_ACT_THRESHOLD: return "ThresholdBackwardBackward0";
    case MT_ACT_HARDTANH: return "HardtanhBackwardBackward0";
    case MT_ACT_LEAKY_RELU: return "LeakyReluBackwardBackward0";
    case MT_ACT_SOFTSHRINK: return "SoftshrinkBackwardBackward0";
    case MT_ACT_HARDSHRINK: return "HardshrinkBackwardBackward0";
    case MT_ACT_HARDSIGMOID: return "HardsigmoidBackwardBackward0";
    }
    return NULL;
}

static mt_status linear_backward_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *y = SAVED(c, n, 0), *r = NULL;
    if (needs(n, 0) && y) KEEP(c, mt_activation_backward(n->op, grads[0], y, n->s[0], n->s[1], n->s[2], &r), r);
    GIVE(c, out, 0, r);
    if (needs(n, 1)) GIVE(c, out, 1, ZEROS(c, &n->in_meta[1]));
    return END(c, out, 2);
}

mt_status mt_activation_backward(int act, mt_tensor *grad, mt_tensor *input, double a, double b, double cc,
                                 mt_tensor **result) {
    MT_PROFILE(MT_PROF_NAME(mt__names_activation_backward, act), grad, input);
    int rec = recorded(grad, input, NULL);
    if (!rec || linear_backward_name(act)) {
        int prev = mt__grad_push(0);
        mt_status st = mt__impl_activation_backward(act, grad, input, a, b, cc, result);
        mt__grad_pop(prev);
        if (st || !rec) return st;
        mt_tensor *ins[2] = {grad, input};
        mt_node *n;
        st = mt__record(linear_backward_name(act), linear_backward_bw, 2, ins, 1, result, &n);
        if (!st && n) {
            n->op = act;
            n->s[0] = a, n->s[1] = b, n->s[2] = cc;
            st = mt__save(n, 0, input, 0);
        }
        if (st) MT_DROP(*result);
        return st;
    }
    F c0 = {0}, *c = &c0;
    GIVE(c, result, 0, act_grad_ops(c, act, grad, input, a, b, cc));
    return END(c, result, 1);
}

/* saved 0: the input (relu, in-place elu/celu: the result); s[0..2]: a, b, c; iv[0]: the result is saved */
static mt_status activation_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *y = SAVED(c, n, 0), *r = NULL;
    if (n->iv[0]) { /* PyTorch's elu_backward(is_result=true): g * c * (result + a * b) where result <= 0 */
        double a = n->s[0], b = n->s[1], cc = n->s[2];
        r = WHERE(c, BS(c, MT_OP_LE, y, 0.0), B(c, MT_OP_MUL, BS(c, MT_OP_MUL, grads[0], cc), BS(c, MT_OP_ADD, y, a * b)),
                  BS(c, MT_OP_MUL, grads[0], b));
    } else if (y) {
        KEEP(c, mt_activation_backward(n->op, grads[0], y, n->s[0], n->s[1], n->s[2], &r), r);
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

/* in place, PyTorch names these nodes apart (elu/celu save the result; the others a copy of the input) */
static const char *inplace_name(int act) {
    switch (act) {
    case MT_ACT_ELU: return "EluBackward1";
    case MT_ACT_CELU: return "CeluBackward1";
    case MT_ACT_LEAKY_RELU: return "LeakyReluBackward1";
    case MT_ACT_THRESHOLD: return "ThresholdBackward1";
    }
    return mt__act_name(act);
}

typedef struct { int act; mt_tensor *x; double a, b, c; int inplace; } act_ctx;

static mt_status act_forward(const act_ctx *u, const char *name, mt_tensor **result) {
    int grad = mt__grad_enabled() && mt__requires_grad(u->x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_activation(u->act, u->x, u->a, u->b, u->c, NULL, result);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_float((*result)->dtype)) return st;
    mt_node *n;
    st = mt__record(name, activation_bw, 1, &u->x, 1, result, &n);
    if (!st && n) {
        n->op = u->act;
        n->s[0] = u->a, n->s[1] = u->b, n->s[2] = u->c;
        if (u->act == MT_ACT_CELU) n->s[2] = 1.0 / (float)u->a; /* PyTorch's celu backward: 1 / alpha in float */
        n->iv[0] = u->inplace && (u->act == MT_ACT_ELU || u->act == MT_ACT_CELU);
        st = u->act == MT_ACT_RELU || n->iv[0] ? mt__save(n, 0, *result, 1) : mt__save(n, 0, u->x, 0);
    }
    if (st) MT_DROP(*result);
    return st;
}

static mt_status act_inplace_oop(void *p, mt_tensor **r) {
    const act_ctx *u = p;
    return act_forward(u, inplace_name(u->act), r);
}

mt_status mt_activation(int act, mt_tensor *x, double a, double b, double c, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE_KIND(MT_PROF_NAME(mt__names_activation, act), out && out == x ? MT_PROF_INPLACE : MT_PROF_OP, x);
    act_ctx u = {act, x, a, b, c, out != NULL};
    if (!mt__act_name(act)) return mt__error(MT_ERR_VALUE, "unknown activation %d", act);
    if (!out) return act_forward(&u, mt__act_name(act), result);
    if (out != x) return mt__error(MT_ERR_VALUE, "activation: out must be the input (in place) or NULL");
    if (mt__grad_enabled() && mt__requires_grad(x))
        return into_out(mt__act_name(act), out, 1, act_inplace_oop, &u, result);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_activation(act, x, a, b, c, out, result);
    mt__grad_pop(prev);
    return st;
}

/* ---- embedding ---------------------------------------------------------------------------- */

/* saved 0: indices; iv: num_weights, padding_idx, scale_grad_by_freq */
static mt_status embedding_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *idx = SAVED(c, n, 0), *r = NULL;
    if (idx) KEEP(c, mt_embedding_backward(grads[0], idx, n->iv[0], n->iv[1], (int)n->iv[2], &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

/* the backward's own derivative: the embedding of the incoming gradient with the padding rows
 * zeroed (PyTorch's embedding_dense_double_backward, which ignores scale_grad_by_freq) */
static mt_status embedding_dense_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *idx = SAVED(c, n, 0), *r = NULL;
    if (idx) r = KEEP(c, mt_embedding(grads[0], idx, -1, 0, &r), r);
    if (r && n->iv[1] >= 0) {
        mt_tensor *keepm = NULL, *ne = BS(c, MT_OP_NE, idx, (double)n->iv[1]);
        if (ne) keepm = KEEP(c, mt_unsqueeze(ne, -1, &keepm), keepm);
        r = WHERE(c, keepm, r, SCALAR(c, 0.0));
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

mt_status mt_embedding_backward(mt_tensor *grad, mt_tensor *indices, int64_t num_weights, int64_t padding_idx,
                                int scale_grad_by_freq, mt_tensor **out) {
    MT_PROFILE("embedding_backward", grad, indices);
    int rec = recorded(grad, NULL, NULL);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, out);
    mt__grad_pop(prev);
    if (st || !rec) return st;
    mt_node *n;
    st = mt__record("EmbeddingDenseBackwardBackward0", embedding_dense_bw, 1, &grad, 1, out, &n);
    if (!st && n) {
        n->iv[0] = num_weights, n->iv[1] = padding_idx, n->iv[2] = scale_grad_by_freq;
        st = mt__save(n, 0, indices, 0);
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_embedding(mt_tensor *weight, mt_tensor *indices, int64_t padding_idx, int scale_grad_by_freq,
                       mt_tensor **out) {
    MT_PROFILE("embedding", weight, indices);
    int grad = mt__grad_enabled() && mt__requires_grad(weight);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_embedding(weight, indices, out);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_float(weight->dtype)) return st;
    mt_node *n;
    st = mt__record("EmbeddingBackward0", embedding_bw, 1, &weight, 1, out, &n);
    if (!st && n) {
        n->iv[0] = weight->sizes[0], n->iv[1] = padding_idx, n->iv[2] = scale_grad_by_freq;
        st = mt__save(n, 0, indices, 0);
    }
    if (st) MT_DROP(*out);
    return st;
}
