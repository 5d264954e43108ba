/* formulas_shape.c — the autograd layer of the shape and index ops (kernels in
 * kernels/cpu/shape.c, scatter.c, sort.c): each entry point runs its kernel with grad
 * mode off, then records one node (cat/stack: one node with n inputs) whose backward
 * is PyTorch's derivatives.yaml formula written with the public ops. */
#include "formula.h"
#include "../kernels/cpu/shape.h"

#define NOGRAD(call) ({ int prev__ = mt__grad_push(0); mt_status st__ = (call); mt__grad_pop(prev__); st__; })

/* record a node for a float result; n is NULL when nothing needs recording */
static mt_status rec(const char *name, mt_backward_fn fn, int nin, mt_tensor *const *ins, mt_tensor *out, mt_node **n) {
    *n = NULL;
    if (!mt__is_differentiable(out->dtype)) return MT_OK;
    return mt__record(name, fn, nin, ins, 1, &out, n);
}
static void keep_index(mt_node *n, int slot, mt_tensor *t) {
    if (t) mt_tensor_retain(t);
    n->index[slot] = t;
    if (n->nindex <= slot) n->nindex = slot + 1;
}
static int any_grad(int n, mt_tensor *const *ts) {
    if (!mt__grad_enabled()) return 0;
    for (int i = 0; i < n; i++)
        if (mt__requires_grad(ts[i])) return 1;
    return 0;
}
/* ---- helpers for formulas: public ops kept in the F context ---- */
static mt_tensor *SLICE(F *c, mt_tensor *t, int64_t dim, int64_t a, int64_t b) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_slice(t, dim, a, b, 1, &r), r) : NULL;
}
static mt_tensor *SELECT(F *c, mt_tensor *t, int64_t dim, int64_t i) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_select(t, dim, i, &r), r) : NULL;
}
static mt_tensor *GATHER(F *c, mt_tensor *t, int64_t dim, mt_tensor *idx) {
    mt_tensor *r = NULL;
    return OK2(t, idx) ? KEEP(c, mt_gather(t, dim, idx, &r), r) : NULL;
}
static mt_tensor *SCATTER(F *c, int kind, mt_tensor *t, int64_t dim, mt_tensor *idx, mt_tensor *src, int is_value, int reduce) {
    mt_tensor *r = NULL;
    return OK2(t, idx) && src ? KEEP(c, mt_scatter(kind, t, dim, idx, src, is_value, reduce, 1, 0, &r), r) : NULL;
}
static mt_tensor *ISEL(F *c, mt_tensor *t, int64_t dim, mt_tensor *idx) {
    mt_tensor *r = NULL;
    return OK2(t, idx) ? KEEP(c, mt_index_select(t, dim, idx, &r), r) : NULL;
}
static mt_tensor *IOP(F *c, int kind, mt_tensor *t, int64_t dim, mt_tensor *idx, mt_tensor *src, double alpha) {
    mt_tensor *r = NULL;
    return OK2(t, idx) && src ? KEEP(c, mt_index_op(kind, t, dim, idx, src, alpha, 0, &r), r) : NULL;
}
static mt_tensor *TO(F *c, mt_tensor *t, int dtype) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_to_dtype(t, dtype, 0, &r), r) : NULL;
}
static mt_tensor *SUMALL(F *c, mt_tensor *t) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_reduce(MT_RED_SUM, t, 0, NULL, 0, -1, NULL, &r), r) : NULL;
}
static mt_tensor *ZEROS_LIKE(F *c, mt_tensor *t) {
    if (!t || c->st) return NULL;
    mt_meta m = {t->ndim, t->dtype, {0}};
    memcpy(m.sizes, t->sizes, t->ndim * sizeof(int64_t));
    return ZEROS(c, &m);
}

/* ---- cat / stack ------------------------------------------------------------------- */

static mt_status cat_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int64_t dim = n->iv[0], at = 0;
    for (int i = 0; i < n->n_next; i++) {
        const mt_meta *m = &n->in_meta[i];
        int skip = m->ndim == 1 && m->sizes[0] == 0;
        int64_t len = skip ? 0 : m->sizes[dim];
        if (needs(n, i)) {
            if (n->op == 1) GIVE(c, out, i, SELECT(c, grads[0], dim, i)); /* stack */
            else GIVE(c, out, i, skip ? ZEROS(c, m) : SLICE(c, grads[0], dim, at, at + len));
        }
        at += len;
    }
    return END(c, out, n->n_next);
}

