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

CASES = []


def case(name, flops=None, bytes_=None):
    """Register a benchmark: fn(lib) -> zero-argument callable running one iteration."""
    def deco(fn):
        CASES.append((name, fn, flops, bytes_))
        return fn
    return deco


# ---- per-op overhead --------------------------------------------------------------

@case("tiny add (16 floats)")
def _tiny_add(lib):
    a, b = lib.ones(16), lib.ones(16)
    return lambda: a + b


@case("add Python scalar (16 floats)")
def _scalar_add(lib):
    a = lib.ones(16)
    return lambda: a + 1.5


@case("view (4x4 -> 16)")
def _view(lib):
    a = lib.ones(4, 4)
    return lambda: a.view(16)


@case("transpose + index [0]")
def _index(lib):
    a = lib.ones(8, 8)
    return lambda: a.t()[0]


_N16M = 16 * 1024 * 1024


@case("add 16M float32", bytes_=3 * 4 * _N16M)
def _big_add(lib):
    a, b = lib.ones(_N16M), lib.ones(_N16M)
    return lambda: a + b


@case("mul 16M bfloat16", bytes_=3 * 2 * _N16M)
def _big_mul_bf16(lib):
    a, b = lib.ones(_N16M, dtype=lib.bfloat16), lib.ones(_N16M, dtype=lib.bfloat16)
    return lambda: a * b


@case("exp 4M float32", bytes_=2 * 4 * 4 * 1024 * 1024)
def _exp(lib):
    a = lib.ones(4 * 1024 * 1024)
    return lambda: a.exp()


@case("add transposed 2048x2048", bytes_=3 * 4 * 2048 * 2048)
def _t_add(lib):
    a, b = lib.ones(2048, 2048), lib.ones(2048, 2048)
    return lambda: a.t() + b


@case("sum 4096x4096", bytes_=4 * 4096 * 4096)
def _sum(lib):
    a = lib.ones(4096, 4096)
    return lambda: a.sum()


@case("sum(dim=-1) 4096x4096", bytes_=4 * 4096 * 4096)
def _sum_dim(lib):
    a = lib.ones(4096, 4096)
    return lambda: a.sum(-1)


# ---- GEMM ----------------------------------------------------------------------------

@case("matmul 1024^3 float32", flops=2 * 1024 ** 3)
def _gemm(lib):
    a, b = lib.ones(1024, 1024), lib.ones(1024, 1024)
    return lambda: a @ b


@case("matmul BERT 1024x768 @ 768x3072 float32", flops=2 * 1024 * 768 * 3072)
def _gemm_bert(lib):
    a, b = lib.ones(1024, 768), lib.ones(768, 3072)
    return lambda: a @ b


@case("matmul BERT 128x3072 @ 3072x768 bfloat16", flops=2 * 128 * 3072 * 768)
def _gemm_bf16(lib):
    a, b = lib.ones(128, 3072, dtype=lib.bfloat16), lib.ones(3072, 768, dtype=lib.bfloat16)
    return lambda: a @ b


# ---- autograd --------------------------------------------------------------------------

@case("tiny forward+backward ((x*w+b).sum(), 16 floats)")
def _tiny_fb(lib):
    x = lib.ones(16)
    w, b = lib.ones(16, requires_grad=True), lib.ones(16, requires_grad=True)

    def step():
        (x * w + b).sum().backward()
    return step


@case("2-layer MLP train step (64x256 -> 256 -> 10)")
def _mlp(lib):
    x = lib.ones(64, 256) * 0.01
    w1 = (lib.ones(256, 256) * 0.01).requires_grad_()
    w2 = (lib.ones(256, 10) * 0.01).requires_grad_()

    def step():
        loss = ((x @ w1).tanh() @ w2).sigmoid().mean()
        loss.backward()
        with lib.no_grad():
            for w in (w1, w2):
                w -= 0.1 * w.grad
                w.grad = None
    return step


@case("autograd per-op overhead (8 recorded ops + backward, 16 floats)")
def _per_op_autograd(lib):
    x = lib.ones(16, requires_grad=True)

    def step():
        y = x * 1.5
        for _ in range(3):
            y = (y + x) * x
        y = y.sum()
        y.backward()
        x.grad = None
    return step


@case("2-layer MLP train step (64x128 -> 256 -> 10: addmm-by-ops, clamp relu, MSE by ops, SGD)")
def _mlp_sgd(lib):
    g = lib.Generator().manual_seed(0)
    x = lib.randn(64, 128, generator=g)
    target = lib.randn(64, 10, generator=g)
    params = [(lib.randn(128, 256, generator=g) * 0.05).requires_grad_(), lib.zeros(256, requires_grad=True),
              (lib.randn(256, 10, generator=g) * 0.05).requires_grad_(), lib.zeros(10, requires_grad=True)]
    w1, b1, w2, b2 = params

    def step():
        h = (x @ w1 + b1).clamp(min=0)
        out = h @ w2 + b2
        loss = ((out - target) * (out - target)).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
    return step


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
    for name, make, flops, nbytes in CASES:
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
