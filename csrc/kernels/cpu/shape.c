/* shape.c — ops that move elements without looking at them: cat, stack, flip, roll, repeat,
 * tril/triu, diagonal, diag_embed, rot90, trace. Most are one strided copy between a new
 * tensor and a re-strided header over the input (negative strides for flip, interleaved
 * dims for repeat), run by the elementwise iterator. */
#include <stdio.h>

#include "shape.h"

mt_status mt__impl_fill(mt_tensor *t, double f, int64_t i, int kind); /* dispatch/elementwise.c */

#define SZ(buf, nd, s) mt__fmt_sizes(buf, sizeof buf, nd, s)

void mt__strided_copy(mt_tensor *dst, const mt_tensor *src) {
    mt_tensor *ops[2] = {dst, (mt_tensor *)src};
    mt_iter it;
    mt__iter_init(&it, 2, ops);
    mt__copy_iter(&it, dst->dtype, src->dtype);
}

mt_status mt__empty_like(const mt_tensor *t, int dtype, mt_tensor **out) {
    int64_t strides[MT_MAX_DIMS];
    mt__like_strides(t, strides);
    return mt__alloc(t->ndim, t->sizes, strides, dtype, t->device, out);
}

mt_status mt__same_device(const mt_tensor *a, const mt_tensor *b) {
    if (a->device == b->device) return MT_OK;
    return mt__error(MT_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, "
                     "%s and %s!", mt__device_name(a->device), mt__device_name(b->device));
}

