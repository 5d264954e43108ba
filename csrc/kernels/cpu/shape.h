/* shape.h — the shape and index kernels (shape.c, scatter.c, sort.c) without autograd,
 * and the helpers they share (internal). The public entry points with autograd are in
 * csrc/autograd/formulas_shape.c. */
#ifndef MT_SHAPE_H
#define MT_SHAPE_H

#include "../../core/internal.h"

/* a header over t's storage with other sizes/strides/offset (no reference taken: stack only) */
static inline mt_tensor mt__restride(const mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                                     int64_t offset) {
    mt_tensor h = *t;
    h.ndim = ndim;
    memcpy(h.sizes, sizes, ndim * sizeof(int64_t));
    memcpy(h.strides, strides, ndim * sizeof(int64_t));
    h.offset = offset;
    return h;
}
/* dst <- src elementwise (src broadcast to dst, converted), any strides, negative ones included */
void mt__strided_copy(mt_tensor *dst, const mt_tensor *src);
/* an uninitialised tensor shaped like t with the layout of empty_like(t) (preserve format) */
mt_status mt__empty_like(const mt_tensor *t, int dtype, mt_tensor **out);
/* both tensors must be on one device (PyTorch's text) */
mt_status mt__same_device(const mt_tensor *a, const mt_tensor *b);
/* index tensors must be int64 (or int32 where PyTorch allows it) */
int64_t mt__load_index(const mt_tensor *idx, const char *p);

/* shape.c */
mt_status mt__impl_cat(int n, mt_tensor *const *ts, int64_t dim, mt_tensor **out);
mt_status mt__impl_stack(int n, mt_tensor *const *ts, int64_t dim, mt_tensor **out);
mt_status mt__impl_flip(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out);
mt_status mt__impl_roll(mt_tensor *t, int nshifts, const int64_t *shifts, int ndims, const int64_t *dims, mt_tensor **out);
mt_status mt__impl_repeat(mt_tensor *t, int n, const int64_t *repeats, mt_tensor **out);
mt_status mt__impl_tril(mt_tensor *t, int64_t diagonal, int upper, mt_tensor *out, mt_tensor **result);
mt_status mt__impl_diagonal(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out);
mt_status mt__impl_diag_embed(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out);
mt_status mt__impl_trace(mt_tensor *t, mt_tensor **out);
mt_status mt__impl_rot90(mt_tensor *t, int64_t k, int64_t d0, int64_t d1, mt_tensor **out);

/* scatter.c */
mt_status mt__impl_index_select(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out);
mt_status mt__impl_gather(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out);
mt_status mt__impl_scatter(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *src, int is_value,
                           int reduce, int include_self, int inplace, mt_tensor **out);
mt_status mt__impl_index_op(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *source, double alpha,
                            int inplace, mt_tensor **out);
mt_status mt__impl_masked_select(mt_tensor *t, mt_tensor *mask, mt_tensor **out);
mt_status mt__impl_masked_scatter(mt_tensor *t, mt_tensor *mask, mt_tensor *source, int inplace, mt_tensor **out);
mt_status mt__impl_take(mt_tensor *t, mt_tensor *index, mt_tensor **out);
mt_status mt__impl_put_(mt_tensor *t, mt_tensor *index, mt_tensor *source, int accumulate);
mt_status mt__impl_nonzero(mt_tensor *t, mt_tensor **out);

/* sort.c */
mt_status mt__impl_sort(mt_tensor *t, int64_t dim, int descending, int stable, mt_tensor **values, mt_tensor **indices);
mt_status mt__impl_topk(mt_tensor *t, int64_t k, int64_t dim, int largest, int sorted, mt_tensor **values,
                        mt_tensor **indices);
mt_status mt__impl_kthvalue(mt_tensor *t, int64_t k, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mt__impl_cummax(int is_min, mt_tensor *t, int64_t dim, mt_tensor **values, mt_tensor **indices);

/* unique.c */
mt_status mt__impl_unique(mt_tensor *t, int consecutive, int has_dim, int64_t dim, mt_tensor **values,
                          mt_tensor **inverse, mt_tensor **counts);
mt_status mt__impl_bincount(mt_tensor *t, mt_tensor *weights, int64_t minlength, mt_tensor **out);

#endif
