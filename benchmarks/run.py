"""Time mindtorch_v2 against PyTorch in one process, interleaved, and report ratios.

    python -m benchmarks [--quick] [--filter SUBSTRING] [--out DIR] [--no-chart]

Each case builds its inputs in both libraries, then the two are timed in
alternating rounds; the figure is the median per-call time and the ratio
mindtorch_v2 / PyTorch (below 1.0: mindtorch_v2 is faster). Prints a markdown
table, writes results.json and ratios.png under --out (default
benchmarks/results/), progress on stderr.
"""
import argparse
import json
import os
import statistics
import sys
import time

from . import chart, machine
from .registry import SKIPPED, load_cases


# Pause before each timed batch, so the other library's idle threads have gone to sleep: after
# a call PyTorch's OpenMP workers spin for milliseconds (libgomp's default wait policy) and ours
# for 0.2 ms, and on 2 cores a spinning thread of one library halves the other's second thread.
# Users do not run both libraries in one process; without the pause a 4096x4096 sum timed 1.3-1.9x
# PyTorch's right after a PyTorch batch, 0.98 with PyTorch's workers passive.
SETTLE_S = float(os.environ.get("BENCH_SETTLE_S", "0.05"))


def _batch(fn, budget):
    """Calls per timed batch: enough for budget/20 seconds."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 > budget / 20 or n > 1 << 20:
            return n
        n *= 4


def measure(c, rounds, budget):
    """Median seconds per call of mindtorch_v2 and PyTorch, timed in alternating rounds.

    A case's callable may have finish() (cases run in a child process: benchmarks/child.py):
    called once after timing, it returns extra figures such as peak_rss_mb, kept under "extra"."""
    import torch
    import mindtorch_v2
    fns = {"mt": c.make(mindtorch_v2)}
    try:
        fns["torch"] = c.make(torch)
        batch = {k: 1 if c.once else _batch(f, budget) for k, f in fns.items()}
        samples = {"mt": [], "torch": []}
        for _ in range(min(rounds, c.rounds or rounds)):
            for k in ("mt", "torch"):
                f, n = fns[k], batch[k]
                time.sleep(SETTLE_S)
                t0 = time.perf_counter()
                for _ in range(n):
                    f()
                samples[k].append((time.perf_counter() - t0) / n)
    finally:
        extra = {k: f.finish() for k, f in fns.items() if hasattr(f, "finish")}
    t = {k: statistics.median(v) for k, v in samples.items()}
    if extra:
        t["extra"] = extra
    return t


def _fmt_time(s):
    return f"{s * 1e6:.2f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _progress(i, n, name, t0):
    if sys.stderr.isatty():
        bar = "#" * (20 * i // n) + "." * (20 - 20 * i // n)
        sys.stderr.write(f"\r\033[K[{bar}] {i}/{n} {time.time() - t0:5.0f}s {name[:60]}")
    else:
        sys.stderr.write(f"[{i}/{n}] {time.time() - t0:.0f}s {name}\n")
    sys.stderr.flush()


def row(c, t, peak):
    """The result record of case c timed t: ratio, rate, share of the fp32 peak."""
    r = {"case": c.name, "mindtorch_s": t["mt"], "torch_s": t["torch"], "ratio": t["mt"] / t["torch"]}
    if c.flops:
        r["mindtorch_gflops"], r["torch_gflops"] = c.flops / t["mt"] / 1e9, c.flops / t["torch"] / 1e9
        if c.peak and peak:
            r["mindtorch_peak_share"] = r["mindtorch_gflops"] / peak
    elif c.bytes:
        r["mindtorch_gbs"] = c.bytes / t["mt"] / 1e9
    for k, extra in t.get("extra", {}).items():  # e.g. mindtorch_peak_rss_mb, torch_peak_rss_mb
        r.update({f"{'mindtorch' if k == 'mt' else 'torch'}_{name}": v for name, v in extra.items()})
    return r


def _rate(r):
    parts = []
    if "mindtorch_gflops" in r:
        s = f"{r['mindtorch_gflops']:.1f} vs {r['torch_gflops']:.1f} GFLOP/s"
        parts.append(s + (f", {100 * r['mindtorch_peak_share']:.0f}% of peak" if "mindtorch_peak_share" in r else ""))
    elif "mindtorch_gbs" in r:
        parts.append(f"{r['mindtorch_gbs']:.1f} GB/s")
    if "mindtorch_peak_rss_mb" in r:  # and the growth over the child's set-up
        grow = {k: r[f"{k}_peak_rss_mb"] - r[f"{k}_rss_after_setup_mb"] for k in ("mindtorch", "torch")}
        parts.append(f"peak RSS {r['mindtorch_peak_rss_mb']:.0f} (+{grow['mindtorch']:.0f}) vs "
                     f"{r['torch_peak_rss_mb']:.0f} (+{grow['torch']:.0f}) MB")
    return "; ".join(parts)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer rounds, shorter budget")
    p.add_argument("--filter", default="", help="run cases whose name contains this")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"),
                   help="directory for results.json and ratios.png")
    p.add_argument("--no-chart", action="store_true", help="skip the PNG chart")
    args = p.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("PyTorch is needed as the reference: pip install torch==2.13.0")
    rounds, budget = (5, 0.2) if args.quick else (15, 0.5)
    info = machine.record()
    print(f"machine: {machine.summary(info)}\n")
    print("| case | mindtorch_v2 | PyTorch | ratio | mindtorch_v2 rate |")
    print("|---|---|---|---|---|")
    cases = [c for c in load_cases() if args.filter in c.name]
    results, t0 = [], time.time()
    for i, c in enumerate(cases):
        _progress(i, len(cases), c.name, t0)
        r = row(c, measure(c, rounds, budget), info["fp32_peak_gflops"])
        results.append(r)
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
        print(f"| {c.name} | {_fmt_time(r['mindtorch_s'])} | {_fmt_time(r['torch_s'])} | {r['ratio']:.2f} | {_rate(r)} |",
              flush=True)
    skipped = [(n, why) for n, why in SKIPPED if args.filter in n]
    if skipped:
        print("\n" + "\n".join(f"not run: {n} ({why})" for n, why in skipped))
    _progress(len(cases), len(cases), "done", t0)
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "results.json")
    with open(path, "w") as f:
        json.dump({"machine": info, "quick": args.quick, "results": results,
                   "not_run": [{"case": n, "reason": why} for n, why in skipped]}, f, indent=1)
    print(f"\nwrote {path}", file=sys.stderr)
    if results and not args.no_chart:
        png = os.path.join(args.out, "ratios.png")
        if chart.write(results, png, f"mindtorch_v2 / PyTorch {info['torch']['version']}, {info['cpu']}, "
                                     f"{info['cores']} cores"):
            print(f"wrote {png}", file=sys.stderr)


if __name__ == "__main__":
    main()
