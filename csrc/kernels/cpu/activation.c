/* activation.c — elementwise activations with up to three scalar parameters
 * (a, b, c in mt_kargs alpha, s1, s2) and their fused backward kernels
 * (PyTorch's threshold_backward, gelu_backward, silu_backward, ...).
 *
 * The loops come from loops.h (float16/bfloat16 compute in float, a copy per ISA level);
 * they run over the elementwise iterator, so any layout works and a new
 * result follows the input's layout as PyTorch's TensorIterator does. */
#include "loops.h"
#include "nn.h"
#include "shape.h"
#include "vecmath.h"

#define PA ((CT)k->alpha)
#define PB ((CT)k->s1)
#define PC ((CT)k->s2)
#define VSIG(v) ((CT)1 / ((CT)1 + VEXP(-(v))))
#define MAXP(a, b) ((a) < (b) ? (b) : (a)) /* NaN propagates, as std::max(nan, b) */
#define MINP(a, b) ((b) < (a) ? (b) : (a))
/* PyTorch's Vectorized<float>::erf (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7): what its float
 * GELU kernels compute with, and vectorisable; float64 uses libm's erf as PyTorch does */
static inline __attribute__((always_inline)) float v_erff(float x) {
    float t = 1.0f / (0.3275911f * fabsf(x) + 1.0f);
    float r = (((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f;
    float y = 1.0f - r * t * mt_v_expf(-(x * x));
    return copysignf(y, x);
}
#define VERF(v) _Generic((v), float: v_erff, default: erf)(v)
#define GELU_BETA ((CT)(M_SQRT2 * M_2_SQRTPI * 0.5))
#define GELU_KAPPA ((CT)0.044715)

/* ---- forward: out = f(x) ---- */
ROWS_INT(U_SAME, act_relu, x < 0 ? 0 : x)
ROWS_FLOAT(U_SAME, act_relu, x < 0 ? 0 : x) /* keeps NaN and -0.0, as clamp_min does */
ROWS_INT(U_SAME, act_hardtanh, x < PA ? PA : (x > PB ? PB : x))
ROWS_FLOAT(U_SAME, act_hardtanh, x < PA ? PA : (x > PB ? PB : x))
ROWS_FLOAT(U_SAME, act_leaky_relu, x > 0 ? x : x * PA)
/* The exp/expm1/log1p term is computed for every x and named in the test where it cannot change the outcome
 * (it is NaN only where its argument is): GCC would sink a call used in one arm into that branch, and a
 * branch's call does not vectorise. */
#define ELU_EXPR(x) ({                                                                 \
        CT e_ = VM(expm1, (x) * pc_);                                                  \
        ((x) <= 0) & ((e_ == e_) | ((x) * pc_ != (x) * pc_)) ? e_ * pab_ : (x) * pb_;  \
    })
/* elu/selu/celu: PyTorch's vector loop skips expm1 for a vector of positive inputs; this one for a block of
 * 64 (the same values: x * scale there) */
#define ELU_DEF(TAG, T, CTY, LOAD, STORE, ...)                                                         \
    MT_SIMD void mt_cpu_act_elu_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) {     \
        typedef CTY CT;                                                                                \
        const CT pab_ = PA * PB, pb_ = PB, pc_ = PC;                                                   \
        if (s[0] != sizeof(T) || s[1] != sizeof(T)) {                                                  \
            for (int64_t i = 0; i < n; i++) {                                                          \
                CT x = LOAD(AT(d[1], i, s[1], const T));                                               \
                AT(d[0], i, s[0], T) = STORE(ELU_EXPR(x));                                             \
            }                                                                                          \
            return;                                                                                    \
        }                                                                                              \
        T *o = (T *)d[0];                                                                              \
        const T *a = (const T *)d[1];                                                                  \
        for (int64_t i0 = 0; i0 < n; i0 += 64) {                                                       \
            int64_t m = n - i0 < 64 ? n - i0 : 64;                                                     \
            int pos = 1;                                                                               \
            for (int64_t i = 0; i < m; i++) pos &= LOAD(a[i0 + i]) > 0; /* NaN is not */               \
            if (pos) {                                                                                 \
                for (int64_t i = 0; i < m; i++) o[i0 + i] = STORE(LOAD(a[i0 + i]) * pb_);              \
            } else {                                                                                   \
                for (int64_t i = 0; i < m; i++) {                                                      \
                    CT x = LOAD(a[i0 + i]);                                                            \
                    o[i0 + i] = STORE(ELU_EXPR(x));                                                    \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }
ROWS_FLOAT(ELU_DEF)
ROWS_FLOAT(U_SAME, act_silu, x / ((CT)1 + VEXP(-x)))
ROWS_FLOAT(U_SAME, act_mish, x * VM(tanh, VM(log1p, VM(exp, x))))
ROWS_FLOAT(U_SAME, act_gelu, x * (CT)0.5 * ((CT)1 + VERF(x * (CT)M_SQRT1_2)))
ROWS_FLOAT(U_SAME, act_gelu_tanh, (CT)0.5 * x * ((CT)1 + VTANH(GELU_BETA * (x + GELU_KAPPA * (x * x * x)))))
ROWS_FLOAT(U_SAME, act_softplus, ({
               CT l_ = VM(log1p, VEXP(x * PA)) / PA;
               (x * PA > PB) & ((l_ == l_) | (PA * 0 != 0)) ? x : l_;
           }))
ROWS_FLOAT(U_SAME, act_hardsigmoid, MINP(MAXP(x + (CT)3, (CT)0), (CT)6) / (CT)6)
ROWS_FLOAT(U_SAME, act_hardswish, x * MINP(MAXP(x + (CT)3, (CT)0), (CT)6) / (CT)6)
ROWS_FLOAT(U_SAME, act_softshrink, x > PA ? x - PA : (x < -PA ? x + PA : x * (CT)0))
ROWS_FLOAT(U_SAME, act_hardshrink, (x >= -PA && x <= PA) ? (CT)0 : x)
ROWS_FLOAT(U_SAME, act_logsigmoid, MINP(x, (CT)0) - VM(log1p, VEXP(-fabs(x))))
ROWS_INT(U_SAME, act_threshold, x <= PA ? PB : x)
ROWS_FLOAT(U_SAME, act_threshold, x <= PA ? PB : x)

/* ---- backward: out = grad (x) * f'(input y); relu reads its result ---- */
ROWS_FLOAT(B_SAME, actb_relu, y <= 0 ? (CT)0 : x)
ROWS_FLOAT(B_SAME, actb_hardtanh, (y <= PA || y >= PB) ? (CT)0 : x)
ROWS_FLOAT(B_SAME, actb_leaky_relu, y > 0 ? x : x * PA)
/* elu/selu/celu backward from the input y: grad * c * (a * b) * exp(y * c) where y <= 0, else grad * b. As the
 * forward: a block of 64 positive inputs skips exp (PyTorch's vector loop skips it for a vector of them), the
 * constants are locals, and the grad is dense or one value (a reduction's backward): the loop that read them
 * through k and took any grad stride ran scalar, 1.8 ms for 1M floats where PyTorch takes 0.3 ms. */
#define ELUB_EXPR(g, y) ({                                                                             \
        CT e_ = VEXP((y) * pc_);                                                                       \
        CT r_ = (g) * pc_ * pab_ * e_;                                                                 \
        (y) <= 0 ? r_ : (g) * pb_;                                                                     \
    })
#define ELUB_BLOCKS(LOAD, STORE, GI)                                                                   \
    for (int64_t i0 = 0; i0 < n; i0 += 64) {                                                           \
        int64_t m = n - i0 < 64 ? n - i0 : 64;                                                         \
        int pos = 1;                                                                                   \
        for (int64_t i = 0; i < m; i++) pos &= LOAD(a[i0 + i]) > 0; /* NaN is not */                   \
        if (pos) {                                                                                     \
            for (int64_t i = 0; i < m; i++) o[i0 + i] = STORE(LOAD(gp[GI]) * pb_);                     \
        } else {                                                                                       \
            for (int64_t i = 0; i < m; i++) {                                                          \
                CT y = LOAD(a[i0 + i]), g = LOAD(gp[GI]);                                              \
                o[i0 + i] = STORE(ELUB_EXPR(g, y));                                                    \
            }                                                                                          \
        }                                                                                              \
    }
#define ELUB_DEF(TAG, T, CTY, LOAD, STORE, ...)                                                        \
    MT_SIMD void mt_cpu_actb_elu_##TAG(char **d, const int64_t *s, int64_t n, const mt_kargs *k) {    \
        typedef CTY CT;                                                                                \
        const CT pa_ = PA, pb_ = PB, pc_ = PC, pab_ = pa_ * pb_;                                       \
        T *o = (T *)d[0];                                                                              \
        const T *gp = (const T *)d[1], *a = (const T *)d[2];                                           \
        if (s[0] == sizeof(T) && s[2] == sizeof(T) && s[1] == sizeof(T)) {                             \
            ELUB_BLOCKS(LOAD, STORE, i0 + i)                                                           \
        } else if (s[0] == sizeof(T) && s[2] == sizeof(T) && s[1] == 0) {                              \
            ELUB_BLOCKS(LOAD, STORE, 0)                                                                \
        } else {                                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                          \
                CT g = LOAD(AT(d[1], i, s[1], const T)), y = LOAD(AT(d[2], i, s[2], const T));         \
                AT(d[0], i, s[0], T) = STORE(ELUB_EXPR(g, y));                                         \
            }                                                                                          \
        }                                                                                              \
    }
