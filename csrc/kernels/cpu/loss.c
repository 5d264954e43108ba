/* loss.c — nll_loss / nll_loss2d forward and backward kernels. The input is
 * viewed as [N, C, S] (S = 1 for nll_loss, H*W for nll_loss2d); sums run in
 * double and round once. The pointwise losses compose elementwise ops and live
 * with their formulas in autograd/formulas_spatial.c. */
#include <math.h>

#include "spatial.h"
#include "shape.h"

static mt_status nll_check(mt_tensor *x, mt_tensor *t, mt_tensor *w, int two_d) {
    char a[256], b[256];
    MT_TRY(mt__same_device(x, t)); /* a meta target or weight beside a CPU input has no data to read */
    if (w) MT_TRY(mt__same_device(x, w));
    if (!two_d) {
        if (x->ndim < 1 || x->ndim > 2) return mt__error(MT_ERR_RUNTIME, "input tensor should be 1D or 2D");
        if (t->ndim > 1) return mt__error(MT_ERR_RUNTIME, "0D or 1D target tensor expected, multi-target not supported");
        if (x->ndim == 1 && t->ndim == 1 && t->sizes[0] != 1)
            return mt__error(MT_ERR_VALUE, "For 1D input, 1D target must have size 1, but got target size: %lld",
                             (long long)t->sizes[0]);
        if (x->ndim == 2 && (t->ndim == 0 || x->sizes[0] != t->sizes[0]))
            return mt__error(MT_ERR_RUNTIME, "size mismatch (got input: %s, target: %s)", MT_SZ(a, x), MT_SZ(b, t));
        if (w && (w->ndim != 1 || mt_tensor_numel(w) != x->sizes[x->ndim - 1]))
            return mt__error(MT_ERR_RUNTIME,
                             "weight tensor should be defined either for all %lld classes or no classes but got "
                             "weight tensor of shape: %s", (long long)x->sizes[x->ndim - 1], MT_SZ(a, w));
    } else {
        if (t->ndim != 3)
            return mt__error(MT_ERR_RUNTIME, "only batches of spatial targets supported (3D tensors) but got targets of "
                             "dimension: %d", t->ndim);
        if (x->ndim != 4)
            return mt__error(MT_ERR_RUNTIME, "only batches of spatial inputs supported (4D tensors), but got input of "
                             "dimension: %d", x->ndim);
        if (w && mt_tensor_numel(w) != x->sizes[1])
            return mt__error(MT_ERR_RUNTIME, "weight tensor should be defined either for all or no classes");
        if (x->sizes[0] != t->sizes[0] || x->sizes[2] != t->sizes[1] || x->sizes[3] != t->sizes[2])
            return mt__error(MT_ERR_RUNTIME, "size mismatch (got input: %s , target: %s", MT_SZ(a, x), MT_SZ(b, t));
    }
    if (t->dtype != MT_I64 && t->dtype != MT_U8)
        return mt__error(MT_ERR_RUNTIME, "expected target dtype to be Long or Byte, but got %s", MT_DTNAME(t));
    if (!mt__is_float(x->dtype))
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                         two_d ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame", MT_DTNAME(x));
    if (w && w->dtype != x->dtype)
        return mt__error(MT_ERR_RUNTIME, "expected scalar type %s but found %s", MT_DTNAME(x), MT_DTNAME(w));
    return MT_OK;
}

typedef struct {
    int64_t N, C, S;
    mt_tensor *x, *t, *w; /* contiguous: compute dtype, int64, compute dtype (or NULL) */
} nll_geom;

static mt_status nll_prepare(mt_tensor *x, mt_tensor *t, mt_tensor *w, int two_d, nll_geom *g) {
    memset(g, 0, sizeof *g);
    int cdt = mt__compute_dtype(x->dtype);
    g->N = x->ndim == 1 ? 1 : x->sizes[0];
    g->C = two_d ? x->sizes[1] : x->sizes[x->ndim - 1];
    g->S = two_d ? x->sizes[2] * x->sizes[3] : 1;
    MT_TRY(mt__as_contig(x, cdt, &g->x));
    mt_status st = mt__as_contig(t, MT_I64, &g->t);
    if (!st && w) st = mt__as_contig(w, cdt, &g->w);
    return st;
}

static void nll_free(nll_geom *g) {
    mt_tensor_release(g->x);
    mt_tensor_release(g->t);
    mt_tensor_release(g->w);
}

static mt_status nll_targets_ok(const nll_geom *g, int64_t ignore_index) {
    const int64_t *t = (const int64_t *)mt__data(g->t);
    for (int64_t i = 0, n = g->N * g->S; i < n; i++)
        if (t[i] != ignore_index && (t[i] < 0 || t[i] >= g->C))
            return mt__error(MT_ERR_INDEX, "Target %lld is out of bounds.", (long long)t[i]);
    return MT_OK;
}

