/* unique.c — ops that compare values across a tensor: unique (sorted, inverse, counts, dim),
 * unique_consecutive, searchsorted/bucketize, isin, bincount, and repeat_interleave's index.
 *
 * Values are compared as exact keys: int64 for integer/bool dtypes, double for floating ones,
 * after converting to the promoted dtype where two tensors meet (as PyTorch compares them). */
#include <math.h>
#include <stdio.h>

#include "shape.h"


#define SZ(buf, nd, s) mt__fmt_sizes(buf, sizeof buf, nd, s)

/* t (any layout) as a new contiguous int64 (integers, bool) or double (floats; complex: the real part,
 * as bincount's weights are cast) array; row-major */
typedef struct { int is_f; int64_t n; int64_t *i; double *f; mt_tensor *hold; } keys_t;

static mt_status keys_of(const mt_tensor *t, keys_t *k) {
    k->is_f = mt__is_float(t->dtype) || mt__is_complex(t->dtype);
    k->n = mt_tensor_numel(t);
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, k->is_f ? MT_F64 : MT_I64, MT_CPU, &k->hold));
    if (k->n) mt__strided_copy(k->hold, t);
    k->i = (int64_t *)mt__data(k->hold);
    k->f = (double *)mt__data(k->hold);
    return MT_OK;
}
#define KEY_LT(k, a, b) ((k)->is_f ? (k)->f[a] < (k)->f[b] : (k)->i[a] < (k)->i[b])
#define KEY_EQ(k, a, b) ((k)->is_f ? (k)->f[a] == (k)->f[b] : (k)->i[a] == (k)->i[b])

/* ---- repeat_interleave(repeats): each position i repeated repeats[i] times ------------------ */

mt_status mt_repeat_interleave(mt_tensor *repeats, int64_t output_size, mt_tensor **out) {
    MT_PROFILE("repeat_interleave", repeats);
    if (repeats->ndim != 1) return mt__error(MT_ERR_RUNTIME, "repeat_interleave only accept 1D vector as repeat");
    if (repeats->dtype != MT_I64 && repeats->dtype != MT_I32) {
        if (mt__is_float(repeats->dtype) || repeats->dtype == MT_BOOL)
            return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"repeat_interleave_cpu\" not implemented for '%s'",
                             mt_dtype_names[repeats->dtype]);
        return mt__error(MT_ERR_RUNTIME, "repeats has to be Long or Int tensor");
    }
    if (!repeats->storage->data) return mt__error(MT_ERR_NOT_IMPLEMENTED, "repeat_interleave on meta tensors");
    keys_t k;
    MT_TRY(keys_of(repeats, &k));
    int64_t total = 0;
    *out = NULL;
    /* a given output_size is allocated first, as PyTorch does (a huge one fails there); no repeats: empty */
    mt_status st = output_size >= 0 && k.n ? mt__alloc(1, &output_size, NULL, repeats->dtype, MT_CPU, out) : MT_OK;
    for (int64_t i = 0; !st && i < k.n; i++) {
        if (k.i[i] < 0) { st = mt__error(MT_ERR_RUNTIME, "repeats can not be negative"); break; }
        if (__builtin_add_overflow(total, k.i[i], &total)) { /* PyTorch's sum wraps, then fails or crashes */
            st = mt__error(MT_ERR_RUNTIME, "IntArrayRef contains an int that cannot be represented as a SymInt: %lld",
                           (long long)total);
            break;
        }
    }
    if (!st && k.n && output_size >= 0 && output_size != total)
        st = mt__error(MT_ERR_RUNTIME, "allocated size does not match required size");
    if (!st && !*out) st = mt__alloc(1, &total, NULL, repeats->dtype, MT_CPU, out);
    if (st && *out) mt_tensor_release(*out), *out = NULL;
    if (!st) {
        char *o = mt__data(*out);
        for (int64_t i = 0, at = 0; i < k.n; i++)
            for (int64_t j = 0; j < k.i[i]; j++, at++) {
                if (repeats->dtype == MT_I32) ((int32_t *)o)[at] = (int32_t)i;
                else ((int64_t *)o)[at] = i;
            }
    }
    mt_tensor_release(k.hold);
    return st;
}

/* ---- unique ------------------------------------------------------------------------------------ */

