/* viewtrack.c — views and in-place writes, as PyTorch does them.
 *
 * A view remembers its base (the non-view tensor whose storage it shares). An in-place
 * write into a view gives the base a CopySlices node wrapping the in-place op's node, so
 * the base's gradient sees the write; a view whose storage was written since its history
 * was recorded gets that history regenerated from its base (AsStridedBackward0). Both
 * backward formulas are written with public ops, so with create_graph they record too. */
#include "formula.h"

static void geom_of(const mt_tensor *t, mt_geom *g) {
    g->ndim = t->ndim;
    g->offset = t->offset;
    memcpy(g->sizes, t->sizes, t->ndim * sizeof(int64_t));
    memcpy(g->strides, t->strides, t->ndim * sizeof(int64_t));
}

static mt_status set_geoms(mt_node *n, const mt_tensor *base, const mt_tensor *view) {
    if (!(n->geom = malloc(2 * sizeof(mt_geom)))) return mt__error(MT_ERR_OOM, "out of memory recording autograd");
    geom_of(base, &n->geom[0]);
    geom_of(view, &n->geom[1]);
    return MT_OK;
}

void mt__track_view(mt_tensor *out, mt_tensor *t) {
    if (out == t || out->storage != t->storage) return; /* every dtype, as PyTorch tracks views */
    mt_tensor *b = t->base ? t->base : t;
    mt_tensor_retain(b);
    if (out->base) mt_tensor_release(out->base);
    out->base = b;
    out->attr_version = mt_tensor_version(out);
    out->view_nograd = !mt__grad_enabled() || t->view_nograd;
    out->view_multi = t->view_multi; /* a view of a split output is one too */
}

/* the storage elements [lo, hi) a geometry touches (hi == lo when it has none) */
static void extent(const mt_geom *g, int64_t *lo, int64_t *hi) {
    int64_t a = g->offset, b = g->offset;
    for (int d = 0; d < g->ndim; d++) {
        if (g->sizes[d] == 0) { *lo = *hi = g->offset; return; }
        if (g->strides[d] >= 0) b += (g->sizes[d] - 1) * g->strides[d];
        else a += (g->sizes[d] - 1) * g->strides[d];
    }
    *lo = a;
    *hi = b + 1;
}

/* no two elements share a storage place (dims taken by increasing stride) */
static int non_overlapping(const mt_geom *g) {
    int idx[MT_MAX_DIMS], n = 0;
    for (int d = 0; d < g->ndim; d++) {
        if (g->sizes[d] == 0) return 1;
        if (g->sizes[d] > 1) idx[n++] = d;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && llabs(g->strides[idx[j]]) < llabs(g->strides[idx[j - 1]]); j--) {
            int t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t;
        }
    int64_t span = 0; /* last element offset reached by the dims so far */
    for (int i = 0; i < n; i++) {
        int64_t s = llabs(g->strides[idx[i]]);
        if (s <= span) return 0;
        span += s * (g->sizes[idx[i]] - 1);
    }
    return 1;
}

/* a zero-filled 1-d buffer standing for the storage range [lo, hi) */
static mt_tensor *BUFFER(F *c, int64_t lo, int64_t hi, int dtype) {
    mt_meta m = {.ndim = 1, .dtype = dtype};
    m.sizes[0] = hi - lo;
    return ZEROS(c, &m);
}

/* the elements of buf (standing for storage from lo) that geometry g covers: a tracked view */
static mt_tensor *REGION(F *c, mt_tensor *buf, const mt_geom *g, int64_t lo) {
    mt_tensor *r = NULL;
    return OK2(buf, 1) ? KEEP(c, mt_as_strided(buf, g->ndim, g->sizes, g->strides, g->offset - lo, &r), r) : NULL;
}

static void COPY_INTO(F *c, mt_tensor *dst, mt_tensor *src) {
    if (OK2(dst, src)) c->st = mt_copy_(dst, src);
}

