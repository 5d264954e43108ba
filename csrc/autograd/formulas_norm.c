/* formulas_norm.c — the autograd layer of batch_norm and group_norm (kernels/cpu/norm_batch.c):
 * NativeBatchNormBackward0 and NativeGroupNormBackward0 with PyTorch's closed forms, written with
 * public ops. With create_graph the statistics are recomputed from x by ops, so the second
 * derivative sees how they depend on x; otherwise the forward's saved ones are used. */
#include "../kernels/cpu/nn.h"
#include "formula.h"

/* float16/bfloat16 in float32, as the forward computed (others as they are) */
static mt_tensor *WIDE(F *c, mt_tensor *t) {
    mt_tensor *r = NULL;
    if (!OK2(t, 1) || (t->dtype != MT_F16 && t->dtype != MT_BF16)) return t;
    return KEEP(c, mt_to_dtype(t, MT_F32, 0, &r), r);
}
static mt_tensor *VIEW(F *c, mt_tensor *t, int nd, const int64_t *sz) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_reshape(t, nd, sz, &r), r) : NULL;
}

/* mean and 1/sqrt(var + eps) of x over dims (kept), by ops */
static void stats(F *c, mt_tensor *x, int nd, const int64_t *dims, double eps, mt_tensor **mean, mt_tensor **invstd) {
    *mean = REDUCE(c, MT_RED_MEAN, x, nd, dims, 1);
    mt_tensor *xm = B(c, MT_OP_SUB, x, *mean);
    *invstd = U(c, MT_OP_RSQRT, BS(c, MT_OP_ADD, REDUCE(c, MT_RED_MEAN, B(c, MT_OP_MUL, xm, xm), nd, dims, 1), eps));
}

/* ---- batch_norm --------------------------------------------------------------------------------- */

/* inputs x, weight, bias; saved 0 x, 1 weight, 2 running_mean, 3 running_var, 4 save_mean,
 * 5 save_invstd; iv[0] training; s[0] eps. gx = w invstd (g - mean(g) - xhat mean(g xhat)) in
 * training, g w invstd_running in eval; gw = sum(g xhat); gb = sum(g). */
static mt_status batch_norm_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *x = WIDE(c, SAVED(c, n, 0)), *w = has_saved(n, 1) ? SAVED(c, n, 1) : NULL;
    if (c->st) return END(c, out, 3);
    int nd = x->ndim, training = (int)n->iv[0];
    int64_t dims[MT_MAX_DIMS], shape[MT_MAX_DIMS], nred = 0, C = x->sizes[1];
    for (int d = 0; d < nd; d++) {
        if (d != 1) dims[nred++] = d;
        shape[d] = d == 1 ? C : 1;
    }
    mt_tensor *mean, *invstd;
    if (training && mt__grad_enabled()) {
        stats(c, x, (int)nred, dims, n->s[0], &mean, &invstd);
    } else if (training) {
        mean = VIEW(c, SAVED(c, n, 4), nd, shape), invstd = VIEW(c, SAVED(c, n, 5), nd, shape);
    } else {
        mean = VIEW(c, SAVED(c, n, 2), nd, shape);
        invstd = U(c, MT_OP_RSQRT, BS(c, MT_OP_ADD, VIEW(c, SAVED(c, n, 3), nd, shape), n->s[0]));
    }
    mt_tensor *xhat = B(c, MT_OP_MUL, B(c, MT_OP_SUB, x, mean), invstd);
    mt_tensor *wb = w ? VIEW(c, w, nd, shape) : NULL;
    if (needs(n, 0)) {
        mt_tensor *scale = wb ? B(c, MT_OP_MUL, invstd, wb) : invstd, *gx;
        if (training) {
            mt_tensor *t = B(c, MT_OP_SUB, g, REDUCE(c, MT_RED_MEAN, g, (int)nred, dims, 1));
            gx = B(c, MT_OP_SUB, t, B(c, MT_OP_MUL, xhat, REDUCE(c, MT_RED_MEAN, B(c, MT_OP_MUL, g, xhat), (int)nred, dims, 1)));
            gx = B(c, MT_OP_MUL, gx, scale);
        } else {
            gx = B(c, MT_OP_MUL, g, scale);
        }
        GIVE(c, out, 0, gx);
    }
    if (needs(n, 1)) GIVE(c, out, 1, REDUCE(c, MT_RED_SUM, B(c, MT_OP_MUL, g, xhat), (int)nred, dims, 0));
    if (needs(n, 2)) GIVE(c, out, 2, REDUCE(c, MT_RED_SUM, g, (int)nred, dims, 0));
    return END(c, out, 3);
}