/* stable merge sort of row ids by lexicographic rows of width w (NaN compares as PyTorch's `<`) */
static int row_lt(const keys_t *k, int64_t w, int64_t a, int64_t b) {
    for (int64_t j = 0; j < w; j++) {
        if (KEY_LT(k, a * w + j, b * w + j)) return 1;
        if (KEY_LT(k, b * w + j, a * w + j)) return 0;
    }
    return 0;
}
static void sort_rows(const keys_t *k, int64_t w, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t h = n / 2;
    sort_rows(k, w, v, tmp, h);
    sort_rows(k, w, v + h, tmp, n - h);
    memcpy(tmp, v, (size_t)h * sizeof *v);
    int64_t i = 0, j = h, o = 0;
    while (i < h && j < n) v[o++] = row_lt(k, w, v[j], tmp[i]) ? v[j++] : tmp[i++];
    while (i < h) v[o++] = tmp[i++];
}
static int row_eq(const keys_t *k, int64_t w, int64_t a, int64_t b) {
    for (int64_t j = 0; j < w; j++)
        if (!KEY_EQ(k, a * w + j, b * w + j)) return 0;
    return 1;
}

/* Rows of width w of t's keys (w = 1: elements); `order` gives the rows in the order to group
 * (sorted, or as they are for unique_consecutive). Writes the group of each row (inverse) and
 * returns the first row of each group and the counts. */
static mt_status group_rows(const keys_t *k, int64_t nrows, int64_t w, const int64_t *order, int64_t *inverse,
                            int64_t *first, int64_t *counts, int64_t *ngroups) {
    int64_t g = -1;
    for (int64_t r = 0; r < nrows; r++) {
        int64_t row = order[r];
        if (g < 0 || !row_eq(k, w, first[g], row)) {
            g++;
            first[g] = row;
            counts[g] = 0;
        }
        counts[g]++;
        inverse[row] = g;
    }
    *ngroups = g + 1;
    return MT_OK;
}

/* ---- unique / unique_consecutive over elements: typed runs --------------------------------------
 * The values in grouping order (sorted, or as they are) are compared with their neighbours in their own
 * dtype (== as PyTorch: NaN its own group, -0 == 0): each run of equal values is a group. One pass
 * counts the runs, one writes the first value of each, the run lengths (counts) and each position's
 * run (for unique_consecutive the inverse itself; unique scatters it by the sort order). Only the
 * outputs asked for are made, and every buffer is a tensor (the allocator's cache: the 32 MiB of
 * malloc'd row ids and double keys this replaced paid page faults on every call). */
#define RUNS(NAME, T, EQ)                                                                   \
    static int64_t NAME(const T *v, int64_t n, T *vals, int64_t *cnt, int64_t *gid) {       \
        int64_t g = 0, start = 0;                                                           \
        if (!vals) { /* the count alone */                                                  \
            for (int64_t i = 1; i < n; i++) g += !(EQ(v[i - 1], v[i]));                     \
            return g + 1;                                                                   \
        }                                                                                   \
        vals[0] = v[0];                                                                     \
        for (int64_t i = 1; i < n; i++) {                                                   \
            if (!(EQ(v[i - 1], v[i]))) {                                                    \
                if (cnt) cnt[g] = i - start;                                                \
                start = i;                                                                  \
                vals[++g] = v[i];                                                           \
            }                                                                               \
            if (gid) gid[i] = g;                                                            \
        }                                                                                   \
        if (gid) gid[0] = 0;                                                                \
        if (cnt) cnt[g] = n - start;                                                        \
        return g + 1;                                                                       \
    }
#define EQ_NATIVE(a, b) ((a) == (b))
#define EQ_F16(a, b) (mt__f16_to_f32(a) == mt__f16_to_f32(b))
#define EQ_BF16(a, b) (mt__bf16_to_f32(a) == mt__bf16_to_f32(b))
RUNS(runs_u8, uint8_t, EQ_NATIVE)
RUNS(runs_u16, uint16_t, EQ_NATIVE)
RUNS(runs_u32, uint32_t, EQ_NATIVE)
RUNS(runs_u64, uint64_t, EQ_NATIVE)
RUNS(runs_f16, uint16_t, EQ_F16)
RUNS(runs_bf16, uint16_t, EQ_BF16)
RUNS(runs_f32, float, EQ_NATIVE)
RUNS(runs_f64, double, EQ_NATIVE)

/* the runs of the n (>= 1) contiguous values at v (vals NULL: only their number) */
static int64_t runs(const void *v, int dtype, int64_t n, void *vals, int64_t *cnt, int64_t *gid) {
    switch (dtype) {
    case MT_F16: return runs_f16(v, n, vals, cnt, gid);
    case MT_BF16: return runs_bf16(v, n, vals, cnt, gid);
    case MT_F32: return runs_f32(v, n, vals, cnt, gid);
    case MT_F64: return runs_f64(v, n, vals, cnt, gid);
    case MT_I16: return runs_u16(v, n, vals, cnt, gid); /* integers: equal values, equal bits */
    case MT_I32: return runs_u32(v, n, vals, cnt, gid);
    case MT_I64: return runs_u64(v, n, vals, cnt, gid);
    default: return runs_u8(v, n, vals, cnt, gid); /* bool, uint8, int8 */
    }
}

