/* norm_batch.c — batch_norm and group_norm forward (PyTorch's native_batch_norm and
 * native_group_norm on CPU) over x [N, C, *] made contiguous in the compute dtype.
 *
 * batch_norm: per channel, the mean and the biased variance over N and the spatial dims,
 * accumulated in double as PyTorch's CPU kernel (its accscalar_t); in training the running
 * statistics are then updated in place (unbiased variance, in double). Then y = x * alpha + beta
 * with alpha = invstd * w, beta = b - mean * alpha. group_norm: per (n, group) row of
 * (C / G) * spatial elements, two-pass mean and variance in lanes, then the same per-channel
 * affine form. Their backward formulas are written with public ops (autograd/formulas_norm.c). */
#include "../../autograd/formula.h"
#include "loops.h"
#include "nn.h"
#include "shape.h"

typedef struct {
    const char *x, *w, *b; /* compute dtype, contiguous; w, b may be NULL */
    char *y, *mean, *invstd; /* training: the batch statistics out ([C], compute dtype) */
    const char *rm, *rv;     /* eval: the running statistics in (compute dtype) */
    double *var;             /* training: the biased variance per channel, for the running update */
    int64_t N, C, S, G;
    double eps;
    int training;
} norm_ctx;

#define DEF_NORM(SUF, T)                                                                       \
    MT_SIMD static void bn_fwd_##SUF(void *p, int64_t c0, int64_t c1) {                        \
        const norm_ctx *k = p;                                                                 \
        int64_t N = k->N, C = k->C, S = k->S;                                                  \
        for (int64_t c = c0; c < c1; c++) {                                                    \
            double mean, invstd;                                                               \
            if (k->training) {                                                                 \
                double sum = 0, var = 0;                                                       \
                for (int64_t n = 0; n < N; n++) {                                              \
                    const T *x = (const T *)k->x + (n * C + c) * S;                            \
                    for (int64_t i = 0; i < S; i++) sum += x[i];                               \
                }                                                                              \
                mean = sum / (double)(N * S);                                                  \
                for (int64_t n = 0; n < N; n++) {                                              \
                    const T *x = (const T *)k->x + (n * C + c) * S;                            \
                    for (int64_t i = 0; i < S; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean); \
                }                                                                              \
                var /= (double)(N * S);                                                        \
                invstd = 1.0 / sqrt(var + k->eps);                                             \
                ((T *)k->mean)[c] = (T)mean;                                                   \
                ((T *)k->invstd)[c] = (T)invstd;                                               \
                k->var[c] = var;                                                               \
            } else {                                                                           \
                mean = ((const T *)k->rm)[c];                                                  \
                invstd = 1.0 / sqrt((double)((const T *)k->rv)[c] + k->eps);                   \
            }                                                                                  \
            T alpha = (T)(invstd * (k->w ? (double)((const T *)k->w)[c] : 1.0));               \
            T beta = (T)((k->b ? (double)((const T *)k->b)[c] : 0.0) - mean * (double)alpha);  \
            for (int64_t n = 0; n < N; n++) {                                                  \
                const T *x = (const T *)k->x + (n * C + c) * S;                                \
                T *y = (T *)k->y + (n * C + c) * S;                                            \
                for (int64_t i = 0; i < S; i++) y[i] = x[i] * alpha + beta;                    \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* rows r = n * G + g of M = (C / G) * S contiguous elements */                            \
    MT_SIMD static void gn_fwd_##SUF(void *p, int64_t r0, int64_t r1) {                        \
        const norm_ctx *k = p;                                                                 \
        int64_t G = k->G, D = k->C / G, S = k->S, M = D * S;                                   \
        for (int64_t r = r0; r < r1; r++) {                                                    \
            const T *x = (const T *)k->x + r * M;                                              \
            T *y = (T *)k->y + r * M;                                                          \
            T mean = mt__rsum_##SUF(x, M) / (T)M, acc[MT_LANES] = {0}, var = 0;                \
            int64_t i = 0;                                                                     \
            for (; i + MT_LANES <= M; i += MT_LANES)                                           \
                for (int l = 0; l < MT_LANES; l++) acc[l] += (x[i + l] - mean) * (x[i + l] - mean); \
            for (; i < M; i++) var += (x[i] - mean) * (x[i] - mean);                           \
            for (int l = 0; l < MT_LANES; l++) var += acc[l];                                  \
            T rstd = (T)1 / sqrt(var / (T)M + (T)k->eps);                                      \
            ((T *)k->mean)[r] = mean;                                                          \
            ((T *)k->invstd)[r] = rstd;                                                        \
            for (int64_t d = 0; d < D; d++) {                                                  \
                int64_t c = (r % G) * D + d;                                                   \
                T alpha = rstd * (k->w ? ((const T *)k->w)[c] : (T)1);                         \
                T beta = (k->b ? ((const T *)k->b)[c] : (T)0) - mean * alpha;                  \
                for (int64_t s = 0; s < S; s++) y[d * S + s] = x[d * S + s] * alpha + beta;    \
            }                                                                                  \
        }                                                                                      \
    }

DEF_NORM(f, float)
DEF_NORM(d, double)

/* [N, C, S] of x; errors for what would read outside the parameters (Python checks first, in
 * PyTorch's words) */
static mt_status norm_dims(const char *name, mt_tensor *x, mt_tensor *const *per_channel, int n, int64_t *N,
                           int64_t *C, int64_t *S) {
    if (x->ndim < 2) return mt__error(MT_ERR_RUNTIME, "%s: expected input with at least 2 dimensions, got %d", name,
                                      x->ndim);
    *N = x->sizes[0], *C = x->sizes[1], *S = 1;
    for (int d = 2; d < x->ndim; d++) *S = mt__wmul(*S, x->sizes[d]); /* wraps only when a size is 0: numel fits */
    for (int i = 0; i < n; i++) /* a meta parameter beside a CPU input has no data to read */
        if (per_channel[i]) MT_TRY(mt__same_device(x, per_channel[i]));
    for (int i = 0; i < n; i++)
        if (per_channel[i] && mt_tensor_numel(per_channel[i]) != *C)
            return mt__error(MT_ERR_RUNTIME, "%s: expected %lld elements per channel parameter, got %lld", name,
                             (long long)*C, (long long)mt_tensor_numel(per_channel[i]));
    if (!mt__is_float(x->dtype)) return mt__not_implemented(name, x->dtype);
    return MT_OK;
}

mt_status mt__impl_batch_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, mt_tensor *running_mean,
                              mt_tensor *running_var, int training, double momentum, double eps, mt_tensor **out,
                              mt_tensor **save_mean, mt_tensor **save_invstd) {
    int64_t N = 0, C = 0, S = 0; /* set by norm_dims (GCC cannot tell) */
    mt_tensor *pc[4] = {weight, bias, running_mean, running_var};
    MT_TRY(norm_dims("batch_norm", x, pc, 4, &N, &C, &S));
    if (!training && (!running_mean || !running_var))
        return mt__error(MT_ERR_RUNTIME, "running_mean must be defined in evaluation mode");
    if (training && N * S == 1)
        return mt__error(MT_ERR_VALUE, "Expected more than 1 value per channel when training");
    int cd = mt__nn_compute_dtype(x->dtype), dev = x->device;
    int64_t nstat = training ? C : 0;
    mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *rmc = NULL, *rvc = NULL, *y = NULL, *mu = NULL, *is = NULL;
    double *var = NULL;
    mt_status st = mt__alloc(1, &nstat, NULL, cd, dev, &mu);
    if (!st) st = mt__alloc(1, &nstat, NULL, cd, dev, &is);
    if (!st && dev == MT_META) st = mt__alloc(x->ndim, x->sizes, NULL, x->dtype, MT_META, out);
    if (!st && dev != MT_META && mt_tensor_numel(x) == 0) { /* nothing to normalise; running stats kept */
        st = mt__alloc(x->ndim, x->sizes, NULL, x->dtype, dev, out);
        if (!st) st = mt__impl_fill(mu, 0, 0, MT_SCALAR_INT);
        if (!st) st = mt__impl_fill(is, 0, 0, MT_SCALAR_INT);
        goto done;
    }
    if (st || dev == MT_META) goto done;
    st = mt__nn_contig(x, cd, &xc);
    if (!st && weight) st = mt__nn_contig(weight, cd, &wc);
    if (!st && bias) st = mt__nn_contig(bias, cd, &bc);
    if (!st && running_mean) st = mt__nn_contig(running_mean, cd, &rmc);
    if (!st && running_var) st = mt__nn_contig(running_var, cd, &rvc);
    if (!st) st = mt__alloc(x->ndim, x->sizes, NULL, cd, MT_CPU, &y);
    if (!st && training && !(var = malloc((size_t)(C ? C : 1) * sizeof *var)))
        st = mt__error(MT_ERR_OOM, "out of memory in batch_norm");
    if (st) goto done;
    norm_ctx k = {.x = mt__data(xc), .w = wc ? mt__data(wc) : NULL, .b = bc ? mt__data(bc) : NULL,
                  .y = mt__data(y), .mean = mt__data(mu), .invstd = mt__data(is), .rm = rmc ? mt__data(rmc) : NULL,
                  .rv = rvc ? mt__data(rvc) : NULL, .var = var, .N = N, .C = C, .S = S, .eps = eps,
                  .training = training};
    if (N * S > 0) mt__parallel_for(C, 1 + MT_GRAIN_SIZE / (N * S), cd == MT_F64 ? bn_fwd_d : bn_fwd_f, &k);
    if (training && (rmc || rvc)) { /* running = momentum * batch + (1 - momentum) * running, in double */
        double unbias = (double)(N * S) / (double)(N * S - 1);
        for (int64_t c = 0; c < C; c++) {
            if (rmc) {
                double m = cd == MT_F64 ? ((double *)mt__data(mu))[c] : ((float *)mt__data(mu))[c];
                double *pd = (double *)mt__data(rmc);
                float *pf = (float *)mt__data(rmc);
                double r = momentum * m + (1 - momentum) * (cd == MT_F64 ? pd[c] : pf[c]);
                if (cd == MT_F64) pd[c] = r; else pf[c] = (float)r;
            }
            if (rvc) {
                double *pd = (double *)mt__data(rvc);
                float *pf = (float *)mt__data(rvc);
                double r = momentum * var[c] * unbias + (1 - momentum) * (cd == MT_F64 ? pd[c] : pf[c]);
                if (cd == MT_F64) pd[c] = r; else pf[c] = (float)r;
            }
        }
        if (rmc) st = mt__impl_copy_(running_mean, rmc);
        if (!st && rvc) st = mt__impl_copy_(running_var, rvc);
    }
    if (!st) { st = mt__nn_narrow(y, x->dtype, out); y = NULL; }
done:
    free(var);
    mt_tensor_release(xc); mt_tensor_release(wc); mt_tensor_release(bc); mt_tensor_release(rmc);
    mt_tensor_release(rvc); mt_tensor_release(y);
    if (st) { mt_tensor_release(mu); mt_tensor_release(is); return st; }
    *save_mean = mu, *save_invstd = is;
    return MT_OK;
}

