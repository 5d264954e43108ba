"""Time mindtorch_v2 against PyTorch in one process, interleaved, and print ratios.

    python -m benchmarks [--quick] [--filter SUBSTRING] [--json PATH]

Each case builds its inputs in both libraries, then the two are timed in
alternating rounds; the figure is the median per-call time and the ratio
mindtorch_v2 / PyTorch (below 1.0: mindtorch_v2 is faster).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

from .registry import load_cases


def _time(fn, budget):
    """Median seconds per call: calibrate a batch size, then time batches."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > budget / 20 or n > 1 << 20:
            return n, dt / n
        n *= 4


def measure(name, make, rounds, budget):
    import torch
    import mindtorch_v2
    fns = {"mt": make(mindtorch_v2), "torch": make(torch)}
    batch = {k: _time(f, budget)[0] for k, f in fns.items()}
    samples = {"mt": [], "torch": []}
    for _ in range(rounds):
        for k in ("mt", "torch"):  # interleaved
            f, n = fns[k], batch[k]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            samples[k].append((time.perf_counter() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def machine():
    import torch
    import mindtorch_v2
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "mindtorch_threads": mindtorch_v2.get_num_threads()}


def _fmt_time(s):
    return f"{s * 1e6:.2f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer rounds, shorter budget")
    p.add_argument("--filter", default="", help="run cases whose name contains this")
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    args = p.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("PyTorch is needed as the reference: pip install torch==2.13.0")
    rounds, budget = (5, 0.2) if args.quick else (15, 0.5)
    info = machine()
    print(f"machine: {info}")
    print("| case | mindtorch_v2 | PyTorch | ratio | mindtorch GB/s or GFLOP/s |")
    print("|---|---|---|---|---|")
    results = []
    for name, make, flops, nbytes in load_cases():
        if args.filter not in name:
            continue
        t = measure(name, make, rounds, budget)
        ratio = t["mt"] / t["torch"]
        rate = ""
        if flops:
            rate = f"{flops / t['mt'] / 1e9:.1f} GFLOP/s"
        elif nbytes:
            rate = f"{nbytes / t['mt'] / 1e9:.1f} GB/s"
        print(f"| {name} | {_fmt_time(t['mt'])} | {_fmt_time(t['torch'])} | {ratio:.2f} | {rate} |", flush=True)
        results.append({"case": name, "mindtorch_s": t["mt"], "torch_s": t["torch"], "ratio": ratio})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