ROWS_FLOAT(ELUB_DEF)
ROWS_FLOAT(B_SAME, actb_silu, ({ CT s_ = VSIG(y); x * s_ * ((CT)1 + y * ((CT)1 - s_)); }))
ROWS_FLOAT(B_SAME, actb_mish, ({
               CT t_ = VM(tanh, VM(log1p, VM(exp, y)));
               x * (t_ + y * VSIG(y) * ((CT)1 - t_ * t_));
           }))
ROWS_FLOAT(B_SAME, actb_gelu, ({
               CT cdf_ = (CT)0.5 * ((CT)1 + VERF(y * (CT)M_SQRT1_2));
               CT pdf_ = VEXP((CT)-0.5 * y * y) * (CT)(M_2_SQRTPI * M_SQRT1_2 * 0.5);
               x * (cdf_ + y * pdf_);
           }))
ROWS_FLOAT(B_SAME, actb_gelu_tanh, ({
               CT inner_ = GELU_BETA * (y + GELU_KAPPA * (y * y * y));
               CT t_ = VTANH(inner_);
               CT left_ = (CT)0.5 * y, right_ = (CT)1 + t_;
               CT dinner_ = GELU_BETA * ((CT)1 + (CT)3 * GELU_KAPPA * y * y);
               x * ((CT)0.5 * right_ + left_ * ((CT)1 - t_ * t_) * dinner_);
           }))
