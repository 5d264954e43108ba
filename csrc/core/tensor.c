/* tensor.c — storages and tensor headers: allocation, reference counts, metadata. */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "../autograd/autograd.h"

static atomic_llong live_tensors;
int64_t mt_live_tensors(void) { return atomic_load(&live_tensors); }

#define STORAGE_HEADER 64 /* storage struct padded so the data that follows is 64-byte aligned */
_Static_assert(sizeof(mt_storage) <= STORAGE_HEADER, "storage header too large");

/* ---- large blocks: a bounded cache ----
 * glibc gives large blocks back to the kernel when they are freed (munmap, or a trim of the heap
 * top: blocks from 128 KiB up when they happen to sit at the top), so each new large tensor paid
 * page faults and page zeroing again: ~5% of a BERT training step, most of a 64 MB softmax, 7% of
 * a 128x384x384 GEMM whose 200 KiB scratch and output were trimmed on every call. Freed large
 * blocks are kept by size class (4 per power of two; a block is allocated at its class's size) and
 * reused, at most CACHE_LIMIT bytes of them; all go back when an allocation fails. Off under
 * AddressSanitizer, which must see every free. */
#if defined(__SANITIZE_ADDRESS__)
#define MT_NO_BLOCK_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_NO_BLOCK_CACHE 1
#endif
#endif
#define BIG_LOG 16 /* classes start at 64 KiB */
#define NCLASS (4 * (40 - BIG_LOG + 1))
#define CACHE_LIMIT ((size_t)1 << 30)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static void *cached[NCLASS]; /* free blocks per class, linked through their first word */
static size_t cached_bytes;

/* the class of a block of n bytes, and its size; -1 when it is not cached */
static int size_class(size_t n, size_t *size) {
#ifdef MT_NO_BLOCK_CACHE
    (void)n, (void)size;
    return -1;
#else
    if (n < ((size_t)1 << BIG_LOG)) return -1;
    int lg = 63 - __builtin_clzll(n);
    size_t step = (size_t)1 << (lg - 2), r = (n + step - 1) / step * step;
    lg = 63 - __builtin_clzll(r);
    int c = 4 * (lg - BIG_LOG) + (int)(r >> (lg - 2)) - 4;
    if (c >= NCLASS) return -1;
    *size = r;
    return c;
#endif
}
static size_t class_bytes(int c) {
    int lg = BIG_LOG + c / 4;
    return ((size_t)1 << lg) + (size_t)(c % 4) * ((size_t)1 << (lg - 2));
}

static void *cache_take(int c) {
    pthread_mutex_lock(&cache_lock);
    void *b = cached[c];
    if (b) {
        memcpy(&cached[c], b, sizeof(void *));
        cached_bytes -= class_bytes(c);
    }
    pthread_mutex_unlock(&cache_lock);
    return b;
}

static void cache_flush(void) {
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < NCLASS; c++)
        while (cached[c]) {
            void *b = cached[c];
            memcpy(&cached[c], b, sizeof(void *));
            free(b);
        }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

static void block_free(void *b, int c) {
    if (c >= 0) {
        pthread_mutex_lock(&cache_lock);
        int keep = cached_bytes + class_bytes(c) <= CACHE_LIMIT;
        if (keep) {
            memcpy(b, &cached[c], sizeof(void *));
            cached[c] = b;
            cached_bytes += class_bytes(c);
        }
        pthread_mutex_unlock(&cache_lock);
        if (keep) return;
    }
    free(b);
}

