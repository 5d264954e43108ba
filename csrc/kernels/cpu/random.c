/* random.c — random fills reproducing PyTorch 2.13's CPU kernels bit for bit.
 *
 * Sources of the transforms (PyTorch): ATen/core/TransformationHelper.h,
 * ATen/core/DistributionsHelper.h, ATen/native/cpu/DistributionTemplates.h,
 * ATen/native/DistributionTemplates.h (argument checks), TensorFactories.cpp
 * (randperm), Distributions.cpp + cpu/MultinomialKernel.cpp (multinomial).
 *
 * Every fill holds the generator's mutex for its whole duration and draws in
 * the order PyTorch's cpu_serial_kernel visits the output: TensorIterator
 * order, i.e. memory order of the output (fastest stride first), which is
 * what mt__iter_init produces. normal_ on >= 16 contiguous elements uses
 * PyTorch's normal_fill (uniforms first, Box-Muller on lanes j and j+8 of
 * each block of 16, last 16 recomputed) and otherwise the scalar Box-Muller
 * with the generator's cached second value.
 *
 * Floating-point evaluation follows the PyTorch kernel build that the CPU
 * would run (see capability() below): with AVX2/AVX-512, GCC contracted
 * a*b+c into fma, so those sites call fma() explicitly here; on the default
 * capability every such site rounds twice (mul_add_2r), whatever flags this
 * file is built with. float normal_ on AVX2 machines is PyTorch's AVX2
 * NormalFill16 (avx_mathfun log/sincos), reproduced with the same intrinsics.
 *
 * bernoulli_(float p) and exponential_ follow PyTorch's mt19937 kernels, which
 * is what PyTorch 2.13 was measured to run (on an AMD CPU). Some PyTorch
 * versions send these two through MKL VSL streams on Intel CPUs; such a
 * stream is not reproduced here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../core/internal.h"

/* from core/rng.c */
mt_generator *mt__gen_resolve(mt_generator *g);
void mt__gen_lock(mt_generator *g);
void mt__gen_unlock(mt_generator *g);
void mt__gen_u32(mt_generator *g, uint32_t *out, int64_t n);
void mt__gen_u64(mt_generator *g, uint64_t *out, int64_t n);
uint32_t mt__gen_random(mt_generator *g);
uint64_t mt__gen_random64(mt_generator *g);
int mt__gen_take_normal(mt_generator *g, double *out);
void mt__gen_put_normal(mt_generator *g, double v);

#define CHUNK 256
#define TWO_PI 6.283185307179586476925286766559 /* 2 * c10::pi<double>, exact doubling */

/* The names caffe2::TypeMeta prints for each dtype (PyTorch's "... out of bounds for <name>"). */
#define typemeta_names mt__typemeta_names

/* ---- which of PyTorch's compiled kernels to follow ------------------------------
 * PyTorch compiles these kernels once per CPU capability and picks one at run
 * time (ATEN_CPU_CAPABILITY overrides). With AVX2 or AVX-512 the build has FMA
 * and GCC contracts a*b+c into fma (e.g. uniform's x*(to-from)+from, normal's
 * val*std+mean), and normal_ (never dispatched to AVX-512) uses the AVX2
 * NormalFill16 built on avx_mathfun's log256_ps/sincos256_ps. The default
 * capability has neither. aarch64 builds contract (FMA is baseline) and use the
 * scalar NormalFill16. */

static atomic_int cap_state = -1; /* bit 0: fma contraction, bit 1: AVX2 NormalFill16 */

static int detect_capability(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const char *e = getenv("ATEN_CPU_CAPABILITY");
    if (e && (strcmp(e, "default") == 0 || strcmp(e, "DEFAULT") == 0)) avx2 = 0;
    return avx2 ? 3 : 0;
#elif defined(__aarch64__)
    const char *e = getenv("ATEN_CPU_CAPABILITY");
    (void)e;
    return 1;
#else
    return 0;
#endif
}

static inline int capability(void) {
    int c = atomic_load_explicit(&cap_state, memory_order_relaxed);
    if (c < 0) {
        c = detect_capability();
        atomic_store_explicit(&cap_state, c, memory_order_relaxed);
    }
    return c;
}
int mt_rand_capability(void) { return capability(); }

static inline int cap_fma(void) { return capability() & 1; }
static inline int cap_avx2_normal(void) { return (capability() >> 1) & 1; }

/* a*b + c rounded twice (no contraction, whatever the compiler flags) */
static inline double mul_add_2r(double a, double b, double c) { volatile double p = a * b; return p + c; }
static inline float mul_add_2rf(float a, float b, float c) { volatile float p = a * b; return p + c; }

/* ---- scalar conversions as PyTorch's static_cast<scalar_t> does them ---------- */

static inline void store_f64(char *p, int dt, double v) {
    switch (dt) {
    case MT_F64: *(double *)p = v; break;
    case MT_F32: *(float *)p = (float)v; break;
    case MT_F16: *(uint16_t *)p = mt__f32_to_f16((float)v); break;   /* Half(float(v)) */
    case MT_BF16: *(uint16_t *)p = mt__f32_to_bf16((float)v); break; /* BFloat16(float(v)) */
    case MT_BOOL: *(uint8_t *)p = v != 0; break;
    case MT_U8: *(uint8_t *)p = (uint8_t)mt__f2i(v); break;
    case MT_I8: *(int8_t *)p = (int8_t)mt__f2i(v); break;
    case MT_I16: *(int16_t *)p = (int16_t)mt__f2i(v); break;
    case MT_I32: *(int32_t *)p = (int32_t)mt__f2i(v); break;
    case MT_I64: *(int64_t *)p = mt__f2i(v); break;
    }
}

/* static_cast<scalar_t>(int64_t v) */
static inline void store_i64(char *p, int dt, int64_t v) {
    switch (dt) {
    case MT_F64: *(double *)p = (double)v; break;
    case MT_F32: *(float *)p = (float)v; break;
    case MT_F16: *(uint16_t *)p = mt__f32_to_f16((float)v); break;
    case MT_BF16: *(uint16_t *)p = mt__f32_to_bf16((float)v); break;
    case MT_BOOL: *(uint8_t *)p = v != 0; break;
    case MT_U8: *(uint8_t *)p = (uint8_t)(uint64_t)v; break;
    case MT_I8: *(int8_t *)p = (int8_t)(uint8_t)(uint64_t)v; break;
    case MT_I16: *(int16_t *)p = (int16_t)(uint16_t)(uint64_t)v; break;
    case MT_I32: *(int32_t *)p = (int32_t)(uint32_t)(uint64_t)v; break;
    case MT_I64: *(int64_t *)p = v; break;
    }
}

static inline double load_f64(const char *p, int dt) {
    switch (dt) {
    case MT_F64: return *(const double *)p;
    case MT_F32: return *(const float *)p;
    case MT_F16: return mt__f16_to_f32(*(const uint16_t *)p);
    case MT_BF16: return mt__bf16_to_f32(*(const uint16_t *)p);
    case MT_BOOL: return *(const uint8_t *)p != 0;
    case MT_U8: return *(const uint8_t *)p;
    case MT_I8: return *(const int8_t *)p;
    case MT_I16: return *(const int16_t *)p;
    case MT_I32: return *(const int32_t *)p;
    case MT_I64: return (double)*(const int64_t *)p;
    }
    return 0.0;
}

/* the value a 16-bit float dtype reads back as */
static inline float round16(int dt, float v) {
    return dt == MT_F16 ? mt__f16_to_f32(mt__f32_to_f16(v)) : mt__bf16_to_f32(mt__f32_to_bf16(v));
}

/* uniform_real_distribution<float>(0,1) / <double>(0,1) on one draw */
static inline float u01_f32(uint32_t r) { return (float)(r & 0xFFFFFFu) * (1.0f / 16777216.0f); }
static inline double u01_f64(uint64_t r) {
    return (double)(r & 0x1FFFFFFFFFFFFFULL) * (1.0 / 9007199254740992.0);
}

/* ---- walking an output (and inputs) in TensorIterator order ------------------- */

typedef int (*row_fn)(void *ctx, char **ptr, const int64_t *strides, int64_t n);

/* Calls row for each innermost run; stops early when row returns nonzero. */
static int walk(mt_iter *it, row_fn row, void *ctx) {
    if (it->numel == 0) return 0;
    int64_t idx[MT_MAX_DIMS] = {0};
    int64_t inner[MT_MAX_OPERANDS];
    for (int k = 0; k < it->nops; k++) inner[k] = it->strides[k][0];
    for (;;) {
        char *ptr[MT_MAX_OPERANDS];
        for (int k = 0; k < it->nops; k++) {
            char *p = it->data[k];
            for (int d = 1; d < it->ndim; d++) p += idx[d] * it->strides[k][d];
            ptr[k] = p;
        }
        int rc = row(ctx, ptr, inner, it->shape[0]);
        if (rc) return rc;
        int d = 1;
        for (; d < it->ndim; d++) {
            if (++idx[d] < it->shape[d]) break;
            idx[d] = 0;
        }
        if (d >= it->ndim) return 0;
    }
}

