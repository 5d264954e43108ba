/* formulas_reduce.c — the autograd layer of the statistics/norm/scan/order-statistic
 * reductions, and prod's and nansum's formulas (recorded by mt_reduce in formulas.c).
 *
 * Reduction nodes keep formulas.c's layout: iv[1] keepdim, iv[2..2+niv) the dims
 * (niv = 0: every dim). Formulas follow PyTorch's derivatives.yaml / FunctionsManual. */
#include <float.h>

#include "formula.h"

mt_status mt__impl_var(mt_tensor *x, int ndims, const int64_t *dims, double correction, int keepdim, int take_sqrt,
                       mt_tensor **result, mt_tensor **mean);
mt_status mt__impl_vector_norm(mt_tensor *x, double p, int ndims, const int64_t *dims, int keepdim, int dtype,
                               mt_tensor **result);
mt_status mt__impl_logsumexp(mt_tensor *x, int ndims, const int64_t *dims, int keepdim, mt_tensor **result);
mt_status mt__impl_scan(int op, mt_tensor *x, int64_t dim, int dtype, int reverse, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_median(int op, mt_tensor *x, int has_dim, int64_t dim, int keepdim, mt_tensor **values,
                          mt_tensor **indices);
mt_status mt__impl_quantile(mt_tensor *x, mt_tensor *q, double qs, int has_dim, int64_t dim, int keepdim, int interp,
                            int ignore_nan, mt_tensor **result);
mt_status mt__prod_others(mt_tensor *x, int64_t dim, mt_tensor **out);
mt_status mt__cumprod_grad(mt_tensor *x, mt_tensor *g, int64_t dim, mt_tensor **out);

/* ---- helpers -------------------------------------------------------------------- */

static void set_dims(mt_node *n, int ndims, const int64_t *dims, int keepdim) {
    n->iv[1] = keepdim;
    n->niv = ndims > 0 ? ndims : 0;
    for (int i = 0; i < n->niv && i < MT_MAX_DIMS; i++) n->iv[2 + i] = dims[i];
}

static void reduced_of(const mt_node *n, int *red) {
    const mt_meta *m = &n->in_meta[0];
    for (int d = 0; d < m->ndim; d++) red[d] = n->niv == 0;
    for (int i = 0; i < n->niv; i++) {
        int64_t d = n->iv[2 + i];
        if (d < 0) d += m->ndim;
        if (d >= 0 && d < m->ndim) red[d] = 1;
    }
}

/* a reduced tensor reshaped so it broadcasts against the input (PyTorch's unsqueeze_multiple) */
static mt_tensor *KD(F *c, mt_node *n, mt_tensor *g) {
    if (!g || n->iv[1]) return g;
    mt_meta k = n->in_meta[0];
    int red[MT_MAX_DIMS];
    reduced_of(n, red);
    for (int d = 0; d < k.ndim; d++) if (red[d]) k.sizes[d] = 1;
    return RESHAPE(c, g, &k);
}

/* sum over the node's reduced dims, keeping them */
static mt_tensor *SUMK(F *c, mt_node *n, mt_tensor *t) {
    mt_tensor *r = NULL;
    int64_t dims[MT_MAX_DIMS];
    for (int i = 0; i < n->niv; i++) dims[i] = n->iv[2 + i];
    return OK2(t, 1) ? KEEP(c, mt_reduce(MT_RED_SUM, t, n->niv, dims, 1, -1, NULL, &r), r) : NULL;
}

static mt_tensor *EXPAND(F *c, mt_tensor *g, const mt_meta *m) {
    mt_tensor *r = NULL;
    return OK2(g, 1) ? KEEP(c, mt_expand(g, m->ndim, m->sizes, &r), r) : NULL;
}

static mt_tensor *TO(F *c, mt_tensor *t, int dtype) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_to_dtype(t, dtype, 0, &r), r) : NULL;
}

/* elements per output of the node's reduction */
static double count_of(const mt_node *n) {
    const mt_meta *m = &n->in_meta[0];
    int red[MT_MAX_DIMS];
    reduced_of(n, red);
    double cnt = 1;
    for (int d = 0; d < m->ndim; d++) if (red[d]) cnt *= (double)m->sizes[d];
    return cnt;
}

