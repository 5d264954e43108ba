/* spatial.h — internal declarations shared by the loss and spatial kernels
 * (loss.c, conv.c, pool.c, upsample.c, pad.c) and their autograd layer
 * (autograd/formulas_spatial.c). Kernels compute float16/bfloat16 in float32:
 * inputs are read through a contiguous float32/float64 copy (as_compute) and the
 * result is rounded back once. */
#ifndef MT_SPATIAL_H
#define MT_SPATIAL_H

#include "../../autograd/autograd.h"

/* the dtype a kernel computes in: float64 stays, every other float is float32 */
static inline int mt__compute_dtype(int dt) { return dt == MT_F64 ? MT_F64 : MT_F32; }

/* t as a contiguous tensor of dtype (t itself, retained, when it already is one) */
mt_status mt__as_contig(mt_tensor *t, int dtype, mt_tensor **out);
/* r (contiguous, compute dtype) converted to dtype; r is consumed */
mt_status mt__from_compute(mt_tensor *r, int dtype, mt_tensor **out);
/* sizes of sliding windows computed in 128 bits: kernel sizes, paddings, strides and dilations
 * come from the user and may be anything up to 2^63. Both return 0 and store the value, or 1 when
 * the result does not fit int64 (the caller raises). */
static inline int mt__narrow(__int128 v, int64_t *out) {
    if (v > INT64_MAX || v < INT64_MIN) return 1;
    *out = (int64_t)v;
    return 0;
}
/* floor((in + pad_total - dil * (k - 1) - 1 + extra) / stride) + 1, stride > 0 */
static inline int mt__window_out(int64_t in, __int128 pad_total, int64_t k, int64_t dil, int64_t stride,
                                 int64_t extra, int64_t *out) {
    __int128 num = (__int128)in + pad_total - (__int128)dil * ((__int128)k - 1) - 1 + extra, q = num / stride;
    if (num % stride != 0 && num < 0) q--;
    return mt__narrow(q + 1, out);
}
#define MT_SZ(buf, t) mt__fmt_sizes(buf, sizeof buf, (t)->ndim, (t)->sizes)
/* "Float", "BFloat16" ... */
#define MT_DTNAME(t) (mt_dtype_names[(t)->dtype])

/* ---- losses (loss.c; log_softmax is softmax.c's kernel) ----------------------- */
mt_status mt__log_softmax_for_loss(mt_tensor *x, int64_t dim, mt_tensor **out); /* recorded */
mt_status mt__impl_softmax(mt_tensor *x, int64_t dim, int log, int dtype, mt_tensor **out); /* softmax.c */
/* nll over input viewed as [N, C, S] (S = 1 for 1-D/2-D input); total_weight: 0-dim */
mt_status mt__impl_nll_loss(mt_tensor *x, mt_tensor *target, mt_tensor *weight, int reduction, int64_t ignore_index,
                            int two_d, mt_tensor **out, mt_tensor **total_weight);
mt_status mt__impl_nll_loss_backward(mt_tensor *g, mt_tensor *x, mt_tensor *target, mt_tensor *weight, int reduction,
                                     int64_t ignore_index, mt_tensor *total_weight, mt_tensor **out);

/* ---- convolution (conv.c) ---------------------------------------------------- */
typedef struct {
    int nd;                    /* spatial dims: 1, 2 or 3 */
    int64_t stride[3], padding[3], dilation[3], output_padding[3];
    int64_t pad_extra[3];      /* padding='same' with an odd total: one more at the end */
    int transposed;
    int64_t groups;
} mt_conv_args;
mt_status mt__impl_convolution(mt_tensor *x, mt_tensor *w, mt_tensor *b, const mt_conv_args *a, mt_tensor **out);
/* gradients for the inputs whose mask bit is set: 1 input, 2 weight, 4 bias */
mt_status mt__impl_convolution_backward(mt_tensor *g, mt_tensor *x, mt_tensor *w, const mt_conv_args *a, int mask,
                                        mt_tensor **gx, mt_tensor **gw, mt_tensor **gb);
/* float32 3x3 stride-1 convolution by Winograd F(2x2, 3x3) over NCHW x [N, C, H, W] into out
 * [N, K, OH, OW] with padding (ph, pw) and optional bias [K] (conv_winograd.c); w is [K, C, 3, 3], or
 * with flip the [C, K, 3, 3] weight of a transposed convolution, rotated. Only where
 * mt__winograd_fits(C, K, OH, OW) holds. */
int mt__winograd_fits(int64_t C, int64_t K, int64_t OH, int64_t OW);
mt_status mt__conv3x3_winograd(const float *x, const float *w, const float *bias, float *out, int64_t N, int64_t C,
                               int64_t H, int64_t W, int64_t K, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int flip);
/* the weight gradient of that convolution from x and the output gradient go [N, K, OH, OW] into
 * gw [K, C, 3, 3] (flip: [C, K, 3, 3], rotated), overwritten */
mt_status mt__conv3x3_winograd_wgrad(const float *x, const float *go, float *gw, int64_t N, int64_t C, int64_t H,
                                     int64_t W, int64_t K, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int flip);
mt_status mt__impl_im2col(mt_tensor *x, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s,
                          mt_tensor **out);
mt_status mt__impl_col2im(mt_tensor *x, const int64_t *osz, const int64_t *k, const int64_t *d, const int64_t *p,
                          const int64_t *s, mt_tensor **out);

/* ---- pooling (pool.c) ---------------------------------------------------------- */
/* nsp = 2 or 3 spatial dims, nsp values per argument */
mt_status mt__impl_pool(int kind, int nsp, mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                        const int64_t *d, int ceil, int count_include_pad, int64_t divisor, mt_tensor **out,
                        mt_tensor **indices);
mt_status mt__impl_pool_backward(int kind, int nsp, mt_tensor *g, mt_tensor *x, mt_tensor *indices, const int64_t *k,
                                 const int64_t *s, const int64_t *p, const int64_t *d, int ceil, int count_include_pad,
                                 int64_t divisor, mt_tensor **out);

/* ---- padding (pad.c) ------------------------------------------------------------- */
mt_status mt__impl_pad(mt_tensor *x, int npad, const int64_t *pad, int mode, double value, mt_tensor **out);
mt_status mt__impl_pad_backward(mt_tensor *g, mt_tensor *x, int npad, const int64_t *pad, int mode, mt_tensor **out);

/* ---- interpolation (upsample.c) ----------------------------------------------------- */
mt_status mt__impl_upsample(mt_tensor *x, int mode, int nd, const int64_t *osz, const double *scales, int align,
                            mt_tensor **out);
mt_status mt__impl_upsample_backward(mt_tensor *g, mt_tensor *x, int mode, int nd, const int64_t *osz,
                                     const double *scales, int align, mt_tensor **out);

#endif