/* a plain select: a NaN test that keeps a libm call out of one arm (as in the forward) stops GCC from
 * vectorising the inline float exp here (2.2 ms for 1M floats, scalar) */
ROWS_FLOAT(B_SAME, actb_softplus, ({
               CT z_ = VEXP(y * PA), r_ = x * z_ / (z_ + (CT)1);
               y * PA > PB ? x : r_;
           }))
ROWS_FLOAT(B_SAME, actb_hardsigmoid, (y > (CT)-3 && y < (CT)3) ? x * (CT)(1.0f / 6.0f) : (CT)0)
ROWS_FLOAT(B_SAME, actb_hardswish, y <= (CT)-3 ? (CT)0 : (y < (CT)3 ? x * (y / (CT)3 + (CT)0.5) : x))
ROWS_FLOAT(B_SAME, actb_shrink, (y >= -PA && y <= PA) ? (CT)0 : x)
ROWS_FLOAT(B_SAME, actb_logsigmoid, ({
               CT z_ = VEXP(-fabs(y)), q_ = z_ / ((CT)1 + z_);
               y < 0 ? x * ((CT)1 - q_) : x * q_;
           }))
ROWS_FLOAT(B_SAME, actb_threshold, y <= PA ? (CT)0 : x)

#define FLOATS(N) [MT_F16] = mt_cpu_##N##_f16, [MT_BF16] = mt_cpu_##N##_bf16, [MT_F32] = mt_cpu_##N##_f32, \
                  [MT_F64] = mt_cpu_##N##_f64
