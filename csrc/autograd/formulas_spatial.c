/* formulas_spatial.c — the autograd layer of the losses and spatial ops: each
 * public entry point runs its kernel (kernels/cpu/{loss,conv,pool,upsample,pad}.c)
 * with grad mode off and records a node named as PyTorch names it. Composite
 * ops (cross_entropy, nll_loss over N-D input, the 1-D spatial ops) call public
 * ops and record through their parts, as PyTorch's composites do. Backward
 * kernels run with grad mode off; under create_graph their result gets a node
 * (PyTorch's "...BackwardBackward0") whose formula is written with the public ops,
 * as derivatives.yaml does: each of these backward kernels is linear in the
 * gradient, so its derivative is the forward op (or a gather by the saved indices). */
#include "formula.h"
#include "../kernels/cpu/spatial.h"

/* ---- helpers --------------------------------------------------------------- */

static mt_tensor *RED(F *c, int op, mt_tensor *a, int nd, const int64_t *dims, int keepdim) {
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_reduce(op, a, nd, dims, keepdim, -1, NULL, &r), r) : NULL;
}
static mt_tensor *VIEWN(F *c, mt_tensor *a, int nd, const int64_t *sizes) {
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_view(a, nd, sizes, &r), r) : NULL;
}
static mt_tensor *MULS(F *c, mt_tensor *a, double s) { return BS(c, MT_OP_MUL, a, s); }
/* loss reduced as PyTorch's apply_loss_reduction */
static mt_tensor *REDUCE_LOSS(F *c, mt_tensor *l, int reduction) {
    if (reduction == MT_REDUCTION_NONE) return l;
    return RED(c, reduction == MT_REDUCTION_MEAN ? MT_RED_MEAN : MT_RED_SUM, l, 0, NULL, 0);
}

/* A backward kernel's result r (inputs ins: the gradient first): under create_graph it gets node
 * `name` with formula fn, which reads the first-order node p's arguments (copied) and sv[0..nsv). */
static mt_tensor *BWD(F *c, mt_status st, mt_tensor *r, const char *name, mt_backward_fn fn, const mt_node *p, int nin,
                      mt_tensor *const *ins, int nsv, mt_tensor *const *sv) {
    r = keep(c, st, r);
    if (r && mt__grad_enabled()) {
        mt_node *n;
        mt_status s2 = mt__record(name, fn, nin, ins, 1, &r, &n);
        if (!s2 && n) {
            n->op = p->op, n->niv = p->niv;
            memcpy(n->iv, p->iv, sizeof n->iv);
            memcpy(n->s, p->s, sizeof n->s);
            for (int k = 0; k < nsv && !s2; k++) s2 = mt__save(n, k, sv[k], 0);
        }
        if (s2 && !c->st) c->st = s2;
    }
    return r;
}

/* the node a public op just recorded, renamed: PyTorch's composites call the
 * C++ overload (Tensor / Scalar is DivBackward1 there, DivBackward0 from Python) */
static void rename_node(mt_tensor *t, const char *name) {
    if (t && t->grad_fn) t->grad_fn->name = name;
}

/* PyTorch refuses at the forward an input its formula does not differentiate */
static mt_status forbid_grad(const char *fn, const char *arg, const mt_tensor *t) {
    if (t && mt__grad_enabled() && mt__requires_grad(t))
        return mt__error(MT_ERR_RUNTIME, "The function '%s' is not differentiable with respect to argument '%s'. This "
                         "input cannot have requires_grad True.", fn, arg);
    return MT_OK;
}

/* ---- log_softmax for the losses ------------------------------------------- */

static mt_status log_softmax_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *y = SAVED(c, n, 0);
    int64_t dim = n->iv[0];
    GIVE(c, out, 0, B(c, MT_OP_SUB, g, B(c, MT_OP_MUL, U(c, MT_OP_EXP, y), RED(c, MT_RED_SUM, g, 1, &dim, 1))));
    return END(c, out, 1);
}

mt_status mt__log_softmax_for_loss(mt_tensor *x, int64_t dim, mt_tensor **out) {
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_softmax(x, dim, 1, -1, out);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    if (!(st = mt__record("LogSoftmaxBackward0", log_softmax_backward, 1, &x, 1, out, &n)) && n) {
        n->iv[0] = dim < 0 ? dim + (x->ndim ? x->ndim : 1) : dim;
        st = mt__save(n, 0, *out, 1);
    }
    if (st) MT_DROP(*out);
    return st;
}

/* ---- nll_loss --------------------------------------------------------------- */

static mt_status nll_core(mt_tensor *x, mt_tensor *t, mt_tensor *w, int reduction, int64_t ignore_index, int two_d,
                          mt_tensor **out);

/* nll_loss_backward is linear in grad_output: its derivative is nll_loss of the incoming gradient */
static mt_status nll_double_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *t = SAVED(c, n, 0), *w = has_saved(n, 1) ? SAVED(c, n, 1) : NULL, *r = NULL;
    if (needs(n, 0) && !c->st) r = KEEP(c, nll_core(grads[0], t, w, (int)n->iv[0], n->iv[1], (int)n->iv[2], &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 2);
}

static mt_status nll_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *x = SAVED(c, n, 0), *t = SAVED(c, n, 1), *w = has_saved(n, 2) ? SAVED(c, n, 2) : NULL, *tw = SAVED(c, n, 3);
    if (needs(n, 0) && !c->st) {
        mt_tensor *r = NULL;
        int prev = mt__grad_push(0);
        mt_status st = mt__impl_nll_loss_backward(grads[0], x, t, w, (int)n->iv[0], n->iv[1], tw, &r);
        mt__grad_pop(prev);
        mt_tensor *ins[2] = {grads[0], x}, *sv[2] = {t, w};
        GIVE(c, out, 0, BWD(c, st, r, n->iv[2] ? "NllLoss2DBackwardBackward0" : "NllLossBackwardBackward0",
                            nll_double_backward, n, 2, ins, 2, sv));
    }
    return END(c, out, 1);
}

