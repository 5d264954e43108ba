/* linear.c — F.linear as PyTorch composes it (so its grad_fn chain is
 * PyTorch's): a 2-D input with a bias is addmm(bias, input, weight.t());
 * a contiguous input with a 1-D bias is flattened to 2-D, addmm'd and viewed
 * back; anything else is matmul(input, weight.t()) + bias. */
#include "nn.h"

mt_status mt_linear(mt_tensor *x, mt_tensor *w, mt_tensor *b, mt_tensor **out) {
    MT_PROFILE("linear", x, w, b);
    if (x->ndim == 0 || w->ndim == 0)
        return mt__error(MT_ERR_RUNTIME, "both arguments to linear need to be at least 1D, but they are %dD and %dD",
                         x->ndim, w->ndim);
    mt_tensor *wt = NULL, *xv = NULL, *r = NULL, *t = NULL;
    mt_status st;
    if (w->ndim == 1) { mt_tensor_retain(w); wt = w; st = MT_OK; }
    else if (!(st = mt_transpose(w, 0, 1, &wt))) st = mt_tensor_rename_grad_fn(wt, "TBackward0"); /* weight.t() */
    if (st) { mt_tensor_release(wt); return st; }
    int bias_dims = 0;
    if (b) for (int d = 0; d < b->ndim; d++) bias_dims += b->sizes[d] != 1;
    int fusable = b && (b->ndim == 1 || bias_dims == 1) && mt_tensor_is_contiguous(b);
    if (b && x->ndim == 2) {
        st = mt_addmm(b, x, wt, 1, 1, NULL, out);
    } else if (fusable && mt_tensor_is_contiguous(x)) {
        int64_t rows = 1, sizes[MT_MAX_DIMS];
        for (int d = 0; d < x->ndim - 1; d++) rows = mt__wmul(rows, x->sizes[d]); /* wraps only beside a 0 size */
        int64_t flat[2] = {rows, x->sizes[x->ndim - 1]};
        st = mt_view(x, 2, flat, &xv);
        if (!st) st = mt_addmm(b, xv, wt, 1, 1, NULL, &r);
        if (!st) {
            memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
            sizes[x->ndim - 1] = r->sizes[1];
            st = mt_view(r, x->ndim, sizes, out);
        }
    } else {
        st = mt_matmul(x, wt, &r);
        /* PyTorch's output.add_(bias), out of place: the same values and AddBackward0, and the matmul
         * result may be a view autograd does not let us write into in place */
        if (!st && b) { st = mt_binary(MT_OP_ADD, r, b, 1, NULL, &t); mt_tensor_release(r); r = t; t = NULL; }
        if (!st) { *out = r; r = NULL; }
    }
    mt_tensor_release(t);
    mt_tensor_release(r);
    mt_tensor_release(xv);
    mt_tensor_release(wt);
    return st;
}
