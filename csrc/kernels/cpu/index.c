/* index.c — advanced indexing: x[idx...] and x[idx...] = v with PyTorch's rules
 * (bool masks become their nonzero positions; index tensors broadcast together;
 * the broadcast index dims replace the indexed dims in place when those are
 * adjacent, and lead the result otherwise). */
#include <stdio.h>

#include "loops.h"

typedef struct {
    int ndim;                   /* dims of the result */
    int64_t sizes[MT_MAX_DIMS];
    int64_t src_stride[MT_MAX_DIMS]; /* element stride into the source per result dim (0 for index dims) */
    int nidx;
    const int64_t *idx_data[MT_MAX_DIMS];
    int64_t idx_stride[MT_MAX_DIMS][MT_MAX_DIMS]; /* per index tensor, per result dim */
    int64_t dim_size[MT_MAX_DIMS];                /* size of the source dim it indexes */
    int64_t dim_stride[MT_MAX_DIMS];              /* stride of the source dim it indexes */
    const mt_tensor *idx_t[MT_MAX_DIMS];          /* the index tensors (before broadcasting) */
    int bstart, bnd;                              /* where the broadcast index dims sit in the result */
} index_plan;

/* the true entries of a contiguous bool mask of n elements */
static int64_t count_true(const uint8_t *m, int64_t n) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) count += m[i] != 0;
    return count;
}

/* nonzero positions of a bool tensor as k int64 tensors of length count */
static mt_status mask_to_indices(mt_tensor *mask, mt_tensor **outs) {
    mt_tensor *c;
    MT_TRY(mt_contiguous(mask, &c));
    int64_t n = mt_tensor_numel(c);
    const uint8_t *m = (const uint8_t *)mt__data(c);
    int64_t count = count_true(m, n);
    int k = mask->ndim;
    mt_status st = MT_OK;
    int made = 0;
    for (; made < k; made++)
        if ((st = mt__alloc(1, &count, NULL, MT_I64, MT_CPU, &outs[made]))) goto fail;
    int64_t pos = 0, at[MT_MAX_DIMS] = {0}, *col[MT_MAX_DIMS], last = k ? mask->sizes[k - 1] : 1;
    for (int d = 0; d < k; d++) col[d] = (int64_t *)mt__data(outs[d]);
    for (int64_t row = 0; k > 0 && last > 0 && row + last <= n; row += last) { /* at: the row's leading position */
        for (int64_t j = 0; j < last; j++) {
            if (!m[row + j]) continue;
            for (int d = 0; d < k - 1; d++) col[d][pos] = at[d];
            col[k - 1][pos++] = j;
        }
        for (int d = k - 2; d >= 0 && ++at[d] == mask->sizes[d]; d--) at[d] = 0;
    }
    mt_tensor_release(c);
    return MT_OK;
fail:
    for (int i = 0; i < made; i++) mt_tensor_release(outs[i]);
    mt_tensor_release(c);
    return st;
}

