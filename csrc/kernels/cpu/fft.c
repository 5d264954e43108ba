/* fft.c — torch.fft's three primitives (PyTorch's _fft_c2c, _fft_r2c and _fft_c2r) on MKL's DFTI or FFTW.
 *
 * The engine is chosen at the first transform: MKL (libmkl_rt from PyPI's `mkl`, the engine of PyTorch's
 * x86 builds) when the Python layer found it, else FFTW. MKL ran a line 1.3-1.6x faster than FFTW on the
 * project's host and FFTW was the fastest free engine measured (docs/ARCHITECTURE.md, "Discrete Fourier
 * transforms"). Neither is linked: MKL's licence (Intel's ISSL) and FFTW's (GPL-2+) are not the
 * project's, so each is opened at run time, the core builds and runs without them, and a transform
 * without either raises saying what to install.
 *
 * A transform runs as passes of batched one-dimensional plans (FFTW's guru64 interface with
 * FFTW_ESTIMATE, since plans chosen by timing could change the last bits from one process to the next;
 * or DFTI descriptors), cached by their geometry. The output's layout is PyTorch's: batch dimensions
 * outermost in the input's stride order, then the transformed ones. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../autograd/formula.h"
#include "fft.h"
#include "mkl.h"
#include "nn.h"
#include "simd_avx512.h"

/* ---- FFTW, opened at first use ---- */

typedef struct { ptrdiff_t n, is, os; } iodim64; /* fftw_iodim64 */
enum { FFTW_FORWARD = -1, FFTW_BACKWARD = 1 };
#define FFTW_ESTIMATE (1U << 6)
#define FFTW_PRESERVE_INPUT (1U << 4)

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

/* ---- MKL's DFTI (mkl_dfti.h's values; the header is not needed to build) ---- */

enum {
    DFTI_FORWARD_SCALE = 4, DFTI_BACKWARD_SCALE = 5, DFTI_NUMBER_OF_TRANSFORMS = 7, DFTI_CONJUGATE_EVEN_STORAGE = 10, DFTI_PLACEMENT = 11, DFTI_THREAD_LIMIT = 27,
    DFTI_FWD_DISTANCE = 58, DFTI_BWD_DISTANCE = 59, DFTI_FWD_STRIDES = 60, DFTI_BWD_STRIDES = 61,
    DFTI_COMPLEX = 32, DFTI_REAL = 33, DFTI_COMPLEX_COMPLEX = 39, DFTI_NOT_INPLACE = 44,
};

static struct {
    long (*create[2])(void **, int domain, long n); /* DftiCreateDescriptor_s_1d, _d_1d */
    long (*create_md[2])(void **, int domain, long rank, const long *n); /* _s_md, _d_md */
    long (*set)(void *, int, ...);
    long (*commit)(void *);
    long (*forward)(void *, void *, ...);
    long (*backward)(void *, void *, ...);
    long (*free_desc)(void **);
} mkl;
static char mkl_path[4096]; /* set by mt_fft_use_mkl before the first transform */
static int engine = -1;      /* -1 not chosen, 0 FFTW, 1 MKL */

mt_status mt_fft_use_mkl(const char *path) {
    pthread_mutex_lock(&planner);
    if (engine < 0) snprintf(mkl_path, sizeof mkl_path, "%s", path ? path : "");
    pthread_mutex_unlock(&planner);
    return MT_OK;
}

const char *mt_fft_engine(void) { return engine == 1 ? "mkl" : engine == 0 ? "fftw" : ""; }

/* under planner: MKL if mkl_path opens (mkl.c, shared with LAPACK) and has DFTI; each descriptor runs on one
 * thread (DFTI_THREAD_LIMIT), our pool runs the blocks */
static int load_mkl(void) {
    void *h = mkl_path[0] ? mt__mkl_open(mkl_path) : NULL;
#define SYM(field, s) (*(void **)&mkl.field = dlsym(h, s))
    if (!h || !SYM(create[0], "DftiCreateDescriptor_s_1d") || !SYM(create[1], "DftiCreateDescriptor_d_1d") ||
        !SYM(create_md[0], "DftiCreateDescriptor_s_md") || !SYM(create_md[1], "DftiCreateDescriptor_d_md") ||
        !SYM(set, "DftiSetValue") || !SYM(commit, "DftiCommitDescriptor") || !SYM(forward, "DftiComputeForward") ||
        !SYM(backward, "DftiComputeBackward") || !SYM(free_desc, "DftiFreeDescriptor"))
        return 0;
#undef SYM
    return 1;
}

/* under planner */
static mt_status load_api(int dbl) {
    if (engine < 0) engine = load_mkl();
    if (engine == 1) return MT_OK;
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
        return mt__error(MT_ERR_RUNTIME, "torch.fft needs MKL (pip install mkl) or FFTW (%s), and neither was "
                                         "found: on Debian or Ubuntu, apt-get install %s",
                         dbl ? "libfftw3.so.3" : "libfftw3f.so.3", dbl ? "libfftw3-double3" : "libfftw3-single3");
    return MT_OK;
}

/* ---- plans, cached by geometry ---- */

enum { K_FORWARD, K_BACKWARD, K_R2C, K_C2R };