static int walk1(mt_tensor *t, row_fn row, void *ctx) {
    mt_iter it;
    mt_tensor *ops[1] = {t};
    mt__iter_init(&it, 1, ops);
    return walk(&it, row, ctx);
}

typedef struct rctx {
    mt_generator *g;
    int dt;
    double a, b;       /* distribution parameters */
    float af, bf;      /* the same in opmath float */
    uint64_t range;
    int64_t base;
    int pdt;           /* bernoulli: p's dtype */
} rctx;

#define not_implemented mt__not_implemented

/* PyTorch prints doubles with ostream's default format (6 significant digits) */
static const char *fmt_double(char *buf, size_t cap, double v) {
    if (isnan(v)) snprintf(buf, cap, "nan");
    else if (isinf(v)) snprintf(buf, cap, v > 0 ? "inf" : "-inf");
    else snprintf(buf, cap, "%g", v);
    return buf;
}

/* ================================ uniform_ ===================================== */

static int row_uniform(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    int64_t st = s[0];
    if (c->dt == MT_F64) {
        uint64_t buf[CHUNK];
        double from = c->a, to = c->b, range = to - from;
        int fused = cap_fma();
        for (int64_t i = 0; i < n; i += CHUNK) {
            int64_t m = n - i < CHUNK ? n - i : CHUNK;
            mt__gen_u64(c->g, buf, m);
            for (int64_t j = 0; j < m; j++, p += st) {
                double x = u01_f64(buf[j]);
                double v = fused ? fma(x, range, from) : mul_add_2r(x, range, from);
                *(double *)p = v == to ? from : v;
            }
        }
        return 0;
    }
    uint32_t buf[CHUNK];
    float from = c->af, to = c->bf, range = to - from;
    int fused = cap_fma();
    if (c->dt == MT_F32) {
        for (int64_t i = 0; i < n; i += CHUNK) {
            int64_t m = n - i < CHUNK ? n - i : CHUNK;
            mt__gen_u32(c->g, buf, m);
            for (int64_t j = 0; j < m; j++, p += st) {
                float x = u01_f32(buf[j]);
                float v = fused ? fmaf(x, range, from) : mul_add_2rf(x, range, from);
                *(float *)p = v == to ? from : v;
            }
        }
        return 0;
    }
    /* float16 / bfloat16: opmath float, then round; to_scalar/from_scalar from the doubles */
    int dt = c->dt;
    uint16_t to_h = dt == MT_F16 ? mt__f32_to_f16((float)c->b) : mt__f32_to_bf16((float)c->b);
    uint16_t from_h = dt == MT_F16 ? mt__f32_to_f16((float)c->a) : mt__f32_to_bf16((float)c->a);
    float to_v = dt == MT_F16 ? mt__f16_to_f32(to_h) : mt__bf16_to_f32(to_h);
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        mt__gen_u32(c->g, buf, m);
        for (int64_t j = 0; j < m; j++, p += st) {
            float x = u01_f32(buf[j]);
            float v = fused ? fmaf(x, range, from) : mul_add_2rf(x, range, from);
            uint16_t h = dt == MT_F16 ? mt__f32_to_f16(v) : mt__f32_to_bf16(v);
            float hv = dt == MT_F16 ? mt__f16_to_f32(h) : mt__bf16_to_f32(h);
            *(uint16_t *)p = hv == to_v ? from_h : h;
        }
    }
    return 0;
}

static const double dtype_max[] = {1, 255, 127, 32767, 2147483647.0, 9223372036854775807.0, 65504.0,
                                   3.3895313892515355e+38, 3.4028234663852886e+38, 1.7976931348623157e+308,
                                   57344.0, 448.0, 57344.0, 240.0, 1.7014118346046923e+38,
                                   3.4028234663852886e+38, 1.7976931348623157e+308};
MT_DTYPE_TABLE(dtype_max);

mt_status mt__impl_view_as_real(mt_tensor *t, mt_tensor **out);

/* PyTorch fills a complex tensor through its real view: uniform_ as is, normal_ with std / sqrt(2)
 * (each part carries half the variance) */
static mt_status fill_real_view(mt_tensor *t, int normal, double a, double b, mt_generator *g) {
    mt_tensor *r;
    MT_TRY(mt__impl_view_as_real(t, &r));
    mt_status st = normal ? mt_normal_(r, a, b / sqrt(2.0), g) : mt_uniform_(r, a, b, g);
    mt_tensor_release(r);
    return st;
}

mt_status mt_uniform_(mt_tensor *t, double from, double to, mt_generator *g) {
    MT_PROFILE("uniform_", t);
    int dt = t->dtype;
    if (mt__is_complex(dt)) return fill_real_view(t, 0, from, to, g);
    if (!mt__is_float(dt)) return not_implemented("check_uniform_bounds", dt);
    double max = dtype_max[dt], min = -max;
    char b1[32], b2[32];
    if (!(from >= min && from <= max))
        return mt__error(MT_ERR_RUNTIME, "from is out of bounds for %s", typemeta_names[dt]);
    if (!(to >= min && to <= max))
        return mt__error(MT_ERR_RUNTIME, "to is out of bounds for %s", typemeta_names[dt]);
    if (!(from <= to))
        return mt__error(MT_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%s > to=%s",
                         fmt_double(b1, 32, from), fmt_double(b2, 32, to));
    if (!((to - from) <= max))
        return mt__error(MT_ERR_RUNTIME,
                         "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%s and from=%s "
                         "which result in to-from to exceed the limit",
                         mt_dtype_names[dt], fmt_double(b2, 32, to), fmt_double(b1, 32, from));
    if (t->device != MT_CPU || mt_tensor_numel(t) == 0) return MT_OK;
    rctx c = {.g = mt__gen_resolve(g), .dt = dt, .a = from, .b = to, .af = (float)from, .bf = (float)to};
    mt__gen_lock(c.g);
    walk1(t, row_uniform, &c);
    mt__gen_unlock(c.g);
    mt_tensor_bump_version(t);
    return MT_OK;
}

/* ================================ normal_ ====================================== */

/* at::normal_distribution<double>: Box-Muller with the cached second value */
static inline double normal_scalar(mt_generator *g, double mean, double std, int fused) {
    double ret;
    if (!mt__gen_take_normal(g, &ret)) {
        double u1 = u01_f64(mt__gen_random64(g));
        double u2 = u01_f64(mt__gen_random64(g));
        double r = sqrt(-2.0 * log1p(-u2));
        double theta = TWO_PI * u1;
        double sn = sin(theta), cs = cos(theta);
        mt__gen_put_normal(g, r * sn);
        ret = r * cs;
    }
    return fused ? fma(ret, std, mean) : mul_add_2r(ret, std, mean);
}

/* one uniform_real_distribution<double>(0, 1) / normal_distribution<double>(0, 1) draw, for the
 * per-element samplers (samplers.c); the caller holds the generator's lock */
double mt__gen_uniform01(mt_generator *g) { return u01_f64(mt__gen_random64(g)); }
double mt__gen_normal01(mt_generator *g) { return normal_scalar(g, 0.0, 1.0, 0); }

static int row_normal(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    int fused = cap_fma();
    for (int64_t i = 0; i < n; i++, p += s[0]) store_f64(p, c->dt, normal_scalar(c->g, c->a, c->b, fused));
    return 0;
}

/* NormalFill16<double> (the scalar template) */
static void fill16_f64(double *d, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        double u1 = 1 - d[j];
        double u2 = d[j + 8];
        double radius = sqrt(-2 * log(u1));
        double theta = TWO_PI * u2;
        double sn = sin(theta), cs = cos(theta);
        d[j] = fma(radius * cs, std, mean);
        d[j + 8] = fma(radius * sn, std, mean);
    }
}

/* NormalFill16<float> (the scalar template, used by PyTorch's AVX-512 and default builds) */
static void fill16_f32(float *d, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        float u1 = 1 - d[j];
        float u2 = d[j + 8];
        float radius = sqrtf(-2 * logf(u1));
        float theta = (float)(TWO_PI * (double)u2);
        float sn = sinf(theta), cs = cosf(theta);
        d[j] = fmaf(radius * cs, std, mean);
        d[j + 8] = fmaf(radius * sn, std, mean);
    }
}

/* ---- NormalFill16<float> of PyTorch's AVX2 build: avx_mathfun's log256_ps and
 * sincos256_ps evaluated lane by lane, with the multiply-adds GCC contracts in
 * that build (-mfma, -ffp-contract=fast) written as the fmas they become: a
 * multiply feeding an add/sub is fused; where both operands of the add are
 * products, the first product in program order is the fused one. */

