"""float16/bfloat16 elementwise results bit for bit against live PyTorch over every 16-bit pattern (NaN payloads,
signed zeros, subnormals and infinities included), contiguous, strided, broadcast, empty and 0-dim."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

DTYPES = ["bfloat16", "float16"]
ALL = np.arange(65536, dtype=np.uint16).view(np.int16)


def every(dtype):
    """all 65536 patterns of dtype, in both libraries"""
    return mt.tensor(ALL).view(getattr(mt, dtype)), torch.tensor(ALL).view(getattr(torch, dtype))


def one(dtype, pattern):
    """a 0-dim tensor holding the 16-bit pattern"""
    v = int(np.array([pattern], dtype=np.uint16).view(np.int16)[0])
    return mt.tensor(v, dtype=mt.int16).view(getattr(mt, dtype)), torch.tensor(v, dtype=torch.int16).view(getattr(torch, dtype))


def bits(t):
    return np.asarray((t.view(mt.int16) if isinstance(t, mt.Tensor) else t.view(torch.int16)).numpy()).view(np.uint16)


def same_bits(m, t):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    a, b = bits(m), bits(t)
    bad = np.nonzero(a.reshape(-1) != b.reshape(-1))[0]
    assert not len(bad), f"{len(bad)} differ, first at {bad[0]}: {a.reshape(-1)[bad[0]]:#06x} != {b.reshape(-1)[bad[0]]:#06x}"


# where a NaN run starts: PyTorch's contiguous loops take whole vectors on the bits and the rest through float
NAN = {"bfloat16": 0x7F81, "float16": 0x7C01}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["neg", "abs", "negative", "absolute"])
def test_sign_ops(op, dtype):
    m, t = every(dtype)
    f = lambda L, x: getattr(L, op)(x)  # noqa: E731
    same_bits(f(mt, m), f(torch, t))
    same_bits(f(mt, m[::3]), f(torch, t[::3]))  # strided: PyTorch's scalar path
    same_bits(f(mt, m.view(256, 256).t()), f(torch, t.view(256, 256).t()))
    for n in (1, 5, 31, 32, 33, 63, 64, 100, 127, 129):  # whole vectors, then the rest
        s = slice(NAN[dtype], NAN[dtype] + n)
        same_bits(f(mt, m[s]), f(torch, t[s]))
        same_bits(f(mt, m[-n:]), f(torch, t[-n:]))
    for p in (0x0000, 0x8000, 0x0001, 0x8001, NAN[dtype], NAN[dtype] | 0x8000, 0x7FFF, 0xFFFF):
        m0, t0 = one(dtype, p)
        same_bits(f(mt, m0), f(torch, t0))
    same_bits(f(mt, m[:0]), f(torch, t[:0]))
    mo, to = mt.empty(100, dtype=m.dtype), torch.empty(100, dtype=t.dtype)
    same_bits(getattr(mt, op)(m[NAN[dtype]:NAN[dtype] + 100], out=mo), getattr(torch, op)(t[NAN[dtype]:NAN[dtype] + 100], out=to))
    mi, ti = m.clone(), t.clone()
    getattr(mi, op + "_")()
    getattr(ti, op + "_")()
    same_bits(mi, ti)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copysign(dtype):
    m, t = every(dtype)
    # every magnitude with each sign source, and every sign source for each magnitude: PyTorch's copysign is
    # on the bits in its vector and scalar paths alike
    for p in (0x0000, 0x8000, 0x3F80, 0xBF80, NAN[dtype], NAN[dtype] | 0x8000, 0x7FC0, 0xFFC0):
        m0, t0 = one(dtype, p)
        same_bits(mt.copysign(m, m0), torch.copysign(t, t0))
        same_bits(mt.copysign(m0, m), torch.copysign(t0, t))
        same_bits(mt.copysign(m[::3], m0.expand(1)), torch.copysign(t[::3], t0.expand(1)))
        same_bits(mt.copysign(m0, m0), torch.copysign(t0, t0))
    same_bits(mt.copysign(m, m.flip(0)), torch.copysign(t, t.flip(0)))
    same_bits(mt.copysign(m[::3], m.flip(0)[::3]), torch.copysign(t[::3], t.flip(0)[::3]))
    same_bits(mt.copysign(m.view(256, 256), m[:256]), torch.copysign(t.view(256, 256), t[:256]))
    same_bits(mt.copysign(m[:256, None], m[:256].view(1, 256)), torch.copysign(t[:256, None], t[:256].view(1, 256)))
    for y in (-2.0, 0.0, -0.0, 3, float("nan"), -float("nan")):
        same_bits(mt.copysign(m, y), torch.copysign(t, y))
    same_bits(mt.copysign(m[:0], m[:0]), torch.copysign(t[:0], t[:0]))
    mi, ti = m.clone(), t.clone()
    mi.copysign_(m.flip(0))
    ti.copysign_(t.flip(0))
    same_bits(mi, ti)
