/* internal.h — structures and helpers shared by the core, not part of the ABI. */
#ifndef MT_INTERNAL_H
#define MT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../include/mt.h"

#define MT_MAX_DIMS 25      /* PyTorch's TensorIterator limit */
#define MT_MAX_OPERANDS 4   /* output + three inputs */
#define MT_GRAIN_SIZE 32768 /* below this many elements a loop stays on one thread */
/* a product that wraps, without C's signed-overflow undefined behaviour: byte strides of empty
 * tensors (whose strides may be anything) and PyTorch's own wrapping int64 stride arithmetic */
static inline int64_t mt__wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
/* PyTorch's name of a device in messages */
static inline const char *mt__device_name(int device) { return device == MT_META ? "meta" : "cpu"; }

/* ---- storage and tensor ------------------------------------------------- */

typedef struct mt_storage {
    atomic_long refcount;
    void *data;
    int64_t nbytes;
    void (*deleter)(void *); /* external memory: called with ctx at the end */
    void *ctx;
    atomic_llong version;    /* shared by every view of this storage */
    int device;
    int inference;           /* allocated in inference mode: its tensors are inference tensors */
    int size_class;          /* a large block's class in tensor.c's cache, else -1 */
} mt_storage;

struct mt_tensor {
    atomic_long refcount;
    mt_storage *storage;
    int64_t offset; /* in elements */
    int ndim;
    int dtype;
    int device;
    int wrapped; /* a wrapped Python number: lowest promotion priority */
    /* autograd (csrc/autograd) */
    int requires_grad;        /* a leaf that accumulates .grad */
    int retains_grad;         /* a non-leaf that keeps .grad (retain_grad()) */
    int output_nr;            /* which output of grad_fn this is */
    int view_nograd;          /* a view created with grad mode off */
    int view_multi;           /* an output of split/unbind (1; 2: its base needed no grad): no in-place */
    struct mt_tensor *base;   /* a view: the (non-view) tensor it views, strong; in-place writes rebase it */
    int64_t attr_version;     /* a view: storage version its grad_fn was recorded at (else regenerated) */
    void *handle;             /* Python-side state (hooks), dropped through the autograd callback */
    int hook_flags;
    struct mt_node *grad_fn;  /* strong reference */
    struct mt_node *grad_acc; /* weak: the leaf's AccumulateGrad node while one exists */
    mt_tensor *grad;          /* strong reference */
    int64_t sizes[MT_MAX_DIMS];
    int64_t strides[MT_MAX_DIMS];
};

/* A new tensor with fresh uninitialised storage; strides contiguous unless given. */
mt_status mt__alloc(int ndim, const int64_t *sizes, const int64_t *strides, int dtype,
                    int device, mt_tensor **out);
/* mt__alloc with readable_tail bytes past the end that may be read (never written, not in nbytes) */
mt_status mt__alloc_padded(int ndim, const int64_t *sizes, const int64_t *strides, int dtype, int device,
                           size_t readable_tail, mt_tensor **out);
/* A new tensor header over t's storage (retained). */
mt_status mt__view_of(const mt_tensor *t, int ndim, const int64_t *sizes,
                      const int64_t *strides, int64_t offset, mt_tensor **out);
int64_t mt__numel(int ndim, const int64_t *sizes);
/* PyTorch's numel check ("numel: integer multiplication overflow"), which every header passes; an op
 * whose PyTorch kernel resize_s its output meets it before mt__alloc's storage-size check */
mt_status mt__check_numel(int ndim, const int64_t *sizes);
void mt__storage_release(mt_storage *s);
/* row-major strides (size-1 dims as 1); returns 1 when one passes int64 (PyTorch's "Stride calculation
 * overflowed"; the strides are then wrapped) */
int mt__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* the first element's address; computed in integers because an empty view's offset may be huge
 * (the address of such a view is never read) */
