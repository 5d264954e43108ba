/* autograd.h — graph nodes, recording and the engine (internal to the core).
 *
 * A differentiable op that ran with grad mode on and an input requiring grad
 * gets a node: edges to its inputs' nodes (or their AccumulateGrad), the
 * tensors and arguments its backward formula needs, and the metadata of each
 * input so the engine can sum broadcast gradients back and cast them.
 * Backward formulas are written with the library's own ops, so with
 * create_graph the backward pass records a graph of its own. */
#ifndef MT_AUTOGRAD_H
#define MT_AUTOGRAD_H

#include "../core/internal.h"

#define MT_NODE_SAVED 8

typedef struct mt_node mt_node;
typedef mt_status (*mt_backward_fn)(mt_node *n, mt_tensor *const *grads, mt_tensor **out);

typedef struct {
    mt_node *node; /* NULL: that input needs no gradient */
    int input_nr;
} mt_edge;

typedef struct {
    int ndim, dtype;
    int64_t sizes[MT_MAX_DIMS];
} mt_meta;

struct mt_node {
    atomic_long refcount;
    const char *name; /* PyTorch's grad_fn class name, e.g. "MulBackward0" */
    mt_backward_fn apply;
    int op;
    /* sized at creation (one allocation with the node): any number of inputs/outputs */
    int n_next;
    mt_edge *next;                    /* [n_next] */
    mt_meta *in_meta;                 /* [n_next] shape/dtype each input's gradient must have */
    int n_out;
    mt_meta *out_meta;                /* [n_out] for a missing output gradient (zeros) */
    mt_tensor **retained;             /* [n_out] weak: outputs that called retain_grad() */
    mt_tensor **buf;                  /* [n_out] engine scratch: gradients summed per output */
    mt_tensor *saved[MT_NODE_SAVED];  /* detached aliases, checked against saved_version */
    int64_t saved_version[MT_NODE_SAVED];
    int saved_is_output[MT_NODE_SAVED];
    int released;                     /* saved tensors freed after a backward without retain_graph */
    double s[4];                      /* scalar arguments (alpha, beta, value...) */
    int64_t iv[MT_MAX_DIMS + 2];      /* integer arguments (dims, sizes...) */
    int niv;
    mt_tensor *index[MT_MAX_DIMS];    /* index tensors of an advanced-indexing op */
    int nindex;
    mt_tensor *variable;              /* AccumulateGrad: the leaf (strong) */
    int64_t seq;
    /* engine scratch, valid during one backward run (runs are serialised) */
    int deps;
};

/* graph.c */
int mt__grad_enabled(void);
int mt__requires_grad(const mt_tensor *t);
/* Attach a node to outputs if grad mode is on and an input requires grad; *node
 * is NULL when nothing needs recording. */
mt_status mt__record(const char *name, mt_backward_fn fn, int nin, mt_tensor *const *inputs, int nout,
                     mt_tensor *const *outputs, mt_node **node);
mt_status mt__save(mt_node *n, int slot, mt_tensor *t, int is_output);
mt_status mt__saved(mt_node *n, int slot, mt_tensor **out); /* new ref; error if freed or modified */
void mt__node_release(mt_node *n);
/* Errors for in-place writes that autograd can't follow (leaf, view of a graph tensor). */
mt_status mt__check_inplace(mt_tensor *t);
/* The in-place op's result history becomes t's history. */
void mt__rebase(mt_tensor *t, mt_tensor *result);
mt_status mt__detached_alias(mt_tensor *t, mt_tensor **out);
void mt__forget_retained(mt_tensor *t); /* a tensor that retained its grad is going away */

/* view recorded as PyTorch's _unsafe_view (matmul's folded results) */
mt_status mt__unsafe_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);

/* no-grad section for kernels that call other ops internally */
int mt__grad_push(int enabled);
void mt__grad_pop(int prev);

#endif
