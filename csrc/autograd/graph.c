/* graph.c — grad mode, per-tensor autograd state, recording nodes, saved tensors. */
#include <pthread.h>
#include <stdio.h>

#include "autograd.h"

static _Thread_local int grad_enabled = 1, inference_mode;
static atomic_llong next_seq;
static atomic_int anomaly_mode;
static mt_autograd_callback py_callback;

void mt_set_inference_mode(int on) { inference_mode = on != 0; }
int mt_is_inference_mode_enabled(void) { return inference_mode; }
int mt__inference_enabled(void) { return inference_mode; }
int mt_tensor_is_inference(const mt_tensor *t) { return t->storage->inference; }
void mt_set_anomaly_mode(int mode) { atomic_store(&anomaly_mode, mode); }
int mt_anomaly_mode(void) { return atomic_load(&anomaly_mode); }
int mt__anomaly_enabled(void) { return atomic_load_explicit(&anomaly_mode, memory_order_relaxed); }

void mt_autograd_set_callback(mt_autograd_callback cb) { py_callback = cb; }
mt_status mt__callback(void *handle, int kind, mt_node *n, int nin, mt_tensor *const *in, int nout, mt_tensor **out) {
    if (!py_callback) return mt__error(MT_ERR_RUNTIME, "autograd: no Python callback is registered");
    return py_callback(handle, kind, n, nin, in, nout, out);
}

int mt__grad_enabled(void) { return grad_enabled; }
void mt_set_grad_enabled(int on) { grad_enabled = on != 0; }
int mt_is_grad_enabled(void) { return grad_enabled; }
int mt__grad_push(int enabled) { int prev = grad_enabled; grad_enabled = enabled; return prev; }
void mt__grad_pop(int prev) { grad_enabled = prev; }

int mt__requires_grad(const mt_tensor *t) {
    /* PyTorch's DifferentiableViewMeta: a view of a base that requires grad does too, with or without
     * history (made in no-grad mode, or before the base came to require grad) */
    return t && (t->requires_grad || t->grad_fn || (t->base && mt__requires_grad(t->base)));
}

/* ---- node lifetime: released iteratively, so a 10^5-node chain can't overflow the stack ---- */

static _Thread_local mt_node **pending;
static _Thread_local int npending, cap_pending, draining;

static void release_saved_slots(mt_node *n) {
    for (int k = 0; k < MT_NODE_SAVED; k++) {
        mt_tensor_release(n->saved[k]);
        n->saved[k] = NULL;
        mt__node_release(n->saved_fn[k]);
        n->saved_fn[k] = NULL;
    }
    mt__release_packed(n);
}

static void acc_unlink(mt_tensor *t, mt_node *n);

static void node_free(mt_node *n) {
    if (n->handle) mt__callback(n->handle, MT_CB_RELEASE, n, 0, NULL, 0, NULL);
    if (n->fn) mt__node_release(n->fn);
    free(n->geom);
    for (int i = 0; i < n->n_next; i++)
        if (n->next[i].node) mt__node_release(n->next[i].node);
    release_saved_slots(n);
    for (int i = 0; i < n->nindex; i++) mt_tensor_release(n->index[i]);
    for (int i = 0; i < n->n_out; i++) mt_tensor_release(n->buf[i]);
    if (n->weak_variable) acc_unlink(NULL, n);
    else if (n->variable) {
        if (n->variable->grad_acc == n) n->variable->grad_acc = NULL;
        mt_tensor_release(n->variable);
    }
    free(n);
}

void mt__node_release(mt_node *n) {
    if (!n || atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1) return;
    if (npending == cap_pending) {
        int cap = cap_pending ? cap_pending * 2 : 256;
        mt_node **p = realloc(pending, cap * sizeof *p);
        if (!p) { node_free(n); return; } /* out of memory: fall back to recursion */
        pending = p;
        cap_pending = cap;
    }
    pending[npending++] = n;
    if (draining) return;
    draining = 1;
    while (npending) node_free(pending[--npending]);
    draining = 0;
}

