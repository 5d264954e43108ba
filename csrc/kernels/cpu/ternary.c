/* ternary.c — elementwise kernels with three inputs (see csrc/ops.tbl). */
/* No implicit contraction (see binary.c): fma() is written where PyTorch fuses. */
#pragma GCC optimize("fp-contract=off")
#include "loops.h"

/* where(cond, a, b) and masked_fill(mask, self, value): operand 1 is a bool mask */
ROWS_ALL(T_MASK, where, x ? y : z)
ROWS_ALL(T_MASK, masked_fill, x ? z : y)
ROWS_COMPLEX(T_MASK, where, x ? y : z)
ROWS_COMPLEX(T_MASK, masked_fill, x ? z : y)

/* clamp(x, lo, hi); k->ialpha bit 1: lo given, bit 2: hi given. A NaN bound gives NaN. */
#define CLAMP(CT, x, lo, hi)                                                     \
    ({                                                                           \
        CT r_ = (x);                                                             \
        int has_lo_ = (int)(k->ialpha & 1), has_hi_ = (int)(k->ialpha & 2);      \
        r_ = has_lo_ && r_ < (lo) ? (lo) : r_;                                   \
        r_ = has_hi_ && r_ > (hi) ? (hi) : r_;                                   \
        ((has_lo_ && (lo) != (lo)) || (has_hi_ && (hi) != (hi))) ? (lo) + (hi) : r_; \
    })
ROWS_NUM(T_SAME, clamp, CLAMP(CT, x, y, z))

/* PyTorch's lerp: the two forms keep the endpoints exact (fused as PyTorch's build fuses them) */
ROWS_FLOAT(T_SAME, lerp, fabs(z) < (CT)0.5 ? fma(z, y - x, x) : fma(x - y, (CT)1 - z, y))
ROWS_INT(T_SAME, addcmul, (CT)((uint64_t)x + (uint64_t)KALPHA(CT) * (uint64_t)y * (uint64_t)z))
/* self + value * t1 * t2 (value in the compute type, unrounded for float16/bfloat16) */
ROWS_FLOAT(T_SAME, addcmul, fma(KALPHA(CT) * y, z, x))
ROWS_FLOAT(T_SAME, addcdiv, x + KALPHA(CT) * y / z)
/* complex: c10's products and division in PyTorch's order, |weight| < 0.5 picks lerp's form */
ROWS_COMPLEX(T_SAME, lerp, fabs(z) < 0.5 ? x + CMUL(z, y - x) : y - CMUL(y - x, (CT)1 - z))
ROWS_COMPLEX(T_SAME, addcmul, x + CMUL(CMUL(KALPHA(CT), y), z))
ROWS_COMPLEX(T_SAME, addcdiv, x + CDIV(CMUL(KALPHA(CT), y), z))
/* the replacements read before the selects: a read of k in one arm is a masked load (k may be NULL), and
 * the loop would not vectorise */
ROWS_F32F64(T_SAME, nan_to_num, ({
               CT nan_ = (CT)k->alpha, pinf_ = (CT)k->s1, ninf_ = (CT)k->s2;
               x != x ? nan_ : (isinf(x) ? (x > 0 ? pinf_ : ninf_) : x);
           }))
/* float16/bfloat16 on the bits (INF: the infinity's): a finite value is stored as it was loaded, so only the
 * replacements (double to float to the dtype, as PyTorch's static_cast) need rounding; through float the
 * loop ran at 1.9-2.1x PyTorch's time */
#define NAN_TO_NUM16(INF, ST)                                                                              \
    ({                                                                                                     \
        const uint16_t nan_ = ST((float)k->alpha), pinf_ = ST((float)k->s1), ninf_ = ST((float)k->s2);     \
        uint16_t a_ = x & 0x7FFF;                                                                          \
        (uint16_t)(a_ > INF ? nan_ : a_ == INF ? ((x & 0x8000) ? ninf_ : pinf_) : x);                      \
    })
TERNARY_DEF(nan_to_num, f16, uint16_t, uint16_t, uint16_t, ID, ID, uint16_t, ID, NAN_TO_NUM16(0x7C00, mt__f32_to_f16))
TERNARY_DEF(nan_to_num, bf16, uint16_t, uint16_t, uint16_t, ID, ID, uint16_t, ID, NAN_TO_NUM16(0x7F80, mt__f32_to_bf16))
