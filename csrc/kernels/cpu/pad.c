/* pad.c — F.pad: constant (any number of dims, negative pads crop), reflect,
 * replicate and circular (last 1-3 dims). Each padded dim gets a table mapping
 * output index -> input index (-1: the constant); the copy then moves whole
 * elements of any dtype. The backward sums the output gradient back through the
 * same tables (float16/bfloat16 accumulate in float32). */
#include <stdio.h>

#include "spatial.h"

mt_status mt__impl_copy_(mt_tensor *dst, mt_tensor *src);

static int64_t map_index(int mode, int64_t i, int64_t n) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case MT_PAD_REFLECT: return i < 0 ? -i : 2 * (n - 1) - i;
    case MT_PAD_REPLICATE: return i < 0 ? 0 : n - 1;
    case MT_PAD_CIRCULAR: return ((i % n) + n) % n;
    }
    return -1;
}

typedef struct {
    int k;                      /* padded (trailing) dims, 1..ndim */
    int64_t outer, in[MT_MAX_DIMS], out[MT_MAX_DIMS];
    int64_t *map[MT_MAX_DIMS];  /* per padded dim: out index -> in index or -1 */
    int64_t lo, hi;             /* last dim: outputs [lo, hi) read inputs [lo - shift, hi - shift) in order */
    int64_t shift;
} pad_plan;

static void plan_free(pad_plan *p) {
    for (int d = 0; d < p->k; d++) free(p->map[d]);
}

/* sizes are summed left to right below: none of the sums for padded dim j may overflow */
static mt_status padded_fits(const mt_tensor *x, const int64_t *pad, int j) {
    int64_t n, d = x->ndim - 1 - j;
    if (__builtin_add_overflow(x->sizes[d], pad[2 * j], &n) || __builtin_add_overflow(n, pad[2 * j + 1], &n))
        return mt__error(MT_ERR_RUNTIME, "pad(): the padded size of dimension %lld overflows int64", (long long)d);
    return MT_OK;
}

static mt_status pad_check(mt_tensor *x, int npad, const int64_t *pad, int mode) {
    char b[256];
    if (npad % 2) return mt__error(MT_ERR_RUNTIME, "Padding length must be divisible by 2");
    if (npad > 2 * x->ndim)
        return mt__error(MT_ERR_RUNTIME, "Padding length should be less than or equal to two times the input dimension "
                         "but got padding length %d and input of dimension %d", npad, x->ndim);
    if ((unsigned)mode >= MT_NUM_PAD) return mt__error(MT_ERR_NOT_IMPLEMENTED, "Unrecognised padding mode %d", mode);
    int k = npad / 2;
    if (mode == MT_PAD_CONSTANT) {
        for (int j = 0; j < k; j++) {
            int d = x->ndim - 1 - j;
            MT_TRY(padded_fits(x, pad, j));
            if (x->sizes[d] + pad[2 * j] + pad[2 * j + 1] < 0)
                return mt__error(MT_ERR_RUNTIME, "narrow(): length must be non-negative.");
        }
        return MT_OK;
    }
    if (!((k == 1 && (x->ndim == 2 || x->ndim == 3)) || (k == 2 && (x->ndim == 3 || x->ndim == 4)) ||
          (k == 3 && (x->ndim == 4 || x->ndim == 5))))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "Padding size %d is not supported for %dD input tensor.\nSupported "
                         "combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last "
                         "dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: "
                         "padding size = 6 (pads last 3 dimensions)", npad, x->ndim);
    if (mode != MT_PAD_CIRCULAR) {
        int batched = x->ndim == k + 2;
        for (int d = batched; d < x->ndim; d++)
            if (x->sizes[d] == 0)
                return mt__error(MT_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and "
                                 "other non-zero dimensions for input, but got: %s", k + 1, k + 2, MT_SZ(b, x));
    }
    for (int j = 0; j < k; j++) {
        int d = x->ndim - 1 - j;
        int64_t n = x->sizes[d], l = pad[2 * j], r = pad[2 * j + 1];
        if (mode == MT_PAD_REFLECT && (l >= n || r >= n))
            return mt__error(MT_ERR_RUNTIME, "Argument #%d: Padding size should be less than the corresponding input "
                             "dimension, but got: padding (%lld, %lld) at dimension %d of input %s", 4 + 2 * j,
                             (long long)l, (long long)r, d, MT_SZ(b, x));
        if (mode == MT_PAD_CIRCULAR && (l > n || r > n))
            return mt__error(MT_ERR_RUNTIME, "Padding value causes wrapping around more than once.");
        MT_TRY(padded_fits(x, pad, j)); /* after PyTorch's own checks, which bound the padding of some modes */
        if (n + l + r < 0 || (mode != MT_PAD_CONSTANT && n + l + r < 1))
            return mt__error(MT_ERR_RUNTIME, "input size %lld at dimension %d padded by (%lld, %lld) gives a "
                             "non-positive output size", (long long)n, d, (long long)l, (long long)r);
    }
    return MT_OK;
}

