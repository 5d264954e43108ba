/* samplers.c — PyTorch's per-element samplers and their reparameterization gradients, bit for bit:
 * torch._standard_gamma, torch._sample_dirichlet, torch.poisson, torch.binomial, torch._standard_gamma_grad,
 * torch._dirichlet_grad (ATen/native/Distributions.cpp and Distributions.h).
 *
 * Each sampler holds the generator's mutex for the whole call and runs PyTorch's rejection loop per element
 * in the order cpu_serial_kernel visits its contiguous output (row-major), drawing
 * uniform_real_distribution<double>(0, 1) and normal_distribution<double>(0, 1) values from the generator
 * exactly as PyTorch does. PyTorch compiles these outside its per-CPU-capability kernels, so nothing is
 * contracted into fma there, and nothing is here (the build has no -mfma).
 */
#include <float.h>
#include <math.h>
#include <tgmath.h>

#include "../../core/internal.h"
#include "special_math.h"

/* from core/rng.c and kernels/cpu/random.c */
mt_generator *mt__gen_resolve(mt_generator *g);
void mt__gen_lock(mt_generator *g);
void mt__gen_unlock(mt_generator *g);
double mt__gen_uniform01(mt_generator *g);
double mt__gen_normal01(mt_generator *g);

static inline double uniform01(mt_generator *g) { return mt__gen_uniform01(g); }
static inline double normal01(mt_generator *g) { return mt__gen_normal01(g); }

/* ATen's polevl: sum of A[i] x^(len - i), Horner's rule */
static inline double polevl(double x, const double *A, int len) {
    double result = 0;
    for (int i = 0; i <= len; i++) result = result * x + A[i];
    return result;
}

static const double digamma_A[] = {
    8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3, -4.16666666666666666667E-3,
    3.96825396825396825397E-3, -8.33333333333333333333E-3, 8.33333333333333333333E-2,
};

static double stirling_approx_tail(double k) {
    static const double tail[] = {0.0810614667953272,  0.0413406959554092,  0.0276779256849983,
                                  0.02079067210376509, 0.0166446911898211,  0.0138761288230707,
                                  0.0118967099458917,  0.0104112652619720,  0.00925546218271273,
                                  0.00833056343336287};
    if (k < 10) return tail[(size_t)k];
    double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

/* Beta's alpha gradient when alpha and beta are both large (Rice saddle point), all in double */
static double beta_grad_alpha_mid(double x, double alpha, double beta) {
    const double total = alpha + beta;
    const double mean = alpha / total;
    const double std = sqrt(alpha * beta / (total + 1)) / total;
    if (mean - 0.1 * std <= x && x <= mean + 0.1 * std) { /* avoid the singularity at x = mean */
        const double poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
                            (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
                            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                            (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                            8 * (1 - x) * (135 * beta - 11)))));
        const double prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
        const double prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
        return prefactor_num / (1 - x) * poly / prefactor_den;
    }
    const double prefactor = -x / sqrt(2 * alpha * beta / total);
    const double stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                            (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                            (1 + 1 / (12 * total) + 1 / (288 * total * total));
    const double term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
    const double axbx = alpha * (x - 1) + beta * x;
    const double term1_den = sqrt(2 * alpha / beta) * pow(total, (double)1.5f) * axbx * axbx;
    const double term1 = term1_num / term1_den;
    const double term2 = 0.5f * log(alpha / (total * x));
    const double term3_num = sqrt(8 * alpha * beta / total);
    const double term3_den = beta * x + alpha * (x - 1);
    const double term3 = term3_num / term3_den;
    const double term4_base = beta * log(beta / (total * (1 - x))) + alpha * log(alpha / (total * x));
    const double term4 = pow(term4_base, (double)-1.5f);
    const double term1234 = term1 + term2 * (term3 + (x < mean ? term4 : -term4));
    return stirling * prefactor * term1234;
}