static mt_status unique_elements(mt_tensor *t, int consecutive, mt_tensor **values, mt_tensor **inverse,
                                 mt_tensor **counts) {
    int64_t n = mt_tensor_numel(t), ng = 0;
    mt_tensor *sv = NULL, *si = NULL, *gid = NULL, *vals = NULL, *iv = NULL, *cv = NULL;
    mt_status st = inverse ? mt__alloc(t->ndim, t->sizes, NULL, MT_I64, MT_CPU, &iv) : MT_OK;
    if (!st && n) {
        if (consecutive) st = mt_contiguous(t, &sv);
        else { /* PyTorch's sort() order: NaNs last */
            mt_tensor *c = NULL, flat;
            st = mt_contiguous(t, &c);
            if (!st) flat = mt__restride(c, 1, &n, (int64_t[]){1}, c->offset);
            if (!st) st = mt__impl_sort(&flat, 0, 0, 0, &sv, &si);
            mt_tensor_release(c);
        }
    }
    if (!st && n) ng = runs(mt__data(sv), t->dtype, n, NULL, NULL, NULL);
    if (!st) st = mt__alloc(1, &ng, NULL, t->dtype, MT_CPU, &vals);
    if (!st && counts) st = mt__alloc(1, &ng, NULL, MT_I64, MT_CPU, &cv);
    /* unique_consecutive's runs are the inverse; unique's are scattered to it by the sort order */
    if (!st && n && iv) {
        if (consecutive) mt_tensor_retain(iv), gid = iv;
        else st = mt__alloc(1, &n, NULL, MT_I64, MT_CPU, &gid);
    }
    if (!st && n) {
        int64_t *g = gid ? (int64_t *)mt__data(gid) : NULL;
        runs(mt__data(sv), t->dtype, n, mt__data(vals), cv ? (int64_t *)mt__data(cv) : NULL, g);
        if (g && si) {
            const int64_t *order = (const int64_t *)mt__data(si);
            int64_t *inv = (int64_t *)mt__data(iv);
            for (int64_t i = 0; i < n; i++) inv[order[i]] = g[i];
        }
    }
    mt_tensor_release(sv);
    mt_tensor_release(si);
    mt_tensor_release(gid);
    if (st) {
        mt_tensor_release(vals), mt_tensor_release(iv), mt_tensor_release(cv);
        return st;
    }
    *values = vals;
    if (inverse) *inverse = iv;
    if (counts) *counts = cv;
    return MT_OK;
}

