/* logsoftmax_for_loss.c — the log_softmax cross_entropy needs (forward kernel;
 * the recorded op with LogSoftmaxBackward0 is in autograd/formulas_spatial.c).
 * Private to the losses: at merge it folds into the fused softmax/log_softmax
 * kernel of nn/functional's owner. float16/bfloat16 compute in float32. */
#include <math.h>

#include "spatial.h"
#include "vecmath.h"

typedef struct { void *x, *y; int64_t dim, inner; int f64; } lsm_ctx;

/* rows [b, e) of outer*inner; each row is dim elements strided by inner */
static void lsm_rows(void *p, int64_t b, int64_t e) {
    lsm_ctx *c = p;
    int64_t D = c->dim, in = c->inner;
    for (int64_t r = b; r < e; r++) {
        int64_t base = (r / in) * D * in + r % in;
        if (c->f64) {
            const double *x = (const double *)c->x + base;
            double *y = (double *)c->y + base, m = -INFINITY, s = 0;
            for (int64_t i = 0; i < D; i++) m = x[i * in] > m || x[i * in] != x[i * in] ? x[i * in] : m;
            if (isinf(m) && m < 0) m = 0;
            for (int64_t i = 0; i < D; i++) s += exp(x[i * in] - m);
            double ls = log(s) + m;
            for (int64_t i = 0; i < D; i++) y[i * in] = x[i * in] - ls;
        } else {
            const float *x = (const float *)c->x + base;
            float *y = (float *)c->y + base, m = -INFINITY, s = 0;
            for (int64_t i = 0; i < D; i++) m = x[i * in] > m || x[i * in] != x[i * in] ? x[i * in] : m;
            if (isinf(m) && m < 0) m = 0;
            if (in == 1)
                for (int64_t i = 0; i < D; i++) s += mt_v_expf(x[i] - m);
            else
                for (int64_t i = 0; i < D; i++) s += mt_v_expf(x[i * in] - m);
            float ls = logf(s) + m;
            for (int64_t i = 0; i < D; i++) y[i * in] = x[i * in] - ls;
        }
    }
}

mt_status mt__impl_log_softmax_for_loss(mt_tensor *x, int64_t dim, mt_tensor **out) {
    if (!mt__is_float(x->dtype)) {
        int64_t d = dim;
        MT_TRY(mt__wrap_dim(&d, x->ndim));
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                         x->ndim == 0 || d == x->ndim - 1 ? "log_softmax_lastdim_kernel_impl" : "log_softmax_kernel_impl",
                         mt_dtype_names[x->dtype]);
    }
    MT_TRY(mt__wrap_dim(&dim, x->ndim));
    int cdt = mt__compute_dtype(x->dtype);
    mt_tensor *xc, *y;
    MT_TRY(mt__as_contig(x, cdt, &xc));
    mt_status st = mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &y);
    if (st) { mt_tensor_release(xc); return st; }
    int64_t D = x->ndim ? x->sizes[dim] : 1, inner = 1, outer = 1;
    for (int i = dim + 1; i < x->ndim; i++) inner *= x->sizes[i];
    for (int i = 0; i < dim; i++) outer *= x->sizes[i];
    if (x->device != MT_META && D > 0) {
        lsm_ctx c = {mt__data(xc), mt__data(y), D, inner, cdt == MT_F64};
        mt__parallel_for(outer * inner, D > 0 ? 1 + MT_GRAIN_SIZE / D : 1, lsm_rows, &c);
    }
    mt_tensor_release(xc);
    return mt__from_compute(y, x->dtype, out);
}