#define F(x) ((float)(x)) /* avx_mathfun's _PS256_CONST: a double literal stored as float */
static inline float avx_log(float x) {
    int invalid = x <= F(0.0);
    const float min_norm = mt__bits_f32(0x00800000u);
    x = x > min_norm ? x : min_norm; /* _mm256_max_ps(x, min_norm_pos) */
    int32_t imm0 = (int32_t)(mt__f32_bits(x) >> 23);
    x = mt__bits_f32((mt__f32_bits(x) & ~0x7f800000u) | 0x3f000000u); /* mantissa, exponent of 0.5 */
    imm0 -= 0x7f;
    float e = (float)imm0 + F(1.0);
    int mask = x < F(0.707106781186547524);
    float tmp = mask ? x : F(0.0);
    x = x - F(1.0);
    e = e - (mask ? F(1.0) : F(0.0));
    x = x + tmp;
    float z = x * x;
    float y = F(7.0376836292E-2);
    y = fmaf(y, x, F(-1.1514610310E-1));
    y = fmaf(y, x, F(1.1676998740E-1));
    y = fmaf(y, x, F(-1.2420140846E-1));
    y = fmaf(y, x, F(+1.4249322787E-1));
    y = fmaf(y, x, F(-1.6668057665E-1));
    y = fmaf(y, x, F(+2.0000714765E-1));
    y = fmaf(y, x, F(-2.4999993993E-1));
    y = fmaf(y, x, F(+3.3333331174E-1));
    y = y * x;
    y = fmaf(y, z, e * F(-2.12194440e-4)); /* y*z + e*q1 */
    y = fmaf(-z, F(0.5), y);               /* y - z*0.5 */
    x = fmaf(e, F(0.693359375), x + y);    /* (x + y) + e*q2 */
    if (invalid) x = mt__bits_f32(0xffffffffu);
    return x;
}

static inline void avx_sincos(float x, float *s, float *c) {
    uint32_t sign_bit_sin = mt__f32_bits(x) & 0x80000000u;
    x = mt__bits_f32(mt__f32_bits(x) & 0x7fffffffu);
    float y = x * F(1.27323954473516);
    int32_t imm2 = (int32_t)y; /* cvttps; theta is in [0, 2pi) here */
    imm2 = (imm2 + 1) & ~1;
    y = (float)imm2;
    uint32_t swap_sign_bit_sin = ((uint32_t)(imm2 & 4)) << 29;
    int poly_mask = (imm2 & 2) == 0;
    x = fmaf(y, F(-0.78515625), x);
    x = fmaf(y, F(-2.4187564849853515625e-4), x);
    x = fmaf(y, F(-3.77489497744594108e-8), x);
    uint32_t sign_bit_cos = ((uint32_t)(~(imm2 - 2) & 4)) << 29;
    sign_bit_sin ^= swap_sign_bit_sin;
    float z = x * x;
    float yc = F(2.443315711809948E-005);
    yc = fmaf(yc, z, F(-1.388731625493765E-003));
    yc = fmaf(yc, z, F(4.166664568298827E-002));
    yc = yc * z;
    yc = fmaf(yc, z, -(z * F(0.5))); /* y*z - z*0.5 */
    yc = yc + F(1.0);
    float y2 = F(-1.9515295891E-4);
    y2 = fmaf(y2, z, F(8.3321608736E-3));
    y2 = fmaf(y2, z, F(-1.6666654611E-1));
    y2 = y2 * z;
    y2 = fmaf(y2, x, x);
    float ysin2 = poly_mask ? y2 : F(0.0);
    float ysin1 = poly_mask ? F(0.0) : yc;
    y2 = y2 - ysin2;
    yc = yc - ysin1;
    *s = mt__bits_f32(mt__f32_bits(ysin1 + ysin2) ^ sign_bit_sin);
    *c = mt__bits_f32(mt__f32_bits(yc + y2) ^ sign_bit_cos);
}

__attribute__((unused)) static void fill16_f32_avx2(float *d, float mean, float std) {
    const float two_pi = (float)TWO_PI;
    float out[16];
    for (int j = 0; j < 8; j++) {
        float u1 = F(1.0) - d[j];
        float u2 = d[j + 8];
        float radius = sqrtf(F(-2.0) * avx_log(u1));
        float sn, cs;
        avx_sincos(two_pi * u2, &sn, &cs);
        out[j] = fmaf(radius * cs, std, mean);
        out[j + 8] = fmaf(radius * sn, std, mean);
    }
    memcpy(d, out, sizeof out);
}


#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define AVX2_FN static inline __attribute__((target("avx2,fma"), always_inline))

/* The same, eight lanes at a time (what PyTorch's AVX2 build executes). */
AVX2_FN __m256 log256_fused(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
    __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
    x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));
    __m256i imm0 = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000)));
    x = _mm256_or_ps(x, half);
    imm0 = _mm256_sub_epi32(imm0, _mm256_set1_epi32(0x7f));
    __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(imm0), one);
    __m256 mask = _mm256_cmp_ps(x, _mm256_set1_ps(F(0.707106781186547524)), _CMP_LT_OS);
    __m256 tmp = _mm256_and_ps(x, mask);
    x = _mm256_sub_ps(x, one);
    e = _mm256_sub_ps(e, _mm256_and_ps(one, mask));
    x = _mm256_add_ps(x, tmp);
    __m256 z = _mm256_mul_ps(x, x);
    __m256 y = _mm256_set1_ps(F(7.0376836292E-2));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(-1.1514610310E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(1.1676998740E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(-1.2420140846E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(+1.4249322787E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(-1.6668057665E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(+2.0000714765E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(-2.4999993993E-1)));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(F(+3.3333331174E-1)));
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, _mm256_set1_ps(F(-2.12194440e-4))));
    y = _mm256_fnmadd_ps(z, half, y);
    x = _mm256_fmadd_ps(e, _mm256_set1_ps(F(0.693359375)), _mm256_add_ps(x, y));
    return _mm256_or_ps(x, invalid);
}

AVX2_FN void sincos256_fused(__m256 x, __m256 *s, __m256 *c) {
    const __m256i i1 = _mm256_set1_epi32(1), i2 = _mm256_set1_epi32(2), i4 = _mm256_set1_epi32(4);
    __m256 sign_bit_sin = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000)));
    x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~(int)0x80000000)));
    __m256 y = _mm256_mul_ps(x, _mm256_set1_ps(F(1.27323954473516)));
    __m256i imm2 = _mm256_cvttps_epi32(y);
    imm2 = _mm256_add_epi32(imm2, i1);
    imm2 = _mm256_and_si256(imm2, _mm256_set1_epi32(~1));
    y = _mm256_cvtepi32_ps(imm2);
    __m256i imm4 = imm2;
    __m256i imm0 = _mm256_slli_epi32(_mm256_and_si256(imm2, i4), 29);
    imm2 = _mm256_cmpeq_epi32(_mm256_and_si256(imm2, i2), _mm256_setzero_si256());
    __m256 swap_sign_bit_sin = _mm256_castsi256_ps(imm0);
    __m256 poly_mask = _mm256_castsi256_ps(imm2);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps(F(-0.78515625)), x);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps(F(-2.4187564849853515625e-4)), x);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps(F(-3.77489497744594108e-8)), x);
    imm4 = _mm256_sub_epi32(imm4, i2);
    imm4 = _mm256_andnot_si256(imm4, i4);
    imm4 = _mm256_slli_epi32(imm4, 29);
    __m256 sign_bit_cos = _mm256_castsi256_ps(imm4);
    sign_bit_sin = _mm256_xor_ps(sign_bit_sin, swap_sign_bit_sin);
    __m256 z = _mm256_mul_ps(x, x);
    __m256 yc = _mm256_set1_ps(F(2.443315711809948E-005));
    yc = _mm256_fmadd_ps(yc, z, _mm256_set1_ps(F(-1.388731625493765E-003)));
    yc = _mm256_fmadd_ps(yc, z, _mm256_set1_ps(F(4.166664568298827E-002)));
    yc = _mm256_mul_ps(yc, z);
    yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
    yc = _mm256_add_ps(yc, _mm256_set1_ps(1.0f));
    __m256 y2 = _mm256_set1_ps(F(-1.9515295891E-4));
    y2 = _mm256_fmadd_ps(y2, z, _mm256_set1_ps(F(8.3321608736E-3)));
    y2 = _mm256_fmadd_ps(y2, z, _mm256_set1_ps(F(-1.6666654611E-1)));
    y2 = _mm256_mul_ps(y2, z);
    y2 = _mm256_fmadd_ps(y2, x, x);
    __m256 ysin2 = _mm256_and_ps(poly_mask, y2);
    __m256 ysin1 = _mm256_andnot_ps(poly_mask, yc);
    y2 = _mm256_sub_ps(y2, ysin2);
    yc = _mm256_sub_ps(yc, ysin1);
    *s = _mm256_xor_ps(_mm256_add_ps(ysin1, ysin2), sign_bit_sin);
    *c = _mm256_xor_ps(_mm256_add_ps(yc, y2), sign_bit_cos);
}