/* one allocation: the node, then its per-input and per-output arrays */
mt_node *mt__node_new(const char *name, mt_backward_fn fn, int nin, int nout) {
    size_t size = sizeof(mt_node) + nin * (sizeof(mt_edge) + sizeof(mt_meta)) + nout * sizeof(mt_meta) +
                  2 * nout * sizeof(mt_tensor *);
    mt_node *n = calloc(1, size);
    if (!n) return NULL;
    char *p = (char *)(n + 1);
    n->in_meta = (mt_meta *)p, p += nin * sizeof(mt_meta);
    n->out_meta = (mt_meta *)p, p += nout * sizeof(mt_meta);
    n->next = (mt_edge *)p, p += nin * sizeof(mt_edge);
    n->retained = (mt_tensor **)p, p += nout * sizeof(mt_tensor *);
    n->buf = (mt_tensor **)p;
    n->n_next = nin;
    n->n_out = nout;
    atomic_init(&n->refcount, 1);
    n->name = name;
    n->apply = fn;
    n->seq = atomic_fetch_add(&next_seq, 1);
    return n;
}

void mt__meta_of(const mt_tensor *t, mt_meta *m) {
    m->ndim = t->ndim;
    m->dtype = t->dtype;
    memcpy(m->sizes, t->sizes, t->ndim * sizeof(int64_t));
}

static mt_status accumulate_grad(mt_node *n, mt_tensor *const *grads, mt_tensor **out);
static pthread_mutex_t acc_lock = PTHREAD_MUTEX_INITIALIZER; /* weak accumulator -> tensor links */

/* The edge into a tensor's history: its grad_fn, or its leaf accumulator. */
mt_status mt__edge_of(mt_tensor *t, mt_edge *e) {
    e->node = NULL;
    e->input_nr = 0;
    if (!mt__requires_grad(t)) return MT_OK;
    MT_TRY(mt__sync_view(t));
    if (t->grad_fn) {
        atomic_fetch_add(&t->grad_fn->refcount, 1);
        e->node = t->grad_fn;
        e->input_nr = t->output_nr;
        return MT_OK;
    }
    if (t->base && !t->requires_grad) return MT_OK; /* a no-grad view: requires grad, no edge */
    if (t->grad_acc) {
        atomic_fetch_add(&t->grad_acc->refcount, 1);
        e->node = t->grad_acc;
        return MT_OK;
    }
    mt_node *acc = mt__node_new("AccumulateGrad", accumulate_grad, 0, 1);
    if (!acc) return mt__error(MT_ERR_OOM, "out of memory recording autograd");
    mt__meta_of(t, &acc->out_meta[0]);
    e->node = acc;
    /* The node keeps the leaf, the leaf only points back. A leaf view is the exception: it keeps
     * its base, and the base's in-place history (b.copy_(v)) can lead back here, a cycle PyTorch
     * leaks. The node holds such a leaf weakly; freeing the leaf clears it (acc_lock). */
    if (t->base) {
        pthread_mutex_lock(&acc_lock);
        acc->weak_variable = 1;
        acc->variable = t;
        t->grad_acc = acc;
        pthread_mutex_unlock(&acc_lock);
        return MT_OK;
    }
    mt_tensor_retain(t);
    acc->variable = t;
    t->grad_acc = acc;
    return MT_OK;
}

/* An AccumulateGrad's leaf as a new reference, or NULL once a weakly held one is gone. */
mt_tensor *mt__acc_variable(mt_node *n) {
    if (!n->weak_variable) {
        if (n->variable) mt_tensor_retain(n->variable);
        return n->variable;
    }
    pthread_mutex_lock(&acc_lock);
    mt_tensor *v = n->variable;
    if (v && !mt__tensor_try_retain(v)) v = NULL; /* its last reference is being dropped */
    pthread_mutex_unlock(&acc_lock);
    return v;
}

/* t gains a history: its accumulator (reached only by older graphs, where a gradient reaching it
 * is "moved into the graph interior") stops keeping it, or t -> grad_fn -> ... -> that node -> t. */
static void acc_weaken(mt_tensor *t) {
    pthread_mutex_lock(&acc_lock);
    t->grad_acc->weak_variable = 1;
    pthread_mutex_unlock(&acc_lock);
    mt_tensor_release(t); /* the node's reference; the caller holds another */
}

/* Unlink a weakly held tensor and its accumulator when one of them is freed: give the one
 * being freed, NULL for the other (read under the lock, since it may be going at the same time). */
static void acc_unlink(mt_tensor *t, mt_node *n) {
    pthread_mutex_lock(&acc_lock);
    if (!t) t = n->variable;
    if (!n) n = t->grad_acc;
    if (t && t->grad_acc == n) t->grad_acc = NULL;
    if (n && n->variable == t) n->variable = NULL;
    pthread_mutex_unlock(&acc_lock);
}

