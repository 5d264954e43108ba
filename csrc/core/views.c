/* views.c — ops that return a new header over the same storage, and resize. */
#include <stdio.h>

#include "internal.h"
#include "../autograd/autograd.h" /* resize_ refuses tensors that require grad */

#define SZ(buf, nd, s) mt__fmt_sizes(buf, sizeof buf, nd, s)

/* PyTorch's setStrided checks: no negative strides, storage size computed without overflow
 * (as unsigned, so negative sizes overflow), and in bounds of the storage. */
static mt_status check_bounds(const mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                              int64_t offset) {
    char a[256], b[256];
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0)
            return mt__error(MT_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got "
                             "strides: %s", SZ(a, ndim, strides));
    if (offset < 0) return mt__error(MT_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
    uint64_t need = 1, isz = (uint64_t)mt_dtype_itemsize(t->dtype);
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return MT_OK; /* an empty view fits any storage */
        uint64_t add = 0;
        overflow |= sizes[i] < 0 || __builtin_mul_overflow((uint64_t)strides[i], (uint64_t)sizes[i] - 1, &add);
        overflow |= __builtin_add_overflow(need, add, &need);
    }
    uint64_t with_offset; /* PyTorch adds the offset before the itemsize: one past int64 is its overflow */
    overflow |= __builtin_add_overflow(need, (uint64_t)offset, &with_offset) ||
                __builtin_mul_overflow(with_offset, isz, &with_offset) || with_offset > INT64_MAX;
    overflow |= __builtin_mul_overflow(need, isz, &need) || need > ((uint64_t)1 << 62);
    if (overflow)
        return mt__error(MT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                         SZ(a, ndim, sizes), SZ(b, ndim, strides));
    __int128 exact = (__int128)need + (__int128)offset * isz; /* a huge offset must not wrap (fuzzer) */
    int64_t total = exact > INT64_MAX ? INT64_MAX : (int64_t)exact;
    if (exact > t->storage->nbytes)
        return mt__error(MT_ERR_RUNTIME,
                         "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %lld requiring a "
                         "storage size of %lld are out of bounds for storage of size %lld",
                         SZ(a, ndim, sizes), SZ(b, ndim, strides), (long long)offset, (long long)isz,
                         (long long)total, (long long)t->storage->nbytes);
    return MT_OK;
}

mt_status mt__impl_as_strided(mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                        mt_tensor **out) {
    if (ndim < 0 || ndim > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "as_strided: too many dimensions");
    MT_TRY(check_bounds(t, ndim, sizes, strides, offset));
    return mt__view_of(t, ndim, sizes, strides, offset, out);
}

/* Resolve one -1 and check the element count (PyTorch's infer_size, same checks and texts). The
 * product wraps as PyTorch's does: a wrapped match (a 0 after huge sizes) is refused afterwards by the
 * header's numel check, with PyTorch's "numel: integer multiplication overflow". */
