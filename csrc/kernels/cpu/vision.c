/* vision.c — torchvision's CPU operators (nms, roi_align, roi_pool, ps_roi_align, ps_roi_pool and
 * deform_conv2d's sampling) for mindtorch_v2/_vision_ops.py, which registers them under
 * torch.ops.torchvision when torchvision loads its extension. torchvision 0.28 registers each op's
 * autograd itself (torch.library.register_autograd over its _*_backward ops), so these entries
 * record no nodes. The loops (vision_kernels.h, once per dtype) follow torchvision's kernels
 * statement by statement; unlike them, the entries check what those kernels trust (roi batch
 * indices, shapes) so that bad input is an error, never an out-of-bounds read. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "nn.h"
#include "shape.h"

/* a float to int as torchvision's casts, saturating where the cast would be undefined */
static inline int mt__sat_int(double v) {
    if (!(v == v)) return 0;
    return v >= 2147483647.0 ? 2147483647 : v <= -2147483648.0 ? (-2147483647 - 1) : (int)v;
}

#define D(t) ((void *)mt__data(t))

typedef struct {
    int64_t B, C, og;
    int H, W, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
} dc_geom;

#define T float
#define SUF(name) name##_f32
#include "vision_kernels.h"
#undef T
#undef SUF
#define T double
#define SUF(name) name##_f64
#include "vision_kernels.h"
#undef T
#undef SUF

static mt_status contig(mt_tensor *t, mt_tensor **out) {
    if (!t) {
        *out = NULL;
        return MT_OK;
    }
    return mt__impl_contiguous(t, out);
}

static mt_status zeros(int ndim, const int64_t *sizes, int dtype, mt_tensor **out) {
    MT_TRY(mt__alloc(ndim, sizes, NULL, dtype, MT_CPU, out));
    memset(mt__data(*out), 0, (size_t)mt_tensor_numel(*out) * mt_dtype_itemsize(dtype));
    return MT_OK;
}

/* every tensor a kernel reads must be on the CPU (a meta one has no data; NULL: an absent optional) */
static mt_status check_cpu(const mt_tensor *t, const char *kernel) {
    if (t && t->device != MT_CPU) return mt__error(MT_ERR_RUNTIME, "%s: expected CPU tensors", kernel);
    return MT_OK;
}

static mt_status check_float(mt_tensor *t, const char *kernel) {
    MT_TRY(check_cpu(t, kernel));
    if (t->dtype != MT_F32 && t->dtype != MT_F64) return mt__not_implemented(kernel, t->dtype);
    return MT_OK;
}

mt_status mt_vision_nms(mt_tensor *dets, mt_tensor *scores, double iou_threshold, mt_tensor **out) {
    MT_PROFILE("torchvision::nms", dets, scores);
    *out = NULL;
    if (dets->ndim != 2) return mt__error(MT_ERR_RUNTIME, "boxes should be a 2d tensor, got %dD", dets->ndim);
    if (dets->sizes[1] != 4)
        return mt__error(MT_ERR_RUNTIME, "boxes should have 4 elements in dimension 1, got %lld",
                         (long long)dets->sizes[1]);
    if (scores->ndim != 1) return mt__error(MT_ERR_RUNTIME, "scores should be a 1d tensor, got %dD", scores->ndim);
    if (dets->sizes[0] != scores->sizes[0])
        return mt__error(MT_ERR_RUNTIME,
                         "boxes and scores should have same number of elements in dimension 0, got %lld and %lld",
                         (long long)dets->sizes[0], (long long)scores->sizes[0]);
    MT_TRY(check_float(dets, "nms_kernel"));
    MT_TRY(check_cpu(scores, "nms_kernel"));
    if (dets->dtype != scores->dtype) return mt__error(MT_ERR_RUNTIME, "dets should have the same type as scores");
    int64_t n = dets->sizes[0];
    mt_tensor *d = NULL, *vals = NULL, *order = NULL, *keep = NULL;
    mt_status st = mt__impl_contiguous(dets, &d);
    if (!st) st = mt__impl_sort(scores, 0, 1, 0, &vals, &order);
    if (!st) st = mt__alloc(1, &n, NULL, MT_I64, MT_CPU, &keep);
    uint8_t *sup = st ? NULL : calloc((size_t)(n ? n : 1), 1);
    if (!st && !sup) st = mt__error(MT_ERR_RUNTIME, "nms: out of memory");
    int64_t k = 0;
    if (!st) {
        const int64_t *ord = (const int64_t *)mt__data(order);
        if (d->dtype == MT_F32) nms_f32(n, (const float *)mt__data(d), ord, sup, (int64_t *)mt__data(keep), &k, iou_threshold);
        else nms_f64(n, (const double *)mt__data(d), ord, sup, (int64_t *)mt__data(keep), &k, iou_threshold);
        int64_t stride = 1;
        st = mt__view_of(keep, 1, &k, &stride, keep->offset, out);  /* keep[:k], as torchvision's narrow */
    }
    free(sup);
    mt_tensor_release(d);
    mt_tensor_release(vals);
    mt_tensor_release(order);
    mt_tensor_release(keep);
    return st;
}

