/* ternary.c — elementwise kernels with three inputs (see csrc/ops.tbl). */
#include "loops.h"

/* where(cond, a, b) and masked_fill(mask, self, value): operand 1 is a bool mask */
ROWS_ALL(T_MASK, where, x ? y : z)
ROWS_ALL(T_MASK, masked_fill, x ? z : y)

/* clamp(x, lo, hi); k->ialpha bit 1: lo given, bit 2: hi given. A NaN bound gives NaN. */
#define CLAMP(CT, x, lo, hi)                                                     \
    ({                                                                           \
        CT r_ = (x);                                                             \
        int has_lo_ = (int)(k->ialpha & 1), has_hi_ = (int)(k->ialpha & 2);      \
        if ((has_lo_ && (lo) != (lo)) || (has_hi_ && (hi) != (hi))) r_ = (lo) + (hi); \
        else {                                                                   \
            if (has_lo_ && r_ < (lo)) r_ = (lo);                                 \
            if (has_hi_ && r_ > (hi)) r_ = (hi);                                 \
        }                                                                        \
        r_;                                                                      \
    })
ROWS_NUM(T_SAME, clamp, CLAMP(CT, x, y, z))

/* PyTorch's lerp: the two forms keep the endpoints exact */
ROWS_FLOAT(T_SAME, lerp, fabs(z) < (CT)0.5 ? x + z * (y - x) : y - (y - x) * ((CT)1 - z))
ROWS_INT(T_SAME, addcmul, (CT)((uint64_t)x + (uint64_t)KALPHA(CT) * (uint64_t)y * (uint64_t)z))
ROWS_FLOAT(T_SAME, addcmul, x + KALPHA(CT) * y * z)
ROWS_FLOAT(T_SAME, addcdiv, x + KALPHA(CT) * (y / z))
ROWS_FLOAT(T_SAME, nan_to_num,
           x != x ? (CT)k->alpha : (isinf(x) ? (x > 0 ? (CT)k->s1 : (CT)k->s2) : x))
