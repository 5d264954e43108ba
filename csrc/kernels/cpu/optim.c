/* optim.c — fused optimizer steps: one call updates one parameter and its state.
 *
 * Each step follows PyTorch's single-tensor (foreach=False) implementation in
 * torch/optim/<name>.py: the same per-element op order, every intermediate
 * PyTorch materialises as a tensor rounded to the parameter dtype (RND: a no-op
 * for float32/float64, round-to-nearest-even for float16/bfloat16, which
 * compute in float), Python-float hyperparameters cast to the compute type where
 * PyTorch's kernels cast them, and fma() exactly where PyTorch's CPU kernels
 * fuse (add with alpha, lerp, addcmul; see binary.c/ternary.c). Per-step
 * scalars (bias corrections, step sizes) are computed in double in the same
 * order as PyTorch's Python code.
 */
#pragma GCC optimize("fp-contract=off")
#include "loops.h"

mt_status mt__impl_copy_(mt_tensor *dst, mt_tensor *src);
mt_status mt__impl_contiguous(mt_tensor *t, mt_tensor **out);

#define NOPS 5 /* param, grad and up to three state tensors */
#define MT_OPTIM_RECTIFY (1 << 16) /* RAdam: this step uses the rectified update */
#define MT_OPTIM_WD (1 << 17)        /* the weight decay a[wd] is not 0 (set by run) */
#define MT_OPTIM_LERP_NEAR (1 << 18) /* the lerp weight a[lerp_w] is below 0.5 in magnitude (set by run) */

typedef struct {
    char *d[NOPS];
    double a[8]; /* per-step scalars, prepared in double by each step function */
    int flags;
    int wd, lerp_w; /* the indices in a of the weight decay and the lerp weight (-1: none), for the flags */
} optim_job;

/* PyTorch's lerp(self, end, weight) with the fma its CPU kernel uses */
#define LERP(x, y, w) (flags_ & MT_OPTIM_LERP_NEAR ? fma((w), (y) - (x), (x)) : fma((x) - (y), (CT)1 - (w), (y)))
/* maximum with NaN propagation */
#define MAXIMUM(x, y) (((x) != (x) || (y) != (y)) ? (x) + (y) : ((x) > (y) ? (x) : (y)))
/* operand k of element i, loaded into the compute type; store v (rounded) into it */
#define LD(k) ld_(rnd_kind_, (const T *)d##k##_ + i)
#define ST(k, v) st_(rnd_kind_, d##k##_ + i, (v))
#define ld_(kind, p)                                                                              \
    _Generic((p), const uint16_t *: ((kind) == 1 ? mt__f16_to_f32(*(const uint16_t *)(p))         \
                                                 : mt__bf16_to_f32(*(const uint16_t *)(p))),      \
             default: *(p))
#define st_(kind, p, v)                                                                           \
    _Generic((p), uint16_t *: (void)(*(uint16_t *)(p) = (kind) == 1 ? mt__f32_to_f16((float)(v))  \
                                                                    : mt__f32_to_bf16((float)(v))), \
             default: (void)(*(p) = (v)))
#define A(n) ((CT)a##n##_)
/* a scalar PyTorch converts to the tensor dtype first: add's alpha, a Python number added to a tensor */
#define AR(n) RND((CT)a##n##_)
/* grad, negated when maximizing */
#define GRAD() (flags_ & MT_OPTIM_MAXIMIZE ? -LD(1) : LD(1))

/* The element loop: element i reads and writes index i of each operand only, so there is no dependence
 * across i (GCC's run-time alias checks for five operands exceed its limit without saying so). */
#define OPTIM_LOOP(NAME) _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) { NAME##_body }
/* The common flag sets as constants (SPEC: float32/float64, whose loops vectorise): their tests fold away,
 * as GCC 12 vectorises no select on a loop-invariant condition. Adam, Adam with weight decay, AdamW. */
