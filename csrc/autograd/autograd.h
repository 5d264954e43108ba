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

/* where a tensor lies in its storage (views, as_strided, CopySlices) */
typedef struct {
    int ndim;
    int64_t offset;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
} mt_geom;

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
    int saved_is_output[MT_NODE_SAVED];  /* 0: an input; else 1 + the output_nr of an output */
    int released;                     /* saved tensors freed after a backward without retain_graph */
    /* a saved input's history when saved (grad_fn, output_nr), re-attached on unpack (strong) */
    mt_node *saved_fn[MT_NODE_SAVED];
    int saved_nr[MT_NODE_SAVED];
    /* saved_tensors_hooks (saved_hooks.c): a packed slot holds Python's handle instead of saved[k]
     * (leaf: the saved tensor required grad) */
    void *packed[MT_NODE_SAVED];
    int packed_leaf[MT_NODE_SAVED];
    double s[4];                      /* scalar arguments (alpha, beta, value...) */
    int64_t iv[MT_MAX_DIMS + 2];      /* integer arguments (dims, sizes...) */
    int niv;
    mt_tensor *index[MT_MAX_DIMS];    /* index tensors of an advanced-indexing op */
    int64_t index_version[MT_MAX_DIMS]; /* their versions when kept (index/index_put_) */
    int nindex;
    mt_tensor *variable;              /* AccumulateGrad: the leaf (strong; weak for a leaf view, or once
                                       * the tensor gained a history) */
    int weak_variable;                /* then variable is cleared when the tensor is freed */
    int64_t seq;
    void *handle;                     /* Python-side state (hooks, metadata, a Function's ctx) */
    int hook_flags;                   /* MT_HOOK_*: which callbacks the engine makes for this node */
    int no_materialize;               /* missing output gradients reach apply as NULL, not zeros */
    mt_node *fn;                      /* CopySlices: the in-place op it wraps (strong) */
    mt_geom *geom;                    /* [2] AsStridedBackward0 / CopySlices: base (input) and view */
};

/* graph.c */
int mt__grad_enabled(void);
int mt__requires_grad(const mt_tensor *t);
/* Attach a node to outputs if grad mode is on and an input requires grad; *node
 * is NULL when nothing needs recording. */
mt_status mt__record(const char *name, mt_backward_fn fn, int nin, mt_tensor *const *inputs, int nout,
                     mt_tensor *const *outputs, mt_node **node);
mt_node *mt__node_new(const char *name, mt_backward_fn fn, int nin, int nout); /* refcount 1 */
void mt__meta_of(const mt_tensor *t, mt_meta *m);
mt_status mt__edge_of(mt_tensor *t, mt_edge *e); /* new reference to t's history (NULL: none) */
void mt__set_grad_fn(mt_tensor *t, mt_node *n, int output_nr); /* retains n */
mt_status mt__save(mt_node *n, int slot, mt_tensor *t, int is_output);
mt_status mt__saved(mt_node *n, int slot, mt_tensor **out); /* new ref; error if freed or modified */
/* PyTorch's error for a tensor a backward needs, written in place since it was kept at version `expected`:
 * `type` as PyTorch prints it ("torch.FloatTensor"), `producer` "" or ", which is output N of Op," */
mt_status mt__modified_error(const mt_tensor *t, int64_t expected, const char *type, const char *producer);
void mt__release_saved(mt_node *n); /* backward ran without retain_graph */
void mt__node_release(mt_node *n);
/* PyTorch's errors for in-place writes it refuses (leaf, view of a leaf, no-grad view, inference tensor). */
mt_status mt__check_inplace(mt_tensor *t);
/* any write into t (out=, in place): grad says whether an input or t requires grad */
mt_status mt__check_write(mt_tensor *t, int grad);
/* PyTorch's error for an output of a multi-output view op (split, unbind) written in place */
mt_status mt__multi_view_error(const mt_tensor *t, int base_written);
/* The in-place op's result history becomes t's history. A view's base gets a CopySlices node
 * instead, and the view's own history is regenerated from it (AsStridedBackward0). */
mt_status mt__rebase(mt_tensor *t, mt_tensor *result);
mt_status mt__rebase_history(mt_tensor *t, mt_node *fn, int output_nr);
/* an op whose destination t was recorded with mt__record(outputs = &t) in place: rebase if t is a view */
mt_status mt__inplace_recorded(mt_tensor *t);
/* a view op made out from t: remember the base (views of views share the root base) */
void mt__track_view(mt_tensor *out, mt_tensor *t);
/* a view whose storage was written in place since its history was recorded gets it regenerated */
mt_status mt__sync_view(mt_tensor *t);
mt_tensor *mt__acc_variable(mt_node *n); /* AccumulateGrad's leaf, new reference, or NULL */
/* as_strided's node (x -> out) with PyTorch's as_strided backward */
mt_status mt__record_as_strided(mt_tensor *x, mt_tensor *out);
/* the engine's gradient conformance: summed to m's shape, cast to its dtype (new reference) */
mt_status mt__conform(mt_tensor *g, const mt_meta *m, mt_tensor **out);
/* the one way into Python (hooks, custom Functions); see mt_autograd_set_callback */
mt_status mt__callback(void *handle, int kind, mt_node *n, int nin, mt_tensor *const *in, int nout, mt_tensor **out);
int mt__anomaly_enabled(void); /* 0 off, 1 on, 2 on and checking NaN */
mt_status mt__detached_alias(mt_tensor *t, mt_tensor **out);
/* a tensor's first .grad, as PyTorch's AccumulateGrad makes it: g itself when nothing else can
 * see it (the engine's reference only, storage unshared), it is not recorded (no create_graph)
 * and has t's layout; else a copy in t's layout (the Gradient Layout Contract) */
mt_status mt__first_grad(mt_tensor *t, mt_tensor *g, mt_tensor **out);
void mt__forget_retained(mt_tensor *t); /* a tensor that retained its grad is going away */

/* saved_hooks.c: with saved_tensors_hooks on, mt__save packs through Python and mt__saved unpacks */
int mt__saved_hooks_on(void);
mt_status mt__pack(mt_node *n, int slot, mt_tensor *t);
mt_status mt__unpack(mt_node *n, int slot, mt_tensor **out);
void mt__release_packed(mt_node *n);

/* view recorded as PyTorch's _unsafe_view (matmul's folded results) */
mt_status mt__unsafe_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);

/* no-grad section for kernels that call other ops internally */
int mt__grad_push(int enabled);
void mt__grad_pop(int prev);

#endif
