/* rng.c — the CPU random generator, reproducing PyTorch's CPUGeneratorImpl.
 *
 * The engine is PyTorch's mt19937 (at::mt19937: the 2002 reference algorithm
 * with 32-bit state words, seeded by init_genrand with the low 32 bits of the
 * seed), plus the two cached Box-Muller samples PyTorch keeps next to it
 * (next_double_normal_sample, next_float_normal_sample). get_state/set_state
 * use PyTorch's 5056-byte CPUGeneratorImplState layout, so a state saved by
 * one library loads in the other.
 *
 * Every generator carries a mutex; the distribution kernels (kernels/cpu/
 * random.c) hold it for the whole fill, as PyTorch does, so concurrent use of
 * one generator (the process-wide default above all) from several threads is
 * safe and each call draws a contiguous run of the stream.
 */
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MT_STATE_N 624
#define MT_STATE_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UMASK 0x80000000u
#define MT_LMASK 0x7fffffffu

/* PyTorch's CPUGeneratorImplState, byte offsets (x86-64 / aarch64 layout) */
#define ST_SEED 0
#define ST_LEFT 8
#define ST_SEEDED 12
#define ST_NEXT 16
#define ST_STATE 24
#define ST_NORMAL_X (ST_STATE + 8 * MT_STATE_N) /* 5016 */
#define ST_NORMAL_Y (ST_NORMAL_X + 8)
#define ST_NORMAL_RHO (ST_NORMAL_Y + 8)
#define ST_NORMAL_VALID (ST_NORMAL_RHO + 8) /* int, then 4 bytes padding */
#define ST_FLOAT_SAMPLE 5048
#define ST_FLOAT_VALID 5052
#define ST_SIZE 5056

struct mt_generator {
    atomic_long refcount;
    pthread_mutex_t mutex;
    /* at::mt19937_data_pod */
    uint64_t seed;
    int left;
    int seeded;
    uint32_t next;
    uint32_t state[MT_STATE_N];
    /* std::optional<double> / std::optional<float> normal caches */
    int has_next_double;
    double next_double;
    int has_next_float;
    float next_float;
    int is_default;
};

static void engine_seed(mt_generator *g, uint64_t seed) {
    g->seed = seed;
    g->seeded = 1;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int j = 1; j < MT_STATE_N; j++)
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + (uint32_t)j;
    g->left = 1;
    g->next = 0;
}

static void set_current_seed(mt_generator *g, uint64_t seed) {
    g->has_next_double = 0;
    g->has_next_float = 0;
    g->next_double = 0.0;
    g->next_float = 0.0f;
    engine_seed(g, seed);
}

static inline uint32_t twist(uint32_t u, uint32_t v) {
    return (((u & MT_UMASK) | (v & MT_LMASK)) >> 1) ^ ((v & 1u) ? MT_MATRIX_A : 0u);
}

static void next_state(mt_generator *g) {
    uint32_t *p = g->state;
    g->left = MT_STATE_N;
    g->next = 0;
    for (int j = MT_STATE_N - MT_STATE_M + 1; --j; p++) *p = p[MT_STATE_M] ^ twist(p[0], p[1]);
    for (int j = MT_STATE_M; --j; p++) *p = p[MT_STATE_M - MT_STATE_N] ^ twist(p[0], p[1]);
    *p = p[MT_STATE_M - MT_STATE_N] ^ twist(p[0], g->state[0]);
}

static inline uint32_t temper(uint32_t y) {
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

static inline uint32_t engine_next(mt_generator *g) {
    if (--g->left == 0) next_state(g);
    return temper(g->state[g->next++]);
}

/* ---- internal interface for the distribution kernels -------------------- */

static uint64_t nondeterministic_seed(void) {
    /* c10::detail::getNonDeterministicRandom: 64 bits from /dev/urandom */
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, &s, sizeof s);
        close(fd);
        if (n == (ssize_t)sizeof s) return s;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    return s ^ ((uint64_t)getpid() << 32);
}

static mt_generator default_gen;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void init_default(void) {
    atomic_init(&default_gen.refcount, 1);
    pthread_mutex_init(&default_gen.mutex, NULL);
    default_gen.is_default = 1;
    set_current_seed(&default_gen, nondeterministic_seed());
}

mt_generator *mt__gen_resolve(mt_generator *g) {
    if (g) return g;
    pthread_once(&default_once, init_default);
    return &default_gen;
}

