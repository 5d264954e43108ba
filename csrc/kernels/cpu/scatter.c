/* scatter.c — ops that read or write through an index along a dim or a mask:
 * index_select, gather, scatter/scatter_add/scatter_reduce, index_add/copy/fill,
 * masked_select, masked_scatter, take, put_, nonzero.
 *
 * Indices are checked before any element moves (an out-of-range index is an error, never
 * an out-of-bounds access). Reads (gather, index_select) run the elementwise iterator over
 * the result with the indexed tensor re-strided to stride 0 along dim, so they follow memory
 * order and split across threads. Writes keep PyTorch's order: scatter walks the index with
 * dim innermost (threads split the other dims, which address disjoint elements); index_add/
 * copy/fill move one slice per index, in index order. */
#include <stdio.h>

#include "loops.h"
#include "shape.h"

mt_status mt__impl_expand(mt_tensor *t, int ndim, const int64_t *sizes, mt_tensor **out);
int mt__index_select_contig(const mt_tensor *t, int dim, const mt_tensor *index, mt_tensor *out); /* index_select_fast.c */

#define SZ(buf, nd, s) mt__fmt_sizes(buf, sizeof buf, nd, s)
/* these kernels move, add or multiply elements: complex is computed, only float8 has no kernel */
#define NO_FLOAT8_ONLY(dt, kernel)                                       \
    do {                                                                 \
        if (mt__is_float8(dt)) return mt__not_implemented(kernel, dt); \
    } while (0)

/* ---- helpers ------------------------------------------------------------------------- */

/* row-major walk over a shape for up to 3 operands (byte strides) */
typedef struct {
    int nd, nops;
    int64_t sz[MT_MAX_DIMS], st[3][MT_MAX_DIMS], idx[MT_MAX_DIMS], off[3];
} walker;

static void walk_init(walker *w, int nd, const int64_t *sz, int nops) {
    memset(w, 0, sizeof *w);
    w->nd = nd, w->nops = nops;
    memcpy(w->sz, sz, nd * sizeof(int64_t));
}
/* operand k is t seen broadcast to the walk's shape */
static void walk_op(walker *w, int k, const mt_tensor *t) {
    int lead = w->nd - t->ndim, isz = mt_dtype_itemsize(t->dtype);
    for (int d = 0; d < w->nd; d++)
        w->st[k][d] = d < lead || (t->sizes[d - lead] == 1 && w->sz[d] != 1) ? 0 : mt__wmul(t->strides[d - lead], isz);
}
static inline void walk_next(walker *w) {
    for (int d = w->nd - 1; d >= 0; d--) {
        for (int k = 0; k < w->nops; k++) w->off[k] += w->st[k][d];
        if (++w->idx[d] < w->sz[d]) return;
        for (int k = 0; k < w->nops; k++) w->off[k] -= w->st[k][d] * w->sz[d];
        w->idx[d] = 0;
    }
}

/* first index value of idx outside [lo, hi), row-major; 1 if one was found */
static int find_bad(const mt_tensor *idx, int64_t lo, int64_t hi, int64_t *bad) {
    if (!idx->storage->data) return 0;
    int64_t n = mt_tensor_numel(idx);
    walker w;
    walk_init(&w, idx->ndim, idx->sizes, 1);
    walk_op(&w, 0, idx);
    const char *p = mt__data(idx);
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        int64_t v = mt__load_index(idx, p + w.off[0]);
        if (v < lo || v >= hi) { *bad = v; return 1; }
    }
    return 0;
}

static int64_t nonempty_size(const mt_tensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }
static int64_t nonempty_stride(const mt_tensor *t, int d) { return t->ndim ? t->strides[d] : 1; }

/* a header for t seen with `sizes` (nd dims; a 0-dim t as 1-D), stride 0 along dim when zero_dim */
static mt_tensor seen_as(const mt_tensor *t, int nd, const int64_t *sizes, int dim, int zero_dim) {
    int64_t st[MT_MAX_DIMS];
    for (int d = 0; d < nd; d++) st[d] = d == dim && zero_dim ? 0 : nonempty_stride(t, d);
    return mt__restride(t, nd, sizes, st, t->offset);
}

/* contiguous result of t's dtype, a copy of t when copy_self */
static mt_status fresh_copy(mt_tensor *t, mt_tensor **out) {
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, t->dtype, t->device, out));
    if (t->storage->data) mt__strided_copy(*out, t);
    return MT_OK;
}

/* ---- gather-style reads ---------------------------------------------------------------- */

typedef struct {
    mt_kargs k; /* first member: the iterator hands this pointer back to the loop */
    int idt;
    int64_t dim_stride; /* bytes */
} read_ctx;

#define READ_LOOP(BYTES, T)                                                                  \
    static void read_loop_##BYTES(char **d, const int64_t *s, int64_t n, const mt_kargs *k) { \
        const read_ctx *c = (const read_ctx *)k;                                             \
        for (int64_t i = 0; i < n; i++) {                                                    \
            const char *ip = d[2] + i * s[2];                                                \
            int64_t v = c->idt == MT_I32 ? *(const int32_t *)ip : *(const int64_t *)ip;       \
            if (v < 0) v += c->k.ialpha; /* negative indices where the op allows them */       \
            memcpy(d[0] + i * s[0], d[1] + i * s[1] + v * c->dim_stride, sizeof(T));         \
        }                                                                                    \
    }
READ_LOOP(1, uint8_t)
READ_LOOP(2, uint16_t)
READ_LOOP(4, uint32_t)
READ_LOOP(8, uint64_t)
READ_LOOP(16, mt_bytes16)

