/* parallel.c — the core's own thread pool for splitting loops.
 *
 * A worker that finishes a job spins for a short while (SPIN_NS) watching for the next one before
 * it sleeps on a condition variable, and the caller spins the same while waiting for the workers:
 * waking a sleeping thread costs tens of microseconds in a VM (the idle vCPU has to be
 * re-entered), as much as a whole 128x384x384 GEMM's second half. The spin is bounded, so an idle
 * pool still leaves the other cores to OpenBLAS and other processes within a fraction of a
 * millisecond, and it yields the CPU at each turn rather than pausing: when the caller and a
 * worker share a core, a pausing caller kept the worker it waited for off the core for the whole
 * spin (a 64x128 MLP step measured 3x slower now and then). The caller runs the first chunk
 * itself. After fork() the child starts with no workers and makes new ones on first use. */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "internal.h"

#define MAX_WORKERS 63
#define SPIN_NS 200000 /* how long an idle worker, or a waiting caller, spins before sleeping */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t submit = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static int nworkers, sleepers;                             /* sleepers: workers waiting on work_cv */
static uint64_t generation;                                /* written under lock, read spinning (atomics) */
static struct {
    mt_task_fn fn;
    void *ctx;
    int64_t n, chunk;
    int parts, pending; /* pending: atomic; the fields above change only under lock */
} job;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* spin until *v != old (64-bit) or SPIN_NS pass; returns whether it changed */
static int spin_while_equal(const uint64_t *v, uint64_t old) {
    int64_t start = now_ns();
    for (int i = 1;; i++) {
        if (__atomic_load_n(v, __ATOMIC_ACQUIRE) != old) return 1;
        sched_yield();
        if ((i & 15) == 0 && now_ns() - start > SPIN_NS) return 0;
    }
}

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg; /* 1..nworkers: runs part id of each job */
    uint64_t seen = 0;
    for (;;) {
        int woke = spin_while_equal(&generation, seen);
        pthread_mutex_lock(&lock);
        if (!woke) {
            sleepers++;
            while (generation == seen) pthread_cond_wait(&work_cv, &lock);
            sleepers--;
        }
        seen = generation;
        if (id >= job.parts) {
            pthread_mutex_unlock(&lock);
            continue;
        }
        mt_task_fn fn = job.fn;
        void *ctx = job.ctx;
        int64_t b = id * job.chunk, e = b + job.chunk < job.n ? b + job.chunk : job.n;
        pthread_mutex_unlock(&lock);
        if (b < e) fn(ctx, b, e);
        if (__atomic_sub_fetch(&job.pending, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&lock); /* the caller checks pending under the lock before it sleeps */
            pthread_cond_signal(&done_cv);
            pthread_mutex_unlock(&lock);
        }
    }
    return NULL;
}

static void after_fork_child(void) {
    /* the workers did not survive fork: start over */
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&submit, NULL);
    pthread_cond_init(&work_cv, NULL);
    pthread_cond_init(&done_cv, NULL);
    nworkers = sleepers = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }

/* make sure at least n workers exist (called with lock held) */
static int ensure_workers(int n) {
    pthread_once(&atfork_once, install_atfork);
    if (n > MAX_WORKERS) n = MAX_WORKERS;
    while (nworkers < n) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int ok = pthread_create(&t, &attr, worker, (void *)(intptr_t)(nworkers + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        nworkers++;
    }
    return nworkers;
}

void mt__parallel_for(int64_t n, int64_t grain, mt_task_fn fn, void *ctx) {
    int nt = mt_get_num_threads();
    if (grain < 1) grain = 1;
    if (nt > 1 && n / grain < nt) nt = (int)(n / grain);
    if (nt <= 1 || pthread_mutex_trylock(&submit) != 0) { /* small, or a job already running: inline */
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&lock);
    int have = ensure_workers(nt - 1);
    int parts = 1 + (have < nt - 1 ? have : nt - 1); /* workers made for a larger count stay idle */
    job.fn = fn;
    job.ctx = ctx;
    job.n = n;
    job.chunk = (n + parts - 1) / parts;
    job.parts = parts;
    __atomic_store_n(&job.pending, parts - 1, __ATOMIC_RELAXED);
    __atomic_store_n(&generation, generation + 1, __ATOMIC_RELEASE);
    if (sleepers) pthread_cond_broadcast(&work_cv);
    pthread_mutex_unlock(&lock);
    fn(ctx, 0, job.chunk < n ? job.chunk : n); /* part 0 on the caller */
    int64_t start = now_ns();
    for (int i = 1; __atomic_load_n(&job.pending, __ATOMIC_ACQUIRE); i++) {
        sched_yield();
        if ((i & 15) == 0 && now_ns() - start > SPIN_NS) {
            pthread_mutex_lock(&lock);
            while (__atomic_load_n(&job.pending, __ATOMIC_ACQUIRE)) pthread_cond_wait(&done_cv, &lock);
            pthread_mutex_unlock(&lock);
            break;
        }
    }
    pthread_mutex_unlock(&submit);
}