typedef struct {
    int dbl, kind, rank, hrank, align_in, align_out;
    double scale; /* MKL applies the normalization itself (0: none), as PyTorch asks it to; FFTW's runs scale after */
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

/* a committed DFTI descriptor for k (strides and distances are per domain: the input is the backward
 * domain of K_BACKWARD and K_C2R); NULL on failure */
static void *mkl_descriptor(const plan_key *k) {
    const iodim64 *h = &k->hdims[0];
    int bwd_in = k->kind == K_BACKWARD || k->kind == K_C2R;
    long fs[MT_MAX_DIMS + 1] = {0}, bs[MT_MAX_DIMS + 1] = {0}, n[MT_MAX_DIMS];
    for (int i = 0; i < k->rank; i++) {
        const iodim64 *d = &k->dims[i];
        n[i] = (long)d->n, fs[i + 1] = bwd_in ? d->os : d->is, bs[i + 1] = bwd_in ? d->is : d->os;
    }
    void *p = NULL;
    int domain = k->kind >= K_R2C ? DFTI_REAL : DFTI_COMPLEX;
    if (k->rank == 1 ? mkl.create[k->dbl](&p, domain, n[0]) : mkl.create_md[k->dbl](&p, domain, (long)k->rank, n))
        return NULL;
    long st = mkl.set(p, DFTI_PLACEMENT, DFTI_NOT_INPLACE) | mkl.set(p, DFTI_FWD_STRIDES, fs) |
              mkl.set(p, DFTI_BWD_STRIDES, bs);
    mkl.set(p, DFTI_THREAD_LIMIT, 1L); /* our pool spreads the blocks (mkl.c's layer is OpenMP) */
    if (k->kind >= K_R2C) st |= mkl.set(p, DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX);
    if (k->scale) st |= mkl.set(p, bwd_in ? DFTI_BACKWARD_SCALE : DFTI_FORWARD_SCALE, k->scale);
    if (h->n > 1)
        st |= mkl.set(p, DFTI_NUMBER_OF_TRANSFORMS, (long)h->n) |
              mkl.set(p, DFTI_FWD_DISTANCE, (long)(bwd_in ? h->os : h->is)) |
              mkl.set(p, DFTI_BWD_DISTANCE, (long)(bwd_in ? h->is : h->os));
    if (st || mkl.commit(p)) {
        mkl.free_desc(&p);
        return NULL;
    }
    return p;
}

/* under planner: a plan for k over in/out (FFTW_ESTIMATE plans never touch the arrays); NULL on failure */
static void *make_plan(const plan_key *k, void *in, void *out) {
    if (engine == 1) return mkl_descriptor(k);
    fftw_api *a = &apis[k->dbl];
    /* c2r keeps its input (FFTW copies a few lines at a time), which spares a copy of the whole input */
    return k->kind == K_R2C   ? a->plan_r2c(k->rank, k->dims, k->hrank, k->hdims, in, out, FFTW_ESTIMATE)
           : k->kind == K_C2R ? a->plan_c2r(k->rank, k->dims, k->hrank, k->hdims, in, out,
                                            FFTW_ESTIMATE | FFTW_PRESERVE_INPUT)
                              : a->plan_dft(k->rank, k->dims, k->hrank, k->hdims, in, out,
                                            k->kind == K_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
}

/* under planner */
static void destroy_plan(int dbl, void *p) {
    if (engine == 1) mkl.free_desc(&p);
    else apis[dbl].destroy(p);
}

/* the caller runs the plan, then gives it back with put_plan */
static plan_entry *get_plan(const plan_key *k, void *in, void *out, void **uncached) {
    *uncached = NULL;
    pthread_mutex_lock(&planner);
    for (int i = 0; i < cache_used; i++)
        if (!memcmp(&cache[i].key, k, sizeof *k)) {
            cache[i].users++;
            pthread_mutex_unlock(&planner);
            return &cache[i];
        }
    void *p = make_plan(k, in, out);
    plan_entry *e = NULL;
    if (p) {
        int slot = -1;
        if (cache_used < PLAN_CACHE) slot = cache_used++;
        else /* round robin over the idle entries */
            for (int t = 0; t < PLAN_CACHE && slot < 0; t++, cache_next = (cache_next + 1) % PLAN_CACHE)
                if (!cache[cache_next].users) slot = cache_next;
        if (slot >= 0) {
            if (cache[slot].plan) destroy_plan(cache[slot].key.dbl, cache[slot].plan);
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
    if (uncached) destroy_plan(dbl, uncached);
    pthread_mutex_unlock(&planner);
}

/* The plan a loop over blocks holds: most blocks of a pass share one, so it is looked up (under the
 * planner's lock, by comparing keys) only when the key changes, and given back at the end. */
typedef struct {
    plan_key key;
    plan_entry *e;
    void *plan, *uncached;
} held_plan;

static void release_plan(held_plan *h) {
    if (h->plan) put_plan(h->key.dbl, h->e, h->uncached);
    h->plan = NULL;
}

/* one run of the plan for k over in/out */
static mt_status run_plan(held_plan *h, const plan_key *k, char *in, char *out) {
    plan_key key = *k;
    if (engine == 0) { /* FFTW's plans depend on the arrays' alignment; DFTI's do not */
        key.align_in = apis[k->dbl].alignment_of(in);
        key.align_out = apis[k->dbl].alignment_of(out);
    }
    if (!h->plan || memcmp(&h->key, &key, sizeof key)) {
        release_plan(h);
        h->e = get_plan(&key, in, out, &h->uncached);
        h->plan = h->e ? h->e->plan : h->uncached;
        if (!h->plan) return MT_ERR_RUNTIME;
        h->key = key;
    }
    if (engine == 1) {
        long st = k->kind == K_FORWARD || k->kind == K_R2C ? mkl.forward(h->plan, in, out) : mkl.backward(h->plan, in, out);
        return st ? MT_ERR_RUNTIME : MT_OK;
    }
    fftw_api *a = &apis[k->dbl];
    if (k->kind == K_R2C) a->exec_r2c(h->plan, in, out);
    else if (k->kind == K_C2R) a->exec_c2r(h->plan, in, out);
    else a->exec_dft(h->plan, in, out);
    return MT_OK;
}

/* ---- the transform as passes of batched one-dimensional plans ----
 *
 * The last transformed dimension first (the halved one of r2c/c2r), from the input straight into the
 * output, in blocks of whole lines; then each other transformed dimension in place in the output, whose
 * layout is dense: a block of COLS adjacent columns is copied into a contiguous buffer (rows padded so
 * they do not share cache sets), transformed as COLS lines into a second one and copied back. FFTW_ESTIMATE's
 * multi-dimensional plans run the columns in place at power-of-two strides, 5-10x slower than MKL
 * (docs/PERFORMANCE.md). Blocks are fixed by the geometry, not by the number of threads, so each line
 * sees the same plan and the bits do not depend on how the blocks are spread over the threads. */

#define LINE_BLOCK 16384 /* elements of a block of lines (its input and output stay in L2) */
#define COLS 8           /* columns per block of a column pass (a multiple of 8: the AVX-512 tiles) */
#define HALF_MIN 128     /* even real lengths from which r2c/c2r run as complex transforms of half the length */
#define PAR_GRAIN 16384  /* output elements below which a thread is not worth waking */
#define STAGE_MIN (4 << 20) /* bytes of a transform's input or output from which blocks of lines are staged in L2 */
#define STAGE_OUT 2048   /* complex line length from which FFTW writes a block of lines faster to L2, then copied */

typedef struct {
    int dbl, kind, hrank, in_item, out_item, avx512;
    char *in, *out;
    iodim64 line;            /* the transformed dimension of the line pass */
    iodim64 h[MT_MAX_DIMS];  /* the line pass's other dimensions, blocks over the last */
    int64_t rows, nblocks;   /* lines per block, blocks per index of the outer h */
    int64_t numel;           /* output elements of a slab */
    int64_t slab_in, slab_out; /* elements between slabs */
    int ncols;               /* column passes, of the dimensions col_n/col_inner (sizes and output strides) */
    int64_t col_n[MT_MAX_DIMS], col_inner[MT_MAX_DIMS];
    int64_t n, inner, ld, ncb; /* column pass: out viewed as [outer, n, inner]; buffer rows; blocks per outer */
    int64_t cols, half_cols;  /* columns of inner the pass transforms; of the innermost column pass (0: all) */
    double scale;            /* normalization, applied by the last pass (1: none) */
    void *twiddles;          /* r2c/c2r as complex transforms of half the length: exp(-2 pi i k / n), k < n / 4 + 1 */
    int stage_in, stage_out; /* the line pass copies a block's adjacent input lines into L2 first, or its output from there */
    mt_status st;
} pass_job;

static void scale_reals(int dbl, char *p, int64_t n, double s) {
    if (dbl)
        for (double *o = (double *)p, *e = o + n; o < e; o++) *o *= s;
    else
        for (float *o = (float *)p, *e = o + n; o < e; o++) *o *= (float)s;
}

/* On FFTW, real transforms of an even length n = 2m as complex ones of length m (FFTW's own r2c/c2r plans
 * under FFTW_ESTIMATE ran 3-4x slower per line than its c2c of half the length; MKL's own are faster): the real line read as m
 * complex values z = x[2i] + i x[2i+1], Z = DFT_m(z), then with w = exp(-2 pi i k / n), for k <= m/2:
 *   e = (Z[k] + conj(Z[m-k])) / 2, o = -i (Z[k] - conj(Z[m-k])) / 2,
 *   X[k] = e + w o, X[m-k] = conj(e - w o), X[0] and X[m] from Z[0].
 * c2r runs it backwards (X's imaginary parts at 0 and m ignored, as c2r does) into a buffer,
 * then an inverse DFT_m leaves the real line interleaved. Both apply the normalization as they go. */
#define HALF_REAL(T, NAME)                                                                                   \
    static void NAME##_r2c_post(const T *z, T *x, int64_t m, const T *w, T s) { /* Z: m; X: m + 1; s: scale */ \
        T r0 = z[0], i0 = z[1], hs = s * (T)0.5;                                                              \
        x[0] = (r0 + i0) * s, x[1] = 0, x[2 * m] = (r0 - i0) * s, x[2 * m + 1] = 0;                         \
        for (int64_t k = 1, q = m - 1; k <= q; k++, q--) {                                                   \
            T ar = z[2 * k], ai = z[2 * k + 1], br = z[2 * q], bi = -z[2 * q + 1];                           \
            T er = (ar + br) * hs, ei = (ai + bi) * hs, or_ = (ai - bi) * hs, oi = (br - ar) * hs;             \
            T wr = w[2 * k], wi = w[2 * k + 1], pr = wr * or_ - wi * oi, pi = wr * oi + wi * or_;           \
            x[2 * k] = er + pr, x[2 * k + 1] = ei + pi, x[2 * q] = er - pr, x[2 * q + 1] = pi - ei;         \
        }                                                                                                    \
    }                                                                                                        \
    static void NAME##_c2r_pre(const T *x, int64_t xs, T *z, int64_t m, const T *w, T s) { /* xs: step */   \
        z[0] = (x[0] + x[2 * m * xs]) * s, z[1] = (x[0] - x[2 * m * xs]) * s;                                \
        for (int64_t k = 1, q = m - 1; k <= q; k++, q--) {                                                   \
            T ar = x[2 * k * xs], ai = x[2 * k * xs + 1], br = x[2 * q * xs], bi = -x[2 * q * xs + 1];       \
            T er = (ar + br) * s, ei = (ai + bi) * s, dr = (ar - br) * s, di = (ai - bi) * s;                \
            T wr = w[2 * k], wi = -w[2 * k + 1];                                                             \
            T or_ = dr * wr - di * wi, oi = dr * wi + di * wr; /* (a - b) conj(w) */                        \
            z[2 * k] = er - oi, z[2 * k + 1] = ei + or_, z[2 * q] = er + oi, z[2 * q + 1] = or_ - ei;       \
        }                                                                                                    \
    }
HALF_REAL(float, f32)
HALF_REAL(double, f64)
#undef HALF_REAL

#ifdef MT_HAVE_AVX512_HELPERS
/* f32_r2c_post and f32_c2r_pre (unit step) 8 values of k, and their 8 partners m-k, at a time */
static inline __attribute__((always_inline)) AVX512 __m512 rev8(__m512 v) { /* complex order reversed */
    return _mm512_castpd_ps(_mm512_permutexvar_pd(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_castps_pd(v)));
}
static inline __attribute__((always_inline)) AVX512 __m512 conj8(__m512 v) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi64(INT64_MIN)));
}
static inline __attribute__((always_inline)) AVX512 __m512 cmul8(__m512 w, __m512 v) {
    return _mm512_fmaddsub_ps(_mm512_moveldup_ps(w), v, _mm512_mul_ps(_mm512_movehdup_ps(w), _mm512_permute_ps(v, 0xB1)));
}
static inline __attribute__((always_inline)) AVX512 __m512 times_i8(__m512 v) { /* (re, im) -> (-im, re) */
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_permute_ps(v, 0xB1)), _mm512_set1_epi64(0x80000000)));
}