#define OPTIM_SPECIALISED(NAME, SPEC, SET)                                                \
    if (SPEC && flags_ == (SET)) {                                                        \
        const int flags_ = (SET);                                                         \
        OPTIM_LOOP(NAME)                                                                  \
        return;                                                                           \
    }

/* One task function per (optimizer, dtype); NAME_body is the per-element update. */
#define OPTIM_TASK(NAME, TAG, TS, CTY, SPEC)                                              \
    MT_SIMD static void optim_##NAME##_##TAG(void *ctx, int64_t b, int64_t e) {          \
        const optim_job *j = ctx;                                                         \
        typedef TS T;                                                                     \
        typedef CTY CT;                                                                   \
        const int rnd_kind_ = MT_RND_##TAG;                                               \
        (void)rnd_kind_;                                                                  \
        /* operands, flags and scalars in locals: a store through the data then cannot change \
         * them, so they stay out of the loop (read from *j, they did not) */               \
        T *const d0_ = (T *)j->d[0], *const d1_ = (T *)j->d[1], *const d2_ = (T *)j->d[2];  \
        T *const d3_ = (T *)j->d[3], *const d4_ = (T *)j->d[4];                            \
        (void)d1_, (void)d2_, (void)d3_, (void)d4_;                                       \
        const int flags_ = j->flags;                                                      \
        const double a0_ = j->a[0], a1_ = j->a[1], a2_ = j->a[2], a3_ = j->a[3];          \
        const double a4_ = j->a[4], a5_ = j->a[5], a6_ = j->a[6], a7_ = j->a[7];          \
        (void)a0_, (void)a1_, (void)a2_, (void)a3_, (void)a4_, (void)a5_, (void)a6_, (void)a7_; \
        OPTIM_SPECIALISED(NAME, SPEC, MT_OPTIM_LERP_NEAR)                                  \
        OPTIM_SPECIALISED(NAME, SPEC, MT_OPTIM_LERP_NEAR | MT_OPTIM_WD)                    \
        OPTIM_SPECIALISED(NAME, SPEC, MT_OPTIM_LERP_NEAR | MT_OPTIM_WD | MT_OPTIM_DECOUPLED) \
        OPTIM_LOOP(NAME)                                                                  \
    }
#define OPTIM_TASKS(NAME)                                                                  \
    OPTIM_TASK(NAME, f16, uint16_t, float, 0)                                              \
    OPTIM_TASK(NAME, bf16, uint16_t, float, 0)                                             \
    OPTIM_TASK(NAME, f32, float, float, 1)                                                 \
    OPTIM_TASK(NAME, f64, double, double, 1)                                               \
    static const mt_task_fn optim_##NAME[4] = {optim_##NAME##_f16, optim_##NAME##_bf16,    \
                                               optim_##NAME##_f32, optim_##NAME##_f64};

/* grad.add(param, alpha=wd), or param.mul_(1 - lr*wd) with decoupled weight decay (AdamW) */
#define WEIGHT_DECAY(g, p, wd, decay)                                                    \
    if (flags_ & MT_OPTIM_WD) {                                                          \
        if (flags_ & MT_OPTIM_DECOUPLED) p = RND(p * A(decay));                        \
        else g = RND(fma(p, AR(wd), g));                                                  \
    }

/* ---- SGD: a = lr, momentum, 1 - dampening, weight_decay; s0 = momentum_buffer ---- */
#define sgd_body                                                            \
    CT g = GRAD(), p = LD(0);                                                            \
    if (a3_ != 0) g = RND(fma(p, AR(3), g));                                         \
    if (a1_ != 0) {                                                                  \
        CT buf;                                                                          \
        if (flags_ & MT_OPTIM_FIRST) {                                                 \
            buf = g; /* the buffer starts as a clone of grad */                          \
        } else {                                                                         \
            buf = RND(LD(2) * A(1));                                                     \
            buf = RND(fma(g, AR(2), buf));                                                \
        }                                                                                \
        ST(2, buf);                                                                      \
        g = flags_ & MT_OPTIM_NESTEROV ? RND(fma(buf, AR(1), g)) : buf;                 \
    }                                                                                    \
    ST(0, fma(g, -AR(0), p));
