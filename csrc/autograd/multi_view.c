/* multi_view.c — split / split_with_sizes (chunk) / unbind: n views of one tensor recorded as ONE
 * node with n outputs (SplitBackward0, SplitWithSizesBackward0, UnbindBackward0), as PyTorch does.
 * The outputs are multi-output views: PyTorch forbids writing one in place (mt__check_write) or
 * using one after its base was written (mt__sync_view), since one node cannot be rebased per view. */
#include "formula.h"

enum { MV_SPLIT, MV_SPLIT_WITH_SIZES, MV_UNBIND };

/* the gradients of the outputs (zeros where none arrived) put back together along dim */
static mt_status multi_view_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *r = NULL;
    if (needs(n, 0)) {
        mt_status st = n->op == MV_UNBIND ? mt_stack(n->n_out, grads, n->iv[0], &r) : mt_cat(n->n_out, grads, n->iv[0], &r);
        r = keep(c, st, r);
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status multi_view(int kind, mt_tensor *t, int64_t dim, int n, const int64_t *sizes, int64_t split_size,
                            mt_tensor **outs) {
    static const char *names[] = {"SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0"};
    int grad = mt__grad_enabled() && mt__requires_grad(t);
    mt_status st = MT_OK;
    int made = 0;
    int prev = mt__grad_push(0);
    for (int64_t start = 0; made < n; made++) {
        mt_tensor **o = &outs[made];
        st = kind == MV_UNBIND ? mt__impl_select(t, dim, made, o) : mt__impl_slice(t, dim, start, start + sizes[made], 1, o);
        if (st) break;
        start += kind == MV_UNBIND ? 1 : sizes[made];
    }
    mt__grad_pop(prev);
    for (int i = 0; !st && i < made; i++) {
        mt__track_view(outs[i], t);
        if (outs[i]->base && mt__grad_enabled()) outs[i]->view_multi = grad ? 1 : 2;
    }
    mt_node *node = NULL;
    if (!st && grad && n) st = mt__record(names[kind], multi_view_backward, 1, &t, n, outs, &node);
    if (node) node->op = kind, node->iv[0] = dim, node->iv[1] = split_size;
    if (st)
        for (int i = 0; i < made; i++) MT_DROP(outs[i]);
    return st;
}

mt_status mt_split_with_sizes(mt_tensor *t, int64_t dim, int n, const int64_t *sizes, int64_t split_size,
                              mt_tensor **outs) {
    MT_PROFILE("split_with_sizes", t);
    if (t->ndim == 0) return mt__error(MT_ERR_RUNTIME, "split expects at least a 1-dimensional tensor");
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    int64_t total = 0;
    int overflow = 0; /* a sum past int64 is no size of the dim (PyTorch's wraps, and can then split oddly) */
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return mt__error(MT_ERR_RUNTIME, "split_with_sizes expects split_sizes have only non-negative entries");
        overflow |= __builtin_add_overflow(total, sizes[i], &total);
    }
    if (n < 1 || overflow || total != t->sizes[dim])
        return mt__error(MT_ERR_RUNTIME, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's "
                         "size at dimension %lld)", (long long)t->sizes[dim], (long long)dim);
    return multi_view(split_size >= 0 ? MV_SPLIT : MV_SPLIT_WITH_SIZES, t, dim, n, sizes, split_size, outs);
}

mt_status mt_unbind(mt_tensor *t, int64_t dim, mt_tensor **outs) {
    MT_PROFILE("unbind", t);
    if (t->ndim == 0) return mt__error(MT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    if (t->sizes[dim] > INT32_MAX) return mt__error(MT_ERR_RUNTIME, "unbind: too many outputs");
    return multi_view(MV_UNBIND, t, dim, (int)t->sizes[dim], NULL, -1, outs);
}

/* unbind_copy: unbind's views, each copied into a new contiguous tensor (autograd through both, as
 * the Python composition recorded it), in one call: per output a Python clone cost 3 us */
mt_status mt_unbind_copy(mt_tensor *t, int64_t dim, mt_tensor **outs) {
    MT_PROFILE("unbind_copy", t);
    MT_TRY(mt_unbind(t, dim, outs));
    mt__wrap_dim(&dim, t->ndim);
    int n = (int)t->sizes[dim];
    mt_status st = MT_OK;
    for (int i = 0; i < n; i++) {
        mt_tensor *c = NULL;
        if (!st) st = mt_tensor_is_contiguous(outs[i]) ? mt_clone(outs[i], &c) : mt_contiguous(outs[i], &c);
        mt_tensor_release(outs[i]);
        outs[i] = c;
    }
    if (st)
        for (int i = 0; i < n; i++) MT_DROP(outs[i]);
    return st;
}