static AVX512 void f32_r2c_post_avx512(const float *z, float *x, int64_t m, const float *w, float s) {
    float r0 = z[0], i0 = z[1], hs = s * 0.5f;
    x[0] = (r0 + i0) * s, x[1] = 0, x[2 * m] = (r0 - i0) * s, x[2 * m + 1] = 0;
    int64_t k = 1, q = m - 1;
    const __m512 half = _mm512_set1_ps(hs);
    for (; k + 15 <= q; k += 8, q -= 8) {
        __m512 a = _mm512_loadu_ps(z + 2 * k), b = conj8(rev8(_mm512_loadu_ps(z + 2 * (q - 7))));
        __m512 e = _mm512_mul_ps(_mm512_add_ps(a, b), half);
        __m512 o = _mm512_mul_ps(times_i8(_mm512_sub_ps(b, a)), half); /* -i (a - b) / 2 */
        __m512 p = cmul8(_mm512_loadu_ps(w + 2 * k), o);
        _mm512_storeu_ps(x + 2 * k, _mm512_add_ps(e, p));
        _mm512_storeu_ps(x + 2 * (q - 7), rev8(conj8(_mm512_sub_ps(e, p))));
    }
    for (; k <= q; k++, q--) {
        float ar = z[2 * k], ai = z[2 * k + 1], br = z[2 * q], bi = -z[2 * q + 1];
        float er = (ar + br) * hs, ei = (ai + bi) * hs, or_ = (ai - bi) * hs, oi = (br - ar) * hs;
        float wr = w[2 * k], wi = w[2 * k + 1], pr = wr * or_ - wi * oi, pi = wr * oi + wi * or_;
        x[2 * k] = er + pr, x[2 * k + 1] = ei + pi, x[2 * q] = er - pr, x[2 * q + 1] = pi - ei;
    }
}