static const char *const roi_names[4] = {"roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool"};

/* roi_align's and ps_roi_align's sampling grids must fit an int (their kernels' arithmetic) */
static mt_status check_grids(int kind, int f, const void *r, int64_t K, int64_t ph, int64_t pw, double scale,
                             int64_t ratio, int aligned) {
    if (kind != MT_ROI_ALIGN && kind != MT_PS_ROI_ALIGN) return MT_OK;
    int ps = kind == MT_PS_ROI_ALIGN;
    int64_t bad = f ? grids_fit_f32(r, K, ph, pw, (float)scale, ratio, aligned, ps)
                    : grids_fit_f64(r, K, ph, pw, scale, ratio, aligned, ps);
    if (bad < 0) return MT_OK;
    return mt__error(MT_ERR_RUNTIME, "%s: roi %lld needs more than 2147483647 samples (sampling_ratio %lld, pooled "
                     "size %lld x %lld; its coordinates may be huge or NaN)", roi_names[kind], (long long)bad,
                     (long long)ratio, (long long)ph, (long long)pw);
}

/* the checks of a roi op: input [N, C, H, W], rois [K, 5] of input's dtype with batch indices in [0, N) */
static mt_status check_rois(int kind, mt_tensor *input_or_grad, mt_tensor *rois, int64_t batch, int64_t ph,
                            int64_t pw, int backward, mt_tensor **rc) {
    *rc = NULL;
    const char *name = roi_names[kind];
    MT_TRY(check_float(input_or_grad, name));
    MT_TRY(check_cpu(rois, name));
    if (rois->ndim != 2 || rois->sizes[1] != 5)
        return mt__error(MT_ERR_RUNTIME, kind == MT_ROI_ALIGN ? "rois must have shape as Tensor[K, 5]"
                                                               : "Tensor rois should have shape as Tensor[K, 5]");
    if (input_or_grad->dtype != rois->dtype)
        return mt__error(MT_ERR_RUNTIME, "%s should have the same type as rois", backward ? "grad" : "input");
    if (input_or_grad->ndim != 4)
        return mt__error(MT_ERR_RUNTIME, "%s: expected a 4-D %s, got %dD", name, backward ? "grad" : "input",
                         input_or_grad->ndim);
    if (ph <= 0 || pw <= 0 || ph > INT32_MAX || pw > INT32_MAX)
        return mt__error(MT_ERR_RUNTIME, "%s: output size must be positive, got (%lld, %lld)", name, (long long)ph,
                         (long long)pw);
    MT_TRY(mt__impl_contiguous(rois, rc));
    for (int64_t k = 0; k < rois->sizes[0]; k++) {
        double b = rois->dtype == MT_F32 ? ((float *)mt__data(*rc))[k * 5] : ((double *)mt__data(*rc))[k * 5];
        if (!(b >= 0 && b < (double)batch)) { /* compared as a double: a huge index does not convert */
            MT_DROP(*rc);
            return mt__error(MT_ERR_INDEX, "%s: roi %lld has batch index %g, out of range for a batch of %lld", name,
                             (long long)k, b, (long long)batch);
        }
    }
    return MT_OK;
}

