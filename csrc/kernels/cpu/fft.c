/* fft.c — torch.fft's three primitives (PyTorch's _fft_c2c, _fft_r2c and _fft_c2r) on FFTW.
 *
 * FFTW was chosen by measurement (docs/ARCHITECTURE.md, "Discrete Fourier transforms"). It is
 * GPL-2+, so the core does not link it: libfftw3(f).so.3 is opened at the first transform, the core
 * builds and runs without it, and a transform then raises saying what to install.
 *
 * Plans come from FFTW's guru64 interface straight over the tensors' strides (no copy, except for
 * c2r, which destroys its input), made with FFTW_ESTIMATE and cached by their geometry. The output's
 * layout is PyTorch's: batch dimensions outermost in the input's stride order, then the transformed
 * ones; the outermost batch dimension is split across the thread pool. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../autograd/formula.h"
#include "fft.h"
#include "nn.h"

/* ---- FFTW, opened at first use ---- */

typedef struct { ptrdiff_t n, is, os; } iodim64; /* fftw_iodim64 */
enum { FFTW_FORWARD = -1, FFTW_BACKWARD = 1 };
#define FFTW_ESTIMATE (1U << 6)

typedef struct {
    void *(*plan_dft)(int, const iodim64 *, int, const iodim64 *, void *, void *, int, unsigned);
    void *(*plan_r2c)(int, const iodim64 *, int, const iodim64 *, void *, void *, unsigned);
    void *(*plan_c2r)(int, const iodim64 *, int, const iodim64 *, void *, void *, unsigned);
    void (*exec_dft)(void *, void *, void *);
    void (*exec_r2c)(void *, void *, void *);
    void (*exec_c2r)(void *, void *, void *);
    void (*destroy)(void *);
    int (*alignment_of)(void *);
    int state; /* 0 not tried, 1 loaded, -1 missing */
} fftw_api;

static fftw_api apis[2]; /* [0] single precision (fftwf_), [1] double (fftw_) */
static pthread_mutex_t planner = PTHREAD_MUTEX_INITIALIZER; /* FFTW's planner is not thread-safe */

/* under planner */
static mt_status load_api(int dbl) {
    fftw_api *a = &apis[dbl];
    if (a->state == 0) {
        a->state = -1;
        void *h = dlopen(dbl ? "libfftw3.so.3" : "libfftw3f.so.3", RTLD_NOW | RTLD_LOCAL);
        const char *p = dbl ? "fftw_" : "fftwf_";
        char name[64];
#define SYM(field, s) (snprintf(name, sizeof name, "%s%s", p, s), *(void **)&a->field = dlsym(h, name))
        if (h && SYM(plan_dft, "plan_guru64_dft") && SYM(plan_r2c, "plan_guru64_dft_r2c") &&
            SYM(plan_c2r, "plan_guru64_dft_c2r") && SYM(exec_dft, "execute_dft") &&
            SYM(exec_r2c, "execute_dft_r2c") && SYM(exec_c2r, "execute_dft_c2r") && SYM(destroy, "destroy_plan") &&
            SYM(alignment_of, "alignment_of"))
            a->state = 1;
#undef SYM
    }
    if (a->state < 0)
        return mt__error(MT_ERR_RUNTIME, "torch.fft needs FFTW (%s), which was not found: on Debian or Ubuntu, "
                                         "apt-get install %s",
                         dbl ? "libfftw3.so.3" : "libfftw3f.so.3", dbl ? "libfftw3-double3" : "libfftw3-single3");
    return MT_OK;
}

/* ---- plans, cached by geometry ---- */

enum { K_FORWARD, K_BACKWARD, K_R2C, K_C2R };

typedef struct {
    int dbl, kind, rank, hrank, align_in, align_out;
    iodim64 dims[MT_MAX_DIMS], hdims[MT_MAX_DIMS];
} plan_key;

typedef struct {
    plan_key key;
    void *plan;
    int users; /* executions running it: never destroyed while one does */
} plan_entry;

#define PLAN_CACHE 64
static plan_entry cache[PLAN_CACHE];
static int cache_used, cache_next;

