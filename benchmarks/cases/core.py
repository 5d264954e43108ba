"""Benchmark cases: per-op overhead, elementwise, reductions, GEMM."""
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
