/* spatial_util.c — helpers shared by the loss and spatial kernels (see spatial.h). */
#include "spatial.h"

mt_status mt__impl_copy_(mt_tensor *dst, mt_tensor *src);

mt_status mt__as_contig(mt_tensor *t, int dtype, mt_tensor **out) {
    if (t->dtype == dtype && mt_tensor_is_contiguous(t)) {
        mt_tensor_retain(t);
        *out = t;
        return MT_OK;
    }
    MT_TRY(mt__alloc(t->ndim, t->sizes, NULL, dtype, t->device, out));
    if (t->device == MT_META) return MT_OK;
    mt_status st = mt__impl_copy_(*out, t);
    if (st) { MT_DROP(*out); }
    return st;
}

mt_status mt__from_compute(mt_tensor *r, int dtype, mt_tensor **out) {
    if (r->dtype == dtype) { *out = r; return MT_OK; }
    mt_status st = mt__as_contig(r, dtype, out);
    mt_tensor_release(r);
    return st;
}