static int any_true(F *c, mt_tensor *mask) { /* host read of any(mask) */
    mt_tensor *r = NULL;
    double f = 0;
    int64_t i = 0;
    if (!OK2(mask, 1) || mask->device == MT_META) return 0; /* meta: no values, the general formula */
    r = KEEP(c, mt_reduce(MT_RED_ANY, mask, 0, NULL, 0, -1, NULL, &r), r);
    if (r && !c->st) c->st = mt_item(r, &f, &i);
    return !c->st && i != 0;
}

static int creating_graph(mt_tensor *const *ts, int n) {
    if (!mt__grad_enabled()) return 0;
    for (int i = 0; i < n; i++) if (ts[i] && mt__requires_grad(ts[i])) return 1;
    return 0;
}

static mt_status no_double_backward(F *c, const char *name) {
    return c->st = mt__error(MT_ERR_NOT_IMPLEMENTED, "double backward through %s where the input has zeros is not "
                                                     "implemented yet", name);
}

/* ---- prod and nansum (recorded by mt_reduce) ------------------------------------------ */

/* saved: 0 input, 1 result */
mt_status mt__prod_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    const mt_meta *m = &n->in_meta[0];
    mt_tensor *x = SAVED(c, n, 0), *y = KD(c, n, SAVED(c, n, 1)), *g = KD(c, n, grads[0]);
    if (c->st) return END(c, out, 1);
    if (m->ndim == 0) { GIVE(c, out, 0, g); return END(c, out, 1); }
    if (!any_true(c, BS(c, MT_OP_EQ, x, 0.0))) {
        GIVE(c, out, 0, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, B(c, MT_OP_DIV, y, x)))); /* conj: complex only */
        return END(c, out, 1);
    }
    mt_tensor *ins[2] = {x, g};
    if (creating_graph(ins, 2)) { no_double_backward(c, n->name); return END(c, out, 1); }
    /* product of the other elements along the line (the whole tensor, flattened, for prod()) */
    mt_tensor *others = NULL, *xl = x;
    int64_t dim = n->niv ? n->iv[2] : 0;
    if (n->niv == 0) {
        mt_meta flat = {.ndim = 1, .dtype = m->dtype, .sizes = {mt__numel(m->ndim, m->sizes)}};
        xl = RESHAPE(c, x, &flat);
    }
    if (!c->st) others = KEEP(c, mt__prod_others(xl, dim, &others), others);
    if (n->niv == 0) others = RESHAPE(c, others, m);
    GIVE(c, out, 0, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, others)));
    return END(c, out, 1);
}

mt_status mt__nansum_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *x = SAVED(c, n, 0), *g = EXPAND(c, KD(c, n, grads[0]), &n->in_meta[0]);
    GIVE(c, out, 0, WHERE(c, U(c, MT_OP_ISNAN, x), SCALAR(c, 0.0), g));
    return END(c, out, 1);
}

/* ---- var / std / var_mean / std_mean ---------------------------------------------------- */

/* saved: 0 result (var or std: a saved output's slot is its output number), 1 input;
 * s[0] correction, iv[0] take_sqrt */
static mt_status var_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    const mt_meta *m = &n->in_meta[0];
    mt_tensor *x = SAVED(c, n, 1), *g = KD(c, n, grads[0]);
    double N = count_of(n);
    if (n->iv[0]) { /* std: grad / (2 std), 0 where std == 0 */
        mt_tensor *y = KD(c, n, SAVED(c, n, 0));
        g = WHERE(c, BS(c, MT_OP_EQ, y, 0.0), SCALAR(c, 0.0), B(c, MT_OP_DIV, g, BS(c, MT_OP_MUL, y, 2.0)));
    }
    mt_tensor *mean = BS(c, MT_OP_DIV, SUMK(c, n, x), N);
    mt_tensor *r = BS(c, MT_OP_MUL, B(c, MT_OP_MUL, g, B(c, MT_OP_SUB, x, mean)), 2.0 / (N - n->s[0]));
    if (n->n_out == 2) /* the mean's gradient: spread evenly */
        r = B(c, MT_OP_ADD, r, BS(c, MT_OP_DIV, EXPAND(c, KD(c, n, grads[1]), m), N));
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

/* complex: the variances of the real and imaginary parts summed (PyTorch's definition), composed of
 * recorded ops so the gradient follows; the mean is the complex mean */