#define INTS(N) [MT_U8] = mt_cpu_##N##_u8, [MT_I8] = mt_cpu_##N##_i8, [MT_I16] = mt_cpu_##N##_i16, \
                [MT_I32] = mt_cpu_##N##_i32, [MT_I64] = mt_cpu_##N##_i64

typedef struct {
    const char *name;  /* the grad_fn name of the op */
    const char *kname; /* the kernel PyTorch's "not implemented" error names */
    mt_loop_fn fwd[MT_NUM_DTYPES], bwd[MT_NUM_DTYPES];
} act_desc;

static const act_desc acts[MT_NUM_ACT] = {
    [MT_ACT_RELU] = {"ReluBackward0", "relu", {FLOATS(act_relu), INTS(act_relu)}, {FLOATS(actb_relu)}},
    [MT_ACT_HARDTANH] = {"HardtanhBackward0", "hardtanh", {FLOATS(act_hardtanh), INTS(act_hardtanh)},
                         {FLOATS(actb_hardtanh)}},
    [MT_ACT_LEAKY_RELU] = {"LeakyReluBackward0", "leaky_relu_cpu", {FLOATS(act_leaky_relu)}, {FLOATS(actb_leaky_relu)}},
    [MT_ACT_ELU] = {"EluBackward0", "elu_cpu", {FLOATS(act_elu)}, {FLOATS(actb_elu)}},
    [MT_ACT_CELU] = {"CeluBackward0", "elu_cpu", {FLOATS(act_elu)}, {FLOATS(actb_elu)}},
    [MT_ACT_SILU] = {"SiluBackward0", "silu_cpu", {FLOATS(act_silu)}, {FLOATS(actb_silu)}},
    [MT_ACT_MISH] = {"MishBackward0", "mish_cpu", {FLOATS(act_mish)}, {FLOATS(actb_mish)}},
    [MT_ACT_GELU] = {"GeluBackward0", "GeluKernelImpl", {FLOATS(act_gelu)}, {FLOATS(actb_gelu)}},
    [MT_ACT_GELU_TANH] = {"GeluBackward0", "GeluKernelImpl", {FLOATS(act_gelu_tanh)}, {FLOATS(actb_gelu_tanh)}},
    [MT_ACT_SOFTPLUS] = {"SoftplusBackward0", "softplus_cpu", {FLOATS(act_softplus)}, {FLOATS(actb_softplus)}},
    [MT_ACT_HARDSIGMOID] = {"HardsigmoidBackward0", "hardsigmoid_cpu", {FLOATS(act_hardsigmoid)},
                            {FLOATS(actb_hardsigmoid)}},
    [MT_ACT_HARDSWISH] = {"HardswishBackward0", "hardswish_cpu", {FLOATS(act_hardswish)}, {FLOATS(actb_hardswish)}},
    [MT_ACT_SOFTSHRINK] = {"SoftshrinkBackward0", "softshrink_check", {FLOATS(act_softshrink)}, {FLOATS(actb_shrink)}},
    [MT_ACT_HARDSHRINK] = {"HardshrinkBackward0", "hardshrink_cpu", {FLOATS(act_hardshrink)}, {FLOATS(actb_shrink)}},
    [MT_ACT_LOGSIGMOID] = {"LogSigmoidBackward0", "log_sigmoid_cpu", {FLOATS(act_logsigmoid)},
                           {FLOATS(actb_logsigmoid)}},
    [MT_ACT_THRESHOLD] = {"ThresholdBackward0", "threshold_cpu", {FLOATS(act_threshold), INTS(act_threshold)},
                          {FLOATS(actb_threshold)}},
};
#define NACTS ((int)(sizeof acts / sizeof acts[0]))

const char *mt__act_name(int act) { return (unsigned)act < NACTS ? acts[act].name : NULL; }