static AVX512 void f32_c2r_pre_avx512(const float *x, float *z, int64_t m, const float *w, float s) {
    z[0] = (x[0] + x[2 * m]) * s, z[1] = (x[0] - x[2 * m]) * s;
    int64_t k = 1, q = m - 1;
    const __m512 sv = _mm512_set1_ps(s);
    for (; k + 15 <= q; k += 8, q -= 8) {
        __m512 a = _mm512_loadu_ps(x + 2 * k), b = conj8(rev8(_mm512_loadu_ps(x + 2 * (q - 7))));
        __m512 e = _mm512_mul_ps(_mm512_add_ps(a, b), sv);
        __m512 io = times_i8(cmul8(conj8(_mm512_loadu_ps(w + 2 * k)), _mm512_mul_ps(_mm512_sub_ps(a, b), sv)));
        _mm512_storeu_ps(z + 2 * k, _mm512_add_ps(e, io));
        _mm512_storeu_ps(z + 2 * (q - 7), rev8(conj8(_mm512_sub_ps(e, io))));
    }
    for (; k <= q; k++, q--) {
        float ar = x[2 * k], ai = x[2 * k + 1], br = x[2 * q], bi = -x[2 * q + 1];
        float er = (ar + br) * s, ei = (ai + bi) * s, dr = (ar - br) * s, di = (ai - bi) * s;
        float wr = w[2 * k], wi = -w[2 * k + 1];
        float or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
        z[2 * k] = er - oi, z[2 * k + 1] = ei + or_, z[2 * q] = er + oi, z[2 * q + 1] = or_ - ei;
    }
}
#endif

/* the half-length path for one block of lines; in/out at the block's start */
static mt_status half_real_block(pass_job *j, held_plan *hp, const iodim64 *h, int64_t lines, char *in, char *out,
                                 char *buf, char *stage) {
    int64_t m = j->line.n / 2;
    plan_key key;
    memset(&key, 0, sizeof key);
    key.dbl = j->dbl, key.rank = 1, key.hrank = 1, key.dims[0] = (iodim64){m, 1, 1};
    if (j->kind == K_R2C) { /* real rows at an even step: complex rows of m, into the buffer (the output's
                             * rows of m + 1 would be at odd steps, where FFTW cannot use its SIMD codelets) */
        key.kind = K_FORWARD, key.hdims[0] = (iodim64){lines, h->is / 2, m};
        if (stage && j->stage_in) in = memcpy(stage, in, (size_t)(lines * j->line.n * j->in_item));
        MT_TRY(run_plan(hp, &key, in, buf));
        for (int64_t l = 0; l < lines; l++) {
            char *z = buf + l * m * j->out_item, *x = out + l * h->os * j->out_item;
            if (j->dbl) f64_r2c_post((const double *)z, (double *)x, m, j->twiddles, j->scale);
#ifdef MT_HAVE_AVX512_HELPERS
            else if (j->avx512) f32_r2c_post_avx512((const float *)z, (float *)x, m, j->twiddles, (float)j->scale);
#endif
            else f32_r2c_post((const float *)z, (float *)x, m, j->twiddles, (float)j->scale);
        }
        return MT_OK;
    }
    for (int64_t l = 0; l < lines; l++) { /* into the buffer: FFTW's in-place plans copy the lines again */
        char *x = in + l * h->is * j->in_item, *z = buf + l * m * 2 * j->out_item;
        if (j->dbl) f64_c2r_pre((const double *)x, j->line.is, (double *)z, m, j->twiddles, j->scale);
#ifdef MT_HAVE_AVX512_HELPERS
        else if (j->avx512 && j->line.is == 1) f32_c2r_pre_avx512((const float *)x, (float *)z, m, j->twiddles, (float)j->scale);
#endif
        else f32_c2r_pre((const float *)x, j->line.is, (float *)z, m, j->twiddles, (float)j->scale);
    }
    key.kind = K_BACKWARD, key.hdims[0] = (iodim64){lines, m, h->os / 2};
    if (!stage || !j->stage_out) return run_plan(hp, &key, buf, out);
    MT_TRY(run_plan(hp, &key, buf, stage));
    memcpy(out, stage, (size_t)(lines * j->line.n * j->out_item));
    return MT_OK;
}