static mt_status make_plan(mt_tensor *x, int npad, const int64_t *pad, int mode, pad_plan *p) {
    memset(p, 0, sizeof *p);
    p->k = npad / 2;
    p->outer = mt__numel(x->ndim - p->k, x->sizes);
    for (int j = 0; j < p->k; j++) { /* dim k-1-j of the plan is the tensor's dim ndim-1-j */
        int pd = p->k - 1 - j, d = x->ndim - 1 - j;
        p->in[pd] = x->sizes[d];
        p->out[pd] = x->sizes[d] + pad[2 * j] + pad[2 * j + 1];
        p->map[pd] = malloc((size_t)(p->out[pd] + 1) * sizeof(int64_t));
        if (!p->map[pd]) { plan_free(p); return mt__error(MT_ERR_OOM, "out of memory in pad"); }
        int64_t l = pad[2 * j], r = pad[2 * j + 1];
        if (mode == MT_PAD_CIRCULAR) { /* PyTorch crops the negative pads first, then wraps within what is left */
            int64_t c0 = l < 0 ? -l : 0, n = p->in[pd] - c0 - (r < 0 ? -r : 0), l0 = l > 0 ? l : 0;
            /* nothing left (e.g. size 2 padded by (-2, 1)): PyTorch copies uninitialised memory into
             * itself; here those positions take the fill value (0) */
            for (int64_t o = 0; o < p->out[pd]; o++) p->map[pd][o] = n > 0 ? c0 + map_index(mode, o - l0, n) : -1;
        } else {
            for (int64_t o = 0, i; o < p->out[pd]; o++) /* o - l wraps only far outside the input: the constant */
                p->map[pd][o] = __builtin_sub_overflow(o, l, &i) ? -1 : map_index(mode, i, p->in[pd]);
        }
    }
    /* the last dim's run of in-order inputs, copied as one block per row (every mode maps o -> o - l there) */
    int kl = p->k - 1;
    int64_t l = pad[0], w = p->out[kl];
    p->lo = l > 0 ? (l < w ? l : w) : 0;
    p->hi = p->lo;
    while (p->hi < w && p->map[kl][p->hi] == p->hi - l) p->hi++;
    p->shift = l;
    return MT_OK;
}

/* visit every output row of the last dim with OBASE (its first offset), IBASE (the input row's first
 * offset) and OK (0: the row lies in a constant part of an outer padded dim) */
#define PAD_ROWS(P, ROW)                                                                              \
    do {                                                                                              \
        int kl_ = (P)->k - 1;                                                                         \
        int64_t rows_ = 1, irows_ = 1, w_ = (P)->out[kl_], iw_ = (P)->in[kl_];                        \
        for (int d_ = 0; d_ < kl_; d_++) rows_ *= (P)->out[d_], irows_ *= (P)->in[d_];                \
        for (int64_t b_ = 0; b_ < (P)->outer; b_++)                                                   \
            for (int64_t row_ = 0; row_ < rows_; row_++) {                                            \
                int64_t rem_ = row_, src_ = 0, mul_ = 1, OK = 1;                                      \
                for (int d_ = kl_ - 1; d_ >= 0; d_--) {                                               \
                    int64_t m_ = (P)->map[d_][rem_ % (P)->out[d_]];                                   \
                    rem_ /= (P)->out[d_];                                                             \
                    if (m_ < 0) OK = 0;                                                               \
                    src_ += m_ * mul_;                                                                \
                    mul_ *= (P)->in[d_];                                                              \
                }                                                                                     \
                int64_t OBASE = (b_ * rows_ + row_) * w_, IBASE = (b_ * irows_ + src_) * iw_;         \
                ROW;                                                                                  \
            }                                                                                         \
    } while (0)

/* visit the output elements [FROM, TO) of a row with OUT (its offset) and IN (the input offset or -1) */
#define PAD_ELEMS(P, FROM, TO, BODY)                                                                  \
    for (int64_t x_ = (FROM); x_ < (TO); x_++) {                                                      \
        int64_t m_ = (P)->map[(P)->k - 1][x_];                                                        \
        int64_t OUT = OBASE + x_, IN = OK && m_ >= 0 ? IBASE + m_ : -1;                               \
        BODY;                                                                                         \
    }

