/* iter.c — TensorIterator-style machinery: broadcast shapes, follow the inputs'
 * memory layout, coalesce dimensions, split the work across threads. */
#include "../core/internal.h"

mt_status mt__broadcast_shapes(int n, mt_tensor *const *ts, int *ndim_out, int64_t *sizes) {
    int ndim = 0;
    for (int k = 0; k < n; k++) {
        const mt_tensor *t = ts[k];
        if (!t) continue;
        int nd = t->ndim > ndim ? t->ndim : ndim;
        int64_t merged[MT_MAX_DIMS];
        for (int i = nd - 1; i >= 0; i--) {
            int off = nd - 1 - i;
            int64_t a = off < ndim ? sizes[ndim - 1 - off] : 1;
            int64_t b = off < t->ndim ? t->sizes[t->ndim - 1 - off] : 1;
            if (a != b && a != 1 && b != 1)
                return mt__error(MT_ERR_RUNTIME,
                                 "The size of tensor a (%lld) must match the size of tensor b (%lld) "
                                 "at non-singleton dimension %d",
                                 (long long)a, (long long)b, i);
            merged[i] = a == 1 ? b : a;
        }
        memcpy(sizes, merged, nd * sizeof(int64_t));
        ndim = nd;
    }
    *ndim_out = ndim;
    return MT_OK;
}

/* Element strides of t seen as broadcast to (ndim, sizes): 0 where broadcast. */
static void broadcast_strides(const mt_tensor *t, int ndim, const int64_t *sizes, int64_t *out) {
    int lead = ndim - t->ndim;
    for (int i = 0; i < ndim; i++) {
        if (i < lead) out[i] = 0;
        else out[i] = (t->sizes[i - lead] == 1 && sizes[i] != 1) ? 0 : t->strides[i - lead];
    }
}

/* PyTorch's reorder_dimensions: perm[0] is the fastest-moving dimension. */
static void compute_perm(int ndim, const int64_t *shape, int nops, int64_t (*strides)[MT_MAX_DIMS],
                         int *perm) {
    for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
    for (int i = 1; i < ndim; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int a = perm[dim0], b = perm[dim1], cmp = 0;
            for (int k = 0; k < nops; k++) {
                int64_t s0 = strides[k][a], s1 = strides[k][b];
                if (s0 == 0 || s1 == 0) continue;
                if (s0 < s1) { cmp = -1; break; }
                if (s0 > s1) { cmp = 1; break; }
                if (shape[a] > shape[b]) { cmp = 1; break; }
            }
            if (cmp > 0) {
                perm[dim0] = b;
                perm[dim1] = a;
                dim1 = dim0;
            } else if (cmp < 0) {
                break;
            }
        }
    }
}

/* PyTorch's is_non_overlapping_and_dense: the strides are a permutation of contiguous strides
 * (size-1 dimensions may have any stride). */
int mt__non_overlapping_and_dense(const mt_tensor *t) {
    if (mt_tensor_is_contiguous(t)) return 1; /* empty tensors included, as in PyTorch */
    if (t->ndim == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
    /* dims of size >= 2 sorted by stride, then the size-0 dims (size-1 dims never matter) */
    int perm[MT_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] >= 2) perm[n++] = d;
    for (int i = 1; i < n; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && t->strides[perm[j - 1]] > t->strides[perm[j]]; j--) {
            int tmp = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = tmp;
        }
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] == 0) perm[n++] = d;
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[perm[i]] != expected) return 0;
        expected *= t->sizes[perm[i]];
    }
    return 1;
}

int mt__overlap(const mt_tensor *a, const mt_tensor *b) {
    if (a && a == b) return MT_OVERLAP_FULL; /* the same tensor, empty or not (PyTorch: the same TensorImpl) */
    if (!a || !b || a->storage != b->storage || !mt_tensor_numel(a) || !mt_tensor_numel(b)) return MT_OVERLAP_NO;
    if (!mt__non_overlapping_and_dense(a) || !mt__non_overlapping_and_dense(b)) return MT_OVERLAP_TOO_HARD;
    int64_t isz = mt_dtype_itemsize(a->dtype), jsz = mt_dtype_itemsize(b->dtype);
    int64_t a0 = a->offset * isz, a1 = a0 + mt_tensor_numel(a) * isz;
    int64_t b0 = b->offset * jsz, b1 = b0 + mt_tensor_numel(b) * jsz;
    if (a0 == b0 && a1 == b1 && a->ndim == b->ndim && !memcmp(a->strides, b->strides, a->ndim * sizeof(int64_t)))
        return MT_OVERLAP_FULL;
    return a0 < b1 && b0 < a1 ? MT_OVERLAP_PARTIAL : MT_OVERLAP_NO;
}