static mt_status infer_size(int ndim, const int64_t *in, int64_t numel, int64_t *outsz) {
    int infer = -1;
    int64_t prod = 1;
    char a[256];
    for (int i = 0; i < ndim; i++) {
        outsz[i] = in[i];
        if (in[i] == -1) {
            if (infer >= 0) return mt__error(MT_ERR_RUNTIME, "only one dimension can be inferred");
            infer = i;
        } else if (in[i] < 0) {
            return mt__error(MT_ERR_RUNTIME, "invalid shape dimension %lld at index %d of shape %s",
                             (long long)in[i], i, SZ(a, ndim, in));
        } else {
            prod = mt__wmul(prod, in[i]);
        }
    }
    if (numel == prod || (infer >= 0 && prod > 0 && numel % prod == 0)) {
        if (infer >= 0) {
            if (prod == 0)
                return mt__error(MT_ERR_RUNTIME,
                                 "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                                 "dimension size -1 can be any value and is ambiguous", SZ(a, ndim, in));
            outsz[infer] = numel / prod;
        }
        return MT_OK;
    }
    return mt__error(MT_ERR_RUNTIME, "shape '%s' is invalid for input of size %lld", SZ(a, ndim, in),
                     (long long)numel);
}

/* PyTorch's computeStride: strides for viewing t as newshape, or 0 if impossible. */
int mt__compute_stride(const mt_tensor *t, int nd, const int64_t *newshape, int64_t *newstride) {
    int od = t->ndim;
    const int64_t *oldshape = t->sizes, *oldstride = t->strides;
    if (od == 0) {
        for (int i = 0; i < nd; i++) newstride[i] = 1;
        return 1;
    }
    int64_t numel = mt__numel(od, oldshape);
    if (numel == 0) {
        if (od == nd && !memcmp(oldshape, newshape, nd * sizeof(int64_t))) {
            memcpy(newstride, oldstride, nd * sizeof(int64_t));
            return 1;
        }
        for (int d = nd - 1; d >= 0; d--)
            newstride[d] = d == nd - 1 ? 1 : mt__wmul(newshape[d + 1] > 1 ? newshape[d + 1] : 1, newstride[d + 1]);
        return 1;
    }
    int64_t view_d = nd - 1;
    int64_t chunk_base_stride = oldstride[od - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int64_t tensor_d = od - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= oldshape[tensor_d];
        if (tensor_d == 0 ||
            (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != mt__wmul(tensor_numel, chunk_base_stride))) {
            while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
                newstride[view_d] = mt__wmul(view_numel, chunk_base_stride);
                view_numel = mt__wmul(view_numel, newshape[view_d]);
                view_d--;
            }
            if (view_numel != tensor_numel) return 0;
            if (tensor_d > 0) {
                chunk_base_stride = oldstride[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

mt_status mt__impl_view(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    if (ndim > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "view: too many dimensions");
    int64_t shape[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    MT_TRY(infer_size(ndim, sizes, mt_tensor_numel(t), shape));
    if (!mt__compute_stride(t, ndim, shape, strides))
        return mt__error(MT_ERR_RUNTIME,
                         "view size is not compatible with input tensor's size and stride (at least one "
                         "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    return mt__view_of(t, ndim, shape, strides, t->offset, out);
}

mt_status mt__impl_reshape(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    if (ndim > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "reshape: too many dimensions");
    int64_t shape[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    MT_TRY(infer_size(ndim, sizes, mt_tensor_numel(t), shape));
    if (mt__compute_stride(t, ndim, shape, strides)) return mt__view_of(t, ndim, shape, strides, t->offset, out);
    mt_tensor *c;
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, &c));
    mt_status st = mt_copy_(c, t);
    if (!st) st = mt__view_of(c, ndim, shape, NULL, 0, out);
    mt_tensor_release(c);
    return st;
}

mt_status mt__impl_transpose(mt_tensor *t, int64_t d0, int64_t d1, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&d0, t->ndim));
    MT_TRY(mt__wrap_dim(&d1, t->ndim));
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof sizes);
    memcpy(strides, t->strides, sizeof strides);
    if (t->ndim) {
        sizes[d0] = t->sizes[d1], sizes[d1] = t->sizes[d0];
        strides[d0] = t->strides[d1], strides[d1] = t->strides[d0];
    }
    return mt__view_of(t, t->ndim, sizes, strides, t->offset, out);
}

mt_status mt__impl_permute(mt_tensor *t, int ndim, const int64_t *dims, mt_tensor **out) {
    if (ndim != t->ndim)
        return mt__error(MT_ERR_RUNTIME,
                         "permute(sparse_coo): number of dimensions in the tensor input does not match the "
                         "length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to "
                         "len(dims) = %d",
                         t->ndim, ndim);
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int seen[MT_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++) {
        int64_t d = dims[i];
        MT_TRY(mt__wrap_dim(&d, ndim));
        if (seen[d]) return mt__error(MT_ERR_RUNTIME, "permute(): duplicate dims are not allowed.");
        seen[d] = 1;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return mt__view_of(t, ndim, sizes, strides, t->offset, out);
}

mt_status mt__impl_expand(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out) {
    char a[256], b[256];
    int legacy = t->dtype != MT_BOOL && t->dtype != MT_BF16; /* PyTorch's type string: no legacy name for those */
    if (ndim < t->ndim)
        return mt__error(MT_ERR_RUNTIME,
                         "expand(%s%s%s{%s}, size=%s): the number of sizes provided (%d) must be "
                         "greater or equal to the number of dimensions in the tensor (%d)",
                         legacy ? "torch." : "CPU", mt_dtype_names[t->dtype], legacy ? "Tensor" : "Type",
                         SZ(a, t->ndim, t->sizes), SZ(b, ndim, sizes), ndim, t->ndim);
    if (ndim > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "expand: too many dimensions");
    int64_t osz[MT_MAX_DIMS], ost[MT_MAX_DIMS];
    if (t->ndim == 0) { /* PyTorch: the target sizes as given, every stride 0 */
        for (int i = 0; i < ndim; i++) {
            if (sizes[i] < 0) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
            osz[i] = sizes[i], ost[i] = 0;
        }
        return mt__view_of(t, ndim, osz, ost, t->offset, out);
    }
    for (int i = ndim - 1; i >= 0; i--) {
        int off = ndim - 1 - i;
        int dim = t->ndim - 1 - off;
        int64_t size = dim >= 0 ? t->sizes[dim] : 1;
        int64_t stride = dim >= 0 ? t->strides[dim] : (i + 1 < ndim ? mt__wmul(osz[i + 1], ost[i + 1]) : 1);
        int64_t target = sizes[i];
        if (target == -1) {
            if (dim < 0)
                return mt__error(MT_ERR_RUNTIME,
                                 "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %d",
                                 i);
            target = size;
        }
        if (size != target) {
            if (size != 1)
                return mt__error(MT_ERR_RUNTIME,
                                 "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                                 "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                                 (long long)target, (long long)size, i, SZ(a, ndim, sizes), SZ(b, t->ndim, t->sizes));
            if (target < 0) /* what PyTorch's numel check then says */
                return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
            size = target;
            stride = 0;
        }
        osz[i] = size;
        ost[i] = stride;
    }
    return mt__view_of(t, ndim, osz, ost, t->offset, out);
}

mt_status mt__impl_squeeze(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out) {
    int drop[MT_MAX_DIMS] = {0};
    if (ndims < 0) {
        for (int i = 0; i < t->ndim; i++) drop[i] = t->sizes[i] == 1;
    } else {
        for (int k = 0; k < ndims; k++) {
            int64_t d = dims[k];
            MT_TRY(mt__wrap_dim(&d, t->ndim));
            if (drop[d] & 2)
                return mt__error(MT_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
            drop[d] = 2 | (t->ndim && t->sizes[d] == 1);
        }
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (!(drop[i] & 1)) sizes[n] = t->sizes[i], strides[n++] = t->strides[i];
    return mt__view_of(t, n, sizes, strides, t->offset, out);
}

mt_status mt__impl_unsqueeze(mt_tensor *t, int64_t dim, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim + 1));
    if (t->ndim + 1 > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "unsqueeze: too many dimensions");
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == dim) {
            sizes[i] = 1;
            strides[i] = dim >= t->ndim ? 1 : mt__wmul(t->sizes[dim], t->strides[dim]);
        } else {
            sizes[i] = t->sizes[j];
            strides[i] = t->strides[j++];
        }
    }
    return mt__view_of(t, t->ndim + 1, sizes, strides, t->offset, out);
}

mt_status mt__impl_select(mt_tensor *t, int64_t dim, int64_t index, mt_tensor **out) {
    if (t->ndim == 0) return mt__error(MT_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    int64_t size = t->sizes[dim];
    if (index < -size || index >= size) {
        char a[256];
        return mt__error(MT_ERR_INDEX, "select(): index %lld out of range for tensor of size %s at dimension %lld",
                         (long long)index, SZ(a, t->ndim, t->sizes), (long long)dim);
    }
    if (index < 0) index += size;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    for (int i = 0, j = 0; i < t->ndim; i++)
        if (i != dim) sizes[j] = t->sizes[i], strides[j++] = t->strides[i];
    return mt__view_of(t, t->ndim - 1, sizes, strides, mt__wadd(t->offset, mt__wmul(index, t->strides[dim])), out);
}

mt_status mt__impl_slice(mt_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step, mt_tensor **out) {
    if (t->ndim == 0) return mt__error(MT_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    if (step <= 0) return mt__error(MT_ERR_VALUE, "step must be greater than zero");
    int64_t size = t->sizes[dim];
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) start = 0;
    else if (start > size) start = size;
    if (end < start) end = start;
    else if (end > size) end = size;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
    sizes[dim] = end == start ? 0 : 1 + (end - start - 1) / step; /* rounded up, without overflow for a huge step */
    strides[dim] = mt__wmul(strides[dim], step); /* only used when the slice has 2+ elements: then it fits */
    return mt__view_of(t, t->ndim, sizes, strides, mt__wadd(t->offset, mt__wmul(start, t->strides[dim])), out);
}

mt_status mt__impl_unfold(mt_tensor *t, int64_t dim, int64_t size, int64_t step, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    int64_t len = t->ndim ? t->sizes[dim] : 1;
    if (size > len)
        return mt__error(MT_ERR_RUNTIME, "maximum size for tensor at dimension %lld is %lld but size is %lld",
                         (long long)dim, (long long)len, (long long)size);
    if (size < 0) return mt__error(MT_ERR_RUNTIME, "size is %lld but must be >= 0", (long long)size);
    if (step <= 0) return mt__error(MT_ERR_RUNTIME, "step is %lld but must be > 0", (long long)step);
    if (t->ndim + 1 > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "unfold: too many dimensions");
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
    int nd = t->ndim ? t->ndim + 1 : 1;
    int64_t st = t->ndim ? t->strides[dim] : 1;
    if (t->ndim) {
        sizes[dim] = (len - size) / step + 1;
        strides[dim] = mt__wmul(st, step); /* a huge step leaves one window: its stride is unused */
    }
    sizes[nd - 1] = size;
    strides[nd - 1] = st;
    return mt__view_of(t, nd, sizes, strides, t->offset, out);
}

mt_status mt_view_dtype(mt_tensor *t, int dtype, mt_tensor **out) {
    MT_PROFILE("view", t);
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype);
    int from = mt_dtype_itemsize(t->dtype), to = mt_dtype_itemsize(dtype);
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS], offset = t->offset;
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
    if (from != to) {
        if (t->ndim == 0)
            return mt__error(MT_ERR_RUNTIME,
                             "self.dim() cannot be 0 to view %s as %s (different element sizes)",
                             mt_dtype_names[t->dtype], mt_dtype_names[dtype]);
        int last = t->ndim - 1;
        const char *a = mt_dtype_names[t->dtype], *b = mt_dtype_names[dtype];
        int r = from > to ? from / to : to / from;
        if (from < to) { /* PyTorch checks size and offset before the strides when upsizing */
            if (sizes[last] % r)
                return mt__error(MT_ERR_RUNTIME, "self.size(-1) must be divisible by %d to view %s as %s (different "
                                 "element sizes), but got %lld", r, a, b, (long long)sizes[last]);
            if (offset % r)
                return mt__error(MT_ERR_RUNTIME, "self.storage_offset() must be divisible by %d to view %s as %s "
                                 "(different element sizes), but got %lld", r, a, b, (long long)offset);
        }
        if (strides[last] != 1)
            return mt__error(MT_ERR_RUNTIME, "self.stride(-1) must be 1 to view %s as %s (different element sizes), "
                             "but got %lld", a, b, (long long)strides[last]);
        for (int i = 0; i < last; i++) {
            if (from < to && strides[i] % r)
                return mt__error(MT_ERR_RUNTIME, "self.stride(%d) must be divisible by %d to view %s as %s "
                                 "(different element sizes), but got %lld", i, r, a, b, (long long)strides[i]);
            strides[i] = from > to ? mt__wmul(strides[i], r) : strides[i] / r; /* size-1 dims: any stride */
        }
        if (from > to && (__builtin_mul_overflow(sizes[last], r, &sizes[last]) || __builtin_mul_overflow(offset, r, &offset)))
            return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
        if (from < to) sizes[last] /= r, offset /= r;
    }
    MT_TRY(mt__view_of(t, t->ndim, sizes, strides, offset, out));
    (*out)->dtype = dtype;
    return MT_OK;
}

/* resize_: keep the storage object (views of it see the change), grow its bytes if needed. */
mt_status mt_resize_(mt_tensor *t, int ndim, const int64_t *sizes) {
    MT_PROFILE("resize_", t);
    if (ndim > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "resize_: too many dimensions");
    if (mt__requires_grad(t)) return mt__error(MT_ERR_RUNTIME, "cannot resize variables that require grad");
    /* PyTorch's numel check: the sizes as uint64 (a negative one is huge), a zero anywhere gives 0 */
    uint64_t prod = 1;
    int over = 0;
    for (int i = 0; i < ndim; i++) over |= __builtin_mul_overflow(prod, (uint64_t)sizes[i], &prod);
    if (over || prod > INT64_MAX) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    int64_t numel = (int64_t)prod;
    for (int i = 0; i < ndim; i++) /* next to a zero: PyTorch makes the tensor, we refuse it */
        if (sizes[i] < 0) {
            char a[512];
            return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                             (long long)sizes[i], mt__fmt_sizes(a, sizeof a, ndim, sizes));
        }
    int64_t strides[MT_MAX_DIMS], need = 0;
    if (mt__contiguous_strides(ndim, sizes, strides)) /* [0, H, H]: its strides, as PyTorch's restride */
        return mt__error(MT_ERR_RUNTIME, "Stride calculation overflowed");
    /* PyTorch's computeStorageNbytes: an empty result needs no bytes, whatever the offset */
    if (numel && (__builtin_add_overflow(t->offset, numel, &need) ||
                  __builtin_mul_overflow(need, (int64_t)mt_dtype_itemsize(t->dtype), &need))) {
        char a[512];
        return mt__error(MT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                         mt__fmt_sizes(a, sizeof a, ndim, sizes));
    }
    mt_storage *s = t->storage;
    /* memory owned elsewhere (numpy, a shared mapping) cannot move, as in PyTorch */
    if (need > s->nbytes && s->deleter && s->deleter != free)
        return mt__error(MT_ERR_RUNTIME, "Trying to resize storage that is not resizable");
    if (need > s->nbytes && s->device == MT_CPU) {
        void *mem = malloc((size_t)need);
        if (!mem)
            return mt__oom(need);
        memcpy(mem, s->data, (size_t)s->nbytes);
        if (s->deleter) s->deleter(s->ctx);
        s->data = mem;
        s->deleter = free;
        s->ctx = mem;
        s->nbytes = need;
    } else if (need > s->nbytes) {
        s->nbytes = need;
    }
    t->ndim = ndim;
    memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
    memcpy(t->strides, strides, ndim * sizeof(int64_t));
    return MT_OK;
}

