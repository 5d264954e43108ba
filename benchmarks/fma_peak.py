"""The measured fp32 FMA peak: an FMA loop (12 independent vector accumulators, the widest SIMD the CPU
reports) compiled once with cffi, run on every core at once (cffi releases the GIL), best of a few
runs. This is the figure a GEMM's share of peak is read against: it includes the clock the cores
really run at (turbo, or below it when all are busy) and the FMA width (Zen 4 runs AVX-512 as two
256-bit halves), which the nominal estimate in machine.py can only guess. None when no compiler."""
import os
import tempfile
import threading
import time

_SRC = r"""
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#define BODY(V, SET1, FMA, ADD, LANES)                                                            \
    V a[12], x = SET1(1.0000001f), y = SET1(0.9999999f);                                          \
    for (int i = 0; i < 12; i++) a[i] = SET1((float)i);                                           \
    for (int64_t n = 0; n < iters; n++)                                                           \
        for (int i = 0; i < 12; i++) a[i] = FMA(a[i], x, y);                                      \
    for (int i = 1; i < 12; i++) a[0] = ADD(a[0], a[i]);                                          \
    float out[LANES]; memcpy(out, &a[0], sizeof out); /* the sums stay live */                    \
    return out[0];
__attribute__((target("avx512f"))) double fma512(int64_t iters) { BODY(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16) }
__attribute__((target("avx2,fma"))) double fma256(int64_t iters) { BODY(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8) }
"""


def _lib():
    from cffi import FFI
    ffi = FFI()
    ffi.cdef("double fma512(int64_t iters); double fma256(int64_t iters);")
    tmp = tempfile.mkdtemp(prefix="mt-fma-")
    ffi.set_source("_mt_fma_peak", _SRC, extra_compile_args=["-O3"])
    path = ffi.compile(tmpdir=tmp, verbose=False)
    import importlib.util
    spec = importlib.util.spec_from_file_location("_mt_fma_peak", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.lib


def measure(flags, cores=None, seconds=0.3):
    """(GFLOP/s of all cores, GFLOP/s per core) of the FMA loop, or None where it cannot be built."""
    if "avx512f" in flags:
        name, lanes = "fma512", 16
    elif "avx2" in flags and "fma" in flags:
        name, lanes = "fma256", 8
    else:
        return None
    try:
        fn = getattr(_lib(), name)
    except Exception:  # no compiler, no cffi: the nominal estimate stays
        return None
    cores = cores or os.cpu_count()
    iters = 1 << 16
    while True:  # calibrate one call to ~seconds/5
        t0 = time.perf_counter()
        fn(iters)
        if time.perf_counter() - t0 > seconds / 5:
            break
        iters *= 2
    flops = iters * 12 * 2 * lanes
    best = 0.0
    for _ in range(5):
        threads = [threading.Thread(target=fn, args=(iters,)) for _ in range(cores)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        best = max(best, cores * flops / (time.perf_counter() - t0) / 1e9)
    return best, best / cores


if __name__ == "__main__":
    from .machine import _cpuinfo
    flags = set(_cpuinfo().get("flags", "").split())
    print(measure(flags))
