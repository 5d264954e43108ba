/* reduce.h — how the reduction kernels plan a reduction (internal). */
#ifndef MT_REDUCE_H
#define MT_REDUCE_H

#include "../../core/internal.h"

typedef struct {
    int n;                       /* reduced dims, outermost first, coalesced */
    int64_t size[MT_MAX_DIMS];
    int64_t stride[MT_MAX_DIMS]; /* bytes */
} inner_t;

/* reduced[d] = 1 for each dim in dims (ndims <= 0: every dim); PyTorch's errors for bad or repeated dims */
mt_status mt__reduce_dims(const mt_tensor *x, int ndims, const int64_t *dims, int *reduced);
/* the reduced dims of x as a coalesced block, largest stride outside */
void mt__reduce_inner(const mt_tensor *x, const int *reduced, inner_t *in);

#endif
