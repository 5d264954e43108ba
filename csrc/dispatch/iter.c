/* iter.c — TensorIterator-style machinery: broadcast shapes, follow the inputs'
 * memory layout, coalesce dimensions, split the work across threads. */
#include <omp.h>

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

void mt__output_strides(int n, mt_tensor *const *ins, int ndim, const int64_t *sizes,
                        int64_t *strides) {
    int64_t st[MT_MAX_OPERANDS][MT_MAX_DIMS];
    int m = 0;
    for (int k = 0; k < n; k++)
        if (ins[k] && !ins[k]->wrapped && m < MT_MAX_OPERANDS) broadcast_strides(ins[k], ndim, sizes, st[m++]);
    int perm[MT_MAX_DIMS];
    compute_perm(ndim, sizes, m, st, perm);
    int64_t s = 1;
    for (int i = 0; i < ndim; i++) {
        strides[perm[i]] = s;
        s *= sizes[perm[i]] > 1 ? sizes[perm[i]] : 1;
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
    for (int i = 0; i < ndim; i++) {
        it->shape[i] = out->sizes[perm[i]];
        for (int k = 0; k < nops; k++)
            it->strides[k][i] = st[k][perm[i]] * mt_dtype_itemsize(ops[k]->dtype);
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

void mt__iter_run(const mt_iter *it, mt_loop_fn loop, const mt_kargs *k) {
    int64_t numel = it->numel;
    if (numel == 0 || !it->data[0]) return; /* empty, or meta: nothing to compute */
    int nt = mt_get_num_threads();
    if (nt > 1 && numel >= MT_GRAIN_SIZE) {
        int64_t chunks = numel / (MT_GRAIN_SIZE / 2);
        if (chunks < nt) nt = (int)chunks;
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num(), nth = omp_get_num_threads();
            int64_t per = (numel + nth - 1) / nth;
            int64_t b = tid * per, e = b + per < numel ? b + per : numel;
            if (b < e) run_range(it, loop, k, b, e);
        }
    } else {
        run_range(it, loop, k, 0, numel);
    }
}