/* block t of the line pass: its first line along the last h, its offsets (elements) in the input and output */
static void block_start(const pass_job *j, int64_t t, int64_t *first, int64_t *in_off, int64_t *out_off) {
    const iodim64 *h = &j->h[j->hrank - 1];
    int64_t o = t / j->nblocks;
    *first = t % j->nblocks * j->rows, *in_off = *first * h->is, *out_off = *first * h->os;
    for (int k = j->hrank - 2; k >= 0; k--) {
        int64_t i = o % j->h[k].n;
        o /= j->h[k].n, *in_off += i * j->h[k].is, *out_off += i * j->h[k].os;
    }
}

static void line_blocks(void *ctx, int64_t begin, int64_t end) {
    pass_job *j = ctx;
    const iodim64 *h = &j->h[j->hrank - 1];
    int64_t cplx = j->kind == K_R2C ? j->out_item : j->in_item, half = j->twiddles ? (j->rows * (j->line.n / 2) * cplx + 63) / 64 * 64 : 0;
    int64_t staged = j->stage_in || j->stage_out ? (j->rows * j->line.n * (j->in_item > j->out_item ? j->in_item : j->out_item) + 63) / 64 * 64 : 0;
    /* buf: the half-length transforms' complex lines; stage: a block's input or output lines in L2 */
    char *buf = NULL, *stage = NULL;
    if ((half || staged) && !(buf = aligned_alloc(64, (size_t)(half + staged)))) {
        __atomic_store_n(&j->st, MT_ERR_OOM, __ATOMIC_RELAXED);
        return;
    }
    if (staged) stage = buf + half;
    held_plan hp = {0};
    for (int64_t t = begin; t < end; t++) {
        int64_t first, in_off, out_off;
        block_start(j, t, &first, &in_off, &out_off);
        plan_key key;
        memset(&key, 0, sizeof key); /* compared bytewise */
        key.dbl = j->dbl, key.kind = j->kind, key.rank = 1, key.hrank = 1, key.dims[0] = j->line;
        key.hdims[0] = (iodim64){mt__min64(j->rows, h->n - first), h->is, h->os};
        if (engine == 1 && j->scale != 1) key.scale = j->scale;
        char *out = j->out + out_off * j->out_item, *in = j->in + in_off * j->in_item;
        int64_t lines = key.hdims[0].n;
        mt_status st;
        if (j->twiddles) {
            st = half_real_block(j, &hp, h, lines, in, out, buf, stage);
        } else {
            if (j->stage_in) in = memcpy(stage, in, (size_t)(lines * j->line.n * j->in_item));
            st = run_plan(&hp, &key, in, j->stage_out ? stage : out);
            if (!st && j->stage_out) memcpy(out, stage, (size_t)(lines * j->line.n * j->out_item));
        }
        if (st) {
            __atomic_store_n(&j->st, st, __ATOMIC_RELAXED);
            break;
        }
        if (j->scale != 1 && !j->twiddles && engine == 0) /* the block's output lines are consecutive; the half path scaled */
            scale_reals(j->dbl, out, key.hdims[0].n * h->os * j->out_item / (j->dbl ? 8 : 4), j->scale);
    }
    release_plan(&hp);
    free(buf);
}

/* buf[c][i] <-> base[i][c] for i < n, c < w (row strides ld and inner, complex elements of `item` bytes);
 * the copy back applies the scale */
static inline void gather_cols(const char *base, int64_t inner, char *buf, int64_t ld, int64_t n, int64_t w, int item) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < w; c++) memcpy(buf + (c * ld + i) * item, base + (i * inner + c) * item, item);
}

static inline void scatter_cols(const char *buf, int64_t ld, char *base, int64_t inner, int64_t n, int64_t w,
                                int item, double s) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < w; c++) {
            const char *from = buf + (c * ld + i) * item;
            char *to = base + (i * inner + c) * item;
            if (s == 1) memcpy(to, from, item);
            else if (item == 16) ((double *)to)[0] = ((const double *)from)[0] * s, ((double *)to)[1] = ((const double *)from)[1] * s;
            else ((float *)to)[0] = ((const float *)from)[0] * (float)s, ((float *)to)[1] = ((const float *)from)[1] * (float)s;
        }
}

#ifdef MT_HAVE_AVX512_HELPERS
/* r[i][j] <- r[j][i] for an 8x8 block of 64-bit elements (complex64 carried as doubles, bits untouched) */
static inline __attribute__((always_inline)) AVX512 void transpose8x8(__m512d r[8]) {
    __m512d t[8], u[8];
    for (int i = 0; i < 4; i++)
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]), t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    for (int h = 0; h < 2; h++) { /* h: even or odd columns */
        u[h] = _mm512_shuffle_f64x2(t[h], t[2 + h], 0x88), u[2 + h] = _mm512_shuffle_f64x2(t[h], t[2 + h], 0xDD);
        u[4 + h] = _mm512_shuffle_f64x2(t[4 + h], t[6 + h], 0x88), u[6 + h] = _mm512_shuffle_f64x2(t[4 + h], t[6 + h], 0xDD);
    }
    for (int h = 0; h < 2; h++) {
        r[h] = _mm512_shuffle_f64x2(u[h], u[4 + h], 0x88), r[4 + h] = _mm512_shuffle_f64x2(u[h], u[4 + h], 0xDD);
        r[2 + h] = _mm512_shuffle_f64x2(u[2 + h], u[6 + h], 0x88), r[6 + h] = _mm512_shuffle_f64x2(u[2 + h], u[6 + h], 0xDD);
    }
}

/* gather_cols/scatter_cols for 8 complex64 columns, 8 rows at a time */
static AVX512 void gather8_c64(const char *base, int64_t inner, char *buf, int64_t ld, int64_t n) {
    const double *s = (const double *)base;
    double *d = (double *)buf;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d r[8];
        for (int q = 0; q < 8; q++) r[q] = _mm512_loadu_pd(s + (i + q) * inner);
        transpose8x8(r);
        for (int c = 0; c < 8; c++) _mm512_storeu_pd(d + c * ld + i, r[c]);
    }
    gather_cols((const char *)(s + i * inner), inner, (char *)(d + i), ld, n - i, 8, 8);
}