/* nll_loss (two_d = 0) or nll_loss2d (two_d = 1), recorded */
static mt_status nll_core(mt_tensor *x, mt_tensor *t, mt_tensor *w, int reduction, int64_t ignore_index, int two_d,
                          mt_tensor **out) {
    MT_TRY(forbid_grad(two_d ? "nll_loss2d_forward" : "nll_loss_forward", "weight", w));
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    mt_tensor *tw = NULL;
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_nll_loss(x, t, w, reduction, ignore_index, two_d, out, &tw);
    mt__grad_pop(prev);
    if (st) return st;
    if (grad) {
        mt_node *n;
        if (!(st = mt__record(two_d ? "NllLoss2DBackward0" : "NllLossBackward0", nll_backward, 1, &x, 1, out, &n)) && n) {
            n->iv[0] = reduction, n->iv[1] = ignore_index, n->iv[2] = two_d;
            if (!st) st = mt__save(n, 0, x, 0);
            if (!st) st = mt__save(n, 1, t, 0);
            if (!st) st = mt__save(n, 2, w, 0);
            if (!st) st = mt__save(n, 3, tw, 0);
        }
    }
    mt_tensor_release(tw);
    if (st) MT_DROP(*out);
    return st;
}

/* PyTorch's nll_loss_nd: 1-D/2-D nll_loss, 4-D nll_loss2d, other ranks folded into 4-D */
mt_status mt_nll_loss(mt_tensor *x, mt_tensor *t, mt_tensor *w, int reduction, int64_t ignore_index, mt_tensor **out) {
    MT_PROFILE("nll_loss_nd", x, t, w);
    if (x->ndim < 1) return mt__error(MT_ERR_VALUE, "Expected 1 or more dimensions (got %d)", x->ndim);
    if (x->ndim != 1 && (t->ndim < 1 || x->sizes[0] != t->sizes[0])) {
        if (t->ndim < 1) return mt__error(MT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
        return mt__error(MT_ERR_VALUE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                         (long long)x->sizes[0], (long long)t->sizes[0]);
    }
    if (x->ndim <= 2) return nll_core(x, t, w, reduction, ignore_index, 0, out);
    if (x->ndim == 4) return nll_core(x, t, w, reduction, ignore_index, 1, out);
    int64_t osz[MT_MAX_DIMS];
    osz[0] = x->sizes[0];
    for (int d = 2; d < x->ndim; d++) osz[d - 1] = x->sizes[d];
    if (t->ndim != x->ndim - 1 || memcmp(t->sizes + 1, x->sizes + 2, (x->ndim - 2) * sizeof(int64_t))) {
        char a[256], b[256];
        return mt__error(MT_ERR_RUNTIME, "Expected target size %s, got %s", mt__fmt_sizes(a, sizeof a, x->ndim - 1, osz),
                         MT_SZ(b, t));
    }
    F c0 = {0}, *c = &c0;
    mt_tensor *xc = NULL, *tc = NULL, *r = NULL;
    if (!c->st) xc = KEEP(c, mt_contiguous(x, &xc), xc);
    if (!c->st) tc = KEEP(c, mt_contiguous(t, &tc), tc);
    int64_t n = x->sizes[0], xs[4] = {n, x->sizes[1], 1, -1}, ts[3] = {n, 1, -1};
    if (mt_tensor_numel(x) == 0) xs[2] = xs[3] = 0;
    if (mt_tensor_numel(t) == 0) ts[1] = ts[2] = 0;
    xc = VIEWN(c, xc, 4, xs);
    tc = VIEWN(c, tc, 3, ts);
    if (!c->st) r = KEEP(c, nll_core(xc, tc, w, reduction, ignore_index, 1, &r), r);
    if (reduction == MT_REDUCTION_NONE) r = VIEWN(c, r, x->ndim - 1, osz);
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

/* ---- cross_entropy (PyTorch's cross_entropy_loss and its two helpers) --------- */

static int same_shape(const mt_tensor *a, const mt_tensor *b) {
    return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t));
}

/* weight viewed as [1, C, 1, ...] to broadcast against input */
static mt_tensor *WEIGHT_VIEW(F *c, mt_tensor *w, const mt_tensor *x, int class_dim) {
    int64_t s[MT_MAX_DIMS];
    if (x->ndim <= 1) return w;
    for (int d = 0; d < x->ndim; d++) s[d] = 1;
    s[class_dim] = w->sizes[0];
    return VIEWN(c, w, x->ndim, s);
}

static mt_status ce_prob_target(F *c, mt_tensor *x, mt_tensor *t, mt_tensor *w, int reduction, double ls,
                                mt_tensor **out) {
    int class_dim = x->ndim == 1 ? 0 : 1;
    int64_t cls = x->ndim ? x->sizes[class_dim] : 1, cd = class_dim;
    char a[256];
    if (w && (w->ndim != 1 || mt_tensor_numel(w) != cls))
        return mt__error(MT_ERR_RUNTIME, "cross_entropy: weight tensor should be defined either for all %lld classes or "
                         "no classes but got weight tensor of shape: %s", (long long)cls, MT_SZ(a, w));
    mt_tensor *in = NULL, *r;
    if (!c->st) in = KEEP(c, mt__log_softmax_for_loss(x, class_dim, &in), in);
    if (ls > 0.0) {
        if (ls > 1.0) return mt__error(MT_ERR_RUNTIME, "label_smoothing must be between 0.0 and 1.0. Got: %g", ls);
        t = BS(c, MT_OP_ADD, MULS(c, t, 1 - ls), ls / (double)cls);
    }
    mt_tensor *prod = B(c, MT_OP_MUL, in, t);
    if (w) prod = B(c, MT_OP_MUL, prod, WEIGHT_VIEW(c, w, x, class_dim));
    if (reduction == MT_REDUCTION_NONE) r = U(c, MT_OP_NEG, RED(c, MT_RED_SUM, prod, 1, &cd, 0));
    else r = U(c, MT_OP_NEG, RED(c, MT_RED_SUM, prod, 0, NULL, 0));
    if (reduction == MT_REDUCTION_MEAN) {
        int64_t numel = in ? mt_tensor_numel(in) : 0;
        if (numel == 0 && r) { /* -(...).sum().fill_(NAN): keeps the Neg node */
            r = U(c, MT_OP_NEG, MULS(c, U(c, MT_OP_NEG, r), NAN));
        } else {
            r = BS(c, MT_OP_DIV, r, (double)(numel / cls));
            rename_node(r, "DivBackward1");
        }
    }
    GIVE(c, out, 0, r);
    return c->st;
}