mt_status mt__assert_no_overlap(const mt_tensor *written, const mt_tensor *input) {
    int o = mt__overlap(written, input);
    if (o == MT_OVERLAP_FULL || o == MT_OVERLAP_PARTIAL)
        return mt__error(MT_ERR_RUNTIME, "unsupported operation: some elements of the input tensor and the written-to "
                                         "tensor refer to a single memory location. Please clone() the tensor before "
                                         "performing the operation.");
    return MT_OK;
}

/* is_contiguous(memory_format=torch.channels_last) of a 4-d tensor */
static int channels_last_contiguous(const mt_tensor *t) {
    if (t->ndim != 4) return 0;
    static const int order[4] = {1, 3, 2, 0};
    int64_t expected = 1;
    for (int i = 0; i < 4; i++) {
        int d = order[i];
        if (t->sizes[d] != 1) {
            if (t->strides[d] != expected) return 0;
            expected = mt__wmul(expected, t->sizes[d]); /* wraps only when a size is 0: numel fits */
        }
    }
    return 1;
}

/* The layout TensorIterator gives a new output (allocate_or_resize_outputs after fast_set_up or
 * reorder_dimensions): inputs all of one shape and all contiguous, all channels-last or all dense
 * with equal strides pass their layout on; otherwise dimensions are ordered by the inputs' strides
 * and a plain reversed order gives contiguous strides. */
void mt__output_strides(int n, mt_tensor *const *ins, int ndim, const int64_t *sizes,
                        int64_t *strides) {
    const mt_tensor *ops[MT_MAX_OPERANDS];
    int m = 0, same_shape = 1, scalars = 0, tensors = 0;
    for (int k = 0; k < n; k++) {
        const mt_tensor *t = ins[k];
        if (!t || m == MT_MAX_OPERANDS) continue;
        ops[m++] = t;
        if (t->ndim) tensors = 1;
        else scalars = 1;
        if (t->ndim != ndim || memcmp(t->sizes, sizes, ndim * sizeof(int64_t))) same_shape = 0;
    }
    if (same_shape && !(scalars && tensors) && m) {
        int contig = 1, cl = 1, dense = 1, equal = 1;
        for (int k = 0; k < m; k++) {
            contig &= mt_tensor_is_contiguous(ops[k]);
            cl &= channels_last_contiguous(ops[k]);
            dense &= mt__non_overlapping_and_dense(ops[k]);
            equal &= !memcmp(ops[k]->strides, ops[0]->strides, ndim * sizeof(int64_t));
        }
        if (contig) {
            mt__contiguous_strides(ndim, sizes, strides);
            return;
        }
        if (cl) {
            strides[1] = 1;
            strides[3] = sizes[1];
            strides[2] = strides[3] * sizes[3];
            strides[0] = strides[2] * sizes[2];
            return;
        }
        if (dense && equal) {
            memcpy(strides, ops[m - 1]->strides, ndim * sizeof(int64_t));
            return;
        }
    }
    int64_t st[MT_MAX_OPERANDS][MT_MAX_DIMS];
    int ns = 0;
    for (int k = 0; k < m; k++)
        if (!ops[k]->wrapped) broadcast_strides(ops[k], ndim, sizes, st[ns++]);
    int perm[MT_MAX_DIMS], inverted = 1;
    compute_perm(ndim, sizes, ns, st, perm);
    for (int i = 0; i < ndim; i++) inverted &= perm[i] == ndim - 1 - i;
    if (inverted) {
        mt__contiguous_strides(ndim, sizes, strides);
        return;
    }
    uint64_t s = 1; /* wraps, as PyTorch's int64 does, when an empty output's other dims overflow */
    for (int i = 0; i < ndim; i++) {
        strides[perm[i]] = (int64_t)s;
        s *= (uint64_t)sizes[perm[i]];
    }
}

/* The layout of empty_like(t) / t.to(dtype) / t.clone() (memory_format=torch.preserve_format):
 * a dense t keeps its strides, otherwise infer_dense_strides orders dimensions by t's strides. */
void mt__like_strides(const mt_tensor *t, int64_t *strides) {
    if (mt__non_overlapping_and_dense(t)) {
        memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
        return;
    }
    int64_t st[1][MT_MAX_DIMS];
    memcpy(st[0], t->strides, t->ndim * sizeof(int64_t));
    int perm[MT_MAX_DIMS];
    compute_perm(t->ndim, t->sizes, 1, st, perm);
    uint64_t s = 1; /* unsigned: an empty t's other dims may overflow the product (then unused) */
    for (int i = 0; i < t->ndim; i++) {
        strides[perm[i]] = (int64_t)s;
        s *= t->sizes[perm[i]] > 1 ? (uint64_t)t->sizes[perm[i]] : 1;
    }
}