int64_t mt__load_index(const mt_tensor *idx, const char *p) {
    return idx->dtype == MT_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

/* ---- cat / stack ------------------------------------------------------------------ */

/* PyTorch's legacy rule: 1-D empty tensors are skipped whatever the other shapes */
static int skipped(const mt_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

mt_status mt__impl_cat(int n, mt_tensor *const *ts, int64_t dim, mt_tensor **out) {
    if (n <= 0) return mt__error(MT_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors");
    for (int i = 0; i < n; i++)
        if (ts[i]->ndim == 0)
            return mt__error(MT_ERR_RUNTIME, "zero-dimensional tensor (at position %d) cannot be concatenated", i);
    int first = -1;
    for (int i = 0; i < n && first < 0; i++)
        if (!skipped(ts[i])) first = i;
    int dtype = mt_result_type(n, ts);
    if (dtype < 0) return MT_ERR_RUNTIME;
    for (int i = 1; i < n; i++) MT_TRY(mt__same_device(ts[0], ts[i]));
    if (first < 0) /* every input skipped: an empty 1-D result */
        return mt__alloc(1, (int64_t[]){0}, NULL, dtype, ts[0]->device, out);
    const mt_tensor *f = ts[first];
    MT_TRY(mt__wrap_dim(&dim, f->ndim));
    int64_t sizes[MT_MAX_DIMS];
    memcpy(sizes, f->sizes, f->ndim * sizeof(int64_t));
    sizes[dim] = 0;
    for (int i = first; i < n; i++) {
        const mt_tensor *t = ts[i];
        if (skipped(t)) continue;
        if (t->ndim != f->ndim)
            return mt__error(MT_ERR_RUNTIME, "Tensors must have same number of dimensions: got %d and %d", f->ndim,
                             t->ndim);
        for (int d = 0; d < f->ndim; d++)
            if (d != dim && t->sizes[d] != f->sizes[d])
                return mt__error(MT_ERR_RUNTIME, "Sizes of tensors must match except in dimension %lld. Expected size "
                                 "%lld but got size %lld for tensor number %d in the list.", (long long)dim,
                                 (long long)f->sizes[d], (long long)t->sizes[d], i);
        if (__builtin_add_overflow(sizes[dim], t->sizes[dim], &sizes[dim]))
            return mt__error(MT_ERR_RUNTIME, "cat(): the size of dimension %lld overflows int64", (long long)dim);
    }
    MT_TRY(mt__alloc(f->ndim, sizes, NULL, dtype, f->device, out));
    if (!(*out)->storage->data) return MT_OK;
    int64_t at = 0;
    for (int i = first; i < n; i++) {
        const mt_tensor *t = ts[i];
        if (skipped(t) || mt_tensor_numel(t) == 0) continue; /* nothing to copy (its offset may be huge) */
        mt_tensor part = mt__restride(*out, f->ndim, t->sizes, (*out)->strides,
                                      (*out)->offset + at * (*out)->strides[dim]);
        mt__strided_copy(&part, t);
        at += t->sizes[dim];
    }
    return MT_OK;
}

mt_status mt__impl_stack(int n, mt_tensor *const *ts, int64_t dim, mt_tensor **out) {
    if (n <= 0) return mt__error(MT_ERR_RUNTIME, "stack expects a non-empty TensorList");
    MT_TRY(mt__wrap_dim(&dim, ts[0]->ndim + 1));
    for (int i = 1; i < n; i++)
        if (ts[i]->ndim != ts[0]->ndim || memcmp(ts[i]->sizes, ts[0]->sizes, ts[0]->ndim * sizeof(int64_t))) {
            char a[256], b[256];
            return mt__error(MT_ERR_RUNTIME, "stack expects each tensor to be equal size, but got %s at entry 0 and %s "
                             "at entry %d", SZ(a, ts[0]->ndim, ts[0]->sizes), SZ(b, ts[i]->ndim, ts[i]->sizes), i);
        }
    if (ts[0]->ndim + 1 > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "stack: too many dimensions");
    int nd = ts[0]->ndim + 1;
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++) sizes[d] = d == dim ? n : ts[0]->sizes[j++];
    for (int i = 1; i < n; i++) MT_TRY(mt__same_device(ts[0], ts[i]));
    int dtype = mt_result_type(n, ts);
    if (dtype < 0) return MT_ERR_RUNTIME;
    MT_TRY(mt__alloc(nd, sizes, NULL, dtype, ts[0]->device, out));
    if (!(*out)->storage->data) return MT_OK;
    mt_tensor *o = *out;
    int64_t psz[MT_MAX_DIMS], pst[MT_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++)
        if (d != dim) psz[j] = o->sizes[d], pst[j++] = o->strides[d];
    for (int i = 0; i < n; i++) {
        mt_tensor part = mt__restride(o, nd - 1, psz, pst, o->offset + i * o->strides[dim]);
        mt__strided_copy(&part, ts[i]);
    }
    return MT_OK;
}

/* ---- flip / roll / repeat ------------------------------------------------------------ */

static mt_status dim_set(const mt_tensor *t, int ndims, const int64_t *dims, int *mark) {
    memset(mark, 0, MT_MAX_DIMS * sizeof(int));
    for (int i = 0; i < ndims; i++) {
        int64_t d = dims[i];
        MT_TRY(mt__wrap_dim(&d, t->ndim));
        if (t->ndim == 0) continue;
        if (mark[d]) return mt__error(MT_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
        mark[d] = 1;
    }
    return MT_OK;
}

mt_status mt__impl_flip(mt_tensor *t, int ndims, const int64_t *dims, mt_tensor **out) {
    int mark[MT_MAX_DIMS];
    MT_TRY(dim_set(t, ndims, dims, mark));
    MT_TRY(mt__empty_like(t, t->dtype, out));
    if (!t->storage->data || mt_tensor_numel(t) == 0) return MT_OK;
    int64_t strides[MT_MAX_DIMS], off = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        strides[d] = mark[d] ? mt__wmul(t->strides[d], -1) : t->strides[d]; /* a size-1 dim may hold INT64_MIN */
        if (mark[d]) off += (t->sizes[d] - 1) * t->strides[d];
    }
    mt_tensor src = mt__restride(t, t->ndim, t->sizes, strides, off);
    mt__strided_copy(*out, &src);
    return MT_OK;
}

/* out <- t rolled by shift along dim: two block copies */
static void roll_into(mt_tensor *out, const mt_tensor *t, int64_t shift, int d) {
    int64_t n = t->sizes[d];
    if (mt_tensor_numel(t) == 0) return; /* nothing to move; a huge n beside a 0 would overflow the offsets */
    int64_t s = ((shift % n) + n) % n, sz[MT_MAX_DIMS];
    memcpy(sz, t->sizes, t->ndim * sizeof(int64_t));
    sz[d] = n - s; /* t[:n-s] -> out[s:] */
    mt_tensor a = mt__restride(out, t->ndim, sz, out->strides, out->offset + s * out->strides[d]);
    mt_tensor b = mt__restride(t, t->ndim, sz, t->strides, t->offset);
    mt__strided_copy(&a, &b);
    sz[d] = s; /* t[n-s:] -> out[:s] */
    a = mt__restride(out, t->ndim, sz, out->strides, out->offset);
    b = mt__restride(t, t->ndim, sz, t->strides, t->offset + (n - s) * t->strides[d]);
    mt__strided_copy(&a, &b);
}

mt_status mt__impl_roll(mt_tensor *t, int nshifts, const int64_t *shifts, int ndims, const int64_t *dims,
                        mt_tensor **out) {
    if (nshifts == 0) return mt__error(MT_ERR_RUNTIME, "`shifts` required");
    if (ndims == 0 && nshifts == 1) { /* flattened */
        MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, out));
        if (!t->storage->data) return MT_OK;
        mt_tensor *c;
        MT_TRY(mt_contiguous(t, &c));
        int64_t n = mt_tensor_numel(t);
        mt_tensor flat_out = mt__restride(*out, 1, &n, (int64_t[]){1}, (*out)->offset);
        mt_tensor flat_in = mt__restride(c, 1, &n, (int64_t[]){1}, c->offset);
        roll_into(&flat_out, &flat_in, shifts[0], 0);
        mt_tensor_release(c);
        return MT_OK;
    }
    if (t->ndim == 0 && ndims)
        return mt__error(MT_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dims[0]);
    if (nshifts != ndims)
        return mt__error(MT_ERR_RUNTIME, "shifts and dimensions must align. shifts: %d, dims:%d", nshifts, ndims);
    int64_t wd[MT_MAX_DIMS];
    for (int i = 0; i < ndims && i < MT_MAX_DIMS; i++) {
        wd[i] = dims[i];
        MT_TRY(mt__wrap_dim(&wd[i], t->ndim));
    }
    if (ndims > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "roll: too many dims");
    /* one dim at a time, as PyTorch's roll_common */
    mt_tensor *cur = t;
    mt_tensor_retain(cur);
    for (int i = 0; i < ndims; i++) {
        mt_tensor *next;
        mt_status st = mt__alloc(cur->ndim, cur->sizes, NULL, cur->dtype, cur->device, &next);
        if (st) { mt_tensor_release(cur); return st; }
        if (cur->storage->data) roll_into(next, cur, shifts[i], (int)wd[i]);
        mt_tensor_release(cur);
        cur = next;
    }
    *out = cur;
    return MT_OK;
}