static mt_status ce_label_smoothing(F *c, mt_tensor *x, mt_tensor *t, mt_tensor *w, int reduction, int64_t ignore_index,
                                    double ls, mt_tensor **out) {
    int class_dim = x->ndim == 1 ? 0 : 1;
    int64_t cd = class_dim;
    mt_tensor *in = NULL, *nll = NULL, *mask = NULL, *r = NULL;
    if (!c->st) in = KEEP(c, mt__log_softmax_for_loss(x, class_dim, &in), in);
    if (!c->st) nll = KEEP(c, mt_nll_loss(in, t, w, reduction, ignore_index, &nll), nll);
    int64_t cls = x->sizes[class_dim];
    if (!c->st) mask = KEEP(c, mt_binary_scalar(MT_OP_EQ, t, 0, ignore_index, MT_SCALAR_INT, 0, 1, NULL, &mask), mask);
    mt_tensor *smooth = U(c, MT_OP_NEG, RED(c, MT_RED_SUM, w ? B(c, MT_OP_MUL, in, WEIGHT_VIEW(c, w, x, class_dim)) : in,
                                             1, &cd, 0));
    smooth = WHERE(c, mask, SCALAR(c, 0.0), smooth);
    switch (reduction) {
    case MT_REDUCTION_MEAN: {
        mt_tensor *den;
        if (w) { /* weights of the targets that are not ignored */
            mt_tensor *ft = WHERE(c, mask, KEEP(c, mt_scalar_tensor(0, 0, MT_SCALAR_INT, MT_I64, 1, &den), den), t), *tw = NULL;
            if (!c->st) tw = KEEP(c, mt_index(w, 1, &ft, &tw), tw);
            den = RED(c, MT_RED_SUM, WHERE(c, mask, SCALAR(c, 0.0), tw), 0, NULL, 0);
        } else {
            den = RED(c, MT_RED_SUM, U(c, MT_OP_LOGICAL_NOT, mask), 0, NULL, 0);
        }
        r = B(c, MT_OP_DIV, RED(c, MT_RED_SUM, smooth, 0, NULL, 0), den);
        break;
    }
    case MT_REDUCTION_SUM: r = RED(c, MT_RED_SUM, smooth, 0, NULL, 0); break;
    default: r = smooth;
    }
    GIVE(c, out, 0, B(c, MT_OP_ADD, MULS(c, nll, 1 - ls), MULS(c, r, ls / (double)cls)));
    return c->st;
}

mt_status mt_cross_entropy(mt_tensor *x, mt_tensor *t, mt_tensor *w, int reduction, int64_t ignore_index,
                           double label_smoothing, mt_tensor **out) {
    MT_PROFILE("cross_entropy_loss", x, t, w);
    F c0 = {0}, *c = &c0;
    *out = NULL;
    mt_status st;
    if (same_shape(x, t)) {
        if (!mt__is_float(t->dtype))
            return mt__error(MT_ERR_RUNTIME, "Expected floating point type for target with class probabilities, got %s",
                             MT_DTNAME(t));
        if (ignore_index >= 0) return mt__error(MT_ERR_RUNTIME, "ignore_index is not supported for floating point target");
        st = ce_prob_target(c, x, t, w, reduction, label_smoothing, out);
    } else if (label_smoothing > 0.0) {
        if (label_smoothing > 1.0)
            return mt__error(MT_ERR_RUNTIME, "label_smoothing must be between 0.0 and 1.0. Got: %g", label_smoothing);
        st = ce_label_smoothing(c, x, t, w, reduction, ignore_index, label_smoothing, out);
    } else {
        mt_tensor *in = NULL;
        if (!c->st) in = KEEP(c, mt__log_softmax_for_loss(x, x->ndim == 1 ? 0 : 1, &in), in);
        if (!c->st) c->st = mt_nll_loss(in, t, w, reduction, ignore_index, out);
        st = c->st;
    }
    if (st && !c->st) c->st = st;
    return END(c, out, 1);
}

/* ---- losses with a fused backward ------------------------------------------------ */

static const char *const loss_names[] = {"MseLossBackward0", "SmoothL1LossBackward0", "HuberLossBackward0",
                                         "BinaryCrossEntropyBackward0", "BinaryCrossEntropyWithLogitsBackward0",
                                         "SoftMarginLossBackward0"};

/* log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)): PyTorch's fused kernel for floating x (one pass, reduced
 * floats computed in float), composed for the integer x that bce_with_logits takes */
static mt_tensor *LOG_SIGMOID(F *c, mt_tensor *x) {
    mt_tensor *r = NULL;
    if (x && mt__is_float(x->dtype)) return OK2(x, 1) ? KEEP(c, mt_activation(MT_ACT_LOGSIGMOID, x, 0, 0, 0, NULL, &r), r) : NULL;
    return B(c, MT_OP_SUB, BS(c, MT_OP_MINIMUM, x, 0.0),
             U(c, MT_OP_LOG1P, U(c, MT_OP_EXP, U(c, MT_OP_NEG, U(c, MT_OP_ABS, x)))));
}

/* the elementwise loss (before reduction) */
static mt_tensor *pointwise(F *c, int kind, mt_tensor *x, mt_tensor *t, mt_tensor *w, mt_tensor *pw, double p) {
    mt_tensor *l = NULL;
    switch (kind) {
    case MT_LOSS_MSE: return BA(c, MT_OP_MSE, x, t, 1);
    case MT_LOSS_SMOOTH_L1: return BA(c, MT_OP_SMOOTH_L1, x, t, p);
    case MT_LOSS_HUBER: return BA(c, MT_OP_HUBER, x, t, p);
    case MT_LOSS_BCE: /* (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100) */
        l = B(c, MT_OP_SUB, B(c, MT_OP_MUL, BS(c, MT_OP_SUB, t, 1.0), BS(c, MT_OP_MAXIMUM, U(c, MT_OP_LOG1P, U(c, MT_OP_NEG, x)), -100.0)),
              B(c, MT_OP_MUL, t, BS(c, MT_OP_MAXIMUM, U(c, MT_OP_LOG, x), -100.0)));
        break;
    case MT_LOSS_BCE_LOGITS: {
        mt_tensor *ls = LOG_SIGMOID(c, x);
        if (pw) ls = B(c, MT_OP_MUL, ls, BS(c, MT_OP_ADD, B(c, MT_OP_MUL, BS(c, MT_OP_SUB, pw, 1.0), t), 1.0));
        l = B(c, MT_OP_SUB, B(c, MT_OP_MUL, SB(c, MT_OP_SUB, 1.0, t), x), ls);
        break;
    }
    case MT_LOSS_SOFT_MARGIN: return U(c, MT_OP_LOG1P, U(c, MT_OP_EXP, B(c, MT_OP_MUL, U(c, MT_OP_NEG, x), t)));
    }
    return w ? B(c, MT_OP_MUL, l, w) : l;
}