/* PyTorch's error for a CPU allocation that fails (c10's alloc_cpu on Linux: posix_memalign's ENOMEM) */
mt_status mt__oom(int64_t nbytes) {
    return mt__error(MT_ERR_OOM, "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                     "memory: you tried to allocate %lld bytes. Error code 12 (Cannot allocate memory)", (long long)nbytes);
}

/* Storage and its bytes in one allocation; meta storages have no bytes. `readable_tail` more bytes stay
 * readable past the end (not part of nbytes). */
static mt_status storage_new(int64_t nbytes, int device, size_t readable_tail, mt_storage **out) {
    void *block = NULL;
    size_t total = STORAGE_HEADER + (device == MT_CPU ? (size_t)nbytes + readable_tail : 0), size = total;
    int c = size_class(total, &size);
#ifdef MT_FUZZ_MAX_TENSOR_BYTES /* the fuzzer's build refuses big tensors: slow under its instrumentation */
    if (device == MT_CPU && nbytes > MT_FUZZ_MAX_TENSOR_BYTES) return mt__oom(nbytes);
#endif
    /* small blocks: plain malloc (16-byte aligned, cheaper); large: 64-byte aligned */
    if (total <= 4096) block = malloc(total);
    else if (!(c >= 0 && (block = cache_take(c))) && posix_memalign(&block, 64, size) != 0) {
        cache_flush();
        if (posix_memalign(&block, 64, size) != 0) block = NULL;
    }
    if (!block) return mt__oom(nbytes);
    mt_storage *s = block;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->data = device == MT_CPU ? (char *)block + STORAGE_HEADER : NULL;
    s->nbytes = nbytes;
    s->device = device;
    s->deleter = NULL;
    s->ctx = NULL;
    s->inference = mt__inference_enabled();
    s->size_class = c;
    if (device == MT_CPU) mt__prof_memory(nbytes);
    *out = s;
    return MT_OK;
}

void mt__storage_release(mt_storage *s) {
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) == 1) {
        if (s->deleter) s->deleter(s->ctx);
        else if (s->device == MT_CPU) mt__prof_memory(-s->nbytes);
        block_free(s, s->size_class);
    }
}

/* Recently freed tensor headers, per thread: small ops reuse them instead of malloc/free. */
#define HEADER_CACHE 64
static _Thread_local mt_tensor *header_cache[HEADER_CACHE];
static _Thread_local int header_cached;

static mt_tensor *header_alloc(void) {
    return header_cached ? header_cache[--header_cached] : malloc(sizeof(mt_tensor));
}

static void header_free(mt_tensor *t) {
    if (header_cached < HEADER_CACHE) header_cache[header_cached++] = t;
    else free(t);
}

/* PyTorch's safe_compute_numel (every loop counts elements in int64): the product in order, an overflow
 * sticks, so [H, H, 0] is refused and [0, H, H] is not; a negative size is refused even next to a 0 */
mt_status mt__check_numel(int ndim, const int64_t *sizes) {
    uint64_t numel = 1;
    int over = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
        over |= __builtin_mul_overflow(numel, (uint64_t)sizes[i], &numel);
    }
    if (over || numel > INT64_MAX) return mt__error(MT_ERR_RUNTIME, "numel: integer multiplication overflow");
    return MT_OK;
}

static mt_status header_new(mt_storage *s, int ndim, const int64_t *sizes, const int64_t *strides,
                            int64_t offset, int dtype, mt_tensor **out) {
    if (ndim > MT_MAX_DIMS)
        return mt__error(MT_ERR_RUNTIME, "tensors with more than %d dimensions are not supported (got %d)",
                         MT_MAX_DIMS, ndim);
    /* a view (expand, as_strided) can name more elements than int64 counts */
    MT_TRY(mt__check_numel(ndim, sizes));
    mt_tensor *t = header_alloc();
    if (!t) return mt__error(MT_ERR_OOM, "out of memory allocating a tensor header");
    atomic_init(&t->refcount, 1);
    t->storage = s;
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = dtype;
    t->device = s->device;
    t->wrapped = 0;
    t->requires_grad = t->retains_grad = t->output_nr = t->view_nograd = t->view_multi = t->hook_flags = 0;
    t->grad_fn = t->grad_acc = NULL;
    t->base = NULL;
    t->handle = NULL;
    t->attr_version = 0;
    t->grad = NULL;
    if (ndim) memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
    if (strides) {
        if (ndim) memcpy(t->strides, strides, ndim * sizeof(int64_t));
    } else {
        mt__contiguous_strides(ndim, sizes, t->strides);
    }
    atomic_fetch_add_explicit(&live_tensors, 1, memory_order_relaxed);
    *out = t;
    return MT_OK;
}

/* Products in uint64: an empty tensor may have other dims whose product overflows (its numel is
 * still 0 and its strides are never used to address memory); that must not be undefined. */
int64_t mt__numel(int ndim, const int64_t *sizes) {
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return 0;
        n *= (uint64_t)sizes[i];
    }
    return (int64_t)n;
}

int mt__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    uint64_t s = 1;
    int over = 0;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = (int64_t)s;
        over |= i > 0 && (__builtin_mul_overflow(s, sizes[i] > 1 ? (uint64_t)sizes[i] : 1, &s) || s > INT64_MAX);
    }
    return over;
}

/* Bytes needed to hold every element addressed by sizes/strides (0 if empty), checked as PyTorch's
 * computeStorageNbytes[Contiguous] and the contiguous strides are: in order, so an empty tensor
 * whose other dims overflow fails like PyTorch's does. */
