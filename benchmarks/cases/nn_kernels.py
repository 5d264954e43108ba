"""Benchmark cases: NN kernels (softmax, layer_norm, scaled_dot_product_attention, a GELU chain)."""
from ..registry import case

_R = 4096 * 4096
_B, _H, _L, _E = 8, 12, 128, 64
_SDPA_FLOPS = 4 * _B * _H * _L * _L * _E  # q k^T and p v


def _randn(lib, *shape, requires_grad=False):
    g = lib.Generator().manual_seed(0)
    return lib.randn(*shape, generator=g).requires_grad_(requires_grad)


@case("softmax 4096x4096 float32 (last dim)", bytes_=2 * 4 * _R)
def _softmax(lib):
    x = _randn(lib, 4096, 4096)
    return lambda: lib.softmax(x, -1)


@case("layer_norm 4096x4096 float32", bytes_=2 * 4 * _R)
def _layer_norm(lib):
    x, w, b = _randn(lib, 4096, 4096), lib.ones(4096), lib.zeros(4096)
    return lambda: lib.nn.functional.layer_norm(x, (4096,), w, b)


def _sdpa(lib, requires_grad=False, mask=False, **kw):
    q, k, v = (_randn(lib, _B, _H, _L, _E, requires_grad=requires_grad) for _ in range(3))
    m = _randn(lib, _L, _L) if mask else None
    f = lib.nn.functional.scaled_dot_product_attention
    if not requires_grad:
        return lambda: f(q, k, v, attn_mask=m, **kw)
    return lambda: f(q, k, v, attn_mask=m, **kw).sum().backward()


@case(f"sdpa {_B}x{_H}x{_L}x{_E} forward", flops=_SDPA_FLOPS)
def _sdpa_plain(lib):
    return _sdpa(lib)


@case(f"sdpa {_B}x{_H}x{_L}x{_E} causal forward", flops=_SDPA_FLOPS // 2)
def _sdpa_causal(lib):
    return _sdpa(lib, is_causal=True)


@case(f"sdpa {_B}x{_H}x{_L}x{_E} float mask forward", flops=_SDPA_FLOPS)
def _sdpa_mask(lib):
    return _sdpa(lib, mask=True)


@case(f"sdpa {_B}x{_H}x{_L}x{_E} forward+backward", flops=3.5 * _SDPA_FLOPS)
def _sdpa_plain_bw(lib):
    return _sdpa(lib, requires_grad=True)


@case(f"sdpa {_B}x{_H}x{_L}x{_E} causal forward+backward", flops=3.5 * _SDPA_FLOPS / 2)
def _sdpa_causal_bw(lib):
    return _sdpa(lib, requires_grad=True, is_causal=True)


@case(f"sdpa {_B}x{_H}x{_L}x{_E} float mask forward+backward", flops=3.5 * _SDPA_FLOPS)
def _sdpa_mask_bw(lib):
    return _sdpa(lib, requires_grad=True, mask=True)


@case("gelu(x * w + b) 16M float32", bytes_=4 * 4 * 16 * 1024 * 1024)
def _gelu_chain(lib):
    n = 16 * 1024 * 1024
    x, w, b = _randn(lib, n), _randn(lib, n), _randn(lib, n)
    return lambda: lib.nn.functional.gelu(x * w + b)