static mt_status pointwise_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int kind = n->op, red = (int)n->iv[0];
    double p = n->s[0], norm = red == MT_REDUCTION_MEAN ? 1.0 / (double)n->iv[1] : 1.0;
    mt_tensor *g = grads[0], *x = SAVED(c, n, 0), *t = SAVED(c, n, 1);
    mt_tensor *w = has_saved(n, 2) ? SAVED(c, n, 2) : NULL, *pw = has_saved(n, 3) ? SAVED(c, n, 3) : NULL;
    mt_tensor *gx = NULL, *gt = NULL, *d, *one = SCALAR(c, 1.0);
    if ((kind == MT_LOSS_MSE || kind == MT_LOSS_SMOOTH_L1 || kind == MT_LOSS_HUBER) && !mt__grad_enabled()) {
        /* PyTorch's fused kernels, the target's gradient with input and target swapped as derivatives.yaml
         * writes it (not the negation: a zero difference gives +0 for both). Under create_graph the
         * composed formula below records its ops instead. */
        int op = kind == MT_LOSS_MSE ? MT_OP_MSE_BACKWARD : kind == MT_LOSS_HUBER ? MT_OP_HUBER_BACKWARD
                                                                                  : MT_OP_SMOOTH_L1_BACKWARD;
        double nrm = (kind == MT_LOSS_MSE ? 2.0 : 1.0) / (red == MT_REDUCTION_MEAN ? (double)n->iv[1] : 1.0);
        mt_tensor *r = NULL;
        if (needs(n, 0) && OK2(x, t)) GIVE(c, out, 0, KEEP(c, mt__loss_backward(op, x, t, g, nrm, p, &r), r));
        if (needs(n, 1) && OK2(x, t)) GIVE(c, out, 1, KEEP(c, mt__loss_backward(op, t, x, g, nrm, p, &r), r));
        return END(c, out, 2);
    }
    if (norm != 1.0) g = MULS(c, g, norm);
    switch (kind) {
    case MT_LOSS_MSE: gx = B(c, MT_OP_MUL, MULS(c, B(c, MT_OP_SUB, x, t), 2.0), g); gt = U(c, MT_OP_NEG, gx); break;
    case MT_LOSS_SMOOTH_L1: case MT_LOSS_HUBER: {
        d = B(c, MT_OP_SUB, x, t);
        double lim = kind == MT_LOSS_HUBER ? p : 1.0;
        mt_tensor *inner = kind == MT_LOSS_HUBER ? d : BS(c, MT_OP_DIV, d, p);
        mt_tensor *slope = WHERE(c, BS(c, MT_OP_LT, d, -p), SCALAR(c, -lim), WHERE(c, BS(c, MT_OP_GT, d, p), SCALAR(c, lim), inner));
        gx = B(c, MT_OP_MUL, slope, g);
        gt = U(c, MT_OP_NEG, gx);
        break;
    }
    case MT_LOSS_BCE:
        if (needs(n, 0))
            gx = B(c, MT_OP_DIV, B(c, MT_OP_MUL, g, B(c, MT_OP_SUB, x, t)),
                   BS(c, MT_OP_MAXIMUM, B(c, MT_OP_MUL, SB(c, MT_OP_SUB, 1.0, x), x), 1e-12));
        if (needs(n, 1)) gt = B(c, MT_OP_MUL, g, B(c, MT_OP_SUB, U(c, MT_OP_LOG1P, U(c, MT_OP_NEG, x)), U(c, MT_OP_LOG, x)));
        break;
    case MT_LOSS_BCE_LOGITS:
        if (needs(n, 0)) {
            mt_tensor *sig = U(c, MT_OP_SIGMOID, x);
            if (pw) {
                mt_tensor *pt = B(c, MT_OP_MUL, pw, t);
                gx = B(c, MT_OP_SUB, B(c, MT_OP_MUL, B(c, MT_OP_SUB, B(c, MT_OP_ADD, pt, one), t), sig), pt);
            } else gx = B(c, MT_OP_SUB, sig, t);
            gx = B(c, MT_OP_MUL, gx, g);
        }
        if (needs(n, 1)) {
            gt = pw ? B(c, MT_OP_SUB, LOG_SIGMOID(c, U(c, MT_OP_NEG, x)), B(c, MT_OP_MUL, LOG_SIGMOID(c, x), pw))
                    : U(c, MT_OP_NEG, x);
            gt = B(c, MT_OP_MUL, gt, g);
        }
        break;
    case MT_LOSS_SOFT_MARGIN: {
        mt_tensor *z = U(c, MT_OP_EXP, B(c, MT_OP_MUL, U(c, MT_OP_NEG, t), x));
        gx = B(c, MT_OP_MUL, B(c, MT_OP_DIV, B(c, MT_OP_MUL, U(c, MT_OP_NEG, t), z), BS(c, MT_OP_ADD, z, 1.0)), g);
        break;
    }
    }
    if (w) { gx = gx ? B(c, MT_OP_MUL, gx, w) : NULL; gt = gt ? B(c, MT_OP_MUL, gt, w) : NULL; }
    if (needs(n, 0)) GIVE(c, out, 0, gx);
    if (needs(n, 1)) GIVE(c, out, 1, gt);
    return END(c, out, 2);
}