/* Expand masks, convert to int64, broadcast; fills plan and owns temps in idx[]. */
static mt_status make_plan(mt_tensor *t, int n, mt_tensor *const *indices, index_plan *p, mt_tensor **held, int *nheld) {
    mt_tensor *idx[MT_MAX_DIMS] = {0};
    int pos[MT_MAX_DIMS] = {0};
    int k = 0, src_d = 0;
    *nheld = 0;
    for (int i = 0; i < n; i++) { /* PyTorch checks every index's type before anything else */
        mt_tensor *ix = indices[i];
        if (!ix) continue;
        if (ix->dtype != MT_I64 && ix->dtype != MT_I32 && ix->dtype != MT_U8 && ix->dtype != MT_BOOL)
            return mt__error(MT_ERR_INDEX, "tensors used as indices must be long, int, byte or bool tensors");
        if (!ix->storage->data && t->storage->data)
            return mt__error(MT_ERR_RUNTIME, "indices should be either on cpu or on the same device as the "
                             "indexed tensor (cpu)");
        if (!ix->storage->data && (ix->dtype == MT_BOOL || ix->dtype == MT_U8))
            return mt__error(MT_ERR_NOT_IMPLEMENTED, "indexing with a meta bool mask: the result shape depends on "
                             "its values");
    }
    for (int i = 0; i < n; i++) {
        mt_tensor *ix = indices[i];
        if (!ix) { src_d++; continue; }
        if (ix->dtype == MT_BOOL || ix->dtype == MT_U8) {
            if (src_d + ix->ndim > t->ndim)
                return mt__error(MT_ERR_INDEX, "too many indices for tensor of dimension %d", t->ndim);
            for (int d = 0; d < ix->ndim; d++) {
                if (ix->sizes[d] != t->sizes[src_d + d]) {
                    char a[64], b[64];
                    return mt__error(MT_ERR_INDEX,
                                     "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at index %d",
                                     mt__fmt_sizes(a, sizeof a, ix->ndim, ix->sizes), d,
                                     mt__fmt_sizes(b, sizeof b, t->ndim, t->sizes), src_d + d);
                }
            }
            if (*nheld + ix->ndim > 2 * MT_MAX_DIMS) return mt__error(MT_ERR_INDEX, "too many indices");
            if (ix->ndim == 0) {
                /* a 0-dim mask adds a dim of size 1 (true) or 0 (false) */
                return mt__error(MT_ERR_NOT_IMPLEMENTED, "indexing with a 0-dim bool tensor");
            }
            MT_TRY(mask_to_indices(ix, held + *nheld));
            for (int d = 0; d < ix->ndim; d++) {
                idx[k] = held[*nheld + d];
                pos[k++] = src_d++;
            }
            *nheld += ix->ndim;
        } else {
            if (src_d >= t->ndim)
                return mt__error(MT_ERR_INDEX, "too many indices for tensor of dimension %d", t->ndim);
            if (ix->dtype != MT_I64) {
                MT_TRY(mt_to_dtype(ix, MT_I64, 0, &held[*nheld]));
                ix = held[(*nheld)++];
            }
            idx[k] = ix;
            pos[k++] = src_d++;
        }
    }
    /* broadcast the index tensors */
    int bnd;
    int64_t bsz[MT_MAX_DIMS];
    if (mt__broadcast_shapes(k, idx, &bnd, bsz)) {
        char msg[1024], a[256];
        size_t len = 0;
        for (int j = 0; j < k && len < sizeof msg; j++)
            len += snprintf(msg + len, sizeof msg - len, "%s%s", j ? ", " : "",
                            mt__fmt_sizes(a, sizeof a, idx[j]->ndim, idx[j]->sizes));
        return mt__error(MT_ERR_INDEX, "shape mismatch: indexing tensors could not be broadcast together with shapes %s",
                         msg);
    }
    int empty_dim = 0, empty_result = 0;
    for (int j = 0; j < k; j++) empty_dim |= t->sizes[pos[j]] == 0;
    for (int d = 0; d < bnd; d++) empty_result |= bsz[d] == 0;
    if (empty_dim && !empty_result)
        return mt__error(MT_ERR_INDEX, "index is out of bounds for dimension with size 0");
    int adjacent = 1;
    for (int j = 1; j < k; j++)
        if (pos[j] != pos[j - 1] + 1) adjacent = 0;
    int first = k ? pos[0] : 0;
    /* result layout */
    int is_indexed[MT_MAX_DIMS] = {0};
    for (int j = 0; j < k; j++) is_indexed[pos[j]] = 1;
    if (t->ndim - k + bnd > MT_MAX_DIMS) return mt__error(MT_ERR_INDEX, "index result has too many dimensions");
    int r = 0, bstart;
    if (adjacent) {
        for (int d = 0; d < first; d++) p->sizes[r] = t->sizes[d], p->src_stride[r++] = t->strides[d];
        bstart = r;
        for (int d = 0; d < bnd; d++) p->sizes[r] = bsz[d], p->src_stride[r++] = 0;
        for (int d = first + k; d < t->ndim; d++) p->sizes[r] = t->sizes[d], p->src_stride[r++] = t->strides[d];
    } else {
        bstart = 0;
        for (int d = 0; d < bnd; d++) p->sizes[r] = bsz[d], p->src_stride[r++] = 0;
        for (int d = 0; d < t->ndim; d++)
            if (!is_indexed[d]) p->sizes[r] = t->sizes[d], p->src_stride[r++] = t->strides[d];
    }
    p->ndim = r;
    p->nidx = k;
    for (int j = 0; j < k; j++) {
        mt_tensor *ix = idx[j];
        memset(p->idx_stride[j], 0, sizeof p->idx_stride[j]);
        int lead = bnd - ix->ndim;
        for (int d = 0; d < ix->ndim; d++)
            p->idx_stride[j][bstart + lead + d] = ix->sizes[d] == 1 ? 0 : ix->strides[d];
        p->idx_data[j] = ix->storage->data ? (const int64_t *)mt__data(ix) : NULL;
        p->dim_size[j] = t->sizes[pos[j]];
        p->dim_stride[j] = t->strides[pos[j]];
        p->idx_t[j] = ix;
    }
    p->bstart = bstart;
    p->bnd = bnd;
    return MT_OK;
}