/* the rational correction's coefficients of dirichlet_grad_one */
static const double dirichlet_c[2][3][3][4] = {
    {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
      {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
      {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
     {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
      {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
      {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
     {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
      {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
      {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
    {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
      {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
      {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
     {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
      {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
      {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
     {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
      {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
      {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
};

#define T float
#define F(name) name##_f32
#include "samplers_t.h"
#undef T
#undef F
#define T double
#define F(name) name##_f64
#include "samplers_t.h"
#undef T
#undef F

/* -(d/dalpha cdf(x; alpha)) / pdf(x; alpha) for x ~ Gamma(alpha), all in double */
static double standard_gamma_grad_one(double alpha, double x) {
    if (x < 0.8f) { /* Taylor series for small x */
        double numer = 1, denom = alpha;
        double series1 = numer / denom, series2 = numer / (denom * denom);
        for (int i = 1; i <= 5; ++i) {
            numer *= -x / (double)i;
            denom += 1;
            series1 += numer / denom;
            series2 += numer / (denom * denom);
        }
        const double pow_x_alpha = pow(x, alpha);
        const double gamma_pdf = pow(x, alpha - 1) * exp(-x);
        const double gamma_cdf = pow_x_alpha * series1;
        const double gamma_cdf_alpha = (log(x) - digamma_one_f64(alpha)) * gamma_cdf - pow_x_alpha * series2;
        const double result = -gamma_cdf_alpha / gamma_pdf;
        return isnan(result) ? 0.0 : result;
    }
    if (alpha > 8.0f) { /* Rice saddle point expansion for large alpha */
        if (0.9f * alpha <= x && x <= 1.1f * alpha) {
            const double numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
            const double numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha +
                                   alpha * (107 + 3600 * x);
            const double denom = 1244160 * (alpha * alpha) * (alpha * alpha);
            return numer_1 * numer_2 / denom;
        }
        const double denom = sqrt(8 * alpha);
        const double term2 = denom / (alpha - x);
        const double term3 = pow(x - alpha - alpha * log(x / alpha), -1.5);
        const double term23 = (x < alpha) ? term2 - term3 : term2 + term3;
        const double term1 = log(x / alpha) * term23 - sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
        const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
        const double numer = x * term1;
        return -stirling * numer / denom;
    }
    /* a bivariate rational approximation */
    const double u = log(x / alpha);
    const double v = log(alpha);
    static const double coef_uv[3][8] = {
        {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
        {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
         -0.00058392623},
        {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
         -1.5247877e-07},
    };
    double coef_v[8];
    for (int i = 0; i < 8; ++i) coef_v[i] = coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]);
    const double p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]));
    const double q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]));
    return exp(p / q);
}

/* PyTorch's Poisson: transformed rejection (Hormann 1993) from 10 on, multiplication of uniforms below */
static int64_t sample_poisson(double lambda, mt_generator *g) {
    if (lambda >= 10) {
        double slam = sqrt(lambda);
        double loglam = log(lambda);
        double b = 0.931 + 2.53 * slam;
        double a = -0.059 + 0.02483 * b;
        double invalpha = 1.1239 + 1.1328 / (b - 3.4);
        double vr = 0.9277 - 3.6224 / (b - 2);
        for (;;) {
            double u = uniform01(g) - 0.5;
            double v = uniform01(g);
            double us = 0.5 - fabs(u);
            double kf = floor((2 * a / us + b) * u + lambda + 0.43);
            /* x86's conversion, which PyTorch's cast compiles to: out of range gives INT64_MIN */
            int64_t k = kf >= -9.2233720368547758e18 && kf < 9.2233720368547758e18 ? (int64_t)kf : INT64_MIN;
            if (us >= 0.07 && v <= vr) return k;
            if (k < 0 || (us < 0.013 && v > us)) continue;
            if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lambda + k * loglam - mt__lgamma((double)k + 1))
                return k;
        }
    }
    if (lambda == 0) return 0;
    double enlam = exp(-lambda), prod = 1.0;
    int64_t x = 0;
    for (;;) {
        prod *= uniform01(g);
        if (prod > enlam) x += 1;
        else return x;
    }
}

/* ---- entry points ------------------------------------------------------------------------------------------ */

/* t broadcast to ref's shape, as a contiguous tensor of dtype dt (a new reference) */
static mt_status operand(mt_tensor *t, const mt_tensor *ref, int dt, mt_tensor **out) {
    mt_tensor *e, *c;
    MT_TRY(mt_expand(t, ref->ndim, ref->sizes, &e));
    mt_status st = mt_to_dtype(e, dt, 0, &c);
    mt_tensor_release(e);
    if (st != MT_OK) return st;
    st = mt_contiguous(c, out);
    mt_tensor_release(c);
    return st;
}

/* TensorIterator's common-dtype check: every input has the output's dtype */
static mt_status same_dtype(int out_dt, mt_tensor *t) {
    if (t->dtype != out_dt)
        return mt__error(MT_ERR_RUNTIME, "Found dtype %s but expected %s", mt_dtype_names[t->dtype],
                         mt_dtype_names[out_dt]);
    return MT_OK;
}

static inline double load(const mt_tensor *t, int64_t i) {
    const char *p = mt__data(t);
    switch (t->dtype) {
    case MT_F64: return ((const double *)p)[i];
    case MT_F32: return ((const float *)p)[i];
    case MT_F16: return mt__f16_to_f32(((const uint16_t *)p)[i]);
    default: return mt__bf16_to_f32(((const uint16_t *)p)[i]);
    }
}

static inline void store(mt_tensor *t, int64_t i, double v) {
    char *p = mt__data(t);
    switch (t->dtype) {
    case MT_F64: ((double *)p)[i] = v; break;
    case MT_F32: ((float *)p)[i] = (float)v; break;
    case MT_F16: ((uint16_t *)p)[i] = mt__f32_to_f16((float)v); break;
    default: ((uint16_t *)p)[i] = mt__f32_to_bf16((float)v); break;
    }
}

/* up to three inputs broadcast to x's shape in its dtype, and an output shaped like x; grad mode off for
 * the temporaries */
typedef struct {
    mt_tensor *in[3], *out;
    int n;
} job;

static void job_free(job *j) {
    for (int k = 0; k < j->n; k++) mt_tensor_release(j->in[k]);
    if (j->out) mt_tensor_release(j->out);
}

/* hands the output over */
static mt_status job_result(job *j, mt_tensor **out) {
    *out = j->out;
    j->out = NULL;
    job_free(j);
    return MT_OK;
}

/* meta inputs: an output without values where PyTorch has a meta kernel (aten NULL), else its
 * dispatcher's error naming aten */
static mt_status job_init(job *j, int n, mt_tensor *const *ins, const char *kernel, int f16_ok, const char *aten) {
    *j = (job){.n = 0};
    mt_tensor *x = ins[0];
    for (int k = 0; k < n; k++)
        if (ins[k]->device == MT_META && aten)
            return mt__error(MT_ERR_NOT_IMPLEMENTED, "aten::%s: attempted to run this operator with Meta tensors, but "
                             "there was no fake impl or Meta kernel registered. You may have run into this message "
                             "while using an operator with PT2 compilation APIs (torch.compile/torch.export); in order "
                             "to use this operator with those APIs you'll need to add a fake impl. Please see the "
                             "following for next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html",
                             aten);
    for (int k = 1; k < n; k++) MT_TRY(same_dtype(x->dtype, ins[k]));
    int dt = x->dtype;
    if (!(dt == MT_F32 || dt == MT_F64 || (f16_ok && (dt == MT_F16 || dt == MT_BF16))))
        return mt__not_implemented(kernel, dt);
    int grad = mt_is_grad_enabled();
    mt_set_grad_enabled(0);
    mt_status st = mt__alloc(x->ndim, x->sizes, NULL, dt, x->device, &j->out);
    for (int k = 0; k < n && st == MT_OK; k++, j->n++) st = operand(ins[k], x, dt, &j->in[k]);
    mt_set_grad_enabled(grad);
    if (st != MT_OK) job_free(j);
    return st;
}

mt_status mt_standard_gamma(mt_tensor *alpha, mt_generator *g, mt_tensor **out) {
    MT_PROFILE("_standard_gamma", alpha);
    job j;
    MT_TRY(job_init(&j, 1, &alpha, "gamma_cpu", 0, NULL));
    if (j.out->device == MT_META) return job_result(&j, out);
    int64_t n = mt_tensor_numel(j.out);
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    if (j.out->dtype == MT_F32) {
        const float *a = (const float *)mt__data(j.in[0]);
        float *o = (float *)mt__data(j.out);
        for (int64_t i = 0; i < n; i++) {
            float s = sample_gamma_f32(a[i], g);
            o[i] = FLT_MIN < s ? s : FLT_MIN; /* std::max(min, s): NaN gives min */
        }
    } else {
        const double *a = (const double *)mt__data(j.in[0]);
        double *o = (double *)mt__data(j.out);
        for (int64_t i = 0; i < n; i++) {
            double s = sample_gamma_f64(a[i], g);
            o[i] = DBL_MIN < s ? s : DBL_MIN;
        }
    }
    mt__gen_unlock(g);
    *out = j.out;
    j.out = NULL;
    job_free(&j);
    return MT_OK;
}

mt_status mt_sample_dirichlet(mt_tensor *alpha, mt_generator *g, mt_tensor **out) {
    MT_PROFILE("_sample_dirichlet", alpha);
    job j;
    MT_TRY(job_init(&j, 1, &alpha, "dirichlet", 0, "_sample_dirichlet"));
    int64_t n = mt_tensor_numel(j.out);
    mt_tensor *gamma = NULL, *sum = NULL;
    mt_status st = mt__alloc(j.out->ndim, j.out->sizes, NULL, MT_F64, j.out->device, &gamma);
    if (st == MT_OK) {
        g = mt__gen_resolve(g);
        mt__gen_lock(g);
        double *gm = (double *)mt__data(gamma);
        for (int64_t i = 0; i < n; i++) { /* gamma samples in double, so that small alphas do not underflow */
            double s = sample_gamma_f64(load(j.in[0], i), g);
            gm[i] = DBL_MIN < s ? s : DBL_MIN;
        }
        mt__gen_unlock(g);
        int64_t last = -1;
        int grad = mt_is_grad_enabled();
        mt_set_grad_enabled(0);
        if (j.out->ndim > 0) st = mt_reduce(MT_RED_SUM, gamma, 1, &last, 1, -1, NULL, &sum);
        mt_set_grad_enabled(grad);
    }
    if (st == MT_OK && n > 0) {
        const double *gm = (const double *)mt__data(gamma);
        const double *sm = sum ? (const double *)mt__data(sum) : gm;
        int64_t k = j.out->ndim > 0 ? j.out->sizes[j.out->ndim - 1] : 1;
        for (int64_t i = 0; i < n; i++) {
            double r = gm[i] / sm[i / k];
            if (j.out->dtype == MT_F32) {
                float v = (float)r, lo = FLT_MIN, hi = nextafterf(1.0f, 0.0f);
                v = lo < v ? v : lo;
                ((float *)mt__data(j.out))[i] = v < hi ? v : hi;
            } else {
                double v = r, lo = DBL_MIN, hi = nextafter(1.0, 0.0);
                v = lo < v ? v : lo;
                ((double *)mt__data(j.out))[i] = v < hi ? v : hi;
            }
        }
    }
    mt_tensor_release(gamma);
    mt_tensor_release(sum);
    if (st == MT_OK) {
        *out = j.out;
        j.out = NULL;
    }
    job_free(&j);
    return st;
}

mt_status mt_poisson(mt_tensor *rates, mt_generator *g, mt_tensor **out) {
    MT_PROFILE("poisson", rates);
    job j;
    MT_TRY(job_init(&j, 1, &rates, "poisson_cpu", 1, NULL));
    if (j.out->device == MT_META) return job_result(&j, out);
    int64_t n = mt_tensor_numel(j.out);
    mt_status st = MT_OK;
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    for (int64_t i = 0; i < n; i++) {
        double lambda = load(j.in[0], i);
        if (!(lambda >= 0)) {
            st = mt__error(MT_ERR_RUNTIME, "invalid Poisson rate, expected rate to be non-negative");
            break;
        }
        store(j.out, i, (double)sample_poisson(lambda, g));
    }
    mt__gen_unlock(g);
    if (st == MT_OK) {
        *out = j.out;
        j.out = NULL;
    }
    job_free(&j);
    return st;
}

mt_status mt_binomial(mt_tensor *count, mt_tensor *prob, mt_generator *g, mt_tensor **out) {
    MT_PROFILE("binomial", count, prob);
    job j;
    mt_tensor *ins[2] = {count, prob};
    MT_TRY(job_init(&j, 2, ins, "binomial_cpu", 0, "binomial"));
    int64_t n = mt_tensor_numel(j.out);
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    if (j.out->dtype == MT_F32) {
        const float *c = (const float *)mt__data(j.in[0]), *p = (const float *)mt__data(j.in[1]);
        float *o = (float *)mt__data(j.out);
        for (int64_t i = 0; i < n; i++) o[i] = sample_binomial_f32(c[i], p[i], g);
    } else {
        const double *c = (const double *)mt__data(j.in[0]), *p = (const double *)mt__data(j.in[1]);
        double *o = (double *)mt__data(j.out);
        for (int64_t i = 0; i < n; i++) o[i] = sample_binomial_f64(c[i], p[i], g);
    }
    mt__gen_unlock(g);
    *out = j.out;
    j.out = NULL;
    job_free(&j);
    return MT_OK;
}

mt_status mt_standard_gamma_grad(mt_tensor *alpha, mt_tensor *x, mt_tensor **out) {
    MT_PROFILE("_standard_gamma_grad", alpha, x);
    job j;
    mt_tensor *ins[2] = {alpha, x};
    MT_TRY(job_init(&j, 2, ins, "_standard_gamma_grad_cpu", 0, "_standard_gamma_grad"));
    int64_t n = mt_tensor_numel(j.out);
    for (int64_t i = 0; i < n; i++) {
        double r = standard_gamma_grad_one(load(j.in[0], i), load(j.in[1], i));
        store(j.out, i, r);
    }
    *out = j.out;
    j.out = NULL;
    job_free(&j);
    return MT_OK;
}

mt_status mt_dirichlet_grad(mt_tensor *x, mt_tensor *alpha, mt_tensor *total, mt_tensor **out) {
    MT_PROFILE("_dirichlet_grad", x, alpha, total);
    job j;
    mt_tensor *ins[3] = {x, alpha, total};
    MT_TRY(job_init(&j, 3, ins, "_dirichlet_grad_cpu", 0, "_dirichlet_grad"));
    int64_t n = mt_tensor_numel(j.out);
    if (j.out->dtype == MT_F32) {
        const float *a = (const float *)mt__data(j.in[0]), *b = (const float *)mt__data(j.in[1]),
                    *c = (const float *)mt__data(j.in[2]);
        float *o = (float *)mt__data(j.out);
        for (int64_t i = 0; i < n; i++) o[i] = dirichlet_grad_one_f32(a[i], b[i], c[i]);
    } else {
        const double *a = (const double *)mt__data(j.in[0]), *b = (const double *)mt__data(j.in[1]),
                     *c = (const double *)mt__data(j.in[2]);
        double *o = (double *)mt__data(j.out);
        for (int64_t i = 0; i < n; i++) o[i] = dirichlet_grad_one_f64(a[i], b[i], c[i]);
    }
    *out = j.out;
    j.out = NULL;
    job_free(&j);
    return MT_OK;
}