mt_status mt_pointwise_loss(int kind, mt_tensor *x, mt_tensor *t, mt_tensor *w, mt_tensor *pw, double p, int reduction,
                            mt_tensor **out) {
    MT_PROFILE(MT_PROF_NAME(mt__names_loss, kind), x, t, w, pw);
    *out = NULL;
    if ((unsigned)kind >= MT_NUM_LOSS) return mt__error(MT_ERR_VALUE, "unknown loss %d", kind);
    if ((unsigned)reduction > MT_REDUCTION_SUM) return mt__error(MT_ERR_VALUE, "%d is not a valid value for reduction", reduction);
    if (kind == MT_LOSS_SMOOTH_L1 && p < 0)
        return mt__error(MT_ERR_RUNTIME, "smooth_l1_loss does not support negative values for beta.");
    if (kind == MT_LOSS_HUBER && !(p > 0))
        return mt__error(MT_ERR_RUNTIME, "huber_loss does not support non-positive values for delta.");
    int dt = mt_promote_types(x->dtype, t->dtype);
    if (dt < 0) return MT_ERR_RUNTIME;
    static const char *kname[] = {"mse_cpu", "smooth_l1_cpu", "huber_cpu", "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss"};
    if (!mt__is_float(dt) && kind != MT_LOSS_BCE_LOGITS && kind != MT_LOSS_SOFT_MARGIN)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname[kind], mt_dtype_names[dt]);
    if (kind == MT_LOSS_BCE) {
        if (t->dtype != x->dtype)
            return mt__error(MT_ERR_RUNTIME, "Found dtype %s but expected %s", MT_DTNAME(t), MT_DTNAME(x));
    }
    MT_TRY(forbid_grad(kname[kind], "weight", w));
    MT_TRY(forbid_grad(kname[kind], "pos_weight", pw));
    if (kind == MT_LOSS_SOFT_MARGIN) MT_TRY(forbid_grad(kname[kind], "target", t));
    F c0 = {0}, *c = &c0;
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || mt__requires_grad(t));
    int prev = mt__grad_push(0);
    if (kind == MT_LOSS_BCE && x->device != MT_META) { /* PyTorch's kernel checks every element */
        mt_tensor *okx = RED(c, MT_RED_ALL, B(c, MT_OP_LOGICAL_AND, BS(c, MT_OP_GE, x, 0.0), BS(c, MT_OP_LE, x, 1.0)), 0, NULL, 0);
        mt_tensor *okt = RED(c, MT_RED_ALL, B(c, MT_OP_LOGICAL_AND, BS(c, MT_OP_GE, t, 0.0), BS(c, MT_OP_LE, t, 1.0)), 0, NULL, 0);
        double f = 1, f2 = 1; int64_t i = 1, i2 = 1;
        if (!c->st) c->st = mt_item(okx, &f, &i);
        if (!c->st) c->st = mt_item(okt, &f2, &i2);
        if (!c->st && !i) c->st = mt__error(MT_ERR_RUNTIME, "all elements of input should be between 0 and 1");
        if (!c->st && !i2) c->st = mt__error(MT_ERR_RUNTIME, "all elements of target should be between 0 and 1");
    }
    mt_tensor *l = pointwise(c, kind, x, t, w, pw, p);
    int64_t numel = l ? mt_tensor_numel(l) : 0;
    mt_tensor *r = REDUCE_LOSS(c, l, reduction);
    mt__grad_pop(prev);
    GIVE(c, out, 0, r);
    mt_status st = END(c, out, 1);
    if (st || !grad) return st;
    mt_node *n;
    mt_tensor *ins[4] = {x, t, w, pw};
    if (!(st = mt__record(loss_names[kind], pointwise_backward, 2, ins, 1, out, &n)) && n) {
        n->op = kind, n->s[0] = p, n->iv[0] = reduction, n->iv[1] = numel;
        for (int k = 0; k < 4 && !st; k++) st = mt__save(n, k, ins[k], 0);
    }
    if (st) { MT_DROP(*out); }
    return st;
}

/* ---- convolution ---------------------------------------------------------------- */

_Static_assert(sizeof(mt_conv_args) <= sizeof(((mt_node *)0)->iv), "conv args fit a node");

/* The gradients of convolution(x, w; a) for the mask's inputs (1 input, 2 weight, 4 bias), recorded under
 * create_graph as ConvolutionBackwardBackward0 (inputs g, x, w; one output per gradient computed). */
static mt_status conv_backward_rec(mt_tensor *g, mt_tensor *x, mt_tensor *w, const mt_conv_args *a, int mask,
                                   mt_tensor **r);

/* convolution(x, w, b; a), recorded as ConvolutionBackward0 */
static mt_status conv_rec(mt_tensor *x, mt_tensor *w, mt_tensor *b, const mt_conv_args *a, mt_tensor **out);

static mt_status conv_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_conv_args a;
    memcpy(&a, n->iv, sizeof a);
    mt_tensor *x = SAVED(c, n, 0), *w = SAVED(c, n, 1);
    int mask = (needs(n, 0) ? 1 : 0) | (needs(n, 1) ? 2 : 0) | (needs(n, 2) ? 4 : 0);
    if (!c->st) c->st = conv_backward_rec(grads[0], x, w, &a, mask, out);
    return END(c, out, 3);
}

/* PyTorch's _convolution_double_backward: the gradients are bilinear, <ggx, gx(g, w)> = <g, conv(ggx, w)>
 * and <ggw, gw(g, x)> = <g, conv(x, ggw)>, so each derivative is a convolution or its backward. */
