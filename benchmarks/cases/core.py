"""Benchmark cases: per-op overhead, indexing, elementwise, reductions, GEMM, import time."""
import os
import subprocess
import sys

from ..registry import case


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


@case("basic indexing x[:, 1] (8x8)")
def _basic_index(lib):
    a = lib.ones(8, 8)
    return lambda: a[:, 1]


@case("basic indexing x[1:5, ::2, None] (8x8)")
def _basic_index_multi(lib):
    a = lib.ones(8, 8)
    return lambda: a[1:5, ::2, None]


@case("advanced indexing x[idx] (64x64, 4 rows)")
def _adv_index(lib):
    a, i = lib.ones(64, 64), lib.tensor([0, 3, 5, 7])
    return lambda: a[i]


@case("advanced indexing x[mask] (64x64 bool mask)")
def _mask_index(lib):
    a = lib.arange(4096.0).view(64, 64)
    m = a.remainder(3) == 0
    return lambda: a[m]


@case("Linear(16, 16) on 1x16")
def _linear_small(lib):
    lib.manual_seed(0)
    m, x = lib.nn.Linear(16, 16), lib.ones(1, 16)
    return lambda: m(x)


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


@case("norm(dim=1) 4096x4096", bytes_=4 * 4096 * 4096)
def _norm_dim(lib):
    a = lib.ones(4096, 4096)
    return lambda: a.norm(dim=1)


@case("logsumexp(dim=1) 4096x4096", bytes_=4 * 4096 * 4096)
def _logsumexp(lib):
    a = lib.arange(4096 * 4096, dtype=lib.float32).view(4096, 4096).remainder(7.0)
    return lambda: a.logsumexp(1)


@case("index_select(1, 512 of 1024) 1024x1024", bytes_=2 * 4 * 1024 * 512)
def _index_select_inner(lib):
    a, i = lib.ones(1024, 1024), lib.arange(0, 1024, 2)
    return lambda: a.index_select(1, i)


@case("index_select(0, 512 of 1024) 1024x1024", bytes_=2 * 4 * 1024 * 512)
def _index_select_outer(lib):
    a, i = lib.ones(1024, 1024), lib.arange(0, 1024, 2)
    return lambda: a.index_select(0, i)


# ---- GEMM ----------------------------------------------------------------------------

@case("matmul 1024^3 float32", flops=2 * 1024 ** 3, peak=True)
def _gemm(lib):
    a, b = lib.ones(1024, 1024), lib.ones(1024, 1024)
    return lambda: a @ b


def _bert_gemm(m, k, n, dt):
    """A BERT-shaped GEMM: M tokens x K features @ K x N weights."""
    @case(f"matmul BERT {m}x{k} @ {k}x{n} {dt}", flops=2 * m * k * n, peak=dt == "float32")
    def _g(lib):
        g = lib.Generator().manual_seed(0)
        a = lib.randn(m, k, generator=g).to(getattr(lib, dt))
        b = lib.randn(k, n, generator=g).to(getattr(lib, dt))
        return lambda: a @ b


for _dt in ("float32", "bfloat16"):
    for _m in (128, 1024):
        _bert_gemm(_m, 768, 3072, _dt)
        _bert_gemm(_m, 3072, 768, _dt)


# ---- import time ----------------------------------------------------------------------

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_FIRST_FORWARD = "; torch.nn.Linear(64, 64)(torch.randn(8, 64)).sum().item()"


@case("import torch + first forward (proxy -> mindtorch_v2 vs real), subprocess", rounds=5)
def _import(lib):
    env = dict(os.environ)
    if lib.__name__ == "mindtorch_v2":  # the proxy makes `import torch` load mindtorch_v2
        code = "import torch_proxy; torch_proxy.install(); import torch; assert torch.__name__ == 'mindtorch_v2'"
        env["PYTHONPATH"] = _ROOT + os.pathsep + env.get("PYTHONPATH", "")
    else:
        code = "import torch"
    return lambda: subprocess.run([sys.executable, "-c", code + _FIRST_FORWARD], env=env, check=True)
