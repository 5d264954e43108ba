/* index_select_fast.c — index_select of a contiguous tensor: the result is [outer, n, inner]
 * with inner = the elements after dim, so each (outer, index) pair is one memcpy of inner
 * elements, or, along the last dim (inner == 1), a typed gather over a row. Rows split across
 * threads. Indices were checked by the caller. */
#include "loops.h"
#include "shape.h"

typedef struct {
    const char *src;
    char *dst;
    const int64_t *idx;
    int64_t n, size, inner, isz; /* isz: bytes per element */
} isel_ctx;

#define GATHER_ROW(T)                                                      \
    do {                                                                   \
        const T *s_ = (const T *)s;                                        \
        T *d_ = (T *)d;                                                    \
        for (int64_t j = 0; j < c->n; j++) d_[j] = s_[c->idx[j]];          \
    } while (0)

/* rows [b, e) of outer (inner == 1): one gather per row */
static void isel_last(void *p, int64_t b, int64_t e) {
    const isel_ctx *c = p;
    for (int64_t o = b; o < e; o++) {
        const char *s = c->src + o * c->size * c->isz;
        char *d = c->dst + o * c->n * c->isz;
        switch (c->isz) {
        case 1: GATHER_ROW(uint8_t); break;
        case 2: GATHER_ROW(uint16_t); break;
        case 4: GATHER_ROW(uint32_t); break;
        case 8: GATHER_ROW(uint64_t); break;
        default: GATHER_ROW(mt_bytes16); break; /* complex128 */
        }
    }
}

/* slices [b, e) of outer * n: one memcpy of inner elements each */
static void isel_slices(void *p, int64_t b, int64_t e) {
    const isel_ctx *c = p;
    int64_t bytes = c->inner * c->isz;
    for (int64_t u = b; u < e; u++) {
        int64_t o = u / c->n, j = u % c->n;
        memcpy(c->dst + u * bytes, c->src + (o * c->size + c->idx[j]) * bytes, (size_t)bytes);
    }
}

/* out (contiguous, allocated) = t.index_select(dim, index) for a contiguous t of ndim >= 1;
 * 0 when it ran, 1 when the caller should take the general path (OOM for the index copy) */
int mt__index_select_contig(const mt_tensor *t, int dim, const mt_tensor *index, mt_tensor *out) {
    int64_t n = mt_tensor_numel(index), outer = 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= t->sizes[d];
    for (int d = dim + 1; d < t->ndim; d++) inner *= t->sizes[d];
    int64_t *idx = malloc((size_t)n * sizeof(int64_t));
    if (!idx) return 1;
    const char *ip = mt__data(index);
    int64_t is = mt__wmul(index->ndim ? index->strides[0] : 0, mt_dtype_itemsize(index->dtype));
    for (int64_t j = 0; j < n; j++) idx[j] = mt__load_index(index, ip + j * is);
    isel_ctx c = {mt__data(t), mt__data(out), idx, n, t->sizes[dim], inner, mt_dtype_itemsize(t->dtype)};
    if (inner == 1)
        mt__parallel_for(outer, (MT_GRAIN_SIZE + n - 1) / n, isel_last, &c);
    else
        mt__parallel_for(outer * n, (MT_GRAIN_SIZE + inner - 1) / inner, isel_slices, &c);
    free(idx);
    return 0;
}
