"""Shared helpers for the differential tests (mindtorch_v2 against live PyTorch).

Nothing here imports torch: the test modules do (importorskip) and pass it in.
"""
import numpy as np

import mindtorch_v2 as mt
from mindtorch_v2._C import lib

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def np_data(shape, dtype, seed=0):
    """Deterministic distinct-ish values for a dtype name, as a float64/int64/bool numpy array."""
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        a = rng.random(n) > 0.5
    elif dtype == "uint8":
        a = np.arange(n) % 251
    elif "int" in dtype:
        a = (np.arange(n) % 200) - 100
    else:
        a = np.arange(n) * 1.25 - n / 3  # exact in every float dtype for small n
    return a.reshape(shape)


def pair(torch, shape, dtype="float32", seed=0):
    """The same contiguous tensor in both libraries."""
    a = np_data(shape, dtype, seed)
    if not shape:
        return mt.tensor(a.item(), dtype=getattr(mt, dtype)), torch.tensor(a.item(), dtype=getattr(torch, dtype))
    data = a.reshape(-1).tolist()
    return (mt.tensor(data, dtype=getattr(mt, dtype)).reshape(shape),
            torch.tensor(data, dtype=getattr(torch, dtype)).reshape(shape))


def values(x):
    """Exact values as a numpy array (float16/bfloat16 widened losslessly); None for meta tensors."""
    if x.device.type == "meta":
        return None
    if str(x.dtype) in ("torch.bfloat16", "torch.float16"):
        x = x.float()
    return np.array(x.tolist())


def shares(m, mbase, t, tbase):
    """(mindtorch shares storage with its base, torch shares storage with its base)."""
    return (bool(lib.mt_tensor_same_storage(m._h, mbase._h)),
            t.untyped_storage()._cdata == tbase.untyped_storage()._cdata)


def check(m, t, *, base=None, layout=True):
    """Same dtype, shape, values; with layout also strides (layout="nonunit": of the dims of size > 1)
    and storage offset.
    base=(mbase, tbase): also the same answer to "shares storage with the base"."""
    assert isinstance(m, mt.Tensor), type(m)
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    assert tuple(m.shape) == tuple(t.shape), (tuple(m.shape), tuple(t.shape))
    assert m.device.type == t.device.type
    if layout == "nonunit":  # strides of size-1 dims are arbitrary: compare the others
        assert [s for s, n in zip(m.stride(), m.shape) if n != 1] == \
            [s for s, n in zip(t.stride(), t.shape) if n != 1], (m.stride(), t.stride(), tuple(t.shape))
    elif layout:
        assert m.stride() == t.stride(), (m.stride(), t.stride(), tuple(t.shape))
    if layout:
        assert m.storage_offset() == t.storage_offset(), (m.storage_offset(), t.storage_offset())
        assert m.is_contiguous() == t.is_contiguous()
    vm, vt = values(m), values(t)
    if vt is not None:
        np.testing.assert_array_equal(vm, vt)
    if base is not None:
        ms, ts = shares(m, base[0], t, base[1])
        assert ms == ts, f"shares storage: mindtorch {ms}, torch {ts}"


def _builtin(exc_type):
    for k in exc_type.__mro__:
        if k.__module__ == "builtins":
            return k
    return Exception


def outcome(fn):
    """(result, None) or (None, exception)."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return None, e


def outcome_and_warnings(fn):
    """fn()'s result, or its exception's (type name, text), and the warnings it raised as (category, text)."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            r = (type(e).__name__, str(e))
    return r, [(x.category.__name__, str(x.message)) for x in w]


def same(fm, ft, cmp=check, message=True):
    """Run both; if torch raises, mindtorch must raise the same builtin type (and text);
    otherwise cmp(result_m, result_t). Returns (rm, rt) (None, None on errors)."""
    rt, et = outcome(ft)
    rm, em = outcome(fm)
    if et is not None:
        assert em is not None, f"torch raised {type(et).__name__}: {et}; mindtorch returned {type(rm).__name__}"
        assert isinstance(em, _builtin(type(et))), f"torch {type(et).__name__}: {et} | mindtorch {type(em).__name__}: {em}"
        if message:  # (some PyTorch texts carry a C++ backtrace: not part of the message)
            assert str(em) == str(et).split("\nException raised from")[0], f"\n torch:     {et}\n mindtorch: {em}"
        return None, None
    if em is not None:
        raise AssertionError(f"torch returned, mindtorch raised {type(em).__name__}: {em}") from em
    cmp(rm, rt)
    return rm, rt


def check_seq(ms, ts, base=None):
    assert type(ms) is tuple and len(ms) == len(ts), (type(ms), len(ms), len(ts))
    for m, t in zip(ms, ts):
        check(m, t, base=base)


def build(torch, layout, dtype="float32"):
    """A (possibly non-contiguous) tensor in both libraries from a layout drawn by `layouts`:
    a contiguous base, permuted, then sliced with steps and a start offset. Returns (m, t, mbase, tbase)."""
    shape, perm, steps, off = layout
    nd = len(shape)
    big = [s * st + off for s, st in zip(shape, steps)]
    base_shape = [0] * nd
    for i, p in enumerate(perm):
        base_shape[p] = big[i]
    mb, tb = pair(torch, base_shape, dtype)
    m, t = mb.permute(perm), tb.permute(perm)
    idx = tuple(slice(off, off + s * st, st) for s, st in zip(shape, steps))
    m, t = m[idx], t[idx]
    check(m, t, base=(mb, tb))
    return m, t, mb, tb