OPTIM_TASKS(sgd)

/* ---- Adam/AdamW: a = 1-beta1, beta2, 1-beta2, wd, 1-lr*wd, bc2_sqrt, eps, -step_size;
 *      s0 = exp_avg, s1 = exp_avg_sq, s2 = max_exp_avg_sq (amsgrad) ---- */
#define adam_body                                                           \
    CT g = GRAD(), p = LD(0);                                                            \
    WEIGHT_DECAY(g, p, 3, 4)                                                             \
    CT m = RND(LERP(LD(2), g, A(0)));                                                    \
    CT v = RND(LD(3) * A(1));                                                            \
    v = RND(fma(A(2) * g, g, v));                                                        \
    CT s = v;                                                                            \
    if (flags_ & MT_OPTIM_AMSGRAD) {                                                   \
        CT vm = LD(4);                                                                   \
        s = MAXIMUM(vm, v);                                                              \
        ST(4, s);                                                                        \
    }                                                                                    \
    CT denom = RND(RND(RND(sqrt(s)) / A(5)) + AR(6));                                     \
    ST(2, m);                                                                            \
    ST(3, v);                                                                            \
    ST(0, p + A(7) * m / denom);
OPTIM_TASKS(adam)

/* ---- Adagrad: a = wd, eps, -clr; s0 = sum ---- */
#define adagrad_body                                                        \
    CT g = GRAD(), p = LD(0);                                                            \
    if (a0_ != 0) g = RND(fma(p, AR(0), g));                                          \
    CT sum = RND(fma((CT)1 * g, g, LD(2)));                                              \
    CT std = RND(RND(sqrt(sum)) + AR(1));                                                 \
    ST(2, sum);                                                                          \
    ST(0, p + A(2) * g / std);
OPTIM_TASKS(adagrad)

/* ---- RMSprop: a = alpha, 1-alpha, eps, wd, momentum, -lr;
 *      s0 = square_avg, s1 = grad_avg (centered), s2 = momentum_buffer (momentum > 0) ---- */
#define rmsprop_body                                                        \
    CT g = GRAD(), p = LD(0);                                                            \
    if (a3_ != 0) g = RND(fma(p, AR(3), g));                                         \
    CT sq = RND(LD(2) * A(0));                                                           \
    sq = RND(fma(A(1) * g, g, sq));                                                      \
    ST(2, sq);                                                                           \
    CT avg;                                                                              \
    if (flags_ & MT_OPTIM_CENTERED) {                                                  \
        CT ga = RND(LERP(LD(3), g, A(1)));                                               \
        ST(3, ga);                                                                       \
        avg = RND(sqrt(RND(fma((CT)-1 * ga, ga, sq))));                                  \
    } else {                                                                             \
        avg = RND(sqrt(sq));                                                             \
    }                                                                                    \
    avg = RND(avg + AR(2));                                                               \
    if (a4_ > 0) {                                                                   \
        CT buf = RND(LD(4) * A(4));                                                      \
        buf = RND(buf + (CT)1 * g / avg);                                                \
        ST(4, buf);                                                                      \
        ST(0, fma(buf, AR(5), p));                                                        \
    } else {                                                                             \
        ST(0, p + A(5) * g / avg);                                                       \
    }
OPTIM_TASKS(rmsprop)