static mt_status complex_var(mt_tensor *x, int ndims, const int64_t *dims, double correction, int keepdim,
                             int take_sqrt, mt_tensor **result, mt_tensor **mean) {
    mt_tensor *re = NULL, *im = NULL, *vr = NULL, *vi = NULL, *v = NULL;
    mt_status st = mt_unary(MT_OP_REAL, x, NULL, &re);
    if (!st) st = mt_unary(MT_OP_IMAG, x, NULL, &im);
    if (!st) st = mt_var(re, ndims, dims, correction, keepdim, 0, &vr, NULL);
    if (!st) st = mt_var(im, ndims, dims, correction, keepdim, 0, &vi, NULL);
    if (!st) st = mt_binary(MT_OP_ADD, vr, vi, 1, NULL, take_sqrt ? &v : result);
    if (!st && take_sqrt) st = mt_unary(MT_OP_SQRT, v, NULL, result);
    if (!st && mean && (st = mt_reduce(MT_RED_MEAN, x, ndims, dims, keepdim, -1, NULL, mean))) MT_DROP(*result);
    mt_tensor_release(re); mt_tensor_release(im); mt_tensor_release(vr); mt_tensor_release(vi); mt_tensor_release(v);
    return st;
}

mt_status mt_var(mt_tensor *x, int ndims, const int64_t *dims, double correction, int keepdim, int take_sqrt,
                 mt_tensor **result, mt_tensor **mean) {
    MT_PROFILE(mean ? (take_sqrt ? "std_mean" : "var_mean") : take_sqrt ? "std" : "var", x);
    if (mt__is_complex(x->dtype)) return complex_var(x, ndims, dims, correction, keepdim, take_sqrt, result, mean);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_var(x, ndims, dims, correction, keepdim, take_sqrt, result, mean);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_tensor *outs[2] = {*result, mean ? *mean : NULL};
    const char *name = mean ? (take_sqrt ? "StdMeanBackward0" : "VarMeanBackward0") : (take_sqrt ? "StdBackward0" : "VarBackward0");
    mt_node *n;
    st = mt__record(name, var_backward, 1, &x, mean ? 2 : 1, outs, &n);
    if (!st && n) {
        set_dims(n, ndims, dims, keepdim);
        n->iv[0] = take_sqrt;
        n->s[0] = correction;
        st = mt__save(n, 1, x, 0);
        if (!st) st = mt__save(n, 0, *result, 1);
    }
    if (st) { MT_DROP(*result); if (mean) MT_DROP(*mean); }
    return st;
}

/* ---- vector norm ------------------------------------------------------------------------ */