mt_status mt_vision_roi(int kind, mt_tensor *input, mt_tensor *rois, double spatial_scale, int64_t pooled_h,
                        int64_t pooled_w, int64_t sampling_ratio, int aligned, mt_tensor **out, mt_tensor **index) {
    MT_PROFILE("torchvision::roi", input, rois);
    *out = NULL;
    if (index) *index = NULL;
    if (kind < 0 || kind > 3) return mt__error(MT_ERR_VALUE, "mt_vision_roi: unknown kind %d", kind);
    if (kind != MT_ROI_ALIGN && !index) return mt__error(MT_ERR_VALUE, "mt_vision_roi: index output missing");
    mt_tensor *rc, *ic = NULL;
    MT_TRY(check_rois(kind, input, rois, input->ndim == 4 ? input->sizes[0] : 0, pooled_h, pooled_w, 0, &rc));
    int64_t C = input->sizes[1], K = rois->sizes[0], H = input->sizes[2], W = input->sizes[3];
    int ps = kind == MT_PS_ROI_ALIGN || kind == MT_PS_ROI_POOL;
    mt_status st = MT_OK;
    if (ps && C % (pooled_h * pooled_w))
        st = mt__error(MT_ERR_RUNTIME, "input channels must be a multiple of pooling height * pooling width");
    if (!st && (H > INT32_MAX / (W ? W : 1)))
        st = mt__error(MT_ERR_RUNTIME, "%s: input plane too large", roi_names[kind]);
    int64_t sizes[4] = {K, ps ? C / (pooled_h * pooled_w) : C, pooled_h, pooled_w};
    if (!st) st = zeros(4, sizes, input->dtype, out);
    if (!st && kind != MT_ROI_ALIGN) st = zeros(4, sizes, MT_I32, index);
    if (!st) st = mt__impl_contiguous(input, &ic);
    if (!st) st = check_grids(kind, input->dtype == MT_F32, mt__data(rc), K, pooled_h, pooled_w, spatial_scale,
                              sampling_ratio, aligned);
    if (!st && mt_tensor_numel(*out)) {
        int f = input->dtype == MT_F32;
        void *o = mt__data(*out), *x = mt__data(ic), *r = mt__data(rc);
        int32_t *idx = kind == MT_ROI_ALIGN ? NULL : (int32_t *)mt__data(*index);
        switch (kind) {
        case MT_ROI_ALIGN:
            if (f) roi_align_fwd_f32(x, r, K, C, (int)H, (int)W, pooled_h, pooled_w, (float)spatial_scale, sampling_ratio, aligned, o);
            else roi_align_fwd_f64(x, r, K, C, (int)H, (int)W, pooled_h, pooled_w, spatial_scale, sampling_ratio, aligned, o);
            break;
        case MT_PS_ROI_ALIGN:
            if (f) ps_roi_align_fwd_f32(x, r, K, C, (int)H, (int)W, pooled_h, pooled_w, (float)spatial_scale, sampling_ratio, o, idx);
            else ps_roi_align_fwd_f64(x, r, K, C, (int)H, (int)W, pooled_h, pooled_w, spatial_scale, sampling_ratio, o, idx);
            break;
        default:
            if (f) pool_fwd_f32(ps, x, r, K, C, (int)H, (int)W, pooled_h, pooled_w, (float)spatial_scale, o, idx);
            else pool_fwd_f64(ps, x, r, K, C, (int)H, (int)W, pooled_h, pooled_w, spatial_scale, o, idx);
        }
    }
    mt_tensor_release(rc);
    mt_tensor_release(ic);
    if (st) {
        MT_DROP(*out);
        if (index) MT_DROP(*index);
    }
    return st;
}