__attribute__((target("avx2,fma"))) static void fill16_f32_avx2_simd(float *d, float mean, float std) {
    const __m256 u1 = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(d));
    const __m256 u2 = _mm256_loadu_ps(d + 8);
    const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), log256_fused(u1)));
    const __m256 theta = _mm256_mul_ps(_mm256_set1_ps((float)TWO_PI), u2);
    __m256 sn, cs;
    sincos256_fused(theta, &sn, &cs);
    const __m256 m = _mm256_set1_ps(mean), sd = _mm256_set1_ps(std);
    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, cs), sd, m));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, sn), sd, m));
}
#define HAVE_AVX2_SIMD 1
#endif

static void fill16_float(float *d, float mean, float std) {
    if (cap_avx2_normal()) {
#ifdef HAVE_AVX2_SIMD
        fill16_f32_avx2_simd(d, mean, std);
#else
        fill16_f32_avx2(d, mean, std); /* the lane-by-lane reference (bit-identical) */
#endif
    } else {
        fill16_f32(d, mean, std);
    }
}

typedef struct fill_ctx {
    double *d64;
    float *d32;
    double mean, std;
    float fmean, fstd;
} fill_ctx;

static void blocks_f64(void *vc, int64_t b, int64_t e) {
    fill_ctx *c = vc;
    for (; b < e; b++) fill16_f64(c->d64 + 16 * b, c->mean, c->std);
}

static void blocks_f32(void *vc, int64_t b, int64_t e) {
    fill_ctx *c = vc;
    for (; b < e; b++) fill16_float(c->d32 + 16 * b, c->fmean, c->fstd);
}

static void normal_fill(mt_tensor *t, mt_generator *g, double mean, double std) {
    int64_t size = mt_tensor_numel(t);
    char *data = mt__data(t);
    int dt = t->dtype;
    if (dt == MT_F64) {
        double *d = (double *)data;
        for (int64_t i = 0; i < size; i += CHUNK) {
            uint64_t buf[CHUNK];
            int64_t m = size - i < CHUNK ? size - i : CHUNK;
            mt__gen_u64(g, buf, m);
            for (int64_t j = 0; j < m; j++) d[i + j] = u01_f64(buf[j]);
        }
        fill_ctx fc = {.d64 = d, .mean = mean, .std = std};
        mt__parallel_for(size / 16, 2048, blocks_f64, &fc); /* blocks are independent */
        if (size % 16 != 0) {
            double *tail = d + size - 16;
            uint64_t buf[16];
            mt__gen_u64(g, buf, 16);
            for (int j = 0; j < 16; j++) tail[j] = u01_f64(buf[j]);
            fill16_f64(tail, mean, std);
        }
        return;
    }
    float fmean = (float)mean, fstd = (float)std;
    if (dt == MT_F32) {
        float *d = (float *)data;
        for (int64_t i = 0; i < size; i += CHUNK) {
            uint32_t buf[CHUNK];
            int64_t m = size - i < CHUNK ? size - i : CHUNK;
            mt__gen_u32(g, buf, m);
            for (int64_t j = 0; j < m; j++) d[i + j] = u01_f32(buf[j]);
        }
        fill_ctx fc = {.d32 = d, .fmean = fmean, .fstd = fstd};
        mt__parallel_for(size / 16, 2048, blocks_f32, &fc);
        if (size % 16 != 0) {
            float *tail = d + size - 16;
            uint32_t buf[16];
            mt__gen_u32(g, buf, 16);
            for (int j = 0; j < 16; j++) tail[j] = u01_f32(buf[j]);
            fill16_float(tail, fmean, fstd);
        }
        return;
    }
    /* float16 / bfloat16: blocks of 16 in float, then rounded */
    uint16_t *d = (uint16_t *)data;
    float fb[16];
    uint32_t buf[16];
    for (int64_t i = 0; i < size - 15; i += 16) {
        mt__gen_u32(g, buf, 16);
        for (int j = 0; j < 16; j++) fb[j] = u01_f32(buf[j]);
        fill16_float(fb, fmean, fstd);
        for (int j = 0; j < 16; j++) d[i + j] = dt == MT_F16 ? mt__f32_to_f16(fb[j]) : mt__f32_to_bf16(fb[j]);
    }
    if (size % 16 != 0) {
        int64_t off = size - 16;
        mt__gen_u32(g, buf, 16);
        for (int j = 0; j < 16; j++) fb[j] = u01_f32(buf[j]);
        fill16_float(fb, fmean, fstd);
        for (int j = 0; j < 16; j++)
            d[off + j] = dt == MT_F16 ? mt__f32_to_f16(fb[j]) : mt__f32_to_bf16(fb[j]);
    }
}

static mt_status normal_locked(mt_tensor *t, double mean, double std, mt_generator *g) {
    if (mt_tensor_numel(t) >= 16 && mt_tensor_is_contiguous(t)) {
        normal_fill(t, g, mean, std);
    } else {
        rctx c = {.g = g, .dt = t->dtype, .a = mean, .b = std};
        walk1(t, row_normal, &c);
    }
    return MT_OK;
}

static mt_status check_std(double std) {
    char b[32];
    if (!(std >= 0.0))
        return mt__error(MT_ERR_RUNTIME, "normal expects std >= 0.0, but found std %s", fmt_double(b, 32, std));
    return MT_OK;
}

mt_status mt_normal_(mt_tensor *t, double mean, double std, mt_generator *g) {
    MT_PROFILE("normal_", t);
    MT_TRY(check_std(std));
    if (mt_tensor_numel(t) == 0) return MT_OK;
    if (mt__is_complex(t->dtype)) return fill_real_view(t, 1, mean, std, g);
    if (!mt__is_float(t->dtype)) return not_implemented("normal_kernel_cpu", t->dtype);
    if (t->device != MT_CPU) return MT_OK;
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    normal_locked(t, mean, std, g);
    mt__gen_unlock(g);
    mt_tensor_bump_version(t);
    return MT_OK;
}

/* ================================ random_ ====================================== */

/* uniform_int_distribution<T>: random_() with no range */
static int row_random(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    int dt = c->dt;
    if (dt == MT_I64 || dt == MT_F64) {
        uint64_t buf[CHUNK];
        for (int64_t i = 0; i < n; i += CHUNK) {
            int64_t m = n - i < CHUNK ? n - i : CHUNK;
            mt__gen_u64(c->g, buf, m);
            for (int64_t j = 0; j < m; j++, p += s[0]) {
                if (dt == MT_I64) *(int64_t *)p = (int64_t)(buf[j] % ((uint64_t)INT64_MAX + 1));
                else *(double *)p = (double)(buf[j] % ((1ULL << 53) + 1));
            }
        }
        return 0;
    }
    uint32_t buf[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        mt__gen_u32(c->g, buf, m);
        for (int64_t j = 0; j < m; j++, p += s[0]) {
            uint32_t v = buf[j];
            switch (dt) {
            case MT_BOOL: *(uint8_t *)p = v & 1; break;
            case MT_U8: *(uint8_t *)p = (uint8_t)(v % 256u); break;
            case MT_I8: *(int8_t *)p = (int8_t)(v % 128u); break;
            case MT_I16: *(int16_t *)p = (int16_t)(v % 32768u); break;
            case MT_I32: *(int32_t *)p = (int32_t)(v % 2147483648u); break;
            case MT_F32: *(float *)p = (float)(v % ((1u << 24) + 1)); break;
            case MT_F16: *(uint16_t *)p = mt__f32_to_f16((float)(v % ((1u << 11) + 1))); break;
            case MT_BF16: *(uint16_t *)p = mt__f32_to_bf16((float)(v % ((1u << 8) + 1))); break;
            }
        }
    }
    return 0;
}

/* uniform_int_from_to_distribution<T>: (val % range) + base */
static int row_from_to(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    uint64_t range = c->range, base = (uint64_t)c->base;
    int dt = c->dt;
    if (range >= (1ULL << 28)) {
        uint64_t buf[CHUNK];
        for (int64_t i = 0; i < n; i += CHUNK) {
            int64_t m = n - i < CHUNK ? n - i : CHUNK;
            mt__gen_u64(c->g, buf, m);
            for (int64_t j = 0; j < m; j++, p += s[0]) store_i64(p, dt, (int64_t)(buf[j] % range + base));
        }
    } else {
        uint32_t buf[CHUNK];
        for (int64_t i = 0; i < n; i += CHUNK) {
            int64_t m = n - i < CHUNK ? n - i : CHUNK;
            mt__gen_u32(c->g, buf, m);
            if (dt == MT_I64) {
                for (int64_t j = 0; j < m; j++, p += s[0])
                    *(int64_t *)p = (int64_t)((uint64_t)buf[j] % range + base);
            } else {
                for (int64_t j = 0; j < m; j++, p += s[0])
                    store_i64(p, dt, (int64_t)((uint64_t)buf[j] % range + base));
            }
        }
    }
    return 0;
}

/* uniform_int_full_range_distribution<T> */
static int row_full_range(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    uint64_t buf[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        mt__gen_u64(c->g, buf, m);
        for (int64_t j = 0; j < m; j++, p += s[0]) store_i64(p, c->dt, (int64_t)buf[j]);
    }
    return 0;
}