static double wt(const nll_geom *g, int64_t c) {
    if (!g->w) return 1.0;
    return g->w->dtype == MT_F64 ? ((const double *)mt__data(g->w))[c] : ((const float *)mt__data(g->w))[c];
}
static double xat(const nll_geom *g, int64_t i) {
    return g->x->dtype == MT_F64 ? ((const double *)mt__data(g->x))[i] : ((const float *)mt__data(g->x))[i];
}
static void put(mt_tensor *r, int64_t i, double v) {
    if (r->dtype == MT_F64) ((double *)mt__data(r))[i] = v;
    else ((float *)mt__data(r))[i] = (float)v;
}

mt_status mt__impl_nll_loss(mt_tensor *x, mt_tensor *target, mt_tensor *weight, int reduction, int64_t ignore_index,
                            int two_d, mt_tensor **out, mt_tensor **total_weight) {
    MT_TRY(nll_check(x, target, weight, two_d));
    if ((unsigned)reduction > MT_REDUCTION_SUM) return mt__error(MT_ERR_VALUE, "%d is not a valid value for reduction", reduction);
    int cdt = mt__compute_dtype(x->dtype);
    int64_t osz[3];
    int ond = 0;
    if (reduction == MT_REDUCTION_NONE && two_d) ond = 3, osz[0] = x->sizes[0], osz[1] = x->sizes[2], osz[2] = x->sizes[3];
    else if (reduction == MT_REDUCTION_NONE && x->ndim == 2) ond = 1, osz[0] = x->sizes[0];
    mt_tensor *r = NULL, *tw = NULL;
    MT_TRY(mt__alloc(ond, osz, NULL, cdt, x->device, &r));
    mt_status st = mt__alloc(0, NULL, NULL, cdt, x->device, &tw);
    nll_geom g = {0};
    if (!st && x->device != MT_META) st = nll_prepare(x, target, weight, two_d, &g);
    if (!st && x->device != MT_META) st = nll_targets_ok(&g, ignore_index);
    if (!st && x->device != MT_META) {
        const int64_t *t = (const int64_t *)mt__data(g.t);
        double sum = 0, wsum = 0;
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t s = 0; s < g.S; s++) {
                int64_t c = t[n * g.S + s];
                double v = 0, w = 0;
                if (c != ignore_index) w = wt(&g, c), v = -w * xat(&g, (n * g.C + c) * g.S + s);
                if (reduction == MT_REDUCTION_NONE) put(r, n * g.S + s, v);
                sum += v, wsum += w;
            }
        if (reduction != MT_REDUCTION_NONE) put(r, 0, reduction == MT_REDUCTION_MEAN ? sum / wsum : sum);
        put(tw, 0, wsum);
    }
    nll_free(&g);
    if (st) { mt_tensor_release(r); mt_tensor_release(tw); return st; }
    if ((st = mt__from_compute(r, x->dtype, out))) { mt_tensor_release(tw); return st; }
    if ((st = mt__from_compute(tw, x->dtype, total_weight))) MT_DROP(*out);
    return st;
}

mt_status mt__impl_nll_loss_backward(mt_tensor *grad, mt_tensor *x, mt_tensor *target, mt_tensor *weight, int reduction,
                                     int64_t ignore_index, mt_tensor *total_weight, mt_tensor **out) {
    int two_d = x->ndim == 4 && target->ndim == 3;
    int cdt = mt__compute_dtype(x->dtype);
    mt_tensor *r = NULL, *gc = NULL;
    MT_TRY(nll_check(x, target, weight, two_d)); /* again: x.data may have changed shape since the forward */
    MT_TRY(mt__alloc(x->ndim, x->sizes, NULL, cdt, x->device, &r));
    if (x->device == MT_META) return mt__from_compute(r, x->dtype, out);
    memset(mt__data(r), 0, mt_tensor_numel(r) * mt_dtype_itemsize(cdt));
    nll_geom g;
    mt_status st = nll_prepare(x, target, weight, two_d, &g);
    if (!st) st = mt__as_contig(grad, cdt, &gc);
    if (!st) {
        double tw = 1;
        if (reduction == MT_REDUCTION_MEAN) {
            double f; int64_t i;
            st = mt_item(total_weight, &f, &i);
            tw = f;
        }
        const int64_t *t = (const int64_t *)mt__data(g.t);
        int per = reduction == MT_REDUCTION_NONE;
        for (int64_t n = 0; n < g.N && !st; n++)
            for (int64_t s = 0; s < g.S; s++) {
                int64_t c = t[n * g.S + s];
                if (c == ignore_index || c < 0 || c >= g.C) continue;
                int64_t gi = per ? n * g.S + s : 0;
                double gv = gc->dtype == MT_F64 ? ((const double *)mt__data(gc))[gi] : ((const float *)mt__data(gc))[gi];
                put(r, (n * g.C + c) * g.S + s, -wt(&g, c) * gv / tw);
            }
    }
    nll_free(&g);
    mt_tensor_release(gc);
    if (st) { mt_tensor_release(r); return st; }
    return mt__from_compute(r, x->dtype, out);
}