/* a plan for key over in/out (FFTW_ESTIMATE plans never touch the arrays); NULL on failure. The
 * caller runs it, then gives it back with put_plan. */
static plan_entry *get_plan(const plan_key *k, void *in, void *out, void **uncached) {
    *uncached = NULL;
    pthread_mutex_lock(&planner);
    for (int i = 0; i < cache_used; i++)
        if (!memcmp(&cache[i].key, k, sizeof *k)) {
            cache[i].users++;
            pthread_mutex_unlock(&planner);
            return &cache[i];
        }
    fftw_api *a = &apis[k->dbl];
    void *p = k->kind == K_R2C   ? a->plan_r2c(k->rank, k->dims, k->hrank, k->hdims, in, out, FFTW_ESTIMATE)
              : k->kind == K_C2R ? a->plan_c2r(k->rank, k->dims, k->hrank, k->hdims, in, out, FFTW_ESTIMATE)
                                 : a->plan_dft(k->rank, k->dims, k->hrank, k->hdims, in, out,
                                               k->kind == K_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
    plan_entry *e = NULL;
    if (p) {
        int slot = -1;
        if (cache_used < PLAN_CACHE) slot = cache_used++;
        else /* round robin over the idle entries */
            for (int t = 0; t < PLAN_CACHE && slot < 0; t++, cache_next = (cache_next + 1) % PLAN_CACHE)
                if (!cache[cache_next].users) slot = cache_next;
        if (slot >= 0) {
            if (cache[slot].plan) a->destroy(cache[slot].plan);
            cache[slot] = (plan_entry){*k, p, 1};
            e = &cache[slot];
        } else {
            *uncached = p; /* every entry busy: this one is destroyed after its run */
        }
    }
    pthread_mutex_unlock(&planner);
    return e;
}

static void put_plan(int dbl, plan_entry *e, void *uncached) {
    pthread_mutex_lock(&planner);
    if (e) e->users--;
    if (uncached) apis[dbl].destroy(uncached);
    pthread_mutex_unlock(&planner);
}

/* ---- one transform over the outermost batch dimension's range [begin, end) ---- */

typedef struct {
    plan_key key;             /* hdims[0] is the outermost batch dimension (when hrank > 0) */
    char *in, *out;
    int64_t in_step, out_step; /* bytes between consecutive indices of hdims[0] */
    int64_t out_block;        /* output reals per index of hdims[0] (all output reals when hrank == 0) */
    double scale;             /* normalization, applied to the output */
    mt_status st;
} fft_job;

/* one plan's run over in/out */
static mt_status run_plan(const plan_key *k, char *in, char *out) {
    fftw_api *a = &apis[k->dbl];
    plan_key key = *k;
    key.align_in = a->alignment_of(in);
    key.align_out = a->alignment_of(out);
    void *uncached;
    plan_entry *e = get_plan(&key, in, out, &uncached);
    void *p = e ? e->plan : uncached;
    if (!p) return MT_ERR_RUNTIME;
    if (k->kind == K_R2C) a->exec_r2c(p, in, out);
    else if (k->kind == K_C2R) a->exec_c2r(p, in, out);
    else a->exec_dft(p, in, out);
    put_plan(k->dbl, e, uncached);
    return MT_OK;
}

static void run_range(void *ctx, int64_t begin, int64_t end) {
    fft_job *j = ctx;
    plan_key k = j->key;
    char *in = j->in + begin * j->in_step, *out = j->out + begin * j->out_step;
    mt_status st = MT_OK;
    if (k.hrank && k.rank > 1) {
        /* multi-dimensional transforms one index of the split dimension at a time: FFTW_ESTIMATE's plans
         * for a batch of them are slower (a 16x256x256 fft2: 29 ms against 19 ms, measured) */
        memmove(k.hdims, k.hdims + 1, (--k.hrank) * sizeof *k.hdims);
        for (int64_t i = begin; i < end && !st; i++, in += j->in_step, out += j->out_step) st = run_plan(&k, in, out);
        in = j->in + begin * j->in_step, out = j->out + begin * j->out_step;
    } else {
        if (k.hrank) k.hdims[0].n = end - begin;
        st = run_plan(&k, in, out);
    }
    if (st) {
        __atomic_store_n(&j->st, st, __ATOMIC_RELAXED);
        return;
    }
    if (j->scale != 1) { /* the output block of this range is dense */
        int64_t n = (end - begin) * j->out_block;
        if (k.dbl)
            for (double *o = (double *)out, *e2 = o + n; o < e2; o++) *o *= j->scale;
        else
            for (float *o = (float *)out, *e2 = o + n; o < e2; o++) *o *= (float)j->scale;
    }
}

/* dims wrapped and checked into wrapped; the first nsort of them then ordered by decreasing input
 * stride, as PyTorch orders them (the order changes no value, only the output's layout) */
static mt_status check_dims(const char *name, mt_tensor *x, int ndims, const int64_t *dims, int nsort,
                            int normalization, int64_t *wrapped) {
    if (ndims < 0 || ndims > x->ndim) return mt__error(MT_ERR_RUNTIME, "%s: got %d dims for a %d-dimensional tensor", name, ndims, x->ndim);
    if (normalization < 0 || normalization > 2)
        return mt__error(MT_ERR_RUNTIME, "%s: normalization must be 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n), got %d",
                         name, normalization);
    for (int i = 0; i < ndims; i++) {
        wrapped[i] = dims[i];
        MT_TRY(mt__wrap_dim(&wrapped[i], x->ndim));
        for (int k = 0; k < i; k++)
            if (wrapped[k] == wrapped[i]) return mt__error(MT_ERR_RUNTIME, "FFT dims must be unique");
        if (x->sizes[wrapped[i]] == 0) /* an empty signal has no transform (r2c/c2r would invent one) */
            return mt__error(MT_ERR_RUNTIME, "Invalid number of data points (0) specified");
    }
    for (int i = 1; i < nsort; i++)
        for (int at = i; at > 0 && x->strides[wrapped[at - 1]] < x->strides[wrapped[at]]; at--) {
            int64_t t = wrapped[at];
            wrapped[at] = wrapped[at - 1], wrapped[at - 1] = t;
        }
    return MT_OK;
}

/* The transform of x over dims (in that order; the last is the halved one of r2c/c2r) into a new tensor
 * of out_sizes in PyTorch's layout, by FFTW. signal_n: the complex-side or real-side logical sizes. */
static mt_status execute(int kind, mt_tensor *x, int ndims, const int64_t *dims, const int64_t *signal_n,
                         const int64_t *out_sizes, int out_dtype, int normalization, mt_tensor **out) {
    int dbl = x->dtype == MT_F64 || x->dtype == MT_C128, ndim = x->ndim;
    /* the permutation: batch dimensions by decreasing input stride (stable), then dims */
    int perm[MT_MAX_DIMS], np = 0, is_sig[MT_MAX_DIMS] = {0};
    for (int i = 0; i < ndims; i++) is_sig[dims[i]] = 1;
    for (int d = 0; d < ndim; d++)
        if (!is_sig[d]) {
            int at = np++;
            while (at > 0 && x->strides[perm[at - 1]] < x->strides[d]) perm[at] = perm[at - 1], at--;
            perm[at] = d;
        }
    for (int i = 0; i < ndims; i++) perm[np++] = (int)dims[i];
    int64_t strides[MT_MAX_DIMS], step = 1;
    for (int i = ndim - 1; i >= 0; i--) strides[perm[i]] = step, step *= out_sizes[perm[i]];
    MT_TRY(mt__alloc(ndim, out_sizes, strides, out_dtype, x->device, out));
    int64_t numel = mt__numel(ndim, out_sizes);
    if (numel == 0 || mt__numel(ndim, x->sizes) == 0 || x->device != MT_CPU) return MT_OK;
    if (kind == K_R2C && signal_n[ndims - 1] / 2 + 1 < out_sizes[dims[ndims - 1]]) /* the half FFTW leaves */
        memset(mt__data(*out), 0, numel * mt_dtype_itemsize(out_dtype));

    pthread_mutex_lock(&planner);
    mt_status st = load_api(dbl);
    pthread_mutex_unlock(&planner);
    if (st) { MT_DROP(*out); return st; }

    fft_job j;
    memset(&j, 0, sizeof j);
    plan_key *k = &j.key;
    k->dbl = dbl, k->kind = kind, k->rank = ndims, k->hrank = ndim - ndims;
    for (int i = 0; i < ndims; i++) {
        int d = (int)dims[i];
        k->dims[i] = (iodim64){signal_n[i], x->strides[d], strides[d]};
    }
    for (int i = 0; i < k->hrank; i++) k->hdims[i] = (iodim64){x->sizes[perm[i]], x->strides[perm[i]], strides[perm[i]]};
    int in_item = mt_dtype_itemsize(x->dtype), out_item = mt_dtype_itemsize(out_dtype);
    j.in = mt__data(x), j.out = mt__data(*out);
    int64_t outer = 1, reals_per = out_item / (dbl ? 8 : 4), sig = 1;
    if (k->hrank) {
        outer = k->hdims[0].n;
        j.in_step = k->hdims[0].is * in_item, j.out_step = k->hdims[0].os * out_item;
        j.out_block = k->hdims[0].os * reals_per;
    } else {
        j.out_block = numel * reals_per;
    }
    for (int i = 0; i < ndims; i++) sig *= signal_n[i];
    j.scale = normalization == 2 ? 1.0 / (double)sig : normalization == 1 ? 1.0 / sqrt((double)sig) : 1.0;
    int64_t per_index = numel / outer; /* output elements per index of the split dimension */
    mt__parallel_for(outer, per_index >= 65536 ? 1 : 65536 / per_index, run_range, &j);
    if (j.st) {
        MT_DROP(*out);
        return mt__error(MT_ERR_RUNTIME, "FFTW could not plan this transform");
    }
    return MT_OK;
}

mt_status mt__impl_fft_c2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int forward,
                           mt_tensor **out) {
    *out = NULL;
    int64_t d[MT_MAX_DIMS], n[MT_MAX_DIMS];
    if (!mt__is_complex(x->dtype)) return mt__error(MT_ERR_RUNTIME, "_fft_c2c expects a complex input tensor");
    MT_TRY(check_dims("_fft_c2c", x, ndims, dims, ndims, normalization, d));
    if (ndims == 0) return mt__impl_clone(x, out);
    for (int i = 0; i < ndims; i++) n[i] = x->sizes[d[i]];
    return execute(forward ? K_FORWARD : K_BACKWARD, x, ndims, d, n, x->sizes, x->dtype, normalization, out);
}