static AVX512 void scatter8_c64(const char *buf, int64_t ld, char *base, int64_t inner, int64_t n, double sc) {
    const double *s = (const double *)buf;
    double *d = (double *)base;
    __m512 f = _mm512_set1_ps((float)sc);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d r[8];
        for (int c = 0; c < 8; c++) r[c] = _mm512_loadu_pd(s + c * ld + i);
        transpose8x8(r);
        for (int q = 0; q < 8; q++)
            _mm512_storeu_pd(d + (i + q) * inner, sc == 1 ? r[q] : _mm512_castps_pd(_mm512_mul_ps(_mm512_castpd_ps(r[q]), f)));
    }
    scatter_cols((const char *)(s + i), ld, (char *)(d + i * inner), inner, n - i, 8, 8, sc);
}
#endif

static void column_blocks(void *ctx, int64_t begin, int64_t end) {
    pass_job *j = ctx;
    int item = j->out_item;
    /* the columns gathered into buf, transformed into res (FFTW's in-place plans copy the lines again) */
    char *buf = aligned_alloc(64, (size_t)(2 * COLS * j->ld * item)), *res = buf + COLS * j->ld * item;
    if (!buf) {
        __atomic_store_n(&j->st, MT_ERR_OOM, __ATOMIC_RELAXED);
        return;
    }
    held_plan hp = {0};
    for (int64_t t = begin; t < end; t++) {
        int64_t c0 = t % j->ncb * COLS, w = mt__min64(COLS, j->cols - c0);
        char *base = j->out + (t / j->ncb * j->n * j->inner + c0) * item;
#ifdef MT_HAVE_AVX512_HELPERS
        if (item == 8 && w == COLS && j->avx512)
            for (int c = 0; c < COLS; c += 8) gather8_c64(base + c * 8, j->inner, buf + c * j->ld * 8, j->ld, j->n);
        else
#endif
        if (item == 8) gather_cols(base, j->inner, buf, j->ld, j->n, w, 8);
        else gather_cols(base, j->inner, buf, j->ld, j->n, w, 16);
        plan_key key;
        memset(&key, 0, sizeof key);
        key.dbl = j->dbl, key.kind = j->kind, key.rank = 1, key.hrank = 1;
        key.dims[0] = (iodim64){j->n, 1, 1}, key.hdims[0] = (iodim64){w, j->ld, j->ld};
        mt_status st = run_plan(&hp, &key, buf, res);
        if (st) {
            __atomic_store_n(&j->st, st, __ATOMIC_RELAXED);
            break;
        }
#ifdef MT_HAVE_AVX512_HELPERS
        if (item == 8 && w == COLS && j->avx512)
            for (int c = 0; c < COLS; c += 8) scatter8_c64(res + c * j->ld * 8, j->ld, base + c * 8, j->inner, j->n, j->scale);
        else
#endif
        if (item == 8) scatter_cols(res, j->ld, base, j->inner, j->n, w, 8, j->scale);
        else scatter_cols(res, j->ld, base, j->inner, j->n, w, 16, j->scale);
    }
    release_plan(&hp);
    free(buf);
}

/* fn over [0, n) on the thread pool, the items handed out a few at a time to whichever thread asks next:
 * on a loaded host a thread can be off its core for milliseconds, and a fixed split waited for it. Which
 * thread runs an item changes nothing in it. grain: the fewest items worth a thread. */
typedef struct {
    mt_task_fn fn;
    void *ctx;
    int64_t n, step, next;
} item_queue;

static void take_items(void *ctx, int64_t begin, int64_t end) {
    (void)begin, (void)end;
    item_queue *q = ctx;
    for (int64_t i; (i = __atomic_fetch_add(&q->next, q->step, __ATOMIC_RELAXED)) < q->n;)
        q->fn(q->ctx, i, mt__min64(i + q->step, q->n));
}

static void parallel_items(int64_t n, int64_t grain, mt_task_fn fn, void *ctx) {
    int64_t parts = mt__min64(mt_get_num_threads(), n / (grain > 1 ? grain : 1));
    if (parts <= 1) {
        fn(ctx, 0, n);
        return;
    }
    item_queue q = {fn, ctx, n, n / (8 * parts) > 1 ? n / (8 * parts) : 1, 0};
    mt__parallel_for(parts, 1, take_items, &q);
}

/* every pass of one slab (j->in, j->out at its start); the loops over blocks run in parallel unless this
 * already runs on the thread pool */
static void run_passes(pass_job *j) {
    double scale = j->scale;
    int kind = j->kind, in_item = j->in_item;
    if (j->ncols) j->scale = 1; /* the last column pass scales */
    int64_t tasks = j->numel / (j->h[j->hrank - 1].n * j->h[j->hrank - 1].os) * j->nblocks;
    int64_t per_task = j->numel / tasks;
    parallel_items(tasks, per_task >= PAR_GRAIN ? 1 : PAR_GRAIN / per_task, line_blocks, j);
    for (int i = j->ncols - 1; i >= 0 && !j->st; i--) { /* the column passes, in place */
        j->kind = kind == K_BACKWARD ? K_BACKWARD : K_FORWARD, j->in_item = j->out_item;
        j->n = j->col_n[i], j->inner = j->col_inner[i];
        j->cols = i == j->ncols - 1 && j->half_cols ? j->half_cols : j->inner, j->ncb = (j->cols + COLS - 1) / COLS;
        j->ld = (j->n + 7) / 8 * 8 + 8;
        j->scale = i == 0 ? scale : 1;
        tasks = j->numel / (j->n * j->inner) * j->ncb, per_task = j->numel / tasks;
        parallel_items(tasks, per_task >= PAR_GRAIN ? 1 : PAR_GRAIN / per_task, column_blocks, j);
    }
    j->scale = scale, j->kind = kind, j->in_item = in_item;
}

static void slab_range(void *ctx, int64_t begin, int64_t end) {
    pass_job *all = ctx;
    for (int64_t i = begin; i < end; i++) {
        pass_job j = *all;
        j.in += i * j.slab_in * j.in_item, j.out += i * j.slab_out * j.out_item, j.st = MT_OK;
        run_passes(&j);
        if (j.st) {
            __atomic_store_n(&all->st, j.st, __ATOMIC_RELAXED);
            return;
        }
    }
}

/* A multi-dimensional c2c on MKL: one descriptor over all the transformed dimensions, run per index of the
 * batch (one per call whatever the thread count, so the bits never depend on it), as PyTorch runs MKL; the
 * passes' column copies cost ~10% against it at 8x128x256. */
