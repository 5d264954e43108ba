"""The machine record of a benchmark run: CPU, SIMD, BLAS libraries, threads, fp32 peak.

The fp32 peak is measured by an FMA loop (fma_peak.py) where a compiler can build it; else it is
computed as below. The estimate: cores x clock x FLOPs per cycle of the
widest FMA SIMD the CPU reports (AVX-512: 16 lanes, AVX2+FMA: 8 lanes, SSE: 4
lanes; 2 flops per FMA; 2 FMA units per core, as on every server core since
Haswell/Zen 2 — a VM does not reveal the port count; AMD Zen 4 runs AVX-512 on 256-bit units, 8 lanes). The clock is the
'cpu MHz' of /proc/cpuinfo (nominal, turbo excluded), so the peak is an
estimate a well-tuned GEMM may approach but not pass by much.
"""
import ctypes
import os
import platform
import re

from . import fma_peak

_SIMD = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
         "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "neon", "asimd", "sve")


def _cpuinfo():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (s.strip() for s in line.split(":", 1))
                    info.setdefault(k, v)  # first processor's record
    except OSError:
        pass
    return info


def fp32_peak(cores, mhz, flags, half_width_avx512=False):
    """Estimated fp32 peak in GFLOP/s (see the module doc), or None when the clock is unknown.
    half_width_avx512: the core runs a 512-bit FMA as two 256-bit halves (AMD Zen 4), 8 lanes a cycle."""
    if not mhz:
        return None, None
    lanes = 16 if "avx512f" in flags and not half_width_avx512 else 8 if "avx2" in flags and "fma" in flags else 4
    per_cycle = lanes * 2 * 2  # lanes x (mul+add) x FMA units
    return cores * mhz / 1e3 * per_cycle, f"{cores} cores x {mhz / 1e3:.2f} GHz x {per_cycle} FLOP/cycle"


def _openblas():
    """Path and openblas_get_config() of the OpenBLAS loaded into this process (mindtorch_v2's BLAS)."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.split()[-1]})
    except OSError:
        paths = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            cfg = lib.openblas_get_config().decode()
            threads = lib.openblas_get_num_threads() if hasattr(lib, "openblas_get_num_threads") else None
            return {"library": os.path.realpath(path), "config": cfg, "threads": threads}
        except (OSError, AttributeError):
            continue
    return {"library": "OpenBLAS (not found in /proc/self/maps)"}


def _torch_blas(torch):
    cfg = torch.__config__.show()
    libs = [ln.strip(" -") for ln in cfg.splitlines() if "Math Kernel" in ln or "MKL-DNN" in ln or "OpenBLAS" in ln]
    m = re.search(r"BLAS_INFO=([^,\s]+)", cfg)
    blas = m.group(1) if m else "unknown"
    return {"blas": blas, "libraries": libs}


def record():
    import torch
    import mindtorch_v2
    cpu = _cpuinfo()
    flags = set(cpu.get("flags", cpu.get("Features", "")).split())
    cores = os.cpu_count()
    try:
        mhz = float(cpu.get("cpu MHz", 0)) or None
    except ValueError:
        mhz = None
    zen4 = cpu.get("vendor_id") == "AuthenticAMD" and cpu.get("cpu family") == "25"
    peak, how = fp32_peak(cores, mhz, flags, half_width_avx512=zen4)
    measured = fma_peak.measure(flags, cores)  # the figure shares of peak are read against, when it runs
    if measured:
        how = f"measured by an FMA loop on {cores} cores, {measured[1]:.0f} per core; nominal " + (
            f"{peak:.0f} = {how}" if peak else "clock unknown")
        peak = measured[0]
    return {
        "cpu": cpu.get("model name", platform.processor() or "unknown"),
        "cores": cores,
        "mhz": mhz,
        "simd": [f for f in _SIMD if f in flags],
        "fp32_peak_gflops": peak,
        "fp32_peak_from": how,
        "python": platform.python_version(),
        "mindtorch_v2": {"threads": mindtorch_v2.get_num_threads(), "blas": _openblas()},
        "torch": {"version": torch.__version__, "threads": torch.get_num_threads(), **_torch_blas(torch)},
    }


def summary(m):
    """One-paragraph markdown description of a record."""
    peak = f"{m['fp32_peak_gflops']:.0f} GFLOP/s ({m['fp32_peak_from']})" if m["fp32_peak_gflops"] else "unknown"
    ob = m["mindtorch_v2"]["blas"]
    return (f"{m['cpu']}, {m['cores']} cores, SIMD {' '.join(m['simd'])}; fp32 peak {peak}; "
            f"Python {m['python']}; mindtorch_v2: {m['mindtorch_v2']['threads']} threads, "
            f"{ob.get('config', ob['library'])} ({ob['library']}, {ob.get('threads')} threads); "
            f"PyTorch {m['torch']['version']}: {m['torch']['threads']} threads, BLAS {m['torch']['blas']} "
            f"({'; '.join(m['torch']['libraries'])})")