mt_status mt__impl_repeat(mt_tensor *t, int n, const int64_t *repeats, mt_tensor **out) {
    if (n < t->ndim)
        return mt__error(MT_ERR_RUNTIME, "Number of dimensions of repeat dims can not be smaller than number of "
                         "dimensions of tensor");
    if (n > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "repeat: too many dimensions");
    int lead = n - t->ndim;
    int64_t sizes[MT_MAX_DIMS];
    /* wrapping as PyTorch's product does in practice: its errors print the wrapped sizes */
    for (int d = 0; d < n; d++) sizes[d] = mt__wmul(d < lead ? 1 : t->sizes[d - lead], repeats[d]);
    for (int d = 0; d < n; d++)
        if (sizes[d] < 0) {
            char a[256];
            return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                             (long long)sizes[d], SZ(a, n, sizes));
        }
    MT_TRY(mt__alloc(n, sizes, NULL, t->dtype, t->device, out));
    if (!t->storage->data || mt__numel(n, sizes) == 0) return MT_OK;
    /* the result seen as [r0, s0, r1, s1, ...]: the source repeats along each r (stride 0) */
    int64_t dsz[2 * MT_MAX_DIMS], dst[2 * MT_MAX_DIMS], sst[2 * MT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < n; d++) {
        int64_t s = d < lead ? 1 : t->sizes[d - lead], ss = d < lead ? 0 : t->strides[d - lead];
        if (repeats[d] != 1) dsz[k] = repeats[d], dst[k] = s * (*out)->strides[d], sst[k++] = 0;
        if (s != 1) dsz[k] = s, dst[k] = (*out)->strides[d], sst[k++] = ss;
    }
    if (k > MT_MAX_DIMS)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "repeat: more than %d repeated and non-repeated dims", MT_MAX_DIMS);
    mt_tensor a = mt__restride(*out, k, dsz, dst, 0), b = mt__restride(t, k, dsz, sst, t->offset);
    mt__strided_copy(&a, &b);
    return MT_OK;
}