static inline char *mt__data(const mt_tensor *t) {
    return (char *)((uintptr_t)t->storage->data + (uint64_t)t->offset * (uint64_t)mt_dtype_itemsize(t->dtype));
}
/* a + b wrapping, for offsets and strides of views that never address memory when it wraps */
static inline int64_t mt__wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t mt__min64(int64_t a, int64_t b) { return a < b ? a : b; }
/* Normalise dim into [0, ndim) or fail with PyTorch's IndexError text. */
mt_status mt__wrap_dim(int64_t *dim, int ndim);
/* Format sizes as "[2, 3]" into buf. */
const char *mt__fmt_sizes(char *buf, size_t cap, int ndim, const int64_t *sizes);

/* autograd/graph.c: thread-local inference mode (storages remember it); a dying tensor's autograd state */
int mt__inference_enabled(void);
void mt__tensor_autograd_free(mt_tensor *t);
int mt__tensor_try_retain(mt_tensor *t);

/* ---- errors --------------------------------------------------------------- */

mt_status mt__error(int kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
mt_status mt__oom(int64_t nbytes); /* PyTorch's failed-allocation error (tensor.c) */
/* release an output a failed call allocated and leave NULL behind: a caller never sees a
 * dangling *out (found by the fuzzer: mt_index returned a freed tensor on error) */
#define MT_DROP(p)                      \
    do {                                \
        mt_tensor_release(p);           \
        (p) = NULL;                     \
    } while (0)
#define MT_TRY(expr)                    \
    do {                                \
        mt_status st__ = (expr);        \
        if (st__ != MT_OK) return st__; \
    } while (0)

/* ---- profiler (core/profiler.c) -------------------------------------------
 * MT_PROFILE(name, tensors...) first in a public op entry times it, under PyTorch's op name
 * (without "aten::"), with the tensor inputs' shapes. Not recording: a load and a branch at entry,
 * a branch on a local at exit (the cleanup). MT_PROFILE_KIND also says whether the op ran in place;
 * MT_PROFILE_ARRAY takes its inputs as an array (cat's). */
extern int mt__prof_on;
extern _Thread_local int64_t mt__prof_bytes;
int64_t mt__prof_open(const char *name, int kind, int n, mt_tensor *const *in);
void mt__prof_finish(int64_t id);
static inline void mt__prof_close(int64_t *id) {
    if (__builtin_expect(*id >= 0, 0)) mt__prof_finish(*id);
}
#define MT_PROFILE_ARRAY(name, kind, n, in)                                               \
    __attribute__((cleanup(mt__prof_close))) int64_t mt__prof_id_ =                      \
        __builtin_expect(__atomic_load_n(&mt__prof_on, __ATOMIC_RELAXED), 0)            \
            ? mt__prof_open((name), (kind), (n), (in))                                  \
            : -1
#define MT_PROFILE_KIND(name, kind, ...)                                                  \
    MT_PROFILE_ARRAY(name, kind,                                                          \
                     (int)(sizeof((mt_tensor *[]){NULL, __VA_ARGS__}) / sizeof(mt_tensor *)) - 1, \
                     ((mt_tensor *[]){NULL, __VA_ARGS__} + 1))
#define MT_PROFILE(name, ...) MT_PROFILE_KIND(name, MT_PROF_OP, __VA_ARGS__)
/* PyTorch's names of the kinds one entry point runs (mt_reduce's ops, ...), in profiler.c */
#define MT_PROF_NAME(table, i) ((unsigned)(i) < sizeof(table) / sizeof *(table) ? (table)[i] : "?")
extern const char *const mt__prof_names_dropout[4];
#include "../generated/names.h" /* the selector families' names (csrc/ops.tbl) */
/* a storage of n bytes allocated (n > 0) or freed (n < 0), counted while profile_memory records */
static inline void mt__prof_memory(int64_t n) {
    if (__builtin_expect(__atomic_load_n(&mt__prof_on, __ATOMIC_RELAXED) & MT_PROF_MEMORY, 0)) mt__prof_bytes += n;
}

/* ---- dtypes --------------------------------------------------------------- */

extern const char *const mt_dtype_names[MT_NUM_DTYPES]; /* "Float", "Long", ... */
/* the C++ type names (caffe2::TypeMeta) some PyTorch messages print: "float", "c10::Half", ... */
extern const char *const mt__typemeta_names[MT_NUM_DTYPES];
/* a per-dtype table is declared unsized and checked here, so a new dtype cannot leave a hole */
#define MT_DTYPE_TABLE(t) _Static_assert(sizeof(t) / sizeof *(t) == MT_NUM_DTYPES, #t ": one entry per dtype")
/* the floats kernels compute in; float8 is a floating type (promotion, can_cast, finfo) that only
 * conversions and data movement handle, so kernels that branch on mt__is_float see it as neither
 * and reach their "not implemented" error */
static inline int mt__is_float(int dt) { return dt >= MT_F16 && dt <= MT_F64; }
static inline int mt__is_float8(int dt) { return dt >= MT_F8E5M2 && dt <= MT_F8E8M0FNU; }
/* complex64/complex128: their own kernels (loops.h ROWS_COMPLEX); kernels that branch on
 * mt__is_float/mt__is_int see them as neither, as for float8, and reach their error */
static inline int mt__is_complex(int dt) { return dt == MT_C64 || dt == MT_C128; }
static inline int mt__complex_to_real(int dt) { return dt == MT_C64 ? MT_F32 : dt == MT_C128 ? MT_F64 : dt; }
/* the complex dtype of a floating one: -1 (error set) where PyTorch has none we support
 * (float16 -> complex32, bfloat16 -> none) */
int mt__to_complex(int dt);
/* conj, conj_physical, real: the identity on real dtypes (elementwise.c) */
int mt__unary_identity(int op, const mt_tensor *x);
/* a 16-byte element (complex128) for kernels that move elements by size */
typedef struct { uint64_t lo, hi; } mt_bytes16;
/* dtypes autograd differentiates (PyTorch: floating and complex) */
static inline int mt__is_differentiable(int dt) { return mt__is_float(dt) || mt__is_complex(dt); }
static inline int mt__is_floating(int dt) { return mt__is_float(dt) || mt__is_float8(dt); }
static inline int mt__is_int(int dt) { return dt >= MT_U8 && dt <= MT_I64; }
int mt__default_float(void);
/* PyTorch's error for a kernel its CPU build has no instance of for a dtype:
 * "\"sum_cpu\" not implemented for 'Float8_e4m3fn'" */
mt_status mt__not_implemented(const char *kernel, int dtype);
/* also complex, in the kernels not written for it yet (PyTorch has some: gather, cumsum, ...) */
#define MT_NO_FLOAT8(dt, kernel)                                                         \
    do {                                                                                 \
        if (mt__is_float8(dt) || mt__is_complex(dt)) return mt__not_implemented(kernel, dt); \
    } while (0)

/* float16 / bfloat16 <-> float32, round to nearest even */
static inline float mt__bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t mt__f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float mt__bf16_to_f32(uint16_t h) { return mt__bits_f32((uint32_t)h << 16); }
static inline uint16_t mt__f32_to_bf16(float f) {
    uint32_t u = mt__f32_bits(f);
    uint32_t r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16; /* branch-free so loops vectorise */
    return (uint16_t)(f != f ? 0x7FC0 : r);
}
static inline float mt__f16_to_f32(uint16_t h) {
    /* FP16 library (Maratyszcza), as PyTorch uses */
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = 0xE0u << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = mt__bits_f32((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = 126u << 23;
    const float magic_bias = 0.5f;
    const float denormalized = mt__bits_f32((two_w >> 17) | magic_mask) - magic_bias;
    const uint32_t denormalized_cutoff = 1u << 27;
    const uint32_t result = sign | (two_w < denormalized_cutoff ? mt__f32_bits(denormalized)
                                                                 : mt__f32_bits(normalized));
    return mt__bits_f32(result);
}
static inline uint16_t mt__f32_to_f16(float f) {
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    float base = (__builtin_fabsf(f) * scale_to_inf) * scale_to_zero;
    const uint32_t w = mt__f32_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = mt__bits_f32((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = mt__f32_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

/* float8 <-> float32: c10's conversions (torch/headeronly/util/Float8_*.h), bit for bit. Every
 * other dtype converts through float32, as PyTorch's casts do (Float8 has only a float constructor).
 * To float8: round to nearest even; e4m3fn saturates overflow and infinities to +-448, e5m2
 * overflows to +-inf, the fnuz formats give their one NaN (0x80) and no negative zero, e8m0fnu
 * keeps the exponent (rounded) and drops the sign. */
static inline float mt__e4m3fn_to_f32(uint8_t in) {
    const uint32_t w = (uint32_t)in << 24, sign = w & 0x80000000u, nonsign = w & 0x7FFFFFFFu;
    uint32_t renorm = nonsign ? (uint32_t)__builtin_clz(nonsign) : 32;
    renorm = renorm > 4 ? renorm - 4 : 0;
    const int32_t inf_nan_mask = ((int32_t)(nonsign + 0x01000000u) >> 8) & INT32_C(0x7F800000);
    const int32_t zero_mask = (int32_t)(nonsign - 1) >> 31;
    return mt__bits_f32(sign | ((((nonsign << renorm >> 4) + ((0x78 - renorm) << 23)) | (uint32_t)inf_nan_mask) &
                                ~(uint32_t)zero_mask));
}
static inline uint8_t mt__f32_to_e4m3fn(float f) {
    uint32_t u = mt__f32_bits(f);
    const uint32_t sign = u & 0x80000000u, denorm_mask = 141u << 23;
    uint8_t r;
    u ^= sign;
    if (u >= 1087u << 20) r = u > 0x7F800000u ? 0x7F : 0x7E; /* NaN stays NaN; the rest saturates */
    else if (u < 121u << 23) r = (uint8_t)(mt__f32_bits(mt__bits_f32(u) + mt__bits_f32(denorm_mask)) - denorm_mask);
    else {
        u += ((uint32_t)(7 - 127) << 23) + 0x7FFFF + ((u >> 20) & 1);
        r = (uint8_t)(u >> 20);
        if (r == 0x7F) r = 0x7E; /* rounding into the NaN pattern saturates */
    }
    return (uint8_t)(r | (sign >> 24));
}
static inline float mt__e5m2_to_f32(uint8_t in) { return mt__f16_to_f32((uint16_t)(in << 8)); }
static inline uint8_t mt__f32_to_e5m2(float f) {
    uint32_t u = mt__f32_bits(f);
    const uint32_t sign = u & 0x80000000u, denorm_mask = 134u << 23;
    uint8_t r;
    u ^= sign;
    if (u >= 143u << 23) r = u > 0x7F800000u ? 0x7F : 0x7C;
    else if (u < 113u << 23) r = (uint8_t)(mt__f32_bits(mt__bits_f32(u) + mt__bits_f32(denorm_mask)) - denorm_mask);
    else {
        u += ((uint32_t)(15 - 127) << 23) + 0xFFFFF + ((u >> 21) & 1);
        r = (uint8_t)(u >> 21);
    }
    return (uint8_t)(r | (sign >> 24));
}
/* the fnuz formats: we exponent bits, wm mantissa bits; 0x80 is NaN, there is no infinity */
static inline float mt__fnuz_to_f32(uint8_t x, uint32_t we, uint32_t wm) {
    if (x == 0) return 0;
    if (x == 0x80) return mt__bits_f32(0x7F800001u);
    uint32_t mant = x & ((1u << wm) - 1), exp = (x & 0x7Fu) >> wm;
    if (exp == 0) { /* subnormal */
        uint32_t sh = 1 + (uint32_t)__builtin_clz(mant) - (32 - wm);
        mant = (mant << sh) & ((1u << wm) - 1);
        exp += 1 - sh;
    }
    exp += (1u << 7) - (1u << (we - 1)) - 1;
    return mt__bits_f32((uint32_t)(x >> 7) << 31 | exp << 23 | mant << (23 - wm));
}
static inline uint8_t mt__f32_to_fnuz(float f, uint32_t we) {
    const uint32_t wm = 7 - we, bias = (1u << (we - 1)), /* 8 or 16 */
        fnuz_max = (we == 4 ? 0x87u : 0x8Fu) << 23, denorm_mask = (we == 4 ? 0x8Cu : 0x85u) << 23;
    uint32_t u = mt__f32_bits(f);
    const uint32_t sign = u & 0x80000000u;
    uint32_t r;
    u ^= sign;
    if (u >= fnuz_max) return 0x80;
    if (u < (128 - bias) << 23) { /* below the smallest normal, 2^(1 - bias): subnormal */
        r = (uint8_t)(mt__f32_bits(mt__bits_f32(u) + mt__bits_f32(denorm_mask)) - denorm_mask);
        if (r == 0) return 0; /* no negative zero */
    } else {
        u += ((bias - 127) << 23) + ((1u << (22 - wm)) - 1) + ((u >> (23 - wm)) & 1);
        r = (uint8_t)(u >> (23 - wm));
    }
    return (uint8_t)(r | (sign >> 24));
}
static inline float mt__e8m0_to_f32(uint8_t x) {
    return mt__bits_f32(x == 0 ? 0x00400000u : x == 0xFF ? 0x7F800001u : (uint32_t)x << 23);
}
static inline uint8_t mt__f32_to_e8m0(float f) {
    const uint32_t u = mt__f32_bits(f), exp = (u >> 23) & 0xFF;
    if (exp == 0xFF) return 0xFF;
    /* round the mantissa half to even on the exponent's low bit; a zero exponent counts as even */
    int g = (u & 0x400000) != 0, rs = (u & 0x3FFFFF) != 0;
    return (uint8_t)(exp + (g && (rs || exp > 0)));
}

/* Float to integer without undefined behaviour: NaN and out-of-range values
 * give what x86's cvttsd2si gives (INT64_MIN), narrower types wrap from int64. */
static inline int64_t mt__f2i(double x) {
    if (x >= -9223372036854775808.0 && x < 9223372036854775808.0) return (int64_t)x;
    return INT64_MIN;
}

/* PyTorch's checked Scalar conversion (c10::overflows): a Python number (f if is_float, else i) that
 * an op converts to dtype must fit, else "value cannot be converted to type ... without overflow" */
mt_status mt__check_fits(double f, int64_t i, int is_float, int dtype);
/* t converted to dtype without autograd (t itself, retained, when it has that dtype and !copy) */
mt_status mt__impl_to_dtype(mt_tensor *t, int dtype, int copy, mt_tensor **out);

/* ---- scalar arguments and the op descriptors ------------------------------- */

typedef struct mt_kargs {
    double alpha;  /* add/sub alpha, addcmul/addcdiv value, ternary scalar */
    int64_t ialpha;
    double s1, s2; /* nan_to_num's posinf/neginf */
    atomic_int *zero_div; /* integer division kernels set it on a zero divisor */
    /* scalar_last: the last input is the number sv in the compute type, not read from memory
     * (PyTorch's opmath scalar: float16/bfloat16 ops use a scalar operand unrounded, in float) */
    int scalar_last;
    double sv;
} mt_kargs;

/* One inner loop: d[0] is the output, d[1..] inputs; s[k] their byte strides. */
typedef void (*mt_loop_fn)(char **d, const int64_t *s, int64_t n, const mt_kargs *k);

enum { MT_KIND_UNARY, MT_KIND_BINARY, MT_KIND_TERNARY };
/* the result dtype from the compute dtype: same; float (integers and bool in the default float dtype);
 * bool; real / freal: as same / float, but complex gives its real dtype (abs, angle); complex: the
 * complex dtype of a float one (torch.complex, polar) */
enum { MT_RESULT_SAME, MT_RESULT_FLOAT, MT_RESULT_BOOL, MT_RESULT_REAL, MT_RESULT_FREAL, MT_RESULT_COMPLEX };

typedef struct mt_op_desc {
    const char *name;
    int kind;
    int result;
    mt_loop_fn loops[MT_NUM_DTYPES]; /* indexed by compute dtype; NULL = unsupported */
} mt_op_desc;

extern const mt_op_desc mt_ops[MT_NUM_OPS];

/* ---- the elementwise iterator --------------------------------------------- */

typedef struct mt_iter {
    int ndim;
    int nops;
    int64_t numel;
    int64_t shape[MT_MAX_DIMS];                   /* fastest dimension first */
    int64_t strides[MT_MAX_OPERANDS][MT_MAX_DIMS]; /* in bytes */
    char *data[MT_MAX_OPERANDS];
} mt_iter;

/* Broadcast the inputs' shapes into out_sizes (PyTorch's error on mismatch). */
mt_status mt__broadcast_shapes(int n, mt_tensor *const *ts, int *ndim, int64_t *sizes);
/* Strides a new output should get so that it follows the inputs' memory
 * layout (PyTorch's TensorIterator dimension reordering). */
void mt__output_strides(int n, mt_tensor *const *ins, int ndim, const int64_t *sizes,
                        int64_t *strides);
/* PyTorch's computeStride: the strides of viewing t as newshape; 0 when no view exists. */
int mt__compute_stride(const mt_tensor *t, int nd, const int64_t *newshape, int64_t *newstride);
/* Strides of empty_like(t) with memory_format=torch.preserve_format (also .to, .clone). */
void mt__like_strides(const mt_tensor *t, int64_t *strides);
/* PyTorch's is_non_overlapping_and_dense. */
int mt__non_overlapping_and_dense(const mt_tensor *t);
/* PyTorch's get_overlap_status of two tensors (too hard: not both non-overlapping and dense) */
enum { MT_OVERLAP_NO = 0, MT_OVERLAP_PARTIAL = 1, MT_OVERLAP_FULL = 2, MT_OVERLAP_TOO_HARD = 3 };
int mt__overlap(const mt_tensor *a, const mt_tensor *b);
/* PyTorch's assert_no_overlap: an in-place op must not read an input sharing memory with what it
 * writes (index ops would otherwise read indices they are overwriting, past the checked range) */
mt_status mt__assert_no_overlap(const mt_tensor *written, const mt_tensor *input);
/* Build an iterator over ops[0] (output, full shape) and broadcast inputs. */
void mt__iter_init(mt_iter *it, int nops, mt_tensor *const *ops);
/* Run fn over [0, n) in at most mt_get_num_threads() chunks (one call of fn each) on the core's
 * thread pool; inline when small. */
typedef void (*mt_task_fn)(void *ctx, int64_t begin, int64_t end);
void mt__parallel_for(int64_t n, int64_t grain, mt_task_fn fn, void *ctx);
int mt__cpu_avx512f(void); /* the CPU runs AVX-512F (kernels with an AVX-512 path ask once) */
/* float32 (float64) C[i] = alpha*A[i]@B[i] + beta*C[i] for i < nb, matrices given by strides (batch, row, col);
 * C needs a unit stride on one side (and A, B too where OpenBLAS runs it: float64, or no AVX-512) */
void mt__sgemm(int64_t nb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t sab, int64_t sam,
               int64_t sak, const float *b, int64_t sbb, int64_t sbk, int64_t sbn, float beta, float *c, int64_t scb,
               int64_t scm, int64_t scn);
void mt__dgemm(int64_t nb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t sab, int64_t sam,
               int64_t sak, const double *b, int64_t sbb, int64_t sbk, int64_t sbn, double beta, double *c,
               int64_t scb, int64_t scm, int64_t scn);
/* float16/bfloat16 (dtype) C[i] = alpha * dot(A[i], B[i]) + beta * C[i] for i < nb, k contiguous elements each
 * (vector i at a + i * sab, b + i * sbb; C[i] at c + i * scb): summed in float32 in chunks (the float32 GEMM's dot
 * product), rounded once. 0 when done, 1 when it cannot run here (no AVX-512, no memory): nothing written. */
int mt__dot16(int dtype, int64_t nb, int64_t k, float alpha, const uint16_t *a, int64_t sab, const uint16_t *b,
              int64_t sbb, float beta, uint16_t *c, int64_t scb);
/* Run loop over the iterator, splitting across threads above the grain size. */
void mt__iter_run(const mt_iter *it, mt_loop_fn loop, const mt_kargs *k);

/* the copy/convert loop from src dtype to dst dtype */
mt_loop_fn mt__cast_loop(int dst, int src);
/* it run with the conversion loop, or, for a same-dtype transpose, by tiles (kernels/cpu/copy.c) */
void mt__copy_iter(const mt_iter *it, int dst, int src);

#endif
