/* node_saved.c — what a node keeps for its backward, read from Python as PyTorch's
 * grad_fn._saved_<name> attributes (a name table in mindtorch_v2/autograd/_saved.py maps each
 * node's attribute names to these slots). */
#include "formula.h"

mt_status mt_node_saved(mt_node *n, int slot, mt_tensor **out) {
    *out = NULL;
    if (slot < 0 || slot >= MT_NODE_SAVED || (!has_saved(n, slot) && !n->released)) return MT_OK;
    return mt__saved(n, slot, out); /* after a backward without retain_graph: PyTorch's freed error */
}

int mt_node_int_args(const mt_node *n, int64_t *iv) {
    memcpy(iv, n->iv, sizeof n->iv);
    return n->niv;
}

void mt_node_float_args(const mt_node *n, double *s) { memcpy(s, n->s, sizeof n->s); }

int mt_node_input_sizes(const mt_node *n, int i, int64_t *sizes) {
    if (i < 0 || i >= n->n_next) return -1;
    memcpy(sizes, n->in_meta[i].sizes, n->in_meta[i].ndim * sizeof(int64_t));
    return n->in_meta[i].ndim;
}

int mt_node_output_sizes(const mt_node *n, int i, int64_t *sizes) {
    if (i < 0 || i >= n->n_out) return -1;
    memcpy(sizes, n->out_meta[i].sizes, n->out_meta[i].ndim * sizeof(int64_t));
    return n->out_meta[i].ndim;
}