void mt__gen_lock(mt_generator *g) { pthread_mutex_lock(&g->mutex); }
void mt__gen_unlock(mt_generator *g) { pthread_mutex_unlock(&g->mutex); }

/* n successive 32-bit draws (CPUGeneratorImpl::random) */
void mt__gen_u32(mt_generator *g, uint32_t *out, int64_t n) {
    /* engine_next n times, in runs between twists: left - 1 words are ready */
    while (n > 0) {
        int64_t avail = g->left - 1;
        if (avail == 0) {
            *out++ = engine_next(g); /* twists */
            n--;
            continue;
        }
        int64_t m = avail < n ? avail : n;
        const uint32_t *src = g->state + g->next;
        for (int64_t i = 0; i < m; i++) out[i] = temper(src[i]);
        g->next += (uint32_t)m;
        g->left -= (int)m;
        out += m;
        n -= m;
    }
}

/* n successive 64-bit draws (CPUGeneratorImpl::random64: first draw is the high word) */
void mt__gen_u64(mt_generator *g, uint64_t *out, int64_t n) {
    uint32_t buf[512];
    while (n > 0) {
        int64_t m = n < 256 ? n : 256;
        mt__gen_u32(g, buf, 2 * m);
        for (int64_t i = 0; i < m; i++) out[i] = ((uint64_t)buf[2 * i] << 32) | buf[2 * i + 1];
        out += m;
        n -= m;
    }
}

uint32_t mt__gen_random(mt_generator *g) { return engine_next(g); }

uint64_t mt__gen_random64(mt_generator *g) {
    uint32_t hi = engine_next(g);
    uint32_t lo = engine_next(g);
    return ((uint64_t)hi << 32) | lo;
}

/* The cached second Box-Muller value of normal_distribution<double>. */
int mt__gen_take_normal(mt_generator *g, double *out) {
    if (!g->has_next_double) return 0;
    *out = g->next_double;
    g->has_next_double = 0;
    return 1;
}

void mt__gen_put_normal(mt_generator *g, double v) {
    g->has_next_double = 1;
    g->next_double = v;
}

/* ---- public ABI -------------------------------------------------------------- */

mt_generator *mt_generator_default(void) { return mt__gen_resolve(NULL); }

mt_status mt_generator_create(uint64_t seed, mt_generator **out) {
    mt_generator *g = calloc(1, sizeof *g);
    if (!g) return mt__error(MT_ERR_OOM, "out of memory allocating a generator");
    atomic_init(&g->refcount, 1);
    pthread_mutex_init(&g->mutex, NULL);
    set_current_seed(g, seed);
    *out = g;
    return MT_OK;
}

void mt_generator_retain(mt_generator *g) {
    if (g && !g->is_default) atomic_fetch_add_explicit(&g->refcount, 1, memory_order_relaxed);
}

void mt_generator_release(mt_generator *g) {
    if (!g || g->is_default) return;
    if (atomic_fetch_sub_explicit(&g->refcount, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&g->mutex);
        free(g);
    }
}

int mt_generator_is_default(const mt_generator *g) { return g == NULL || g->is_default; }

void mt_generator_manual_seed(mt_generator *g, uint64_t seed) {
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    set_current_seed(g, seed);
    mt__gen_unlock(g);
}

uint64_t mt_generator_seed(mt_generator *g) {
    g = mt__gen_resolve(g);
    uint64_t s = nondeterministic_seed();
    mt__gen_lock(g);
    set_current_seed(g, s);
    mt__gen_unlock(g);
    return s;
}

uint64_t mt_generator_initial_seed(mt_generator *g) {
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    uint64_t s = g->seed;
    mt__gen_unlock(g);
    return s;
}

uint32_t mt_generator_random(mt_generator *g) {
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    uint32_t r = engine_next(g);
    mt__gen_unlock(g);
    return r;
}

uint64_t mt_generator_random64(mt_generator *g) {
    g = mt__gen_resolve(g);
    mt__gen_lock(g);
    uint64_t r = mt__gen_random64(g);
    mt__gen_unlock(g);
    return r;
}