/* out[p] = self[p with p[dim] = index[p]]: out, self and index headers over one shape */
static void run_read(mt_tensor *out, mt_tensor *self_h, mt_tensor *idx_h, int64_t dim_stride_bytes, int64_t wrap) {
    mt_tensor *ops[3] = {out, self_h, idx_h};
    mt_iter it;
    mt__iter_init(&it, 3, ops);
    read_ctx c = {.k = {.ialpha = wrap}, .idt = idx_h->dtype, .dim_stride = dim_stride_bytes};
    mt_loop_fn f = NULL;
    switch (mt_dtype_itemsize(out->dtype)) {
    case 1: f = read_loop_1; break;
    case 2: f = read_loop_2; break;
    case 4: f = read_loop_4; break;
    case 8: f = read_loop_8; break;
    default: f = read_loop_16; break;
    }
    mt__iter_run(&it, f, &c.k);
}

mt_status mt__impl_gather(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    NO_FLOAT8_ONLY(t->dtype, "scatter_gather_tensor_cpu");
    MT_TRY(mt__same_device(t, index));
    int64_t n = mt_tensor_numel(index);
    if (n && index->dtype != MT_I64 && index->dtype != MT_I32)
        return mt__error(MT_ERR_RUNTIME, "gather(): Expected dtype int32/int64 for index");
    int nd = t->ndim ? t->ndim : 1;
    if (n) {
        if (nd != (index->ndim ? index->ndim : 1))
            return mt__error(MT_ERR_RUNTIME, "Index tensor must have the same number of dimensions as input tensor");
        for (int d = 0; d < nd; d++)
            if (d != dim && nonempty_size(index, d) > nonempty_size(t, d)) {
                char a[256], b[256];
                return mt__error(MT_ERR_RUNTIME, "Size does not match at dimension %d expected index %s to be no larger "
                                 "than self %s apart from dimension %lld", d, SZ(a, index->ndim, index->sizes),
                                 SZ(b, t->ndim, t->sizes), (long long)dim);
            }
    }
    MT_TRY(mt__alloc(index->ndim, index->sizes, NULL, t->dtype, t->device, out));
    if (!n || !t->storage->data) return MT_OK;
    int64_t size = nonempty_size(t, (int)dim), bad;
    if (find_bad(index, 0, size, &bad)) {
        MT_DROP(*out);
        return mt__error(MT_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld", (long long)bad,
                         (long long)dim, (long long)size);
    }
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0; d < nd; d++) sizes[d] = nonempty_size(index, d);
    mt_tensor o = seen_as(*out, nd, sizes, -1, 0), s = seen_as(t, nd, sizes, (int)dim, 1),
              i = seen_as(index, nd, sizes, -1, 0);
    run_read(&o, &s, &i, mt__wmul(nonempty_stride(t, (int)dim), mt_dtype_itemsize(t->dtype)), 0);
    return MT_OK;
}

/* 1-D index checks shared by index_select/index_add/index_copy/index_fill */
static mt_status vector_index(const mt_tensor *index, const char *op) {
    if (index->ndim > 1) {
        if (!strcmp(op, "index_select")) return mt__error(MT_ERR_INDEX, "index_select(): Index is supposed to be a vector");
        if (!strcmp(op, "index_fill_")) return mt__error(MT_ERR_RUNTIME, "Index has to be a vector/scalar");
        if (!strcmp(op, "index_copy_"))
            return mt__error(MT_ERR_INDEX, "index_copy_(): Index should have dimension 1 or 0 (got %d)", index->ndim);
        char a[256];
        return mt__error(MT_ERR_INDEX, "%s(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s",
                         op, index->ndim, mt_dtype_names[index->dtype], SZ(a, index->ndim, index->sizes));
    }
    return MT_OK;
}

mt_status mt__impl_index_select(mt_tensor *t, int64_t dim, mt_tensor *index, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&dim, t->ndim));
    if (index->dtype != MT_I64 && index->dtype != MT_I32)
        return mt__error(MT_ERR_RUNTIME, "index_select(): Expected dtype int32 or int64 for index");
    MT_TRY(vector_index(index, "index_select"));
    MT_TRY(mt__same_device(t, index));
    int64_t n = mt_tensor_numel(index), size = nonempty_size(t, (int)dim), bad;
    if (n && size == 0) return mt__error(MT_ERR_RUNTIME, "index_select(): self indexing axis dim should be positive");
    if (t->ndim == 0 && n != 1)
        return mt__error(MT_ERR_RUNTIME, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                         (long long)n);
    if (find_bad(index, 0, size, &bad)) return mt__error(MT_ERR_INDEX, "index out of range in self");
    int64_t sizes[MT_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    if (t->ndim) sizes[dim] = n;
    MT_TRY(mt__alloc(t->ndim, sizes, NULL, t->dtype, t->device, out));
    if (!t->storage->data || mt_tensor_numel(*out) == 0) return MT_OK;
    if (t->ndim && mt_tensor_is_contiguous(t) && !mt__index_select_contig(t, (int)dim, index, *out)) return MT_OK;
    int nd = t->ndim ? t->ndim : 1;
    int64_t full[MT_MAX_DIMS], ist[MT_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) full[d] = t->ndim ? sizes[d] : 1;
    ist[dim] = index->ndim ? index->strides[0] : 0;
    mt_tensor o = seen_as(*out, nd, full, -1, 0), s = seen_as(t, nd, full, (int)dim, 1),
              i = mt__restride(index, nd, full, ist, index->offset);
    run_read(&o, &s, &i, mt__wmul(nonempty_stride(t, (int)dim), mt_dtype_itemsize(t->dtype)), 0);
    return MT_OK;
}

