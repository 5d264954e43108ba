/* test_threads.c — the C core from several threads at once: elementwise ops, GEMM, reductions
 * (large enough to use the core's thread pool too) and forward+backward graphs, each thread on
 * its own tensors plus shared read-only inputs, checked against single-thread results. Run plain,
 * under ThreadSanitizer and under valgrind by tests/c/test_c_abi.py. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mt.h"

#define NTHREADS 4
#define ROUNDS 20
#define N 192 /* N x N matrices: the elementwise ops exceed the pool's grain and split over it too */

static mt_tensor *shared_a, *shared_b; /* read by every thread */
static double expected_sum, expected_grad_sum;
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what) {
    pthread_mutex_lock(&fail_lock);
    fprintf(stderr, "thread check failed: %s (%s)\n", what, mt_last_error());
    failures++;
    pthread_mutex_unlock(&fail_lock);
}

/* sum(relu(a @ b + a) * 0.5) and the sum of d/da of it; returns 0 on success */
static int one_round(double *value, double *grad_sum) {
    mt_tensor *a = NULL, *mm = NULL, *s = NULL, *r = NULL, *h = NULL, *tot = NULL, *g = NULL, *gs = NULL, *one = NULL;
    int rc = -1;
    if (mt_clone(shared_a, &a) || mt_tensor_set_requires_grad(a, 1)) goto out;
    if (mt_matmul(a, shared_b, &mm) || mt_binary(MT_OP_ADD, mm, a, 1, NULL, &s)) goto out;
    if (mt_activation(MT_ACT_RELU, s, 0, 0, 0, NULL, &r)) goto out;
    if (mt_binary_scalar(MT_OP_MUL, r, 0.5, 0, MT_SCALAR_FLOAT, 0, 1, NULL, &h)) goto out;
    if (mt_reduce(MT_RED_SUM, h, 0, NULL, 0, -1, NULL, &tot)) goto out;
    int64_t unused;
    if (mt_item(tot, value, &unused)) goto out;
    if (mt_scalar_tensor(1.0, 0, MT_SCALAR_FLOAT, MT_F64, 1, &one)) goto out;
    if (mt_backward(1, &tot, &one, 0, 0, 0, NULL, NULL, 1)) goto out;
    g = mt_tensor_grad(a);
    if (!g || mt_reduce(MT_RED_SUM, g, 0, NULL, 0, -1, NULL, &gs) || mt_item(gs, grad_sum, &unused)) goto out;
    rc = 0;
out:
    mt_tensor_release(a); mt_tensor_release(mm); mt_tensor_release(s); mt_tensor_release(r);
    mt_tensor_release(h); mt_tensor_release(tot); mt_tensor_release(g); mt_tensor_release(gs);
    mt_tensor_release(one);
    return rc;
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        double v = 0, gsum = 0;
        if (one_round(&v, &gsum)) { fail("round failed"); break; }
        if (fabs(v - expected_sum) > 1e-9 * fabs(expected_sum) + 1e-9) { fail("forward differs"); break; }
        if (fabs(gsum - expected_grad_sum) > 1e-9 * fabs(expected_grad_sum) + 1e-9) { fail("gradient differs"); break; }
    }
    return NULL;
}

int main(void) {
    int64_t sizes[2] = {N, N};
    double *buf = malloc(sizeof(double) * N * N);
    if (!buf) return 1;
    for (int i = 0; i < N * N; i++) buf[i] = sin(0.37 * i) * 0.5;
    if (mt_from_data(buf, MT_F64, 2, sizes, MT_F64, &shared_a)) return 1;
    for (int i = 0; i < N * N; i++) buf[i] = cos(0.11 * i) * 0.25;
    if (mt_from_data(buf, MT_F64, 2, sizes, MT_F64, &shared_b)) return 1;
    free(buf);
    int64_t live = mt_live_tensors();
    if (one_round(&expected_sum, &expected_grad_sum)) { fprintf(stderr, "%s\n", mt_last_error()); return 1; }
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, worker, NULL);
    for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
    if (mt_live_tensors() != live) fail("tensors leaked");
    mt_tensor_release(shared_a);
    mt_tensor_release(shared_b);
    if (failures) return 1;
    printf("threaded C tests passed (%d threads x %d rounds)\n", NTHREADS, ROUNDS);
    return 0;
}