static mt_status record_join(const char *name, int kind, int n, mt_tensor *const *ts, int64_t dim, mt_tensor **out) {
    mt_node *node;
    mt_status st = rec(name, cat_backward, n, ts, *out, &node);
    if (!st && node) {
        node->op = kind;
        if (dim < 0) dim += (*out)->ndim; /* as the kernel wrapped it */
        node->iv[0] = dim;
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_cat(int n, mt_tensor *const *tensors, int64_t dim, mt_tensor **out) {
    MT_PROFILE_ARRAY("cat", MT_PROF_OP, n, tensors);
    MT_TRY(NOGRAD(mt__impl_cat(n, tensors, dim, out)));
    if (!any_grad(n, tensors)) return MT_OK;
    return record_join("CatBackward0", 0, n, tensors, dim, out);
}

mt_status mt_stack(int n, mt_tensor *const *tensors, int64_t dim, mt_tensor **out) {
    MT_PROFILE_ARRAY("stack", MT_PROF_OP, n, tensors);
    MT_TRY(NOGRAD(mt__impl_stack(n, tensors, dim, out)));
    if (!any_grad(n, tensors)) return MT_OK;
    return record_join("StackBackward0", 1, n, tensors, dim, out);
}

/* ---- flip / roll / repeat / rot90 ------------------------------------------------------- */

enum { S_FLIP, S_ROLL, S_REPEAT, S_ROT90, S_TRIL, S_TRIU, S_DIAG_EMBED, S_DIAGONAL, S_TRACE, S_NARROW };

static mt_status shape_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *r = NULL;
    const mt_meta *m = &n->in_meta[0];
    switch (n->op) {
    case S_FLIP:
        if (!c->st) r = KEEP(c, mt_flip(g, (int)n->niv, n->iv, &r), r);
        break;
    case S_ROLL: { /* shifts negated, both lists reversed */
        int k = (int)n->iv[0], nd = (int)n->iv[1];
        int64_t sh[MT_MAX_DIMS], dd[MT_MAX_DIMS];
        for (int i = 0; i < k; i++) sh[i] = -n->iv[2 + k - 1 - i];
        for (int i = 0; i < nd; i++) dd[i] = n->iv[2 + k + nd - 1 - i];
        if (!c->st) r = KEEP(c, mt_roll(g, k, sh, nd, dd, &r), r);
        break;
    }
    case S_REPEAT: { /* the result seen as [r0, s0, r1, s1, ...], summed over the r's */
        int nrep = (int)n->niv, lead = nrep - m->ndim, k = 0, nred = 0;
        int64_t sizes[2 * MT_MAX_DIMS], red[2 * MT_MAX_DIMS];
        for (int d = 0; d < nrep; d++) {
            sizes[k] = n->iv[d], red[nred++] = k++;
            sizes[k++] = d < lead ? 1 : m->sizes[d - lead];
        }
        if (k > MT_MAX_DIMS) { c->st = mt__error(MT_ERR_NOT_IMPLEMENTED, "repeat backward with more than %d dims", MT_MAX_DIMS / 2); break; }
        mt_tensor *v = NULL, *s = NULL;
        if (!c->st) v = KEEP(c, mt_reshape(g, k, sizes, &v), v);
        if (v) s = KEEP(c, mt_reduce(MT_RED_SUM, v, nred, red, 0, -1, NULL, &s), s);
        r = RESHAPE(c, s, m);
        break;
    }
    case S_ROT90:
        if (!c->st) r = KEEP(c, mt_rot90(g, -n->iv[0], n->iv[1], n->iv[2], &r), r);
        break;
    case S_TRIL: case S_TRIU:
        if (!c->st) r = KEEP(c, mt_tril(g, n->iv[0], n->op == S_TRIU, NULL, &r), r);
        break;
    case S_DIAG_EMBED:
        if (!c->st) r = KEEP(c, mt_diagonal(g, n->iv[0], n->iv[1], n->iv[2], &r), r);
        break;
    case S_DIAGONAL: case S_TRACE: case S_NARROW: { /* zeros with the part the op read set to grad */
        if (n->op == S_DIAGONAL) SAVED(c, n, 0); /* a view: its base must be unmodified */
        mt_tensor *z = ZEROS(c, m), *part = NULL;
        if (!c->st) {
            mt_status st = n->op == S_NARROW ? mt__impl_slice(z, n->iv[0], n->iv[1], n->iv[2], 1, &part)
                                             : mt__impl_diagonal(z, n->op == S_TRACE ? 0 : n->iv[0],
                                                                 n->op == S_TRACE ? 0 : n->iv[1],
                                                                 n->op == S_TRACE ? 1 : n->iv[2], &part);
            COPY_INTO_VIEW(c, z, keep(c, st, part), g);
        }
        r = z;
        break;
    }
    default: return no_formula(n, grads, out);
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

/* record a one-input shape op with integer arguments */
static mt_status record_shape(const char *name, int kind, mt_tensor *t, mt_tensor **out, const int64_t *args, int nargs) {
    if (!mt__grad_enabled() || !mt__requires_grad(t)) return MT_OK;
    if (nargs > MT_MAX_DIMS + 2) {
        MT_DROP(*out);
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "%s: recording more than %d arguments", name, MT_MAX_DIMS + 2);
    }
    mt_node *n;
    mt_status st = rec(name, shape_backward, 1, &t, *out, &n);
    if (!st && n) {
        n->op = kind;
        n->niv = nargs;
        if (nargs) memcpy(n->iv, args, nargs * sizeof(int64_t)); /* args may be NULL when there are none */
        if (kind == S_DIAGONAL) {
            st = mt__save(n, 0, t, 0);
        }
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_flip(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out) {
    MT_PROFILE("flip", t);
    MT_TRY(NOGRAD(mt__impl_flip(t, ndims, dims, out)));
    return record_shape("FlipBackward0", S_FLIP, t, out, dims, ndims);
}

mt_status mt_roll(mt_tensor *t, int nshifts, const int64_t *shifts, int ndims, const int64_t *dims, mt_tensor **out) {
    MT_PROFILE("roll", t);
    MT_TRY(NOGRAD(mt__impl_roll(t, nshifts, shifts, ndims, dims, out)));
    int64_t args[2 * MT_MAX_DIMS + 2] = {nshifts, ndims};
    if (nshifts + ndims > MT_MAX_DIMS) return record_shape("RollBackward0", S_ROLL, t, out, args, 2 * MT_MAX_DIMS + 2);
    memcpy(args + 2, shifts, nshifts * sizeof(int64_t));
    memcpy(args + 2 + nshifts, dims, ndims * sizeof(int64_t));
    return record_shape("RollBackward0", S_ROLL, t, out, args, 2 + nshifts + ndims);
}

mt_status mt_repeat(mt_tensor *t, int n, const int64_t *repeats, mt_tensor **out) {
    MT_PROFILE("repeat", t);
    MT_TRY(NOGRAD(mt__impl_repeat(t, n, repeats, out)));
    return record_shape("RepeatBackward0", S_REPEAT, t, out, repeats, n);
}

mt_status mt_rot90(mt_tensor *t, int64_t k, int64_t dim0, int64_t dim1, mt_tensor **out) {
    MT_PROFILE("rot90", t);
    MT_TRY(NOGRAD(mt__impl_rot90(t, k, dim0, dim1, out)));
    int64_t args[3] = {k, dim0, dim1};
    return record_shape("Rot90Backward0", S_ROT90, t, out, args, 3);
}

mt_status mt_narrow_copy(mt_tensor *t, int64_t dim, int64_t start, int64_t length, mt_tensor **out) {
    MT_PROFILE("narrow_copy", t);
    if (t->ndim == 0) return mt__error(MT_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor.");
    int64_t d = dim;
    MT_TRY(mt__wrap_dim(&d, t->ndim));
    int64_t size = t->sizes[d];
    if (length < 0) return mt__error(MT_ERR_RUNTIME, "narrow(): length must be non-negative.");
    if (start < -size || start > size)
        return mt__error(MT_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                         (long long)-size, (long long)size, (long long)start);
    if (start < 0) start += size;
    if (length > size - start) /* start + length could pass int64 */
        return mt__error(MT_ERR_RUNTIME, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start,
                         (long long)length, (long long)size);
    mt_tensor *v;
    MT_TRY(mt__impl_slice(t, d, start, start + length, 1, &v));
    mt_status st = mt__alloc(v->ndim, v->sizes, NULL, v->dtype, v->device, out);
    if (!st && v->storage->data) mt__strided_copy(*out, v);
    mt_tensor_release(v);
    if (st) return st;
    int64_t args[3] = {d, start, start + length};
    return record_shape("NarrowCopyBackward0", S_NARROW, t, out, args, 3);
}

/* ---- tril / triu ------------------------------------------------------------------------ */

typedef struct { mt_tensor *t; int64_t k; int upper; } tril_ctx;
static mt_status tril_oop(void *p, mt_tensor **r) {
    tril_ctx *u = p;
    return mt_tril(u->t, u->k, u->upper, NULL, r);
}

mt_status mt_tril(mt_tensor *t, int64_t diagonal, int upper, mt_tensor *out, mt_tensor **result) {
    MT_PROFILE_KIND(upper ? "triu" : "tril", out && out == t ? MT_PROF_INPLACE : MT_PROF_OP, t);
    if (out && out != t) return mt__error(MT_ERR_NOT_IMPLEMENTED, "tril/triu with out=");
    if (out && mt__grad_enabled() && mt__requires_grad(t) && t->ndim >= 2) {
        tril_ctx u = {t, diagonal, upper};
        return into_out(upper ? "triu_" : "tril_", t, 1, tril_oop, &u, result);
    }
    MT_TRY(NOGRAD(mt__impl_tril(t, diagonal, upper, out, result)));
    if (out) return MT_OK;
    return record_shape(upper ? "TriuBackward0" : "TrilBackward0", upper ? S_TRIU : S_TRIL, t, result, &diagonal, 1);
}

/* ---- diagonals and trace -------------------------------------------------------------- */

mt_status mt_diagonal(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out) {
    MT_PROFILE("diagonal", t);
    MT_TRY(NOGRAD(mt__impl_diagonal(t, offset, dim1, dim2, out)));
    mt__track_view(*out, t); /* a view: in-place writes into it reach its base */
    int64_t args[3] = {offset, dim1, dim2};
    return record_shape("DiagonalBackward0", S_DIAGONAL, t, out, args, 3);
}

mt_status mt_diag_embed(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out) {
    MT_PROFILE("diag_embed", t);
    MT_TRY(NOGRAD(mt__impl_diag_embed(t, offset, dim1, dim2, out)));
    int64_t args[3] = {offset, dim1, dim2};
    return record_shape("DiagEmbedBackward0", S_DIAG_EMBED, t, out, args, 3);
}

/* torch.diag: a 1-D input is diag_embed, a 2-D one a copy of its diagonal */
mt_status mt_diag(mt_tensor *t, int64_t diagonal, mt_tensor **out) {
    MT_PROFILE("diag", t);
    if (t->ndim != 1 && t->ndim != 2)
        return mt__error(MT_ERR_RUNTIME, "diag(): Supports 1D or 2D tensors. Got %dD", t->ndim);
    if (t->ndim == 1) return mt_diag_embed(t, diagonal, 0, 1, out);
    mt_tensor *v;
    MT_TRY(mt__impl_diagonal(t, diagonal, 0, 1, &v));
    mt_status st = mt__alloc(v->ndim, v->sizes, NULL, v->dtype, v->device, out);
    if (!st && v->storage->data) mt__strided_copy(*out, v);
    mt_tensor_release(v);
    if (st) return st;
    int64_t args[3] = {diagonal, 0, 1};
    return record_shape("DiagonalBackward0_copy", S_DIAGONAL, t, out, args, 3);
}

mt_status mt_trace(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("trace", t);
    MT_TRY(NOGRAD(mt__impl_trace(t, out)));
    return record_shape("TraceBackward0", S_TRACE, t, out, NULL, 0);
}

/* ---- index_select / gather / take ------------------------------------------------------ */

enum { G_INDEX_SELECT, G_GATHER, G_TAKE, G_SELECTING, G_CUMMAX };

static mt_status gather_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *idx = n->index[0], *z = ZEROS(c, &n->in_meta[0]), *r = NULL;
    int64_t dim = n->iv[0];
    switch (n->op) {
    case G_INDEX_SELECT: r = IOP(c, MT_INDEX_ADD, z, dim, idx, g, 1); break;
    case G_GATHER: r = SCATTER(c, MT_SCATTER_ADD, z, dim, idx, g, 0, MT_SR_SUM); break;
    case G_TAKE:
        if (mt__grad_enabled() && mt__requires_grad(g)) { /* recorded: put_ as index_put_ into the flat zeros */
            mt_meta flat = {1, z ? z->dtype : 0, {mt_tensor_numel(z ? z : g)}};
            mt_tensor *zf = ZEROS(c, &flat);
            if (!c->st) c->st = mt_index_put_(zf, 1, &idx, g, 1);
            r = RESHAPE(c, zf, &n->in_meta[0]);
        } else {
            if (!c->st) c->st = mt__impl_put_(z, idx, g, 1);
            r = z;
        }
        break;
    case G_SELECTING: /* sort/topk/kthvalue: zeros with grad scattered to the selected positions */
        if (!n->iv[1] && n->in_meta[0].ndim > 0) g = UNSQ(c, g, dim), idx = UNSQ(c, idx, dim);
        r = SCATTER(c, MT_SCATTER, z, dim, idx, g, 0, MT_SR_NONE);
        break;
    case G_CUMMAX:
        r = n->in_meta[0].ndim ? SCATTER(c, MT_SCATTER_ADD, z, dim, idx, g, 0, MT_SR_SUM) : g;
        break;
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status record_gather(const char *name, int kind, mt_tensor *t, int64_t dim, int keepdim, mt_tensor *idx,
                               mt_tensor **out) {
    if (!mt__grad_enabled() || !mt__requires_grad(t)) return MT_OK;
    mt_node *n;
    mt_status st = rec(name, gather_backward, 1, &t, *out, &n);
    if (!st && n) {
        n->op = kind;
        if (t->ndim && dim < 0) dim += t->ndim;
        n->iv[0] = dim;
        n->iv[1] = keepdim;
        keep_index(n, 0, idx);
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_index_select(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out) {
    MT_PROFILE("index_select", t, index);
    MT_TRY(NOGRAD(mt__impl_index_select(t, dim, index, out)));
    return record_gather("IndexSelectBackward0", G_INDEX_SELECT, t, dim, 1, index, out);
}

mt_status mt_gather(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out) {
    MT_PROFILE("gather", t, index);
    MT_TRY(NOGRAD(mt__impl_gather(t, dim, index, out)));
    return record_gather("GatherBackward0", G_GATHER, t, dim, 1, index, out);
}

mt_status mt_take(mt_tensor *t, mt_tensor *index, mt_tensor **out) {
    MT_PROFILE("take", t, index);
    MT_TRY(NOGRAD(mt__impl_take(t, index, out)));
    return record_gather("TakeBackward0", G_TAKE, t, 0, 1, index, out);
}

/* the values output of a selecting op records the node; the indices never require grad */
static mt_status record_selecting(const char *name, int kind, mt_tensor *t, int64_t dim, int keepdim,
                                  mt_tensor **values, mt_tensor **indices) {
    mt_status st = record_gather(name, kind, t, dim, keepdim, *indices, values);
    if (st) MT_DROP(*indices);
    return st;
}

mt_status mt_sort(mt_tensor *t, int64_t dim, int descending, int stable, mt_tensor **values, mt_tensor **indices) {
    MT_PROFILE("sort", t);
    MT_TRY(NOGRAD(mt__impl_sort(t, dim, descending, stable > 0, values, indices)));
    return record_selecting(stable < 0 ? "SortBackward0" : "SortBackward1", G_SELECTING, t, dim, 1, values, indices);
}

mt_status mt_topk(mt_tensor *t, int64_t k, int64_t dim, int largest, int sorted, mt_tensor **values, mt_tensor **indices) {
    MT_PROFILE("topk", t);
    MT_TRY(NOGRAD(mt__impl_topk(t, k, dim, largest, sorted, values, indices)));
    return record_selecting("TopkBackward0", G_SELECTING, t, dim, 1, values, indices);
}

mt_status mt_kthvalue(mt_tensor *t, int64_t k, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices) {
    MT_PROFILE("kthvalue", t);
    MT_TRY(NOGRAD(mt__impl_kthvalue(t, k, dim, keepdim, values, indices)));
    return record_selecting("KthvalueBackward0", G_SELECTING, t, dim, keepdim, values, indices);
}

mt_status mt_cummax(int is_min, mt_tensor *t, int64_t dim, mt_tensor **values, mt_tensor **indices) {
    MT_PROFILE(is_min ? "cummin" : "cummax", t);
    MT_TRY(NOGRAD(mt__impl_cummax(is_min, t, dim, values, indices)));
    return record_selecting(is_min ? "CumminBackward0" : "CummaxBackward0", G_CUMMAX, t, dim, 1, values, indices);
}

/* ---- scatter family ------------------------------------------------------------------- */

/* inputs: self, src (NULL for a value); saved: self, src, result for scatter_reduce */
static mt_status scatter_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *idx = n->index[0], *zero = SCALAR(c, 0.0);
    int64_t dim = n->iv[0];
    int kind = (int)n->iv[1], reduce = (int)n->iv[2], include_self = (int)n->iv[3];
    if (kind == MT_SCATTER) {
        if (reduce != MT_SR_NONE) {
            c->st = mt__error(MT_ERR_RUNTIME, "derivative for aten::scatter is not implemented");
            return END(c, out, 2);
        }
        if (needs(n, 0)) GIVE(c, out, 0, SCATTER(c, MT_SCATTER, g, dim, idx, zero, 1, MT_SR_NONE));
        if (needs(n, 1)) GIVE(c, out, 1, GATHER(c, g, dim, idx));
        return END(c, out, 2);
    }
    if (kind == MT_SCATTER_ADD || reduce == MT_SR_SUM) {
        if (needs(n, 0)) GIVE(c, out, 0, include_self ? g : SCATTER(c, MT_SCATTER, g, dim, idx, zero, 1, MT_SR_NONE));
        if (needs(n, 1)) GIVE(c, out, 1, GATHER(c, g, dim, idx));
        return END(c, out, 2);
    }
    /* scatter_reduce_backward (FunctionsManual.cpp) */
    mt_tensor *self = SAVED(c, n, 0), *src = SAVED(c, n, 1), *result = SAVED(c, n, 2), *gs = NULL, *gsrc = NULL;
    int dt = n->in_meta[0].dtype;
    if (reduce == MT_SR_MEAN) {
        mt_tensor *N = include_self ? BS(c, MT_OP_ADD, ZEROS_LIKE(c, g), 1.0) : ZEROS_LIKE(c, g);
        mt_tensor *ones = BS(c, MT_OP_ADD, ZEROS_LIKE(c, src), 1.0);
        N = SCATTER(c, MT_SCATTER_ADD, N, dim, idx, ones, 0, MT_SR_SUM);
        N = WHERE(c, BS(c, MT_OP_EQ, N, 0.0), SCALAR(c, 1.0), N);
        gs = B(c, MT_OP_DIV, g, N);
        gsrc = B(c, MT_OP_DIV, GATHER(c, g, dim, idx), GATHER(c, N, dim, idx));
    } else if (reduce == MT_SR_AMAX || reduce == MT_SR_AMIN) {
        mt_tensor *value = GATHER(c, result, dim, idx);
        mt_tensor *self_is = TO(c, B(c, MT_OP_EQ, self, result), dt), *src_is = TO(c, B(c, MT_OP_EQ, src, value), dt);
        mt_tensor *cnt = SCATTER(c, MT_SCATTER_ADD, self_is, dim, idx, src_is, 0, MT_SR_SUM);
        mt_tensor *dist = B(c, MT_OP_DIV, g, cnt);
        gs = B(c, MT_OP_MUL, self_is, dist);
        gsrc = B(c, MT_OP_MUL, src_is, GATHER(c, dist, dim, idx));
    } else if (reduce == MT_SR_PROD) {
        /* zeros in self/src handled by recomputing the products without them */
        mt_tensor *self_zero = BS(c, MT_OP_EQ, self, 0.0);
        mt_tensor *masked_self = WHERE(c, self_zero, SCALAR(c, 1.0), self);
        mt_tensor *r1 = NULL;
        if (!c->st) r1 = KEEP(c, mt_scatter(MT_SCATTER_REDUCE, masked_self, dim, idx, src, 0, MT_SR_PROD, include_self, 0, &r1), r1);
        gs = B(c, MT_OP_DIV, B(c, MT_OP_MUL, g, r1), masked_self);
        mt_tensor *src_zero = BS(c, MT_OP_EQ, src, 0.0);
        mt_tensor *nz = GATHER(c, SCATTER(c, MT_SCATTER_ADD, ZEROS_LIKE(c, self), dim, idx, TO(c, src_zero, dt), 0, MT_SR_SUM), dim, idx);
        mt_tensor *single = B(c, MT_OP_LOGICAL_AND, src_zero, BS(c, MT_OP_EQ, nz, 1.0));
        mt_tensor *masked_src = WHERE(c, single, SCALAR(c, 1.0), src), *r2 = NULL;
        if (!c->st) r2 = KEEP(c, mt_scatter(MT_SCATTER_REDUCE, self, dim, idx, masked_src, 0, MT_SR_PROD, include_self, 0, &r2), r2);
        gsrc = WHERE(c, single, GATHER(c, B(c, MT_OP_MUL, g, r2), dim, idx),
                     B(c, MT_OP_DIV, GATHER(c, B(c, MT_OP_MUL, g, result), dim, idx), WHERE(c, src_zero, SCALAR(c, 1.0), src)));
    }
    if (!include_self) gs = SCATTER(c, MT_SCATTER, gs, dim, idx, zero, 1, MT_SR_NONE);
    if (needs(n, 0)) GIVE(c, out, 0, gs);
    if (needs(n, 1)) GIVE(c, out, 1, gsrc);
    return END(c, out, 2);
}

typedef struct { int kind; mt_tensor *self, *index, *src; int64_t dim; int is_value, reduce, include_self; } scat_ctx;
static mt_status scatter_oop(void *p, mt_tensor **r) {
    scat_ctx *u = p;
    return mt_scatter(u->kind, u->self, u->dim, u->index, u->src, u->is_value, u->reduce, u->include_self, 0, r);
}

mt_status mt_scatter(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *src, int is_value, int reduce,
                     int include_self, int inplace, mt_tensor **out) {
    MT_PROFILE_KIND(MT_PROF_NAME(mt__names_scatter, kind), inplace ? MT_PROF_INPLACE : MT_PROF_OP, self, index, src);
    if ((unsigned)kind >= MT_NUM_SCATTER) return mt__error(MT_ERR_VALUE, "unknown scatter %d", kind); /* C callers */
    mt_tensor *ins[2] = {self, is_value ? NULL : src};
    int grad = any_grad(2, ins);
    static const char *const inames[3] = {"scatter_", "scatter_add_", "scatter_reduce_"};
    if (grad && kind == MT_SCATTER_REDUCE && mt__is_complex(self->dtype)) /* PyTorch has no complex formula */
        return mt__error(MT_ERR_RUNTIME, "scatter_reduce does not support automatic differentiation for outputs with "
                         "complex dtype.");
    if (inplace && grad) { /* computed out of place, then copied in: the kernel's overlap checks are here */
        MT_TRY(mt__assert_no_overlap(self, index));
        if (!is_value) MT_TRY(mt__assert_no_overlap(self, src));
        scat_ctx u = {kind, self, index, src, dim, is_value, reduce, include_self};
        return into_out(inames[kind], self, 1, scatter_oop, &u, out);
    }
    MT_TRY(NOGRAD(mt__impl_scatter(kind, self, dim, index, src, is_value, reduce, include_self, inplace, out)));
    if (!grad || inplace) return MT_OK;
    const char *name = kind == MT_SCATTER_ADD ? "ScatterAddBackward0" : kind == MT_SCATTER_REDUCE ? "ScatterReduceBackward0"
                       : reduce != MT_SR_NONE ? "NotImplemented" : is_value ? "ScatterBackward1" : "ScatterBackward0";
    mt_node *n;
    mt_status st = rec(name, scatter_backward, 2, ins, *out, &n);
    if (!st && n) {
        if (self->ndim && dim < 0) dim += self->ndim;
        n->iv[0] = dim, n->iv[1] = kind, n->iv[2] = reduce, n->iv[3] = include_self;
        keep_index(n, 0, index);
        if (kind == MT_SCATTER_REDUCE && reduce != MT_SR_SUM) {
            st = mt__save(n, 0, self, 0);
            if (!st) st = mt__save(n, 1, src, 0);
            if (!st) st = mt__save(n, 2, *out, 1);
        }
    }
    if (st) MT_DROP(*out);
    return st;
}

/* ---- index_add / index_copy / index_fill ------------------------------------------------ */

static mt_status index_op_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *idx = n->index[0], *zero = SCALAR(c, 0.0);
    int64_t dim = n->iv[0];
    int kind = (int)n->iv[1];
    double alpha = n->s[0];
    if (needs(n, 0)) GIVE(c, out, 0, kind == MT_INDEX_ADD ? g : IOP(c, MT_INDEX_FILL, g, dim, idx, zero, 0));
    if (needs(n, 1)) {
        const mt_meta *sm = &n->in_meta[1];
        mt_tensor *r = NULL;
        if (kind == MT_INDEX_FILL) { /* the value: the sum over the filled positions */
            mt_tensor *mask = IOP(c, MT_INDEX_FILL, ZEROS_LIKE(c, g), dim, idx, SCALAR(c, 1.0), 0);
            r = SUMALL(c, B(c, MT_OP_MUL, g, mask));
        } else {
            r = ISEL(c, g, dim, idx);
            if (sm->ndim == 0) r = RESHAPE(c, r, sm);
            if (kind == MT_INDEX_ADD && alpha != 1) r = BS(c, MT_OP_MUL, r, alpha);
        }
        GIVE(c, out, 1, r);
    }
    return END(c, out, 2);
}

typedef struct { int kind; mt_tensor *self, *index, *source; int64_t dim; double alpha; } iop_ctx;
static mt_status index_op_oop(void *p, mt_tensor **r) {
    iop_ctx *u = p;
    return mt_index_op(u->kind, u->self, u->dim, u->index, u->source, u->alpha, 0, r);
}

mt_status mt_index_op(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *source, double alpha,
                      int inplace, mt_tensor **out) {
    MT_PROFILE_KIND(MT_PROF_NAME(mt__names_index, kind), inplace ? MT_PROF_INPLACE : MT_PROF_OP, self, index, source);
    *out = NULL;
    if ((unsigned)kind >= MT_NUM_INDEX) return mt__error(MT_ERR_VALUE, "mt_index_op: unknown kind %d", kind);
    mt_tensor *ins[2] = {self, source};
    int grad = any_grad(2, ins);
    static const char *const inames[3] = {"index_add_", "index_copy_", "index_fill_"};
    if (inplace && grad) { /* as scatter's */
        MT_TRY(mt__assert_no_overlap(self, index));
        if (kind != MT_INDEX_FILL) MT_TRY(mt__assert_no_overlap(self, source));
        iop_ctx u = {kind, self, index, source, dim, alpha};
        return into_out(inames[kind], self, 1, index_op_oop, &u, out);
    }
    MT_TRY(NOGRAD(mt__impl_index_op(kind, self, dim, index, source, alpha, inplace, out)));
    if (!grad || inplace) return MT_OK;
    const char *name = kind == MT_INDEX_ADD ? "IndexAddBackward0" : kind == MT_INDEX_COPY ? "IndexCopyBackward0"
                       : source->wrapped ? "IndexFillBackward0" : "IndexFillBackward1";
    if (kind == MT_INDEX_FILL && source->wrapped) ins[1] = NULL;
    mt_node *n;
    mt_status st = rec(name, index_op_backward, 2, ins, *out, &n);
    if (!st && n) {
        if (self->ndim && dim < 0) dim += self->ndim;
        n->iv[0] = dim, n->iv[1] = kind, n->s[0] = alpha;
        keep_index(n, 0, index);
    }
    if (st) MT_DROP(*out);
    return st;
}

/* ---- masks ------------------------------------------------------------------------------- */

static mt_status masked_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *mask = n->index[0];
    if (n->op == 0) { /* masked_select: zeros of the broadcast shape, grad scattered into the mask */
        mt_meta m = n->in_meta[0];
        mt_tensor *pair[2] = {mask, NULL}, hdr;
        hdr.ndim = m.ndim;
        memcpy(hdr.sizes, m.sizes, m.ndim * sizeof(int64_t));
        pair[1] = &hdr;
        if (!c->st) c->st = mt__broadcast_shapes(2, pair, &m.ndim, m.sizes);
        mt_tensor *r = NULL, *z = ZEROS(c, &m);
        if (!c->st) r = KEEP(c, mt_masked_scatter(z, mask, g, 0, &r), r);
        GIVE(c, out, 0, r);
    } else { /* masked_scatter: self where the mask is false; source gets the masked grads, zero-padded */
        if (needs(n, 0)) {
            mt_tensor *r = NULL, *zero = SCALAR(c, 0.0);
            if (!c->st) r = KEEP(c, mt_ternary(MT_OP_MASKED_FILL, g, mask, zero, 0, NULL, &r), r);
            GIVE(c, out, 0, r);
        }
        if (needs(n, 1)) {
            const mt_meta *sm = &n->in_meta[1];
            mt_tensor *sel = NULL, *r = NULL;
            if (!c->st) sel = KEEP(c, mt_masked_select(g, mask, &sel), sel);
            int64_t total = 1, have = sel ? sel->sizes[0] : 0;
            for (int d = 0; d < sm->ndim; d++) total *= sm->sizes[d];
            if (sel && total > have) {
                mt_meta pm = {1, sel->dtype, {total - have}};
                mt_tensor *parts[2] = {sel, ZEROS(c, &pm)};
                if (!c->st) sel = KEEP(c, mt_cat(2, parts, 0, &r), r);
            }
            GIVE(c, out, 1, RESHAPE(c, sel, sm));
        }
    }
    return END(c, out, 2);
}

mt_status mt_masked_select(mt_tensor *t, mt_tensor *mask, mt_tensor **out) {
    MT_PROFILE("masked_select", t, mask);
    MT_TRY(NOGRAD(mt__impl_masked_select(t, mask, out)));
    if (!mt__grad_enabled() || !mt__requires_grad(t)) return MT_OK;
    mt_node *n;
    mt_status st = rec("MaskedSelectBackward0", masked_backward, 1, &t, *out, &n);
    if (!st && n) n->op = 0, keep_index(n, 0, mask);
    if (st) MT_DROP(*out);
    return st;
}

typedef struct { mt_tensor *t, *mask, *source; } msc_ctx;
static mt_status masked_scatter_oop(void *p, mt_tensor **r) {
    msc_ctx *u = p;
    return mt_masked_scatter(u->t, u->mask, u->source, 0, r);
}

mt_status mt_masked_scatter(mt_tensor *t, mt_tensor *mask, mt_tensor *source, int inplace, mt_tensor **out) {
    MT_PROFILE_KIND("masked_scatter", inplace ? MT_PROF_INPLACE : MT_PROF_OP, t, mask, source);
    mt_tensor *ins[2] = {t, source};
    int grad = any_grad(2, ins);
    if (inplace && grad) {
        msc_ctx u = {t, mask, source};
        return into_out("masked_scatter_", t, 1, masked_scatter_oop, &u, out);
    }
    MT_TRY(NOGRAD(mt__impl_masked_scatter(t, mask, source, inplace, out)));
    if (!grad || inplace) return MT_OK;
    mt_node *n;
    mt_status st = rec("MaskedScatterBackward0", masked_backward, 2, ins, *out, &n);
    if (!st && n) n->op = 1, keep_index(n, 0, mask);
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_nonzero(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("nonzero", t);
    return mt__impl_nonzero(t, out);
}

/* ---- unique, bincount: results PyTorch does not differentiate ---------------------------- */

static mt_status not_differentiable(mt_node *n, mt_tensor *const *g, mt_tensor **out) {
    (void)g, (void)out;
    static const char *const ops[] = {"_unique2", "unique_dim", "unique_consecutive"};
    if (n->op < 3) return mt__error(MT_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented.", ops[n->op]);
    return mt__error(MT_ERR_RUNTIME, "derivative for aten::bincount is not implemented");
}

mt_status mt_unique(mt_tensor *t, int consecutive, int has_dim, int64_t dim, mt_tensor **values, mt_tensor **inverse,
                    mt_tensor **counts) {
    MT_PROFILE(consecutive ? "unique_consecutive" : has_dim ? "unique_dim" : "_unique2", t);
    MT_TRY(NOGRAD(mt__impl_unique(t, consecutive, has_dim, dim, values, inverse, counts)));
    if (!mt__grad_enabled() || !mt__requires_grad(t)) return MT_OK;
    int kind = consecutive ? 2 : has_dim != 0; /* any nonzero flag from C callers */
    static const char *const names[] = {"Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0"};
    mt_node *n;
    mt_status st = rec(names[kind], not_differentiable, 1, &t, *values, &n);
    if (!st && n) n->op = kind;
    if (st) {
        MT_DROP(*values);
        if (inverse) MT_DROP(*inverse);
        if (counts) MT_DROP(*counts);
    }
    return st;
}

mt_status mt_bincount(mt_tensor *t, mt_tensor *weights, int64_t minlength, mt_tensor **out) {
    MT_PROFILE("bincount", t, weights);
    MT_TRY(NOGRAD(mt__impl_bincount(t, weights, minlength, out)));
    if (!weights || !mt__grad_enabled() || !mt__requires_grad(weights)) return MT_OK;
    mt_node *n;
    mt_tensor *ins[2] = {NULL, weights};
    mt_status st = rec("NotImplemented", not_differentiable, 2, ins, *out, &n);
    if (!st && n) n->op = 3;
    if (st) MT_DROP(*out);
    return st;
}

/* ---- complex <-> real views -------------------------------------------------------------
 * Not tracked as views of their base (as view(dtype) is not): an in-place write into one is not
 * replayed on its base's history, which regenerates views with as_strided of the base's dtype. */

/* ViewAsRealBackward0: view_as_complex(grad.contiguous()); ViewAsComplexBackward0: view_as_real(...) */
static mt_status view_as_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = NULL, *r = NULL;
    g = KEEP(c, mt_contiguous(grads[0], &g), g);
    if (!c->st) r = KEEP(c, n->op ? mt_view_as_real(g, &r) : mt_view_as_complex(g, &r), r);
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status record_view_as(const char *name, int to_real, mt_tensor *t, mt_tensor **out) {
    if (!mt__grad_enabled() || !mt__requires_grad(t)) return MT_OK;
    mt_node *n;
    mt_status st = mt__record(name, view_as_backward, 1, &t, 1, out, &n);
    if (!st && n) n->op = !to_real; /* the backward goes the other way */
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_view_as_real(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("view_as_real", t);
    MT_TRY(NOGRAD(mt__impl_view_as_real(t, out)));
    return record_view_as("ViewAsRealBackward0", 1, t, out);
}

mt_status mt_view_as_complex(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("view_as_complex", t);
    MT_TRY(NOGRAD(mt__impl_view_as_complex(t, out)));
    return record_view_as("ViewAsComplexBackward0", 0, t, out);
}