/* saved: 0 input, 1 result; s[0] ord */
static mt_status norm_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    double p = n->s[0];
    mt_tensor *x = SAVED(c, n, 0), *y = KD(c, n, SAVED(c, n, 1)), *g = KD(c, n, grads[0]), *zero = SCALAR(c, 0.0), *r;
    if (p == 0) {
        r = NULL; /* PyTorch's formula gives an undefined gradient: the input gets none */
    } else if (p == 1) {
        r = B(c, MT_OP_MUL, U(c, MT_OP_SIGN, x), g);
    } else if (p == 2) {
        r = B(c, MT_OP_MUL, g, WHERE(c, BS(c, MT_OP_EQ, y, 0.0), zero, B(c, MT_OP_DIV, x, y)));
    } else if (isinf(p)) { /* shared by the extremes (and NaNs) */
        mt_tensor *ax = U(c, MT_OP_ABS, x);
        mt_tensor *mask = TO(c, B(c, MT_OP_LOGICAL_OR, B(c, MT_OP_EQ, ax, y), U(c, MT_OP_ISNAN, ax)), x ? x->dtype : MT_F32);
        r = B(c, MT_OP_MUL, U(c, MT_OP_SIGN, x), B(c, MT_OP_MUL, B(c, MT_OP_DIV, g, SUMK(c, n, mask)), mask));
    } else if (p < 1) {
        mt_tensor *s = B(c, MT_OP_MUL, U(c, MT_OP_SIGN, x),
                         WHERE(c, BS(c, MT_OP_EQ, x, 0.0), zero, BS(c, MT_OP_POW, U(c, MT_OP_ABS, x), p - 1)));
        r = B(c, MT_OP_MUL, B(c, MT_OP_MUL, s, g), BS(c, MT_OP_POW, y, 1 - p));
    } else {
        mt_tensor *s = p < 2 ? B(c, MT_OP_MUL, U(c, MT_OP_SIGN, x), BS(c, MT_OP_POW, U(c, MT_OP_ABS, x), p - 1))
                             : B(c, MT_OP_MUL, x, BS(c, MT_OP_POW, U(c, MT_OP_ABS, x), p - 2));
        mt_tensor *sv = WHERE(c, BS(c, MT_OP_EQ, y, 0.0), zero, B(c, MT_OP_DIV, g, BS(c, MT_OP_POW, y, p - 1)));
        r = B(c, MT_OP_MUL, s, sv);
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

mt_status mt_vector_norm(mt_tensor *x, double ord, int ndims, const int64_t *dims, int keepdim, int dtype,
                         mt_tensor **result) {
    MT_PROFILE("linalg_vector_norm", x);
    if (dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_VALUE, "linalg.vector_norm: unknown dtype %d", dtype);
    if (mt__is_complex(x->dtype)) { /* the norm of |x|, in the real dtype of dtype= */
        if (dtype >= 0 && !mt__is_complex(dtype))
            return mt__error(MT_ERR_RUNTIME, "linalg.vector_norm: dtype should be complex for complex inputs, but got %s",
                             mt_dtype_names[dtype]);
        mt_tensor *a;
        MT_TRY(mt_unary(MT_OP_ABS, x, NULL, &a));
        mt_status st = mt_vector_norm(a, ord, ndims, dims, keepdim, dtype >= 0 ? mt__complex_to_real(dtype) : -1, result);
        mt_tensor_release(a);
        return st;
    }
    if (dtype >= 0 && mt__is_complex(dtype))
        return mt__error(MT_ERR_RUNTIME, "linalg.vector_norm: dtype should be real for real inputs, but got %s",
                         mt_dtype_names[dtype]);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_vector_norm(x, ord, ndims, dims, keepdim, dtype, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    st = mt__record("LinalgVectorNormBackward0", norm_backward, 1, &x, 1, result, &n);
    if (!st && n) {
        set_dims(n, ndims, dims, keepdim);
        n->s[0] = ord;
        st = mt__save(n, 0, x, 0);
        if (!st) st = mt__save(n, 1, *result, 1);
    }
    if (st) MT_DROP(*result);
    return st;
}

/* ---- logsumexp ---------------------------------------------------------------------------- */

static mt_status logsumexp_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *x = SAVED(c, n, 0), *y = KD(c, n, SAVED(c, n, 1)), *g = KD(c, n, grads[0]);
    GIVE(c, out, 0, B(c, MT_OP_MUL, g, U(c, MT_OP_EXP, B(c, MT_OP_SUB, x, y))));
    return END(c, out, 1);
}

mt_status mt_logsumexp(mt_tensor *x, int ndims, const int64_t *dims, int keepdim, mt_tensor **result) {
    MT_PROFILE("logsumexp", x);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_logsumexp(x, ndims, dims, keepdim, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    st = mt__record("LogsumexpBackward0", logsumexp_backward, 1, &x, 1, result, &n);
    if (!st && n) {
        set_dims(n, ndims, dims, keepdim);
        st = mt__save(n, 0, x, 0);
        if (!st) st = mt__save(n, 1, *result, 1);
    }
    if (st) MT_DROP(*result);
    return st;
}

/* ---- scans ------------------------------------------------------------------------------------ */

static mt_status scan_rec(int op, mt_tensor *x, int64_t dim, int dtype, int reverse, mt_tensor *out, mt_tensor **result);

static mt_tensor *SCAN(F *c, int op, mt_tensor *x, int64_t dim, int reverse) {
    mt_tensor *r = NULL;
    return OK2(x, 1) ? KEEP(c, scan_rec(op, x, dim, -1, reverse, NULL, &r), r) : NULL;
}

static double lowest(int dtype) {
    switch (dtype) {
    case MT_F16: return -65504.0;
    case MT_BF16: return -3.3895313892515355e38;
    case MT_F32: return -FLT_MAX;
    }
    return -DBL_MAX;
}

/* iv[0] dim, iv[1] reverse; saved: 0 input, 1 result */
static mt_status scan_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    const mt_meta *m = &n->in_meta[0];
    int64_t dim = n->iv[0];
    int back = !n->iv[1]; /* the gradient runs the other way along dim */
    mt_tensor *g = grads[0], *r = NULL;
    if (m->ndim == 0) { GIVE(c, out, 0, g); return END(c, out, 1); }
    switch (n->op) {
    case MT_SCAN_CUMSUM: r = SCAN(c, MT_SCAN_CUMSUM, g, dim, back); break;
    case MT_SCAN_CUMPROD: {
        /* complex: the conjugates (PyTorch's cumprod_backward; conj: the identity on reals) */
        mt_tensor *x = U(c, MT_OP_CONJ, SAVED(c, n, 0)), *y = U(c, MT_OP_CONJ, SAVED(c, n, 1));
        if (n->iv[1]) { c->st = mt__error(MT_ERR_NOT_IMPLEMENTED, "reversed cumprod backward"); break; }
        if (!any_true(c, BS(c, MT_OP_EQ, x, 0.0))) {
            r = B(c, MT_OP_DIV, SCAN(c, MT_SCAN_CUMSUM, B(c, MT_OP_MUL, g, y), dim, 1), x);
            break;
        }
        mt_tensor *ins[2] = {x, g};
        if (creating_graph(ins, 2)) { no_double_backward(c, n->name); break; }
        if (!c->st) r = KEEP(c, mt__cumprod_grad(x, g, dim, &r), r);
        break;
    }
    case MT_SCAN_LOGCUMSUMEXP: {
        mt_tensor *x = SAVED(c, n, 0), *y = SAVED(c, n, 1);
        if (m->sizes[dim] == 1) { r = g; break; }
        if (mt__is_complex(m->dtype)) { /* one log of the conjugate gradient: no sign split (PyTorch's) */
            mt_tensor *lg = B(c, MT_OP_SUB, U(c, MT_OP_LOG, U(c, MT_OP_CONJ, g)), y);
            r = U(c, MT_OP_CONJ, U(c, MT_OP_EXP, B(c, MT_OP_ADD, SCAN(c, MT_SCAN_LOGCUMSUMEXP, lg, dim, back), x)));
            break;
        }
        mt_tensor *lo = SCALAR(c, lowest(m->dtype)), *la = U(c, MT_OP_LOG, U(c, MT_OP_ABS, g));
        mt_tensor *lpos = WHERE(c, BS(c, MT_OP_GT, g, 0.0), la, lo), *lneg = WHERE(c, BS(c, MT_OP_LT, g, 0.0), la, lo);
        mt_tensor *pos = U(c, MT_OP_EXP, B(c, MT_OP_ADD, SCAN(c, MT_SCAN_LOGCUMSUMEXP, B(c, MT_OP_SUB, lpos, y), dim, back), x));
        mt_tensor *neg = U(c, MT_OP_EXP, B(c, MT_OP_ADD, SCAN(c, MT_SCAN_LOGCUMSUMEXP, B(c, MT_OP_SUB, lneg, y), dim, back), x));
        r = B(c, MT_OP_SUB, pos, neg);
        break;
    }
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status scan_rec(int op, mt_tensor *x, int64_t dim, int dtype, int reverse, mt_tensor *out, mt_tensor **result) {
    static const char *names[] = {"CumsumBackward0", "CumprodBackward0", "LogcumsumexpBackward0"};
    int grad = mt__grad_enabled() && (mt__requires_grad(x) || (out && mt__requires_grad(out)));
    if (grad && out) {
        if (out != x) return out_arg_error(op == MT_SCAN_CUMSUM ? "cumsum" : op == MT_SCAN_CUMPROD ? "cumprod" : "logcumsumexp");
        MT_TRY(mt__check_inplace(out)); /* in place: computed out of place, copied in, history rebased */
        mt_tensor *r;
        MT_TRY(scan_rec(op, x, dim, dtype, reverse, NULL, &r));
        mt_status st = unalias_saved(r->grad_fn, out);
        int prev = mt__grad_push(0);
        if (!st) st = mt__impl_copy_(out, r);
        mt__grad_pop(prev);
        if (!st) mt__rebase(out, r);
        mt_tensor_release(r);
        if (st) return st;
        mt_tensor_retain(out);
        *result = out;
        return MT_OK;
    }
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_scan(op, x, dim, dtype, reverse, out, result);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_differentiable((*result)->dtype)) return st;
    mt_node *n;
    st = mt__record(names[op], scan_backward, 1, &x, 1, result, &n);
    if (!st && n) {
        int64_t d = dim;
        mt__wrap_dim(&d, x->ndim);
        n->op = op;
        n->iv[0] = d;
        n->iv[1] = reverse;
        if (op != MT_SCAN_CUMSUM) {
            st = mt__save(n, 0, x, 0);
            if (!st) st = mt__save(n, 1, *result, 1);
        }
    }
    if (st) MT_DROP(*result);
    return st;
}

mt_status mt_scan(int op, mt_tensor *x, int64_t dim, int dtype, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE(MT_PROF_NAME(mt__names_scan, op), x);
    return scan_rec(op, x, dim, dtype, 0, out, result);
}

/* ---- median / nanmedian / mode -------------------------------------------------------------- */

/* along a dim: the gradient goes to the selected index (saved 0: indices; iv[0] dim) */
static mt_status select_dim_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    const mt_meta *m = &n->in_meta[0];
    mt_tensor *g = KD(c, n, grads[0]), *idx = KD(c, n, SAVED(c, n, 0));
    int64_t dim = n->iv[0];
    mt_tensor *ar = NULL;
    if (!c->st) ar = KEEP(c, mt_arange(0, (double)(m->ndim ? m->sizes[dim] : 1), 1, MT_I64, MT_CPU, &ar), ar);
    mt_meta shape = {.ndim = m->ndim, .dtype = MT_I64};
    for (int d = 0; d < m->ndim; d++) shape.sizes[d] = d == dim ? m->sizes[d] : 1;
    GIVE(c, out, 0, WHERE(c, B(c, MT_OP_EQ, RESHAPE(c, ar, &shape), idx), g, SCALAR(c, 0.0)));
    return END(c, out, 1);
}

/* of all elements: shared evenly by the elements equal to the result (NaN: by the NaNs) */
static mt_status select_all_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *x = SAVED(c, n, 0), *y = SAVED(c, n, 1);
    mt_tensor *mask = any_true(c, U(c, MT_OP_ISNAN, y)) ? U(c, MT_OP_ISNAN, x) : B(c, MT_OP_EQ, x, y);
    mt_tensor *cnt = TO(c, SUMK(c, n, mask), grads[0] ? grads[0]->dtype : MT_F32);
    mt_tensor *share = cnt ? RESHAPE(c, cnt, &(mt_meta){.ndim = 0}) : NULL;
    GIVE(c, out, 0, WHERE(c, mask, B(c, MT_OP_DIV, grads[0], share), SCALAR(c, 0.0)));
    return END(c, out, 1);
}

