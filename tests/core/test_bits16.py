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


def same_bits(m, t, any_nan=False):
    """the same bits; any_nan: a NaN where PyTorch has one, its payload aside"""
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    a, b = bits(m).reshape(-1), bits(t).reshape(-1)
    differ = a != b
    if any_nan:
        nan_t = torch.isnan(t.float().reshape(-1)).numpy()
        assert (np.asarray(mt.isnan(m.float().reshape(-1)).numpy()) == nan_t).all()
        differ &= ~nan_t
    bad = np.nonzero(differ)[0]
    assert not len(bad), f"{len(bad)} differ, first at {bad[0]}: {a[bad[0]]:#06x} != {b[bad[0]]:#06x}"


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


def patterns(dtype, count, seed):
    """count 16-bit patterns: the special values, then random ones"""
    inf = 0x7F80 if dtype == "bfloat16" else 0x7C00
    special = [0x0000, 0x8000, 0x0001, 0x8001, inf, inf | 0x8000, NAN[dtype], 0x3C00, 0xBC00, 0x3F80, 0xBF80,
               0x4040, 0xC040, 0x7F7F, 0x7BFF, 0x0400, 0x0080, 0x3DCD, 0x4900, 0x5A00]
    rng = np.random.default_rng(seed)
    return special + rng.integers(0, 65536, count - len(special)).tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_floor_divide(dtype):
    # every dividend by 48 divisors and every divisor into 48 dividends (the specials among them): PyTorch
    # rounds each step to the dtype; a block of quotients below 2^29 takes the vectorised fmod. NaN payloads
    # aside: PyTorch's vector float math leaves others (0/0 of bfloat16 is 0xFFFF)
    fd_bits = lambda x, y: same_bits(x, y, any_nan=True)  # noqa: E731
    m, t = every(dtype)
    ys = np.array(patterns(dtype, 48, 1), dtype=np.uint16).view(np.int16)
    my, ty = mt.tensor(ys).view(getattr(mt, dtype)), torch.tensor(ys).view(getattr(torch, dtype))
    fd_bits(mt.floor_divide(m[:, None], my), torch.floor_divide(t[:, None], ty))
    fd_bits(mt.floor_divide(my[:, None], m), torch.floor_divide(ty[:, None], t))
    fd_bits(mt.floor_divide(m[::3], m.flip(0)[::3]), torch.floor_divide(t[::3], t.flip(0)[::3]))
    fd_bits(mt.floor_divide(m, m.flip(0)), torch.floor_divide(t, t.flip(0)))
    fd_bits(mt.floor_divide(m, my[5]), torch.floor_divide(t, ty[5]))  # a 0-dim divisor
    for y in (3, -0.5, 0.1, 7.25, float("inf")):  # a number: PyTorch keeps the steps in float
        fd_bits(mt.floor_divide(m, y), torch.floor_divide(t, y))
    fd_bits(mt.floor_divide(m[:0], my[:0]), torch.floor_divide(t[:0], ty[:0]))
    fd_bits(mt.floor_divide(my[3], my[7]), torch.floor_divide(ty[3], ty[7]))
    mi, ti = m.clone(), t.clone()
    mi.floor_divide_(m.flip(0))
    ti.floor_divide_(t.flip(0))
    fd_bits(mi, ti)
    mo, to = mt.empty(0, dtype=m.dtype), torch.empty(0, dtype=t.dtype)
    fd_bits(mt.floor_divide(m, m.flip(0), out=mo), torch.floor_divide(t, t.flip(0), out=to))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_to_num(dtype):
    # on the bits: finite values as they are, the replacements rounded to the dtype (1e30 is inf in float16)
    m, t = every(dtype)
    for kw in ({}, {"nan": 1.5, "posinf": 1e30, "neginf": -7.0}, {"nan": -0.0, "posinf": 0.1, "neginf": 1e-40},
               {"nan": float("inf")}):
        same_bits(mt.nan_to_num(m, **kw), torch.nan_to_num(t, **kw))
        same_bits(mt.nan_to_num(m[::3], **kw), torch.nan_to_num(t[::3], **kw))
        same_bits(mt.nan_to_num(m.view(256, 256).t(), **kw), torch.nan_to_num(t.view(256, 256).t(), **kw))
    for p in (NAN[dtype], 0xFFFF, 0x7F80, 0xFC00, 0x3C00):
        m0, t0 = one(dtype, p)
        same_bits(mt.nan_to_num(m0, nan=2.0), torch.nan_to_num(t0, nan=2.0))
    same_bits(mt.nan_to_num(m[:0]), torch.nan_to_num(t[:0]))
    mi, ti = m.clone(), t.clone()
    mi.nan_to_num_(nan=3.0)
    ti.nan_to_num_(nan=3.0)
    same_bits(mi, ti)
    mo, to = mt.empty(5, dtype=m.dtype), torch.empty(5, dtype=t.dtype)
    same_bits(mt.nan_to_num(m, out=mo), torch.nan_to_num(t, out=to))