mt_status mt_batch_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, mt_tensor *running_mean,
                        mt_tensor *running_var, int training, double momentum, double eps, mt_tensor **out,
                        mt_tensor **save_mean, mt_tensor **save_invstd) {
    MT_PROFILE("batch_norm", x, weight, bias, running_mean, running_var);
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || mt__requires_grad(weight) || mt__requires_grad(bias));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps, out,
                                       save_mean, save_invstd);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_float(x->dtype)) return st;
    mt_tensor *ins[3] = {x, weight, bias};
    mt_node *n;
    st = mt__record("NativeBatchNormBackward0", batch_norm_bw, 3, ins, 1, out, &n);
    if (!st && n) {
        n->iv[0] = training;
        n->s[0] = eps;
        mt_tensor *saved[6] = {x, weight, running_mean, running_var, *save_mean, *save_invstd};
        for (int k = 0; k < 6 && !st; k++) st = mt__save(n, k, saved[k], 0);
    }
    if (st) { MT_DROP(*out); MT_DROP(*save_mean); MT_DROP(*save_invstd); }
    return st;
}

/* ---- group_norm ----------------------------------------------------------------------------------- */

/* inputs x, weight, bias; saved 0 x, 1 weight, 2 mean, 3 rstd ([N, G]); iv[0] groups; s[0] eps.
 * Over each group's M elements: gx = rstd (gy - mean(gy) - xhat mean(gy xhat)) with gy = g w. */
static mt_status group_norm_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *x = WIDE(c, SAVED(c, n, 0)), *w = has_saved(n, 1) ? SAVED(c, n, 1) : NULL;
    if (c->st) return END(c, out, 3);
    int nd = x->ndim;
    int64_t N = x->sizes[0], C = x->sizes[1], G = n->iv[0], S = 1, last = 2;
    for (int d = 2; d < nd; d++) S = mt__wmul(S, x->sizes[d]); /* wraps only when a size is 0 */
    int64_t grp[3] = {N, G, C / G * S};
    int64_t shape[MT_MAX_DIMS], dims[MT_MAX_DIMS], nred = 0;
    for (int d = 0; d < nd; d++) {
        shape[d] = d == 1 ? C : 1;
        if (d != 1) dims[nred++] = d;
    }
    mt_tensor *xg = VIEW(c, x, 3, grp), *mean, *rstd;
    if (mt__grad_enabled()) {
        stats(c, xg, 1, &last, n->s[0], &mean, &rstd);
    } else {
        int64_t ms[3] = {N, G, 1};
        mean = VIEW(c, SAVED(c, n, 2), 3, ms), rstd = VIEW(c, SAVED(c, n, 3), 3, ms);
    }
    mt_tensor *xhat = B(c, MT_OP_MUL, B(c, MT_OP_SUB, xg, mean), rstd);
    mt_tensor *gy = w ? B(c, MT_OP_MUL, g, VIEW(c, w, nd, shape)) : g;
    if (needs(n, 0)) {
        mt_tensor *gyg = VIEW(c, gy, 3, grp);
        mt_tensor *t = B(c, MT_OP_SUB, gyg, REDUCE(c, MT_RED_MEAN, gyg, 1, &last, 1));
        t = B(c, MT_OP_SUB, t, B(c, MT_OP_MUL, xhat, REDUCE(c, MT_RED_MEAN, B(c, MT_OP_MUL, gyg, xhat), 1, &last, 1)));
        GIVE(c, out, 0, c->st ? NULL : VIEW(c, B(c, MT_OP_MUL, t, rstd), nd, x->sizes));
    }
    if (needs(n, 1)) {
        mt_tensor *xh = c->st ? NULL : VIEW(c, xhat, nd, x->sizes);
        GIVE(c, out, 1, REDUCE(c, MT_RED_SUM, B(c, MT_OP_MUL, g, xh), (int)nred, dims, 0));
    }
    if (needs(n, 2)) GIVE(c, out, 2, REDUCE(c, MT_RED_SUM, g, (int)nred, dims, 0));
    return END(c, out, 3);
}

mt_status mt_group_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, int64_t groups, double eps,
                        mt_tensor **out, mt_tensor **mean, mt_tensor **rstd) {
    MT_PROFILE("group_norm", x, weight, bias);
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || mt__requires_grad(weight) || mt__requires_grad(bias));
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_group_norm(x, weight, bias, groups, eps, out, mean, rstd);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_float(x->dtype)) return st;
    mt_tensor *ins[3] = {x, weight, bias};
    mt_node *n;
    st = mt__record("NativeGroupNormBackward0", group_norm_bw, 3, ins, 1, out, &n);
    if (!st && n) {
        n->iv[0] = groups;
        n->s[0] = eps;
        mt_tensor *saved[4] = {x, weight, *mean, *rstd};
        for (int k = 0; k < 4 && !st; k++) st = mt__save(n, k, saved[k], 0);
    }
    if (st) { MT_DROP(*out); MT_DROP(*mean); MT_DROP(*rstd); }
    return st;
}