static mt_status extent_bytes(int ndim, const int64_t *sizes, const int64_t *strides, int dtype,
                              int64_t *nbytes) {
    char a[512], b[512];
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0)
            return mt__error(MT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                             (long long)sizes[i], mt__fmt_sizes(a, sizeof a, ndim, sizes));
    int64_t span = 1, isz = mt_dtype_itemsize(dtype);
    if (strides) {
        for (int i = 0; i < ndim; i++) {
            if (sizes[i] == 0) { *nbytes = 0; return MT_OK; }
            if (strides[i] < 0)
                return mt__error(MT_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, "
                                 "got strides: %s", mt__fmt_sizes(a, sizeof a, ndim, strides));
        }
        int64_t add;
        int over = 0;
        for (int i = 0; i < ndim; i++)
            over |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &add) || __builtin_add_overflow(span, add, &span);
        if (over || __builtin_mul_overflow(span, isz, nbytes))
            return mt__error(MT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                             mt__fmt_sizes(a, sizeof a, ndim, sizes), mt__fmt_sizes(b, sizeof b, ndim, strides));
    } else {
        int over = 0;
        for (int i = 0; i < ndim; i++) over |= __builtin_mul_overflow(span, sizes[i], &span);
        if (over || __builtin_mul_overflow(span, isz, nbytes))
            return mt__error(MT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                             mt__fmt_sizes(a, sizeof a, ndim, sizes));
        int64_t st[MT_MAX_DIMS];
        if (mt__contiguous_strides(ndim, sizes, st)) return mt__error(MT_ERR_RUNTIME, "Stride calculation overflowed");
    }
    if (*nbytes > ((int64_t)1 << 50)) return mt__oom(*nbytes);
    return MT_OK;
}

mt_status mt__alloc(int ndim, const int64_t *sizes, const int64_t *strides, int dtype, int device,
                    mt_tensor **out) {
    return mt__alloc_padded(ndim, sizes, strides, dtype, device, 0, out);
}

mt_status mt__alloc_padded(int ndim, const int64_t *sizes, const int64_t *strides, int dtype, int device,
                           size_t readable_tail, mt_tensor **out) {
    if (ndim < 0 || ndim > MT_MAX_DIMS)
        return mt__error(MT_ERR_RUNTIME, "tensors with more than %d dimensions are not supported (got %d)",
                         MT_MAX_DIMS, ndim);
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype);
    if (device != MT_CPU && device != MT_META) return mt__error(MT_ERR_RUNTIME, "invalid device %d", device);
    int64_t nbytes;
    MT_TRY(extent_bytes(ndim, sizes, strides, dtype, &nbytes));
    mt_storage *s;
    MT_TRY(storage_new(nbytes, device, readable_tail, &s));
    mt_status st = header_new(s, ndim, sizes, strides, 0, dtype, out);
    if (st) mt__storage_release(s);
    return st;
}

mt_status mt__view_of(const mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                      int64_t offset, mt_tensor **out) {
    atomic_fetch_add_explicit(&t->storage->refcount, 1, memory_order_relaxed);
    mt_status st = header_new(t->storage, ndim, sizes, strides, offset, t->dtype, out);
    if (st) mt__storage_release(t->storage);
    return st;
}

void mt_tensor_retain(mt_tensor *t) { atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed); }

void mt_tensor_release(mt_tensor *t) {
    if (!t) return;
    if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) == 1) {
        if (t->grad_fn || t->grad_acc || t->base || t->handle) mt__tensor_autograd_free(t);
        if (t->grad) mt_tensor_release(t->grad);
        mt__storage_release(t->storage);
        atomic_fetch_sub_explicit(&live_tensors, 1, memory_order_relaxed);
        header_free(t);
    }
}

/* retain unless the last reference is already gone (a weak link racing the release) */
int mt__tensor_try_retain(mt_tensor *t) {
    long c = atomic_load(&t->refcount);
    while (c > 0)
        if (atomic_compare_exchange_weak(&t->refcount, &c, c + 1)) return 1;
    return 0;
}

