"""Benchmark cases: torch.fft (FFTW underneath ours, MKL underneath PyTorch's) and stft."""
from ..registry import case


def _signal(lib, shape, complex_=False):
    g = lib.Generator().manual_seed(0)
    x = lib.randn(*shape, generator=g)
    return lib.complex(x, x.flip(-1)) if complex_ else x


@case("fft complex64 (1024 signals of 1024 points)")
def _fft_c2c(lib):
    x = _signal(lib, (1024, 1024), True)
    return lambda: lib.fft.fft(x)


@case("rfft float32 (256 signals of 4096 points)")
def _rfft(lib):
    x = _signal(lib, (256, 4096))
    return lambda: lib.fft.rfft(x)


@case("irfft float32 (256 signals of 2049 bins -> 4096 points)")
def _irfft(lib):
    x = lib.fft.rfft(_signal(lib, (256, 4096)))
    return lambda: lib.fft.irfft(x, n=4096)


@case("fft2 complex64 (16 images of 256x256)")
def _fft2(lib):
    x = _signal(lib, (16, 256, 256), True)
    return lambda: lib.fft.fft2(x)


@case("fft of one small signal (complex64, 64 points: per-call overhead)")
def _fft_small(lib):
    x = _signal(lib, (64,), True)
    return lambda: lib.fft.fft(x)


@case("FNet token mixing fwd+bwd (fft2 over (seq, hidden) of 8x128x256, real part)")
def _fnet(lib):
    x = _signal(lib, (8, 128, 256)).requires_grad_()

    def step():
        lib.fft.fft2(x).real.sum().backward()
        x.grad = None
    return step


@case("stft float32 (4 signals of 16000 samples, n_fft 400, hop 160, hann)")
def _stft(lib):
    x = _signal(lib, (4, 16000))
    w = lib.hann_window(400)
    return lambda: lib.stft(x, 400, 160, window=w, return_complex=True)