static mt_status conv_double_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_conv_args a;
    memcpy(&a, n->iv, sizeof a);
    mt_tensor *gg[3] = {NULL, NULL, NULL};
    for (int i = 0, k = 0; i < 3; i++)
        if (n->op & (1 << i)) gg[i] = grads[k++];
    mt_tensor *g = SAVED(c, n, 0), *x = SAVED(c, n, 1), *w = SAVED(c, n, 2), *r = NULL, *go = NULL;
    if (needs(n, 0)) {
        if (gg[0] && !c->st) go = KEEP(c, conv_rec(gg[0], w, NULL, &a, &r), r);
        if (gg[1] && !c->st) {
            mt_tensor *t = KEEP(c, conv_rec(x, gg[1], NULL, &a, &r), r);
            go = go ? B(c, MT_OP_ADD, go, t) : t;
        }
        if (gg[2] && g && !c->st) { /* the bias gradient summed g over all but the channel dim */
            int64_t s[MT_MAX_DIMS];
            for (int d = 0; d < g->ndim; d++) s[d] = d == 1 ? g->sizes[1] : 1;
            mt_tensor *t = VIEWN(c, gg[2], g->ndim, s);
            if (go) go = B(c, MT_OP_ADD, go, t);
            else if (t) go = KEEP(c, mt_expand(t, g->ndim, g->sizes, &r), r);
        }
        GIVE(c, out, 0, go);
    }
    mt_tensor *p[3] = {NULL, NULL, NULL};
    if (needs(n, 1) && gg[1] && !c->st) {
        c->st = conv_backward_rec(g, x, gg[1], &a, 1, p);
        GIVE(c, out, 1, keep(c, MT_OK, p[0]));
    }
    if (needs(n, 2) && gg[0] && !c->st) {
        p[0] = p[1] = NULL;
        c->st = conv_backward_rec(g, gg[0], w, &a, 2, p);
        GIVE(c, out, 2, keep(c, MT_OK, p[1]));
    }
    return END(c, out, 3);
}

static mt_status conv_backward_rec(mt_tensor *g, mt_tensor *x, mt_tensor *w, const mt_conv_args *a, int mask,
                                   mt_tensor **r) {
    r[0] = r[1] = r[2] = NULL;
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_convolution_backward(g, x, w, a, mask, &r[0], &r[1], &r[2]);
    mt__grad_pop(prev);
    int nr = 0, present = 0;
    mt_tensor *outs[3];
    for (int i = 0; i < 3; i++)
        if (r[i]) outs[nr++] = r[i], present |= 1 << i;
    if (!st && nr && mt__grad_enabled()) {
        mt_node *n;
        mt_tensor *ins[3] = {g, x, w};
        st = mt__record("ConvolutionBackwardBackward0", conv_double_backward, 3, ins, nr, outs, &n);
        if (!st && n) {
            n->op = present, n->no_materialize = 1; /* an absent output gradient is a term that vanishes */
            memcpy(n->iv, a, sizeof *a);
            for (int k = 0; k < 3 && !st; k++) st = mt__save(n, k, ins[k], 0);
        }
    }
    if (st)
        for (int i = 0; i < 3; i++) MT_DROP(r[i]);
    return st;
}

static mt_status conv_rec(mt_tensor *x, mt_tensor *w, mt_tensor *b, const mt_conv_args *a, mt_tensor **out) {
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || mt__requires_grad(w) || mt__requires_grad(b));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_convolution(x, w, b, a, out);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    mt_tensor *ins[3] = {x, w, b};
    if (!(st = mt__record("ConvolutionBackward0", conv_backward, 3, ins, 1, out, &n)) && n) {
        memcpy(n->iv, a, sizeof *a);
        st = mt__save(n, 0, x, 0);
        if (!st) st = mt__save(n, 1, w, 0);
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_convolution(mt_tensor *x, mt_tensor *w, mt_tensor *b, int nd, const int64_t *stride, const int64_t *padding,
                         int pad_same, const int64_t *dilation, int transposed, const int64_t *output_padding,
                         int64_t groups, mt_tensor **out) {
    MT_PROFILE("convolution", x, w, b);
    if (nd < 1 || nd > 3) return mt__error(MT_ERR_NOT_IMPLEMENTED, "convolution over %d spatial dims is not implemented", nd);
    mt_conv_args a;
    memset(&a, 0, sizeof a);
    a.nd = nd, a.transposed = transposed, a.groups = groups;
    for (int i = 0; i < nd; i++) {
        a.stride[i] = stride[i], a.dilation[i] = dilation[i];
        a.output_padding[i] = transposed ? output_padding[i] : 0;
        if (!pad_same) { a.padding[i] = padding[i]; continue; }
        if (stride[i] != 1) return mt__error(MT_ERR_RUNTIME, "padding='same' is not supported for strided convolutions");
        if (w->ndim == nd + 2) { /* total d*(k-1): half before, the odd one after */
            int64_t total = mt__wmul(dilation[i], w->sizes[2 + i] - 1); /* a bad dilation is rejected later */
            a.padding[i] = total / 2, a.pad_extra[i] = total % 2;
        }
    }
    return conv_rec(x, w, b, &a, out);
}

/* ---- im2col / col2im: each the other's backward ------------------------------- */

static mt_status cols_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    const int64_t *k = n->iv, *d = n->iv + 2, *p = n->iv + 4, *s = n->iv + 6;
    if (n->op == 0) { /* im2col: back to the input's spatial size */
        const mt_meta *m = &n->in_meta[0];
        int64_t osz[2] = {m->sizes[m->ndim - 2], m->sizes[m->ndim - 1]};
        return mt_col2im(grads[0], osz, k, d, p, s, &out[0]);
    }
    return mt_im2col(grads[0], k, d, p, s, &out[0]);
}