static int float_digits(int dt) {
    return dt == MT_F64 ? 53 : dt == MT_F32 ? 24 : dt == MT_F16 ? 11 : 8;
}

/* static_cast<int64_t>(static_cast<scalar_t>(v)) */
static int64_t through_float(int dt, int64_t v) {
    double r;
    switch (dt) {
    case MT_F64: r = (double)v; break;
    case MT_F32: r = (float)v; break;
    default: r = round16(dt, (float)v); break;
    }
    return mt__f2i(r);
}

static int64_t floor_log2(uint64_t v) {
    int n = 0;
    while (v >>= 1) ++n;
    return n;
}

/* update_from / update_to of ATen/native/DistributionTemplates.h */
static int64_t update_from(int dt, int64_t from) {
    int64_t a = (int64_t)((uint64_t)from + 1); /* wraps at INT64_MAX, as ATen's does in practice */
    int64_t from_plus_1 = through_float(dt, a);
    if (from_plus_1 < from) {
        uint64_t from_ = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
        int n = (int)floor_log2(from_);
        from = (int64_t)((uint64_t)from_plus_1 + (1ULL << (n - float_digits(dt) + 1)));
    }
    return from;
}

static int64_t update_to(int dt, int64_t to) {
    int64_t a = (int64_t)((uint64_t)to - 1); /* wraps at INT64_MIN */
    int64_t to_minus_1 = through_float(dt, a);
    if (to_minus_1 >= to) {
        uint64_t to_ = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
        int n = (int)floor_log2(to_);
        to = (int64_t)((uint64_t)to_minus_1 - (1ULL << (n - float_digits(dt) + 1)));
    }
    return to;
}

/* PyTorch's TORCH_WARN for float ranges wider than the mantissa: kept here for the
 * Python layer to raise as a UserWarning (mt_rand_take_warning). */
static _Thread_local char warn_buf[512];
static _Thread_local int warn_set;

static void set_warning(const char *name, int digits, const char *dtype_name) {
    snprintf(warn_buf, sizeof warn_buf,
             "%s is out of bounds [-(2^%d), 2^%d]. Due to precision limitations %s can support discrete uniform "
             "distribution only within this range. This warning will become an error in version 1.7 release, "
             "please fix the code in advance",
             name, digits, digits, dtype_name);
    warn_set = 1;
}

const char *mt_rand_take_warning(void) {
    if (!warn_set) return NULL;
    warn_set = 0;
    return warn_buf;
}

static mt_status check_from_to_in_range(int64_t from, int64_t to_inc, int dt) {
    if (mt__is_float(dt)) {
        double max = dtype_max[dt], min = -max;
        if (!((double)from >= min && (double)from <= max))
            return mt__error(MT_ERR_RUNTIME, "from is out of bounds for %s", typemeta_names[dt]);
        if (!((double)to_inc >= min && (double)to_inc <= max))
            return mt__error(MT_ERR_RUNTIME, "to - 1 is out of bounds for %s", typemeta_names[dt]);
        int digits = float_digits(dt);
        int64_t lim = (int64_t)1 << digits;
        const char *fname = typemeta_names[dt];
        if (from < -lim || from > lim) set_warning("from", digits, fname);
        if (to_inc < -lim || to_inc > lim) set_warning("to - 1", digits, fname);
        return MT_OK;
    }
    int64_t min, max;
    switch (dt) {
    case MT_BOOL: min = 0; max = 1; break;
    case MT_U8: min = 0; max = 255; break;
    case MT_I8: min = -128; max = 127; break;
    case MT_I16: min = -32768; max = 32767; break;
    case MT_I32: min = INT32_MIN; max = INT32_MAX; break;
    default: min = INT64_MIN; max = INT64_MAX; break;
    }
    if (!(from >= min && from <= max))
        return mt__error(MT_ERR_RUNTIME, "from is out of bounds for %s", typemeta_names[dt]);
    if (!(to_inc >= min && to_inc <= max))
        return mt__error(MT_ERR_RUNTIME, "to - 1 is out of bounds for %s", typemeta_names[dt]);
    return MT_OK;
}

static mt_status run_fill(mt_tensor *t, row_fn row, rctx *c) {
    if (t->device != MT_CPU || mt_tensor_numel(t) == 0) return MT_OK;
    c->g = mt__gen_resolve(c->g);
    mt__gen_lock(c->g);
    int rc = walk1(t, row, c);
    mt__gen_unlock(c->g);
    mt_tensor_bump_version(t);
    return rc ? MT_ERR_RUNTIME : MT_OK;
}

/* random_(): [0, 2^digits] for floating dtypes, [0, max] for integers */
mt_status mt_random_(mt_tensor *t, mt_generator *g) {
    MT_PROFILE("random_", t);
    if (mt__is_complex(t->dtype)) return not_implemented("random_kernel_cpu", t->dtype);
    rctx c = {.g = g, .dt = t->dtype};
    return run_fill(t, row_random, &c);
}

/* random_(from, to): [from, to) when has_to, else [from, dtype max] (the full 64-bit
 * range when from is INT64_MIN). */