/* ---- tril / triu ------------------------------------------------------------------------ */

/* A new tril/triu of an input whose rows are contiguous: each output row is one memcpy of the triangle's
 * part and one memset of the rest, the rows shared by the threads (a copy of everything and then the zeros
 * over it, on one thread, wrote the zeroed half twice: float32 tril of 512x2048 1.1x PyTorch's time) */
typedef struct {
    const mt_tensor *t;
    char *dst;
    int64_t rows, cols, k, isz;
    int upper;
} tril_rows;

static void tril_task(void *ctx, int64_t r0, int64_t r1) {
    const tril_rows *c = ctx;
    const mt_tensor *t = c->t;
    int nd = t->ndim;
    for (int64_t r = r0; r < r1; r++) {
        int64_t i = r % c->rows, off = i * t->strides[nd - 2];
        for (int64_t q = r / c->rows, d = nd - 3; d >= 0; d--) {
            off += (q % t->sizes[d]) * t->strides[d];
            q /= t->sizes[d];
        }
        const char *src = mt__data(t) + off * c->isz;
        char *dst = c->dst + r * c->cols * c->isz;
        /* kept columns [lo, hi): tril [0, i + k + 1), triu [i + k, cols) */
        int64_t lo = c->upper ? i + c->k : 0, hi = c->upper ? c->cols : i + c->k + 1;
        lo = lo < 0 ? 0 : lo > c->cols ? c->cols : lo;
        hi = hi < lo ? lo : hi > c->cols ? c->cols : hi;
        if (lo) memset(dst, 0, (size_t)(lo * c->isz));
        if (hi > lo) memcpy(dst + lo * c->isz, src + lo * c->isz, (size_t)((hi - lo) * c->isz));
        if (hi < c->cols) memset(dst + hi * c->isz, 0, (size_t)((c->cols - hi) * c->isz));
    }
}