/* t as one dimension (a copy when its layout needs one) */
static mt_tensor *FLAT(F *c, mt_tensor *t) {
    mt_tensor *r = NULL;
    int64_t n = OK2(t, 1) ? mt_tensor_numel(t) : 0;
    return OK2(t, 1) ? KEEP(c, mt_reshape(t, 1, &n, &r), r) : NULL;
}

/* buf[idx[i]] += src[i] over the flat index tensor idx */
static void INDEX_ADD(F *c, mt_tensor *buf, mt_tensor *idx, mt_tensor *src) {
    mt_tensor *r = NULL;
    if (OK2(buf, idx) && src) KEEP(c, mt_index_op(MT_INDEX_ADD, buf, 0, idx, src, 1, 1, &r), r);
}

/* PyTorch's as_strided_backward: the view's gradient is written over zeros standing for the
 * storage (added place by place when view elements share one), and the input's elements are read
 * back from it (divided by how many input elements share each place when they overlap). */
static mt_status as_strided_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_geom in = n->geom[0], view = n->geom[1];
    mt_tensor *g = grads[0];
    int64_t dims[MT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < view.ndim; d++) /* one storage place for a whole dim: its gradients add up */
        if (view.strides[d] == 0 && view.sizes[d] > 1) dims[nd++] = d, view.sizes[d] = 1;
    if (nd) {
        mt_tensor *r = NULL;
        g = KEEP(c, mt_reduce(MT_RED_SUM, g, nd, dims, 1, -1, NULL, &r), r);
    }
    int view_overlaps = !non_overlapping(&view), in_overlaps = !non_overlapping(&in);
    int64_t lo0, hi0, lo1, hi1;
    extent(&in, &lo0, &hi0);
    extent(&view, &lo1, &hi1);
    int64_t lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;
    int dtype = n->in_meta[0].dtype;
    mt_tensor *buf = BUFFER(c, lo, hi, dtype), *places = NULL, *r = NULL;
    if (view_overlaps || in_overlaps) /* storage place of each buffer element */
        places = KEEP(c, mt_arange(0, (double)(hi - lo), 1, MT_I64, MT_CPU, &r), r);
    if (view_overlaps)
        INDEX_ADD(c, buf, FLAT(c, REGION(c, places, &view, lo)), FLAT(c, g));
    else
        COPY_INTO(c, REGION(c, buf, &view, lo), g);
    if (in_overlaps) {
        mt_tensor *count = BUFFER(c, lo, hi, dtype), *at = FLAT(c, REGION(c, places, &in, lo)), *ones = NULL;
        if (OK2(at, 1)) {
            mt_meta m = {.ndim = 1, .dtype = dtype};
            m.sizes[0] = mt_tensor_numel(at);
            ones = ZEROS(c, &m);
            if (ones) c->st = mt__impl_fill(ones, 1, 1, MT_SCALAR_INT);
        }
        INDEX_ADD(c, count, at, ones);
        buf = B(c, MT_OP_DIV, buf, count); /* 0/0 = nan outside the input's places, as PyTorch's */
    }
    GIVE(c, out, 0, REGION(c, buf, &in, lo));
    return END(c, out, 1);
}

mt_status mt__record_as_strided(mt_tensor *x, mt_tensor *out) {
    mt_node *n;
    MT_TRY(mt__record("AsStridedBackward0", as_strided_backward, 1, &x, 1, &out, &n));
    return n ? set_geoms(n, x, out) : MT_OK;
}

mt_status mt__sync_view(mt_tensor *t) {
    if (!t->base) return MT_OK;
    int64_t v = mt_tensor_version(t);
    if (v == t->attr_version) return MT_OK;
    mt_tensor *b = t->base;
    if (!mt__requires_grad(b)) { /* the base has no history, so neither has the view */
        if (t->grad_fn) mt__set_grad_fn(t, NULL, 0);
        t->attr_version = v;
        return MT_OK;
    }
    if (t->view_multi == 1) return mt__multi_view_error(t, 1); /* its node cannot be regenerated per output */
    mt_node *n = mt__node_new("AsStridedBackward0", as_strided_backward, 1, 1);
    if (!n) return mt__error(MT_ERR_OOM, "out of memory recording autograd");
    mt_status st = mt__edge_of(b, &n->next[0]);
    if (!st) st = set_geoms(n, b, t);
    if (st) { mt__node_release(n); return st; }
    mt__meta_of(b, &n->in_meta[0]);
    mt__meta_of(t, &n->out_meta[0]);
    mt__set_grad_fn(t, n, 0);
    mt__node_release(n);
    t->attr_version = v;
    return MT_OK;
}