mt_status mt_vision_roi_backward(int kind, mt_tensor *grad, mt_tensor *rois, mt_tensor *index, double spatial_scale,
                                 int64_t pooled_h, int64_t pooled_w, int64_t sampling_ratio, int aligned,
                                 const int64_t *input_size, mt_tensor **out) {
    MT_PROFILE("torchvision::roi_backward", grad, rois);
    *out = NULL;
    if (kind < 0 || kind > 3) return mt__error(MT_ERR_VALUE, "mt_vision_roi_backward: unknown kind %d", kind);
    for (int i = 0; i < 4; i++)
        if (input_size[i] < 0) return mt__error(MT_ERR_RUNTIME, "%s backward: negative input size", roi_names[kind]);
    int64_t B = input_size[0], C = input_size[1], H = input_size[2], W = input_size[3];
    mt_tensor *rc, *gc = NULL, *xc = NULL;
    MT_TRY(check_rois(kind, grad, rois, B, pooled_h, pooled_w, 1, &rc));
    int64_t K = rois->sizes[0];
    int ps = kind == MT_PS_ROI_ALIGN || kind == MT_PS_ROI_POOL;
    int64_t expect[4] = {K, ps ? C / (pooled_h * pooled_w) : C, pooled_h, pooled_w};
    mt_status st = MT_OK;
    if (ps && C % (pooled_h * pooled_w))
        st = mt__error(MT_ERR_RUNTIME, "input channels must be a multiple of pooling height * pooling width");
    for (int i = 0; i < 4 && !st; i++)
        if (grad->sizes[i] != expect[i])
            st = mt__error(MT_ERR_RUNTIME, "%s backward: grad has size %lld at dim %d, expected %lld", roi_names[kind],
                           (long long)grad->sizes[i], i, (long long)expect[i]);
    if (!st && H > INT32_MAX / (W ? W : 1)) st = mt__error(MT_ERR_RUNTIME, "%s: input plane too large", roi_names[kind]);
    if (!st && kind != MT_ROI_ALIGN) {
        if (index) st = check_cpu(index, roi_names[kind]);
        if (!st && (!index || index->dtype != MT_I32 || index->ndim != 4))
            st = mt__error(MT_ERR_RUNTIME, "%s backward: expected an int32 %s of the output's shape", roi_names[kind],
                           kind == MT_ROI_POOL ? "argmax" : "channel_mapping");
        for (int i = 0; i < 4 && !st; i++)
            if (index->sizes[i] != expect[i]) st = mt__error(MT_ERR_RUNTIME, "%s backward: index shape mismatch", roi_names[kind]);
        if (!st) st = mt__impl_contiguous(index, &xc);
        /* the saved indices address the input: out of range would write outside the gradient */
        for (int64_t i = 0, n = st ? 0 : mt_tensor_numel(xc); i < n; i++) {
            int32_t v = ((int32_t *)mt__data(xc))[i];
            if (kind == MT_ROI_POOL ? (v < -1 || v >= H * W) : (v < 0 || v >= C)) {
                st = mt__error(MT_ERR_INDEX, "%s backward: index %d out of range", roi_names[kind], v);
                break;
            }
        }
    }
    if (!st) st = zeros(4, input_size, grad->dtype, out);
    int64_t gs[4];
    if (!st) {
        /* roi_align and roi_pool read grad through its strides, the ps ops a contiguous copy */
        if (ps) st = mt__impl_contiguous(grad, &gc);
        else {
            mt_tensor_retain(grad);
            gc = grad;
        }
        for (int i = 0; i < 4 && !st; i++) gs[i] = gc->strides[i];
    }
    if (!st) st = check_grids(kind, grad->dtype == MT_F32, mt__data(rc), K, pooled_h, pooled_w, spatial_scale,
                              sampling_ratio, aligned);
    if (!st && mt_tensor_numel(grad)) {
        int f = grad->dtype == MT_F32;
        void *o = mt__data(*out), *g = mt__data(gc), *r = mt__data(rc);
        const int32_t *idx = xc ? (const int32_t *)mt__data(xc) : NULL;
        switch (kind) {
        case MT_ROI_ALIGN:
            if (f) roi_align_bwd_f32(g, gs, r, K, C, (int)H, (int)W, pooled_h, pooled_w, (float)spatial_scale, sampling_ratio, aligned, o);
            else roi_align_bwd_f64(g, gs, r, K, C, (int)H, (int)W, pooled_h, pooled_w, spatial_scale, sampling_ratio, aligned, o);
            break;
        case MT_PS_ROI_ALIGN:
            if (f) ps_roi_align_bwd_f32(g, idx, r, K, C, (int)H, (int)W, pooled_h, pooled_w, (float)spatial_scale, sampling_ratio, o);
            else ps_roi_align_bwd_f64(g, idx, r, K, C, (int)H, (int)W, pooled_h, pooled_w, spatial_scale, sampling_ratio, o);
            break;
        default:
            if (f) pool_bwd_f32(ps, g, gs, idx, r, K, C, (int)H, (int)W, pooled_h, pooled_w, (float)spatial_scale, o);
            else pool_bwd_f64(ps, g, gs, idx, r, K, C, (int)H, (int)W, pooled_h, pooled_w, spatial_scale, o);
        }
    }
    mt_tensor_release(rc);
    mt_tensor_release(gc);
    mt_tensor_release(xc);
    if (st) MT_DROP(*out);
    return st;
}

