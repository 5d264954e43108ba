/* profiler.c — the op timeline behind torch.profiler.
 *
 * Every public op entry opens a scope with MT_PROFILE (internal.h): while no profiler records, that
 * is one relaxed load and a branch at entry and a branch on a local at exit. While one records,
 * each scope appends an event (name, start, end, parent, thread, input shapes, bytes allocated)
 * to one array under a mutex; a thread's open scopes form its stack through `parent`, so the
 * nesting of composite ops (linear -> addmm) and of record_function ranges is exact. Python
 * reads the array after stopping (profiler/_events.py). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* dropout's op names by its flags (MT_PROF_NAME); the selector families' names are generated
 * from csrc/ops.tbl (generated/op_table.c) */
const char *const mt__prof_names_dropout[4] = {
    "dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"
};

int mt__prof_on;          /* MT_PROF_ON | MT_PROF_SHAPES | MT_PROF_MEMORY while recording */
_Thread_local int64_t mt__prof_bytes; /* this thread's bytes allocated minus freed, with MT_PROF_MEMORY */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mt_prof_event *events;
static int64_t nevents, cap_events;
static int64_t *shapes; /* per input: ndim (-1: absent) then its sizes */
static int64_t nshapes, cap_shapes;
static int64_t generation; /* bumped by each start: stale per-thread stacks are ignored */

static _Thread_local int64_t open_event = -1, open_generation = -1, thread_id;

/* An id is the event's index with the generation above it: a scope still open when a profiler
 * restarted (a nested one) closes nothing of the new timeline. */
#define INDEX_BITS 40
#define INDEX_MASK ((INT64_C(1) << INDEX_BITS) - 1)

int64_t mt_profiler_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* Python's time.perf_counter_ns reads the same clock */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int grow(void **p, int64_t *cap, int64_t need, size_t item) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * item);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

static void free_names(void) {
    for (int64_t i = 0; i < nevents; i++)
        if (events[i].kind == MT_PROF_RANGE) free((char *)events[i].name);
}

mt_status mt_profiler_start(int flags) {
    pthread_mutex_lock(&lock);
    free_names();
    nevents = nshapes = 0;
    generation++;
    __atomic_store_n(&mt__prof_on, flags | MT_PROF_ON, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return MT_OK;
}

void mt_profiler_stop(void) {
    pthread_mutex_lock(&lock);
    __atomic_store_n(&mt__prof_on, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

int64_t mt_profiler_count(void) { return nevents; }
const mt_prof_event *mt_profiler_events(void) { return events; }
const int64_t *mt_profiler_shapes(void) { return shapes; }

/* Open an event; its index, or -1 (not recording, out of memory). */
static int64_t open_scope(const char *name, int kind, int n, mt_tensor *const *in) {
    int flags = __atomic_load_n(&mt__prof_on, __ATOMIC_ACQUIRE);
    if (!flags) return -1;
    if (!thread_id) thread_id = syscall(SYS_gettid);
    int64_t need = 0;
    if (flags & MT_PROF_SHAPES)
        for (int k = 0; k < n; k++) need += 1 + (in[k] ? in[k]->ndim : 0);
    int64_t t = mt_profiler_now();
    pthread_mutex_lock(&lock);
    if (!__atomic_load_n(&mt__prof_on, __ATOMIC_RELAXED) ||
        !grow((void **)&events, &cap_events, nevents + 1, sizeof *events) ||
        !grow((void **)&shapes, &cap_shapes, nshapes + need, sizeof *shapes)) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    if (open_generation != generation) open_event = -1, open_generation = generation;
    int64_t id = nevents++;
    mt_prof_event *e = &events[id];
    e->name = name;
    e->kind = kind;
    e->parent = open_event;
    e->thread = thread_id;
    e->ninputs = flags & MT_PROF_SHAPES ? n : 0;
    e->shapes = nshapes;
    for (int k = 0; k < e->ninputs; k++) {
        shapes[nshapes++] = in[k] ? in[k]->ndim : -1;
        for (int d = 0; in[k] && d < in[k]->ndim; d++) shapes[nshapes++] = in[k]->sizes[d];
    }
    e->bytes = mt__prof_bytes; /* the running count at entry; end turns it into a difference */
    e->start_ns = t;
    e->end_ns = -1;
    open_event = id;
    pthread_mutex_unlock(&lock);
    return id | generation << INDEX_BITS;
}

static void close_scope(int64_t id) {
    int64_t t = mt_profiler_now();
    int64_t i = id & INDEX_MASK;
    pthread_mutex_lock(&lock);
    if (id >> INDEX_BITS == generation && i < nevents) { /* not cleared by a restart meanwhile */
        events[i].end_ns = t;
        events[i].bytes = mt__prof_bytes - events[i].bytes;
        open_event = events[i].parent;
    }
    pthread_mutex_unlock(&lock);
}

int64_t mt__prof_open(const char *name, int kind, int n, mt_tensor *const *in) {
    return open_scope(name, kind, n, in);
}
void mt__prof_finish(int64_t id) { close_scope(id); }

mt_status mt_profiler_range_begin(const char *name, int64_t *id) {
    char *copy = strdup(name);
    if (!copy) return mt__error(MT_ERR_OOM, "out of memory copying a record_function name");
    *id = open_scope(copy, MT_PROF_RANGE, 0, NULL);
    if (*id < 0) free(copy);
    return MT_OK;
}

void mt_profiler_range_end(int64_t id) {
    if (id >= 0) close_scope(id);
}
