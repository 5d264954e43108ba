/* formula.h — what backward formulas and autograd wrappers are written with (internal).
 *
 * Every public differentiable entry point runs its kernel (mt__impl_*) with grad
 * mode off, then records a node (mt__record) whose backward formula is written
 * with the public ops through the F context below: each helper call keeps its
 * result as a temporary released by END, and short-circuits after the first
 * error, so a formula reads like the math. New areas put their formulas in their
 * own formulas_<area>.c including this header. */
#ifndef MT_FORMULA_H
#define MT_FORMULA_H

#include <math.h>

#include "autograd.h"

/* the kernels without autograd */
mt_status mt__impl_copy_(mt_tensor *dst, mt_tensor *src);
mt_status mt__impl_clone(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_contiguous(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_fill(mt_tensor *t, double f, int64_t i, int kind);
mt_status mt__impl_unary(int op, mt_tensor *x, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_binary(int op, mt_tensor *a, mt_tensor *b, double alpha, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_binary_scalar(int op, mt_tensor *a, double f, int64_t i, int kind, int reflected, double alpha, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_ternary(int op, mt_tensor *a, mt_tensor *b, mt_tensor *c, double s, mt_tensor *out, mt_tensor **result);
mt_status mt__loss_backward(int op, mt_tensor *x, mt_tensor *t, mt_tensor *g, double norm, double p, mt_tensor **result);
mt_status mt__impl_reduce(int op, mt_tensor *x, int ndims, const int64_t *dims, int keepdim, int dtype, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_max_dim(int is_min, mt_tensor *x, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mt__impl_mm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_addmm(mt_tensor *self, mt_tensor *m1, mt_tensor *m2, double beta, double alpha, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_bmm(mt_tensor *a, mt_tensor *b, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_dot(mt_tensor *a, mt_tensor *b, mt_tensor **result);
mt_status mt__impl_mv(mt_tensor *m, mt_tensor *v, mt_tensor **result);
mt_status mt__impl_baddbmm(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_as_strided(mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, mt_tensor **out);
mt_status mt__impl_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt__impl_reshape(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt__impl_transpose(mt_tensor *t, int64_t d0, int64_t d1, mt_tensor **out);
mt_status mt__impl_permute(mt_tensor *t, int ndim, const int64_t *dims, mt_tensor **out);
mt_status mt__impl_expand(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt__impl_squeeze(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out);
mt_status mt__impl_unsqueeze(mt_tensor *t, int64_t dim, mt_tensor **out);
mt_status mt__impl_select(mt_tensor *t, int64_t dim, int64_t index, mt_tensor **out);
mt_status mt__impl_slice(mt_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step, mt_tensor **out);
mt_status mt__impl_view_as_real(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_view_as_complex(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_unfold(mt_tensor *t, int64_t dim, int64_t size, int64_t step, mt_tensor **out);
mt_status mt__impl_index(mt_tensor *t, int n, mt_tensor *const *indices, mt_tensor **out);
mt_status mt__impl_index_put_(mt_tensor *t, int n, mt_tensor *const *indices, mt_tensor *values, int accumulate);

/* generated from csrc/ops.tbl (csrc/generated/derivatives.c): per op its node name (NULL: no
 * formula in the table), the slots its node saves (bit k: slot k) and the formulas themselves */
extern const char *const mt__backward_names[MT_NUM_OPS];
extern const unsigned char mt__backward_saves[MT_NUM_OPS][3];
mt_status mt__table_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out);

/* formulas of reductions recorded by mt_reduce (formulas_reduce.c) */
mt_status mt__prod_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out);
mt_status mt__nansum_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out);

/* ---- a small context for writing formulas: temporaries released at the end ---- */

typedef struct {
    mt_status st;
    int n;
    mt_tensor *tmp[64];
} F;

static inline mt_tensor *keep(F *c, mt_status st, mt_tensor *t) {
    if (st) { if (!c->st) c->st = st; return NULL; }
    if (c->n == 64) { mt_tensor_release(t); c->st = mt__error(MT_ERR_RUNTIME, "formula too long"); return NULL; }
    return c->tmp[c->n++] = t;
}
/* keep the result of a call; the call runs first (function arguments have no order) */
#define KEEP(c, call, r) ({ mt_status st__ = (call); keep((c), st__, (r)); })
#define OK2(a, b) (!c->st && (a) && (b))
static inline mt_tensor *B(F *c, int op, mt_tensor *a, mt_tensor *b) {
    mt_tensor *r = NULL;
    return OK2(a, b) ? KEEP(c, mt_binary(op, a, b, 1, NULL, &r), r) : NULL;
}
static inline mt_tensor *BA(F *c, int op, mt_tensor *a, mt_tensor *b, double alpha) { /* a binary op's alpha */
    mt_tensor *r = NULL;
    return OK2(a, b) ? KEEP(c, mt_binary(op, a, b, alpha, NULL, &r), r) : NULL;
}
static inline mt_tensor *BS(F *c, int op, mt_tensor *a, double s) { /* a <op> python float */
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_binary_scalar(op, a, s, 0, MT_SCALAR_FLOAT, 0, 1, NULL, &r), r) : NULL;
}
static inline mt_tensor *SB(F *c, int op, double s, mt_tensor *a) { /* python float <op> a */
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_binary_scalar(op, a, s, 0, MT_SCALAR_FLOAT, 1, 1, NULL, &r), r) : NULL;
}
static inline mt_tensor *U(F *c, int op, mt_tensor *a) {
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_unary(op, a, NULL, &r), r) : NULL;
}
static inline mt_tensor *WHERE(F *c, mt_tensor *cond, mt_tensor *a, mt_tensor *b) {
    mt_tensor *r = NULL;
    return OK2(cond, a) && b ? KEEP(c, mt_ternary(MT_OP_WHERE, cond, a, b, 0, NULL, &r), r) : NULL;
}
static inline mt_tensor *SCALAR(F *c, double v) {
    mt_tensor *r = NULL;
    return c->st ? NULL : KEEP(c, mt_scalar_tensor(v, 0, MT_SCALAR_FLOAT, MT_F64, 1, &r), r);
}
/* the imaginary number v*1j as a wrapped number (formulas' "1j": complex results take it) */
static inline mt_tensor *SCALAR_J(F *c, double v) {
    mt_tensor *r = NULL;
    return c->st ? NULL : KEEP(c, mt_scalar_complex(0, v, MT_C128, 1, &r), r);
}
static inline int IS_COMPLEX(const mt_tensor *t) { return t && mt__is_complex(t->dtype); }
static inline mt_tensor *ZEROS(F *c, const mt_meta *m) {
    mt_tensor *r = NULL;
    if (c->st) return NULL;
    mt_status st = mt_empty(m->ndim, m->sizes, m->dtype, MT_CPU, &r);
    if (!st) st = mt__impl_fill(r, 0, 0, MT_SCALAR_INT);
    return keep(c, st, r);
}
static inline mt_tensor *SAVED(F *c, mt_node *n, int slot) {
    mt_tensor *r = NULL;
    return c->st ? NULL : KEEP(c, mt__saved(n, slot, &r), r);
}
/* operand k of a binary node: its saved tensor, or the Python scalar the op was called with */
static inline mt_tensor *OPND(F *c, mt_node *n, int k) {
    if (n->iv[0] == k + 1) {
        mt_tensor *r = NULL;
        return c->st ? NULL : KEEP(c, mt_scalar_tensor(n->s[1], n->iv[1], (int)n->s[3], n->s[3] == MT_SCALAR_FLOAT ? MT_F64 : MT_I64, 1, &r), r);
    }
    return SAVED(c, n, k);
}
static inline mt_tensor *MM(F *c, mt_tensor *a, mt_tensor *b) {
    mt_tensor *r = NULL;
    return OK2(a, b) ? KEEP(c, mt_matmul(a, b, &r), r) : NULL;
}
static inline mt_tensor *TR(F *c, mt_tensor *a) { /* swap the last two dims */
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_transpose(a, -2, -1, &r), r) : NULL;
}
static inline mt_tensor *UNSQ(F *c, mt_tensor *t, int64_t d) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_unsqueeze(t, d, &r), r) : NULL;
}
/* op over dims (ndims <= 0: all) in the default result dtype */
static inline mt_tensor *REDUCE(F *c, int op, mt_tensor *t, int ndims, const int64_t *dims, int keepdim) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_reduce(op, t, ndims, dims, keepdim, -1, NULL, &r), r) : NULL;
}
static inline mt_tensor *RESHAPE(F *c, mt_tensor *a, const mt_meta *m) {
    mt_tensor *r = NULL;
    return OK2(a, 1) ? KEEP(c, mt_reshape(a, m->ndim, m->sizes, &r), r) : NULL;
}
/* g written into part, a view of zeros z made by an mt__impl_ view op (select/slice/diagonal
 * backward). When g requires grad (create_graph) the write is recorded as an in-place copy into a
 * view of z, so the gradient of the result is that view of its gradient (double backward). */
static inline void COPY_INTO_VIEW(F *c, mt_tensor *z, mt_tensor *part, mt_tensor *g) {
    if (!OK2(z, part) || !g) return;
    if (mt__grad_enabled() && mt__requires_grad(g)) {
        mt__track_view(part, z);
        c->st = mt_copy_(part, g);
    } else {
        c->st = mt__impl_copy_(part, g);
    }
}
/* give t to out[i] (a new reference) */
static inline void GIVE(F *c, mt_tensor **out, int i, mt_tensor *t) {
    if (c->st || !t) return;
    mt_tensor_retain(t);
    out[i] = t;
}
static inline mt_status END(F *c, mt_tensor **out, int nout) {
    for (int i = 0; i < c->n; i++) mt_tensor_release(c->tmp[i]);
    if (c->st)
        for (int i = 0; i < nout; i++) { mt_tensor_release(out[i]); out[i] = NULL; }
    return c->st;
}
/* slot k holds a saved tensor (kept, or packed by saved_tensors_hooks) */
static inline int has_saved(const mt_node *n, int k) { return n->saved[k] || n->packed[k]; }
static inline int needs(mt_node *n, int i) { return i < n->n_next && n->next[i].node != NULL; }
/* a table op's node keeps slot k when an input whose formula reads it needs a gradient (PyTorch's
 * should_compute_output guard around each SavedVariable); its formulas unpack it then only */
static inline int table_saves(mt_node *n, int slot) {
    for (int i = 0; i < n->n_next; i++)
        if ((mt__backward_saves[n->op][slot] >> i & 1) && needs(n, i)) return 1;
    return 0;
}

/* an op that has no backward formula yet: recording succeeds, backward says so */
static inline mt_status no_formula(mt_node *n, mt_tensor *const *g, mt_tensor **out) {
    (void)g; (void)out;
    return mt__error(MT_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented.", n->name);
}
/* in-place ops: the saved inputs that alias the destination must be copied before it is overwritten */
static inline mt_status unalias_saved(mt_node *n, mt_tensor *dst) {
    if (!n) return MT_OK;
    for (int k = 0; k < MT_NODE_SAVED; k++) {
        mt_tensor *s = n->saved[k];
        if (s && !n->saved_is_output[k] && s->storage == dst->storage) {
            mt_tensor *cl;
            int prev = mt__grad_push(0);
            mt_status st = mt__impl_clone(s, &cl);
            mt__grad_pop(prev);
            if (st) return st;
            /* the clone stands for the old value; its history stays in saved_fn */
            cl->requires_grad = s->requires_grad;
            mt_tensor_release(s);
            n->saved[k] = cl;
            n->saved_version[k] = mt_tensor_version(cl);
        }
    }
    return MT_OK;
}

static inline mt_status out_arg_error(const char *name) {
    return mt__error(MT_ERR_RUNTIME,
                     "%s(): functions with out=... arguments don't support automatic differentiation, but one of "
                     "the arguments requires grad.", name);
}

/* Run an elementwise op with out= / in place when autograd is involved: the
 * result is computed out of place (recorded), then copied into out, whose
 * history becomes the result's (mt__rebase: a view's base gets CopySlices).
 * An in-place op recorded directly on its destination (mt__record with
 * outputs = &dst) calls mt__inplace_recorded(dst) after recording. */
typedef mt_status (*oop_fn)(void *ctx, mt_tensor **result);
static inline mt_status into_out(const char *name, mt_tensor *out, int is_inplace, oop_fn fn, void *ctx, mt_tensor **result) {
    if (!is_inplace) return out_arg_error(name);
    MT_TRY(mt__check_inplace(out));
    mt_tensor *r;
    MT_TRY(fn(ctx, &r));
    mt_status st = unalias_saved(r->grad_fn, out);
    int prev = mt__grad_push(0);
    if (!st) st = mt__impl_copy_(out, r);
    mt__grad_pop(prev);
    if (!st) st = mt__rebase(out, r);
    mt_tensor_release(r);
    if (st) return st;
    mt_tensor_retain(out);
    *result = out;
    return MT_OK;
}

#endif