/* unique over all elements (has_dim = 0) or over slices along dim; consecutive: no sorting */
mt_status mt__impl_unique(mt_tensor *t, int consecutive, int has_dim, int64_t dim, mt_tensor **values, mt_tensor **inverse,
                    mt_tensor **counts) {
    MT_NO_FLOAT8(t->dtype, "unique");
    if (!t->storage->data) return mt__error(MT_ERR_NOT_IMPLEMENTED, "unique on meta tensors: the result shape depends "
                                            "on the values");
    if (!has_dim && !mt__is_complex(t->dtype) && !mt__is_float8(t->dtype)) return unique_elements(t, consecutive, values, inverse, counts);
    mt_tensor *src = t;
    int64_t nrows, w;
    int64_t moved_sizes[MT_MAX_DIMS], perm[MT_MAX_DIMS];
    if (has_dim) {
        MT_TRY(mt__wrap_dim(&dim, t->ndim));
        if (t->ndim == 0) return mt__error(MT_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
        for (int d = 0; d < t->ndim; d++)
            if (d != dim && t->sizes[d] == 0)
                return mt__error(MT_ERR_RUNTIME, "There are 0 sized dimensions, and they aren't selected, so unique "
                                 "cannot be applied");
        /* dim moved to the front, rows of the rest */
        perm[0] = dim;
        for (int d = 0, j = 1; d < t->ndim; d++)
            if (d != dim) perm[j++] = d;
        int64_t st[MT_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++) moved_sizes[d] = t->sizes[perm[d]], st[d] = t->strides[perm[d]];
        nrows = t->sizes[dim];
        w = nrows ? mt_tensor_numel(t) / nrows : 0;
        mt_tensor m = mt__restride(t, t->ndim, moved_sizes, st, t->offset);
        MT_TRY(mt__alloc(t->ndim, moved_sizes, NULL, t->dtype, MT_CPU, &src));
        mt__strided_copy(src, &m);
    } else {
        nrows = mt_tensor_numel(t);
        w = 1;
        mt_tensor_retain(src);
    }
    keys_t k = {0};
    mt_status st = keys_of(src, &k);
    int64_t *buf = malloc((size_t)(4 * nrows + 1) * sizeof(int64_t));
    if (!st && !buf) st = mt__error(MT_ERR_OOM, "out of memory in unique");
    int64_t ng = 0;
    if (!st) {
        int64_t *order = buf, *inv = buf + nrows, *first = buf + 2 * nrows, *cnt = buf + 3 * nrows;
        for (int64_t i = 0; i < nrows; i++) order[i] = i;
        if (!consecutive) {
            if (w == 1) { /* elements: in the order of PyTorch's sort() (NaNs last, each its own group) */
                mt_tensor *c = NULL, *sv = NULL, *si = NULL, flat;
                st = mt_contiguous(src, &c);
                if (!st) flat = mt__restride(c, 1, &nrows, (int64_t[]){1}, c->offset);
                if (!st) st = mt__impl_sort(&flat, 0, 0, 0, &sv, &si);
                if (!st) memcpy(order, mt__data(si), (size_t)nrows * sizeof(int64_t));
                mt_tensor_release(c);
                mt_tensor_release(sv);
                mt_tensor_release(si);
            } else {
                int64_t *tmp = malloc((size_t)(nrows + 1) * sizeof(int64_t));
                if (!tmp) st = mt__error(MT_ERR_OOM, "out of memory in unique");
                else { sort_rows(&k, w, order, tmp, nrows); free(tmp); }
            }
        }
        if (!st) group_rows(&k, nrows, w, order, inv, first, cnt, &ng);
        /* values: the first row of each group */
        int64_t vs[MT_MAX_DIMS];
        int vnd = has_dim ? t->ndim : 1;
        if (has_dim) { memcpy(vs, moved_sizes, t->ndim * sizeof(int64_t)); vs[0] = ng; }
        else vs[0] = ng;
        mt_tensor *vals = NULL;
        if (!st) st = mt__alloc(vnd, vs, NULL, t->dtype, MT_CPU, &vals);
        if (!st) {
            int isz = mt_dtype_itemsize(t->dtype);
            mt_tensor *flat = NULL; /* the source rows: src (dim moved first) or t flattened */
            if (!has_dim) st = mt_contiguous(t, &flat);
            const char *s = st ? NULL : mt__data(has_dim ? src : flat);
            for (int64_t g = 0; !st && g < ng; g++)
                memcpy(mt__data(vals) + g * w * isz, s + first[g] * w * isz, (size_t)(w * isz));
            mt_tensor_release(flat);
        }
        if (!st && has_dim) { /* move dim back: a view, as PyTorch's moveaxis */
            int64_t sz[MT_MAX_DIMS], stv[MT_MAX_DIMS];
            for (int d = 0; d < t->ndim; d++) sz[perm[d]] = vals->sizes[d], stv[perm[d]] = vals->strides[d];
            mt_tensor *v2;
            st = mt__view_of(vals, t->ndim, sz, stv, 0, &v2);
            mt_tensor_release(vals);
            vals = st ? NULL : v2;
        }
        mt_tensor *iv = NULL, *cv = NULL;
        int64_t ng1 = ng;
        if (!st) st = has_dim ? mt__alloc(1, &nrows, NULL, MT_I64, MT_CPU, &iv)
                              : mt__alloc(t->ndim, t->sizes, NULL, MT_I64, MT_CPU, &iv);
        if (!st) memcpy(mt__data(iv), inv, (size_t)nrows * sizeof(int64_t));
        if (!st) st = mt__alloc(1, &ng1, NULL, MT_I64, MT_CPU, &cv);
        if (!st) memcpy(mt__data(cv), cnt, (size_t)ng * sizeof(int64_t));
        if (st) { mt_tensor_release(vals); mt_tensor_release(iv); mt_tensor_release(cv); }
        else {
            *values = vals;
            if (inverse) *inverse = iv;
            else mt_tensor_release(iv);
            if (counts) *counts = cv;
            else mt_tensor_release(cv);
        }
    }
    free(buf);
    mt_tensor_release(k.hold);
    mt_tensor_release(src);
    return st;
}

/* ---- searchsorted -------------------------------------------------------------------------- */

/* PyTorch's cus_lower_bound / cus_upper_bound (the NaN behaviour follows from their tests), per key kind:
 * the kind and side are loop-invariant, so each search is a branch-light loop over one array */
#define BOUND(NAME, T)                                                                                   \
    static int64_t NAME(const T *b, int64_t start, int64_t end, T v, const int64_t *sorter, int right) {  \
        const int64_t orig = sorter ? start : 0;                                                         \
        if (right && !sorter)                                                                            \
            while (start < end) {                                                                        \
                const int64_t mid = start + ((end - start) >> 1);                                        \
                if (!(b[mid] > v)) start = mid + 1;                                                      \
                else end = mid;                                                                          \
            }                                                                                            \
        else if (!sorter)                                                                                \
            while (start < end) {                                                                        \
                const int64_t mid = start + ((end - start) >> 1);                                        \
                if (!(b[mid] >= v)) start = mid + 1;                                                     \
                else end = mid;                                                                          \
            }                                                                                            \
        else                                                                                             \
            while (start < end) {                                                                        \
                const int64_t mid = start + ((end - start) >> 1), at = sorter[mid] + orig;               \
                if (right ? !(b[at] > v) : !(b[at] >= v)) start = mid + 1;                               \
                else end = mid;                                                                          \
            }                                                                                            \
        return start;                                                                                    \
    }
BOUND(bound_f, double)
BOUND(bound_i, int64_t)

typedef struct {
    const keys_t *kb, *kv;
    const int64_t *sorter;
    int64_t len, inner;
    int one_row, right, out_int32;
    char *o;
} ss_ctx;

static void searchsorted_part(void *p, int64_t b0, int64_t e) {
    const ss_ctx *c = p;
    for (int64_t i = b0; i < e; i++) {
        int64_t row = c->one_row ? 0 : i / c->inner, start = row * c->len;
        int64_t pos = (c->kb->is_f ? bound_f(c->kb->f, start, start + c->len, c->kv->f[i], c->sorter, c->right)
                                   : bound_i(c->kb->i, start, start + c->len, c->kv->i[i], c->sorter, c->right)) - start;
        if (c->out_int32) ((int32_t *)c->o)[i] = (int32_t)pos;
        else ((int64_t *)c->o)[i] = pos;
    }
}

mt_status mt_searchsorted(mt_tensor *boundaries, mt_tensor *input, int out_int32, int right, mt_tensor *sorter,
                          mt_tensor **out) {
    MT_PROFILE("searchsorted", boundaries, input, sorter);
    char a[256], b[256];
    MT_TRY(mt__same_device(boundaries, input));
    if (sorter) MT_TRY(mt__same_device(boundaries, sorter)); /* a meta sorter has no values to read */
    if (sorter) {
        if (sorter->ndim != boundaries->ndim || memcmp(sorter->sizes, boundaries->sizes, sorter->ndim * sizeof(int64_t)))
            return mt__error(MT_ERR_RUNTIME, "torch.searchsorted(): boundary and sorter must have the same size, but "
                             "got boundary tensor %sand got sorter tensor %s", SZ(a, boundaries->ndim, boundaries->sizes),
                             SZ(b, sorter->ndim, sorter->sizes));
        if (sorter->dtype != MT_I64)
            return mt__error(MT_ERR_RUNTIME, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                             "%s", mt_dtype_names[sorter->dtype]);
    }
    if (!(input->ndim > 0 || (mt_tensor_numel(input) == 1 && boundaries->ndim == 1)))
        return mt__error(MT_ERR_RUNTIME, "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                         "dimension is 1, but we got boundaries tensor dim(%d) and input value's dim(%d) numel(%lld)",
                         boundaries->ndim, input->ndim, (long long)mt_tensor_numel(input));
    if (boundaries->ndim == 0)
        return mt__error(MT_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should have positive dimension, but "
                         "got 0 dimension");
    if (boundaries->ndim != 1) {
        int ok = boundaries->ndim == input->ndim;
        for (int d = 0; ok && d < boundaries->ndim - 1; d++) ok = boundaries->sizes[d] == input->sizes[d];
        if (!ok)
            return mt__error(MT_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first "
                             "N-1 dimensions of boundaries tensor and input value tensor must match, but we got "
                             "boundaries tensor %s and input value tensor %s", SZ(a, boundaries->ndim, boundaries->sizes),
                             SZ(b, input->ndim, input->sizes));
    }
    int dt = mt_promote_types(boundaries->dtype, input->dtype);
    if (dt < 0) return MT_ERR_RUNTIME;
    if (dt == MT_BOOL || mt__is_complex(dt)) return mt__not_implemented("searchsorted_out_cpu", dt);
    MT_TRY(mt__alloc(input->ndim, input->sizes, NULL, out_int32 ? MT_I32 : MT_I64, input->device, out));
    if (!input->storage->data) return MT_OK;
    int64_t len = boundaries->sizes[boundaries->ndim - 1];
    keys_t kb = {0}, kv = {0}, ks = {0};
    mt_tensor *cb = NULL, *cv = NULL;
    mt_status st = mt__impl_to_dtype(boundaries, dt, 0, &cb);
    if (!st) st = mt__impl_to_dtype(input, dt, 0, &cv);
    if (!st) st = keys_of(cb, &kb);
    if (!st) st = keys_of(cv, &kv);
    if (!st && sorter) {
        st = keys_of(sorter, &ks);
        for (int64_t i = 0; !st && i < ks.n; i++)
            if (ks.i[i] < 0 || ks.i[i] >= len) st = mt__error(MT_ERR_RUNTIME, "torch.searchsorted(): sorter index out of range");
    }
    if (!st) {
        ss_ctx c = {.kb = &kb, .kv = &kv, .sorter = sorter ? ks.i : NULL, .len = len,
                    .inner = input->ndim ? input->sizes[input->ndim - 1] : 1, .one_row = boundaries->ndim == 1,
                    .right = right, .out_int32 = out_int32, .o = mt__data(*out)};
        mt__parallel_for(kv.n, 4096, searchsorted_part, &c); /* PyTorch's searchsorted threads too */
    }
    if (st) MT_DROP(*out);
    mt_tensor_release(cb);
    mt_tensor_release(cv);
    mt_tensor_release(kb.hold);
    mt_tensor_release(kv.hold);
    mt_tensor_release(ks.hold);
    return st;
}

/* ---- isin ------------------------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_f64(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

mt_status mt_isin(mt_tensor *elements, mt_tensor *test, int invert, mt_tensor **out) {
    MT_PROFILE("isin", elements, test);
    MT_TRY(mt__same_device(elements, test));
    int dt = mt_promote_types(elements->dtype, test->dtype);
    if (dt < 0) return MT_ERR_RUNTIME;
    for (int k = 0; k < 2; k++) { /* elements first, then test_elements */
        int d = k ? test->dtype : elements->dtype;
        if (d == MT_BOOL || mt__is_complex(d))
            return mt__error(MT_ERR_RUNTIME, "Unsupported input type encountered for isin(): %s", mt_dtype_names[d]);
    }
    MT_TRY(mt__alloc(elements->ndim, elements->sizes, NULL, MT_BOOL, elements->device, out));
    if (!elements->storage->data) return MT_OK;
    keys_t ke = {0}, kt = {0};
    mt_tensor *ce = NULL, *ct = NULL;
    mt_status st = mt__impl_to_dtype(elements, dt, 0, &ce);
    if (!st) st = mt__impl_to_dtype(test, dt, 0, &ct);
    if (!st) st = keys_of(ce, &ke);
    if (!st) st = keys_of(ct, &kt);
    if (!st) {
        /* sorted test values without NaN (NaN matches nothing), then a binary search per element */
        int64_t m = 0;
        for (int64_t i = 0; i < kt.n; i++)
            if (!kt.is_f || kt.f[i] == kt.f[i]) {
                if (kt.is_f) kt.f[m++] = kt.f[i];
                else kt.i[m++] = kt.i[i];
            }
        if (kt.is_f) qsort(kt.f, (size_t)m, sizeof(double), cmp_f64);
        else qsort(kt.i, (size_t)m, sizeof(int64_t), cmp_i64);
        uint8_t *o = (uint8_t *)mt__data(*out);
        for (int64_t i = 0; i < ke.n; i++) {
            int found;
            if (ke.is_f) found = bsearch(&ke.f[i], kt.f, (size_t)m, sizeof(double), cmp_f64) != NULL && ke.f[i] == ke.f[i];
            else found = bsearch(&ke.i[i], kt.i, (size_t)m, sizeof(int64_t), cmp_i64) != NULL;
            o[i] = (uint8_t)(found != invert);
        }
    }
    if (st) MT_DROP(*out);
    mt_tensor_release(ce);
    mt_tensor_release(ct);
    mt_tensor_release(ke.hold);
    mt_tensor_release(kt.hold);
    return st;
}