mt_status mt__record(const char *name, mt_backward_fn fn, int nin, mt_tensor *const *inputs, int nout,
                     mt_tensor *const *outputs, mt_node **node) {
    *node = NULL;
    if (!grad_enabled) return MT_OK;
    int any = 0;
    for (int i = 0; i < nin; i++) any |= mt__requires_grad(inputs[i]);
    if (!any) return MT_OK;
    mt_node *n = mt__node_new(name, fn, nin, nout);
    if (!n) return mt__error(MT_ERR_OOM, "out of memory recording autograd");
    for (int i = 0; i < nin; i++) {
        mt_status st = mt__edge_of(inputs[i], &n->next[i]);
        if (st) { mt__node_release(n); return st; }
        if (inputs[i]) mt__meta_of(inputs[i], &n->in_meta[i]);
    }
    atomic_store(&n->refcount, nout); /* one reference per output */
    for (int k = 0; k < nout; k++) {
        mt_tensor *o = outputs[k];
        mt__meta_of(o, &n->out_meta[k]);
        if (o->grad_fn) mt__node_release(o->grad_fn);
        if (o->grad_acc && !o->grad_acc->weak_variable) acc_weaken(o); /* a former leaf written in place */
        o->grad_fn = n;
        o->output_nr = k;
        o->requires_grad = 0;
    }
    *node = n;
    if (mt__anomaly_enabled()) mt__callback(NULL, MT_CB_ANOMALY_RECORD, n, 0, NULL, 0, NULL);
    return MT_OK;
}

mt_status mt__detached_alias(mt_tensor *t, mt_tensor **out) {
    MT_TRY(mt__view_of(t, t->ndim, t->sizes, t->strides, t->offset, out));
    (*out)->wrapped = t->wrapped;
    return MT_OK;
}