mt_status mt__impl_take(mt_tensor *t, mt_tensor *index, mt_tensor **out) {
    NO_FLOAT8_ONLY(t->dtype, "take_cpu");
    if (index->dtype != MT_I64)
        return mt__error(MT_ERR_RUNTIME, "take(): Expected a long tensor for index, but got %s",
                         mt_dtype_names[index->dtype]);
    MT_TRY(mt__same_device(t, index));
    int64_t numel = mt_tensor_numel(t), n = mt_tensor_numel(index), bad;
    if (n && numel == 0) return mt__error(MT_ERR_INDEX, "take(): tried to take from an empty tensor");
    if (find_bad(index, -numel, numel, &bad))
        return mt__error(MT_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.",
                         (long long)bad, (long long)numel);
    MT_TRY(mt__alloc(index->ndim, index->sizes, NULL, t->dtype, t->device, out));
    if (!n || !t->storage->data) return MT_OK;
    mt_tensor *c;
    mt_status st = mt_contiguous(t, &c);
    if (st) { MT_DROP(*out); return st; }
    int64_t zero[MT_MAX_DIMS] = {0};
    mt_tensor s = mt__restride(c, index->ndim, index->sizes, zero, c->offset);
    run_read(*out, &s, index, mt_dtype_itemsize(t->dtype), numel);
    mt_tensor_release(c);
    return MT_OK;
}

/* ---- element combiners for writes --------------------------------------------------------- */

enum { R_ASSIGN = 0, R_SUM = 1, R_PROD = 2, R_MEAN = 3, R_AMAX = 4, R_AMIN = 5 };

/* dst op= src for one element of dtype TAG (float16/bfloat16 computed in float, rounded) */
#define COMBINE(TAG, T, CT, LOAD, STORE, ...)                                                     \
    static void combine_##TAG(int r, char *dp, const char *sp) {                              \
        CT a = (CT)LOAD(*(T *)dp), b = (CT)LOAD(*(const T *)sp), v;                             \
        switch (r) {                                                                           \
        case R_SUM: case R_MEAN: v = IS_FLOAT_CT(CT) ? a + b : (CT)((uint64_t)a + (uint64_t)b); break; \
        case R_PROD: v = IS_FLOAT_CT(CT) ? a * b : (CT)((uint64_t)a * (uint64_t)b); break;     \
        case R_AMAX: v = b != b ? b : (a < b ? b : a); break;                                 \
        case R_AMIN: v = b != b ? b : (b < a ? b : a); break;                                 \
        default: v = b;                                                                        \
        }                                                                                      \
        *(T *)dp = STORE(v);                                                                   \
    }
ROWS_ALL(COMBINE, 0)
/* complex: sum, prod (c10's product) and assign; PyTorch has no amax/amin (refused before the walk) */
#define COMBINE_C(TAG, T, ...)                                                                    \
    static void combine_##TAG(int r, char *dp, const char *sp) {                              \
        T a = *(T *)dp, b = *(const T *)sp;                                                    \
        *(T *)dp = r == R_SUM || r == R_MEAN ? a + b : r == R_PROD ? CMUL(a, b) : b;           \
    }
ROWS_COMPLEX(COMBINE_C, 0)

typedef void (*combine_fn)(int r, char *dp, const char *sp);
static combine_fn combiner(int dt) {
    /* float8: NULL, the callers' "not implemented" */
    static const combine_fn f[MT_NUM_DTYPES] = {combine_bool, combine_u8, combine_i8, combine_i16, combine_i32,
                                                combine_i64, combine_f16, combine_bf16, combine_f32, combine_f64,
                                                [MT_C64] = combine_c64, [MT_C128] = combine_c128};
    return f[dt];
}