@pytest.mark.parametrize("dtype", DTYPES)
def test_erf(dtype):
    # PyTorch's float16/bfloat16 erf (Abramowitz and Stegun's form in float, its vector and scalar paths alike):
    # its bits for every input; NaN payloads aside (our bfloat16 stores make a NaN 0x7FC0)
    m, t = every(dtype)
    nan_ok = lambda x, y: same_bits(x, y, any_nan=True)  # noqa: E731
    nan_ok(mt.erf(m), torch.erf(t))
    nan_ok(mt.erf(m[::3]), torch.erf(t[::3]))
    nan_ok(mt.erf(m.view(256, 256).t()), torch.erf(t.view(256, 256).t()))
    for n in (1, 5, 33, 100):
        nan_ok(mt.erf(m[0x80:0x80 + n]), torch.erf(t[0x80:0x80 + n]))
    for p in (0x0001, 0x0080, 0x8400, 0x3C00, 0x7F80, 0xFC00):
        m0, t0 = one(dtype, p)
        nan_ok(mt.erf(m0), torch.erf(t0))
    nan_ok(mt.erf(m[:0]), torch.erf(t[:0]))
    mi, ti = m.clone(), t.clone()
    mi.erf_()
    ti.erf_()
    nan_ok(mi, ti)


def close_bits(m, t, ulps=1):
    """within ulps units in the last place (of the same sign): the bits of a float16/bfloat16 result"""
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    a, b = bits(m).astype(np.int32), bits(t).astype(np.int32)
    assert (np.abs(a - b) <= ulps).all(), (a[a != b][:5], b[a != b][:5])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [1, 2])
def test_vector_norm(dtype, p):
    # p = 1 and 2 read float16/bfloat16 rows in place, summed in double (PyTorch's float sums agree to an ulp,
    # most often to the bit); strided rows, the other orders, and dtype= take the double row as before
    rng = np.random.default_rng(p)
    a = rng.standard_normal((64, 5000)).astype(np.float32) * 3
    m, t = mt.tensor(a).to(getattr(mt, dtype)), torch.tensor(a).to(getattr(torch, dtype))
    for f in (lambda L, x: L.linalg.vector_norm(x, p, dim=-1), lambda L, x: L.linalg.vector_norm(x, p),
              lambda L, x: L.linalg.vector_norm(x, p, dim=0, keepdim=True), lambda L, x: L.linalg.vector_norm(x[:, ::3], p, dim=-1),
              lambda L, x: L.linalg.vector_norm(x[:, 7:4100], p, dim=-1), lambda L, x: L.linalg.vector_norm(x[:0], p, dim=-1),
              lambda L, x: L.linalg.vector_norm(x[:, :0], p, dim=-1), lambda L, x: L.linalg.vector_norm(x[3, 4], p),
              lambda L, x: L.norm(x, p, dim=-1), lambda L, x: L.norm_except_dim(x, 2, 0)):
        close_bits(f(mt, m), f(torch, t))
    r = mt.linalg.vector_norm(m, p, dim=-1, dtype=mt.float32)
    np.testing.assert_allclose(r.numpy(), torch.linalg.vector_norm(t, p, dim=-1, dtype=torch.float32).numpy(), rtol=1e-5)
    m, t = every(dtype)
    keep = torch.isfinite(t) & (t.float().abs() < 2.0)  # no overflow
    mk, tk = m[mt.tensor(keep.numpy())], t[keep]
    close_bits(mt.linalg.vector_norm(mk, p), torch.linalg.vector_norm(tk, p))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans(op, dtype):
    # float accumulation rounded to the dtype at each store, as PyTorch's: its bits; every pattern as rows of
    # 256 (NaN payloads aside), random rows along either dim, strided, reversed by flip, empty, 0-dim
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 700)) * (0.05 if op == "cumprod" else 1) + (1 if op == "cumprod" else 0)).astype(np.float32)
    m, t = mt.tensor(a).to(getattr(mt, dtype)), torch.tensor(a).to(getattr(torch, dtype))
    for f in (lambda L, x: getattr(L, op)(x, -1), lambda L, x: getattr(L, op)(x, 0),
              lambda L, x: getattr(L, op)(x[:, ::3], 1), lambda L, x: getattr(L, op)(x.t(), 1),
              lambda L, x: getattr(L, op)(x.flip(1), 1), lambda L, x: getattr(L, op)(x[:0], 1),
              lambda L, x: getattr(L, op)(x[3, 4], 0), lambda L, x: getattr(L, op)(x, 1, dtype=L.float32)):
        same_bits(f(mt, m), f(torch, t)) if f(mt, m).dtype != mt.float32 else \
            np.testing.assert_array_equal(f(mt, m).numpy(), f(torch, t).numpy())
    m, t = every(dtype)
    same_bits(getattr(mt, op)(m.view(256, 256), 1), getattr(torch, op)(t.view(256, 256), 1), any_nan=True)