/* ---- Adadelta: a = rho, 1-rho, eps, wd, -lr; s0 = square_avg, s1 = acc_delta ---- */
#define adadelta_body                                                       \
    CT g = GRAD(), p = LD(0);                                                            \
    if (a3_ != 0) g = RND(fma(p, AR(3), g));                                         \
    CT sq = RND(LD(2) * A(0));                                                           \
    sq = RND(fma(A(1) * g, g, sq));                                                      \
    CT std = RND(sqrt(RND(sq + AR(2))));                                                  \
    CT ad = LD(3);                                                                       \
    CT delta = RND(sqrt(RND(ad + AR(2))));                                                \
    delta = RND(RND(delta / std) * g);                                                   \
    ad = RND(ad * A(0));                                                                 \
    ad = RND(fma(A(1) * delta, delta, ad));                                              \
    ST(2, sq);                                                                           \
    ST(3, ad);                                                                           \
    ST(0, fma(delta, AR(4), p));
OPTIM_TASKS(adadelta)

/* ---- Adamax: a = 1-beta1, beta2, eps, wd, -clr; s0 = exp_avg, s1 = exp_inf ---- */
#define adamax_body                                                         \
    CT g = GRAD(), p = LD(0);                                                            \
    if (a3_ != 0) g = RND(fma(p, AR(3), g));                                         \
    CT m = RND(LERP(LD(2), g, A(0)));                                                    \
    CT ei = RND(LD(3) * A(1));                                                           \
    CT ag = RND(RND(fabs(g)) + AR(2));                                                    \
    ei = MAXIMUM(ei, ag);                                                                \
    ST(2, m);                                                                            \
    ST(3, ei);                                                                           \
    ST(0, p + A(4) * m / ei);
OPTIM_TASKS(adamax)

/* ---- NAdam: a = 1-beta1, beta2, 1-beta2, wd, 1-lr*wd, bc2, eps, (c1, c2 in a7_ and b[0]) ---- */
typedef struct {
    optim_job j;
    double c2;
} nadam_job;
#define nadam_body                                                          \
    CT g = GRAD(), p = LD(0);                                                            \
    WEIGHT_DECAY(g, p, 3, 4)                                                             \
    CT m = RND(LERP(LD(2), g, A(0)));                                                    \
    CT v = RND(LD(3) * A(1));                                                            \
    v = RND(fma(A(2) * g, g, v));                                                        \
    CT denom = RND(RND(sqrt(RND(v / A(5)))) + AR(6));                                     \
    ST(2, m);                                                                            \
    ST(3, v);                                                                            \
    p = RND(p + A(7) * g / denom);                                                       \
    ST(0, p + (CT)((const nadam_job *)j)->c2 * m / denom);
OPTIM_TASKS(nadam)

/* ---- RAdam: a = 1-beta1, beta2, 1-beta2, wd, 1-lr*wd, bc1, lr, sqrt(bc2) / eps / rect packed below ---- */
typedef struct {
    optim_job j;
    double bc2_sqrt, eps, rect;
} radam_job;
#define radam_body                                                          \
    CT g = GRAD(), p = LD(0);                                                            \
    WEIGHT_DECAY(g, p, 3, 4)                                                             \
    CT m = RND(LERP(LD(2), g, A(0)));                                                    \
    CT v = RND(LD(3) * A(1));                                                            \
    v = RND(fma(A(2) * g, g, v));                                                        \
    ST(2, m);                                                                            \
    ST(3, v);                                                                            \
    CT upd = RND(RND(m / A(5)) * A(6)); /* bias_corrected_exp_avg * lr */                \
    if (flags_ & MT_OPTIM_RECTIFY) {                                                   \
        const radam_job *rj = (const radam_job *)j;                                      \
        CT s = RND(RND(sqrt(v)) + RND((CT)rj->eps));                                          \
        CT alr = RND(RND((CT)1 / s) * (CT)rj->bc2_sqrt); /* scalar / tensor = reciprocal * scalar */ \
        upd = RND(RND(upd * alr) * (CT)rj->rect);                                        \
    }                                                                                    \
    ST(0, fma(upd, (CT)-1, p));
OPTIM_TASKS(radam)

/* ---- the driver: checks, contiguous staging, threads ---- */

static const char *const names[] = {"param", "grad", "state", "state", "state"};

