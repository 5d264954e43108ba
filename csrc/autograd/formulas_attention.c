/* formulas_attention.c — F.scaled_dot_product_attention as PyTorch 2.13 runs it on CPU:
 * validate_sdpa_input, the backend choice of select_sdp_backend_cpp, then either the fused
 * kernel (kernels/cpu/attention.c) recorded as ScaledDotProductFlashAttentionForCpuBackward0,
 * or _scaled_dot_product_attention_math composed of public ops (so its graph is PyTorch's:
 * matmuls, the in-place mask add, SafeSoftmaxBackward0, dropout), or, for an empty input,
 * PyTorch's zeros + 0 * (q.sum() + k.sum() + v.sum()). */
#include "../kernels/cpu/nn.h"
#include "formula.h"

static const char *cpp_name(int dt) { return mt__typemeta_names[dt]; } /* as PyTorch prints dtypes here */
static int64_t sz(const mt_tensor *t, int d) { return t->sizes[t->ndim + d]; } /* d < 0 */

/* ---- _safe_softmax: softmax with rows that are all -inf set to 0 ------------------------ */

static mt_status safe_softmax_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *y = SAVED(c, n, 0), *r = NULL;
    if (y) KEEP(c, mt_softmax_backward(grads[0], y, n->iv[0], 0, &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status safe_softmax(mt_tensor *x, mt_tensor **out) {
    int grad = mt__grad_enabled() && mt__requires_grad(x);
    int prev = mt__grad_push(0);
    F c0 = {0}, *c = &c0;
    int64_t dim = x->ndim - 1;
    mt_tensor *y = NULL, *all = NULL, *z = NULL, *r = NULL;
    KEEP(c, mt_softmax(x, -1, 0, -1, &y), y);
    mt_tensor *masked = BS(c, MT_OP_EQ, x, -INFINITY);
    if (masked) KEEP(c, mt_reduce(MT_RED_ALL, masked, 1, &dim, 1, -1, NULL, &all), all);
    if (y) KEEP(c, mt_scalar_tensor(0, 0, MT_SCALAR_FLOAT, y->dtype, 0, &z), z);
    r = WHERE(c, all, z, y);
    GIVE(c, out, 0, r);
    mt_status st = END(c, out, 1);
    mt__grad_pop(prev);
    if (st || !grad) return st;
    mt_node *n;
    if (!(st = mt__record("SafeSoftmaxBackward0", safe_softmax_bw, 1, &x, 1, out, &n)) && n) {
        n->iv[0] = dim;
        st = mt__save(n, 0, *out, 1);
    }
    if (st) { MT_DROP(*out); }
    return st;
}

/* ---- the math path ---------------------------------------------------------------------- */

static mt_tensor *TO(F *c, mt_tensor *t, int dtype) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_to_dtype(t, dtype, 0, &r), r) : NULL;
}
/* convert_boolean_attn_mask: where(mask.logical_not(), -inf, scalar_tensor(0.0, dtype)) */
static mt_tensor *BOOL_TO_ADD(F *c, mt_tensor *m, int dtype) {
    mt_tensor *z = NULL, *ninf = NULL;
    if (c->st) return NULL;
    KEEP(c, mt_scalar_tensor(0, 0, MT_SCALAR_FLOAT, dtype, 0, &z), z);
    KEEP(c, mt_scalar_tensor(-INFINITY, 0, MT_SCALAR_FLOAT, MT_F64, 1, &ninf), ninf);
    return WHERE(c, U(c, MT_OP_LOGICAL_NOT, m), ninf, z);
}
/* repeat_interleave(t, rep, dim=-3) as PyTorch composes it: unsqueeze, expand, clone, flatten */
static mt_tensor *REPEAT_HEADS(F *c, mt_tensor *t, int64_t rep) {
    mt_tensor *u = NULL, *e = NULL, *cl = NULL, *r = NULL;
    if (!OK2(t, 1)) return NULL;
    int nd = t->ndim, d = nd - 3;
    int64_t es[MT_MAX_DIMS], fs[MT_MAX_DIMS];
    for (int i = 0, j = 0; i <= nd; i++) es[i] = i == d + 1 ? rep : t->sizes[j++];
    for (int i = 0; i < nd; i++) fs[i] = i == d ? t->sizes[d] * rep : t->sizes[i];
    KEEP(c, mt_unsqueeze(t, d + 1, &u), u);
    if (u) KEEP(c, mt_expand(u, nd + 1, es, &e), e);
    if (e) KEEP(c, mt_clone(e, &cl), cl);
    if (cl) KEEP(c, mt_reshape(cl, nd, fs, &r), r);
    return r;
}