static mt_status record_cols(const char *name, int op, mt_tensor *x, const int64_t *k, const int64_t *d, const int64_t *p,
                             const int64_t *s, mt_tensor **out) {
    mt_node *n;
    mt_status st = mt__record(name, cols_backward, 1, &x, 1, out, &n);
    if (!st && n) {
        n->op = op;
        for (int i = 0; i < 2; i++) n->iv[i] = k[i], n->iv[2 + i] = d[i], n->iv[4 + i] = p[i], n->iv[6 + i] = s[i];
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_im2col(mt_tensor *x, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s, mt_tensor **out) {
    MT_PROFILE("im2col", x);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_im2col(x, k, d, p, s, out);
    mt__grad_pop(prev);
    return st || !grad ? st : record_cols("Im2ColBackward0", 0, x, k, d, p, s, out);
}

mt_status mt_col2im(mt_tensor *x, const int64_t *osz, const int64_t *k, const int64_t *d, const int64_t *p,
                    const int64_t *s, mt_tensor **out) {
    MT_PROFILE("col2im", x);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_col2im(x, osz, k, d, p, s, out);
    mt__grad_pop(prev);
    return st || !grad ? st : record_cols("Col2ImBackward0", 1, x, k, d, p, s, out);
}

/* ---- pooling ---------------------------------------------------------------------- */

/* t with its last n dims (a plane) flattened into one */
static mt_tensor *FLAT_PLANE(F *c, mt_tensor *t, int n) {
    if (!OK2(t, 1)) return NULL;
    int64_t s[MT_MAX_DIMS];
    memcpy(s, t->sizes, t->ndim * sizeof(int64_t));
    for (int i = 1; i < n; i++) s[t->ndim - n] *= s[t->ndim - n + i];
    mt_tensor *r = NULL;
    return KEEP(c, mt_reshape(t, t->ndim - n + 1, s, &r), r);
}

/* a pooling node's integers: iv[0] spatial dims, then 3 slots each for kernel, stride, padding and
 * dilation, then ceil_mode, count_include_pad, divisor_override */
enum { POOL_IV_K = 1, POOL_IV_S = 4, POOL_IV_P = 7, POOL_IV_D = 10, POOL_IV_FLAGS = 13 };

/* pooling backward is linear in the gradient: avg kinds pool it again (derivatives.yaml), max kinds
 * gather it by the saved indices (max_pool_double_backward) */
static mt_status pool_double_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int kind = n->op, nsp = (int)n->iv[0];
    const int64_t *v = n->iv, *f = v + POOL_IV_FLAGS;
    mt_tensor *r = NULL, *gg = grads[0];
    if (needs(n, 0) && (kind == MT_POOL_MAX || kind == MT_POOL_ADAPTIVE_MAX)) {
        mt_tensor *ind = SAVED(c, n, 0), *fi = FLAT_PLANE(c, ind, nsp), *fg = FLAT_PLANE(c, gg, nsp);
        if (OK2(fi, fg)) r = KEEP(c, mt_gather(fg, -1, fi, &r), r);
        if (OK2(r, ind)) r = KEEP(c, mt_reshape(r, ind->ndim, ind->sizes, &r), r);
    } else if (needs(n, 0)) {
        r = KEEP(c, mt_pool(kind, nsp, gg, v + POOL_IV_K, v + POOL_IV_S, v + POOL_IV_P, v + POOL_IV_D, (int)f[0],
                            (int)f[1], f[2], &r, NULL), r);
    }
    GIVE(c, out, 0, r);
    return END(c, out, 2);
}

static mt_status pool_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int kind = n->op, nsp = (int)n->iv[0];
    int is_max = kind == MT_POOL_MAX || kind == MT_POOL_ADAPTIVE_MAX;
    mt_tensor *x = SAVED(c, n, 0), *ind = is_max ? SAVED(c, n, 1) : NULL, *r = NULL;
    const int64_t *v = n->iv, *f = v + POOL_IV_FLAGS;
    if (!c->st) {
        int prev = mt__grad_push(0);
        mt_status st = mt__impl_pool_backward(kind, nsp, grads[0], x, ind, v + POOL_IV_K, v + POOL_IV_S, v + POOL_IV_P,
                                              v + POOL_IV_D, (int)f[0], (int)f[1], f[2], &r);
        mt__grad_pop(prev);
        static const char *names[2][4] = {
            {"MaxPool2DWithIndicesBackwardBackward0", "AvgPool2DBackwardBackward0", "AdaptiveMaxPool2DBackwardBackward0",
             "AdaptiveAvgPool2DBackwardBackward0"},
            {"MaxPool3DWithIndicesBackwardBackward0", "AvgPool3DBackwardBackward0", "AdaptiveMaxPool3DBackwardBackward0",
             "AdaptiveAvgPool3DBackwardBackward0"}};
        mt_tensor *ins[2] = {grads[0], x};
        GIVE(c, out, 0, BWD(c, st, r, names[nsp == 3][kind], pool_double_backward, n, 2, ins, is_max, &ind));
    }
    return END(c, out, 1);
}

mt_status mt_pool(int kind, int nsp, mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                  const int64_t *d, int ceil, int count_include_pad, int64_t divisor, mt_tensor **out,
                  mt_tensor **indices) {
    MT_PROFILE(nsp == 3 ? MT_PROF_NAME(mt__names_pool3d, kind) : MT_PROF_NAME(mt__names_pool2d, kind), x);
    static const char *names[2][4] = {
        {"MaxPool2DWithIndicesBackward0", "AvgPool2DBackward0", "AdaptiveMaxPool2DBackward0", "AdaptiveAvgPool2DBackward0"},
        {"MaxPool3DWithIndicesBackward0", "AvgPool3DBackward0", "AdaptiveMaxPool3DBackward0", "AdaptiveAvgPool3DBackward0"}};
    if ((unsigned)kind >= MT_NUM_POOL) return mt__error(MT_ERR_VALUE, "unknown pooling %d", kind);
    if (nsp != 2 && nsp != 3) return mt__error(MT_ERR_VALUE, "pooling over %d dims: 2 or 3 expected", nsp);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int64_t zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    int adaptive = kind == MT_POOL_ADAPTIVE_MAX || kind == MT_POOL_ADAPTIVE_AVG;
    if (adaptive) s = one, p = zero, d = one;
    if (kind == MT_POOL_AVG) d = one;
    mt_tensor *ind = NULL;
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_pool(kind, nsp, x, k, s, p, d, ceil, count_include_pad, divisor, out, &ind);
    mt__grad_pop(prev);
    if (st) return st;
    if (grad) {
        mt_node *n;
        if (!(st = mt__record(names[nsp == 3][kind], pool_backward, 1, &x, 1, out, &n)) && n) {
            n->op = kind;
            n->iv[0] = nsp;
            for (int i = 0; i < nsp; i++)
                n->iv[POOL_IV_K + i] = k[i], n->iv[POOL_IV_S + i] = s[i], n->iv[POOL_IV_P + i] = p[i],
                n->iv[POOL_IV_D + i] = d[i];
            n->iv[POOL_IV_FLAGS] = ceil, n->iv[POOL_IV_FLAGS + 1] = count_include_pad, n->iv[POOL_IV_FLAGS + 2] = divisor;
            st = mt__save(n, 0, x, 0);
            if (!st && ind) st = mt__save(n, 1, ind, 0);
        }
    }
    if (st) { MT_DROP(*out); mt_tensor_release(ind); return st; }
    if (indices) *indices = ind;
    else mt_tensor_release(ind);
    return MT_OK;
}