/* view_as_real: (..., ) complex as (..., 2) of its real dtype, strides doubled */
mt_status mt__impl_view_as_real(mt_tensor *t, mt_tensor **out) {
    if (!mt__is_complex(t->dtype))
        return mt__error(MT_ERR_RUNTIME, "view_as_real is only supported for complex tensors");
    if (t->ndim + 1 > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "view_as_real: too many dimensions");
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) sizes[i] = t->sizes[i], strides[i] = mt__wmul(t->strides[i], 2);
    sizes[t->ndim] = 2;
    strides[t->ndim] = 1;
    MT_TRY(mt__view_of(t, t->ndim + 1, sizes, strides, mt__wmul(t->offset, 2), out));
    (*out)->dtype = mt__complex_to_real(t->dtype);
    return MT_OK;
}

/* view_as_complex: (..., 2) float32/float64 as complex, PyTorch's checks in its order */
mt_status mt__impl_view_as_complex(mt_tensor *t, mt_tensor **out) {
    if (t->dtype != MT_F32 && t->dtype != MT_F64 && t->dtype != MT_F16)
        return mt__error(MT_ERR_RUNTIME, "view_as_complex is only supported for half, float and double tensors, but "
                         "got a tensor of scalar type: %s", mt_dtype_names[t->dtype]);
    if (t->ndim == 0) return mt__error(MT_ERR_RUNTIME, "Input tensor must have one or more dimensions");
    int nd = t->ndim - 1;
    if (t->sizes[nd] != 2) return mt__error(MT_ERR_RUNTIME, "Tensor must have a last dimension of size 2");
    if (t->strides[nd] != 1) return mt__error(MT_ERR_RUNTIME, "Tensor must have a last dimension with stride 1");
    for (int i = 0; i < nd; i++)
        if (t->strides[i] % 2)
            return mt__error(MT_ERR_RUNTIME, "Tensor must have a stride divisible by 2 for all but last dimension");
    if (t->offset % 2) return mt__error(MT_ERR_RUNTIME, "Tensor must have a storage_offset divisible by 2");
    int dt = mt__to_complex(t->dtype);
    if (dt < 0) return MT_ERR_NOT_IMPLEMENTED;
    int64_t strides[MT_MAX_DIMS];
    for (int i = 0; i < nd; i++) strides[i] = t->strides[i] / 2;
    MT_TRY(mt__view_of(t, nd, t->sizes, strides, t->offset / 2, out));
    (*out)->dtype = dt;
    return MT_OK;
}
