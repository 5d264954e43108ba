/* parallel.c — the core's own thread pool for splitting loops.
 *
 * Workers sleep on a condition variable between jobs (no spinning: on a
 * 2-core machine spinning workers starve OpenBLAS and everything else, and an
 * OpenMP runtime loaded first by another library can't be told otherwise).
 * The caller runs the first chunk itself. After fork() the child starts with
 * no workers and makes new ones on first use. */
#include <pthread.h>

#include "internal.h"

#define MAX_WORKERS 63

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t submit = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static int nworkers;
static uint64_t generation;
static struct {
    mt_task_fn fn;
    void *ctx;
    int64_t n, chunk;
    int parts, pending;
} job;

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg; /* 1..nworkers: runs part id of each job */
    uint64_t seen = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (generation == seen) pthread_cond_wait(&work_cv, &lock);
        seen = generation;
        if (id >= job.parts) continue;
        mt_task_fn fn = job.fn;
        void *ctx = job.ctx;
        int64_t b = id * job.chunk, e = b + job.chunk < job.n ? b + job.chunk : job.n;
        pthread_mutex_unlock(&lock);
        if (b < e) fn(ctx, b, e);
        pthread_mutex_lock(&lock);
        if (--job.pending == 0) pthread_cond_signal(&done_cv);
    }
    return NULL;
}

static void after_fork_child(void) {
    /* the workers did not survive fork: start over */
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&submit, NULL);
    pthread_cond_init(&work_cv, NULL);
    pthread_cond_init(&done_cv, NULL);
    nworkers = 0;
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
    job.pending = parts - 1;
    generation++;
    pthread_cond_broadcast(&work_cv);
    pthread_mutex_unlock(&lock);
    fn(ctx, 0, job.chunk < n ? job.chunk : n); /* part 0 on the caller */
    pthread_mutex_lock(&lock);
    while (job.pending) pthread_cond_wait(&done_cv, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&submit);
}