/* ---- bincount -------------------------------------------------------------------------------- */

mt_status mt__impl_bincount(mt_tensor *t, mt_tensor *weights, int64_t minlength, mt_tensor **out) {
    if (!mt__is_int(t->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"bincount_cpu\" not implemented for '%s'", mt_dtype_names[t->dtype]);
    if (minlength < 0) return mt__error(MT_ERR_RUNTIME, "minlength should be >= 0");
    int wdt = !weights ? MT_I64 : weights->dtype == MT_F32 ? MT_F32 : MT_F64;
    if (!t->storage->data) return mt__error(MT_ERR_NOT_IMPLEMENTED, "bincount on meta tensors");
    if (weights) MT_TRY(mt__same_device(t, weights)); /* meta weights have no values to read */
    if (t->ndim == 1 && t->sizes[0] == 0) { /* int64 zeros, weights or not (PyTorch) */
        MT_TRY(mt__alloc(1, &minlength, NULL, MT_I64, MT_CPU, out));
        memset(mt__data(*out), 0, (size_t)(minlength * 8));
        return MT_OK;
    }
    keys_t k = {0}, kw = {0};
    if (t->ndim == 1) MT_TRY(keys_of(t, &k));
    int64_t mx = -1;
    int bad = t->ndim != 1;
    for (int64_t i = 0; !bad && i < k.n; i++) {
        if (k.i[i] < 0) bad = 1;
        if (k.i[i] > mx) mx = k.i[i];
    }
    mt_status st = MT_OK;
    if (bad) st = mt__error(MT_ERR_RUNTIME, "bincount only supports 1-d non-negative integral inputs.");
    else if (mx == INT64_MAX) /* its bin count, mx + 1, passes int64 */
        st = mt__error(MT_ERR_RUNTIME, "maximum value of input overflowed, it should be < %lld but got %lld",
                       (long long)INT64_MAX, (long long)mx);
    if (!st && weights && (weights->ndim != 1 || weights->sizes[0] != t->sizes[0]))
        st = mt__error(MT_ERR_RUNTIME, "weights should be 1-d and have the same length as input");
    if (!st && weights) st = keys_of(weights, &kw);
    int64_t nbins = mx + 1 > minlength ? mx + 1 : minlength;
    if (!st) st = mt__alloc(1, &nbins, NULL, wdt, MT_CPU, out);
    if (!st) {
        char *o = mt__data(*out);
        memset(o, 0, (size_t)(nbins * mt_dtype_itemsize(wdt)));
        for (int64_t i = 0; i < k.n; i++) {
            int64_t b = k.i[i];
            if (!weights) ((int64_t *)o)[b]++;
            else if (wdt == MT_F32) ((float *)o)[b] += (float)(kw.is_f ? kw.f[i] : (double)kw.i[i]);
            else ((double *)o)[b] += kw.is_f ? kw.f[i] : (double)kw.i[i];
        }
    }
    mt_tensor_release(k.hold);
    mt_tensor_release(kw.hold);
    return st;
}

/* ---- histc / histogram's counts (PyTorch's histogramdd kernel for one dimension) -----------------
 * Each float32/float64 element inside [edges[0], edges[nb]] goes to a bin (clamped to [0, nb)): mode 1,
 * histc's (x - lo) * nb / (hi - lo) in the input's dtype; else the bin whose edges hold it (the last bin
 * closed), found by binary search (mode 0: given edges) or from that linear guess by stepping to the
 * neighbour (mode 2: linspace edges, as PyTorch's LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH; the same bin
 * a binary search finds, without its unpredictable branches). Unweighted counts are summed per thread in int64
 * (exact); weights are added in element order in the input's dtype, as index_add_ added them. */
typedef struct {
    const char *x, *w, *e;
    int64_t n, nb, nparts, *part;
    int f64, mode;
} hist_ctx;

#define HIST_BIN(T)                                                                                  \
    static inline int64_t hist_bin_##T(const T *e, int64_t nb, T v, int mode) {                    \
        T lo = e[0], hi = e[nb];                                                                     \
        if (!(v >= lo && v <= hi)) return -1;                                                        \
        int64_t pos;                                                                                 \
        if (mode) {                                                                                  \
            T q = (v - lo) * (T)nb / (hi - lo);                                                      \
            /* x86's conversion (INT64_MIN for NaN and out of range) without C's undefined cast */    \
            pos = q == q && q > (T)-9.2e18 && q < (T)9.2e18 ? (int64_t)q : INT64_MIN;               \
            if (mode == 2) { /* from that guess, the bin whose edges hold v (as upper_bound - 1) */  \
                pos = pos < 0 ? 0 : pos >= nb ? nb - 1 : pos;                                        \
                while (pos > 0 && v < e[pos]) pos--;                                                 \
                while (pos < nb - 1 && v >= e[pos + 1]) pos++;                                       \
            }                                                                                        \
        } else { /* upper_bound - 1 */                                                               \
            int64_t s = 0, t = nb + 1;                                                               \
            while (s < t) {                                                                          \
                int64_t mid = s + ((t - s) >> 1);                                                    \
                if (!(e[mid] > v)) s = mid + 1;                                                      \
                else t = mid;                                                                        \
            }                                                                                        \
            pos = s - 1;                                                                             \
        }                                                                                            \
        return pos < 0 ? 0 : pos >= nb ? nb - 1 : pos;                                               \
    }
