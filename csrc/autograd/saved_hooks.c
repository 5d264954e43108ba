/* saved_hooks.c — torch.autograd.graph.saved_tensors_hooks: while hooks are on in a thread,
 * a tensor an op saves for backward goes to Python's pack hook (MT_CB_PACK) and the node keeps
 * only the packed object's handle; a formula reading it gets the unpack hook's tensor
 * (MT_CB_UNPACK), attached to the saved tensor's history as PyTorch's SavedVariable does. */
#include "autograd.h"

static _Thread_local int hooks_on;

void mt_set_saved_tensors_hooks(int on) { hooks_on = on != 0; }
int mt__saved_hooks_on(void) { return hooks_on; }

mt_status mt__pack(mt_node *n, int slot, mt_tensor *t) {
    int64_t v = mt_tensor_version(t);
    void *h = NULL;
    int prev = mt__grad_push(0); /* the pack hook runs in no-grad mode, as PyTorch's */
    mt_status st = mt__callback(NULL, MT_CB_PACK, n, 1, &t, 1, (mt_tensor **)&h);
    mt__grad_pop(prev);
    MT_TRY(st);
    n->packed[slot] = h;
    if (!h) return mt__error(MT_ERR_RUNTIME, "saved_tensors_hooks: the pack hook gave no handle");
    if (mt_tensor_version(t) != v)
        return mt__error(MT_ERR_RUNTIME,
                         "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
                         "pack hook can not be modified by in-place operations as this can lead to unexpected "
                         "side-effects. Please open an issue if you need to perform in-place operations on the input "
                         "to a pack hook.");
    if (!n->saved_is_output[slot] && !t->grad_fn && mt__requires_grad(t)) { /* a leaf: weak, for unpack's identity test */
        n->packed_leaf[slot] = 1;
        n->saved_version[slot] = (int64_t)(intptr_t)t;
    }
    return MT_OK;
}

mt_status mt__unpack(mt_node *n, int slot, mt_tensor **out) {
    mt_tensor *u = NULL;
    MT_TRY(mt__callback(n->packed[slot], MT_CB_UNPACK, n, 0, NULL, 1, &u));
    if (!u) return mt__error(MT_ERR_RUNTIME, "saved_tensors_hooks: the unpack hook gave no tensor");
    if (n->packed_leaf[slot] && (intptr_t)u == (intptr_t)n->saved_version[slot]) {
        *out = u; /* the leaf itself came back (identity hooks, save_on_cpu): it is its own history */
        return MT_OK;
    }
    mt_status st = mt__detached_alias(u, out);
    mt_tensor_release(u);
    if (st || !mt__grad_enabled()) return st;
    /* recorded (create_graph): the unpacked tensor stands for the saved one in the graph */
    mt_node *fn = n->saved_is_output[slot] ? n : n->saved_fn[slot];
    if (fn) {
        atomic_fetch_add(&fn->refcount, 1);
        (*out)->grad_fn = fn;
        (*out)->output_nr = n->saved_is_output[slot] ? n->saved_is_output[slot] - 1 : n->saved_nr[slot];
    } else if (n->packed_leaf[slot]) {
        mt_tensor_release(*out);
        *out = NULL;
        return mt__error(MT_ERR_NOT_IMPLEMENTED,
                         "saved_tensors_hooks: a backward recorded (create_graph=True) through a saved leaf tensor "
                         "whose unpack hook returns another tensor is not implemented");
    }
    return MT_OK;
}

void mt__release_packed(mt_node *n) {
    for (int k = 0; k < MT_NODE_SAVED; k++) {
        if (n->packed[k]) mt__callback(n->packed[k], MT_CB_RELEASE, NULL, 0, NULL, 0, NULL);
        n->packed[k] = NULL;
    }
}
