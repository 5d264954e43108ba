"""Benchmark cases: scaled_dot_product_attention over long sequences, each library in a child process of
its own (benchmarks/child.py), so that the report's peak RSS is that library's alone.

Causal SDPA forward (no grad) of 1 x 8 heads x L x 64 in float32, L = 4096 and 16384: the inputs and the
output are 4 x 8 MiB at 4096 and 4 x 32 MiB at 16384. A kernel that materialises the L x L scores would
need 0.5 and 8 GiB for them; the growth of the peak RSS over set-up (the report's "+N MB") must stay
linear in L: 4x from 4096 to 16384, not 16x.
"""
from ..child import Worker, library, serve
from ..registry import case

HEADS, DIM = 8, 64
for _L in (4096, 16384):
    case(f"sdpa causal 1x{HEADS}x{_L}x{DIM} forward (peak RSS)", flops=2 * HEADS * _L * _L * DIM,
         rounds=3)(lambda lib, L=_L: Worker(lib.__name__, __name__, "sdpa_causal", L))


def _build(name, length):
    torch = library()
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, HEADS, length, DIM, generator=g) for _ in range(3))

    def step():
        with torch.no_grad():
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return step, lambda out: float(out.abs().mean())


if __name__ == "__main__":
    serve(_build)