static mt_status sdpa_math(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask, double dropout_p,
                           int causal, int has_scale, double scale, int gqa, struct mt_generator *g, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int origin = q->dtype, low = origin == MT_F16 || origin == MT_BF16;
    mt_tensor *m = mask && mask->dtype == MT_BOOL ? BOOL_TO_ADD(c, mask, origin) : mask;
    mt_tensor *qa = low ? TO(c, q, MT_F32) : q, *ka = low ? TO(c, k, MT_F32) : k, *va = low ? TO(c, v, MT_F32) : v;
    if (c->st) return END(c, out, 1);
    int neg = has_scale && scale < 0;
    double sf = sqrt(has_scale ? fabs(scale) : 1.0 / sqrt((double)sz(q, -1)));
    mt_tensor *query = BS(c, MT_OP_MUL, qa, neg ? 0.0 - sf : sf);
    if (causal) {
        if (m) {
            c->st = mt__error(MT_ERR_RUNTIME, "_scaled_dot_product_attention: Explicit attn_mask should not be set "
                              "when is_causal=True");
            return END(c, out, 1);
        }
        int64_t ls[2] = {sz(q, -2), sz(k, -2)};
        mt_tensor *ones = NULL, *tri = NULL;
        mt_status st = mt_empty(2, ls, MT_BOOL, q->device, &ones);
        if (!st) st = mt_fill(ones, 0, 1, MT_SCALAR_INT);
        keep(c, st, ones);
        if (ones) KEEP(c, mt_tril(ones, 0, 0, NULL, &tri), tri);
        m = BOOL_TO_ADD(c, tri, query ? query->dtype : origin);
    }
    if (gqa && !c->st) {
        int64_t dq = -3, dk = -3, dv = -3; /* PyTorch reads size(-3) of each: fewer dims is its IndexError */
        if ((c->st = mt__wrap_dim(&dq, q->ndim)) || (c->st = mt__wrap_dim(&dk, k->ndim)) ||
            (c->st = mt__wrap_dim(&dv, v->ndim)))
            return END(c, out, 1);
        int64_t hq = sz(q, -3), hk = sz(k, -3), hv = sz(v, -3);
        if (!(hq == hk && hk == hv) && !(hq % hk == 0 && hq % hv == 0)) {
            c->st = mt__error(MT_ERR_RUNTIME, "Number of heads in key and value must divide the number of heads in ");
            return END(c, out, 1);
        }
        if (!(hq == hk && hk == hv)) {
            ka = REPEAT_HEADS(c, ka, hq / hk);
            va = REPEAT_HEADS(c, va, hq / hv);
        }
    }
    mt_tensor *attn = MM(c, query, BS(c, MT_OP_MUL, TR(c, ka), sf));
    if (m && attn) { /* attn.add_(mask) */
        mt_tensor *r = NULL;
        KEEP(c, mt_binary(MT_OP_ADD, attn, m, 1, attn, &r), r);
    }
    mt_tensor *p = NULL;
    if (attn && !c->st) KEEP(c, safe_softmax(attn, &p), p);
    if (p && dropout_p > 0) {
        mt_tensor *d = NULL;
        p = KEEP(c, mt_dropout(p, dropout_p, 1, 0, 0, g, &d), d);
    }
    mt_tensor *o = MM(c, p, va);
    if (o && o->dtype != origin) o = TO(c, o, origin);
    GIVE(c, out, 0, o);
    return END(c, out, 1);
}

/* ---- the fused path ----------------------------------------------------------------------- */