mt_status mt__impl_pad(mt_tensor *x, int npad, const int64_t *pad, int mode, double value, mt_tensor **out) {
    MT_TRY(pad_check(x, npad, pad, mode));
    int64_t sz[MT_MAX_DIMS];
    memcpy(sz, x->sizes, x->ndim * sizeof(int64_t));
    for (int j = 0; j < npad / 2; j++) sz[x->ndim - 1 - j] = sz[x->ndim - 1 - j] + pad[2 * j] + pad[2 * j + 1];
    mt_tensor *r, *xc = NULL, *fill = NULL;
    MT_TRY(mt__alloc(x->ndim, sz, NULL, x->dtype, x->device, &r));
    if (x->device == MT_META || mt_tensor_numel(r) == 0) { *out = r; return MT_OK; }
    if (npad == 0) { /* a copy */
        mt_status st = mt__impl_copy_(r, x);
        if (st) mt_tensor_release(r);
        else *out = r;
        return st;
    }
    pad_plan p;
    mt_status st = mt__as_contig(x, x->dtype, &xc);
    if (!st && mode == MT_PAD_CONSTANT) st = mt__check_fits(value, 0, 1, x->dtype); /* fill_(value) */
    if (!st) st = mt_scalar_tensor(value, mt__f2i(value), MT_SCALAR_FLOAT, x->dtype, 0, &fill);
    if (!st) st = make_plan(x, npad, pad, mode, &p);
    if (!st) {
        int es = mt_dtype_itemsize(x->dtype);
        char *dst = mt__data(r);
        const char *src = mt__data(xc), *fv = mt__data(fill);
        switch (es) {
#define ONE(T) ((T *)dst)[OUT] = IN >= 0 ? ((const T *)src)[IN] : *(const T *)fv
#define COPY(T)                                                                                       \
    PAD_ROWS(&p, {                                                                                    \
        PAD_ELEMS(&p, 0, p.lo, ONE(T));                                                               \
        if (OK) memcpy((T *)dst + OBASE + p.lo, (const T *)src + IBASE + p.lo - p.shift,              \
                       (size_t)(p.hi - p.lo) * sizeof(T));                                            \
        else PAD_ELEMS(&p, p.lo, p.hi, ONE(T));                                                       \
        PAD_ELEMS(&p, p.hi, p.out[p.k - 1], ONE(T));                                                  \
    });                                                                                               \
    break;
        case 1: COPY(uint8_t)
        case 2: COPY(uint16_t)
        case 4: COPY(uint32_t)
        case 8: COPY(uint64_t)
        default: COPY(mt_bytes16)
#undef COPY
#undef ONE
        }
        plan_free(&p);
    }
    mt_tensor_release(xc);
    mt_tensor_release(fill);
    if (st) { mt_tensor_release(r); return st; }
    *out = r;
    return MT_OK;
}

mt_status mt__impl_pad_backward(mt_tensor *g, mt_tensor *x, int npad, const int64_t *pad, int mode, mt_tensor **out) {
    int cdt = mt__compute_dtype(x->dtype);
    mt_tensor *r, *gc = NULL;
    MT_TRY(pad_check(x, npad, pad, mode)); /* again: x.data may have changed shape since the forward */
    MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &r));
    if (x->device == MT_META) return mt__from_compute(r, x->dtype, out);
    memset(mt__data(r), 0, mt_tensor_numel(r) * mt_dtype_itemsize(cdt));
    pad_plan p;
    mt_status st = mt__as_contig(g, cdt, &gc);
    if (!st && npad == 0) st = mt__impl_copy_(r, gc);
    else if (!st && mt_tensor_numel(gc)) st = make_plan(x, npad, pad, mode, &p);
    if (!st && npad && mt_tensor_numel(gc)) {
        if (cdt == MT_F64) {
            double *gi = (double *)mt__data(r);
            const double *go = (const double *)mt__data(gc);
            PAD_ROWS(&p, PAD_ELEMS(&p, 0, p.out[p.k - 1], if (IN >= 0) gi[IN] += go[OUT]));
        } else {
            float *gi = (float *)mt__data(r);
            const float *go = (const float *)mt__data(gc);
            PAD_ROWS(&p, PAD_ELEMS(&p, 0, p.out[p.k - 1], if (IN >= 0) gi[IN] += go[OUT]));
        }
        plan_free(&p);
    }
    mt_tensor_release(gc);
    if (st) { mt_tensor_release(r); return st; }
    return mt__from_compute(r, x->dtype, out);
}