void mt__iter_init(mt_iter *it, int nops, mt_tensor *const *ops) {
    const mt_tensor *out = ops[0];
    int ndim = out->ndim;
    int64_t st[MT_MAX_OPERANDS][MT_MAX_DIMS];
    for (int k = 0; k < nops; k++) broadcast_strides(ops[k], ndim, out->sizes, st[k]);
    int perm[MT_MAX_DIMS];
    compute_perm(ndim, out->sizes, nops, st, perm);
    it->nops = nops;
    if (mt__numel(ndim, out->sizes) == 0) { /* nothing to visit (other dims or strides may be huge) */
        it->ndim = 1, it->shape[0] = 0, it->numel = 0;
        for (int k = 0; k < nops; k++) {
            it->strides[k][0] = 0;
            it->data[k] = ops[k]->storage->data ? mt__data(ops[k]) : NULL;
        }
        return;
    }
    for (int i = 0; i < ndim; i++) {
        it->shape[i] = out->sizes[perm[i]];
        for (int k = 0; k < nops; k++)
            it->strides[k][i] = mt__wmul(st[k][perm[i]], mt_dtype_itemsize(ops[k]->dtype));
    }
    for (int k = 0; k < nops; k++) it->data[k] = ops[k]->storage->data ? mt__data(ops[k]) : NULL;
    /* coalesce adjacent dimensions that address memory as one */
    int prev = 0;
    for (int d = 1; d < ndim; d++) {
        int ok = it->shape[prev] == 1 || it->shape[d] == 1;
        if (!ok) {
            ok = 1;
            for (int k = 0; k < nops; k++)
                if (it->shape[prev] * it->strides[k][prev] != it->strides[k][d]) { ok = 0; break; }
        }
        if (ok) {
            if (it->shape[prev] == 1)
                for (int k = 0; k < nops; k++) it->strides[k][prev] = it->strides[k][d];
            it->shape[prev] *= it->shape[d];
        } else {
            prev++;
            if (prev != d) {
                it->shape[prev] = it->shape[d];
                for (int k = 0; k < nops; k++) it->strides[k][prev] = it->strides[k][d];
            }
        }
    }
    it->ndim = ndim ? prev + 1 : 1;
    if (!ndim) {
        it->shape[0] = 1;
        for (int k = 0; k < nops; k++) it->strides[k][0] = 0;
    }
    it->numel = mt__numel(it->ndim, it->shape);
}

static void run_range(const mt_iter *it, mt_loop_fn loop, const mt_kargs *k, int64_t begin, int64_t end) {
    int64_t idx[MT_MAX_DIMS];
    int64_t rem = begin;
    for (int d = 0; d < it->ndim; d++) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    int64_t inner[MT_MAX_OPERANDS];
    for (int op = 0; op < it->nops; op++) inner[op] = it->strides[op][0];
    while (begin < end) {
        char *ptr[MT_MAX_OPERANDS];
        for (int op = 0; op < it->nops; op++) {
            char *p = it->data[op];
            for (int d = 0; d < it->ndim; d++) p += idx[d] * it->strides[op][d];
            ptr[op] = p;
        }
        int64_t n = it->shape[0] - idx[0];
        if (n > end - begin) n = end - begin;
        loop(ptr, inner, n, k);
        begin += n;
        idx[0] += n;
        for (int d = 0; d < it->ndim - 1 && idx[d] == it->shape[d]; d++) {
            idx[d] = 0;
            idx[d + 1]++;
        }
    }
}

typedef struct {
    const mt_iter *it;
    mt_loop_fn loop;
    const mt_kargs *k;
} iter_task;

static void iter_chunk(void *p, int64_t b, int64_t e) {
    iter_task *t = p;
    run_range(t->it, t->loop, t->k, b, e);
}

void mt__iter_run(const mt_iter *it, mt_loop_fn loop, const mt_kargs *k) {
    int64_t numel = it->numel;
    if (numel == 0 || !it->data[0]) return; /* empty, or meta: nothing to compute */
    if (numel < MT_GRAIN_SIZE) {
        run_range(it, loop, k, 0, numel);
        return;
    }
    iter_task t = {it, loop, k};
    mt__parallel_for(numel, MT_GRAIN_SIZE / 2, iter_chunk, &t);
}