static mt_status no_double_backward(mt_node *n, mt_tensor *const *g, mt_tensor **out) {
    (void)n, (void)g, (void)out;
    return mt__error(MT_ERR_RUNTIME,
                     "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented");
}

static mt_status flash_bw(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *q = SAVED(c, n, 0), *k = SAVED(c, n, 1), *v = SAVED(c, n, 2), *o = SAVED(c, n, 3);
    mt_tensor *lse = SAVED(c, n, 4), *mask = n->saved[5] ? SAVED(c, n, 5) : NULL;
    if (c->st) return END(c, out, 3);
    mt_tensor *gr[3];
    int prev = mt__grad_push(0);
    c->st = mt__impl_sdpa_flash_backward(grads[0], q, k, v, o, lse, mask, (int)n->iv[0], n->s[0], &gr[0], &gr[1], &gr[2]);
    mt__grad_pop(prev);
    if (c->st) return END(c, out, 3);
    mt_tensor *ins[4] = {grads[0], q, k, v};
    mt_node *dn;
    c->st = mt__record("NotImplemented", no_double_backward, 4, ins, 3, gr, &dn);
    for (int i = 0; i < 3; i++) {
        if (!c->st && needs(n, i)) out[i] = gr[i];
        else mt_tensor_release(gr[i]);
    }
    return END(c, out, 3);
}

static mt_status sdpa_flash(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask, int causal, double scale,
                            mt_tensor **out) {
    mt_tensor *ins[3] = {q, k, v}, *lse = NULL;
    int prev = mt__grad_push(0);
    mt_status st = mt__impl_sdpa_flash(q, k, v, mask, causal, scale, out, &lse);
    mt__grad_pop(prev);
    if (st) return st;
    mt_node *n;
    if (!(st = mt__record("ScaledDotProductFlashAttentionForCpuBackward0", flash_bw, 3, ins, 1, out, &n)) && n) {
        n->iv[0] = causal;
        n->s[0] = scale;
        for (int i = 0; i < 3 && !st; i++) st = mt__save(n, i, ins[i], 0);
        if (!st) st = mt__save(n, 3, *out, 1);
        if (!st) st = mt__save(n, 4, lse, 0);
        if (!st) st = mt__save(n, 5, mask, 0);
    }
    mt_tensor_release(lse);
    if (st) { MT_DROP(*out); }
    return st;
}

/* use_flash_attention_cpp: 0 no, 1 yes, or an error status (a 1-D mask fails PyTorch's size(-2)) */
static mt_status flash_ok(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *m, double dropout_p, int gqa, int *ok) {
    *ok = 0;
    if (dropout_p > 0 || q->ndim != 4 || k->ndim != 4 || v->ndim != 4) return MT_OK;
    if (q->sizes[0] != k->sizes[0] || q->sizes[0] != v->sizes[0]) return MT_OK;
    int64_t hq = q->sizes[1], hk = k->sizes[1], hv = v->sizes[1];
    if (gqa ? (hk != hv || hq % hk) : (hq != hk || hq != hv)) return MT_OK;
    if (m) {
        if (mt__requires_grad(m)) return MT_OK;
        int64_t d = -2;
        MT_TRY(mt__wrap_dim(&d, m->ndim));
        if (sz(m, -2) != q->sizes[2] && sz(m, -2) != 1) return MT_OK;
        if (sz(m, -1) != k->sizes[2] && sz(m, -1) != 1) return MT_OK;
        if (m->ndim == 4 ? !((m->sizes[0] == 1 || m->sizes[0] == q->sizes[0]) && (m->sizes[1] == 1 || m->sizes[1] == hq))
                         : m->ndim != 2) return MT_OK;
    }
    if (q->sizes[3] != k->sizes[3] || q->sizes[3] != v->sizes[3]) return MT_OK;
    if (q->sizes[2] == 0 || k->sizes[2] == 0) return MT_OK;
    if (!((q->strides[3] == 1 && k->strides[3] == 1 && v->strides[3] == 1) || q->sizes[3] == 1)) return MT_OK;
    if (!mt__is_float(q->dtype)) return MT_OK;
    if (k->sizes[2] != v->sizes[2]) return MT_OK; /* PyTorch's kernel reads S value rows; the math path checks */
    *ok = 1;
    return MT_OK;
}