mt_status mt_random_from_to_(mt_tensor *t, int64_t from, int64_t to, int has_to, mt_generator *g) {
    MT_PROFILE("random_", t);
    int dt = t->dtype;
    if (mt__is_complex(dt))
        return mt__error(MT_ERR_RUNTIME, "check_random_bounds handles only integral, floating-point and boolean types");
    rctx c = {.g = g, .dt = dt};
    if (has_to) {
        if (!(from < to))
            return mt__error(MT_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                             (long long)from, (long long)to);
        if (mt__is_float(dt)) {
            from = update_from(dt, from);
            to = update_to(dt, to);
            if (!(from < to))
                return mt__error(MT_ERR_RUNTIME,
                                 "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
                                 "got from=%lld >= to=%lld",
                                 (long long)from, (long long)to);
        }
        MT_TRY(check_from_to_in_range(from, to - 1, dt));
        c.range = (uint64_t)to - (uint64_t)from;
        c.base = from;
        return run_fill(t, row_from_to, &c);
    }
    if (from != INT64_MIN) {
        int64_t to_inc;
        if (mt__is_float(dt)) {
            int digits = float_digits(dt);
            to_inc = (int64_t)1 << digits;
            from = update_from(dt, from);
            if (!(from < to_inc))
                return mt__error(MT_ERR_RUNTIME,
                                 "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                                 "to dtype, but got from=%lld > to_inc=%lld",
                                 (long long)from, (long long)to_inc);
        } else {
            switch (dt) {
            case MT_BOOL: to_inc = 1; break;
            case MT_U8: to_inc = 255; break;
            case MT_I8: to_inc = 127; break;
            case MT_I16: to_inc = 32767; break;
            case MT_I32: to_inc = INT32_MAX; break;
            default: to_inc = INT64_MAX; break;
            }
        }
        MT_TRY(check_from_to_in_range(from, to_inc, dt));
        c.range = (uint64_t)to_inc - (uint64_t)from + 1;
        c.base = from;
        return run_fill(t, row_from_to, &c);
    }
    if (!(dt == MT_I64 || dt == MT_F64 || dt == MT_F32 || dt == MT_BF16)) {
        if (mt_tensor_numel(t) == 0) return MT_OK;
        if (dt == MT_F16 || dt == MT_BOOL) return not_implemented("random_full_64_bits_range_kernel_cpu", dt);
        return mt__error(MT_ERR_RUNTIME,
                         "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
    }
    return run_fill(t, row_full_range, &c);
}

/* ================================ bernoulli_ ===================================== */

static int row_bernoulli_scalar(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    double prob = c->a;
    uint64_t buf[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        mt__gen_u64(c->g, buf, m);
        for (int64_t j = 0; j < m; j++, p += s[0]) store_f64(p, c->dt, u01_f64(buf[j]) < prob ? 1.0 : 0.0);
    }
    return 0;
}

mt_status mt_bernoulli_(mt_tensor *t, double p, mt_generator *g) {
    MT_PROFILE("bernoulli_", t);
    if (mt__is_complex(t->dtype)) return not_implemented("bernoulli_scalar_cpu_", t->dtype);
    char b[32];
    if (!(0 <= p && p <= 1))
        return mt__error(MT_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%s", fmt_double(b, 32, p));
    rctx c = {.g = g, .dt = t->dtype, .a = p};
    return run_fill(t, row_bernoulli_scalar, &c);
}

static int row_bernoulli_tensor(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *o = ptr[0], *pp = ptr[1];
    for (int64_t i = 0; i < n; i++, o += s[0], pp += s[1]) {
        if (c->pdt == MT_F64) {
            double pv = *(const double *)pp;
            if (!(pv >= 0 && pv <= 1)) return 1;
            store_f64(o, c->dt, u01_f64(mt__gen_random64(c->g)) < pv ? 1.0 : 0.0);
        } else {
            float pv = (float)load_f64(pp, c->pdt);
            if (!(pv >= 0 && pv <= 1)) return 1;
            store_f64(o, c->dt, u01_f32(mt__gen_random(c->g)) < pv ? 1.0 : 0.0);
        }
    }
    return 0;
}

static const char *const legacy_names[] = {
    "BoolTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "HalfTensor", "BFloat16Tensor",
    "FloatTensor", "DoubleTensor", "Float8_e5m2Tensor", "Float8_e4m3fnTensor", "Float8_e5m2fnuzTensor",
    "Float8_e4m3fnuzTensor", "Float8_e8m0fnuTensor", "ComplexFloatTensor", "ComplexDoubleTensor"};
MT_DTYPE_TABLE(legacy_names);

mt_status mt_bernoulli_tensor_(mt_tensor *t, mt_tensor *p, mt_generator *g) {
    MT_PROFILE("bernoulli_", t, p);
    if (t->device != MT_META && p->device == MT_META) /* PyTorch's first check (the kernel read p's missing data) */
        return mt__error(MT_ERR_NOT_IMPLEMENTED, "Cannot inplace into non-meta tensor with meta tensor argument");
    if (mt__is_complex(t->dtype)) return not_implemented("bernoulli_tensor_cpu_self_", t->dtype);
    if (mt_tensor_numel(t) == 0) return MT_OK;
    /* expand_inplace(self, p): p must broadcast to self's shape */
    if (p->ndim > t->ndim) {
        char b1[256], b2[256];
        return mt__error(MT_ERR_RUNTIME,
                         "expand(torch.%s{%s}, size=%s): the number of sizes provided (%d) must be greater "
                         "or equal to the number of dimensions in the tensor (%d)",
                         legacy_names[p->dtype], mt__fmt_sizes(b1, sizeof b1, p->ndim, p->sizes),
                         mt__fmt_sizes(b2, sizeof b2, t->ndim, t->sizes), t->ndim, p->ndim);
    }
    for (int i = 0; i < p->ndim; i++) {
        int64_t ps = p->sizes[p->ndim - 1 - i], ts = t->sizes[t->ndim - 1 - i];
        if (ps != ts && ps != 1) {
            char b1[256], b2[256];
            return mt__error(MT_ERR_RUNTIME,
                             "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                             "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                             (long long)ts, (long long)ps, t->ndim - 1 - i,
                             mt__fmt_sizes(b1, sizeof b1, t->ndim, t->sizes), mt__fmt_sizes(b2, sizeof b2, p->ndim, p->sizes));
        }
    }
    if (!mt__is_float(p->dtype)) return not_implemented("bernoulli_tensor_cpu_p_", p->dtype);
    if (t->device != MT_CPU) return MT_OK;
    rctx c = {.g = mt__gen_resolve(g), .dt = t->dtype, .pdt = p->dtype};
    mt_iter it;
    mt_tensor *ops[2] = {t, p};
    mt__iter_init(&it, 2, ops);
    mt__gen_lock(c.g);
    int rc = walk(&it, row_bernoulli_tensor, &c);
    mt__gen_unlock(c.g);
    mt_tensor_bump_version(t);
    if (rc)
        return mt__error(MT_ERR_RUNTIME, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                                         "error message be improved?  If so, please report an enhancement request "
                                         "to PyTorch.)");
    return MT_OK;
}

/* ================================ exponential_ ==================================== */

static int row_exponential(void *vc, char **ptr, const int64_t *s, int64_t n) {
    rctx *c = vc;
    char *p = ptr[0];
    double k = -1.0 / c->a;
    uint64_t buf[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        mt__gen_u64(c->g, buf, m);
        if (c->dt == MT_F32) {
            float *q = (float *)p;
            int64_t sf = s[0] / 4;
            for (int64_t j = 0; j < m; j++) q[j * sf] = (float)(k * log1p(-u01_f64(buf[j])));
            p += m * s[0];
        } else {
            for (int64_t j = 0; j < m; j++, p += s[0]) store_f64(p, c->dt, k * log1p(-u01_f64(buf[j])));
        }
    }
    return 0;
}

mt_status mt_exponential_(mt_tensor *t, double lambd, mt_generator *g) {
    MT_PROFILE("exponential_", t);
    char b[32];
    if (!(lambd > 0.0))
        return mt__error(MT_ERR_RUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%s",
                         fmt_double(b, 32, lambd));
    if (mt_tensor_numel(t) == 0) return MT_OK;
    if (!mt__is_float(t->dtype))
        return mt__error(MT_ERR_RUNTIME,
                         "Exponential distribution is a continuous probability distribution. dtype must be a "
                         "floating point but you specified %s",
                         mt_dtype_names[t->dtype]);
    rctx c = {.g = g, .dt = t->dtype, .a = lambd};
    return run_fill(t, row_exponential, &c);
}

/* ================================ factories ======================================= */

mt_status mt_rand_new(int kind, int ndim, const int64_t *sizes, int dtype, int device, double f0, double f1,
                      int64_t i0, int64_t i1, mt_generator *g, mt_tensor **out) {
    MT_PROFILE(MT_PROF_NAME(mt__names_rand, kind));
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0) {
            char b[256];
            return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                             (long long)sizes[i], mt__fmt_sizes(b, sizeof b, ndim, sizes));
        }
    mt_tensor *t;
    MT_TRY(mt__alloc(ndim, sizes, NULL, dtype, device, &t));
    mt_status st;
    switch (kind) {
    case MT_RAND_UNIFORM: st = mt_uniform_(t, f0, f1, g); break;
    case MT_RAND_NORMAL: st = mt_normal_(t, f0, f1, g); break;
    case MT_RAND_INT: st = mt_random_(t, g); break;
    case MT_RAND_FROM_TO: st = mt_random_from_to_(t, i0, i1, 1, g); break;
    case MT_RAND_FROM: st = mt_random_from_to_(t, i0, 0, 0, g); break;
    case MT_RAND_BERNOULLI: st = mt_bernoulli_(t, f0, g); break;
    case MT_RAND_EXPONENTIAL: st = mt_exponential_(t, f0, g); break;
    default: st = mt__error(MT_ERR_VALUE, "mt_rand_new: unknown kind %d", kind); break;
    }
    if (st != MT_OK) {
        mt_tensor_release(t);
        return st;
    }
    mt_tensor_set_version(t, 0); /* a new tensor: filling it is not an in-place op on anything */
    *out = t;
    return MT_OK;
}

mt_status mt_rand_fill_(mt_tensor *t, int kind, double f0, double f1, int64_t i0, int64_t i1, mt_generator *g) {
    MT_PROFILE(MT_PROF_NAME(mt__names_rand_fill, kind), t);
    switch (kind) {
    case MT_RAND_UNIFORM: return mt_uniform_(t, f0, f1, g);
    case MT_RAND_NORMAL: return mt_normal_(t, f0, f1, g);
    case MT_RAND_INT: return mt_random_(t, g);
    case MT_RAND_FROM_TO: return mt_random_from_to_(t, i0, i1, 1, g);
    case MT_RAND_FROM: return mt_random_from_to_(t, i0, 0, 0, g);
    case MT_RAND_BERNOULLI: return mt_bernoulli_(t, f0, g);
    case MT_RAND_EXPONENTIAL: return mt_exponential_(t, f0, g);
    }
    return mt__error(MT_ERR_VALUE, "mt_rand_fill_: unknown kind %d", kind);
}

/* ================================ randperm ======================================== */

mt_status mt_randperm(int64_t n, int dtype, int device, mt_generator *g, mt_tensor **out) {
    MT_PROFILE("randperm");
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_VALUE, "randperm: unknown dtype %d", dtype);
    if (n < 0) return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: [%lld]",
                                (long long)n, (long long)n);
    /* check_supported_max_int_with_precision */
    int64_t top = n > 0 ? n - 1 : n;
    static const char *const ctype[MT_NUM_DTYPES] = {"bool", "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t",
                                                     "at::Half", "at::BFloat16", "float", "double"};
    if (mt__is_float8(dtype) || mt__is_complex(dtype)) return not_implemented("randperm", dtype);
    if (dtype != MT_BOOL && dtype != MT_I64 && !mt__is_float(dtype) && (double)top > dtype_max[dtype])
        return mt__error(MT_ERR_RUNTIME, "value cannot be converted to type %s without overflow", ctype[dtype]);
    if (dtype == MT_F16 && n > (1 << 11) + 1)
        return mt__error(MT_ERR_RUNTIME, "n cannot be greater than 2049 for Half type.");
    if (dtype == MT_F32 && n > (1 << 24) + 1)
        return mt__error(MT_ERR_RUNTIME, "n cannot be greater than 2^24+1 for Float type.");
    if (dtype == MT_F64 && n > (1LL << 53) + 1)
        return mt__error(MT_ERR_RUNTIME, "n cannot be greater than 2^53+1 for Double type.");
    if (dtype == MT_BOOL) return not_implemented("randperm", dtype);
    mt_tensor *t;
    MT_TRY(mt__alloc(1, &n, NULL, dtype, device, &t));
    if (device == MT_CPU && n > 0) {
        g = mt__gen_resolve(g);
        char *d = mt__data(t);
        int isz = mt_dtype_itemsize(dtype);
        mt__gen_lock(g);
        if (n < (int64_t)(UINT32_MAX / 20)) {
            if (dtype == MT_I64) {
                int64_t *r = (int64_t *)d;
                for (int64_t i = 0; i < n; i++) r[i] = i;
                for (int64_t i = 0; i < n - 1; i++) {
                    int64_t z = (int64_t)(mt__gen_random(g) % (uint64_t)(n - i));
                    int64_t sav = r[i];
                    r[i] = r[z + i];
                    r[z + i] = sav;
                }
            } else {
                for (int64_t i = 0; i < n; i++) store_i64(d + i * isz, dtype, i);
                char sav[8];
                for (int64_t i = 0; i < n - 1; i++) {
                    int64_t z = (int64_t)(mt__gen_random(g) % (uint64_t)(n - i));
                    memcpy(sav, d + i * isz, isz);
                    memcpy(d + i * isz, d + (z + i) * isz, isz);
                    memcpy(d + (z + i) * isz, sav, isz);
                }
            }
        } else {
            /* inside-out Fisher-Yates with random64 */
            for (int64_t i = 0; i < n; i++) {
                int64_t z = (int64_t)(mt__gen_random64(g) % (uint64_t)(i + 1));
                store_i64(d + i * isz, dtype, i);
                memcpy(d + i * isz, d + z * isz, isz);
                store_i64(d + z * isz, dtype, i);
            }
        }
        mt__gen_unlock(g);
    }
    *out = t;
    return MT_OK;
}

