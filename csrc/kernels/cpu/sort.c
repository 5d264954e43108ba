/* sort.c — ordering along a dim: sort/argsort, topk, kthvalue, cummax/cummin.
 *
 * Each row along dim is copied into a buffer of (key, index) pairs, keys widened exactly
 * (float16/bfloat16/float32 -> float, float64 -> double, integers -> int64). NaN orders as
 * the largest value (first when descending), as PyTorch's comparators. stable sorts are a
 * merge sort; the other orders replay libstdc++'s algorithms step for step (introsort,
 * nth_element, partial_sort) and PyTorch's quick_select, which PyTorch's CPU kernels call,
 * so ties come out with PyTorch's indices. Rows run in parallel. */
#include <math.h>

#include "shape.h"

/* ---- per key type: comparator and the algorithms -------------------------------------- */

#define DEF_SORTS(K, ISNAN)                                                                         \
    typedef struct { K key; int64_t idx; } e_##K;                                                   \
    /* a before b: ascending NaN last, descending NaN first */                                       \
    static inline int lt_##K(const e_##K *a, const e_##K *b, int desc) {                             \
        return desc ? ((ISNAN(a->key) && !ISNAN(b->key)) || a->key > b->key)                          \
                    : ((!ISNAN(a->key) && ISNAN(b->key)) || a->key < b->key);                         \
    }                                                                                               \
    static inline void swap_##K(e_##K *a, e_##K *b) { e_##K t = *a; *a = *b; *b = t; }                \
    static void merge_sort_##K(e_##K *v, e_##K *tmp, int64_t n, int desc) {                           \
        if (n < 2) return;                                                                          \
        int64_t h = n / 2;                                                                          \
        merge_sort_##K(v, tmp, h, desc);                                                            \
        merge_sort_##K(v + h, tmp, n - h, desc);                                                    \
        if (!lt_##K(&v[h], &v[h - 1], desc)) return;                                                \
        memcpy(tmp, v, (size_t)h * sizeof *v);                                                      \
        int64_t i = 0, j = h, o = 0;                                                                \
        while (i < h && j < n) v[o++] = lt_##K(&v[j], &tmp[i], desc) ? v[j++] : tmp[i++];             \
        while (i < h) v[o++] = tmp[i++];                                                            \
    }                                                                                               \
    /* libstdc++ stl_heap.h */                                                                      \
    static void push_heap_##K(e_##K *f, int64_t hole, int64_t top, e_##K val, int desc) {            \
        int64_t parent = (hole - 1) / 2;                                                            \
        while (hole > top && lt_##K(&f[parent], &val, desc)) {                                      \
            f[hole] = f[parent];                                                                    \
            hole = parent;                                                                          \
            parent = (hole - 1) / 2;                                                                \
        }                                                                                           \
        f[hole] = val;                                                                              \
    }                                                                                               \
    static void adjust_heap_##K(e_##K *f, int64_t hole, int64_t len, e_##K val, int desc) {          \
        const int64_t top = hole;                                                                   \
        int64_t second = hole;                                                                      \
        while (second < (len - 1) / 2) {                                                            \
            second = 2 * (second + 1);                                                              \
            if (lt_##K(&f[second], &f[second - 1], desc)) second--;                                 \
            f[hole] = f[second];                                                                    \
            hole = second;                                                                          \
        }                                                                                           \
        if ((len & 1) == 0 && second == (len - 2) / 2) {                                            \
            second = 2 * (second + 1);                                                              \
            f[hole] = f[second - 1];                                                                \
            hole = second - 1;                                                                      \
        }                                                                                           \
        push_heap_##K(f, hole, top, val, desc);                                                     \
    }                                                                                               \
    static void pop_heap_##K(e_##K *f, int64_t last, int64_t result, int desc) {                     \
        e_##K val = f[result];                                                                      \
        f[result] = f[0];                                                                           \
        adjust_heap_##K(f, 0, last, val, desc);                                                     \
    }                                                                                               \
    static void make_heap_##K(e_##K *f, int64_t len, int desc) {                                     \
        if (len < 2) return;                                                                        \
        for (int64_t parent = (len - 2) / 2;; parent--) {                                           \
            adjust_heap_##K(f, parent, len, f[parent], desc);                                       \
            if (parent == 0) return;                                                                \
        }                                                                                           \
    }                                                                                               \
    static void heap_select_##K(e_##K *f, int64_t mid, int64_t last, int desc) {                     \
        make_heap_##K(f, mid, desc);                                                                \
        for (int64_t i = mid; i < last; i++)                                                        \
            if (lt_##K(&f[i], &f[0], desc)) pop_heap_##K(f, mid, i, desc);                           \
    }                                                                                               \
    static void sort_heap_##K(e_##K *f, int64_t last, int desc) {                                    \
        while (last > 1) {                                                                          \
            last--;                                                                                 \
            pop_heap_##K(f, last, last, desc);                                                      \
        }                                                                                           \
    }                                                                                               \
    static void partial_sort_##K(e_##K *f, int64_t mid, int64_t last, int desc) {                    \
        heap_select_##K(f, mid, last, desc);                                                        \
        sort_heap_##K(f, mid, desc);                                                                \
    }                                                                                               \
    /* libstdc++ stl_algo.h */                                                                      \
    static void linear_insert_##K(e_##K *last, int desc) {                                           \
        e_##K val = *last, *next = last - 1;                                                        \
        while (lt_##K(&val, next, desc)) {                                                          \
            *last = *next;                                                                          \
            last = next;                                                                            \
            next--;                                                                                 \
        }                                                                                           \
        *last = val;                                                                                \
    }                                                                                               \
    static void insertion_sort_##K(e_##K *f, e_##K *l, int desc) {                                   \
        if (f == l) return;                                                                         \
        for (e_##K *i = f + 1; i != l; i++) {                                                       \
            if (lt_##K(i, f, desc)) {                                                               \
                e_##K val = *i;                                                                     \
                memmove(f + 1, f, (size_t)(i - f) * sizeof *f);                                     \
                *f = val;                                                                           \
            } else {                                                                                \
                linear_insert_##K(i, desc);                                                         \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
    static void final_insertion_sort_##K(e_##K *f, e_##K *l, int desc) {                             \
        if (l - f > 16) {                                                                           \
            insertion_sort_##K(f, f + 16, desc);                                                    \
            for (e_##K *i = f + 16; i != l; i++) linear_insert_##K(i, desc);                        \
        } else {                                                                                    \
            insertion_sort_##K(f, l, desc);                                                         \
        }                                                                                           \
    }                                                                                               \
    static void median_to_first_##K(e_##K *r, e_##K *a, e_##K *b, e_##K *c, int desc) {             \
        if (lt_##K(a, b, desc)) {                                                                   \
            if (lt_##K(b, c, desc)) swap_##K(r, b);                                                 \
            else if (lt_##K(a, c, desc)) swap_##K(r, c);                                            \
            else swap_##K(r, a);                                                                    \
        } else if (lt_##K(a, c, desc)) swap_##K(r, a);                                              \
        else if (lt_##K(b, c, desc)) swap_##K(r, c);                                                \
        else swap_##K(r, b);                                                                        \
    }                                                                                               \
    static e_##K *partition_pivot_##K(e_##K *f, e_##K *l, int desc) {                                \
        e_##K *mid = f + (l - f) / 2, *p = f;                                                       \
        median_to_first_##K(f, f + 1, mid, l - 1, desc);                                            \
        f++;                                                                                        \
        for (;;) {                                                                                  \
            while (lt_##K(f, p, desc)) f++;                                                         \
            l--;                                                                                    \
            while (lt_##K(p, l, desc)) l--;                                                         \
            if (!(f < l)) return f;                                                                 \
            swap_##K(f, l);                                                                         \
            f++;                                                                                    \
        }                                                                                           \
    }                                                                                               \
    static void introsort_loop_##K(e_##K *f, e_##K *l, int depth, int desc) {                         \
        while (l - f > 16) {                                                                        \
            if (depth == 0) {                                                                       \
                partial_sort_##K(f, l - f, l - f, desc);                                            \
                return;                                                                             \
            }                                                                                       \
            depth--;                                                                                \
            e_##K *cut = partition_pivot_##K(f, l, desc);                                           \
            introsort_loop_##K(cut, l, depth, desc);                                                \
            l = cut;                                                                                \
        }                                                                                           \
    }                                                                                               \
    static void std_sort_##K(e_##K *f, int64_t n, int desc) {                                        \
        if (n == 0) return;                                                                         \
        introsort_loop_##K(f, f + n, (63 - __builtin_clzll((unsigned long long)n)) * 2, desc);      \
        final_insertion_sort_##K(f, f + n, desc);                                                   \
    }                                                                                               \
    static void nth_element_##K(e_##K *f, int64_t nth, int64_t n, int desc) {                        \
        if (n == 0 || nth == n) return;                                                             \
        e_##K *l = f + n, *t = f + nth;                                                             \
        int depth = (63 - __builtin_clzll((unsigned long long)n)) * 2;                              \
        while (l - f > 3) {                                                                         \
            if (depth == 0) {                                                                       \
                heap_select_##K(f, t + 1 - f, l - f, desc);                                         \
                swap_##K(f, t);                                                                     \
                return;                                                                             \
            }                                                                                       \
            depth--;                                                                                \
            e_##K *cut = partition_pivot_##K(f, l, desc);                                           \
            if (cut <= t) f = cut;                                                                  \
            else l = cut;                                                                           \
        }                                                                                           \
        insertion_sort_##K(f, l, desc);                                                             \
    }                                                                                               \
    /* PyTorch's quick_select_template (SortingUtils.h) with its gt_or_nan comparator */             \
    static inline int gtn_##K(K x, K y) { return (ISNAN(x) && !ISNAN(y)) || x > y; }                  \
    static void quick_select_##K(e_##K *a, int64_t n, int64_t k) {                                  \
        int64_t L = 0, R = n - 1, P, i, j;                                                          \
        for (;;) {                                                                                  \
            if (R <= L) return;                                                                     \
            if (R == L + 1) {                                                                       \
                if (gtn_##K(a[L].key, a[R].key)) swap_##K(&a[L], &a[R]);                             \
                return;                                                                             \
            }                                                                                       \
            P = L + (R - L) / 2;                                                                    \
            swap_##K(&a[P], &a[L + 1]);                                                             \
            if (gtn_##K(a[L + 1].key, a[R].key)) swap_##K(&a[L + 1], &a[R]);                         \
            if (gtn_##K(a[L].key, a[R].key)) swap_##K(&a[L], &a[R]);                                 \
            if (gtn_##K(a[L + 1].key, a[L].key)) swap_##K(&a[L + 1], &a[L]);                         \
            i = L + 1;                                                                              \
            j = R;                                                                                  \
            K piv = a[L].key;                                                                       \
            for (;;) {                                                                              \
                do i++; while (gtn_##K(piv, a[i].key));                                             \
                do j--; while (gtn_##K(a[j].key, piv));                                             \
                if (j < i) break;                                                                   \
                swap_##K(&a[i], &a[j]);                                                             \
            }                                                                                       \
            swap_##K(&a[L], &a[j]);                                                                 \
            if (j <= k) L = i;                                                                      \
            if (j >= k) R = j - 1;                                                                  \
        }                                                                                           \
    }

#define NO_NAN(x) 0
#define IS_NAN(x) ((x) != (x))
typedef int64_t i64;
DEF_SORTS(float, IS_NAN)
DEF_SORTS(double, IS_NAN)
DEF_SORTS(i64, NO_NAN)

/* which key type a dtype sorts with: 0 float, 1 double, 2 int64 */
static int key_kind(int dt) { return dt == MT_F64 ? 1 : mt__is_float(dt) ? 0 : 2; }
static int key_size(int kind) { return kind == 0 ? (int)sizeof(e_float) : kind == 1 ? (int)sizeof(e_double) : (int)sizeof(e_i64); }

/* row-wise driver: rows are all positions of t except along dim */
typedef struct row_job row_job;
typedef void (*row_fn)(const row_job *j, void *buf, const char *in, char *vals, char *idx);
struct row_job {
    const mt_tensor *t;
    int dim, kind, isz;
    int64_t n, nrows;
    int64_t in_ds, v_ds, i_ds;       /* byte strides along dim: input, values, indices */
    int64_t rsz[MT_MAX_DIMS];         /* the other dims */
    int64_t rst[3][MT_MAX_DIMS];      /* their byte strides: input, values, indices */
    int nr;
    char *in, *vals, *idx;
    int64_t a0, a1;                   /* op arguments (k, flags) */
    int desc, stable;
    row_fn fn;
    atomic_int oom;
};

static void load_row(const row_job *j, void *buf, const char *in) {
    static const int64_t z[2] = {0, 0};
    int kind = j->kind, dt = j->t->dtype;
    int dst = kind == 0 ? MT_F32 : kind == 1 ? MT_F64 : MT_I64;
    mt_loop_fn cv = mt__cast_loop(dst, dt);
    for (int64_t i = 0; i < j->n; i++) {
        char *e = (char *)buf + i * key_size(kind);
        cv((char *[]){e, (char *)in + i * j->in_ds}, z, 1, NULL);
        *(int64_t *)(e + (kind == 0 ? offsetof(e_float, idx) : kind == 1 ? offsetof(e_double, idx) : offsetof(e_i64, idx))) = i;
    }
}

/* write m entries of buf: keys (converted back, exact) to vals, indices to idx */
static void store_row(const row_job *j, const void *buf, int64_t m, char *vals, char *idx) {
    static const int64_t z[2] = {0, 0};
    int kind = j->kind, dt = j->t->dtype;
    int src = kind == 0 ? MT_F32 : kind == 1 ? MT_F64 : MT_I64;
    mt_loop_fn cv = mt__cast_loop(dt, src);
    size_t io = kind == 0 ? offsetof(e_float, idx) : kind == 1 ? offsetof(e_double, idx) : offsetof(e_i64, idx);
    for (int64_t i = 0; i < m; i++) {
        const char *e = (const char *)buf + i * key_size(kind);
        if (vals) cv((char *[]){vals + i * j->v_ds, (char *)e}, z, 1, NULL);
        if (idx) *(int64_t *)(idx + i * j->i_ds) = *(const int64_t *)(e + io);
    }
}

static void rows_chunk(void *p, int64_t b, int64_t e) {
    row_job *j = p;
    size_t es = (size_t)key_size(j->kind);
    void *buf = malloc(2 * (size_t)(j->n ? j->n : 1) * es);
    if (!buf) { atomic_store(&j->oom, 1); return; }
    for (int64_t r = b; r < e; r++) {
        int64_t rem = r, o[3] = {0, 0, 0};
        for (int d = j->nr - 1; d >= 0; d--) {
            int64_t c = rem % j->rsz[d];
            rem /= j->rsz[d];
            for (int k = 0; k < 3; k++) o[k] += c * j->rst[k][d];
        }
        j->fn(j, buf, j->in + o[0], j->vals ? j->vals + o[1] : NULL, j->idx ? j->idx + o[2] : NULL);
    }
    free(buf);
}

/* run fn over every row of t along dim; vals/idx: outputs whose shape is t's with dim of length m
 * (keepdim-shaped for reductions: their strides along the other dims are used as given) */
static mt_status run_rows(row_job *j, const mt_tensor *t, int dim, const mt_tensor *vals, const mt_tensor *idx) {
    if (mt_tensor_numel(t) == 0) return MT_OK; /* no rows (and strides of empty views may be huge) */
    j->t = t;
    j->dim = dim;
    j->kind = key_kind(t->dtype);
    j->isz = mt_dtype_itemsize(t->dtype);
    j->n = t->ndim ? t->sizes[dim] : 1;
    j->in_ds = mt__wmul(t->ndim ? t->strides[dim] : 0, j->isz); /* size-1 dims: any stride */
    j->v_ds = vals && vals->ndim == t->ndim && t->ndim ? mt__wmul(vals->strides[dim], j->isz) : 0;
    j->i_ds = idx && idx->ndim == t->ndim && t->ndim ? mt__wmul(idx->strides[dim], 8) : 0;
    j->nr = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d == dim) continue;
        j->rsz[j->nr] = t->sizes[d];
        j->rst[0][j->nr] = mt__wmul(t->strides[d], j->isz);
        /* outputs: same rank as t, or t without dim (kthvalue without keepdim) */
        int od = vals && vals->ndim < t->ndim && d > dim ? d - 1 : d;
        j->rst[1][j->nr] = vals ? mt__wmul(vals->strides[od], j->isz) : 0;
        j->rst[2][j->nr] = idx ? mt__wmul(idx->strides[od], 8) : 0;
        j->nr++;
    }
    j->nrows = mt__numel(j->nr, j->rsz);
    j->in = mt__data(t);
    j->vals = vals ? mt__data(vals) : NULL;
    j->idx = idx ? mt__data(idx) : NULL;
    atomic_init(&j->oom, 0);
    if (j->nrows == 0 || mt_tensor_numel(t) == 0) return MT_OK;
    int64_t grain = MT_GRAIN_SIZE / (j->n > 1 ? j->n : 1);
    mt__parallel_for(j->nrows, grain > 0 ? grain : 1, rows_chunk, j);
    if (atomic_load(&j->oom)) return mt__error(MT_ERR_OOM, "out of memory sorting");
    return MT_OK;
}

/* ---- sort ----------------------------------------------------------------------------- */

static void sort_row(const row_job *j, void *buf, const char *in, char *vals, char *idx) {
    load_row(j, buf, in);
    int64_t n = j->n;
    if (j->in_ds != 0 || n < 2) { /* an expanded (stride 0) row stays as is, as in PyTorch */
        void *tmp = (char *)buf + n * key_size(j->kind);
        switch (j->kind) {
        case 0: j->stable ? merge_sort_float(buf, tmp, n, j->desc) : std_sort_float(buf, n, j->desc); break;
        case 1: j->stable ? merge_sort_double(buf, tmp, n, j->desc) : std_sort_double(buf, n, j->desc); break;
        default: j->stable ? merge_sort_i64(buf, tmp, n, j->desc) : std_sort_i64(buf, n, j->desc); break;
        }
    }
    store_row(j, buf, n, vals, idx);
}

mt_status mt__impl_sort(mt_tensor *t, int64_t dim, int descending, int stable, mt_tensor **values, mt_tensor **indices) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    if (mt__is_complex(t->dtype)) return mt__error(MT_ERR_RUNTIME, " Sort does not support complex dtypes on CPU");
    MT_NO_FLOAT8(t->dtype, "sorting_kernel_method_name");
    int64_t strides[MT_MAX_DIMS];
    mt__like_strides(t, strides);
    MT_TRY(mt__alloc(t->ndim, t->sizes, strides, t->dtype, t->device, values));
    mt_status st = mt__alloc(t->ndim, t->sizes, strides, MT_I64, t->device, indices);
    if (st) { MT_DROP(*values); return st; }
    if (!t->storage->data) return MT_OK;
    row_job j = {.desc = descending, .stable = stable, .fn = sort_row};
    /* PyTorch sorts big 1-D integer tensors ascending with fbgemm's radix sort: a stable order */
    if (t->ndim == 1 && !descending && mt__is_int(t->dtype) && t->sizes[0] >= MT_GRAIN_SIZE) j.stable = 1;
    if ((st = run_rows(&j, t, (int)dim, *values, *indices))) {
        MT_DROP(*values);
        MT_DROP(*indices);
    }
    return st;
}

/* ---- topk (PyTorch's topk_impl_loop) -------------------------------------------------- */

static void topk_row(const row_job *j, void *buf, const char *in, char *vals, char *idx) {
    load_row(j, buf, in);
    int64_t n = j->n, k = j->a0;
    int desc = j->desc; /* largest */
    if (k == 0) return;
    int partial = k * 64 <= n;
#define TOPK(K)                                                                                  \
    if (partial) partial_sort_##K(buf, k, n, desc);                                              \
    else {                                                                                       \
        nth_element_##K(buf, k - 1, n, desc);                                                    \
        if (j->stable) std_sort_##K(buf, k - 1, desc); /* sorted: the first k-1, as PyTorch */   \
    }
    switch (j->kind) {
    case 0: TOPK(float) break;
    case 1: TOPK(double) break;
    default: TOPK(i64) break;
    }
#undef TOPK
    store_row(j, buf, k, vals, idx);
}

mt_status mt__impl_topk(mt_tensor *t, int64_t k, int64_t dim, int largest, int sorted, mt_tensor **values,
                        mt_tensor **indices) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    if (mt__is_complex(t->dtype)) return mt__error(MT_ERR_RUNTIME, " topk does not support complex dtypes on CPU");
    MT_NO_FLOAT8(t->dtype, "topk_cpu");
    int64_t n = t->ndim ? t->sizes[dim] : 1;
    if (k < 0 || k > n) return mt__error(MT_ERR_RUNTIME, "selected index k out of range");
    if (t->dtype == MT_BOOL) return mt__error(MT_ERR_RUNTIME, "topk does not support bool dtypes on CPU");
    int64_t sizes[MT_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    if (t->ndim) sizes[dim] = k;
    MT_TRY(mt__alloc(t->ndim, sizes, NULL, t->dtype, t->device, values));
    mt_status st = mt__alloc(t->ndim, sizes, NULL, MT_I64, t->device, indices);
    if (st) { MT_DROP(*values); return st; }
    if (!t->storage->data) return MT_OK;
    row_job j = {.desc = largest, .stable = sorted, .a0 = k, .fn = topk_row};
    if ((st = run_rows(&j, t, (int)dim, *values, *indices))) {
        MT_DROP(*values);
        MT_DROP(*indices);
    }
    return st;
}

/* ---- kthvalue (PyTorch's quick_select) ------------------------------------------------ */

static void kth_row(const row_job *j, void *buf, const char *in, char *vals, char *idx) {
    load_row(j, buf, in);
    int64_t k = j->a0 - 1;
    switch (j->kind) {
    case 0: quick_select_float(buf, j->n, k); break;
    case 1: quick_select_double(buf, j->n, k); break;
    default: quick_select_i64(buf, j->n, k); break;
    }
    store_row(j, (char *)buf + k * key_size(j->kind), 1, vals, idx);
}

mt_status mt__impl_kthvalue(mt_tensor *t, int64_t k, int64_t dim, int keepdim, mt_tensor **values, mt_tensor **indices) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    MT_NO_FLOAT8(t->dtype, "kthvalue_cpu");
    int64_t n = t->ndim ? t->sizes[dim] : 1;
    if (t->ndim && n == 0)
        return mt__error(MT_ERR_INDEX, "kthvalue(): Expected reduction dim %lld to have non-zero size.", (long long)dim);
    if (k < 1 || k > n)
        return mt__error(MT_ERR_RUNTIME, "kthvalue(): selected number k out of range for dimension %lld", (long long)dim);
    if (t->dtype == MT_BOOL && t->ndim) /* a 0-dim input is copied before the typed kernel */
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"kthvalue_cpu\" not implemented for 'Bool'");
    int64_t sizes[MT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++)
        if (d != dim) sizes[nd++] = t->sizes[d];
        else if (keepdim) sizes[nd++] = 1;
    MT_TRY(mt__alloc(nd, sizes, NULL, t->dtype, t->device, values));
    mt_status st = mt__alloc(nd, sizes, NULL, MT_I64, t->device, indices);
    if (st) { MT_DROP(*values); return st; }
    if (!t->storage->data) return MT_OK;
    row_job j = {.a0 = k, .fn = kth_row};
    if ((st = run_rows(&j, t, (int)dim, *values, *indices))) {
        MT_DROP(*values);
        MT_DROP(*indices);
    }
    return st;
}

/* ---- cummax / cummin ------------------------------------------------------------------ */

/* read and written in place by dtype (the row buffer's per-element conversions in and out, an indirect
 * call each, were most of the time: 3x PyTorch); values copy the chosen element's bits */
static void cum_row(const row_job *j, void *buf, const char *in, char *vals, char *idx) {
    (void)buf;
    int is_min = (int)j->a0;
    int64_t n = j->n, ds = j->in_ds, vs = j->v_ds, is = j->i_ds;
#define CUM(T, F, LOAD, ISN)                                                                     \
    {                                                                                            \
        T ob = *(const T *)in;                                                                   \
        F out = (F)LOAD(ob);                                                                     \
        int64_t at = 0;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                        \
            T raw = *(const T *)(in + i * ds);                                                   \
            F cur = (F)LOAD(raw);                                                                \
            if (ISN(cur) || (!ISN(out) && (is_min ? cur <= out : cur >= out))) out = cur, ob = raw, at = i; \
            *(T *)(vals + i * vs) = ob;                                                          \
            *(int64_t *)(idx + i * is) = at;                                                     \
        }                                                                                        \
    }                                                                                            \
    break;
#define ISN_F(x) ((x) != (x))
#define ISN_I(x) 0
    switch (j->t->dtype) {
    case MT_F16: CUM(uint16_t, float, mt__f16_to_f32, ISN_F)
    case MT_BF16: CUM(uint16_t, float, mt__bf16_to_f32, ISN_F)
    case MT_F32: CUM(float, float, , ISN_F)
    case MT_F64: CUM(double, double, , ISN_F)
    case MT_BOOL: case MT_U8: CUM(uint8_t, uint8_t, , ISN_I)
    case MT_I8: CUM(int8_t, int8_t, , ISN_I)
    case MT_I16: CUM(int16_t, int16_t, , ISN_I)
    case MT_I32: CUM(int32_t, int32_t, , ISN_I)
    case MT_I64: CUM(int64_t, int64_t, , ISN_I)
    default: { /* other dtypes: through the row buffer as keys */
        load_row(j, buf, in);
#define CUMK(K, ISN)                                                                             \
    {                                                                                            \
        e_##K *e = buf;                                                                          \
        K out = e[0].key;                                                                        \
        int64_t at = 0;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                        \
            K cur = e[i].key;                                                                    \
            if (ISN(cur) || (!ISN(out) && (is_min ? cur <= out : cur >= out))) out = cur, at = i;  \
            e[i].key = out;                                                                      \
            e[i].idx = at;                                                                       \
        }                                                                                        \
    }
        switch (j->kind) {
        case 0: CUMK(float, IS_NAN) break;
        case 1: CUMK(double, IS_NAN) break;
        default: CUMK(i64, NO_NAN) break;
        }
#undef CUMK
        store_row(j, buf, n, vals, idx);
    }
    }
#undef CUM
#undef ISN_F
#undef ISN_I
}

mt_status mt__impl_cummax(int is_min, mt_tensor *t, int64_t dim, mt_tensor **values, mt_tensor **indices) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    MT_NO_FLOAT8(t->dtype, is_min ? "cummin_cpu" : "cummax_cpu");
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, values));
    mt_status st = mt__alloc(t->ndim, t->sizes, NULL, MT_I64, t->device, indices);
    if (st) { MT_DROP(*values); return st; }
    if (!t->storage->data) return MT_OK;
    row_job j = {.a0 = is_min, .fn = cum_row};
    if ((st = run_rows(&j, t, (int)dim, *values, *indices))) {
        MT_DROP(*values);
        MT_DROP(*indices);
    }
    return st;
}
