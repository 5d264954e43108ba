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

/* ---- the losses' backward: grad_input from (input x, target y, grad_output g) ----
 * PyTorch's mse/huber/smooth_l1 backward kernels; k->s1 is the norm (1 / numel for mean, times 2 for
 * mse), k->alpha huber's delta or smooth_l1's beta. Those kernels have two forms: a vector one that
 * runs in blocks over a row whose operands are all dense, or dense but for one
 * broadcast input, and a scalar one for the rest of such a row and for every other row. huber and
 * smooth_l1 order their products differently in the two (the scalar form multiplies by a double delta
 * last, or divides by a double beta last), so each element takes the form PyTorch gives it. Its vector
 * blocks are 64 bytes on this host's build (measured: float32 rows switch forms at multiples of 16), as on
 * AVX2 builds (two 32-byte vectors a step). */
#define LOSS_BWD_LOOP(LOAD, STORE, VX, XE, YE, GE)                                                 \
    for (int64_t i = 0; i < nv; i++) {                                                             \
        CT x = LOAD(XE), y = LOAD(YE), g = LOAD(GE);                                               \
        o[i] = STORE(VX);                                                                          \
    }
#define LOSS_BWD_DEF(NAME, TAG, T, CTY, LOAD, STORE, INIT, VX, SX)                                 \
    MT_SIMD void mt_cpu_##NAME##_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k_in) { \
        typedef CTY CT __attribute__((unused));                                                    \
        KARGS_LOCAL                                                                                \
        const int rnd_kind_ = MT_RND_##TAG;                                                        \
        INIT                                                                                       \
        const int64_t e = sizeof(T);                                                               \
        const int zeros = (s[1] == 0) + (s[2] == 0) + (s[3] == 0);                                 \
        const int vec = s[0] == e && (s[1] == e || !s[1]) && (s[2] == e || !s[2]) && (s[3] == e || !s[3]) && zeros <= 1; \
        const int64_t blk = 64 / e, nv = vec ? n / blk * blk : 0;                    \
        T *o = (T *)d[0];                                                                          \
        const T *a = (const T *)d[1], *b = (const T *)d[2], *c = (const T *)d[3];                  \
        if (!zeros) {                                                                              \
            LOSS_BWD_LOOP(LOAD, STORE, VX, a[i], b[i], c[i])                                                    \
        } else if (!s[3]) {                                                                        \
            LOSS_BWD_LOOP(LOAD, STORE, VX, a[i], b[i], c[0])                                                    \
        } else {                                                                                   \
            LOSS_BWD_LOOP(LOAD, STORE, VX, a[s[1] ? i : 0], b[s[2] ? i : 0], c[i])                               \
        }                                                                                          \
        for (int64_t i = nv; i < n; i++) {                                                         \
            CTY x = LOAD(AT(d[1], i, s[1], const T)), y = LOAD(AT(d[2], i, s[2], const T));        \
            CTY g = LOAD(AT(d[3], i, s[3], const T));                                              \
            AT(d[0], i, s[0], T) = STORE(SX);                                                      \
        }                                                                                          \
    }
/* a row of LOSS_BWD_DEF for each float dtype */
#define LB_ROW(TAG, T, CTY, LD, ST, NAME, INIT, VX, SX) LOSS_BWD_DEF(NAME, TAG, T, CTY, LD, ST, INIT, VX, SX)

/* mse: norm * (x - y) * g in the dtype's arithmetic (float16/bfloat16 round each step), both forms */
#define MSE_INIT const CT nm_ = RND((CT)k->s1);
ROWS_FLOAT(LB_ROW, mse_backward, MSE_INIT, RND(nm_ * RND(x - y)) * g, RND(nm_ * RND(x - y)) * g)

/* huber, in the dtype's arithmetic (c10::Half / BFloat16 round each step). Vector form: the clamped
 * difference (sign * delta beyond delta) times norm, times g. Scalar form: beyond delta,
 * (+-norm * g) * delta in double (c10's Half * double), narrowed through float as c10 converts. */
#define HUBER_S(CT)                                                                                \
    ({                                                                                             \
        CT z_ = RND(x - y);                                                                        \
        (double)z_ <= -dd_ ? (CT)((double)RND(-nm_ * g) * dd_)                                     \
                           : (double)z_ >= dd_ ? (CT)((double)RND(nm_ * g) * dd_) : RND(nm_ * z_) * g; \
    })
#define HUBER_V(CT)                                                                                \
    ({                                                                                             \
        CT z_ = RND(x - y);                                                                        \
        RND(nm_ * (fabs(z_) >= dl_ ? (z_ > 0 ? dl_ : -dl_) : z_)) * g;                             \
    })
#define HUBER_INIT                                                                                 \
    const CT nm_ = RND((CT)k->s1); const CT dl_ = RND((CT)k->alpha);                                  \
    const double dd_ = k->alpha;
ROWS_FLOAT(LB_ROW, huber_backward, HUBER_INIT, HUBER_V(CT), HUBER_S(CT))

/* smooth_l1: float16/bfloat16 compute in float without rounding between steps. Vector form:
 * norm * (sign beyond beta, else (x - y) / beta) * g. Scalar form: +-norm * g beyond beta, else
 * norm * (x - y) * g divided by the double beta. */
#define SMOOTH_L1_S(CT)                                                                            \
    ({                                                                                             \
        CT z_ = x - y;                                                                             \
        (double)z_ <= -bd_ ? -nm_ * g : (double)z_ >= bd_ ? nm_ * g : (CT)((double)(nm_ * z_ * g) / bd_); \
    })
#define SMOOTH_L1_V(CT)                                                                            \
    ({                                                                                             \
        CT z_ = x - y;                                                                             \
        nm_ * (fabs(z_) >= bt_ ? (z_ > 0 ? (CT)1 : (CT)-1) : z_ / bt_) * g;                        \
    })
#define SMOOTH_L1_INIT                                                                             \
    const CT nm_ = (CT)k->s1; const CT bt_ = (CT)k->alpha;                                           \
    const double bd_ = k->alpha;
ROWS_FLOAT(LB_ROW, smooth_l1_backward, SMOOTH_L1_INIT, SMOOTH_L1_V(CT), SMOOTH_L1_S(CT))

/* glu_backward(s, a, grad) = (1 - s) * s * a * grad, s = sigmoid(b): the gradient of glu's second half
 * (PyTorch's glu_backward kernel; float16/bfloat16 in float, rounded once) */
ROWS_FLOAT(T_SAME, glu_backward, ((CT)1 - x) * x * y * z)
