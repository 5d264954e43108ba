/* node_names.c — PyTorch's grad_fn names for overloads the C entry points cannot tell apart
 * (clamp_min vs clamp(min=), max() vs amax(), squeeze(dim) vs squeeze((dim,)), t() vs
 * transpose) and for in-place view ops (squeeze_, t_...), given from Python after the op. */
#include <string.h>

#include "autograd.h"

static const char *const names[] = {
    "ClampMinBackward0", "ClampMinBackward1", "ClampMaxBackward0", "ClampMaxBackward1", "MaxBackward1",
    "MinBackward1", "TBackward0", "TBackward1", "TransposeBackward1", "SqueezeBackward2", "SqueezeBackward3",
    "SqueezeBackward4", "SqueezeBackward5", "UnsqueezeBackward1", "AsStridedBackward1", "UnsafeViewBackward0",
};

mt_status mt_tensor_rename_grad_fn(mt_tensor *t, const char *name) {
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i], name)) {
            if (t->grad_fn) t->grad_fn->name = names[i];
            return MT_OK;
        }
    return mt__error(MT_ERR_VALUE, "mt_tensor_rename_grad_fn: unknown node name '%s'", name);
}

mt_status mt_tensor_inplace_view(mt_tensor *t, const char *name) {
    mt_tensor_bump_version(t); /* an in-place op, as PyTorch counts it */
    if (t->base) t->attr_version = mt_tensor_version(t); /* its new history is current: no regeneration */
    return name ? mt_tensor_rename_grad_fn(t, name) : MT_OK;
}