mt_status mt__impl_tril(mt_tensor *t, int64_t k, int upper, mt_tensor *out, mt_tensor **result) {
    if (t->ndim < 2)
        return mt__error(MT_ERR_RUNTIME, "%s: input tensor must have at least 2 dimensions", upper ? "triu" : "tril");
    int tn = t->ndim;
    if (!out && t->storage->data && (t->strides[tn - 1] == 1 || t->sizes[tn - 1] <= 1) && mt_tensor_numel(t)) {
        MT_TRY(mt__alloc(tn, t->sizes, NULL, t->dtype, t->device, &out));
        int64_t rows = t->sizes[tn - 2], cols = t->sizes[tn - 1];
        tril_rows c = {t, mt__data(out), rows, cols, k > cols ? cols : k < -rows ? -rows : k,
                       mt_dtype_itemsize(t->dtype), upper};
        int64_t n = mt__numel(tn - 1, t->sizes);
        mt__parallel_for(n, cols * c.isz >= (1 << 15) ? 1 : ((1 << 15) + cols * c.isz - 1) / (cols * c.isz), tril_task, &c);
        *result = out;
        return MT_OK;
    }
    if (!out) {
        MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, &out));
        if (t->storage->data) mt__strided_copy(out, t);
    } else {
        mt_tensor_retain(out);
        mt_tensor_bump_version(out);
    }
    *result = out;
    if (!out->storage->data || !mt_tensor_numel(out)) return MT_OK; /* (2^40 empty matrices: no loop) */
    /* zero each row's columns outside the triangle */
    int nd = out->ndim, isz = mt_dtype_itemsize(out->dtype);
    int64_t rows = out->sizes[nd - 2], cols = out->sizes[nd - 1], rs = mt__wmul(out->strides[nd - 2], isz),
            cs = mt__wmul(out->strides[nd - 1], isz), nbatch = mt__numel(nd - 2, out->sizes);
    k = k > cols ? cols : k < -rows ? -rows : k; /* same triangle, and i + k + 1 cannot overflow */
    for (int64_t b = 0; b < nbatch; b++) {
        char *base = mt__data(out);
        for (int64_t r = b, d = nd - 3; d >= 0; d--) {
            base += (r % out->sizes[d]) * out->strides[d] * isz;
            r /= out->sizes[d];
        }
        for (int64_t i = 0; i < rows; i++) {
            int64_t lo = upper ? 0 : i + k + 1, hi = upper ? i + k : cols; /* zero [lo, hi) */
            if (lo < 0) lo = 0;
            if (hi > cols) hi = cols;
            char *p = base + i * rs;
            if (lo >= hi) continue;
            if (cs == isz) memset(p + lo * cs, 0, (size_t)((hi - lo) * isz));
            else for (int64_t j = lo; j < hi; j++) memset(p + j * cs, 0, (size_t)isz);
        }
    }
    return MT_OK;
}

/* ---- diagonals ------------------------------------------------------------------------- */

mt_status mt__impl_diagonal(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out) {
    int64_t d1 = dim1, d2 = dim2;
    MT_TRY(mt__wrap_dim(&d1, t->ndim));
    MT_TRY(mt__wrap_dim(&d2, t->ndim));
    if (d1 == d2)
        return mt__error(MT_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1,
                         (long long)dim2);
    int64_t n, off = t->offset;
    if (offset >= 0) n = t->sizes[d1] < t->sizes[d2] - offset ? t->sizes[d1] : t->sizes[d2] - offset;
    else n = t->sizes[d1] + offset < t->sizes[d2] ? t->sizes[d1] + offset : t->sizes[d2];
    if (n < 0) n = 0;
    if (n > 0) off = mt__wadd(off, offset >= 0 ? mt__wmul(offset, t->strides[d2]) : mt__wmul(-offset, t->strides[d1]));
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < t->ndim; d++)
        if (d != d1 && d != d2) sizes[k] = t->sizes[d], strides[k++] = t->strides[d];
    sizes[k] = n, strides[k++] = mt__wadd(t->strides[d1], t->strides[d2]); /* fits whenever n >= 2 */
    return mt__view_of(t, k, sizes, strides, off, out);
}

mt_status mt__impl_diag_embed(mt_tensor *t, int64_t offset, int64_t dim1, int64_t dim2, mt_tensor **out) {
    int nd = t->ndim + 1;
    if (nd > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "diag_embed: too many dimensions");
    int64_t d1 = dim1, d2 = dim2;
    MT_TRY(mt__wrap_dim(&d1, nd));
    MT_TRY(mt__wrap_dim(&d2, nd));
    if (d1 == d2)
        return mt__error(MT_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1,
                         (long long)dim2);
    /* PyTorch's size wraps past INT64_MAX (an |offset| near 2^63), then its SymInt check refuses it */
    uint64_t uoff = offset < 0 ? -(uint64_t)offset : (uint64_t)offset;
    int64_t last = t->ndim ? t->sizes[t->ndim - 1] : 1, m = (int64_t)((uint64_t)last + uoff);
    if (m < 0)
        return mt__error(MT_ERR_RUNTIME, "IntArrayRef contains an int that cannot be represented as a SymInt: %lld",
                         (long long)m);
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++) sizes[d] = d == d1 || d == d2 ? m : t->sizes[j++];
    MT_TRY(mt__alloc(nd, sizes, NULL, t->dtype, t->device, out));
    if (!t->storage->data) return MT_OK;
    /* zeros through the threaded fill (the output is n times the input: its first touch costs most) */
    mt_status st = mt__impl_fill(*out, 0, 0, MT_SCALAR_INT);
    mt_tensor *diag = NULL;
    if (!st) st = mt__impl_diagonal(*out, offset, d1, d2, &diag);
    if (st) { MT_DROP(*out); return st; }
    mt_tensor src = *t;
    if (t->ndim == 0) src = mt__restride(t, 1, (int64_t[]){1}, (int64_t[]){0}, t->offset);
    mt__strided_copy(diag, &src);
    mt_tensor_release(diag);
    return MT_OK;
}