typedef struct {
    plan_key key;
    char *in, *out;
    int64_t idist, odist; /* elements between images */
    int item;
    mt_status st;
} image_job;

static void image_range(void *ctx, int64_t begin, int64_t end) {
    image_job *m = ctx;
    held_plan hp = {0};
    for (int64_t i = begin; i < end; i++) {
        char *out = m->out + i * m->odist * m->item;
        mt_status st = run_plan(&hp, &m->key, m->in + i * m->idist * m->item, out);
        if (st) {
            __atomic_store_n(&m->st, st, __ATOMIC_RELAXED);
            break;
        }
    }
    release_plan(&hp);
}

/* the batch dimensions (not in is_sig, perm's order) as one of (n, is, os), or 0 when they do not merge */
static int one_batch_dim(const mt_tensor *x, const int *perm, const int *is_sig, const int64_t *ostrides, iodim64 *b) {
    *b = (iodim64){1, 0, 0};
    int merged = 0;
    for (int i = 0; i < x->ndim; i++) {
        int d = perm[i];
        if (is_sig[d] || x->sizes[d] == 1) continue;
        if (merged && !(b->is == x->sizes[d] * x->strides[d] && b->os == x->sizes[d] * ostrides[d])) return 0;
        b->n = merged ? b->n * x->sizes[d] : x->sizes[d], b->is = x->strides[d], b->os = ostrides[d], merged = 1;
    }
    return 1;
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

/* the normalization's factor for a signal of sig points (1: none): 0 none, 1 1/sqrt(n), 2 1/n, as PyTorch's */
static double norm_factor(int normalization, int64_t sig) {
    return normalization == 2 ? 1.0 / (double)sig : normalization == 1 ? 1.0 / sqrt((double)sig) : 1.0;
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
    for (int i = ndim - 1; i >= 0; i--) strides[perm[i]] = step, step = mt__wmul(step, out_sizes[perm[i]]); /* wraps only beside a 0 size */
    MT_TRY(mt__alloc(ndim, out_sizes, strides, out_dtype, x->device, out));
    int64_t numel = mt__numel(ndim, out_sizes);
    if (numel == 0 || mt__numel(ndim, x->sizes) == 0 || x->device != MT_CPU) return MT_OK;
    /* A two-sided r2c's other half is left to fill_conjugate_symmetry: only the innermost column pass can
     * skip its columns (the others' columns interleave it), so with more passes it starts as zeros. */
    int64_t half_cols = 0, last_size = out_sizes[dims[ndims - 1]];
    if (kind == K_R2C && signal_n[ndims - 1] / 2 + 1 < last_size) {
        if (ndims == 2 && strides[dims[1]] == 1) half_cols = signal_n[ndims - 1] / 2 + 1;
        else if (ndims > 2) memset(mt__data(*out), 0, numel * mt_dtype_itemsize(out_dtype));
    }

    pthread_mutex_lock(&planner);
    mt_status st = load_api(dbl);
    pthread_mutex_unlock(&planner);
    if (st) { MT_DROP(*out); return st; }

    iodim64 batch;
    if (engine == 1 && kind <= K_BACKWARD && ndims > 1 && ndims <= 7 /* DFTI's ranks */ &&
        one_batch_dim(x, perm, is_sig, strides, &batch) && batch.n > 1 /* one image: the passes spread it */) {
        image_job m;
        memset(&m, 0, sizeof m); /* the key is compared bytewise */
        m.key.dbl = dbl, m.key.kind = kind, m.key.rank = ndims, m.key.hrank = 1, m.key.hdims[0] = (iodim64){1, 0, 0};
        int64_t sig = 1, numel_out = 1;
        for (int i = 0; i < ndims; i++) {
            m.key.dims[i] = (iodim64){signal_n[i], x->strides[dims[i]], strides[dims[i]]};
            sig *= signal_n[i], numel_out *= out_sizes[dims[i]];
        }
        m.in = mt__data(x), m.out = mt__data(*out), m.idist = batch.is, m.odist = batch.os;
        m.item = mt_dtype_itemsize(out_dtype);
        double scale = norm_factor(normalization, sig);
        m.key.scale = scale != 1 ? scale : 0; /* a plan key's 0: none (MKL-only path) */
        parallel_items(batch.n, numel_out >= PAR_GRAIN ? 1 : PAR_GRAIN / numel_out, image_range, &m);
        if (!m.st) return MT_OK;
        MT_DROP(*out);
        return m.st == MT_ERR_OOM ? mt__error(MT_ERR_OOM, "FFT: out of memory") : mt__error(MT_ERR_RUNTIME, "MKL could not run this transform");
    }

    pass_job j;
    memset(&j, 0, sizeof j);
    int last = (int)dims[ndims - 1];
    j.dbl = dbl, j.kind = kind, j.in = mt__data(x), j.out = mt__data(*out), j.half_cols = half_cols;
    j.in_item = mt_dtype_itemsize(x->dtype), j.out_item = mt_dtype_itemsize(out_dtype);
    int64_t sig = 1;
    for (int i = 0; i < ndims; i++) sig *= signal_n[i];
    j.scale = norm_factor(normalization, sig);
    j.avx512 = mt__cpu_avx512f();
    /* a multi-dimensional transform with a batch goes one index of the outermost batch dimension (a slab)
     * at a time, all its passes while it is in cache */
    int slabbed = ndims > 1 && ndim > ndims;
    j.slab_in = slabbed ? x->strides[perm[0]] : 0, j.slab_out = slabbed ? strides[perm[0]] : 0;
    int64_t slabs = slabbed ? x->sizes[perm[0]] : 1;
    j.numel = numel / slabs;

    /* the line pass: the other dimensions in perm's order, size-1 ones dropped, neighbours that step
     * through memory as one dimension merged */
    j.line = (iodim64){signal_n[ndims - 1], x->strides[last], strides[last]};
    for (int i = slabbed; i < ndim - 1; i++) {
        int d = perm[i];
        if (x->sizes[d] == 1) continue;
        iodim64 *p = j.hrank ? &j.h[j.hrank - 1] : NULL;
        if (p && p->is == x->sizes[d] * x->strides[d] && p->os == x->sizes[d] * strides[d])
            p->n *= x->sizes[d], p->is = x->strides[d], p->os = strides[d];
        else
            j.h[j.hrank++] = (iodim64){x->sizes[d], x->strides[d], strides[d]};
    }
    if (!j.hrank) j.h[j.hrank++] = (iodim64){1, 0, out_sizes[last]};
    int64_t line_len = signal_n[ndims - 1] > out_sizes[last] ? signal_n[ndims - 1] : out_sizes[last];
    int64_t inner_n = j.h[j.hrank - 1].n;
    j.rows = LINE_BLOCK / line_len > 1 ? mt__min64(inner_n, LINE_BLOCK / line_len) : 1;
    j.nblocks = (inner_n + j.rows - 1) / j.rows;
    for (int i = 0; i < ndims - 1; i++) j.col_n[i] = out_sizes[dims[i]], j.col_inner[i] = strides[dims[i]];
    j.ncols = ndims - 1;
    int64_t n_last = signal_n[ndims - 1];
    if (engine == 0 && (kind == K_C2R || (kind == K_R2C && j.line.is == 1 && j.h[j.hrank - 1].is % 2 == 0)) && n_last % 2 == 0 &&
        n_last >= HALF_MIN) {
        int64_t nw = n_last / 4 + 1;
        if (!(j.twiddles = malloc(nw * 2 * (dbl ? sizeof(double) : sizeof(float))))) {
            MT_DROP(*out);
            return mt__error(MT_ERR_OOM, "FFT: out of memory");
        }
        for (int64_t k = 0; k < nw; k++) {
            double a = 2 * M_PI * (double)k / (double)n_last, c = cos(a), sn = -sin(a);
            if (dbl) ((double *)j.twiddles)[2 * k] = c, ((double *)j.twiddles)[2 * k + 1] = sn;
            else ((float *)j.twiddles)[2 * k] = (float)c, ((float *)j.twiddles)[2 * k + 1] = (float)sn;
        }
    }

    /* On FFTW, a big transform (STAGE_MIN bytes) whose blocks of lines are adjacent stages them in L2: memcpy
     * streamed the input from memory faster than FFTW's reads of each line, and from STAGE_OUT complex points
     * FFTW's writes were slower than a copy as well (2-3%: docs/PERFORMANCE.md, "torch.fft, session 20"); inputs
     * already in cache only paid for the copy; MKL is faster without. The plans keep their strides (an
     * unaligned input's gets the aligned one). */
    const iodim64 *hl = &j.h[j.hrank - 1];
    int64_t m_len = j.twiddles ? n_last / 2 : n_last; /* the complex transform's length */
    int complex_lines = kind == K_FORWARD || kind == K_BACKWARD || j.twiddles;
    j.stage_in = engine == 0 && complex_lines && kind != K_C2R && mt__numel(ndim, x->sizes) * j.in_item >= STAGE_MIN &&
                 j.line.is == 1 && (hl->n == 1 || hl->is == n_last);
    j.stage_out = engine == 0 && complex_lines && kind != K_R2C && numel * j.out_item >= STAGE_MIN && m_len >= STAGE_OUT &&
                  j.line.os == 1 && (hl->n == 1 || hl->os == n_last);

    if (slabs >= 2 * mt_get_num_threads()) { /* the slabs spread over the threads, each slab's passes serial */
        int64_t grain = j.numel >= PAR_GRAIN ? 1 : PAR_GRAIN / j.numel;
        parallel_items(slabs, grain, slab_range, &j);
    } else {
        slab_range(&j, 0, slabs);
    }
    free(j.twiddles);
    if (j.st) {
        MT_DROP(*out);
        return j.st == MT_ERR_OOM ? mt__error(MT_ERR_OOM, "FFT: out of memory")
                                  : mt__error(MT_ERR_RUNTIME, "%s could not run this transform", engine == 1 ? "MKL" : "FFTW");
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
 * X[k] = conj(X[-k mod n]) over every transformed dimension, a line of the last one at a time */
static void fill_conjugate_symmetry(mt_tensor *out, int ndims, const int64_t *dims, int64_t half) {
    int ndim = out->ndim, last = (int)dims[ndims - 1], is_sig[MT_MAX_DIMS] = {0};
    for (int i = 0; i < ndims; i++) is_sig[dims[i]] = 1;
    int64_t idx[MT_MAX_DIMS] = {0}, n = out->sizes[last], ls = out->strides[last];
    char *base = mt__data(out);
    for (;;) {
        int64_t dst = 0, src = 0; /* the line at idx, and its mirror image */
        for (int d = 0; d < ndim; d++)
            if (d != last) {
                int64_t m = is_sig[d] ? (out->sizes[d] - idx[d]) % out->sizes[d] : idx[d];
                dst += idx[d] * out->strides[d], src += m * out->strides[d];
            }
        if (out->dtype == MT_C128) {
            double *t = (double *)base + 2 * dst, *f = (double *)base + 2 * src;
            for (int64_t k = half; k < n; k++) t[2 * k * ls] = f[2 * (n - k) * ls], t[2 * k * ls + 1] = -f[2 * (n - k) * ls + 1];
        } else {
            float *t = (float *)base + 2 * dst, *f = (float *)base + 2 * src;
            for (int64_t k = half; k < n; k++) t[2 * k * ls] = f[2 * (n - k) * ls], t[2 * k * ls + 1] = -f[2 * (n - k) * ls + 1];
        }
        int d = ndim - 1;
        for (; d >= 0; d--)
            if (d != last && ++idx[d] < out->sizes[d]) break;
            else idx[d] = 0;
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
     * one multi-dimensional c2r only for inputs that are not Hermitian); the c2r reads the first `half`
     * entries of the last dimension in place */
    mt_tensor *y = x;
    if (ndims > 1) MT_TRY(mt__impl_fft_c2c(x, ndims - 1, d, normalization, 0, &y));
    memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
    sizes[last] = last_dim_size;
    int64_t one = last;
    mt_status st = execute(K_C2R, y, 1, &one, &last_dim_size, sizes, x->dtype == MT_C128 ? MT_F64 : MT_F32,
                           normalization, out);
    if (y != x) mt_tensor_release(y);
    return st;
}