/* The strides PyTorch's TensorIterator sees for index tensor j: with the source's they decide the
 * result's layout, and its size-1 dims take part. expand_outplace broadcasts it (new leading dims
 * get size * stride of the next, broadcast dims 0), then reshape_indexer reshapes it to
 * [1] * dims_before + shape + [1] * dims_after: a view where one exists, else a contiguous copy. */
static void torch_index_strides(const index_plan *p, int j, int64_t *out) {
    const mt_tensor *ix = p->idx_t[j];
    mt_tensor e;
    e.ndim = p->bnd;
    for (int i = p->bnd - 1; i >= 0; i--) {
        int d = ix->ndim - p->bnd + i;
        int64_t size = d >= 0 ? ix->sizes[d] : 1;
        int64_t stride = ix->ndim == 0 ? 0 : d >= 0 ? ix->strides[d]
                       : mt__wmul(e.sizes[i + 1], e.strides[i + 1]); /* d < 0 needs i + 1 < bnd */
        e.sizes[i] = p->sizes[p->bstart + i];
        e.strides[i] = size == e.sizes[i] ? stride : 0;
    }
    int64_t shape[MT_MAX_DIMS];
    for (int d = 0; d < p->ndim; d++)
        shape[d] = d >= p->bstart && d < p->bstart + p->bnd ? p->sizes[d] : 1;
    if (!mt__compute_stride(&e, p->ndim, shape, out)) mt__contiguous_strides(p->ndim, shape, out);
    for (int d = 0; d < p->ndim; d++) /* TensorIterator's broadcast: a size-1 dim of a larger result */
        if (shape[d] != p->sizes[d]) out[d] = 0;
}

/* Walk the result in row-major order; call visit(result element offset, source element offset).
 * The result offset follows out_strides, or is the row-major position when out_strides is NULL.
 * Offsets move incrementally with the result index (inlined into each caller, so visit is too).
 * When no index varies along the last dim (x[idx] of rows), a run along it shares one lookup. */
static inline __attribute__((always_inline)) mt_status walk(const index_plan *p, int64_t base,
                                                            const int64_t *out_strides,
                                                            void (*visit)(void *, int64_t, int64_t), void *ctx) {
    int64_t numel = mt__numel(p->ndim, p->sizes);
    if (numel == 0) return MT_OK;
    int64_t o[MT_MAX_DIMS] = {0}, io[MT_MAX_DIMS] = {0}, ost[MT_MAX_DIMS] = {0}, src = base, dst = 0;
    if (out_strides) memcpy(ost, out_strides, p->ndim * sizeof(int64_t));
    int last = p->ndim - 1, run = last >= 0;
    for (int j = 0; j < p->nidx && run; j++) run = p->idx_stride[j][last] == 0;
    int64_t len = run ? p->sizes[last] : 1, sstep = run ? p->src_stride[last] : 0, dstep = run ? ost[last] : 0;
    int top = run ? last - 1 : last; /* the dims the odometer below moves through */
    for (int64_t lin = 0; lin < numel; lin += len) {
        int64_t off = src;
        for (int j = 0; j < p->nidx; j++) {
            int64_t v = p->idx_data[j][io[j]];
            if (v < -p->dim_size[j] || v >= p->dim_size[j])
                return mt__error(MT_ERR_INDEX, "index %lld is out of bounds for dimension %d with size %lld",
                                 (long long)v, j, (long long)p->dim_size[j]); /* j: the j-th index, as PyTorch says */
            if (v < 0) v += p->dim_size[j];
            off += v * p->dim_stride[j];
        }
        for (int64_t i = 0; i < len; i++) visit(ctx, out_strides ? dst + i * dstep : lin + i, off + i * sstep);
        for (int d = top; d >= 0; d--) {
            src += p->src_stride[d], dst += ost[d];
            for (int j = 0; j < p->nidx; j++) io[j] += p->idx_stride[j][d];
            if (++o[d] < p->sizes[d]) break;
            src -= p->src_stride[d] * p->sizes[d], dst -= ost[d] * p->sizes[d];
            for (int j = 0; j < p->nidx; j++) io[j] -= p->idx_stride[j][d] * p->sizes[d];
            o[d] = 0;
        }
    }
    return MT_OK;
}