mt_status mt__impl_rot90(mt_tensor *t, int64_t k, int64_t d0, int64_t d1, mt_tensor **out) {
    k = ((k % 4) + 4) % 4;
    MT_TRY(mt__wrap_dim(&d0, t->ndim));
    MT_TRY(mt__wrap_dim(&d1, t->ndim));
    if (k == 0) {
        MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, out));
        if (t->storage->data) mt__strided_copy(*out, t);
        return MT_OK;
    }
    int64_t both[2] = {d0, d1};
    MT_TRY(mt__impl_flip(t, k == 2 ? 2 : 1, k == 2 ? both : k == 1 ? &both[1] : &both[0], out));
    if (k != 2) { /* then transpose the header in place */
        mt_tensor *o = *out;
        int64_t s = o->sizes[d0], st = o->strides[d0];
        o->sizes[d0] = o->sizes[d1], o->strides[d0] = o->strides[d1];
        o->sizes[d1] = s, o->strides[d1] = st;
    }
    return MT_OK;
}

/* trace: the diagonal summed in order, in double (floats; float for float16/bfloat16) or int64 */
mt_status mt__impl_trace(mt_tensor *t, mt_tensor **out) {
    if (t->ndim != 2) return mt__error(MT_ERR_RUNTIME, "trace: expected a matrix, but got tensor with dim %d", t->ndim);
    if (t->dtype == MT_BOOL) return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"trace\" not implemented for 'Bool'");
    int dt = mt__is_float(t->dtype) || mt__is_complex(t->dtype) ? t->dtype : MT_I64;
    MT_TRY(mt__alloc(0, NULL, NULL, dt, t->device, out));
    if (!t->storage->data) return MT_OK;
    int64_t n = t->sizes[0] < t->sizes[1] ? t->sizes[0] : t->sizes[1];
    int64_t step = (t->strides[0] + t->strides[1]) * mt_dtype_itemsize(t->dtype);
    const char *p = mt__data(t);
    static const int64_t z[2] = {0, 0};
    if (mt__is_complex(dt)) { /* complex<double> accumulation, as real floats sum in double */
        double _Complex acc = 0, v;
        for (int64_t i = 0; i < n; i++) {
            mt__cast_loop(MT_C128, dt)((char *[]){(char *)&v, (char *)p + i * step}, z, 1, NULL);
            acc += v;
        }
        mt__cast_loop(dt, MT_C128)((char *[]){mt__data(*out), (char *)&acc}, z, 1, NULL);
    } else if (dt == MT_I64) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t v;
            mt__cast_loop(MT_I64, t->dtype)((char *[]){(char *)&v, (char *)p + i * step}, z, 1, NULL);
            acc += (uint64_t)v;
        }
        *(int64_t *)mt__data(*out) = (int64_t)acc;
    } else {
        double acc = 0;
        float facc = 0;
        for (int64_t i = 0; i < n; i++) {
            double v;
            mt__cast_loop(MT_F64, t->dtype)((char *[]){(char *)&v, (char *)p + i * step}, z, 1, NULL);
            if (dt == MT_F16 || dt == MT_BF16) facc += (float)v;
            else acc += v;
        }
        if (dt == MT_F16 || dt == MT_BF16) acc = facc;
        mt__cast_loop(dt, MT_F64)((char *[]){mt__data(*out), (char *)&acc}, z, 1, NULL);
    }
    return MT_OK;
}
