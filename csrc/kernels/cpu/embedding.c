/* embedding.c — embedding (rows of the weight gathered by index), its dense
 * backward (rows of the gradient added into a zero weight gradient, as
 * PyTorch's embedding_dense_backward_cpu: in index order, in the gradient's
 * dtype, each thread owning a range of weight rows) and embedding_renorm_. */
#include <stdio.h>

#include "loops.h"
#include "nn.h"
#include "shape.h"

static mt_status check_indices(mt_tensor *idx, int arg, const char *fn) {
    if (idx->dtype == MT_I64 || idx->dtype == MT_I32) return MT_OK;
    /* PyTorch names the tensor type by its legacy name where one exists (torch.FloatTensor), else CPU<T>Type */
    int legacy = !mt__is_float8(idx->dtype);
    return mt__error(MT_ERR_RUNTIME,
                     "Expected tensor for argument #%d 'indices' to have one of the following scalar types: Long, Int; "
                     "but got %s%s%s instead (while checking arguments for %s)", arg, legacy ? "torch." : "CPU",
                     mt_dtype_names[idx->dtype], legacy ? "Tensor" : "Type", fn);
}

static inline int64_t index_at(const mt_tensor *idx, int64_t i) {
    return idx->dtype == MT_I64 ? ((const int64_t *)mt__data(idx))[i] : ((const int32_t *)mt__data(idx))[i];
}

mt_status mt__impl_embedding(mt_tensor *weight, mt_tensor *indices, mt_tensor **out) {
    if (weight->ndim != 2) return mt__error(MT_ERR_RUNTIME, "'weight' must be 2-D");
    MT_TRY(check_indices(indices, 1, "embedding"));
    int64_t sizes[MT_MAX_DIMS + 1], n = mt_tensor_numel(indices), V = weight->sizes[0], D = weight->sizes[1];
    if (indices->ndim + 1 > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "too many dimensions");
    memcpy(sizes, indices->sizes, indices->ndim * sizeof(int64_t));
    sizes[indices->ndim] = D;
    MT_TRY(mt__alloc(indices->ndim + 1, sizes, NULL, weight->dtype, weight->device, out));
    if (weight->device == MT_META || n == 0) return MT_OK;
    mt_status dev = mt__same_device(weight, indices); /* meta indices have no values to read */
    if (dev) { MT_DROP(*out); return dev; }
    mt_tensor *ic;
    mt_status st = mt__impl_contiguous(indices, &ic);
    if (st) { MT_DROP(*out); return st; }
    for (int64_t i = 0; i < n; i++) {
        int64_t k = index_at(ic, i);
        if (k < 0 || k >= V) {
            st = mt__error(MT_ERR_INDEX, "index out of range in self");
            break;
        }
    }
    if (!st) {
        int64_t isz = mt_dtype_itemsize(weight->dtype), s0 = mt__wmul(weight->strides[0], isz), s1 = mt__wmul(weight->strides[1], isz);
        const char *w = mt__data(weight);
        char *o = mt__data(*out);
        for (int64_t i = 0; i < n; i++) {
            const char *row = w + index_at(ic, i) * s0;
            char *dst = o + i * D * isz;
            if (s1 == isz) memcpy(dst, row, D * isz);
            else for (int64_t j = 0; j < D; j++) memcpy(dst + j * isz, row + j * s1, isz);
        }
    }
    mt_tensor_release(ic);
    if (st) MT_DROP(*out);
    return st;
}

typedef struct {
    const mt_tensor *idx;
    const char *g;
    char *gw;
    const int64_t *counts;
    int64_t n, D, padding_idx;
    int dtype;
} emb_ctx;

/* rows [b, e) of the weight gradient: every index in that range, in order */
static void emb_bwd(void *p, int64_t b, int64_t e) {
    const emb_ctx *c = p;
    int64_t D = c->D;
    for (int64_t i = 0; i < c->n; i++) {
        int64_t k = index_at(c->idx, i);
        if (k == c->padding_idx || k < b || k >= e) continue;
        double scale = c->counts ? 1.0 / (double)c->counts[k] : 1.0;
        switch (c->dtype) {
        case MT_F64: {
            double *o = (double *)c->gw + k * D;
            const double *g = (const double *)c->g + i * D;
            for (int64_t j = 0; j < D; j++) o[j] += scale * g[j];
            break;
        }
        case MT_F32: {
            float *o = (float *)c->gw + k * D, s = (float)scale;
            const float *g = (const float *)c->g + i * D;
            for (int64_t j = 0; j < D; j++) o[j] += s * g[j];
            break;
        }
        case MT_BF16: {
            uint16_t *o = (uint16_t *)c->gw + k * D;
            const uint16_t *g = (const uint16_t *)c->g + i * D;
            float s = (float)scale;
            for (int64_t j = 0; j < D; j++) o[j] = mt__f32_to_bf16(mt__bf16_to_f32(o[j]) + s * mt__bf16_to_f32(g[j]));
            break;
        }
        default: {
            uint16_t *o = (uint16_t *)c->gw + k * D;
            const uint16_t *g = (const uint16_t *)c->g + i * D;
            float s = (float)scale;
            for (int64_t j = 0; j < D; j++) o[j] = mt__f32_to_f16(mt__f16_to_f32(o[j]) + s * mt__f16_to_f32(g[j]));
        }
        }
    }
}