int mt_tensor_ndim(const mt_tensor *t) { return t->ndim; }
const int64_t *mt_tensor_sizes(const mt_tensor *t) { return t->sizes; }
const int64_t *mt_tensor_strides(const mt_tensor *t) { return t->strides; }
int64_t mt_tensor_offset(const mt_tensor *t) { return t->offset; }
int64_t mt_tensor_numel(const mt_tensor *t) { return mt__numel(t->ndim, t->sizes); }
int mt_tensor_dtype(const mt_tensor *t) { return t->dtype; }
int mt_tensor_device(const mt_tensor *t) { return t->device; }
int mt_tensor_is_wrapped_number(const mt_tensor *t) { return t->wrapped; }
void *mt_tensor_data_ptr(const mt_tensor *t) { return t->storage->data ? mt__data(t) : NULL; }
void *mt_tensor_storage_ptr(const mt_tensor *t) { return t->storage->data; }
int64_t mt_tensor_storage_nbytes(const mt_tensor *t) { return t->storage->nbytes; }
int64_t mt_tensor_version(const mt_tensor *t) { return atomic_load(&t->storage->version); }
void mt_tensor_bump_version(mt_tensor *t) { atomic_fetch_add(&t->storage->version, 1); }
void mt_tensor_set_version(mt_tensor *t, int64_t version) { atomic_store(&t->storage->version, version); }
int mt_tensor_same_storage(const mt_tensor *a, const mt_tensor *b) { return a->storage == b->storage; }

/* PyTorch's is_contiguous: size-1 dims may have any stride; an empty tensor is contiguous. */
int mt_tensor_is_contiguous(const mt_tensor *t) {
    int64_t expected = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->sizes[i] == 0) return 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] != 1) {
            if (t->strides[i] != expected) return 0;
            expected *= t->sizes[i];
        }
    }
    return 1;
}

mt_status mt_empty(int ndim, const int64_t *sizes, int dtype, int device, mt_tensor **out) {
    MT_PROFILE("empty");
    return mt__alloc(ndim, sizes, NULL, dtype, device, out);
}

mt_status mt_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, int dtype,
                           int device, mt_tensor **out) {
    MT_PROFILE("empty_strided");
    return mt__alloc(ndim, sizes, strides, dtype, device, out);
}

mt_status mt_from_blob(void *data, int64_t nbytes, int ndim, const int64_t *sizes,
                       const int64_t *strides, int64_t offset, int dtype, void (*deleter)(void *),
                       void *ctx, mt_tensor **out) {
    if ((unsigned)dtype >= MT_NUM_DTYPES) return mt__error(MT_ERR_TYPE, "invalid dtype %d", dtype);
    int64_t need;
    MT_TRY(extent_bytes(ndim, sizes, strides, dtype, &need));
    if (need && (offset < 0 || (__int128)offset * mt_dtype_itemsize(dtype) + need > nbytes))
        return mt__error(MT_ERR_RUNTIME, "the view needs %lld bytes from offset %lld but the buffer has %lld",
                         (long long)need, (long long)offset, (long long)nbytes);
    mt_storage *s;
    MT_TRY(storage_new(0, MT_CPU, 0, &s));
    s->data = data;
    s->nbytes = nbytes;
    mt_status st = header_new(s, ndim, sizes, strides, offset, dtype, out);
    if (st) {
        mt__storage_release(s);
        return st;
    }
    s->deleter = deleter; /* set last: on failure the caller still owns ctx */
    s->ctx = ctx;
    return MT_OK;
}

/* share_memory_: the storage's bytes move into memory the caller mapped (shared), in place, so
 * every tensor and view on this storage keeps sharing it. The inline bytes of the old block stay
 * allocated with the header until the storage dies; their whole pages go back to the kernel now. */
mt_status mt_storage_move_to(mt_tensor *t, void *data, int64_t nbytes, void (*deleter)(void *), void *ctx) {
    mt_storage *s = t->storage;
    if (s->device != MT_CPU) return mt__error(MT_ERR_RUNTIME, "share_memory_: only CPU storages can move");
    if (nbytes != s->nbytes)
        return mt__error(MT_ERR_RUNTIME, "share_memory_: the new memory has %lld bytes, the storage %lld",
                         (long long)nbytes, (long long)s->nbytes);
    if (nbytes) memcpy(data, s->data, (size_t)nbytes);
    void *old = s->data;
    if (s->deleter) {
        s->deleter(s->ctx);
    } else if (old == (char *)s + STORAGE_HEADER) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t lo = ((uintptr_t)old + page - 1) & ~(page - 1), hi = ((uintptr_t)old + (uintptr_t)nbytes) & ~(page - 1);
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
    s->data = data;
    s->deleter = deleter;
    s->ctx = ctx;
    return MT_OK;
}

/* a reference count kept in shared memory (the file_system sharing strategy's mappings) */
int64_t mt_shared_count_add(int64_t *counter, int64_t delta) {
    return atomic_fetch_add((_Atomic int64_t *)counter, delta) + delta;
}
