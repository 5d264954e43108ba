/* fft.h — the discrete Fourier transform kernels (fft.c), without autograd (internal). */
#ifndef MT_FFT_H
#define MT_FFT_H

#include "../../core/internal.h"

/* normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n (PyTorch's fft_norm_mode), n = the signal's numel */
mt_status mt__impl_fft_c2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int forward,
                           mt_tensor **out);
mt_status mt__impl_fft_r2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int onesided,
                           mt_tensor **out);
mt_status mt__impl_fft_c2r(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int64_t last_dim_size,
                           mt_tensor **out);

#endif