typedef struct {
    char *dst, *src;
    int itemsize;
    mt_loop_fn add;
    int accumulate;
} move_ctx;

static inline __attribute__((always_inline)) void gather_one(void *c, int64_t lin, int64_t off) {
    move_ctx *m = c;
    switch (m->itemsize) { /* typed moves: no memcpy call per element */
    case 1: ((uint8_t *)m->dst)[lin] = ((const uint8_t *)m->src)[off]; break;
    case 2: ((uint16_t *)m->dst)[lin] = ((const uint16_t *)m->src)[off]; break;
    case 4: ((uint32_t *)m->dst)[lin] = ((const uint32_t *)m->src)[off]; break;
    case 8: ((uint64_t *)m->dst)[lin] = ((const uint64_t *)m->src)[off]; break;
    default: ((mt_bytes16 *)m->dst)[lin] = ((const mt_bytes16 *)m->src)[off]; break;
    }
}

static void scatter_one(void *c, int64_t lin, int64_t off) {
    move_ctx *m = c;
    char *d = m->dst + off * m->itemsize, *s = m->src + lin * m->itemsize;
    if (m->accumulate) {
        static const int64_t zs[3] = {0, 0, 0};
        mt_kargs k = {.alpha = 1, .ialpha = 1};
        m->add((char *[]){d, d, s}, zs, 1, &k);
    } else {
        memcpy(d, s, (size_t)m->itemsize);
    }
}

static void release_all(mt_tensor **held, int n) {
    for (int i = 0; i < n; i++) mt_tensor_release(held[i]);
}

/* x[mask], the bool mask of x's own shape: x's selected elements in order, read in one pass over
 * the mask (the general path turns the mask into one int64 tensor per dim, then gathers by them) */
static int whole_mask(const mt_tensor *t, int n, mt_tensor *const *indices) {
    const mt_tensor *m = n == 1 ? indices[0] : NULL;
    if (!m || m->dtype != MT_BOOL || m->ndim != t->ndim || !t->storage->data || !m->storage->data) return 0;
    for (int d = 0; d < t->ndim; d++)
        if (m->sizes[d] != t->sizes[d]) return 0;
    return 1;
}
static mt_status masked_gather(mt_tensor *t, mt_tensor *mask, mt_tensor **out) {
    mt_tensor *mc, *tc;
    MT_TRY(mt_contiguous(mask, &mc));
    mt_status st = mt_contiguous(t, &tc);
    if (st) { mt_tensor_release(mc); return st; }
    int64_t n = mt_tensor_numel(mc);
    const uint8_t *m = (const uint8_t *)mt__data(mc);
    int64_t count = count_true(m, n);
    if (!(st = mt__alloc(1, &count, NULL, t->dtype, t->device, out))) {
        int es = mt_dtype_itemsize(t->dtype);
        const char *src = mt__data(tc);
        char *dst = mt__data(*out);
#define MASKED_COPY(T)                                                                     \
    do {                                                                                   \
        for (int64_t i = 0; i < n; i++)                                                    \
            if (m[i]) *(T *)dst = ((const T *)src)[i], dst += sizeof(T);                   \
    } while (0)
        if (es == 16) MASKED_COPY(mt_bytes16); /* complex128 */
        else if (es == 8) MASKED_COPY(uint64_t);
        else if (es == 4) MASKED_COPY(uint32_t);
        else if (es == 2) MASKED_COPY(uint16_t);
        else MASKED_COPY(uint8_t);
#undef MASKED_COPY
    }
    mt_tensor_release(mc);
    mt_tensor_release(tc);
    return st;
}