mt_status mt__impl_group_norm(mt_tensor *x, mt_tensor *weight, mt_tensor *bias, int64_t groups, double eps,
                              mt_tensor **out, mt_tensor **mean, mt_tensor **rstd) {
    int64_t N = 0, C = 0, S = 0;
    mt_tensor *pc[2] = {weight, bias};
    MT_TRY(norm_dims("group_norm", x, pc, 2, &N, &C, &S));
    if (groups <= 0 || C % groups)
        return mt__error(MT_ERR_RUNTIME, "group_norm: %lld channels cannot be split into %lld groups", (long long)C,
                         (long long)groups);
    int cd = mt__nn_compute_dtype(x->dtype), dev = x->device;
    int64_t ssz[2] = {N, groups};
    mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL, *mu = NULL, *rs = NULL;
    mt_status st = mt__alloc(2, ssz, NULL, cd, dev, &mu);
    if (!st) st = mt__alloc(2, ssz, NULL, cd, dev, &rs);
    if (!st && dev == MT_META) st = mt__alloc(x->ndim, x->sizes, NULL, x->dtype, MT_META, out);
    if (st || dev == MT_META) goto done;
    st = mt__nn_contig(x, cd, &xc);
    if (!st && weight) st = mt__nn_contig(weight, cd, &wc);
    if (!st && bias) st = mt__nn_contig(bias, cd, &bc);
    if (!st) st = mt__alloc(x->ndim, x->sizes, NULL, cd, MT_CPU, &y);
    if (st) goto done;
    norm_ctx k = {.x = mt__data(xc), .w = wc ? mt__data(wc) : NULL, .b = bc ? mt__data(bc) : NULL,
                  .y = mt__data(y), .mean = mt__data(mu), .invstd = mt__data(rs), .N = N, .C = C, .S = S,
                  .G = groups, .eps = eps};
    int64_t M = C / groups * S;
    if (M > 0) mt__parallel_for(N * groups, 1 + MT_GRAIN_SIZE / M, cd == MT_F64 ? gn_fwd_d : gn_fwd_f, &k);
    else if (N * groups > 0) { /* no elements per group: PyTorch's mean 0 and rstd NaN */
        st = mt__impl_fill(mu, 0, 0, MT_SCALAR_INT);
        if (!st) st = mt__impl_fill(rs, NAN, 0, MT_SCALAR_FLOAT);
    }
    if (!st) { st = mt__nn_narrow(y, x->dtype, out); y = NULL; }
done:
    mt_tensor_release(xc); mt_tensor_release(wc); mt_tensor_release(bc); mt_tensor_release(y);
    if (st) { mt_tensor_release(mu); mt_tensor_release(rs); return st; }
    *mean = mu, *rstd = rs;
    return MT_OK;
}