/* the onesided half of out's last transformed dimension completed by conjugate symmetry:
 * X[k] = conj(X[-k mod n]) over every transformed dimension */
static void fill_conjugate_symmetry(mt_tensor *out, int ndims, const int64_t *dims, int64_t half) {
    int ndim = out->ndim, last = (int)dims[ndims - 1], is_sig[MT_MAX_DIMS] = {0};
    for (int i = 0; i < ndims; i++) is_sig[dims[i]] = 1;
    int64_t idx[MT_MAX_DIMS] = {0}, n_last = out->sizes[last];
    int dbl = out->dtype == MT_C128;
    char *base = mt__data(out);
    int item = mt_dtype_itemsize(out->dtype);
    idx[last] = half;
    for (;;) {
        int64_t dst = 0, src = 0;
        for (int d = 0; d < ndim; d++) {
            int64_t m = is_sig[d] ? (out->sizes[d] - idx[d]) % out->sizes[d] : idx[d];
            dst += idx[d] * out->strides[d], src += m * out->strides[d];
        }
        if (dbl) {
            double *s = (double *)(base + src * item), *t = (double *)(base + dst * item);
            t[0] = s[0], t[1] = -s[1];
        } else {
            float *s = (float *)(base + src * item), *t = (float *)(base + dst * item);
            t[0] = s[0], t[1] = -s[1];
        }
        int d = ndim - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < (d == last ? n_last : out->sizes[d])) break;
            idx[d] = d == last ? half : 0;
        }
        if (d < 0) return;
    }
}

