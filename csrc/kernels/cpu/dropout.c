/* dropout.c — the dropout family, composed of public ops exactly as PyTorch's
 * _dropout_impl composes them on CPU (so the autograd graph, the rounding and
 * the random draws are PyTorch's): noise = empty_like(input) (feature
 * dropout: [N, C, 1, ...]), noise.bernoulli_(1 - p), noise.div_(1 - p), then
 * input * noise. Alpha dropout shifts by b = (noise - 1) * alpha * a + alpha * a * p. */
#include <math.h>
#include <stdio.h>

#include "nn.h"

mt_status mt_dropout(mt_tensor *x, double p, int train, int kind, int inplace, struct mt_generator *g,
                     mt_tensor **out) {
    MT_PROFILE_KIND(MT_PROF_NAME(mt__prof_names_dropout, kind), inplace ? MT_PROF_INPLACE : MT_PROF_OP, x);
    if (!(p >= 0 && p <= 1)) return mt__error(MT_ERR_RUNTIME, "dropout probability has to be between 0 and 1, but got %g", p);
    int feature = kind & MT_DROPOUT_FEATURE, alpha = kind & MT_DROPOUT_ALPHA;
    if (p == 0 || !train || mt_tensor_numel(x) == 0) {
        mt_tensor_retain(x);
        *out = x;
        return MT_OK;
    }
    mt_tensor *dst = inplace ? x : NULL;
    if (p == 1) { /* input * zeros({}) */
        mt_tensor *zero;
        MT_TRY(mt_scalar_tensor(0, 0, MT_SCALAR_INT, x->dtype, 0, &zero));
        mt_status st = mt_binary(MT_OP_MUL, x, zero, 1, dst, out);
        mt_tensor_release(zero);
        return st;
    }
    mt_tensor *noise = NULL, *b = NULL, *t = NULL, *r = NULL;
    mt_status st;
    if (feature) {
        if (x->ndim < 2) return mt__error(MT_ERR_RUNTIME, "Feature dropout requires at least 2 dimensions in the input");
        int64_t sizes[MT_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++) sizes[d] = d < 2 ? x->sizes[d] : 1;
        st = mt_empty(x->ndim, sizes, x->dtype, x->device, &noise);
    } else {
        int64_t strides[MT_MAX_DIMS];
        mt__like_strides(x, strides);
        st = mt_empty_strided(x->ndim, x->sizes, strides, x->dtype, x->device, &noise);
    }
    if (!st) st = mt_bernoulli_(noise, 1 - p, g);
    if (alpha) {
        const double ac = 1.7580993408473766;
        double a = 1. / sqrt((ac * ac * p + 1) * (1 - p));
        if (!st) st = mt_binary_scalar(MT_OP_ADD, noise, 0, -1, MT_SCALAR_INT, 0, 1, NULL, &b);
        if (!st) st = mt_binary_scalar(MT_OP_MUL, b, ac * a, 0, MT_SCALAR_FLOAT, 0, 1, b, &t);
        mt_tensor_release(t), t = NULL;
        if (!st) st = mt_binary_scalar(MT_OP_ADD, b, ac * a * p, 0, MT_SCALAR_FLOAT, 0, 1, b, &t);
        mt_tensor_release(t), t = NULL;
        if (!st) st = mt_binary_scalar(MT_OP_MUL, noise, a, 0, MT_SCALAR_FLOAT, 0, 1, noise, &t);
    } else {
        if (!st) st = mt_binary_scalar(MT_OP_DIV, noise, 1 - p, 0, MT_SCALAR_FLOAT, 0, 1, noise, &t);
    }
    mt_tensor_release(t), t = NULL;
    if (!st) st = mt_binary(MT_OP_MUL, x, noise, 1, dst, &r);
    if (!st && alpha) { /* .add_(b) on the product */
        st = mt_binary(MT_OP_ADD, r, b, 1, r, &t);
        mt_tensor_release(t);
    }
    mt_tensor_release(noise);
    mt_tensor_release(b);
    if (st) mt_tensor_release(r);
    else *out = r;
    return st;
}