mt_status mt_median(int op, mt_tensor *x, int has_dim, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices) {
    MT_PROFILE(MT_PROF_NAME(mt__names_select, op), x);
    has_dim = has_dim != 0; /* it indexes name tables */
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_median(op, x, has_dim, dim, keepdim, values, indices);
    mt__grad_pop(prev);
    if (st || !grad || !mt__is_differentiable(x->dtype)) return st;
    static const char *names[2][3] = {{"MedianBackward0", "NanmedianBackward0", "ModeBackward0"},
                                      {"MedianBackward1", "NanmedianBackward1", "ModeBackward0"}};
    mt_node *n;
    st = mt__record(names[has_dim][op], has_dim ? select_dim_backward : select_all_backward, 1, &x, 1, values, &n);
    if (!st && n) {
        if (has_dim) {
            int64_t d = dim;
            mt__wrap_dim(&d, x->ndim);
            n->iv[0] = x->ndim ? d : 0;
            n->iv[1] = keepdim;
            n->niv = x->ndim ? 1 : 0;
            n->iv[2] = n->iv[0];
            st = mt__save(n, 0, *indices, 0);
        } else {
            n->iv[1] = 0;
            n->niv = 0;
            st = mt__save(n, 0, x, 0);
            if (!st) st = mt__save(n, 1, *values, 1);
        }
    }
    if (st) { MT_DROP(*values); if (has_dim) MT_DROP(*indices); }
    return st;
}

mt_status mt_quantile(mt_tensor *x, mt_tensor *q, double qs, int has_dim, int64_t dim, int keepdim, int interpolation,
                      int ignore_nan, mt_tensor **result) {
    MT_PROFILE(ignore_nan ? "nanquantile" : "quantile", x, q);
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_quantile(x, q, qs, has_dim, dim, keepdim, interpolation, ignore_nan, result);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n; /* PyTorch composes quantile from sort/lerp; its gradient is not built here yet */
    st = mt__record(ignore_nan ? "nanquantile" : "quantile", no_formula, 1, &x, 1, result, &n);
    if (st) MT_DROP(*result);
    return st;
}
