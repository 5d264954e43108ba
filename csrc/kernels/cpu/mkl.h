/* mkl.h — libmkl_rt opened once for fft.c and lapack.c (mkl.c; internal). */
#ifndef MT_MKL_H
#define MT_MKL_H

/* the handle of libmkl_rt at path (opened by the first caller with a path; its threading layer chosen then),
 * or NULL when it cannot be opened */
void *mt__mkl_open(const char *path);
/* sets the thread count of the calling thread's next MKL calls to n, or to 1 on the sequential layer and in a
 * child forked after MKL was opened; returns the count set */
int mt__mkl_threads(int n);

#endif