/* identity of a reduction written into an element of dtype dt */
static void identity_of(int r, int dt, char *dst) {
    double v = r == R_PROD ? 1 : 0;
    int64_t iv = r == R_PROD ? 1 : 0;
    if (r == R_AMAX || r == R_AMIN) {
        int mx = r == R_AMIN;
        if (mt__is_float(dt)) v = mx ? INFINITY : -INFINITY;
        else {
            static const int64_t lo[] = {0, 0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
            static const int64_t hi[] = {1, UINT8_MAX, INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
            iv = mx ? hi[dt] : lo[dt];
        }
    }
    static const int64_t z[2] = {0, 0};
    if (mt__is_float(dt)) mt__cast_loop(dt, MT_F64)((char *[]){dst, (char *)&v}, z, 1, NULL);
    else mt__cast_loop(dt, MT_I64)((char *[]){dst, (char *)&iv}, z, 1, NULL);
}

/* ---- scatter ---------------------------------------------------------------------------- */

typedef struct {
    mt_kargs k; /* first member */
    int idt, r, isz, pass; /* pass 0: write identities (include_self=False); 1: combine */
    int64_t n, self_ds, idx_ds, src_ds; /* along dim: length and byte strides */
    combine_fn f;
    int64_t *count; /* mean: per element of a contiguous self */
    const char *self_base;
} scat_ctx;

/* d[0]: self at this position (dim index 0), d[1]: index, d[2]: src */
static void scatter_loop(char **d, const int64_t *s, int64_t n, const mt_kargs *k) {
    const scat_ctx *c = (const scat_ctx *)k;
    for (int64_t i = 0; i < n; i++) {
        char *sp = d[0] + i * s[0], *ip = d[1] + i * s[1], *vp = d[2] + i * s[2];
        for (int64_t j = 0; j < c->n; j++) {
            const char *q = ip + j * c->idx_ds;
            int64_t v = c->idt == MT_I32 ? *(const int32_t *)q : *(const int64_t *)q;
            char *dst = sp + v * c->self_ds;
            if (c->pass == 0) { identity_of(c->r, c->k.ialpha, dst); continue; }
            if (c->r == R_ASSIGN) memcpy(dst, vp + j * c->src_ds, (size_t)c->isz);
            else c->f(c->r, dst, vp + j * c->src_ds);
            if (c->count) c->count[(dst - c->self_base) / c->isz]++;
        }
    }
}

static const char *const scatter_names[3] = {"scatter", "scatter_add", "scatter_reduce"};

/* kind 0 scatter (reduce ASSIGN or legacy SUM/PROD), 1 scatter_add, 2 scatter_reduce.
 * src is a 0-dim tensor holding the value when is_value. */
mt_status mt__impl_scatter(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *src, int is_value,
                           int reduce, int include_self, int inplace, mt_tensor **out) {
    MT_TRY(mt__wrap_dim(&dim, self->ndim));
    int64_t n = mt_tensor_numel(index);
    (void)scatter_names;
    if (mt__is_float8(self->dtype) || (mt__is_complex(self->dtype) && (reduce == R_AMAX || reduce == R_AMIN))) {
        static const char *const kname[] = {"scatter_gather_tensor_cpu", "scatter_gather_tensor_cpu_reduce_sum",
                                            "scatter_gather_tensor_cpu_reduce_prod", "scatter_gather_tensor_cpu_reduce_mean",
                                            "scatter_gather_tensor_cpu_reduce_amax", "scatter_gather_tensor_cpu_reduce_amin"};
        return mt__not_implemented((unsigned)reduce < 6 ? kname[reduce] : kname[0], self->dtype);
    }
    if (n && index->dtype != MT_I64 && index->dtype != MT_I32)
        return mt__error(MT_ERR_RUNTIME, "scatter(): Expected dtype int32/int64 for index");
    if (!is_value && src->dtype != self->dtype)
        return mt__error(MT_ERR_RUNTIME, "scatter(): Expected self.dtype to be equal to src.dtype");
    if (is_value && src->ndim != 0) /* the ABI's value is a 0-dim tensor (Python passes a Scalar) */
        return mt__error(MT_ERR_RUNTIME, "scatter(): the value must be a 0-dim tensor, got %d dims", src->ndim);
    int nd = self->ndim ? self->ndim : 1;
    if (n) {
        if (nd != (index->ndim ? index->ndim : 1))
            return mt__error(MT_ERR_RUNTIME, "Index tensor must have the same number of dimensions as self tensor");
        int wrong = 0;
        for (int d = 0; d < nd && !wrong; d++)
            wrong = d != dim && nonempty_size(index, d) > nonempty_size(self, d);
        for (int d = 0; d < nd && !wrong && !is_value; d++) {
            if (d >= (src->ndim ? src->ndim : 1)) {
                int64_t dd = d;
                return mt__wrap_dim(&dd, src->ndim);
            }
            wrong = nonempty_size(index, d) > nonempty_size(src, d);
        }
        char a[256], b[256], e[256];
        if (wrong && !is_value)
            return mt__error(MT_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %lld "
                             "and to be no larger size than src %s", SZ(a, index->ndim, index->sizes),
                             SZ(b, self->ndim, self->sizes), (long long)dim, SZ(e, src->ndim, src->sizes));
        if (wrong)
            return mt__error(MT_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %lld",
                             SZ(a, index->ndim, index->sizes), SZ(b, self->ndim, self->sizes), (long long)dim);
    }
    MT_TRY(mt__same_device(self, index));
    if (!is_value) MT_TRY(mt__same_device(self, src));
    if (reduce == R_MEAN && self->dtype == MT_BOOL)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
    int64_t size = nonempty_size(self, (int)dim), bad;
    if (n && self->storage->data && find_bad(index, 0, size, &bad))
        return mt__error(MT_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld", (long long)bad,
                         (long long)dim, (long long)size);
    if (inplace) {
        MT_TRY(mt__assert_no_overlap(self, index));
        if (!is_value) MT_TRY(mt__assert_no_overlap(self, src));
    }
    /* the tensor written: self (in place), or a contiguous copy; mean needs a contiguous one to count */
    mt_tensor *work;
    if (inplace && (reduce != R_MEAN || mt_tensor_is_contiguous(self))) {
        mt_tensor_retain(self);
        work = self;
    } else {
        MT_TRY(fresh_copy(self, &work));
    }
    mt_tensor *val = NULL;
    mt_status st = MT_OK;
    if (is_value && self->storage->data) { /* the value in self's dtype */
        st = mt__alloc(0, NULL, NULL, self->dtype, MT_CPU, &val);
        if (!st) mt__strided_copy(val, src);
    }
    int64_t *count = NULL;
    if (!st && n && self->storage->data) {
        int64_t isz = mt_dtype_itemsize(self->dtype), sizes[MT_MAX_DIMS];
        for (int d = 0; d < nd; d++) sizes[d] = d == dim ? 1 : nonempty_size(index, d);
        mt_tensor sh = seen_as(work, nd, sizes, -1, 0), ih = seen_as(index, nd, sizes, -1, 0);
        mt_tensor vh = is_value ? mt__restride(val, nd, sizes, (int64_t[MT_MAX_DIMS]){0}, val->offset)
                                : seen_as(src, nd, sizes, -1, 0);
        scat_ctx c = {.idt = index->dtype, .r = reduce, .isz = (int)isz, .n = nonempty_size(index, (int)dim),
                      .self_ds = mt__wmul(nonempty_stride(work, (int)dim), isz),
                      .idx_ds = mt__wmul(nonempty_stride(index, (int)dim), mt_dtype_itemsize(index->dtype)),
                      .src_ds = is_value ? 0 : mt__wmul(nonempty_stride(src, (int)dim), isz), .f = combiner(self->dtype),
                      .self_base = mt__data(work)};
        c.k.ialpha = self->dtype;
        if (reduce == R_MEAN) {
            int64_t m = mt_tensor_numel(work);
            count = malloc((size_t)(m ? m : 1) * sizeof *count);
            if (!count) st = mt__error(MT_ERR_OOM, "out of memory in scatter_reduce");
            else for (int64_t i = 0; i < m; i++) count[i] = include_self ? 1 : 0;
        }
        mt_tensor *ops[3] = {&sh, &ih, &vh};
        mt_iter it;
        mt__iter_init(&it, 3, ops);
        if (!st && !include_self && reduce != R_ASSIGN) {
            c.pass = 0;
            mt__iter_run(&it, scatter_loop, &c.k);
        }
        c.pass = 1;
        c.count = count;
        if (!st) mt__iter_run(&it, scatter_loop, &c.k);
        if (!st && count) { /* mean: divide by the count (floor division for integers) */
            int64_t m = mt_tensor_numel(work);
            char *p = mt__data(work);
            static const int64_t z[2] = {0, 0};
            for (int64_t i = 0; i < m; i++) {
                int64_t cn = count[i] ? count[i] : 1;
                if (cn == 1) continue;
                if (mt__is_complex(self->dtype)) { /* both parts by the count, in the dtype's precision */
                    if (self->dtype == MT_C64) *(float _Complex *)(p + i * isz) /= (float)cn;
                    else *(double _Complex *)(p + i * isz) /= (double)cn;
                } else if (mt__is_float(self->dtype)) {
                    double v;
                    mt__cast_loop(MT_F64, self->dtype)((char *[]){(char *)&v, p + i * isz}, z, 1, NULL);
                    if (self->dtype == MT_F32 || self->dtype == MT_F16 || self->dtype == MT_BF16) v = (float)v / (float)cn;
                    else v = v / (double)cn;
                    mt__cast_loop(self->dtype, MT_F64)((char *[]){p + i * isz, (char *)&v}, z, 1, NULL);
                } else {
                    int64_t v;
                    mt__cast_loop(MT_I64, self->dtype)((char *[]){(char *)&v, p + i * isz}, z, 1, NULL);
                    int64_t q = v / cn;
                    if ((v % cn != 0) && ((v < 0) != (cn < 0))) q--;
                    mt__cast_loop(self->dtype, MT_I64)((char *[]){p + i * isz, (char *)&q}, z, 1, NULL);
                }
            }
        }
        free(count);
    }
    mt_tensor_release(val);
    if (!st && inplace && work != self) { /* a mean into a strided self: copy back */
        mt__strided_copy(self, work);
        mt_tensor_release(work);
        mt_tensor_retain(self);
        work = self;
    }
    if (st) { mt_tensor_release(work); return st; }
    if (inplace) mt_tensor_bump_version(self);
    *out = work;
    return MT_OK;
}

/* ---- index_add / index_copy / index_fill: one slice per index, in index order ------------- */

enum { IX_ADD = 0, IX_COPY = 1, IX_FILL = 2 };

mt_status mt__impl_index_op(int kind, mt_tensor *self, int64_t dim, mt_tensor *index, mt_tensor *source, double alpha,
                            int inplace, mt_tensor **out) {
    static const char *const names[3] = {"index_add_", "index_copy_", "index_fill_"};
    static const char *const knames[3] = {"index_add_", "index_copy_cpu", "index_fill_cpu"};
    if ((unsigned)kind < 3) NO_FLOAT8_ONLY(self->dtype, knames[kind]);
    const char *name = names[kind];
    MT_TRY(mt__wrap_dim(&dim, self->ndim));
    /* a meta operand has no data to read; index_fill's value is exempt when it is a Python scalar (as PyTorch's) */
    if ((kind != IX_FILL || !source->wrapped) && (index->device != self->device || source->device != self->device)) {
        /* PyTorch names index_fill's check index_copy */
        return mt__error(MT_ERR_RUNTIME, "%s(): self, index and source expected to be in the same device, but got "
                         "(self) %s, (index) %s, and (source) %s", kind ? "index_copy" : "index_add",
                         mt__device_name(self->device), mt__device_name(index->device),
                         mt__device_name(source->device));
    }
    int64_t n = mt_tensor_numel(index), size = nonempty_size(self, (int)dim), bad;
    char a[256], b[256];
    if (kind == IX_ADD) {
        MT_TRY(vector_index(index, name));
        if (index->dtype != MT_I64 && index->dtype != MT_I32)
            return mt__error(MT_ERR_RUNTIME, "index_add_(): Expected dtype int32/int64 for index but got: %s",
                             mt_dtype_names[index->dtype]);
        if (self->dtype != source->dtype)
            return mt__error(MT_ERR_RUNTIME, "index_add_(): self (%s) and source (%s) must have the same scalar type",
                             mt_dtype_names[self->dtype], mt_dtype_names[source->dtype]);
        if (dim != 0 && dim >= source->ndim)
            return mt__error(MT_ERR_RUNTIME, "index_add_(): Indexing dim %lld is out of bounds of the source tensor with "
                             "dim %d", (long long)dim, source->ndim);
        if (n != nonempty_size(source, (int)dim))
            return mt__error(MT_ERR_RUNTIME, "index_add_(): Number of indices (%lld) should be equal to "
                             "source.size(dim): (%lld), for dim: %lld", (long long)n,
                             (long long)nonempty_size(source, (int)dim), (long long)dim);
        int ok = self->ndim == source->ndim; /* the shapes without dim (when neither is 0-dim) must match */
        for (int d = 0; ok && d < self->ndim; d++) ok = d == dim || self->sizes[d] == source->sizes[d];
        if (ok && (!self->ndim || !source->ndim)) ok = !memcmp(self->sizes, source->sizes, self->ndim * sizeof(int64_t));
        if (!ok)
            return mt__error(MT_ERR_RUNTIME, "source tensor shape must match self tensor shape, excluding the "
                             "specified dimension. Got self.shape = %s source.shape = %s",
                             SZ(a, self->ndim, self->sizes), SZ(b, source->ndim, source->sizes));
        if (self->storage->data && find_bad(index, 0, size, &bad))
            return mt__error(MT_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld",
                             (long long)bad, (long long)dim, (long long)size);
    } else if (kind == IX_COPY) {
        MT_TRY(vector_index(index, name));
        if (source->ndim == 0 && n != 1)
            return mt__error(MT_ERR_INDEX, "index_copy_(): When source is scalar, index should have one element (got "
                             "%lld)", (long long)n);
        if (source->ndim != self->ndim && source->ndim && self->ndim)
            return mt__error(MT_ERR_INDEX, "index_copy_(): When source and destination are not scalars, their "
                             "dimensionality must match. Source dimensionality (%d), destination dimensionality (%d)",
                             source->ndim, self->ndim);
        if (index->dtype != MT_I64)
            return mt__error(MT_ERR_RUNTIME, "index_copy_(): Expected a long tensor for index, but got %s",
                             mt_dtype_names[index->dtype]);
        if (self->dtype != source->dtype)
            return mt__error(MT_ERR_RUNTIME, "index_copy_(): self and source expected to have the same dtype, but got "
                             "(self) %s and (source) %s", mt_dtype_names[self->dtype], mt_dtype_names[source->dtype]);
        /* slice shapes: the sizes without dim, printed space-separated as PyTorch's vector printer */
        char sa[256] = "", sb[256] = "";
        size_t la = 0, lb = 0;
        int same = (self->ndim ? self->ndim - 1 : 0) == (source->ndim ? source->ndim - 1 : 0);
        for (int d = 0; d < self->ndim; d++)
            if (d != dim) la += snprintf(sa + la, sizeof sa - la, "%s%lld", la ? " " : "", (long long)self->sizes[d]);
        for (int d = 0; d < source->ndim; d++)
            if (d != dim) lb += snprintf(sb + lb, sizeof sb - lb, "%s%lld", lb ? " " : "", (long long)source->sizes[d]);
        if (!same || strcmp(sa, sb))
            return mt__error(MT_ERR_RUNTIME, "index_copy_(): Source/destination tensor must have same slice shapes. "
                             "Destination slice shape: %s at dimension %lld and source slice shape: %s at dimension 0.",
                             sa, (long long)dim, sb);
        if (source->ndim && n != source->sizes[dim])
            return mt__error(MT_ERR_INDEX, "index_copy_(): Number of indices (%lld) should be equal to source.size(dim) "
                             "(%lld)", (long long)n, (long long)source->sizes[dim]);
        if (self->storage->data && find_bad(index, 0, size, &bad))
            return mt__error(MT_ERR_INDEX, "index_copy_(): index %lld is out of bounds for dimension %lld with size %lld",
                             (long long)bad, (long long)dim, (long long)size);
    } else {
        if (index->dtype != MT_I64) return mt__error(MT_ERR_INDEX, "index_fill_(): Expected dtype int64 for index.");
        if (source->ndim != 0)
            return mt__error(MT_ERR_RUNTIME, "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                             "with %d dimension(s).", source->ndim);
        MT_TRY(vector_index(index, name));
        if (self->storage->data && find_bad(index, -size, size, &bad))
            return mt__error(MT_ERR_INDEX, "index %lld is out of bounds for dimension %lld with size %lld",
                             (long long)bad, (long long)dim, (long long)size);
    }
    MT_TRY(mt__same_device(self, index));
    if (inplace) {
        MT_TRY(mt__assert_no_overlap(self, index));
        if (kind != IX_FILL) MT_TRY(mt__assert_no_overlap(self, source));
    }
    mt_tensor *work;
    if (inplace) {
        mt_tensor_retain(self);
        work = self;
    } else {
        MT_TRY(fresh_copy(self, &work));
    }
    *out = work;
    if (!self->storage->data || n == 0) return MT_OK;
    /* slice headers: self/source without dim (a fill value broadcasts) */
    int nd = 0, bcast = kind == IX_FILL || source->ndim != self->ndim;
    int64_t ssz[MT_MAX_DIMS], sst[MT_MAX_DIMS], rst[MT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++)
        if (d != dim) ssz[nd] = self->sizes[d], sst[nd] = work->strides[d], rst[nd++] = bcast ? 0 : source->strides[d];
    int isz = mt_dtype_itemsize(self->dtype);
    int64_t wds = mt__wmul(nonempty_stride(work, (int)dim), isz),
            sds = kind == IX_FILL ? 0 : mt__wmul(nonempty_stride(source, (int)dim), mt_dtype_itemsize(source->dtype));
    mt_tensor ws = mt__restride(work, nd, ssz, sst, work->offset);
    mt_tensor ss = mt__restride(source, nd, ssz, rst, source->offset);
    mt_tensor *ops[3] = {&ws, &ws, &ss};
    mt_iter it;
    mt_kargs k = {.alpha = alpha, .ialpha = mt__f2i(alpha)};
    mt_loop_fn f;
    if (kind == IX_ADD) {
        mt__iter_init(&it, 3, ops);
        f = mt_ops[MT_OP_ADD].loops[self->dtype];
    } else {
        ops[1] = &ss;
        mt__iter_init(&it, 2, ops);
        f = mt__cast_loop(self->dtype, source->dtype);
    }
    char *w0 = it.data[0], *s0 = it.data[kind == IX_ADD ? 2 : 1];
    const char *ip = mt__data(index);
    int64_t is = index->ndim ? mt__wmul(index->strides[0], mt_dtype_itemsize(index->dtype)) : 0;
    if (mt__numel(nd, ssz) == 1) { /* one-element slices (a 1-D self: histograms, bincount-like sums): the
                                    * loop called on each element, without an iterator per index (30 ns each) */
        static const int64_t zero[3] = {0, 0, 0};
        for (int64_t j = 0; j < n; j++) {
            int64_t v = mt__load_index(index, ip + j * is);
            if (v < 0) v += size;
            char *w = w0 + v * wds, *d[3] = {w, kind == IX_ADD ? w : s0 + j * sds, s0 + j * sds};
            f(d, zero, 1, &k);
        }
        mt_tensor_bump_version(work);
        return MT_OK;
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t v = mt__load_index(index, ip + j * is);
        if (v < 0) v += size;
        mt_iter cur = it;
        cur.data[0] = w0 + v * wds;
        if (kind == IX_ADD) cur.data[1] = cur.data[0], cur.data[2] = s0 + j * sds;
        else cur.data[1] = s0 + j * sds;
        mt__iter_run(&cur, f, &k);
    }
    mt_tensor_bump_version(work);
    return MT_OK;
}

/* ---- masks --------------------------------------------------------------------------------- */

mt_status mt__impl_masked_select(mt_tensor *t, mt_tensor *mask, mt_tensor **out) {
    if (mask->dtype != MT_BOOL) return mt__error(MT_ERR_RUNTIME, "masked_select: expected BoolTensor for mask");
    MT_TRY(mt__same_device(t, mask));
    mt_tensor *pair[2] = {mask, t};
    int nd;
    int64_t sizes[MT_MAX_DIMS];
    MT_TRY(mt__broadcast_shapes(2, pair, &nd, sizes));
    if (!t->storage->data)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "masked_select on meta tensors: the result shape depends on the mask's "
                         "values");
    int64_t total = mt__numel(nd, sizes), count = 0;
    walker w;
    walk_init(&w, nd, sizes, 2);
    walk_op(&w, 0, mask);
    walk_op(&w, 1, t);
    const char *m = mt__data(mask), *s = mt__data(t);
    for (int64_t i = 0; i < total; i++, walk_next(&w)) count += m[w.off[0]] != 0;
    MT_TRY(mt__alloc(1, &count, NULL, t->dtype, t->device, out));
    int isz = mt_dtype_itemsize(t->dtype);
    char *o = mt__data(*out);
    walk_init(&w, nd, sizes, 2);
    walk_op(&w, 0, mask);
    walk_op(&w, 1, t);
    for (int64_t i = 0; i < total; i++, walk_next(&w))
        if (m[w.off[0]]) memcpy(o, s + w.off[1], (size_t)isz), o += isz;
    return MT_OK;
}

/* self's masked positions take source's elements in order (self already broadcast for out of place) */
mt_status mt__impl_masked_scatter(mt_tensor *t, mt_tensor *mask, mt_tensor *source, int inplace, mt_tensor **out) {
    NO_FLOAT8_ONLY(t->dtype, "masked_scatter");
    if (mask->dtype != MT_BOOL)
        return mt__error(MT_ERR_RUNTIME, "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                         mt_dtype_names[mask->dtype]);
    if (t->dtype != source->dtype)
        return mt__error(MT_ERR_RUNTIME, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                         mt_dtype_names[t->dtype], mt_dtype_names[source->dtype]);
    MT_TRY(mt__same_device(t, mask));
    MT_TRY(mt__same_device(t, source));
    mt_tensor *pair[2] = {mask, t};
    int nd;
    int64_t sizes[MT_MAX_DIMS];
    MT_TRY(mt__broadcast_shapes(2, pair, &nd, sizes));
    mt_tensor *work;
    if (inplace) { /* the mask expands to self (PyTorch's expand_inplace and its error) */
        mt_tensor *e;
        MT_TRY(mt__impl_expand(mask, t->ndim, t->sizes, &e));
        mt_tensor_release(e);
        mt_tensor_retain(t);
        work = t;
    } else {
        MT_TRY(mt__alloc(nd, sizes, NULL, t->dtype, t->device, &work));
        if (t->storage->data) mt__strided_copy(work, t);
    }
    if (!t->storage->data) { *out = work; return MT_OK; }
    int64_t total = mt__numel(nd, sizes), need = 0, have = mt_tensor_numel(source);
    walker w;
    walk_init(&w, nd, sizes, 2);
    walk_op(&w, 0, mask);
    walk_op(&w, 1, work);
    const char *m = mt__data(mask);
    for (int64_t i = 0; i < total; i++, walk_next(&w)) need += m[w.off[0]] != 0;
    if (need > have) {
        mt_tensor_release(work);
        return mt__error(MT_ERR_RUNTIME, "Number of elements of source < number of ones in mask");
    }
    mt_tensor *src;
    mt_status st = mt_contiguous(source, &src);
    if (st) { mt_tensor_release(work); return st; }
    int isz = mt_dtype_itemsize(t->dtype);
    const char *sp = mt__data(src);
    char *o = mt__data(work);
    walk_init(&w, nd, sizes, 2);
    walk_op(&w, 0, mask);
    walk_op(&w, 1, work);
    for (int64_t i = 0; i < total; i++, walk_next(&w))
        if (m[w.off[0]]) memcpy(o + w.off[1], sp, (size_t)isz), sp += isz;
    mt_tensor_release(src);
    mt_tensor_bump_version(work);
    *out = work;
    return MT_OK;
}

/* put_(index, source, accumulate) on a contiguous t (take's backward) */
mt_status mt__impl_put_(mt_tensor *t, mt_tensor *index, mt_tensor *source, int accumulate) {
    NO_FLOAT8_ONLY(t->dtype, "put_");
    int64_t numel = mt_tensor_numel(t), n = mt_tensor_numel(index), bad;
    if (index->dtype != MT_I64)
        return mt__error(MT_ERR_RUNTIME, "put_(): Expected a long tensor for index, but got %s",
                         mt_dtype_names[index->dtype]);
    if (t->dtype != source->dtype)
        return mt__error(MT_ERR_RUNTIME, "put_(): self and source expected to have the same dtype, but got self.dtype = "
                         "%s and source.dtype = %s", mt_dtype_names[t->dtype], mt_dtype_names[source->dtype]);
    if (n != mt_tensor_numel(source))
        return mt__error(MT_ERR_RUNTIME, "put_(): Expected source and index to have the same number of elements, but got "
                         "source.numel() = %lld, index.numel() = %lld", (long long)mt_tensor_numel(source), (long long)n);
    if (!mt_tensor_is_contiguous(t)) return mt__error(MT_ERR_NOT_IMPLEMENTED, "put_ into a non-contiguous tensor");
    if (find_bad(index, -numel, numel, &bad))
        return mt__error(MT_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.",
                         (long long)bad, (long long)numel);
    if (!t->storage->data) return MT_OK;
    walker w;
    walk_init(&w, index->ndim, index->sizes, 2);
    walk_op(&w, 0, index);
    walk_op(&w, 1, source);
    const char *ip = mt__data(index), *sp = mt__data(source);
    char *o = mt__data(t);
    int isz = mt_dtype_itemsize(t->dtype);
    combine_fn f = combiner(t->dtype);
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        int64_t v = *(const int64_t *)(ip + w.off[0]);
        if (v < 0) v += numel;
        if (accumulate) f(R_SUM, o + v * isz, sp + w.off[1]);
        else memcpy(o + v * isz, sp + w.off[1], (size_t)isz);
    }
    mt_tensor_bump_version(t);
    return MT_OK;
}

/* nz[i] = (element i != 0) over n contiguous elements of dtype (not complex); returns their count.
 * float16/bfloat16: any bit but the sign; integers: any bit */
#define NZ_FLAGS(T, TEST)                                                   \
    {                                                                       \
        const T *v = (const T *)p;                                          \
        for (int64_t i = 0; i < n; i++) count += nz[i] = (uint8_t)(TEST);   \
        return count;                                                       \
    }
static int64_t nonzero_flags(const char *p, int dtype, int64_t n, uint8_t *nz) {
    int64_t count = 0;
    switch (dtype) {
    case MT_F32: NZ_FLAGS(float, v[i] != 0)
    case MT_F64: NZ_FLAGS(double, v[i] != 0)
    case MT_F16: case MT_BF16: NZ_FLAGS(uint16_t, (v[i] & 0x7FFF) != 0)
    case MT_I16: NZ_FLAGS(uint16_t, v[i] != 0)
    case MT_I32: NZ_FLAGS(uint32_t, v[i] != 0)
    case MT_I64: NZ_FLAGS(uint64_t, v[i] != 0)
    default: NZ_FLAGS(uint8_t, v[i] != 0)
    }
}

/* nonzero: int64 [count, ndim] laid out column-major as PyTorch's */
mt_status mt__impl_nonzero(mt_tensor *t, mt_tensor **out) {
    NO_FLOAT8_ONLY(t->dtype, "nonzero_count_cpu");
    if (!t->storage->data)
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "nonzero on meta tensors: the result shape depends on the values");
    int64_t total = mt_tensor_numel(t), count = 0, isz = mt_dtype_itemsize(t->dtype);
    int cplx = t->dtype == MT_C64 || t->dtype == MT_C128;
    mt_tensor *tc = NULL; /* a strided real input: copied in order, then one typed pass (the walk: 4 ns each) */
    if (!cplx && !mt_tensor_is_contiguous(t)) MT_TRY(mt_contiguous(t, &tc));
    const mt_tensor *src = tc ? tc : t;
    walker w;
    walk_init(&w, t->ndim, t->sizes, 1);
    walk_op(&w, 0, src);
    const char *p = mt__data(src);
    uint8_t *nz = malloc((size_t)(total ? total : 1));
    if (!nz) { mt_tensor_release(tc); return mt__error(MT_ERR_OOM, "out of memory in nonzero"); }
    if (!cplx) count = nonzero_flags(p, t->dtype, total, nz);
    else for (int64_t i = 0; i < total; i++, walk_next(&w)) {
        const char *q = p + w.off[0];
        int v = 0;
        for (int b = 0; b < isz; b++) v |= q[b] != 0;
        if (t->dtype == MT_F16 || t->dtype == MT_BF16) v = (*(const uint16_t *)q & 0x7FFF) != 0;
        if (t->dtype == MT_F32) v = *(const float *)q != 0;
        if (t->dtype == MT_F64) v = *(const double *)q != 0;
        if (t->dtype == MT_C64) v = ((const float *)q)[0] != 0 || ((const float *)q)[1] != 0; /* -0.0 is zero */
        if (t->dtype == MT_C128) v = ((const double *)q)[0] != 0 || ((const double *)q)[1] != 0;
        nz[i] = (uint8_t)v;
        count += v;
    }
    mt_tensor_release(tc);
    int nd = t->ndim;
    int64_t sizes[2] = {count, nd}, strides[2] = {1, count};
    mt_status st = mt__alloc(2, sizes, strides, MT_I64, t->device, out);
    if (st) { free(nz); return st; }
    /* row by row along the last dim: the outer coordinates move once per row. Every element up to the
     * last nonzero one writes its coordinates at pos, which only its own flag advances: no branch on a
     * flag (a random mask mispredicted half of them), and pos < count there */
    int64_t *o = (int64_t *)mt__data(*out), pos = 0, idx[MT_MAX_DIMS] = {0}, end = total;
    while (end > 0 && !nz[end - 1]) end--;
    int64_t inner = nd ? t->sizes[nd - 1] : 1;
    for (int64_t i = 0; i < end; i += inner) {
        int64_t cols = mt__min64(inner, end - i);
        if (nd <= 1)
            for (int64_t c = 0; c < cols; c++) {
                if (nd) o[pos] = c;
                pos += nz[i + c];
            }
        else
            for (int64_t c = 0; c < cols; c++) {
                for (int d = 0; d < nd - 1; d++) o[d * count + pos] = idx[d];
                o[(nd - 1) * count + pos] = c;
                pos += nz[i + c];
            }
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < t->sizes[d]) break;
            idx[d] = 0;
        }
    }
    free(nz);
    return MT_OK;
}
