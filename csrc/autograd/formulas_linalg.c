/* formulas_linalg.c — the autograd layer of addmv, addr, addbmm, vdot, linalg.cross
 * and einsum's diagonal view (derivatives.yaml formulas, written with public ops). */
#include "formula.h"

mt_status mt__impl_addmv(mt_tensor *self, mt_tensor *mat, mt_tensor *vec, double beta, double alpha, mt_tensor *out,
                         mt_tensor **result);
mt_status mt__impl_addr(mt_tensor *self, mt_tensor *v1, mt_tensor *v2, double beta, double alpha, mt_tensor *out,
                        mt_tensor **result);
mt_status mt__impl_addbmm(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha, mt_tensor *out,
                          mt_tensor **result);
mt_status mt__impl_vdot(mt_tensor *a, mt_tensor *b, mt_tensor **result);
mt_status mt__impl_cross(mt_tensor *a, mt_tensor *b, int64_t dim, mt_tensor **result);

enum { K_ADDMV, K_ADDR, K_ADDBMM, K_VDOT, K_CROSS };

static mt_tensor *SC(F *c, mt_tensor *t, double s) { return s == 1 ? t : BS(c, MT_OP_MUL, t, s); }
static mt_tensor *EXP(F *c, mt_tensor *t, int nd, const int64_t *sz) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_expand(t, nd, sz, &r), r) : NULL;
}
static mt_tensor *CROSS(F *c, mt_tensor *a, mt_tensor *b, int64_t dim) {
    mt_tensor *r = NULL;
    return OK2(a, b) ? KEEP(c, mt_cross(a, b, dim, &r), r) : NULL;
}

/* inputs [self,] a, b (saved 0, 1); s[0] beta, s[1] alpha; iv[0] dim (cross) */
static mt_status linalg_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    /* complex: PyTorch's formulas take the operands' conjugates (conj: the identity on reals) */
    mt_tensor *g = grads[0], *a = U(c, MT_OP_CONJ, SAVED(c, n, 0)), *b = U(c, MT_OP_CONJ, SAVED(c, n, 1));
    double beta = n->s[0], alpha = n->s[1];
    int o = n->op == K_VDOT || n->op == K_CROSS ? 0 : 1; /* index of a among the inputs */
    if (o && needs(n, 0)) GIVE(c, out, 0, SC(c, g, beta));
    switch (n->op) {
    case K_ADDMV: /* mat: grad ger vec; vec: mat^T grad */
        if (needs(n, 1)) GIVE(c, out, 1, SC(c, B(c, MT_OP_MUL, UNSQ(c, g, 1), b), alpha));
        if (needs(n, 2)) GIVE(c, out, 2, SC(c, MM(c, TR(c, a), g), alpha));
        break;
    case K_ADDR: /* vec1: grad @ vec2; vec2: grad^T @ vec1 */
        if (needs(n, 1)) GIVE(c, out, 1, SC(c, MM(c, g, b), alpha));
        if (needs(n, 2)) GIVE(c, out, 2, SC(c, MM(c, TR(c, g), a), alpha));
        break;
    case K_ADDBMM: { /* the gradient of every batch is grad */
        int64_t sz[3] = {a ? a->sizes[0] : 0, g ? g->sizes[0] : 0, g ? g->sizes[1] : 0};
        mt_tensor *gb = EXP(c, UNSQ(c, g, 0), 3, sz);
        if (needs(n, 1)) GIVE(c, out, 1, SC(c, MM(c, gb, TR(c, b)), alpha));
        if (needs(n, 2)) GIVE(c, out, 2, SC(c, MM(c, TR(c, a), gb), alpha));
        break;
    }
    case K_VDOT: /* vdot(a, b) = sum(conj(a) * b): a gets conj(grad) * b, b gets grad * a */
        if (needs(n, 0)) GIVE(c, out, 0, B(c, MT_OP_MUL, U(c, MT_OP_CONJ, g), U(c, MT_OP_CONJ, b)));
        if (needs(n, 1)) GIVE(c, out, 1, B(c, MT_OP_MUL, g, U(c, MT_OP_CONJ, a)));
        break;
    case K_CROSS:
        if (needs(n, 0)) GIVE(c, out, 0, CROSS(c, b, g, n->iv[0]));
        if (needs(n, 1)) GIVE(c, out, 1, CROSS(c, g, a, n->iv[0]));
        break;
    }
    return END(c, out, 3);
}

static mt_status record(const char *name, int kind, mt_tensor *self, mt_tensor *a, mt_tensor *b, double beta,
                        double alpha, int64_t dim, mt_tensor **result) {
    if (!mt__is_differentiable((*result)->dtype)) return MT_OK;
    mt_tensor *ins[3] = {self, a, b};
    int o = self ? 1 : 0;
    mt_node *n;
    MT_TRY(mt__record(name, linalg_backward, 2 + o, ins + (1 - o), 1, result, &n));
    if (!n) return MT_OK;
    n->op = kind;
    n->s[0] = beta, n->s[1] = alpha;
    n->iv[0] = dim;
    MT_TRY(mt__save(n, 0, a, 0));
    return mt__save(n, 1, b, 0);
}