/* run loop over out (given, or new following the inputs' layout) and ins */
static mt_status act_run(mt_loop_fn loop, int nin, mt_tensor **ins, mt_tensor *out, const mt_kargs *k,
                         mt_tensor **result) {
    mt_tensor *x = ins[0];
    if (out) {
        mt_tensor_retain(out);
        *result = out;
    } else {
        int64_t strides[MT_MAX_DIMS];
        mt__output_strides(nin, ins, x->ndim, x->sizes, strides);
        MT_TRY(mt__alloc(x->ndim, x->sizes, strides, x->dtype, x->device, result));
    }
    if (x->device == MT_META) return MT_OK;
    mt_tensor *ops[3] = {*result, ins[0], nin > 1 ? ins[1] : NULL};
    mt_iter it;
    mt__iter_init(&it, nin + 1, ops);
    mt__iter_run(&it, loop, k);
    if (out) mt_tensor_bump_version(out);
    return MT_OK;
}

static mt_status check_act(int act, int dtype) {
    if ((unsigned)act >= NACTS) return mt__error(MT_ERR_VALUE, "unknown activation %d", act);
    if (dtype == MT_BOOL && (act == MT_ACT_RELU || act == MT_ACT_HARDTANH))
        return mt__error(MT_ERR_RUNTIME, act == MT_ACT_RELU ? "Boolean inputs not supported for relu"
                                                            : "Bool inputs not supported for hardtanh");
    if (mt__is_complex(dtype) && (act == MT_ACT_RELU || act == MT_ACT_HARDTANH)) /* PyTorch: through clamp */
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "clamp is not supported for complex types");
    if (!acts[act].fwd[dtype]) return mt__not_implemented(acts[act].kname, dtype);
    return MT_OK;
}

mt_status mt__impl_activation(int act, mt_tensor *x, double a, double b, double c, mt_tensor *out,
                              mt_tensor **result) {
    MT_TRY(check_act(act, x->dtype));
    if (out && (out->dtype != x->dtype || out->ndim != x->ndim ||
                memcmp(out->sizes, x->sizes, x->ndim * sizeof(int64_t))))
        return mt__error(MT_ERR_RUNTIME, "activation: out must have the input's shape and dtype");
    if (out) MT_TRY(mt__same_device(out, x));
    if (!mt__is_float(x->dtype)) { /* integer kernels convert a and b to the dtype, checked as PyTorch's Scalar */
        static const double lo[MT_NUM_DTYPES] = {0, 0, INT8_MIN, INT16_MIN, INT32_MIN, -9223372036854775808.0};
        static const double hi[MT_NUM_DTYPES] = {1, UINT8_MAX, INT8_MAX, INT16_MAX, INT32_MAX, 9223372036854775807.0};
        for (double *v = &a; v; v = v == &a ? &b : NULL) {
            if (!(*v >= -9223372036854775808.0 && *v < 9223372036854775808.0))
                return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
            static const char *const ctype[MT_NUM_DTYPES] = {"bool", "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t"};
            if (*v < lo[x->dtype] || *v > hi[x->dtype])
                return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type %s without overflow",
                                 ctype[x->dtype]);
        }
    }
    mt_kargs k = {.alpha = a, .ialpha = mt__f2i(a), .s1 = b, .s2 = c};
    return act_run(acts[act].fwd[x->dtype], 1, &x, out, &k, result);
}

mt_status mt__impl_activation_backward(int act, mt_tensor *grad, mt_tensor *x, double a, double b, double c,
                                       mt_tensor **result) {
    MT_TRY(check_act(act, x->dtype));
    mt_loop_fn loop = acts[act].bwd[x->dtype];
    if (!loop) return mt__not_implemented(acts[act].kname, x->dtype);
    if (grad->ndim != x->ndim || memcmp(grad->sizes, x->sizes, x->ndim * sizeof(int64_t)))
        return mt__error(MT_ERR_RUNTIME, "activation backward: grad and input shapes differ");
    MT_TRY(mt__same_device(grad, x)); /* a meta grad has no data for the kernel to read */
    mt_tensor *gc = NULL;
    if (grad->dtype != x->dtype) {
        MT_TRY(mt__impl_to_dtype(grad, x->dtype, 0, &gc));
        grad = gc;
    }
    mt_kargs k = {.alpha = a, .ialpha = mt__f2i(a), .s1 = b, .s2 = c};
    mt_tensor *ins[2] = {grad, x};
    mt_status st = act_run(loop, 2, ins, NULL, &k, result);
    mt_tensor_release(gc);
    return st;
}
