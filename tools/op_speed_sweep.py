"""Time every public function of torch that takes one or two tensors, in both libraries, and list the
ratios (mindtorch_v2 / PyTorch): a sweep for the slow outliers the benchmark runner's cases do not name.

    python tools/op_speed_sweep.py [--namespace torch|nn.functional|Tensor] [--backward] [--shape 512x2048]
                                   [--dtype float32] [--threads N] [--over 1.3] [--only NAME,...] [--skip NAME,...]

Each name (a function of the namespace, or a method of the tensor) is tried as f(x), f(x, y),
f(x, dim=-1) and f(x, dim=0), with x, y in (0.1, 0.9) (every unary op's domain) and y != 0; the first call form PyTorch accepts is timed in both libraries
(median of 5 rounds, each long enough for ~10 ms), and forms mindtorch_v2 rejects are listed apart.
--backward times the op and the backward of its result's sum (x requires grad; differentiable results only).
A long sweep to run by hand and record in docs/PERFORMANCE.md, not a CI step."""
import argparse
import os
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's mindtorch_v2
import mindtorch_v2 as mt  # noqa: E402

SKIP = {  # not elementwise or reduction work on x: constructors, I/O, global state, printing, whole models
    "load", "save", "manual_seed", "seed", "set_printoptions", "compile", "export", "jit", "set_default_dtype",
    "set_default_device", "set_num_threads", "set_num_interop_threads", "use_deterministic_algorithms",
    "set_grad_enabled", "set_rng_state", "from_numpy", "frombuffer", "empty_like", "set_flush_denormal",
    "vmap", "cond", "while_loop", "chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit",
    "set_warn_always", "set_anomaly_enabled", "autocast_increment_nesting", "autocast_decrement_nesting",
    "set_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_dtype", "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_vital", "sym_not", "typename", "is_tensor", "is_storage", "numel",
}
FORMS = [("x",), ("x", "y"), ("x", "dim=-1"), ("x", "dim=0")]


def namespace(lib, ns):
    return lib if ns == "torch" else lib.nn.functional if ns == "nn.functional" else None


def call(lib, ns, name, form, x, y):
    args = [x if a == "x" else y for a in form if "=" not in a]
    kw = {a.split("=")[0]: int(a.split("=")[1]) for a in form if "=" in a}
    if ns == "Tensor":
        return getattr(args[0], name)(*args[1:], **kw)
    return getattr(namespace(lib, ns), name)(*args, **kw)


def first_tensor(r):
    return r if not isinstance(r, tuple) else r[0]


def with_backward(lib, ns, name, form, x, y):
    r = first_tensor(call(lib, ns, name, form, x, y))
    r.float().sum().backward()
    return r


def timed(fn):
    fn()
    n, t = 1, 0.0
    while True:  # calls per round for ~10 ms
        s = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - s
        if t > 0.01 or n > 100000:
            break
        n *= 4 if t < 0.0025 else 2
    rounds = []
    for _ in range(5):
        s = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - s) / n)
    return sorted(rounds)[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="512x2048")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--over", type=float, default=1.3, help="list ratios above this")
    ap.add_argument("--only", default="")
    ap.add_argument("--skip", default="", help="names not to try (e.g. one that crashes a library)")
    ap.add_argument("--namespace", default="torch", choices=["torch", "nn.functional", "Tensor"])
    ap.add_argument("--backward", action="store_true")
    ap.add_argument("--threads", type=int, default=0, help="both libraries' intra-op threads (0: their default)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
        mt.set_num_threads(a.threads)
    ns = a.namespace
    shape = [int(s) for s in a.shape.split("x")]
    warnings.simplefilter("ignore")
    base = torch.rand(*shape, dtype=torch.float64) * 0.8 + 0.1
    other = torch.rand(*shape, dtype=torch.float64) * 0.8 + 0.1
    tx, ty = base.to(getattr(torch, a.dtype)), other.to(getattr(torch, a.dtype))
    mx, my = mt.tensor(base.numpy()).to(getattr(mt, a.dtype)), mt.tensor(other.numpy()).to(getattr(mt, a.dtype))
    if a.backward:
        tx.requires_grad_(True)
        mx.requires_grad_(True)
    space = torch.Tensor if ns == "Tensor" else namespace(torch, ns)
    names = a.only.split(",") if a.only else sorted(
        n for n in dir(space) if not n.startswith("_") and n.islower() and callable(getattr(space, n, None))
        and not isinstance(getattr(space, n), type) and n not in SKIP and not n.endswith("_"))
    run = with_backward if a.backward else call
    skip = set(a.skip.split(","))
    rows, missing = [], []
    for name in names:
        if name in skip:
            continue
        if a.backward:  # fresh leaves per op: a failed backward can poison its inputs (PyTorch's dequantize)
            tx, mx = tx.detach().requires_grad_(True), mx.detach().requires_grad_(True)
        for form in FORMS:
            print(f"trying {name}{form}", file=sys.stderr, flush=True)  # a crash inside a library names its op
            try:
                r = run(torch, ns, name, form, tx, ty)
                if not isinstance(r, torch.Tensor) and not (isinstance(r, tuple) and r and
                                                            isinstance(r[0], torch.Tensor)):
                    break
                if a.backward and first_tensor(r).grad_fn is None:
                    break
            except Exception:
                continue
            if not hasattr(mx if ns == "Tensor" else namespace(mt, ns), name):
                missing.append(f"{name}: absent")
                break
            try:
                run(mt, ns, name, form, mx, my)
            except Exception as e:
                missing.append(f"{name}{form}: {type(e).__name__}: {str(e)[:80]}")
                break
            try:  # a repeated call can fail where the first did not (PyTorch's sgn backward: ZeroTensors)
                ours = timed(lambda: run(mt, ns, name, form, mx, my))
                theirs = timed(lambda: run(torch, ns, name, form, tx, ty))
            except Exception as e:
                missing.append(f"{name}{form}: a repeated call raised {type(e).__name__}: {str(e)[:80]}")
                break
            rows.append((ours / theirs, name, form, ours, theirs))
            print(f"{name}{form}: {ours * 1e6:.1f} us vs {theirs * 1e6:.1f} us, {ours / theirs:.2f}", file=sys.stderr)
            break
    rows.sort(reverse=True)
    what = f"{ns}.op" + (" + backward" if a.backward else "")
    print(f"| {what} ({a.dtype} {a.shape}) | mindtorch_v2 | PyTorch | ratio |\n|---|---|---|---|")
    for ratio, name, form, ours, theirs in rows:
        if ratio > a.over:
            print(f"| {name}({', '.join(form)}) | {ours * 1e6:.1f} us | {theirs * 1e6:.1f} us | {ratio:.2f} |")
    print(f"\n{len(rows)} ops timed, {sum(r[0] > a.over for r in rows)} above {a.over}; "
          f"{len(missing)} call forms PyTorch accepts and mindtorch_v2 rejects:")
    for m in missing:
        print(f"- {m}")


if __name__ == "__main__":
    main()