mt_status mt__save(mt_node *n, int slot, mt_tensor *t, int is_output) {
    if (!n || !t) return MT_OK;
    if (t->storage->inference && !inference_mode)
        return mt__error(MT_ERR_RUNTIME,
                         "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                         "inference mode in computation tracked by autograd. To work around this, you can make a "
                         "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                         "`torch.inference_mode()`.");
    /* 1 + which output of n it is: it is re-attached to that output when unpacked */
    n->saved_is_output[slot] = is_output ? 1 + (t->grad_fn == n ? t->output_nr : 0) : 0;
    if (!is_output && t->grad_fn) { /* an input's producer, re-attached when unpacked */
        atomic_fetch_add(&t->grad_fn->refcount, 1);
        n->saved_fn[slot] = t->grad_fn;
        n->saved_nr[slot] = t->output_nr;
    }
    if (mt__saved_hooks_on()) return mt__pack(n, slot, t);
    /* Only a leaf that requires grad is kept as itself (its identity is its history). Anything
     * else is kept as a detached alias plus the history it has now: an output saved as itself
     * would be a cycle, and so would an input that a later in-place op (t.copy_(u) where u's
     * graph saved t) gives a grad_fn leading back here. */
    /* A grad-requiring leaf is kept as an alias plus its AccumulateGrad, and unpacked as the leaf
     * itself while it lives (its identity is its history). Held as itself, it closed cycles once
     * it could be written in place: a leaf view through its base, a leaf after requires_grad_(False)
     * (t.copy_(u) where u's graph saved t); the accumulator's hold turns weak in those cases. */
    if (!is_output && !t->grad_fn && mt__requires_grad(t)) {
        mt_edge e;
        MT_TRY(mt__edge_of(t, &e));
        n->saved_fn[slot] = e.node;
    }
    mt_tensor *s;
    MT_TRY(mt__detached_alias(t, &s));
    n->saved[slot] = s;
    n->saved_version[slot] = mt_tensor_version(t);
    return MT_OK;
}

mt_status mt__modified_error(const mt_tensor *t, int64_t expected, const char *type, const char *producer) {
    char shape[MT_MAX_DIMS * 24 + 1] = "";
    for (int d = 0, at = 0; d < t->ndim; d++)
        at += snprintf(shape + at, sizeof shape - at, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
    return mt__error(MT_ERR_RUNTIME,
                     "one of the variables needed for gradient computation has been modified by an inplace "
                     "operation: [%s [%s]]%s is at version %lld; expected version %lld instead. Hint: "
                     "enable anomaly detection to find the operation that failed to compute its gradient, with "
                     "torch.autograd.set_detect_anomaly(True, check_nan=False).",
                     type, shape, producer, (long long)mt_tensor_version(t), (long long)expected);
}

/* PyTorch's text for a saved tensor written in place since it was saved: its shape, and the node
 * it is an output of (named without "Backward<N>"; a leaf has none). For an input, the node is its
 * producer when it was saved (PyTorch names the one it has now: an in-place op's, if recorded). */
static mt_status modified_error(const mt_node *n, int slot, const mt_tensor *s) {
    char type[40], producer[160] = "";
    const mt_node *fn = n->saved_is_output[slot] ? n : n->saved_fn[slot];
    int nr = n->saved_is_output[slot] ? n->saved_is_output[slot] - 1 : n->saved_nr[slot];
    if (fn && fn->apply != accumulate_grad) {
        const char *name = fn->name, *cut = strstr(name, "Backward");
        int len = cut ? (int)(cut - name) : (int)strlen(name);
        snprintf(producer, sizeof producer, ", which is output %d of %.*s,", nr, len, name);
    }
    snprintf(type, sizeof type, "torch.%sTensor", mt_dtype_names[s->dtype]);
    return mt__modified_error(s, n->saved_version[slot], type, producer);
}

mt_status mt__saved(mt_node *n, int slot, mt_tensor **out) {
    if (n->released)
        return mt__error(MT_ERR_RUNTIME,
                         "Trying to backward through the graph a second time (or directly access saved tensors "
                         "after they have already been freed). Saved intermediate values of the graph are freed "
                         "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
                         "backward through the graph a second time or if you need to access saved tensors after "
                         "calling backward.");
    if (n->packed[slot]) return mt__unpack(n, slot, out);
    mt_tensor *s = n->saved[slot];
    if (mt_tensor_version(s) != n->saved_version[slot]) return modified_error(n, slot, s);
    mt_node *fn = n->saved_is_output[slot] ? n : n->saved_fn[slot];
    if (fn && fn->apply == accumulate_grad) { /* a leaf: itself while it lives (mt__save) */
        *out = mt__acc_variable(fn);
        if (*out) return MT_OK;
        fn = NULL;
    }
    if (!fn) { /* a tensor with no history, or a leaf that is gone */
        mt_tensor_retain(s);
        *out = s;
        return MT_OK;
    }
    /* attached to the node that made it (this one for an output), so double backward sees through it */
    MT_TRY(mt__detached_alias(s, out));
    if (grad_enabled) {
        atomic_fetch_add(&fn->refcount, 1);
        (*out)->grad_fn = fn;
        (*out)->output_nr = n->saved_is_output[slot] ? n->saved_is_output[slot] - 1 : n->saved_nr[slot];
    }
    return MT_OK;
}

void mt__release_saved(mt_node *n) {
    n->released = 1;
    release_saved_slots(n);
    if (n->fn) mt__release_saved(n->fn);
    if (n->handle && (n->hook_flags & MT_HOOK_FUNCTION)) mt__callback(n->handle, MT_CB_FREE_SAVED, n, 0, NULL, 0, NULL);
}

mt_status mt__check_inplace(mt_tensor *t) { return mt__check_write(t, 1); }

/* an output of split/unbind (or a view of one) written in place, or used after its base was */
mt_status mt__multi_view_error(const mt_tensor *t, int base_written) {
    static const char tail[] = "This view is the output of a function that returns multiple views. Such functions do "
                               "not allow the output views to be modified inplace. You should replace the inplace "
                               "operation by an out-of-place one.";
    if (t->view_multi == 2)
        return mt__error(MT_ERR_RUNTIME, "A view was created in no_grad mode and is being modified inplace with grad "
                         "mode enabled. %s", tail);
    /* PyTorch names the view's function without its "Backward<N>" suffix: "Output 0 of Split" */
    const char *name = t->grad_fn ? t->grad_fn->name : "a function", *cut = strstr(name, "Backward");
    int len = cut ? (int)(cut - name) : (int)strlen(name);
    return mt__error(MT_ERR_RUNTIME, "Output %d of %.*s is a view and %s modified inplace. %s", t->output_nr, len, name,
                     base_written ? "its base or another view of its base has been" : "is being", tail);
}

mt_status mt__check_write(mt_tensor *t, int grad) {
    if (t->storage->inference && !inference_mode)
        return mt__error(MT_ERR_RUNTIME,
                         "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                         "clone to get a normal tensor before doing inplace update.See "
                         "https://github.com/pytorch/rfcs/pull/17 for more details.");
    if (!grad_enabled || !grad) return MT_OK;
    if (t->base) {
        if (t->view_nograd)
            return mt__error(MT_ERR_RUNTIME,
                             "A view was created in no_grad mode and is being modified inplace with grad mode "
                             "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
                             "can clarify your code by moving both the view and the inplace either both inside the "
                             "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
                             "want the inplace to be tracked).");
        if (t->view_multi) return mt__multi_view_error(t, 0);
        /* PyTorch's check_inplace: a view that requires grad over a leaf base, whether or not the base
         * requires grad (a view given requires_grad_() over a plain tensor: rebasing the base's history
         * would take the view's own leaf-ness away, and kept a cycle) */
        if (mt__requires_grad(t) && !t->base->grad_fn)
            return mt__error(MT_ERR_RUNTIME,
                             "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    }
    if (t->requires_grad && !t->grad_fn)
        return mt__error(MT_ERR_RUNTIME,
                         "a leaf Variable that requires grad is being used in an in-place operation.");
    return MT_OK;
}

mt_status mt__rebase(mt_tensor *t, mt_tensor *result) {
    return result->grad_fn ? mt__rebase_history(t, result->grad_fn, result->output_nr) : MT_OK;
}

mt_status mt__inplace_recorded(mt_tensor *t) {
    return t->base && t->grad_fn ? mt__rebase_history(t, t->grad_fn, t->output_nr) : MT_OK;
}

/* t's history becomes (n, nr); a tensor that retains its grad moves its slot along */
void mt__set_grad_fn(mt_tensor *t, mt_node *n, int nr) {
    if (n && t->grad_acc && !t->grad_acc->weak_variable) acc_weaken(t);
    if (n) atomic_fetch_add(&n->refcount, 1);
    if (t->grad_fn) {
        mt__forget_retained(t);
        mt__node_release(t->grad_fn);
    }
    t->grad_fn = n;
    t->output_nr = nr;
    if (n) t->requires_grad = 0;
    if (n && t->retains_grad && nr < n->n_out) n->retained[nr] = t;
}

/* PyTorch's Gradient Layout Contract: a dense leaf's .grad has the leaf's strides (else contiguous) */
static int obeys_layout(const mt_tensor *g, const mt_tensor *t) {
    if (!mt__non_overlapping_and_dense(t)) return mt_tensor_is_contiguous(g);
    for (int d = 0; d < t->ndim; d++)
        if (g->sizes[d] != 1 && g->strides[d] != t->strides[d]) return 0;
    return 1;
}

mt_status mt__first_grad(mt_tensor *t, mt_tensor *g, mt_tensor **out) {
    if (!grad_enabled && !g->grad_fn && atomic_load(&g->refcount) == 1 && atomic_load(&g->storage->refcount) == 1 &&
        !g->storage->deleter && obeys_layout(g, t)) {
        mt_tensor_retain(g);
        *out = g;
        return MT_OK;
    }
    MT_TRY(mt__alloc(t->ndim, t->sizes, mt__non_overlapping_and_dense(t) ? t->strides : NULL, g->dtype, g->device,
                     out));
    mt_status st = mt_copy_(*out, g); /* recorded under create_graph, as PyTorch's copy_ */
    if (st) MT_DROP(*out);
    return st;
}

/* AccumulateGrad: leaf.grad = grad (mt__first_grad) or leaf.grad + grad */
static mt_status accumulate_grad(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    (void)out;
    mt_tensor *g = grads[0], *v = g ? mt__acc_variable(n) : NULL, *r = NULL;
    if (!v) return MT_OK; /* no gradient, or a weakly held tensor nobody holds any more */
    mt_status st = mt__sync_view(v);
    if (!st && v->grad_fn) /* written in place since (or its base was): no longer a leaf */
        st = mt__error(MT_ERR_RUNTIME, "leaf variable has been moved into the graph interior");
    if (st || !v->requires_grad) { /* PyTorch: a leaf that stopped requiring grad gets none */
        mt_tensor_release(v);
        return st;
    }
    if (!v->grad) st = mt__first_grad(v, g, &v->grad);
    else if (grad_enabled) { /* create_graph: out of place, so the sum is recorded */
        if (!(st = mt_binary(MT_OP_ADD, v->grad, g, 1, NULL, &r))) {
            mt_tensor_release(v->grad);
            v->grad = r;
        }
    } else if (!(st = mt_binary(MT_OP_ADD, v->grad, g, 1, v->grad, &r)))
        mt_tensor_release(r);
    mt_tensor_release(v);
    return st;
}

/* ---- the ABI: per-tensor autograd state ---- */

int mt_tensor_requires_grad(const mt_tensor *t) { return mt__requires_grad(t); }
int mt_tensor_is_leaf(const mt_tensor *t) {
    if (t->base) mt__sync_view((mt_tensor *)t); /* a view's regenerated history may make it a non-leaf */
    return t->grad_fn == NULL;
}
int mt_tensor_retains_grad(const mt_tensor *t) { return t->retains_grad; }

mt_status mt_tensor_set_requires_grad(mt_tensor *t, int on) {
    MT_TRY(mt__sync_view(t));
    if (t->grad_fn) {
        if (on) return MT_OK;
        return mt__error(MT_ERR_RUNTIME,
                         "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                         "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    }
    if (on && !mt__is_differentiable(t->dtype))
        return mt__error(MT_ERR_RUNTIME, "only Tensors of floating point and complex dtype can require gradients");
    if (on && t->storage->inference && !inference_mode)
        return mt__error(MT_ERR_RUNTIME, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
    t->requires_grad = on != 0;
    return MT_OK;
}

mt_status mt_tensor_retain_grad(mt_tensor *t) {
    if (!mt__requires_grad(t))
        return mt__error(MT_ERR_RUNTIME, "can't retain_grad on Tensor that has requires_grad=False");
    MT_TRY(mt__sync_view(t));
    if (t->grad_fn && t->output_nr < t->grad_fn->n_out) {
        t->retains_grad = 1;
        t->grad_fn->retained[t->output_nr] = t;
    }
    return MT_OK;
}

void mt__forget_retained(mt_tensor *t) {
    if (t->retains_grad && t->grad_fn && t->output_nr < t->grad_fn->n_out && t->grad_fn->retained[t->output_nr] == t)
        t->grad_fn->retained[t->output_nr] = NULL;
}

mt_tensor *mt_tensor_grad(mt_tensor *t) {
    if (t->grad) mt_tensor_retain(t->grad);
    return t->grad;
}

mt_status mt_tensor_set_grad(mt_tensor *t, mt_tensor *g) {
    if (g == t) return mt__error(MT_ERR_RUNTIME, "can't assign Variable as its own grad"); /* a cycle */
    if (g) {
        if (g->dtype != t->dtype)
            return mt__error(MT_ERR_RUNTIME, "assigned grad has data of a different type");
        if (g->ndim != t->ndim || memcmp(g->sizes, t->sizes, t->ndim * sizeof(int64_t)))
            return mt__error(MT_ERR_RUNTIME, "assigned grad has data of a different size");
        mt_tensor_retain(g);
    }
    mt_tensor_release(t->grad);
    t->grad = g;
    return MT_OK;
}

const char *mt_tensor_grad_fn_name(const mt_tensor *t) {
    if (t->base) mt__sync_view((mt_tensor *)t);
    return t->grad_fn ? t->grad_fn->name : NULL;
}

void mt__tensor_autograd_free(mt_tensor *t) {
    if (t->grad_acc) acc_unlink(t, NULL); /* only a weakly held tensor is freed with one */
    if (t->grad_fn) {
        mt__forget_retained(t);
        mt__node_release(t->grad_fn);
    }
    if (t->base) mt_tensor_release(t->base);
    if (t->handle) mt__callback(t->handle, MT_CB_RELEASE, NULL, 0, NULL, 0, NULL);
}

mt_status mt_detach(mt_tensor *t, mt_tensor **out) {
    MT_PROFILE("detach", t);
    return mt__detached_alias(t, out);
}

/* detach_(): drop history in place */
void mt_detach_(mt_tensor *t) {
    mt__set_grad_fn(t, NULL, 0);
    t->requires_grad = 0;
    if (t->base) mt_tensor_release(t->base);
    t->base = NULL;
}

/* t.data = src: t takes src's storage and layout, keeping its own autograd identity */
mt_status mt_tensor_set_data(mt_tensor *t, mt_tensor *src) {
    atomic_fetch_add(&src->storage->refcount, 1);
    mt_storage *old = t->storage;
    t->storage = src->storage;
    t->offset = src->offset;
    t->ndim = src->ndim;
    t->dtype = src->dtype;
    t->device = src->device;
    memcpy(t->sizes, src->sizes, sizeof t->sizes);
    memcpy(t->strides, src->strides, sizeof t->strides);
    mt__storage_release(old);
    if (t->base) mt_tensor_release(t->base); /* no longer a view of it */
    t->base = NULL;
    return MT_OK;
}
