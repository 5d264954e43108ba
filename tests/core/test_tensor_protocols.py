"""Tensor metadata and Python protocols against live PyTorch: Size, dtype, strides, item/tolist,
numpy() zero-copy, len/iter/bool/float/int/index, _version, finfo/iinfo, the default dtype, and
float16/bfloat16 conversions bit for bit (round to nearest even, subnormals, NaN, inf, overflow)."""
import math
import operator

import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import DTYPES, check, pair, same

torch = pytest.importorskip("torch")

LAYOUTS = [lambda x: x, lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[1:], lambda x: x.unsqueeze(1),
           lambda x: x.unsqueeze(0).expand(2, 3, 4), lambda x: x[:, :0], lambda x: x[1], lambda x: x[1, 2],
           lambda x: x.t()[1:, None], lambda x: x[:1, :1], lambda x: x.reshape(2, 6)[:, 1::3]]


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_metadata(layout, dtype):
    m, t = pair(torch, [3, 4], dtype)
    m, t = LAYOUTS[layout](m), LAYOUTS[layout](t)
    assert repr(m.shape) == repr(t.shape) and str(m.size()) == str(t.size())
    assert type(m.shape).__name__ == "Size" and m.shape == t.shape and isinstance(m.shape, tuple)
    assert repr(m.dtype) == repr(t.dtype) and str(m.dtype) == str(t.dtype)
    assert m.stride() == t.stride() and m.storage_offset() == t.storage_offset()
    assert m.is_contiguous() == t.is_contiguous()
    assert m.element_size() == t.element_size() and m.itemsize == t.itemsize and m.nbytes == t.nbytes
    assert m.numel() == t.numel() == m.nelement() and mt.numel(m) == t.numel()
    assert m.dim() == t.dim() == m.ndim == m.ndimension()
    assert m.is_floating_point() == t.is_floating_point() and m.is_signed() == t.is_signed()
    assert m.device == mt.device("cpu") and str(m.device) == str(t.device) and repr(m.device) == repr(t.device)
    for d in range(-m.dim() - 1, m.dim() + 1):
        same(lambda: m.size(d), lambda: t.size(d), cmp=lambda a, b: a == b or pytest.fail(f"{a} != {b}"))
        same(lambda: m.stride(d), lambda: t.stride(d), cmp=lambda a, b: a == b or pytest.fail(f"{a} != {b}"))
    same(lambda: m.tolist(), lambda: t.tolist(), cmp=_same_list)


def test_to_dense_of_a_strided_tensor():
    # sentence-transformers' cos_sim ends in .to_dense(): on a strided tensor it is the tensor itself
    m, t = pair(torch, [2, 3], "float32")
    m.requires_grad_(), t.requires_grad_()
    assert m.to_dense() is m and t.to_dense() is t and m.to_dense(masked_grad=True) is m
    assert m.to_dense(mt.float32) is m and t.to_dense(torch.float32) is t
    check(m.to_dense(mt.float64), t.to_dense(torch.float64))
    assert type(m.to_dense(mt.float64).grad_fn).__name__ == type(t.to_dense(torch.float64).grad_fn).__name__
    with pytest.raises(TypeError, match=r"^to_dense\(\): argument 'dtype' \(position 1\) must be torch.dtype, not int$"):
        m.to_dense(1)
    with pytest.raises(TypeError, match=r"^to_dense\(\): argument 'dtype' \(position 1\) must be torch.dtype, not int$"):
        t.to_dense(1)


