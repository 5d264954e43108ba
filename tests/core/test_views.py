"""View ops against live PyTorch: values, dtype, shape, strides, storage offset, storage sharing,
writes through views, _version bumps, and exception type + text for bad arguments."""
import os

import numpy as np
import math
import warnings

import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st

import mindtorch_v2 as mt
from mtdiff import DTYPES, build, check, check_seq, pair, same, shares

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=int(os.environ.get("MT_EXAMPLES", 150)), deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def layouts(draw, max_dims=4, max_side=4, min_dims=0):
    """shape, permutation, per-dim slice steps and a start offset (non-contiguous inputs)."""
    shape = draw(st.lists(st.integers(0, max_side), min_size=min_dims, max_size=max_dims))
    nd = len(shape)
    perm = draw(st.permutations(range(nd)))
    steps = draw(st.lists(st.integers(1, 2), min_size=nd, max_size=nd))
    off = draw(st.integers(0, 1))
    return shape, list(perm), steps, off


def _factor(draw, n):
    """A random list of sizes whose product is n (n > 0), with some 1s."""
    out = []
    while n > 1:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = draw(st.sampled_from(divs))
        out.append(d)
        n //= d
    for _ in range(draw(st.integers(0, 2))):
        out.insert(draw(st.integers(0, len(out))), 1)
    return out