/* the geometry deform_conv2d's sampling shares, checked as torchvision's forward checks it */
static mt_status deform_geom(mt_tensor *input, mt_tensor *offset, mt_tensor *mask, const int64_t *p, int64_t og,
                             dc_geom *g) {
    MT_TRY(check_float(input, "deformable_im2col"));
    MT_TRY(check_cpu(offset, "deformable_im2col"));
    MT_TRY(check_cpu(mask, "deformable_im2col"));
    if (input->ndim != 4 || offset->ndim != 4 || (mask && mask->ndim != 4))
        return mt__error(MT_ERR_RUNTIME, "deform_conv2d: input, offset and mask must be 4-D");
    if (offset->dtype != input->dtype || (mask && mask->dtype != input->dtype))
        return mt__error(MT_ERR_RUNTIME, "deform_conv2d: input, offset and mask must have the same dtype");
    for (int i = 0; i < 8; i++)
        if (p[i] > INT32_MAX || p[i] < (i >= 4 && i < 6 ? 0 : 1))
            return mt__error(MT_ERR_RUNTIME, "deform_conv2d: invalid kernel size, stride, padding or dilation");
    g->B = input->sizes[0], g->C = input->sizes[1], g->H = (int)input->sizes[2], g->W = (int)input->sizes[3];
    g->kh = (int)p[0], g->kw = (int)p[1], g->sh = (int)p[2], g->sw = (int)p[3];
    g->ph = (int)p[4], g->pw = (int)p[5], g->dh = (int)p[6], g->dw = (int)p[7], g->og = og;
    int64_t oh = (input->sizes[2] + 2 * p[4] - (p[6] * (p[0] - 1) + 1)) / p[2] + 1;
    int64_t ow = (input->sizes[3] + 2 * p[5] - (p[7] * (p[1] - 1) + 1)) / p[3] + 1;
    if (og <= 0 || g->C % og) return mt__error(MT_ERR_RUNTIME, "deform_conv2d: channels must divide into offset groups");
    if (oh <= 0 || ow <= 0 || oh > INT32_MAX || ow > INT32_MAX)
        return mt__error(MT_ERR_RUNTIME, "Calculated output size too small - out_h: %lld out_w: %lld", (long long)oh,
                         (long long)ow);
    g->oh = (int)oh, g->ow = (int)ow;
    /* the columns' sizes and the offset's channels must fit int64 (a caller's huge kernel and groups) */
    int64_t cols, rows, ch;
    if (__builtin_mul_overflow(g->C, p[0] * p[1], &cols) || __builtin_mul_overflow(g->B, oh * ow, &rows) ||
        __builtin_mul_overflow(og, 2 * p[0] * p[1], &ch))
        return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    if (offset->sizes[0] != g->B || offset->sizes[1] != og * 2 * p[0] * p[1] || offset->sizes[2] != oh ||
        offset->sizes[3] != ow)
        return mt__error(MT_ERR_RUNTIME, "deform_conv2d: offset must have shape [%lld, %lld, %lld, %lld]",
                         (long long)g->B, (long long)(og * 2 * p[0] * p[1]), (long long)oh, (long long)ow);
    if (mask && (mask->sizes[0] != g->B || mask->sizes[1] != og * p[0] * p[1] || mask->sizes[2] != oh ||
                 mask->sizes[3] != ow))
        return mt__error(MT_ERR_RUNTIME, "deform_conv2d: mask must have shape [%lld, %lld, %lld, %lld]",
                         (long long)g->B, (long long)(og * p[0] * p[1]), (long long)oh, (long long)ow);
    if ((int64_t)g->H * g->W > INT32_MAX) return mt__error(MT_ERR_RUNTIME, "deform_conv2d: input plane too large");
    return MT_OK;
}