def _same_list(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_list(x, y)
    else:
        assert a == b or (a != a and b != b), (a, b)


def test_data_ptr_tracks_offsets():
    m, t = pair(torch, [3, 4], "float64")
    for f in LAYOUTS:
        a, b = f(m), f(t)
        if b.numel() == 0:  # empty tensors report no data
            assert a.data_ptr() == b.data_ptr() == 0
        else:
            assert a.data_ptr() - m.data_ptr() == b.data_ptr() - t.data_ptr()


def test_size_object():
    for s in ([], [2], [2, 3], [0, 1, 5]):
        a, b = mt.Size(s), torch.Size(s)
        assert repr(a) == repr(b) and str(a) == str(b)
        assert a.numel() == b.numel() and a == b and hash(a) == hash(b) and a == tuple(s)
        assert repr(a[1:]) == repr(b[1:]) and repr(a + (4,)) == repr(b + (4,))
    assert repr(mt.zeros(2, 3).shape[0]) == "2"


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_objects(dtype):
    a, b = getattr(mt, dtype), getattr(torch, dtype)
    assert repr(a) == repr(b) == str(a) == f"torch.{dtype}"
    assert (a.is_floating_point, a.is_signed, a.itemsize, a.is_complex) == \
        (b.is_floating_point, b.is_signed, b.itemsize, b.is_complex)
    for alias in ("half", "float", "double", "short", "int", "long"):
        assert repr(getattr(mt, alias)) == repr(getattr(torch, alias))


VALUES = [0, 1, -1, 2.5, -0.0, 1e-3, 65504, 1e38, float("inf"), float("nan"), True, 300, -129]


@pytest.mark.parametrize("dtype", DTYPES)
def test_item_and_scalar_protocols(dtype):
    for v in VALUES:
        if "int" in dtype and isinstance(v, float) and not math.isfinite(v):
            continue
        m = mt.tensor([v]).to(getattr(mt, dtype))
        t = torch.tensor([v]).to(getattr(torch, dtype))
        for fn in (lambda x: x.item(), lambda x: x[0].item(), lambda x: float(x), lambda x: int(x) if
                   not x.is_floating_point() or math.isfinite(x.item()) else 0, lambda x: bool(x),
                   lambda x: x.__index__(), lambda x: operator.index(x[0]), lambda x: complex(x), lambda x: x.tolist(),
                   lambda x: x[0].tolist(), lambda x: format(x[0], ".3f") if x.is_floating_point() else format(x[0])):
            same(lambda: fn(m), lambda: fn(t), cmp=_same_list)
    m, t = pair(torch, [2], dtype)
    e, te = mt.zeros(0, dtype=getattr(mt, dtype)), torch.zeros(0, dtype=getattr(torch, dtype))
    z, tz = mt.zeros((), dtype=getattr(mt, dtype)), torch.zeros((), dtype=getattr(torch, dtype))
    for fn in (lambda x, e, z: x.item(), lambda x, e, z: float(x), lambda x, e, z: int(x), lambda x, e, z: bool(x),
               lambda x, e, z: bool(e), lambda x, e, z: x.__index__(), lambda x, e, z: e.item(),
               lambda x, e, z: float(e), lambda x, e, z: len(z), lambda x, e, z: iter(z), lambda x, e, z: complex(x),
               lambda x, e, z: len(x), lambda x, e, z: len(e), lambda x, e, z: z.tolist(), lambda x, e, z: e.tolist()):
        same(lambda: fn(m, e, z), lambda: fn(t, te, tz), cmp=_same_list)


def test_iteration_and_len():
    m, t = pair(torch, [3, 2])
    assert len(m) == len(t) == 3
    rows_m, rows_t = list(m), list(t)
    assert len(rows_m) == len(rows_t)
    for a, b in zip(rows_m, rows_t):
        check(a, b, base=(m, t))
    assert [x.item() for x in m[:, 0]] == [x.item() for x in t[:, 0]]


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bfloat16"])
def test_numpy_zero_copy(dtype):
    m, t = pair(torch, [3, 4], dtype)
    for f in LAYOUTS:
        a, b = f(m).numpy(), f(t).numpy()
        assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
        np.testing.assert_array_equal(a, b)
        assert a.__array_interface__["data"][0] == f(m).data_ptr() or not a.size
    a = m.numpy()
    a[0, 0] = 1
    assert m[0, 0].item() == a[0, 0]
    np.testing.assert_array_equal(np.asarray(m), a)


def test_numpy_errors():
    m, t = pair(torch, [2], "bfloat16")
    same(lambda: m.numpy(), lambda: t.numpy())
    m, t = mt.empty(2, device="meta"), torch.empty(2, device="meta")
    same(lambda: m.numpy(), lambda: t.numpy())


def test_version_counter():
    m, t = pair(torch, [3, 4])
    mv, tv = m[1], t[1]
    ops = [lambda x, L: x.fill_(1), lambda x, L: x.zero_(), lambda x, L: x.copy_(L.ones(3, 4)),
           lambda x, L: x.__setitem__(0, 2.0), lambda x, L: x.__setitem__((slice(None), [0, 1]), 3.0),
           lambda x, L: x.t_(), lambda x, L: x.t_(), lambda x, L: x.unsqueeze_(0), lambda x, L: x.squeeze_(0),
           lambda x, L: x[0].fill_(5), lambda x, L: x.clone().fill_(1), lambda x, L: x.view(-1),
           lambda x, L: x.__setitem__(False, 1.0), lambda x, L: x.__setitem__(x > 100, 1.0)]
    for op in ops:
        op(m, mt)
        op(t, torch)
        assert m._version == t._version and mv._version == tv._version, op
    check(m, t)


def test_finfo_iinfo():
    for d in ("float16", "bfloat16", "float32", "float64"):
        a, b = mt.finfo(getattr(mt, d)), torch.finfo(getattr(torch, d))
        for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(a, f) == getattr(b, f), (d, f)
        assert repr(a) == repr(b)
    assert repr(mt.finfo()) == repr(torch.finfo())
    for d in ("uint8", "int8", "int16", "int32", "int64"):
        a, b = mt.iinfo(getattr(mt, d)), torch.iinfo(getattr(torch, d))
        assert (a.bits, a.min, a.max, a.dtype) == (b.bits, b.min, b.max, b.dtype) and repr(a) == repr(b)
    for fn in (lambda L: L.finfo(L.int32), lambda L: L.iinfo(L.float32), lambda L: L.iinfo(L.bool),
               lambda L: L.finfo(L.bool)):
        same(lambda: fn(mt), lambda: fn(torch), cmp=lambda a, b: None)


@pytest.mark.parametrize("d", ["float16", "bfloat16", "float64", "float32"])
def test_default_dtype(d):
    old = mt.get_default_dtype()
    try:
        mt.set_default_dtype(getattr(mt, d))
        torch.set_default_dtype(getattr(torch, d))
        assert repr(mt.get_default_dtype()) == repr(torch.get_default_dtype())
        for fn in (lambda L: L.tensor(1.5), lambda L: L.tensor([1, 2.0]), lambda L: L.zeros(2), lambda L: L.ones(()),
                   lambda L: L.empty(0), lambda L: L.arange(0.5, 3), lambda L: L.arange(3), lambda L: L.full((2,), 0.1),
                   lambda L: L.eye(2), lambda L: L.tensor([]), lambda L: L.linspace(0, 1, 3)):
            a, b = fn(mt), fn(torch)
            assert repr(a.dtype) == repr(b.dtype)
            np.testing.assert_array_equal(np.array(a.float().tolist()), np.array(b.float().tolist()))
        assert repr(mt.finfo()) == repr(torch.finfo())
    finally:
        mt.set_default_dtype(old)
        torch.set_default_dtype(torch.float32)
    assert mt.get_default_dtype() is mt.float32
    for bad in ("int32", "bool", "int64"):
        same(lambda: mt.set_default_dtype(getattr(mt, bad)), lambda: torch.set_default_dtype(getattr(torch, bad)),
             cmp=lambda a, b: None)
    assert mt.get_default_dtype() is mt.float32


# ---- float16 / bfloat16 conversion bits -----------------------------------------------------

def _bits(x, L):
    """16-bit patterns with every NaN as 1: PyTorch's NaN bits depend on the code path (its vector
    paths keep payload and sign bits or give 0xFFFF, its scalar path the canonical 0x7FC0/0x7E00)."""
    b = np.array(x.view(L.int16).tolist(), dtype=np.int64) & 0xFFFF
    exp = 0x7C00 if x.dtype == L.float16 else 0x7F80
    nan = ((b & exp) == exp) & ((b & (0x3FF if x.dtype == L.float16 else 0x7F)) != 0)
    return np.where(nan, 1, b)


def _special_float32_bits():
    specials = [0, 1, -1, 0.5, 1.5, 2.5, 65504, 65505, 65519, 65520, 1e5, -1e5, 6.1e-5, 6e-8, 5.96e-8, 2.98e-8,
                2.9e-8, 1e-10, 3.4e38, -3.4e38, 1.17549435e-38, 1e-45, float("inf"), float("-inf"), float("nan"),
                -0.0, 1 + 2 ** -10, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -8, 1 + 2 ** -9, 1 + 3 * 2 ** -9,
                256.5, 257.5, 0.1, 1 / 3]
    bits = list(np.array(specials, dtype=np.float32).view(np.uint32))
    rng = np.random.default_rng(0)
    bits += list(rng.integers(0, 2 ** 32, 200000, dtype=np.uint64).astype(np.uint32))
    # every float16/bfloat16 rounding boundary: exact ties, one ulp either side, in all binades
    h = np.arange(0, 2 ** 16, dtype=np.uint32)
    hf = np.array(h, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    for base in (hf, h << 16):
        for delta in (0, 1, 0x0FFF, 0x1000, 0x1001, 0x7FFF, 0x8000, 0x8001):
            bits += list((base.astype(np.uint64) + delta).astype(np.uint32))
    return np.array(bits, dtype=np.uint32)


def test_float32_to_half_and_bfloat16_bits():
    f = _special_float32_bits().view(np.float32)
    m, t = mt.from_numpy(f), torch.from_numpy(f)
    for d in ("float16", "bfloat16"):
        np.testing.assert_array_equal(_bits(m.to(getattr(mt, d)), mt), _bits(t.to(getattr(torch, d)), torch))


def test_float64_to_half_and_bfloat16_bits():
    rng = np.random.default_rng(1)
    f = np.concatenate([_special_float32_bits()[:300000].view(np.float32).astype(np.float64),
                        rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 9, 20000),
                        np.array([65519.999999, 65520.0, 1 + 2 ** -11 + 2 ** -40, 2.0 ** -25 + 2 ** -60])])
    m, t = mt.from_numpy(f), torch.from_numpy(f)
    for d in ("float16", "bfloat16", "float32"):
        a, b = m.to(getattr(mt, d)), t.to(getattr(torch, d))
        if d == "float32":
            np.testing.assert_array_equal(np.array(a.view(mt.int32).tolist()), np.array(b.view(torch.int32).tolist()))
        else:
            np.testing.assert_array_equal(_bits(a, mt), _bits(b, torch))


def test_half_and_bfloat16_to_float32_all_patterns():
    h = np.arange(0, 2 ** 16, dtype=np.uint32).astype(np.int32) - 2 ** 15
    for d in ("float16", "bfloat16"):
        m = mt.tensor(h.tolist(), dtype=mt.int16).view(getattr(mt, d))
        t = torch.tensor(h.tolist(), dtype=torch.int16).view(getattr(torch, d))
        for to in ("float32", "float64"):
            a = np.array(m.to(getattr(mt, to)).tolist())
            b = np.array(t.to(getattr(torch, to)).tolist())
            np.testing.assert_array_equal(a, b)
            a = np.array(m.to(getattr(mt, to)).view(mt.int32 if to == "float32" else mt.int64).tolist())
            b = np.array(t.to(getattr(torch, to)).view(torch.int32 if to == "float32" else torch.int64).tolist())
            np.testing.assert_array_equal(a, b)  # NaN payloads and signs too
        other = "bfloat16" if d == "float16" else "float16"
        np.testing.assert_array_equal(_bits(m.to(getattr(mt, other)), mt), _bits(t.to(getattr(torch, other)), torch))