@st.composite
def target_shapes(draw, shape):
    """Shapes to view/reshape into: regroupings of the dims (often viewable), random
    factorisations, -1 inference, and a few invalid ones."""
    n = int(np.prod(shape)) if shape else 1
    kind = draw(st.sampled_from(["merge", "split", "factor", "zero", "bad"]))
    s = list(shape)
    if kind == "merge" and len(s) >= 2:
        i = draw(st.integers(0, len(s) - 2))
        s[i:i + 2] = [s[i] * s[i + 1]]
    elif kind == "split" and s:
        i = draw(st.integers(0, len(s) - 1))
        if s[i] > 1:
            d = draw(st.sampled_from([d for d in range(1, s[i] + 1) if s[i] % d == 0]))
            s[i:i + 1] = [d, s[i] // d]
        else:
            s.insert(i, 1)
    elif kind == "factor":
        s = _factor(draw, n) if n > 0 else draw(st.sampled_from([[0], [0, 3], [2, 0], [3, 0, 1]]))
    elif kind == "zero":
        s = draw(st.sampled_from([[0], [-1, 0], [0, -1], [2, -1, 0]]))
    else:
        s = draw(st.sampled_from([[n + 1], [-1, -1], [-2, n], [n, -3]]))
    if s and kind != "bad" and draw(st.booleans()):
        s[draw(st.integers(0, len(s) - 1))] = -1
    return s


def _same_view(fm, ft, mb, tb):
    """Both libraries agree, including whether the result is a view of the base."""
    return same(fm, ft, cmp=lambda m, t: check(m, t, base=(mb, tb)))


def _write_through(m, t, mb, tb):
    """Writing into a view writes into the base (and bumps the shared _version) the same way."""
    if torch._debug_has_internal_overlap(t) != 0 or t.numel() == 0:
        return
    vm, vt = mb._version, tb._version
    val = True if t.dtype is torch.bool else -7
    m.fill_(val)
    t.fill_(val)
    check(mb, tb)
    assert mb._version - vm == tb._version - vt


@SETTINGS
@given(layout=layouts(), data=st.data())
def test_view_and_reshape(layout, data):
    m, t, mb, tb = build(torch, layout)
    target = data.draw(target_shapes(layout[0]))
    rm, rt = _same_view(lambda: m.view(target), lambda: t.view(target), mb, tb)
    if rt is not None:
        _write_through(rm, rt, mb, tb)
    # reshape: a view when the strides allow it, otherwise a correct contiguous copy
    _same_view(lambda: m.reshape(target), lambda: t.reshape(target), mb, tb)
    _same_view(lambda: mt.reshape(m, tuple(target)), lambda: torch.reshape(t, tuple(target)), mb, tb)


def _dims(draw, nd, lo_extra=1, hi_extra=1):
    n = max(nd, 1)
    return draw(st.integers(-n - lo_extra, n - 1 + hi_extra))


@st.composite
def view_ops(draw, nd, shape):
    """(name, mindtorch call, torch call) for one view op with drawn (sometimes invalid) arguments."""
    n = max(nd, 1)
    dim = lambda: draw(st.integers(-n - 1, n))  # noqa: E731  (one out of range each side)
    name = draw(st.sampled_from([
        "transpose", "permute", "t", "T", "mT", "expand", "expand_as", "squeeze", "squeeze_dim", "squeeze_tuple",
        "unsqueeze", "flatten", "unflatten", "narrow", "select", "unbind", "split", "split_sections", "chunk",
        "unfold", "movedim", "movedim_seq", "as_strided", "contiguous", "swapaxes", "view_as", "reshape_as",
        "narrow_tensor_start", "broadcast_to", "tensor_split"]))
    if name == "transpose":
        a, b = dim(), dim()
        return name, lambda x: x.transpose(a, b), lambda x: x.transpose(a, b)
    if name == "swapaxes":
        a, b = dim(), dim()
        return name, lambda x: mt.swapaxes(x, a, b), lambda x: torch.swapaxes(x, a, b)
    if name == "permute":
        perm = list(draw(st.permutations(range(nd))))
        perm = [p - nd if draw(st.booleans()) else p for p in perm]
        if nd and draw(st.integers(0, 5)) == 0:
            perm[0] = perm[-1]  # duplicate (or out of range) dims
        return name, lambda x: x.permute(*perm), lambda x: x.permute(*perm)
    if name in ("t", "T", "mT"):
        if name == "t":
            return name, lambda x: x.t(), lambda x: x.t()
        return name, lambda x: getattr(x, name), lambda x: getattr(x, name)
    if name in ("expand", "expand_as", "broadcast_to"):
        lead = draw(st.lists(st.integers(0, 3), max_size=2))
        sizes = lead + [draw(st.sampled_from([s, 3, -1])) if s == 1 else draw(st.sampled_from([s, s, -1, s + 1]))
                        for s in shape]
        if name == "expand":
            return name, lambda x: x.expand(*sizes), lambda x: x.expand(*sizes)
        if name == "broadcast_to":
            return name, lambda x: mt.broadcast_to(x, sizes), lambda x: torch.broadcast_to(x, sizes)
        sizes = [abs(s) for s in sizes]
        return (name, lambda x: x.expand_as(mt.empty(sizes)), lambda x: x.expand_as(torch.empty(sizes)))
    if name == "squeeze":
        return name, lambda x: x.squeeze(), lambda x: x.squeeze()
    if name == "squeeze_dim":
        d = dim()
        return name, lambda x: x.squeeze(d), lambda x: x.squeeze(d)
    if name == "squeeze_tuple":
        ds = tuple(draw(st.lists(st.integers(-n - 1, n), max_size=3)))
        return name, lambda x: x.squeeze(ds), lambda x: x.squeeze(ds)
    if name == "unsqueeze":
        d = draw(st.integers(-nd - 2, nd + 1))
        return name, lambda x: x.unsqueeze(d), lambda x: x.unsqueeze(d)
    if name == "flatten":
        a, b = dim(), dim()
        return name, lambda x: x.flatten(a, b), lambda x: x.flatten(a, b)
    if name == "unflatten":
        d = dim()
        size = shape[d] if -nd <= d < nd else 4
        sizes = draw(st.sampled_from([(size,), (1, size), (size, 1), (-1,), (2, -1), (-1, 2), (), (size, 2)]))
        return name, lambda x: x.unflatten(d, sizes), lambda x: x.unflatten(d, sizes)
    if name in ("narrow", "narrow_tensor_start"):
        d = dim()
        start, length = draw(st.integers(-5, 5)), draw(st.integers(-1, 5))
        if name == "narrow_tensor_start":
            return (name, lambda x: x.narrow(d, mt.tensor(start), length),
                    lambda x: x.narrow(d, torch.tensor(start), length))
        return name, lambda x: x.narrow(d, start, length), lambda x: x.narrow(d, start, length)
    if name == "select":
        d, i = dim(), draw(st.integers(-5, 5))
        return name, lambda x: x.select(d, i), lambda x: x.select(d, i)
    if name == "unbind":
        d = dim()
        return name, lambda x: x.unbind(d), lambda x: x.unbind(d)
    if name == "split":
        d, size = dim(), draw(st.integers(-1, 5))
        return name, lambda x: x.split(size, d), lambda x: x.split(size, d)
    if name == "split_sections":
        d = dim()
        size = shape[d] if -nd <= d < nd else 3
        secs = draw(st.sampled_from([[size], [0, size], [size, 0], [1, size - 1], [size + 1], [-1, size + 1],
                                     [size // 2, size - size // 2]]))
        return name, lambda x: x.split(secs, d), lambda x: x.split(secs, d)
    if name == "chunk":
        d, c = dim(), draw(st.integers(-1, 6))
        return name, lambda x: x.chunk(c, d), lambda x: x.chunk(c, d)
    if name == "tensor_split":
        d, c = dim(), draw(st.one_of(st.integers(1, 5), st.lists(st.integers(0, 5), max_size=3)))
        return name, lambda x: x.tensor_split(c, d), lambda x: x.tensor_split(c, d)
    if name == "unfold":
        d, size, step = dim(), draw(st.integers(-1, 5)), draw(st.integers(-1, 3))
        return name, lambda x: x.unfold(d, size, step), lambda x: x.unfold(d, size, step)
    if name == "movedim":
        a, b = dim(), dim()
        return name, lambda x: x.movedim(a, b), lambda x: x.movedim(a, b)
    if name == "movedim_seq":
        k = draw(st.integers(0, nd))
        src = list(draw(st.permutations(range(nd))))[:k]
        dst = list(draw(st.permutations(range(nd))))[:k]
        if k and draw(st.integers(0, 4)) == 0:
            dst[0] = dst[-1] if k > 1 else nd + 2
        return name, lambda x: mt.movedim(x, src, dst), lambda x: torch.movedim(x, src, dst)
    if name == "as_strided":
        k = draw(st.integers(0, 3))
        size = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
        stride = draw(st.lists(st.integers(0, 4), min_size=k, max_size=k))
        off = draw(st.one_of(st.none(), st.integers(0, 3)))
        return (name, lambda x: x.as_strided(size, stride, off), lambda x: x.as_strided(size, stride, off))
    if name in ("view_as", "reshape_as"):
        other = [int(np.prod(shape))] if shape else []
        return (name, lambda x: getattr(x, name)(mt.empty(other)), lambda x: getattr(x, name)(torch.empty(other)))
    return name, lambda x: x.contiguous(), lambda x: x.contiguous()


@SETTINGS
@given(layout=layouts(), data=st.data())
def test_view_ops(layout, data):
    m, t, mb, tb = build(torch, layout)
    name, fm, ft = data.draw(view_ops(len(layout[0]), layout[0]))
    note(f"{name} {dict(zip(fm.__code__.co_freevars, (c.cell_contents for c in fm.__closure__ or ())))}")
    rt_seq = isinstance(outcome_type(ft, t), tuple)
    cmp = (lambda a, b: check_seq(a, b, base=(mb, tb))) if rt_seq else (lambda a, b: check(a, b, base=(mb, tb)))
    rm, rt = same(lambda: fm(m), lambda: ft(t), cmp=cmp)
    if rt is None or name == "contiguous":
        return
    for a, b in (zip(rm, rt) if rt_seq else [(rm, rt)]):
        if shares(a, mb, b, tb)[1]:
            _write_through(a, b, mb, tb)


def outcome_type(f, x):
    try:
        return f(x)
    except Exception:  # noqa: BLE001
        return None


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_keep_dtype(dtype):
    m, t = pair(torch, [2, 3, 4], dtype)
    for f in (lambda x: x.transpose(0, 2), lambda x: x.view(4, 6), lambda x: x[:, 1:, ::2],
              lambda x: x.unsqueeze(1).expand(2, 5, 3, 4), lambda x: x.permute(2, 0, 1).reshape(-1),
              lambda x: x.unfold(2, 2, 1)):
        check(f(m), f(t), base=(m, t))


# ---- view(dtype) -----------------------------------------------------------------------------

@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_view_dtype(src, dst):
    for shape in ([], [4], [3, 8], [0, 4], [2, 8, 2]):
        m, t = pair(torch, shape, src)
        same(lambda: m.view(getattr(mt, dst)), lambda: t.view(getattr(torch, dst)),
             cmp=lambda a, b: check(a, b, base=(m, t)))
        if len(shape) >= 2:  # non-contiguous and offset inputs hit the divisibility errors
            for sub in (lambda x: x.t(), lambda x: x[:, 1:], lambda x: x[1:], lambda x: x[:, ::2]):
                same(lambda: sub(m).view(getattr(mt, dst)), lambda: sub(t).view(getattr(torch, dst)),
                     cmp=lambda a, b: check(a, b, base=(m, t)))


def test_view_dtype_bits():
    m, t = pair(torch, [2, 4], "float32")
    check(m.view(mt.int32), t.view(torch.int32))
    check(m.view(mt.uint8), t.view(torch.uint8))
    check(m.view(mt.int16).view(mt.float32), t.view(torch.int16).view(torch.float32))
    v = m.view(mt.int32)
    v[0, 0] = 0x3F800000  # writes through: 1.0f
    assert m[0, 0].item() == 1.0


# ---- in-place metadata ops ------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    ("t_", ()), ("transpose_", (0, 1)), ("transpose_", (-1, 0)), ("squeeze_", ()), ("squeeze_", (1,)),
    ("squeeze_", (0,)), ("unsqueeze_", (0,)), ("unsqueeze_", (-1,)), ("unsqueeze_", (5,)), ("transpose_", (0, 3)),
    ("t_", "3d"), ("as_strided_", ([2, 2], [1, 2], 1))])
def test_inplace_view_ops(op):
    name, args = op
    shape = [2, 1, 3] if args == "3d" else [3, 1]
    args = () if args == "3d" else args
    m, t = pair(torch, shape)
    mid, tv, mv = id(m), t._version, m._version
    rm, rt = same(lambda: getattr(m, name)(*args), lambda: getattr(t, name)(*args))
    if rt is None:
        check(m, t)  # a failed in-place op leaves the tensor unchanged
        return
    assert rm is m and id(m) == mid
    check(m, t)
    assert m._version - mv == t._version - tv


def test_inplace_view_op_keeps_other_views():
    m, t = pair(torch, [2, 3])
    mv, tv = m.view(6), t.view(6)
    m.t_(), t.t_()
    check(mv, tv)
    m[0, 1] = 100.0
    t[0, 1] = 100.0
    check(mv, tv)


# ---- exact errors for bad arguments ------------------------------------------------------------

ERROR_CASES = [
    ("view non-viewable", lambda L, x: x.t().view(-1)),
    ("view two -1", lambda L, x: x.view(-1, -1)),
    ("view -2", lambda L, x: x.view(-2, 6)),
    ("view wrong numel", lambda L, x: x.view(5)),
    ("view 0 -1", lambda L, x: x[:0].view(-1, 0)),
    ("reshape wrong", lambda L, x: x.reshape(7)),
    ("transpose range", lambda L, x: x.transpose(0, 2)),
    ("transpose neg range", lambda L, x: x.transpose(-3, 0)),
    ("permute short", lambda L, x: x.permute(0)),
    ("permute dup", lambda L, x: x.permute(1, 1)),
    ("permute range", lambda L, x: x.permute(0, 2)),
    ("t 3d", lambda L, x: x.unsqueeze(0).t()),
    ("mT 1d", lambda L, x: x[0].mT),
    ("expand fewer", lambda L, x: x.expand(3)),
    ("expand fewer long", lambda L, x: x.long().expand(3)),
    ("expand mismatch", lambda L, x: x.expand(2, 4)),
    ("expand -1 new dim", lambda L, x: x.expand(-1, 2, 3)),
    ("expand negative", lambda L, x: x[:, :1].expand(2, -2)),
    ("squeeze dup", lambda L, x: x.squeeze((0, 0))),
    ("squeeze dup neg", lambda L, x: x.squeeze((1, -1))),
    ("squeeze range", lambda L, x: x.squeeze(3)),
    ("unsqueeze range", lambda L, x: x.unsqueeze(4)),
    ("flatten order", lambda L, x: x.flatten(1, 0)),
    ("flatten range", lambda L, x: x.flatten(0, 5)),
    ("unflatten empty", lambda L, x: x.unflatten(1, ())),
    ("unflatten bad product", lambda L, x: x.unflatten(1, (2, 2))),
    ("unflatten bad -1", lambda L, x: x.unflatten(1, (4, -1))),
    ("unflatten two -1", lambda L, x: x.unflatten(1, (-1, -1))),
    ("unflatten range", lambda L, x: x.unflatten(2, (3,))),
    ("narrow length", lambda L, x: x.narrow(1, 2, 2)),
    ("narrow negative length", lambda L, x: x.narrow(1, 0, -1)),
    ("narrow start", lambda L, x: x.narrow(1, 4, 0)),
    ("narrow neg start", lambda L, x: x.narrow(1, -4, 1)),
    ("narrow 0-dim", lambda L, x: x[0, 0].narrow(0, 0, 1)),
    ("select range", lambda L, x: x.select(1, 3)),
    ("select neg", lambda L, x: x.select(0, -3)),
    ("select 0-dim", lambda L, x: x[0, 0].select(0, 0)),
    ("unbind 0-dim", lambda L, x: x[0, 0].unbind()),
    ("split negative", lambda L, x: x.split(-1)),
    ("split zero", lambda L, x: x.split(0)),
    ("split sections sum", lambda L, x: x.split([1, 1], 1)),
    ("split sections neg", lambda L, x: x.split([4, -1], 1)),
    ("split 0-dim", lambda L, x: x[0, 0].split(1)),
    ("chunk zero", lambda L, x: x.chunk(0)),
    ("chunk negative", lambda L, x: x.chunk(-2)),
    ("chunk 0-dim", lambda L, x: x[0, 0].chunk(1)),
    ("unfold size", lambda L, x: x.unfold(1, 4, 1)),
    ("unfold step", lambda L, x: x.unfold(1, 2, 0)),
    ("unfold neg size", lambda L, x: x.unfold(1, -1, 1)),
    ("movedim len", lambda L, x: L.movedim(x, (0, 1), (0,))),
    ("movedim dup src", lambda L, x: L.movedim(x, (0, 0), (0, 1))),
    ("movedim dup dst", lambda L, x: L.movedim(x, (0, 1), (1, 1))),
    ("movedim range", lambda L, x: L.movedim(x, 2, 0)),
    ("as_strided len", lambda L, x: x.as_strided((2, 3), (1,))),
    ("as_strided oob", lambda L, x: x.as_strided((3, 3), (3, 1))),
    ("as_strided neg stride", lambda L, x: x.as_strided((2,), (-1,))),
    ("as_strided neg offset", lambda L, x: x.as_strided((2,), (1,), -1)),
    ("as_strided neg size", lambda L, x: x.as_strided((-1,), (1,))),
    ("view_dtype 0-dim", lambda L, x: x[0, 0].view(L.int16)),
    ("view_dtype stride", lambda L, x: x.t().view(L.float64)),
    ("view_dtype size", lambda L, x: x.view(L.float64)),
    ("view_dtype offset", lambda L, x: x.reshape(-1)[1:5].view(L.float64)),
    ("view_dtype stride0", lambda L, x: x[:, :2].view(L.float64)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_view_errors(case):
    _, fn = case
    m, t = pair(torch, [2, 3])
    same(lambda: fn(mt, m), lambda: fn(torch, t))


H = 2 ** 62
NUMEL_CASES = [  # PyTorch's numel rule: the product in order, an overflow sticks (a 0 after it does not help)
    lambda L: L.ones(5).expand(2 ** 63 - 1, 2 ** 63 - 1, 0, 5),
    lambda L: L.empty(0).expand(H, H, 0),
    lambda L: L.empty(0, 3).expand(H, 2, 0, 3),  # no overflow before the 0
    lambda L: L.empty(1, 0).broadcast_to((H, H, 0)),
    lambda L: L.empty(0).view(H, H, 0),
    lambda L: L.empty(0).reshape(H, H, 0),
    lambda L: L.empty(0).view(0, H, H),
    lambda L: L.empty(0).view(2 ** 32, 2 ** 32, 0),
    lambda L: L.ones(4).view(H + 1, 4),  # a product wrapping to the numel
    lambda L: L.ones(4).resize_(0, H, H),  # its contiguous strides overflow
    lambda L: L.ones(4).resize_(H, H, 0),
    lambda L: L.ones(4).resize_(2 ** 63 - 1),
    lambda L: L.ones(4)[1:].resize_(2 ** 61 - 1),
    lambda L: L.ones(5).as_strided((2,), (1,), 2 ** 63 - 1),  # the offset's bytes pass int64
    lambda L: L.ones(5).as_strided((0,), (1,), 2 ** 63 - 1),
]


@pytest.mark.parametrize("i", range(len(NUMEL_CASES)))
def test_sizes_past_int64(i):
    fn = NUMEL_CASES[i]
    same(lambda: fn(mt), lambda: fn(torch), cmp=lambda m, t: tuple(m.shape) == tuple(t.shape) or pytest.fail(
        f"{tuple(m.shape)} != {tuple(t.shape)}"))


SIZE_KEYWORD_CASES = [  # sizes by keyword, as PyTorch's parser takes them (diffusers' DiT: x.reshape(shape=...))
    ("reshape shape=", lambda L, x: x.reshape(shape=(3, 2))),
    ("torch.reshape shape=", lambda L, x: L.reshape(x, shape=[6])),
    ("torch.reshape input=", lambda L, x: L.reshape(input=x, shape=(-1,))),
    ("permute dims=", lambda L, x: x.permute(dims=(1, 0))),
    ("torch.permute dims=", lambda L, x: L.permute(x, dims=[1, 0])),
    ("expand size=", lambda L, x: x[:1].expand(size=(4, 3))),
    ("repeat repeats=", lambda L, x: x.repeat(repeats=(2, 1))),
    ("sum_to_size size=", lambda L, x: x.sum_to_size(size=(1, 3))),
    ("resize_ size=", lambda L, x: x.clone().resize_(size=(3, 2))),
    ("reshape none", lambda L, x: x.reshape()),
    ("reshape twice", lambda L, x: x.reshape((2, 3), shape=(2, 3))),
    ("torch.reshape varargs", lambda L, x: L.reshape(x, 3, 2)),
    ("torch.reshape none", lambda L, x: L.reshape(x)),
    ("permute twice", lambda L, x: x.permute(1, dims=0)),
    ("torch.permute varargs", lambda L, x: L.permute(x, 1, 0)),
    ("expand none", lambda L, x: x.expand()),
    ("expand twice", lambda L, x: x.expand((2, 3), size=(2, 3))),
    ("repeat none", lambda L, x: x.repeat()),
    ("sum_to_size none", lambda L, x: x.sum_to_size()),
    ("resize_ none", lambda L, x: x.clone().resize_()),
    ("view none", lambda L, x: x.view()),
]


@pytest.mark.parametrize("case", SIZE_KEYWORD_CASES, ids=[c[0] for c in SIZE_KEYWORD_CASES])
def test_sizes_by_keyword(case):
    _, fn = case
    m, t = pair(torch, [2, 3])
    same(lambda: fn(mt, m), lambda: fn(torch, t))


def test_reshape_of_transposed_gives_right_data():
    m, t = pair(torch, [3, 4, 5])
    for f in (lambda x: x.transpose(0, 2).reshape(-1), lambda x: x.permute(1, 2, 0).reshape(4, 15),
              lambda x: x[:, ::2].reshape(3, -1), lambda x: x.transpose(1, 2).flatten(1)):
        rm, rt = f(m), f(t)
        check(rm, rt, base=(m, t))
        assert rm.is_contiguous()


def test_contiguous_returns_self_when_contiguous():
    m, t = pair(torch, [2, 3])
    assert m.contiguous() is m and t.contiguous() is t
    check(m.t().contiguous(), t.t().contiguous(), base=(m, t))


def test_split_and_chunk_values():
    m, t = pair(torch, [7, 3])
    for args in [(2,), (3, 1), ([1, 2, 4],), ([3, 0], 1), (7,), (10,)]:
        check_seq(m.split(*args), t.split(*args), base=(m, t))
        check_seq(mt.split(m, *args), torch.split(t, *args), base=(m, t))
    for c in (1, 2, 3, 4, 7, 9):
        check_seq(m.chunk(c), t.chunk(c), base=(m, t))
        check_seq(mt.chunk(m, c, 1), torch.chunk(t, c, 1), base=(m, t))
    e, te = pair(torch, [0, 2])
    for c in (1, 3):
        check_seq(e.chunk(c), te.chunk(c))
    check_seq(e.split(2), te.split(2))
    check_seq(e.split(0), te.split(0))


@pytest.mark.parametrize("shape,fmt", [((2, 3, 4, 5), "channels_last"), ((2, 3, 4, 5, 6), "channels_last_3d"),
                                       ((2, 1, 4, 1), "channels_last"), ((0, 3, 4, 5), "channels_last"),
                                       ((2, 3), "channels_last")])
def test_channels_last_contiguity(shape, fmt):
    torch = pytest.importorskip("torch")
    formats = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")
    for L in (mt, torch):
        x = L.arange(float(math.prod(shape))).reshape(shape)
        got = [x.is_contiguous(memory_format=getattr(L, f)) for f in formats]
        try:
            y = x.contiguous(memory_format=getattr(L, fmt))
            got += [y.stride(), y.tolist() == x.tolist()] + [y.is_contiguous(memory_format=getattr(L, f)) for f in formats]
        except RuntimeError as e:
            got.append(str(e))
        if L is mt:
            ours = got
    assert ours == got


# ---- per-call fast paths (session 26): the same answers as the general paths ----------------------


def test_broadcast_tensors_returns_inputs_of_the_common_shape():
    """PyTorch's expand_outplace: a tensor already of the common shape comes back itself (no view, no node)."""
    for lib in (mt, torch):
        x = lib.randn(4, 4, requires_grad=True)
        a, b = lib.broadcast_tensors(x, x)
        assert a is x and b is x
        a, b = lib.broadcast_tensors(x, lib.randn(4))
        assert a is x and b.shape == (4, 4) and b.stride() == (0, 1)
        a, b = lib.broadcast_tensors(lib.randn(3, 1), lib.randn(1, 2))
        assert a.shape == b.shape == (3, 2)
        assert lib.broadcast_tensors() == ()
    with pytest.raises(RuntimeError) as e:
        mt.broadcast_tensors(mt.randn(3), mt.randn(4))
    with pytest.raises(RuntimeError) as te:
        torch.broadcast_tensors(torch.randn(3), torch.randn(4))
    assert str(e.value) == str(te.value)


def test_T_warns_once_off_rank_2():
    """x.T on a rank other than 2 is PyTorch's once-per-process deprecation (a fresh process here: the
    flag is module state), and a permute in every rank"""
    import subprocess
    import sys
    code = ("import warnings, mindtorch_v2 as mt\n"
            "warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    a = mt.randn(2, 3).T; b = mt.randn(2, 3, 4).T; c = mt.randn(5).T\n"
            "print(len(w), tuple(a.shape), tuple(b.shape), b.stride(), tuple(c.shape), 'is deprecated' in str(w[0].message))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "1 (3, 2) (4, 3, 2) (1, 4, 12) (5,) True", out
    for nd in range(5):
        x, tx = pair(torch, [2] * nd)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same(lambda: x.T, lambda: tx.T)
    x = mt.randn(2, 3, requires_grad=True)
    assert type(x.T.grad_fn).__name__ == "PermuteBackward0"


def test_fast_path_views_match_torch():
    x, tx = pair(torch, [2, 3, 4])
    fs = [lambda t: t.movedim(0, 2), lambda t: t.movedim(-1, 0), lambda t: t.movedim(1, 1), lambda t: t.movedim(3, 0),
          lambda t: t.movedim(0, -4), lambda t: t.unflatten(2, (2, 2)), lambda t: t.unflatten(-1, (-1, 2)),
          lambda t: t.unflatten(1, (3, 1)), lambda t: t.unflatten(2, (3, 1)), lambda t: t.unflatten(2, (-1, -1)),
          lambda t: t.unflatten(2, (5,)), lambda t: t.unflatten(2, (0, 4)), lambda t: t.mT, lambda t: t.ravel(),
          lambda t: t.transpose(0, 2).ravel(), lambda t: t.view_as(t[0].reshape(12, 2)),
          lambda t: t.view_as(t[0].reshape(5, 2)), lambda t: t.mT.view_as(t[0].reshape(12, 2)),
          lambda t: t.chunk(2, -1), lambda t: t.chunk(3, 1), lambda t: t.chunk(5, 2), lambda t: t.chunk(2, 3),
          lambda t: t.unbind(-1), lambda t: t.unbind(3), lambda t: t.size(0), lambda t: t.size(-1),
          lambda t: t.size(-3), lambda t: t.size(3), lambda t: t.size(-4), lambda t: t.is_contiguous(),
          lambda t: t.mT.is_contiguous(), lambda t: t.contiguous() is t]
    def compare(m, t):
        if isinstance(t, tuple):
            check_seq(m, t)
        elif isinstance(t, torch.Tensor):
            check(m, t)
        else:
            assert m == t and type(m) is type(t), (m, t)

    for f in fs:
        same(lambda: f(x), lambda: f(tx), cmp=compare)