#define LINALG_WRAPPER(NAME, KIND, SELF, A, B, BETA, ALPHA, DIM, IMPL)                                   \
    int grad = mt__grad_enabled() && (mt__requires_grad(A) || mt__requires_grad(B) || (SELF && mt__requires_grad(SELF))); \
    if (grad && out) return out_arg_error(NAME);                                                        \
    int prev = mt__grad_push(0);                                                                        \
    mt_status st = IMPL;                                                                                \
    mt__grad_pop(prev);                                                                                 \
    if (st || !grad) return st;                                                                         \
    if ((st = record(#KIND, KIND##_ID, SELF, A, B, BETA, ALPHA, DIM, result))) MT_DROP(*result); \
    return st;

#define AddmvBackward0_ID K_ADDMV
#define AddrBackward0_ID K_ADDR
#define AddbmmBackward0_ID K_ADDBMM
#define VdotBackward0_ID K_VDOT
#define LinalgCrossBackward0_ID K_CROSS

mt_status mt_addmv(mt_tensor *self, mt_tensor *mat, mt_tensor *vec, double beta, double alpha, mt_tensor *out,
                   mt_tensor **result) {
    MT_PROFILE("addmv", self, mat, vec);
    LINALG_WRAPPER("addmv", AddmvBackward0, self, mat, vec, beta, alpha, 0,
                   mt__impl_addmv(self, mat, vec, beta, alpha, out, result))
}
mt_status mt_addr(mt_tensor *self, mt_tensor *vec1, mt_tensor *vec2, double beta, double alpha, mt_tensor *out,
                  mt_tensor **result) {
    MT_PROFILE("addr", self, vec1, vec2);
    LINALG_WRAPPER("addr", AddrBackward0, self, vec1, vec2, beta, alpha, 0,
                   mt__impl_addr(self, vec1, vec2, beta, alpha, out, result))
}
mt_status mt_addbmm(mt_tensor *self, mt_tensor *batch1, mt_tensor *batch2, double beta, double alpha, mt_tensor *out,
                    mt_tensor **result) {
    MT_PROFILE("addbmm", self, batch1, batch2);
    LINALG_WRAPPER("addbmm", AddbmmBackward0, self, batch1, batch2, beta, alpha, 0,
                   mt__impl_addbmm(self, batch1, batch2, beta, alpha, out, result))
}
mt_status mt_vdot(mt_tensor *a, mt_tensor *b, mt_tensor **result) {
    MT_PROFILE("vdot", a, b);
    mt_tensor *out = NULL, *self = NULL;
    LINALG_WRAPPER("vdot", VdotBackward0, self, a, b, 1, 1, 0, mt__impl_vdot(a, b, result))
}
mt_status mt_cross(mt_tensor *a, mt_tensor *b, int64_t dim, mt_tensor **result) {
    MT_PROFILE("linalg_cross", a, b);
    mt_tensor *out = NULL, *self = NULL; /* dim as given: it refers to the broadcast shape, as the grad's */
    LINALG_WRAPPER("linalg_cross", LinalgCrossBackward0, self, a, b, 1, 1, dim, mt__impl_cross(a, b, dim, result))
}

/* ---- einsum's diagonal: dims d0 < d1 of equal size merged into d0 (a view) ---------------- */

static mt_status impl_diag_merge(mt_tensor *x, int64_t d0, int64_t d1, mt_tensor **out) {
    int64_t sz[MT_MAX_DIMS], st[MT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (d == d1) continue;
        sz[nd] = x->sizes[d];
        st[nd++] = d == d0 ? x->strides[d0] + x->strides[d1] : x->strides[d];
    }
    return mt__view_of(x, nd, sz, st, x->offset, out);
}

static mt_status diag_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *z = ZEROS(c, &n->in_meta[0]), *v = NULL;
    if (!c->st) COPY_INTO_VIEW(c, z, KEEP(c, impl_diag_merge(z, n->iv[0], n->iv[1], &v), v), grads[0]);
    GIVE(c, out, 0, z);
    return END(c, out, 1);
}

mt_status mt__diag_merge(mt_tensor *x, int64_t d0, int64_t d1, mt_tensor **out) {
    MT_TRY(impl_diag_merge(x, d0, d1, out));
    mt__track_view(*out, x); /* a view of x */
    if (!(mt__grad_enabled() && mt__requires_grad(x))) return MT_OK;
    mt_node *n;
    mt_status st = mt__record("DiagonalBackward0", diag_backward, 1, &x, 1, out, &n);
    if (!st && n) {
        n->iv[0] = d0, n->iv[1] = d1;
        st = mt__save(n, 0, x, 0);
    }
    if (st) MT_DROP(*out);
    return st;
}