/* ================================ multinomial ===================================== */

/* ---- topk for multinomial without replacement --------------------------------
 * PyTorch's topk_impl_loop (largest, sorted) runs std::partial_sort when
 * k * 64 <= n and otherwise std::nth_element then std::sort of the first k - 1.
 * Equal values (zero probabilities; float16/bfloat16 quotients) come out in the
 * order libstdc++'s algorithms leave them, so those algorithms are ported here
 * step for step (bits/stl_algo.h, bits/stl_heap.h). */

typedef struct { double v; int64_t i; } vi_pair;

static inline int vi_less(const vi_pair *x, const vi_pair *y) { /* "comes first" */
    return (isnan(x->v) && !isnan(y->v)) || x->v > y->v;
}
static inline void vi_swap(vi_pair *a, vi_pair *b) { vi_pair t = *a; *a = *b; *b = t; }
static int64_t lg2(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

static void push_heap_(vi_pair *first, int64_t hole, int64_t top, vi_pair value) {
    int64_t parent = (hole - 1) / 2;
    while (hole > top && vi_less(first + parent, &value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void adjust_heap(vi_pair *first, int64_t hole, int64_t len, vi_pair value) {
    int64_t top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (vi_less(first + child, first + (child - 1))) child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    push_heap_(first, hole, top, value);
}

static void make_heap_(vi_pair *first, vi_pair *last) {
    int64_t len = last - first;
    if (len < 2) return;
    for (int64_t parent = (len - 2) / 2;; parent--) {
        adjust_heap(first, parent, len, first[parent]);
        if (parent == 0) return;
    }
}

static void pop_heap_(vi_pair *first, vi_pair *last, vi_pair *result) {
    vi_pair value = *result;
    *result = *first;
    adjust_heap(first, 0, last - first, value);
}

static void heap_select(vi_pair *first, vi_pair *middle, vi_pair *last) {
    make_heap_(first, middle);
    for (vi_pair *i = middle; i < last; ++i)
        if (vi_less(i, first)) pop_heap_(first, middle, i);
}

static void sort_heap_(vi_pair *first, vi_pair *last) {
    while (last - first > 1) {
        --last;
        pop_heap_(first, last, last);
    }
}

static void partial_sort_(vi_pair *first, vi_pair *middle, vi_pair *last) {
    heap_select(first, middle, last);
    sort_heap_(first, middle);
}

static void unguarded_linear_insert(vi_pair *last) {
    vi_pair val = *last;
    vi_pair *next = last - 1;
    while (vi_less(&val, next)) {
        *last = *next;
        last = next;
        --next;
    }
    *last = val;
}

static void insertion_sort(vi_pair *first, vi_pair *last) {
    if (first == last) return;
    for (vi_pair *i = first + 1; i != last; ++i) {
        if (vi_less(i, first)) {
            vi_pair val = *i;
            memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
            *first = val;
        } else {
            unguarded_linear_insert(i);
        }
    }
}

static void move_median_to_first(vi_pair *result, vi_pair *a, vi_pair *b, vi_pair *c) {
    if (vi_less(a, b)) {
        if (vi_less(b, c)) vi_swap(result, b);
        else if (vi_less(a, c)) vi_swap(result, c);
        else vi_swap(result, a);
    } else if (vi_less(a, c)) {
        vi_swap(result, a);
    } else if (vi_less(b, c)) {
        vi_swap(result, c);
    } else {
        vi_swap(result, b);
    }
}

static vi_pair *unguarded_partition(vi_pair *first, vi_pair *last, vi_pair *pivot) {
    for (;;) {
        while (vi_less(first, pivot)) ++first;
        --last;
        while (vi_less(pivot, last)) --last;
        if (!(first < last)) return first;
        vi_swap(first, last);
        ++first;
    }
}

static vi_pair *unguarded_partition_pivot(vi_pair *first, vi_pair *last) {
    vi_pair *mid = first + (last - first) / 2;
    move_median_to_first(first, first + 1, mid, last - 1);
    return unguarded_partition(first + 1, last, first);
}

static void introselect(vi_pair *first, vi_pair *nth, vi_pair *last, int64_t depth) {
    while (last - first > 3) {
        if (depth == 0) {
            heap_select(first, nth + 1, last);
            vi_swap(first, nth);
            return;
        }
        --depth;
        vi_pair *cut = unguarded_partition_pivot(first, last);
        if (cut <= nth) first = cut;
        else last = cut;
    }
    insertion_sort(first, last);
}

static void nth_element_(vi_pair *first, vi_pair *nth, vi_pair *last) {
    if (first == last || nth == last) return;
    introselect(first, nth, last, lg2(last - first) * 2);
}

static void introsort_loop(vi_pair *first, vi_pair *last, int64_t depth) {
    while (last - first > 16) {
        if (depth == 0) {
            partial_sort_(first, last, last);
            return;
        }
        --depth;
        vi_pair *cut = unguarded_partition_pivot(first, last);
        introsort_loop(cut, last, depth);
        last = cut;
    }
}

static void sort_(vi_pair *first, vi_pair *last) {
    if (first == last) return;
    introsort_loop(first, last, lg2(last - first) * 2);
    if (last - first > 16) {
        insertion_sort(first, first + 16);
        for (vi_pair *i = first + 16; i != last; ++i) unguarded_linear_insert(i);
    } else {
        insertion_sort(first, last);
    }
}

static void topk_largest_sorted(vi_pair *q, int64_t n, int64_t k) {
    if (k * 64 <= n) {
        partial_sort_(q, q + k, q + n);
    } else {
        nth_element_(q, q + k - 1, q + n);
        sort_(q, q + k - 1);
    }
}

mt_status mt_multinomial(mt_tensor *self, int64_t n_sample, int replacement, mt_generator *g, mt_tensor **out) {
    MT_PROFILE("multinomial", self);
    int dt = self->dtype;
    if (!(self->ndim > 0 && self->ndim <= 2)) return mt__error(MT_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
    if (!mt__is_float(dt))
        return mt__error(MT_ERR_RUNTIME, "multinomial only supports floating-point dtypes for input, got: %s",
                         mt_dtype_names[dt]);
    if (!(n_sample > 0)) return mt__error(MT_ERR_RUNTIME, "cannot sample n_sample <= 0 samples");
    int64_t n_cat = self->sizes[self->ndim - 1];
    if (!(replacement || n_sample <= n_cat))
        return mt__error(MT_ERR_RUNTIME, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    if (n_cat > (1 << 24)) return mt__error(MT_ERR_RUNTIME, "number of categories cannot exceed 2^24");
    int64_t n_dist = self->ndim == 2 ? self->sizes[0] : 1;
    int64_t osz[2] = {n_dist, n_sample};
    mt_tensor *res;
    if (self->ndim == 1) MT_TRY(mt__alloc(1, &n_sample, NULL, MT_I64, self->device, &res));
    else MT_TRY(mt__alloc(2, osz, NULL, MT_I64, self->device, &res));
    if (mt_tensor_numel(res) == 0 || self->device != MT_CPU) {
        *out = res;
        return MT_OK;
    }
    int64_t *r = (int64_t *)mt__data(res);
    const char *sp = mt__data(self);
    int isz = mt_dtype_itemsize(dt);
    int64_t s0 = self->ndim == 2 ? mt__wmul(self->strides[0], isz) : 0, s1 = mt__wmul(self->strides[self->ndim - 1], isz);
    g = mt__gen_resolve(g);

    if (!replacement || n_sample == 1) {
        /* validity: max < inf and min >= 0, and no all-zero row */
        int valid = 1;
        for (int64_t i = 0; i < n_dist && valid; i++)
            for (int64_t j = 0; j < n_cat; j++) {
                double v = load_f64(sp + i * s0 + j * s1, dt);
                if (!(v < INFINITY && v >= 0)) { valid = 0; break; }
            }
        if (!valid) {
            mt_tensor_release(res);
            return mt__error(MT_ERR_RUNTIME, "probability tensor contains either `inf`, `nan` or element < 0");
        }
        for (int64_t i = 0; i < n_dist; i++) {
            int64_t j = 0;
            while (j < n_cat && load_f64(sp + i * s0 + j * s1, dt) == 0) j++;
            if (j == n_cat) {
                mt_tensor_release(res);
                return mt__error(MT_ERR_RUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)");
            }
        }
        /* q = empty_like(self).exponential_(1): q follows self's layout */
        int64_t qstr[2];
        mt__like_strides(self, qstr);
        mt_tensor *q;
        mt_status st = mt__alloc(self->ndim, self->sizes, qstr, dt, MT_CPU, &q);
        if (st != MT_OK) { mt_tensor_release(res); return st; }
        st = mt_exponential_(q, 1.0, g);
        if (st != MT_OK) { mt_tensor_release(q); mt_tensor_release(res); return st; }
        /* q = self / q in self's dtype, then argmax / topk along the last dim */
        const char *qp = mt__data(q);
        int64_t q0 = self->ndim == 2 ? mt__wmul(q->strides[0], isz) : 0, q1 = mt__wmul(q->strides[q->ndim - 1], isz);
        vi_pair *row = malloc((size_t)n_cat * sizeof *row);
        if (!row) { mt_tensor_release(q); mt_tensor_release(res); return mt__error(MT_ERR_OOM, "out of memory"); }
        for (int64_t i = 0; i < n_dist; i++) {
            for (int64_t j = 0; j < n_cat; j++) {
                const char *a = sp + i * s0 + j * s1, *b = qp + i * q0 + j * q1;
                double v;
                if (dt == MT_F64) v = *(const double *)a / *(const double *)b;
                else if (dt == MT_F32) v = *(const float *)a / *(const float *)b;
                else v = round16(dt, (float)load_f64(a, dt) / (float)load_f64(b, dt));
                row[j].v = v;
                row[j].i = j;
            }
            if (n_sample == 1) {
                int64_t best = 0;
                for (int64_t j = 1; j < n_cat && !isnan(row[best].v); j++)
                    if (isnan(row[j].v) || row[j].v > row[best].v) best = j;
                r[i] = best;
            } else {
                topk_largest_sorted(row, n_cat, n_sample);
                for (int64_t j = 0; j < n_sample; j++) r[i * n_sample + j] = row[j].i;
            }
        }
        free(row);
        mt_tensor_release(q);
        *out = res;
        return MT_OK;
    }

    /* with replacement: cumulative distribution (scalar_t, float for 16-bit types) + binary search */
    mt_status st = MT_OK;
    mt__gen_lock(g);
    if (dt == MT_F64) {
        double *cum = malloc((size_t)n_cat * sizeof *cum);
        for (int64_t i = 0; i < n_dist && st == MT_OK; i++) {
            double sum = 0;
            for (int64_t j = 0; j < n_cat; j++) {
                double val = *(const double *)(sp + i * s0 + j * s1);
                if (!(val >= 0)) { st = 1; break; }
                if (!isfinite(val)) { st = 2; break; }
                sum += val;
                cum[j] = sum;
            }
            if (st == MT_OK && !(sum > 0)) st = 3;
            if (st != MT_OK) break;
            for (int64_t j = 0; j < n_cat; j++) cum[j] /= sum;
            cum[n_cat - 1] = 1;
            for (int64_t j = 0; j < n_sample; j++) {
                double u = u01_f64(mt__gen_random64(g));
                int64_t lo = 0, hi = n_cat;
                while (hi - lo > 0) {
                    int64_t mid = lo + (hi - lo) / 2;
                    if (cum[mid] < u) lo = mid + 1;
                    else hi = mid;
                }
                r[i * n_sample + j] = lo;
            }
        }
        free(cum);
    } else {
        float *cum = malloc((size_t)n_cat * sizeof *cum);
        for (int64_t i = 0; i < n_dist && st == MT_OK; i++) {
            float sum = 0;
            for (int64_t j = 0; j < n_cat; j++) {
                float val = (float)load_f64(sp + i * s0 + j * s1, dt);
                if (!(val >= 0)) { st = 1; break; }
                if (!isfinite(val)) { st = 2; break; }
                sum += val;
                cum[j] = sum;
            }
            if (st == MT_OK && !(sum > 0)) st = 3;
            if (st != MT_OK) break;
            for (int64_t j = 0; j < n_cat; j++) cum[j] /= sum;
            cum[n_cat - 1] = 1;
            for (int64_t j = 0; j < n_sample; j++) {
                double u = u01_f64(mt__gen_random64(g));
                int64_t lo = 0, hi = n_cat;
                while (hi - lo > 0) {
                    int64_t mid = lo + (hi - lo) / 2;
                    if ((double)cum[mid] < u) lo = mid + 1;
                    else hi = mid;
                }
                r[i * n_sample + j] = lo;
            }
        }
        free(cum);
    }
    mt__gen_unlock(g);
    if (st != MT_OK) {
        mt_tensor_release(res);
        if (st == 1)
            return mt__error(MT_ERR_RUNTIME, "invalid multinomial distribution (encountering probability entry < 0)");
        if (st == 2)
            return mt__error(MT_ERR_RUNTIME,
                             "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
        return mt__error(MT_ERR_RUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
    *out = res;
    return MT_OK;
}

/* ================================ normal with tensor arguments ===================== */

static mt_status check_std_tensor(mt_tensor *std) {
    if (mt_tensor_numel(std) == 0 || std->device != MT_CPU) return MT_OK;
    mt_tensor *c;
    MT_TRY(mt_contiguous(std, &c));
    int64_t n = mt_tensor_numel(c);
    const char *p = mt__data(c);
    int isz = mt_dtype_itemsize(c->dtype);
    int bad = 0;
    for (int64_t i = 0; i < n && !bad; i++) bad = !(load_f64(p + i * isz, c->dtype) >= 0);
    mt_tensor_release(c);
    if (bad) return mt__error(MT_ERR_RUNTIME, "normal expects all elements of std >= 0.0");
    return MT_OK;
}

static mt_status inplace(int op, mt_tensor *out, mt_tensor *other) {
    mt_tensor *r;
    MT_TRY(mt_binary(op, out, other, 1.0, out, &r));
    mt_tensor_release(r);
    return MT_OK;
}

/* torch.normal(mean, std) with mean and/or std tensors (NULL: use the double).
 * As PyTorch: output = normal_(0, std) + mean, or normal_(0, 1) * std + mean. */
mt_status mt_normal_tensors(mt_tensor *mean, mt_tensor *std, double mean_s, double std_s, mt_generator *g,
                            mt_tensor **out) {
    MT_PROFILE("normal", mean, std);
    mt_tensor *o = NULL;
    mt_status st;
    if (mean && !std) {
        MT_TRY(check_std(std_s));
        MT_TRY(mt__alloc(mean->ndim, mean->sizes, NULL, mean->dtype, mean->device, &o));
        st = mt_normal_(o, 0.0, std_s, g);
        if (st == MT_OK) st = inplace(MT_OP_ADD, o, mean);
    } else if (!mean && std) {
        MT_TRY(check_std_tensor(std));
        MT_TRY(mt__alloc(std->ndim, std->sizes, NULL, std->dtype, std->device, &o));
        st = mt_normal_(o, 0.0, 1.0, g);
        if (st == MT_OK) st = inplace(MT_OP_MUL, o, std);
        if (st == MT_OK) {
            mt_tensor *m;
            st = mt_scalar_tensor(mean_s, 0, MT_SCALAR_FLOAT, o->dtype, 0, &m);
            if (st == MT_OK) {
                st = inplace(MT_OP_ADD, o, m);
                mt_tensor_release(m);
            }
        }
    } else if (mean && std) {
        MT_TRY(check_std_tensor(std));
        int ndim;
        int64_t sizes[MT_MAX_DIMS];
        mt_tensor *both[2] = {mean, std};
        MT_TRY(mt__broadcast_shapes(2, both, &ndim, sizes));
        MT_TRY(mt__alloc(ndim, sizes, NULL, mean->dtype, mean->device, &o));
        st = mt_normal_(o, 0.0, 1.0, g);
        if (st == MT_OK) st = inplace(MT_OP_MUL, o, std);
        if (st == MT_OK) st = inplace(MT_OP_ADD, o, mean);
    } else {
        return mt__error(MT_ERR_VALUE, "mt_normal_tensors: mean or std must be a tensor");
    }
    if (st != MT_OK) {
        mt_tensor_release(o);
        return st;
    }
    *out = o;
    return MT_OK;
}
