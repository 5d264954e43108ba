/* nn.h — what the NN kernels (softmax.c, norm.c, activation.c, embedding.c,
 * attention.c) share, and their no-autograd entry points for
 * csrc/autograd/formulas_nn.c (internal to the core).
 *
 * The kernels compute float32 and float64 directly; float16/bfloat16 inputs
 * are widened to float32 once, computed there and rounded once at the end, as
 * PyTorch's CPU kernels do (their opmath type is float). */
#ifndef MT_NN_H
#define MT_NN_H

#include <math.h>

#include "../../core/internal.h"

/* Reductions in lanes so GCC vectorises them without -ffast-math (PyTorch's
 * Vectorized<> reductions also sum in lanes). */
#define MT_LANES 16

#define MT_DEF_ROW_REDUCE(SUF, T)                                                        \
    static inline T mt__rsum_##SUF(const T *x, int64_t n) {                              \
        T acc[MT_LANES] = {0};                                                           \
        int64_t i = 0;                                                                   \
        for (; i + MT_LANES <= n; i += MT_LANES)                                         \
            for (int l = 0; l < MT_LANES; l++) acc[l] += x[i + l];                       \
        T s = 0;                                                                         \
        for (; i < n; i++) s += x[i];                                                    \
        for (int l = 0; l < MT_LANES; l++) s += acc[l];                                  \
        return s;                                                                        \
    }                                                                                    \
    static inline T mt__rdot_##SUF(const T *x, const T *y, int64_t n) {                  \
        T acc[MT_LANES] = {0};                                                           \
        int64_t i = 0;                                                                   \
        for (; i + MT_LANES <= n; i += MT_LANES)                                         \
            for (int l = 0; l < MT_LANES; l++) acc[l] += x[i + l] * y[i + l];            \
        T s = 0;                                                                         \
        for (; i < n; i++) s += x[i] * y[i];                                             \
        for (int l = 0; l < MT_LANES; l++) s += acc[l];                                  \
        return s;                                                                        \
    }                                                                                    \
    /* max propagating NaN (a NaN row gives NaN everywhere, as in PyTorch): a select on    \
     * whole vectors, NaNs noted apart (GCC leaves the scalar form of this loop scalar) */  \
    typedef T mt__v64_##SUF __attribute__((vector_size(64)));                            \
    static inline T mt__rmax_##SUF(const T *x, int64_t n) {                              \
        enum { W = 64 / sizeof(T) };                                                     \
        mt__v64_##SUF acc, v;                                                            \
        for (int l = 0; l < W; l++) acc[l] = -(T)INFINITY;                               \
        __typeof__(acc > acc) nan, gt;                                                   \
        memset(&nan, 0, sizeof nan);                                                     \
        int64_t i = 0;                                                                   \
        for (; i + W <= n; i += W) {                                                     \
            memcpy(&v, x + i, sizeof v);                                                 \
            gt = v > acc;                                                                \
            acc = (mt__v64_##SUF)(((__typeof__(gt))v & gt) | ((__typeof__(gt))acc & ~gt)); \
            nan |= v != v;                                                               \
        }                                                                                \
        T m = -(T)INFINITY;                                                              \
        int any = 0;                                                                     \
        for (; i < n; i++) m = x[i] > m ? x[i] : m, any |= x[i] != x[i];                 \
        for (int l = 0; l < W; l++) m = acc[l] > m ? acc[l] : m, any |= nan[l] != 0;     \
        return any ? (T)NAN : m;                                                         \
    }
MT_DEF_ROW_REDUCE(f, float)
MT_DEF_ROW_REDUCE(d, double)

/* float16/bfloat16 are computed in float32 */
static inline int mt__nn_compute_dtype(int dt) { return dt == MT_F64 ? MT_F64 : MT_F32; }

/* from csrc/autograd/formula.h: the copy kernels without autograd */
mt_status mt__impl_copy_(mt_tensor *dst, mt_tensor *src);
mt_status mt__impl_contiguous(mt_tensor *t, mt_tensor **out);

/* a contiguous copy of t in dtype (t itself, retained, when it already is one) */
mt_status mt__nn_contig(mt_tensor *t, int dtype, mt_tensor **out);
/* round/convert a compute-dtype result r into dtype (r is consumed) */
mt_status mt__nn_narrow(mt_tensor *r, int dtype, mt_tensor **out);
/* PyTorch's "not implemented for" error */

/* ---- the kernels without autograd -------------------------------------------- */
mt_status mt__impl_softmax(mt_tensor *x, int64_t dim, int log, int dtype, mt_tensor **out);
mt_status mt__impl_softmax_backward(mt_tensor *grad, mt_tensor *output, int64_t dim, int log, mt_tensor **out);
/* mean/rstd (may be NULL): [rows] in the compute dtype, for the backward */
/* norm_batch.c: native_batch_norm (save_mean/save_invstd [C] in training, empty in eval; the running
 * statistics updated in place in training) and native_group_norm (mean/rstd [N, groups]) */
mt_status mt__impl_batch_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, mt_tensor *running_mean,
                              mt_tensor *running_var, int training, double momentum, double eps, mt_tensor **out,
                              mt_tensor **save_mean, mt_tensor **save_invstd);
mt_status mt__impl_group_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, int64_t groups, double eps,
                              mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
mt_status mt__impl_layer_norm(mt_tensor *x, int nnorm, const int64_t *shape, mt_tensor *weight, mt_tensor *bias,
                              double eps, mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
/* mask: bit 0 input, bit 1 weight, bit 2 bias gradient */
mt_status mt__impl_layer_norm_backward(mt_tensor *grad, mt_tensor *x, int nnorm, mt_tensor *mean, mt_tensor *rstd,
                                       mt_tensor *weight, mt_tensor *bias, int mask, mt_tensor **gx, mt_tensor **gw,
                                       mt_tensor **gb);
mt_status mt__impl_activation(int act, mt_tensor *x, double a, double b, double c, mt_tensor *out,
                              mt_tensor **result);
mt_status mt__impl_activation_backward(int act, mt_tensor *grad, mt_tensor *x, double a, double b, double c,
                                       mt_tensor **result);
const char *mt__act_name(int act);
mt_status mt__impl_embedding(mt_tensor *weight, mt_tensor *indices, mt_tensor **out);
mt_status mt__impl_embedding_backward(mt_tensor *grad, mt_tensor *indices, int64_t num_weights, int64_t padding_idx,
                                      int scale_grad_by_freq, mt_tensor **out);

/* fused attention (attention.c): q [B,Hq,L,E], k/v [B,Hk,S,E]; lse [B,Hq,L] in the compute dtype */
mt_status mt__impl_sdpa_flash(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask, int causal, double scale,
                              mt_tensor **out, mt_tensor **lse);
mt_status mt__impl_sdpa_flash_backward(mt_tensor *grad, mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *out,
                                       mt_tensor *lse, mt_tensor *mask, int causal, double scale, mt_tensor **gq,
                                       mt_tensor **gk, mt_tensor **gv);

#endif