/* CopySlices: the base's gradient, except over the view, where the in-place op's backward
 * (fn) maps the view's gradient to the gradient of the view's old value; fn's other inputs
 * are this node's inputs 1.. */
static mt_status copy_slices_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_node *fn = n->fn;
    if (fn->n_out != 1)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "CopySlices of an in-place op with %d outputs is not implemented", fn->n_out);
    const mt_geom *bg = &n->geom[0], *vg = &n->geom[1];
    int64_t lo, hi;
    extent(bg, &lo, &hi);
    mt_tensor *buf = BUFFER(c, lo, hi, n->in_meta[0].dtype);
    mt_tensor *result = REGION(c, buf, bg, lo);
    COPY_INTO(c, result, grads[0]);
    mt_tensor *slice = REGION(c, buf, vg, lo), *sc = NULL;
    if (slice) sc = KEEP(c, mt_clone(slice, &sc), sc);
    if (c->st) return END(c, out, n->n_next);
    mt_tensor *small[4] = {0}, **fout = fn->n_next <= 4 ? small : calloc(fn->n_next, sizeof *fout);
    if (!fout) { END(c, out, n->n_next); return mt__error(MT_ERR_OOM, "out of memory in the autograd engine"); }
    mt_status st = fn->apply(fn, &sc, fout);
    if (!st && fout[0]) {
        mt_tensor *g0 = NULL;
        if (!(st = mt__conform(fout[0], &fn->in_meta[0], &g0))) {
            st = mt_copy_(slice, g0);
            mt_tensor_release(g0);
        }
    } else if (!st) {
        st = mt_fill(slice, 0, 0, MT_SCALAR_INT);
    }
    mt_tensor_release(fout[0]);
    for (int i = 1; i < fn->n_next; i++) {
        if (!st) out[i] = fout[i];
        else mt_tensor_release(fout[i]);
    }
    if (fout != small) free(fout);
    if (st && !c->st) c->st = st;
    GIVE(c, out, 0, result);
    return END(c, out, n->n_next);
}

mt_status mt__rebase_history(mt_tensor *t, mt_node *fn, int output_nr) {
    if (!t->base) {
        mt__set_grad_fn(t, fn, output_nr);
        return MT_OK;
    }
    mt_tensor *b = t->base;
    mt_node *cs = mt__node_new("CopySlices", copy_slices_backward, fn->n_next, 1);
    if (!cs) return mt__error(MT_ERR_OOM, "out of memory recording autograd");
    mt_status st = mt__edge_of(b, &cs->next[0]);
    if (!st) st = set_geoms(cs, b, t);
    if (st) { mt__node_release(cs); return st; }
    mt__meta_of(b, &cs->in_meta[0]);
    mt__meta_of(b, &cs->out_meta[0]);
    for (int i = 1; i < fn->n_next; i++) {
        cs->next[i] = fn->next[i];
        if (cs->next[i].node) atomic_fetch_add(&cs->next[i].node->refcount, 1);
        cs->in_meta[i] = fn->in_meta[i];
    }
    atomic_fetch_add(&fn->refcount, 1);
    cs->fn = fn;
    mt__set_grad_fn(b, cs, 0);
    mt__node_release(cs);
    /* the view's history comes from the base's from now on (regenerated on use) */
    mt__set_grad_fn(t, NULL, 0);
    t->attr_version = -1;
    if (mt__anomaly_enabled()) mt__callback(NULL, MT_CB_ANOMALY_RECORD, cs, 0, NULL, 0, NULL);
    return MT_OK;
}