static mt_status run(const char *opt, mt_task_fn const *fns, optim_job *job, mt_tensor **ts) {
    mt_tensor *p = ts[0];
    if (!p || !ts[1]) return mt__error(MT_ERR_VALUE, "%s step: param and grad are required", opt);
    if (!mt__is_float(p->dtype))
        return mt__error(MT_ERR_TYPE, "%s step: expected a floating point param, got %s", opt,
                         mt_dtype_names[p->dtype]);
    for (int k = 1; k < NOPS; k++) {
        mt_tensor *t = ts[k];
        if (!t) continue;
        if (t->dtype != p->dtype)
            return mt__error(MT_ERR_TYPE, "%s step: %s has dtype %s but param has dtype %s", opt, names[k],
                             mt_dtype_names[t->dtype], mt_dtype_names[p->dtype]);
        if (t->device != p->device)
            return mt__error(MT_ERR_RUNTIME, "%s step: %s and param are on different devices", opt, names[k]);
        if (t->ndim != p->ndim || memcmp(t->sizes, p->sizes, sizeof(int64_t) * p->ndim) != 0) {
            char a[256], b[256];
            return mt__error(MT_ERR_RUNTIME, "%s step: %s has shape %s but param has shape %s", opt, names[k],
                             mt__fmt_sizes(a, sizeof a, t->ndim, t->sizes),
                             mt__fmt_sizes(b, sizeof b, p->ndim, p->sizes));
        }
    }
    int64_t n = mt_tensor_numel(p);
    if (p->device == MT_META || n == 0) return MT_OK;
    /* non-contiguous operands run on contiguous copies, copied back afterwards */
    mt_tensor *c[NOPS] = {0};
    mt_status st = MT_OK;
    for (int k = 0; k < NOPS && st == MT_OK; k++) {
        if (!ts[k]) continue;
        if (mt_tensor_is_contiguous(ts[k])) {
            c[k] = ts[k];
            mt_tensor_retain(c[k]);
        } else {
            st = mt__impl_contiguous(ts[k], &c[k]);
        }
        if (st == MT_OK) job->d[k] = mt__data(c[k]);
    }
    if (st == MT_OK) {
        if (job->wd >= 0 && job->a[job->wd] != 0) job->flags |= MT_OPTIM_WD;
        if (job->lerp_w >= 0) { /* the branch PyTorch's lerp takes, on the weight in the compute type */
            double w = job->a[job->lerp_w];
            if (p->dtype == MT_F64 ? fabs(w) < 0.5 : fabsf((float)w) < 0.5f) job->flags |= MT_OPTIM_LERP_NEAR;
        }
        int which = p->dtype == MT_F16 ? 0 : p->dtype == MT_BF16 ? 1 : p->dtype == MT_F32 ? 2 : 3;
        mt__parallel_for(n, MT_GRAIN_SIZE / 4, fns[which], job);
        for (int k = 0; k < NOPS && st == MT_OK; k++) {
            if (!ts[k] || k == 1) continue; /* the grad is only read */
            if (c[k] != ts[k]) st = mt__impl_copy_(ts[k], c[k]);
            else mt_tensor_bump_version(ts[k]);
        }
    }
    for (int k = 0; k < NOPS; k++)
        if (c[k]) mt_tensor_release(c[k]);
    return st;
}

static optim_job make_job(int flags) {
    optim_job j;
    memset(&j, 0, sizeof j);
    j.flags = flags;
    j.wd = j.lerp_w = -1;
    return j;
}

mt_status mt_sgd_step(mt_tensor *param, mt_tensor *grad, mt_tensor *momentum_buffer, double lr, double momentum,
                      double dampening, double weight_decay, int flags) {
    MT_PROFILE("optim::sgd_step", param, grad, momentum_buffer);
    if (momentum != 0 && !momentum_buffer)
        return mt__error(MT_ERR_VALUE, "SGD step: momentum needs a momentum buffer");
    optim_job j = make_job(flags);
    j.a[0] = lr, j.a[1] = momentum, j.a[2] = 1 - dampening, j.a[3] = weight_decay;
    mt_tensor *ts[NOPS] = {param, grad, momentum != 0 ? momentum_buffer : NULL};
    return run("SGD", optim_sgd, &j, ts);
}