mt_status mt__impl_fft_r2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int onesided,
                           mt_tensor **out) {
    *out = NULL;
    int64_t d[MT_MAX_DIMS], n[MT_MAX_DIMS], sizes[MT_MAX_DIMS];
    if (x->dtype != MT_F32 && x->dtype != MT_F64)
        return mt__error(MT_ERR_RUNTIME, "Only supports floating-point dtypes, but found: %s", mt_dtype_names[x->dtype]);
    MT_TRY(check_dims("_fft_r2c", x, ndims, dims, ndims - 1, normalization, d)); /* the halved last one stays last */
    if (ndims == 0) return mt__error(MT_ERR_RUNTIME, "_fft_r2c must transform at least one dimension");
    memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
    for (int i = 0; i < ndims; i++) n[i] = x->sizes[d[i]];
    int last = (int)d[ndims - 1];
    int64_t half = x->sizes[last] / 2 + 1;
    if (onesided) sizes[last] = half;
    mt_tensor *r;
    MT_TRY(execute(K_R2C, x, ndims, d, n, sizes, x->dtype == MT_F64 ? MT_C128 : MT_C64, normalization, &r));
    if (!onesided && r->device == MT_CPU && mt__numel(r->ndim, r->sizes) && half < sizes[last])
        fill_conjugate_symmetry(r, ndims, d, half);
    *out = r;
    return MT_OK;
}

