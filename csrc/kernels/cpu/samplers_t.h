/* samplers_t.h — one instance of PyTorch's sampler templates (ATen/native/Distributions.h) per
 * scalar_t, included by samplers.c with T (float or double) and F(name) defined; accscalar_t is
 * always double there. samplers.c includes <tgmath.h>, so log/pow/sqrt/floor/ceil/log1p/tan/fabs on a
 * float argument run in float as the std:: overloads do, and every mixed float/double expression
 * below rounds exactly as PyTorch's. */

static T F(digamma_one)(T x) {
    const double PSI_10 = 2.25175258906672110764;
    if (x == 0) return INFINITY;
    double additional_summand = 0;
    int x_is_integer = x == floor(x);
    if (x < 0) {
        if (x_is_integer) return INFINITY;
        additional_summand = -(T)M_PI / tan((T)M_PI * x);
        x = 1 - x;
    }
    double result = 0;
    while (x < 10) {
        result -= 1 / x;
        x += 1;
    }
    if (x == 10) return (T)(result + PSI_10 + additional_summand);
    double y = 0;
    if (x < 1.0e17f) {
        double z = 1.0 / (x * x);
        y = z * polevl(z, digamma_A, 6);
    }
    return (T)(result + log(x) - (0.5f / x) - y + additional_summand);
}

static T F(sample_gamma)(T alpha, mt_generator *g) {
    double scale = 1.0f;
    if (alpha < 1.0f) { /* boost alpha for a higher acceptance probability */
        if (alpha == 0.f) return 0.f;
        scale *= pow(1 - uniform01(g), 1.0f / alpha);
        alpha += 1.0f;
    }
    /* Marsaglia and Tsang (2000) */
    const double d = alpha - 1.0f / 3.0f;
    const double c = 1.0f / sqrt(9.0f * d);
    for (;;) {
        double x, y;
        do {
            x = normal01(g);
            y = 1.0f + c * x;
        } while (y <= 0);
        const double v = y * y * y;
        const double u = 1 - uniform01(g);
        const double xx = x * x;
        if (u < 1.0f - 0.0331f * xx * xx) return (T)(scale * d * v);
        if (log(u) < 0.5f * xx + d * (1.0f - v + log(v))) return (T)(scale * d * v);
    }
}

static T F(binomial_inversion)(T count, T prob, mt_generator *g) {
    double geom_sum = 0;
    T num_geom = 0;
    double logprob = log1p(-prob);
    for (;;) {
        double u = uniform01(g);
        double geom = ceil(log(u) / logprob);
        geom_sum += geom;
        if (geom_sum > count) break;
        num_geom = num_geom + 1;
    }
    return num_geom;
}

/* Hormann's BTRS, as TensorFlow (and PyTorch after it) writes it */
static T F(btrs)(T count, T prob, mt_generator *g) {
    const double stddev = sqrt(count * prob * (1 - prob));
    const double b = 1.15 + 2.53 * stddev;
    const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
    const double c = count * prob + 0.5;
    const double v_r = 0.92 - 4.2 / b;
    const double r = prob / (1 - prob);
    const double alpha = (2.83 + 5.1 / b) * stddev;
    const double m = floor((count + 1) * prob);
    for (;;) {
        double u = uniform01(g) - 0.5;
        double v = uniform01(g);
        double us = 0.5 - fabs(u);
        T k = (T)floor((2 * a / us + b) * u + c);
        if (k < 0 || k > count) continue;
        if (us >= 0.07 && v <= v_r) return k;
        v = log(v * alpha / (a / (us * us) + b));
        double upperbound = ((m + 0.5) * log((m + 1) / (r * (count - m + 1))) +
                             (count + 1) * log((count - m + 1) / (count - k + 1)) +
                             (k + 0.5) * log(r * (count - k + 1) / (k + 1)) + stirling_approx_tail(m) +
                             stirling_approx_tail(count - m) - stirling_approx_tail(k) -
                             stirling_approx_tail(count - k));
        if (v <= upperbound) return k;
    }
}

static T F(sample_binomial)(T count, T prob, mt_generator *g) {
    if (isnan(count)) return NAN; /* the inversion's loop would never end (PyTorch 2.13's does not) */
    if (count <= 0.0 || prob <= 0.0) return 0;
    if (prob >= 1.0) return count;
    if (prob <= 0.5) return count * prob >= 10.0 ? F(btrs)(count, prob, g) : F(binomial_inversion)(count, prob, g);
    if (prob > 0.5) {
        T qprob = 1.0 - prob;
        return count - (count * qprob >= 10.0 ? F(btrs)(count, qprob, g) : F(binomial_inversion)(count, qprob, g));
    }
    return NAN; /* prob is NaN */
}

/* reparameterized gradient of Beta(x; alpha, beta) wrt alpha near x = 0 (Taylor) */
static T F(beta_grad_alpha_small)(T x, T alpha, T beta) {
    const T factor = F(digamma_one)(alpha) - F(digamma_one)(alpha + beta) - log(x);
    T numer = 1;
    T series = numer / alpha * (factor + 1 / alpha);
    for (int i = 1; i <= 10; ++i) {
        T ci = (T)i;
        numer *= (ci - beta) * x / ci;
        const T denom = alpha + ci;
        series += numer / denom * (factor + 1 / denom);
    }
    const T result = x * pow(1 - x, -beta) * series;
    return isnan(result) ? (T)0 : result;
}

/* the same wrt beta near x = 0 */
static T F(beta_grad_beta_small)(T x, T alpha, T beta) {
    const T factor = F(digamma_one)(alpha + beta) - F(digamma_one)(beta);
    T numer = 1, betas = 1, dbetas = 0, series = factor / alpha;
    for (int i = 1; i <= 8; ++i) {
        T ci = (T)i;
        numer *= -x / ci;
        dbetas = dbetas * (beta - ci) + betas;
        betas = betas * (beta - ci);
        series += numer / (alpha + ci) * (dbetas + factor * betas);
    }
    const T result = -pow(1 - x, 1 - beta) * series;
    return isnan(result) ? (T)0 : result;
}

/* -(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1 - x), the Dirichlet's per-coordinate gradient */
static T F(dirichlet_grad_one)(T x, T alpha, T total) {
    double x_ = x, alpha_ = alpha, total_ = total;
    const T beta = total - alpha;
    const double beta_ = total_ - alpha_;
    const T boundary = total * x * (1 - x);
    if (x <= 0.5f && boundary < 2.5f) return F(beta_grad_alpha_small)(x, alpha, beta);
    if (x >= 0.5f && boundary < 0.75f) return -F(beta_grad_beta_small)(1 - x, beta, alpha);
    if (alpha > 6 && beta > 6) return (T)beta_grad_alpha_mid(x_, alpha_, beta_);
    const double u = log(x_);
    const double a = log(alpha_) - u;
    const double b = log(total_) - a;
    const double pow_u[3] = {1, u, u * u};
    const double pow_a[3] = {1, a, a * a};
    double p = 0.0, q = 0.0;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            const double ua = pow_u[i] * pow_a[j];
            const double *c0 = dirichlet_c[0][i][j], *c1 = dirichlet_c[1][i][j];
            p += ua * (c0[0] + b * (c0[1] + b * (c0[2] + b * c0[3])));
            q += ua * (c1[0] + b * (c1[1] + b * (c1[2] + b * c1[3])));
        }
    }
    const double approx = x_ * (F(digamma_one)((T)total_) - F(digamma_one)((T)alpha_)) / beta_;
    return (T)(p / q * approx);
}