/* ---- the public op ------------------------------------------------------------------------ */

static mt_status sdpa_empty(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int64_t s[MT_MAX_DIMS];
    memcpy(s, q->sizes, sizeof(int64_t) * q->ndim);
    s[q->ndim - 1] = sz(v, -1);
    mt_tensor *z = NULL, *sq = NULL, *sk = NULL, *sv = NULL;
    mt_status st = mt_empty(q->ndim, s, q->dtype, q->device, &z);
    if (!st) st = mt_fill(z, 0, 0, MT_SCALAR_INT);
    keep(c, st, z);
    if (!c->st) KEEP(c, mt_reduce(MT_RED_SUM, q, 0, NULL, 0, -1, NULL, &sq), sq);
    if (!c->st) KEEP(c, mt_reduce(MT_RED_SUM, k, 0, NULL, 0, -1, NULL, &sk), sk);
    if (!c->st) KEEP(c, mt_reduce(MT_RED_SUM, v, 0, NULL, 0, -1, NULL, &sv), sv);
    GIVE(c, out, 0, B(c, MT_OP_ADD, z, BS(c, MT_OP_MUL, B(c, MT_OP_ADD, B(c, MT_OP_ADD, sq, sk), sv), 0)));
    return END(c, out, 1);
}

mt_status mt_scaled_dot_product_attention(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask,
                                          double dropout_p, int is_causal, int has_scale, double scale,
                                          int enable_gqa, int backends, struct mt_generator *g, mt_tensor **out) {
    MT_PROFILE("scaled_dot_product_attention", q, k, v, mask);
    static const char *dev[] = {"cpu", "meta"};
    if (q->dtype != k->dtype || q->dtype != v->dtype)
        return mt__error(MT_ERR_RUNTIME, "Expected query, key, and value to have the same dtype, but got query.dtype: "
                         "%s key.dtype: %s and value.dtype: %s instead.", cpp_name(q->dtype), cpp_name(k->dtype),
                         cpp_name(v->dtype));
    if (q->device != k->device || q->device != v->device)
        return mt__error(MT_ERR_RUNTIME, "Expected query, key, and value to have the same device type, but got "
                         "query.device: %s key.device: %s and value.device: %s instead.", dev[q->device == MT_META],
                         dev[k->device == MT_META], dev[v->device == MT_META]);
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
        return mt__error(MT_ERR_RUNTIME, "Expected query, key, and value to all be  at least 2 dimensional, but got "
                         "query.dim: %d key.dim: %d and value.dim: %d instead.", q->ndim, k->ndim, v->ndim);
    if (mask && mask->dtype != MT_BOOL && mask->dtype != MT_F32 && mask->dtype != q->dtype)
        return mt__error(MT_ERR_RUNTIME, "Expected attn_mask dtype to be bool or float or to match query dtype, but "
                         "got attn_mask.dtype: %s and  query.dtype: %s instead.", cpp_name(mask->dtype),
                         cpp_name(q->dtype));
    if (mt_tensor_numel(q) == 0 || mt_tensor_numel(k) == 0 || mt_tensor_numel(v) == 0) return sdpa_empty(q, k, v, out);
    if (!(backends & (MT_SDPA_MATH | MT_SDPA_FLASH)))
        return mt__error(MT_ERR_RUNTIME, "No viable backend for scaled_dot_product_attention was found. This is "
                         "likely due to turning off both the math kernel and the fused kernels.");
    int ok = 0;
    if (backends & MT_SDPA_FLASH) MT_TRY(flash_ok(q, k, v, mask, dropout_p, enable_gqa, &ok));
    if (ok) {
        double s = has_scale ? scale : 1.0 / sqrt((double)q->sizes[3]);
        return sdpa_flash(q, k, v, mask, is_causal, s, out);
    }
    if (!(backends & MT_SDPA_MATH)) return mt__error(MT_ERR_RUNTIME, "No available kernel.  Aborting execution.");
    return sdpa_math(q, k, v, mask, dropout_p, is_causal, has_scale, scale, enable_gqa, g, out);
}