/* ---- padding -------------------------------------------------------------------------- */

/* reflection/replication/circular pad backward is linear in the gradient: its derivative pads again */
static mt_status pad_double_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *r = NULL;
    if (needs(n, 0)) r = KEEP(c, mt_pad(grads[0], (int)n->iv[0], n->iv + 1, n->op, 0, &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 2);
}

static mt_status pad_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int npad = (int)n->iv[0], mode = n->op;
    const int64_t *pad = n->iv + 1;
    if (mode == MT_PAD_CONSTANT) { /* the gradient cropped: constant_pad_nd with the pads negated */
        int64_t neg[2 * MT_MAX_DIMS];
        for (int i = 0; i < npad; i++) neg[i] = -pad[i];
        mt_tensor *r = NULL;
        if (!c->st) r = KEEP(c, mt_pad(grads[0], npad, neg, MT_PAD_CONSTANT, 0, &r), r);
        GIVE(c, out, 0, r);
        return END(c, out, 1);
    }
    mt_tensor *x = SAVED(c, n, 0), *r = NULL;
    if (!c->st) {
        int prev = mt__grad_push(0);
        mt_status st = mt__impl_pad_backward(grads[0], x, npad, pad, mode, &r);
        mt__grad_pop(prev);
        /* PyTorch composes circular padding of slices; its backward node has no single name there */
        static const char *names[3][3] = {
            {"ReflectionPad1DBackwardBackward0", "ReflectionPad2DBackwardBackward0", "ReflectionPad3DBackwardBackward0"},
            {"ReplicationPad1DBackwardBackward0", "ReplicationPad2DBackwardBackward0", "ReplicationPad3DBackwardBackward0"},
            {"PadBackwardBackward0", "PadBackwardBackward0", "PadBackwardBackward0"}};
        int k = npad / 2;
        mt_tensor *ins[2] = {grads[0], x};
        GIVE(c, out, 0, BWD(c, st, r, names[mode - 1][k < 1 ? 0 : k > 3 ? 2 : k - 1], pad_double_backward, n, 2, ins, 0,
                            NULL));
    }
    return END(c, out, 1);
}

mt_status mt_pad(mt_tensor *x, int npad, const int64_t *pad, int mode, double value, mt_tensor **out) {
    MT_PROFILE(MT_PROF_NAME(mt__names_pad, mode), x);
    if (npad < 0 || npad > MT_MAX_DIMS)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "pad with more than %d padding values is not implemented", MT_MAX_DIMS);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_pad(x, npad, pad, mode, value, out);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_float(x->dtype)) return st;
    static const char *names[4][3] = {{"ConstantPadNdBackward0", "ConstantPadNdBackward0", "ConstantPadNdBackward0"},
                                      {"ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0"},
                                      {"ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0"},
                                      {"CopySlices", "CopySlices", "CopySlices"}}; /* circular: copies into slices */
    int k = npad / 2;
    mt_node *n;
    if (!(st = mt__record(names[mode][k < 1 ? 0 : k > 3 ? 2 : k - 1], pad_backward, 1, &x, 1, out, &n)) && n) {
        n->op = mode, n->iv[0] = npad;
        for (int i = 0; i < npad; i++) n->iv[1 + i] = pad[i];
        if (mode != MT_PAD_CONSTANT) st = mt__save(n, 0, x, 0);
    }
    if (st) MT_DROP(*out);
    return st;
}

/* ---- interpolation ------------------------------------------------------------------------ */

/* upsample backward is linear in the gradient: its derivative is the upsampling itself */
static mt_status upsample_double_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *r = NULL;
    if (needs(n, 0)) r = KEEP(c, mt_upsample(grads[0], n->op, (int)n->iv[0], n->iv + 2, n->s, (int)n->iv[1], &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status upsample_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *x = SAVED(c, n, 0), *r = NULL;
    int nd = (int)n->iv[0];
    if (!c->st) {
        int prev = mt__grad_push(0);
        mt_status st = mt__impl_upsample_backward(grads[0], x, n->op, nd, n->iv + 2, n->s, (int)n->iv[1], &r);
        mt__grad_pop(prev);
        static const char *names[MT_NUM_UPSAMPLE][2] = {
            {"UpsampleNearest1DBackwardBackward0", "UpsampleNearest2DBackwardBackward0"},
            {"UpsampleNearestExact1DBackwardBackward0", "UpsampleNearestExact2DBackwardBackward0"},
            {"UpsampleLinear1DBackwardBackward0", "UpsampleBilinear2DBackwardBackward0"},
            {"?", "UpsampleBilinear2DAaBackwardBackward0"},
            {"?", "UpsampleBicubic2DAaBackwardBackward0"},
            {"?", "UpsampleBicubic2DBackwardBackward0"}};
        mt_tensor *ins[1] = {grads[0]};
        GIVE(c, out, 0, BWD(c, st, r, names[n->op][nd - 1], upsample_double_backward, n, 1, ins, 0, NULL));
    }
    return END(c, out, 1);
}

mt_status mt_upsample(mt_tensor *x, int mode, int nd, const int64_t *osz, const double *scales, int align,
                      mt_tensor **out) {
    MT_PROFILE(MT_PROF_NAME(mt__names_upsample, mode), x);
    static const char *names[MT_NUM_UPSAMPLE][2] = {{"UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0"},
                                      {"UpsampleNearestExact1DBackward0", "UpsampleNearestExact2DBackward0"},
                                      {"UpsampleLinear1DBackward0", "UpsampleBilinear2DBackward0"},
                                      {"?", "UpsampleBilinear2DAaBackward0"},   /* antialias: 2-D only */
                                      {"?", "UpsampleBicubic2DAaBackward0"},
                                      {"?", "UpsampleBicubic2DBackward0"}};
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_upsample(x, mode, nd, osz, scales, align, out);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    if (!(st = mt__record(names[mode][nd - 1], upsample_backward, 1, &x, 1, out, &n)) && n) {
        n->op = mode, n->iv[0] = nd, n->iv[1] = align;
        for (int i = 0; i < nd; i++) n->iv[2 + i] = osz[i], n->s[i] = scales[i];
        st = mt__save(n, 0, x, 0);
    }
    if (st) MT_DROP(*out);
    return st;
}