mt_status mt_vision_deform_im2col(mt_tensor *input, mt_tensor *offset, mt_tensor *mask, const int64_t *geometry,
                                  int64_t offset_groups, mt_tensor **columns) {
    MT_PROFILE("torchvision::deform_im2col", input, offset);
    *columns = NULL;
    dc_geom g;
    MT_TRY(deform_geom(input, offset, mask, geometry, offset_groups, &g));
    int64_t sizes[2] = {g.C * g.kh * g.kw, g.B * g.oh * g.ow};
    mt_tensor *x = NULL, *o = NULL, *m = NULL;
    mt_status st = contig(input, &x);
    if (!st) st = contig(offset, &o);
    if (!st) st = contig(mask, &m);
    if (!st) st = zeros(2, sizes, input->dtype, columns);
    if (!st) {
        if (input->dtype == MT_F32)
            deform_im2col_f32(D(x), D(o), m ? D(m) : NULL, &g, D(*columns));
        else
            deform_im2col_f64(D(x), D(o), m ? D(m) : NULL, &g, D(*columns));
    }
    mt_tensor_release(x);
    mt_tensor_release(o);
    mt_tensor_release(m);
    return st;
}

mt_status mt_vision_deform_col2im(mt_tensor *columns, mt_tensor *input, mt_tensor *offset, mt_tensor *mask,
                                  const int64_t *geometry, int64_t offset_groups, mt_tensor **grad_input,
                                  mt_tensor **grad_offset, mt_tensor **grad_mask) {
    MT_PROFILE("torchvision::deform_col2im", columns, input, offset);
    *grad_input = *grad_offset = *grad_mask = NULL;
    dc_geom g;
    MT_TRY(deform_geom(input, offset, mask, geometry, offset_groups, &g));
    MT_TRY(check_cpu(columns, "deformable_col2im"));
    if (columns->dtype != input->dtype || columns->ndim != 2 || columns->sizes[0] != g.C * g.kh * g.kw ||
        columns->sizes[1] != g.B * g.oh * g.ow)
        return mt__error(MT_ERR_RUNTIME, "deform_conv2d backward: columns must be [%lld, %lld] of the input's dtype",
                         (long long)(g.C * g.kh * g.kw), (long long)(g.B * g.oh * g.ow));
    mt_tensor *c = NULL, *x = NULL, *o = NULL, *m = NULL;
    mt_status st = contig(columns, &c);
    if (!st) st = contig(input, &x);
    if (!st) st = contig(offset, &o);
    if (!st) st = contig(mask, &m);
    if (!st) st = zeros(4, input->sizes, input->dtype, grad_input);
    if (!st) st = zeros(4, offset->sizes, input->dtype, grad_offset);
    if (!st && mask) st = zeros(4, mask->sizes, input->dtype, grad_mask);
    if (!st) {
        if (input->dtype == MT_F32)
            deform_col2im_f32(D(c), D(x), D(o), m ? D(m) : NULL, &g,
                              D(*grad_input), D(*grad_offset), m ? D(*grad_mask) : NULL);
        else
            deform_col2im_f64(D(c), D(x), D(o), m ? D(m) : NULL, &g,
                              D(*grad_input), D(*grad_offset), m ? D(*grad_mask) : NULL);
    }
    mt_tensor_release(c);
    mt_tensor_release(x);
    mt_tensor_release(o);
    mt_tensor_release(m);
    if (st) {
        MT_DROP(*grad_input);
        MT_DROP(*grad_offset);
        MT_DROP(*grad_mask);
    }
    return st;
}