mt_status mt__impl_fft_c2r(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int64_t last_dim_size,
                           mt_tensor **out) {
    *out = NULL;
    int64_t d[MT_MAX_DIMS], sizes[MT_MAX_DIMS];
    if (!mt__is_complex(x->dtype)) return mt__error(MT_ERR_RUNTIME, "_fft_c2r expects a complex input tensor");
    MT_TRY(check_dims("_fft_c2r", x, ndims, dims, 0, normalization, d)); /* c2c sorts the others */
    if (ndims == 0) return mt__error(MT_ERR_RUNTIME, "_fft_c2r must transform at least one dimension");
    if (last_dim_size < 1) return mt__error(MT_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)last_dim_size);
    int last = (int)d[ndims - 1];
    int64_t half = last_dim_size / 2 + 1;
    if (x->sizes[last] < half)
        return mt__error(MT_ERR_RUNTIME, "_fft_c2r: a last dimension of %lld elements holds no signal of %lld points "
                                         "(it needs %lld)", (long long)x->sizes[last], (long long)last_dim_size, (long long)half);
    /* PyTorch's order: an inverse c2c over the other dims, then a one-dimensional c2r (results differ from
     * one multi-dimensional c2r only for inputs that are not Hermitian) */
    mt_tensor *y = x, *half_view = NULL, *scratch = NULL;
    mt_status st = MT_OK;
    if (ndims > 1) MT_TRY(mt__impl_fft_c2c(x, ndims - 1, d, normalization, 0, &y));
    /* FFTW's c2r overwrites its input: it runs on a dense copy of the first `half` entries */
    st = mt__impl_slice(y, last, 0, half, 1, &half_view);
    if (!st) {
        int64_t strides[MT_MAX_DIMS];
        mt__like_strides(half_view, strides);
        st = mt__alloc(half_view->ndim, half_view->sizes, strides, half_view->dtype, half_view->device, &scratch);
    }
    if (!st) st = mt__impl_copy_(scratch, half_view);
    if (!st) {
        memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
        sizes[last] = last_dim_size;
        int64_t one = last;
        st = execute(K_C2R, scratch, 1, &one, &last_dim_size, sizes, x->dtype == MT_C128 ? MT_F64 : MT_F32,
                     normalization, out);
    }
    mt_tensor_release(scratch);
    mt_tensor_release(half_view);
    if (y != x) mt_tensor_release(y);
    return st;
}