mt_status mt_adam_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                       mt_tensor *max_exp_avg_sq, double lr, double beta1, double beta2, double eps,
                       double weight_decay, double step, int flags) {
    MT_PROFILE("optim::adam_step", param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq);
    if (!exp_avg || !exp_avg_sq || ((flags & MT_OPTIM_AMSGRAD) && !max_exp_avg_sq))
        return mt__error(MT_ERR_VALUE, "Adam step: missing state tensors");
    optim_job j = make_job(flags);
    double bias_correction1 = 1 - pow(beta1, step);
    double bias_correction2 = 1 - pow(beta2, step);
    double step_size = lr / bias_correction1;
    j.a[0] = 1 - beta1, j.a[1] = beta2, j.a[2] = 1 - beta2, j.a[3] = weight_decay, j.a[4] = 1 - lr * weight_decay;
    j.a[5] = pow(bias_correction2, 0.5), j.a[6] = eps, j.a[7] = -step_size;
    j.wd = 3, j.lerp_w = 0;
    mt_tensor *ts[NOPS] = {param, grad, exp_avg, exp_avg_sq, (flags & MT_OPTIM_AMSGRAD) ? max_exp_avg_sq : NULL};
    return run("Adam", optim_adam, &j, ts);
}

mt_status mt_adagrad_step(mt_tensor *param, mt_tensor *grad, mt_tensor *state_sum, double lr, double weight_decay,
                          double lr_decay, double eps, double step, int flags) {
    MT_PROFILE("optim::adagrad_step", param, grad, state_sum);
    if (!state_sum) return mt__error(MT_ERR_VALUE, "Adagrad step: missing state tensors");
    optim_job j = make_job(flags);
    double clr = lr / (1 + (step - 1) * lr_decay);
    j.a[0] = weight_decay, j.a[1] = eps, j.a[2] = -clr;
    mt_tensor *ts[NOPS] = {param, grad, state_sum};
    return run("Adagrad", optim_adagrad, &j, ts);
}

mt_status mt_rmsprop_step(mt_tensor *param, mt_tensor *grad, mt_tensor *square_avg, mt_tensor *grad_avg,
                          mt_tensor *momentum_buffer, double lr, double alpha, double eps, double weight_decay,
                          double momentum, int flags) {
    MT_PROFILE("optim::rmsprop_step", param, grad, square_avg, grad_avg, momentum_buffer);
    if (!square_avg || ((flags & MT_OPTIM_CENTERED) && !grad_avg) || (momentum > 0 && !momentum_buffer))
        return mt__error(MT_ERR_VALUE, "RMSprop step: missing state tensors");
    optim_job j = make_job(flags);
    j.a[0] = alpha, j.a[1] = 1 - alpha, j.a[2] = eps, j.a[3] = weight_decay, j.a[4] = momentum, j.a[5] = -lr;
    j.lerp_w = 1; /* the centered grad average */
    mt_tensor *ts[NOPS] = {param, grad, square_avg, (flags & MT_OPTIM_CENTERED) ? grad_avg : NULL,
                           momentum > 0 ? momentum_buffer : NULL};
    return run("RMSprop", optim_rmsprop, &j, ts);
}

mt_status mt_adadelta_step(mt_tensor *param, mt_tensor *grad, mt_tensor *square_avg, mt_tensor *acc_delta,
                           double lr, double rho, double eps, double weight_decay, int flags) {
    MT_PROFILE("optim::adadelta_step", param, grad, square_avg, acc_delta);
    if (!square_avg || !acc_delta) return mt__error(MT_ERR_VALUE, "Adadelta step: missing state tensors");
    optim_job j = make_job(flags);
    j.a[0] = rho, j.a[1] = 1 - rho, j.a[2] = eps, j.a[3] = weight_decay, j.a[4] = -lr;
    mt_tensor *ts[NOPS] = {param, grad, square_avg, acc_delta};
    return run("Adadelta", optim_adadelta, &j, ts);
}