HIST_BIN(float)
HIST_BIN(double)

/* slices [t, u) of nparts equal slices of the elements, each counted into its own row */
static void hist_part(void *p, int64_t t, int64_t u) {
    const hist_ctx *c = p;
    for (; t < u; t++) {
        int64_t *cnt = c->part + t * c->nb;
        for (int64_t i = c->n * t / c->nparts, e = c->n * (t + 1) / c->nparts; i < e; i++) {
            int64_t k = c->f64 ? hist_bin_double((const double *)c->e, c->nb, ((const double *)c->x)[i], c->mode)
                               : hist_bin_float((const float *)c->e, c->nb, ((const float *)c->x)[i], c->mode);
            if (k >= 0) cnt[k]++;
        }
    }
}

mt_status mt_histogram_counts(mt_tensor *input, mt_tensor *edges, mt_tensor *weight, int mode, mt_tensor **out) {
    MT_PROFILE("histogram_counts", input, edges, weight);
    *out = NULL;
    int dt = input->dtype;
    if (dt != MT_F32 && dt != MT_F64) return mt__not_implemented("histogram_cpu", dt);
    if (edges->ndim != 1 || edges->sizes[0] < 2 || edges->dtype != dt || (weight && weight->dtype != dt))
        return mt__error(MT_ERR_RUNTIME, "histogram counts: 1-D edges (at least 2) and weights of the input's dtype");
    int64_t n = mt_tensor_numel(input), nb = edges->sizes[0] - 1;
    if (weight && mt_tensor_numel(weight) != n)
        return mt__error(MT_ERR_RUNTIME, "histogram counts: one weight per element");
    MT_TRY(mt__same_device(input, edges));
    if (weight) MT_TRY(mt__same_device(input, weight));
    MT_TRY(mt__alloc(1, &nb, NULL, dt, input->device, out));
    if (input->device == MT_META) return MT_OK;
    mt_tensor *cx = NULL, *ce = NULL, *cw = NULL, *parts = NULL;
    mt_status st = mt_contiguous(input, &cx);
    if (!st) st = mt_contiguous(edges, &ce);
    if (!st && weight) st = mt_contiguous(weight, &cw);
    int nt = n < 65536 ? 1 : mt_get_num_threads(); /* small inputs: one part, no pool */
    int64_t np = weight ? nb : (int64_t)nt * nb;
    if (!st) st = mt__alloc(1, &np, NULL, weight ? dt : MT_I64, MT_CPU, &parts);
    if (!st) {
        hist_ctx c = {.x = mt__data(cx), .e = mt__data(ce), .n = n, .nb = nb, .nparts = nt, .f64 = dt == MT_F64,
                      .mode = mode};
        char *o = mt__data(*out);
        if (!weight) {
            c.part = (int64_t *)mt__data(parts);
            memset(c.part, 0, np * sizeof(int64_t));
            mt__parallel_for(nt, 1, hist_part, &c);
            for (int64_t k = 0; k < nb; k++) {
                int64_t s = 0;
                for (int t = 0; t < nt; t++) s += c.part[t * nb + k];
                if (c.f64) ((double *)o)[k] = (double)s;
                else ((float *)o)[k] = (float)s;
            }
        } else { /* in element order, as before */
            memset(o, 0, nb * mt_dtype_itemsize(dt));
            const char *w = mt__data(cw);
            for (int64_t i = 0; i < n; i++) {
                if (c.f64) {
                    int64_t k = hist_bin_double((const double *)c.e, nb, ((const double *)c.x)[i], mode);
                    if (k >= 0) ((double *)o)[k] += ((const double *)w)[i];
                } else {
                    int64_t k = hist_bin_float((const float *)c.e, nb, ((const float *)c.x)[i], mode);
                    if (k >= 0) ((float *)o)[k] += ((const float *)w)[i];
                }
            }
        }
    }
    mt_tensor_release(cx), mt_tensor_release(ce), mt_tensor_release(cw), mt_tensor_release(parts);
    if (st) MT_DROP(*out);
    return st;
}