mt_status mt__impl_index(mt_tensor *t, int n, mt_tensor *const *indices, mt_tensor **out) {
    if (n > t->ndim) return mt__error(MT_ERR_INDEX, "too many indices for tensor of dimension %d", t->ndim);
    if (whole_mask(t, n, indices)) return masked_gather(t, indices[0], out);
    index_plan p;
    mt_tensor *held[2 * MT_MAX_DIMS];
    int nheld = 0;
    mt_status st = make_plan(t, n, indices, &p, held, &nheld);
    int64_t strides[MT_MAX_DIMS];
    if (!st) {
        /* the result follows the memory layout of the (restrided) source and the indices, as
         * PyTorch's TensorIterator lays it out: operands seen as headers over the result shape */
        mt_tensor ops[4], *ptrs[4];
        int nops = p.nidx + 1 < 4 ? p.nidx + 1 : 4;
        for (int k = 0; k < nops; k++) {
            ops[k].ndim = p.ndim;
            ops[k].wrapped = 0;
            memcpy(ops[k].sizes, p.sizes, sizeof p.sizes);
            if (k) torch_index_strides(&p, k - 1, ops[k].strides);
            else memcpy(ops[k].strides, p.src_stride, sizeof p.src_stride);
            ptrs[k] = &ops[k];
        }
        mt__output_strides(nops, ptrs, p.ndim, p.sizes, strides);
        st = mt__alloc(p.ndim, p.sizes, strides, t->dtype, t->device, out);
    }
    if (!st && t->storage->data) {
        move_ctx m = {mt__data(*out), (char *)t->storage->data, mt_dtype_itemsize(t->dtype), NULL, 0};
        st = walk(&p, t->offset, strides, gather_one, &m);
        if (st) MT_DROP(*out);
    }
    release_all(held, nheld);
    return st;
}

mt_status mt__impl_index_put_(mt_tensor *t, int n, mt_tensor *const *indices, mt_tensor *values, int accumulate) {
    if (n > t->ndim) return mt__error(MT_ERR_INDEX, "too many indices for tensor of dimension %d", t->ndim);
    if (accumulate && !mt_ops[MT_OP_ADD].loops[t->dtype])
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "index_put_ with accumulate=True is not implemented for '%s'",
                         mt_dtype_names[t->dtype]);
    for (int i = 0; i < n; i++) MT_TRY(mt__assert_no_overlap(t, indices[i]));
    MT_TRY(mt__assert_no_overlap(t, values));
    index_plan p;
    mt_tensor *held[2 * MT_MAX_DIMS];
    int nheld = 0;
    mt_tensor *vals = NULL;
    mt_status st = make_plan(t, n, indices, &p, held, &nheld);
    /* then PyTorch's make_index_put_iterator checks: values expandable to the result, same dtype */
    int ok = values->ndim <= p.ndim;
    for (int i = 1; !st && ok && i <= values->ndim; i++) {
        int64_t v = values->sizes[values->ndim - i];
        ok = v == 1 || v == p.sizes[p.ndim - i];
    }
    char a[256], b[256];
    if (!st && !ok)
        st = mt__error(MT_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                       "result of shape %s", mt__fmt_sizes(a, sizeof a, values->ndim, values->sizes),
                       mt__fmt_sizes(b, sizeof b, p.ndim, p.sizes));
    if (!st && values->dtype != t->dtype)
        st = mt__error(MT_ERR_RUNTIME, "Index put requires the source and destination dtypes match, got %s for the "
                       "destination and %s for the source.", mt_dtype_names[t->dtype], mt_dtype_names[values->dtype]);
    if (!st && t->storage->data && !values->storage->data)
        st = mt__error(MT_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                       "devices, meta and cpu!");
    if (!st && t->storage->data) {
        st = mt__alloc(p.ndim, p.sizes, NULL, t->dtype, MT_CPU, &vals);
        if (!st) st = mt_copy_(vals, values);
        if (!st) {
            move_ctx m = {(char *)t->storage->data, mt__data(vals), mt_dtype_itemsize(t->dtype),
                          mt_ops[MT_OP_ADD].loops[t->dtype], accumulate};
            st = walk(&p, t->offset, NULL, scatter_one, &m);
            if (!st) mt_tensor_bump_version(t);
        }
    }
    mt_tensor_release(vals);
    release_all(held, nheld);
    return st;
}
