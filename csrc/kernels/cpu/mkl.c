/* mkl.c — PyPI's `mkl` (libmkl_rt), opened once at run time for the two engines that use it: torch.fft's
 * (fft.c, DFTI) and part of LAPACK (lapack.c). Its licence (Intel's ISSL) is not the project's, so it is
 * never linked; the Python layer finds the library and each engine falls back to its own alternative
 * (FFTW, OpenBLAS's LAPACK) without it.
 *
 * MKL's threading layer is one per process and is fixed by the first call into MKL, so it is chosen here,
 * once: GNU OpenMP, so that QR, SVD, eigh and gels run their factorisation on the threads set_num_threads
 * gives (lapack.c sets the count on each call, MKL_Set_Num_Threads_Local; on 2 threads MKL's geqrf was
 * 2x OpenBLAS's, docs/PERFORMANCE.md "Session 26"); DFTI runs one thread per descriptor
 * (DFTI_THREAD_LIMIT) while our pool spreads the blocks. The GNU layer needs libgomp (Debian's libgomp1,
 * GCC's runtime); without it MKL would exit the process, so then the sequential layer is used. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "mkl.h"

enum { MKL_THREADING_SEQUENTIAL = 1, MKL_THREADING_GNU = 3 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *handle;
static int threaded, forked;
static int (*set_local)(int);

/* libgomp's workers do not survive fork() and its next parallel region in the child waits for them forever
 * (a QR in a forked child hung): after a fork MKL runs on one thread */
static void after_fork_child(void) { forked = 1; }

/* libgomp, GLOBAL: MKL's GNU layer takes GOMP_* and omp_* from the process. Its workers spin 300000 rounds
 * after each parallel region by default (a few ms): the op after a QR on 2 threads then ran 2x slower, its
 * second thread's core taken (exp of 4 Mi floats 0.48 -> 1.1 ms). 3000 rounds kept the factorisations as fast
 * (session 26) and the next op at OpenBLAS's level; libgomp reads the count when it loads, so it is set
 * for that moment only, unless the user set a policy or libgomp is loaded already. */
static int open_gomp(void) {
    void *g = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (g) return 1;
    int set = !getenv("GOMP_SPINCOUNT") && !getenv("OMP_WAIT_POLICY");
    if (set) setenv("GOMP_SPINCOUNT", "3000", 0);
    g = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (set) unsetenv("GOMP_SPINCOUNT");
    return g != NULL;
}

void *mt__mkl_open(const char *path) {
    pthread_mutex_lock(&lock);
    if (!handle && path && path[0]) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        int (*layer)(int) = h ? (int (*)(int))dlsym(h, "MKL_Set_Threading_Layer") : NULL;
        int (*local)(int) = h ? (int (*)(int))dlsym(h, "MKL_Set_Num_Threads_Local") : NULL;
        if (layer && local) {
            threaded = open_gomp();
            layer(threaded ? MKL_THREADING_GNU : MKL_THREADING_SEQUENTIAL);
            if (threaded) pthread_atfork(NULL, NULL, after_fork_child);
            set_local = local;
            handle = h;
        } else if (h) {
            dlclose(h);
        }
    }
    pthread_mutex_unlock(&lock);
    return handle;
}

int mt__mkl_threads(int n) {
    n = threaded && !forked && n > 1 ? n : 1;
    if (set_local) set_local(n);
    return n;
}