mt_status mt__impl_embedding_backward(mt_tensor *grad, mt_tensor *indices, int64_t num_weights, int64_t padding_idx,
                                      int scale_grad_by_freq, mt_tensor **out) {
    MT_TRY(check_indices(indices, 2, "embedding_backward"));
    if (!mt__is_float(grad->dtype)) return mt__not_implemented("embedding_dense_backward_cpu", grad->dtype);
    int64_t D = grad->ndim ? grad->sizes[grad->ndim - 1] : 1, n = mt_tensor_numel(indices), nd;
    /* a product past int64 must not wrap to the grad's count (an empty grad beside 2^40 indices) */
    if (__builtin_mul_overflow(n, D, &nd) || mt_tensor_numel(grad) != nd)
        return mt__error(MT_ERR_RUNTIME, "embedding_backward: grad and indices shapes do not match");
    int64_t sizes[2] = {num_weights, D};
    MT_TRY(mt__alloc(2, sizes, NULL, grad->dtype, grad->device, out));
    if (grad->device == MT_META) return MT_OK;
    mt_status dev = mt__same_device(grad, indices);
    if (dev) { MT_DROP(*out); return dev; }
    memset(mt__data(*out), 0, num_weights * D * mt_dtype_itemsize(grad->dtype));
    mt_tensor *ic = NULL, *gc = NULL;
    int64_t *counts = NULL;
    mt_status st = mt__impl_contiguous(indices, &ic);
    if (!st) st = mt__impl_contiguous(grad, &gc);
    for (int64_t i = 0; !st && i < n; i++) {
        int64_t k = index_at(ic, i);
        if (k < 0 || k >= num_weights) st = mt__error(MT_ERR_INDEX, "index out of range in self");
    }
    if (!st && scale_grad_by_freq) {
        counts = calloc(num_weights ? num_weights : 1, sizeof *counts);
        if (!counts) st = mt__error(MT_ERR_OOM, "out of memory");
        for (int64_t i = 0; !st && i < n; i++) counts[index_at(ic, i)]++;
    }
    if (!st && n && D) {
        emb_ctx c = {.idx = ic, .g = mt__data(gc), .gw = mt__data(*out), .counts = counts, .n = n, .D = D,
                     .padding_idx = padding_idx, .dtype = grad->dtype};
        mt__parallel_for(num_weights, 1000, emb_bwd, &c);
    }
    free(counts);
    mt_tensor_release(ic);
    mt_tensor_release(gc);
    if (st) { MT_DROP(*out); }
    return st;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

mt_status mt_embedding_renorm_(mt_tensor *weight, mt_tensor *indices, double max_norm, double norm_type) {
    MT_PROFILE("embedding_renorm_", weight, indices);
    if (weight->ndim != 2) return mt__error(MT_ERR_RUNTIME, "'weight' must be 2-D");
    MT_TRY(check_indices(indices, 2, "embedding_renorm_"));
    if (!mt__is_float(weight->dtype)) return mt__not_implemented("embedding_renorm_cpu_", weight->dtype);
    if (weight->device == MT_META) return MT_OK;
    MT_TRY(mt__same_device(weight, indices));
    int64_t n = mt_tensor_numel(indices), V = weight->sizes[0], D = weight->sizes[1];
    mt_tensor *ic;
    MT_TRY(mt__impl_contiguous(indices, &ic));
    int64_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
    mt_status st = sorted ? MT_OK : mt__error(MT_ERR_OOM, "out of memory");
    for (int64_t i = 0; !st && i < n; i++) {
        sorted[i] = index_at(ic, i);
        if (sorted[i] < 0 || sorted[i] >= V) st = mt__error(MT_ERR_INDEX, "index out of range in self");
    }
    if (!st) qsort(sorted, n, sizeof *sorted, cmp_i64);
    int isz = mt_dtype_itemsize(weight->dtype);
    char *w = mt__data(weight);
    for (int64_t i = 0; !st && i < n; i++) {
        if (i > 0 && sorted[i] == sorted[i - 1]) continue;
        char *row = w + sorted[i] * weight->strides[0] * isz;
        int64_t s1 = mt__wmul(weight->strides[1], isz);
        double norm = 0, v;
        /* the row's norm in its dtype's accumulation type, then row *= max_norm / (norm + 1e-7) */
        for (int64_t j = 0; j < D; j++) {
            char *q = row + j * s1;
            v = weight->dtype == MT_F64 ? *(double *)q : weight->dtype == MT_F32 ? *(float *)q
              : weight->dtype == MT_BF16 ? mt__bf16_to_f32(*(uint16_t *)q) : mt__f16_to_f32(*(uint16_t *)q);
            v = fabs(v);
            if (isinf(norm_type)) norm = norm_type > 0 ? (v > norm ? v : norm) : (j == 0 || v < norm ? v : norm);
            else if (norm_type == 0) norm += v != 0;
            else if (norm_type == 1) norm += v;
            else if (norm_type == 2) norm += v * v;
            else norm += pow(v, norm_type);
        }
        if (!isinf(norm_type) && norm_type != 0 && norm_type != 1)
            norm = norm_type == 2 ? sqrt(norm) : pow(norm, 1.0 / norm_type);
        if (weight->dtype != MT_F64) norm = (float)norm;
        if (norm > max_norm) {
            double scale = max_norm / (norm + 1e-7);
            for (int64_t j = 0; j < D; j++) {
                char *q = row + j * s1;
                switch (weight->dtype) {
                case MT_F64: *(double *)q *= scale; break;
                case MT_F32: *(float *)q *= (float)scale; break;
                case MT_BF16: *(uint16_t *)q = mt__f32_to_bf16(mt__bf16_to_f32(*(uint16_t *)q) * (float)scale); break;
                default: *(uint16_t *)q = mt__f32_to_f16(mt__f16_to_f32(*(uint16_t *)q) * (float)scale);
                }
            }
        }
    }
    free(sorted);
    mt_tensor_release(ic);
    if (!st) mt_tensor_bump_version(weight);
    return st;
}