mt_status mt_adamax_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_inf, double lr,
                         double beta1, double beta2, double eps, double weight_decay, double step, int flags) {
    MT_PROFILE("optim::adamax_step", param, grad, exp_avg, exp_inf);
    if (!exp_avg || !exp_inf) return mt__error(MT_ERR_VALUE, "Adamax step: missing state tensors");
    optim_job j = make_job(flags);
    double bias_correction = 1 - pow(beta1, step);
    double clr = lr / bias_correction;
    j.a[0] = 1 - beta1, j.a[1] = beta2, j.a[2] = eps, j.a[3] = weight_decay, j.a[4] = -clr;
    j.lerp_w = 0;
    mt_tensor *ts[NOPS] = {param, grad, exp_avg, exp_inf};
    return run("Adamax", optim_adamax, &j, ts);
}

mt_status mt_nadam_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_avg_sq, double lr,
                        double beta1, double beta2, double eps, double weight_decay, double step, double mu,
                        double mu_next, double mu_product, int flags) {
    MT_PROFILE("optim::nadam_step", param, grad, exp_avg, exp_avg_sq);
    if (!exp_avg || !exp_avg_sq) return mt__error(MT_ERR_VALUE, "NAdam step: missing state tensors");
    nadam_job nj;
    nj.j = make_job(flags);
    double bias_correction2 = 1 - pow(beta2, step);
    double mu_product_next = mu_product * mu_next;
    double *a = nj.j.a;
    a[0] = 1 - beta1, a[1] = beta2, a[2] = 1 - beta2, a[3] = weight_decay, a[4] = 1 - lr * weight_decay;
    a[5] = bias_correction2, a[6] = eps, a[7] = -lr * (1.0 - mu) / (1.0 - mu_product);
    nj.c2 = -lr * mu_next / (1.0 - mu_product_next);
    nj.j.wd = 3, nj.j.lerp_w = 0;
    mt_tensor *ts[NOPS] = {param, grad, exp_avg, exp_avg_sq};
    return run("NAdam", optim_nadam, &nj.j, ts);
}

mt_status mt_radam_step(mt_tensor *param, mt_tensor *grad, mt_tensor *exp_avg, mt_tensor *exp_avg_sq, double lr,
                        double beta1, double beta2, double eps, double weight_decay, double step, int flags) {
    MT_PROFILE("optim::radam_step", param, grad, exp_avg, exp_avg_sq);
    if (!exp_avg || !exp_avg_sq) return mt__error(MT_ERR_VALUE, "RAdam step: missing state tensors");
    radam_job rj;
    rj.j = make_job(flags & ~MT_OPTIM_RECTIFY);
    double bias_correction1 = 1 - pow(beta1, step);
    double bias_correction2 = 1 - pow(beta2, step);
    double rho_inf = 2 / (1 - beta2) - 1;
    double rho_t = rho_inf - 2 * step * pow(beta2, step) / bias_correction2;
    double *a = rj.j.a;
    a[0] = 1 - beta1, a[1] = beta2, a[2] = 1 - beta2, a[3] = weight_decay, a[4] = 1 - lr * weight_decay;
    a[5] = bias_correction1, a[6] = lr;
    rj.j.wd = 3, rj.j.lerp_w = 0;
    if (rho_t > 5.0) {
        rj.j.flags |= MT_OPTIM_RECTIFY;
        rj.rect = pow((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5);
        rj.bc2_sqrt = pow(bias_correction2, 0.5);
        rj.eps = eps;
    }
    mt_tensor *ts[NOPS] = {param, grad, exp_avg, exp_avg_sq};
    return run("RAdam", optim_radam, &rj.j, ts);
}