static void put_u64(unsigned char *b, int off, uint64_t v) { memcpy(b + off, &v, 8); }
static void put_i32(unsigned char *b, int off, int32_t v) { memcpy(b + off, &v, 4); }
static uint64_t get_u64(const unsigned char *b, int off) { uint64_t v; memcpy(&v, b + off, 8); return v; }
static int32_t get_i32(const unsigned char *b, int off) { int32_t v; memcpy(&v, b + off, 4); return v; }

mt_status mt_generator_get_state(mt_generator *g, mt_tensor **out) {
    g = mt__gen_resolve(g);
    int64_t size = ST_SIZE;
    mt_tensor *t;
    MT_TRY(mt__alloc(1, &size, NULL, MT_U8, MT_CPU, &t));
    unsigned char *b = (unsigned char *)mt__data(t);
    memset(b, 0, ST_SIZE);
    mt__gen_lock(g);
    put_u64(b, ST_SEED, g->seed);
    put_i32(b, ST_LEFT, g->left);
    put_i32(b, ST_SEEDED, g->seeded);
    put_u64(b, ST_NEXT, g->next);
    for (int i = 0; i < MT_STATE_N; i++) put_u64(b, ST_STATE + 8 * i, g->state[i]);
    /* normal_x and normal_rho are legacy dummies: 0 */
    if (g->has_next_double) {
        put_i32(b, ST_NORMAL_VALID, 1);
        memcpy(b + ST_NORMAL_Y, &g->next_double, 8);
    }
    if (g->has_next_float) {
        b[ST_FLOAT_VALID] = 1;
        memcpy(b + ST_FLOAT_SAMPLE, &g->next_float, 4);
    }
    mt__gen_unlock(g);
    *out = t;
    return MT_OK;
}

mt_status mt_generator_set_state(mt_generator *g, mt_tensor *state) {
    g = mt__gen_resolve(g);
    if (!state || state->device != MT_CPU || state->dtype != MT_U8)
        return mt__error(MT_ERR_TYPE, "RNG state must be a torch.ByteTensor");
    if (!mt_tensor_is_contiguous(state)) return mt__error(MT_ERR_RUNTIME, "RNG state must be contiguous");
    int64_t n = mt_tensor_numel(state);
    if (n != ST_SIZE)
        return mt__error(MT_ERR_RUNTIME,
                         "Expected a CPUGeneratorImplState of size %d but found the input RNG state size to be %lld",
                         ST_SIZE, (long long)n);
    const unsigned char *b = (const unsigned char *)mt__data(state);
    uint64_t seed = get_u64(b, ST_SEED);
    int left = get_i32(b, ST_LEFT);
    int seeded = get_i32(b, ST_SEEDED) != 0;
    uint32_t next = (uint32_t)get_u64(b, ST_NEXT);
    if (!(seeded && left > 0 && left <= MT_STATE_N && next <= MT_STATE_N))
        return mt__error(MT_ERR_RUNTIME, "Invalid mt19937 state");
    int normal_valid = get_i32(b, ST_NORMAL_VALID) != 0;
    double normal_y;
    memcpy(&normal_y, b + ST_NORMAL_Y, 8);
    int float_valid = b[ST_FLOAT_VALID] != 0;
    float float_sample;
    memcpy(&float_sample, b + ST_FLOAT_SAMPLE, 4);
    mt__gen_lock(g);
    g->seed = seed;
    g->left = left;
    g->seeded = seeded;
    g->next = next;
    for (int i = 0; i < MT_STATE_N; i++) g->state[i] = (uint32_t)get_u64(b, ST_STATE + 8 * i);
    g->has_next_double = normal_valid;
    g->next_double = normal_valid ? normal_y : 0.0;
    g->has_next_float = float_valid;
    g->next_float = float_valid ? float_sample : 0.0f;
    mt__gen_unlock(g);
    return MT_OK;
}

/* dst takes src's whole state (Generator.clone_state / graphsafe_set_state) */
void mt_generator_copy_state(mt_generator *dst, mt_generator *src) {
    dst = mt__gen_resolve(dst);
    src = mt__gen_resolve(src);
    if (dst == src) return;
    mt_generator tmp;
    mt__gen_lock(src);
    memcpy(&tmp.seed, &src->seed, offsetof(mt_generator, is_default) - offsetof(mt_generator, seed));
    mt__gen_unlock(src);
    mt__gen_lock(dst);
    memcpy(&dst->seed, &tmp.seed, offsetof(mt_generator, is_default) - offsetof(mt_generator, seed));
    mt__gen_unlock(dst);
}
