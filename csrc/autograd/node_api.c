/* node_api.c — the ABI over graph nodes (grad_fn objects, next_functions, hooks'
 * Python state) and custom Function nodes, whose backward runs in Python. */
#include "autograd.h"

void mt_node_retain(mt_node *n) { atomic_fetch_add(&n->refcount, 1); }
void mt_node_release(mt_node *n) { mt__node_release(n); }

mt_node *mt_tensor_grad_fn(mt_tensor *t) {
    if (t->base) mt__sync_view(t);
    if (t->grad_fn) mt_node_retain(t->grad_fn);
    return t->grad_fn;
}

int mt_tensor_output_nr(mt_tensor *t) {
    if (t->base) mt__sync_view(t);
    return t->grad_fn ? t->output_nr : 0;
}

mt_tensor *mt_tensor_base(mt_tensor *t) {
    if (t->base) mt_tensor_retain(t->base);
    return t->base;
}

const char *mt_node_name(const mt_node *n) { return n->name; }
int64_t mt_node_seq(const mt_node *n) { return n->seq; }
int mt_node_num_next(const mt_node *n) { return n->n_next; }
int mt_node_num_outputs(const mt_node *n) { return n->n_out; }

mt_node *mt_node_next(mt_node *n, int i, int *input_nr) {
    *input_nr = 0;
    if (i < 0 || i >= n->n_next || !n->next[i].node) return NULL;
    *input_nr = n->next[i].input_nr;
    mt_node_retain(n->next[i].node);
    return n->next[i].node;
}

mt_tensor *mt_node_variable(mt_node *n) {
    return mt__acc_variable(n);
}

void *mt_node_handle(const mt_node *n) { return n->handle; }
void mt_node_set_handle(mt_node *n, void *handle, int hook_flags) {
    n->handle = handle;
    n->hook_flags = hook_flags;
}
void *mt_tensor_handle(const mt_tensor *t) { return t->handle; }
void mt_tensor_set_handle(mt_tensor *t, void *handle, int hook_flags) {
    t->handle = handle;
    t->hook_flags = hook_flags;
}

/* ---- custom Functions ---- */

static mt_status function_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    return mt__callback(n->handle, MT_CB_BACKWARD, n, n->n_out, grads, n->n_next, out);
}

mt_status mt_function_record(const char *name, void *handle, int nin, mt_tensor *const *inputs, int nout,
                             mt_tensor *const *outputs, const int *differentiable, const int *dirty,
                             int materialize_grads, mt_node **node) {
    *node = NULL;
    for (int k = 0; k < nout; k++)
        if (dirty[k]) MT_TRY(mt__check_inplace(outputs[k]));
    mt_node *n = mt__node_new(name, function_backward, nin, nout);
    if (!n) return mt__error(MT_ERR_OOM, "out of memory recording autograd");
    for (int i = 0; i < nin; i++) {
        if (!inputs[i]) continue;
        mt_status st = mt__edge_of(inputs[i], &n->next[i]);
        if (st) { mt__node_release(n); return st; }
        mt__meta_of(inputs[i], &n->in_meta[i]);
    }
    for (int k = 0; k < nout; k++) mt__meta_of(outputs[k], &n->out_meta[k]);
    n->handle = handle;
    n->hook_flags = MT_HOOK_FUNCTION;
    n->no_materialize = !materialize_grads;
    mt_status st = MT_OK;
    for (int k = 0; k < nout && !st; k++) {
        if (!differentiable[k]) continue;
        if (dirty[k]) st = mt__rebase_history(outputs[k], n, k);
        else mt__set_grad_fn(outputs[k], n, k);
    }
    *node = n;
    if (!st && mt__anomaly_enabled()) mt__callback(NULL, MT_CB_ANOMALY_RECORD, n, 0, NULL, 0, NULL);
    /* the outputs own the node now; with none, it dies here (releasing handle) */
    n->handle = st ? NULL : handle;
    mt__node_release(n);
    return st;
}

mt_status mt_node_attach(mt_node *n, mt_tensor *t, int output_nr, mt_tensor **out) {
    MT_TRY(mt__detached_alias(t, out));
    mt__set_grad_fn(*out, n, output_nr);
    return MT_OK;
}
