"""Python-level fuzzing of the public API: random dtypes, shapes, strided views,
and malformed arguments (wrong types, negative/huge sizes, out-of-range dims and
indices, NaN/inf, overlapping in-place views). Every call must return or raise
one of PyTorch's exception types -- never crash the interpreter.

Longer campaigns: MT_FUZZ_EXAMPLES=100000 python -m pytest -q tests/reliability/test_fuzz_api.py
"""
import math
import os

from hypothesis import HealthCheck, given, settings, strategies as st

import mindtorch_v2 as mt

EXAMPLES = int(os.environ.get("MT_FUZZ_EXAMPLES", "300"))
ALLOWED = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError, OverflowError,
           ZeroDivisionError)
DTYPES = [mt.bool, mt.uint8, mt.int8, mt.int16, mt.int32, mt.int64, mt.float16, mt.bfloat16, mt.float32,
          mt.float64]
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

small_int = st.integers(-6, 6)
weird_int = st.one_of(small_int, st.sampled_from([-(1 << 63), (1 << 63) - 1, 1 << 40, -(1 << 40), 1 << 64]))
weird_float = st.one_of(st.floats(-4, 4), st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0]))
junk = st.one_of(st.none(), st.text(max_size=3), st.lists(small_int, max_size=3), weird_float, weird_int)


@st.composite
def tensors(draw):
    """A tensor of any dtype: contiguous, or a strided (possibly overlapping, possibly empty) view."""
    dtype = draw(st.sampled_from(DTYPES))
    n = draw(st.integers(0, 24))
    base = (mt.arange(n, dtype=mt.float64) * 0.75 - 3).to(dtype)
    if draw(st.booleans()) or n == 0:
        shape = draw(st.sampled_from([(n,), (1, n), (n, 1)]))
        return base.reshape(shape)
    ndim = draw(st.integers(0, 3))
    sizes = [draw(st.integers(0, 4)) for _ in range(ndim)]
    strides = [draw(st.integers(0, 3)) for _ in range(ndim)]
    span = sum((s - 1) * t for s, t in zip(sizes, strides) if s > 0)
    if any(s == 0 for s in sizes) or span < n:
        offset = draw(st.integers(0, max(0, n - 1 - span))) if all(s > 0 for s in sizes) else 0
        return mt.as_strided(base, sizes, strides, offset)
    return base


def call(fn, *args, **kwargs):
    try:
        r = fn(*args, **kwargs)
        if isinstance(r, mt.Tensor) and r.device.type == "cpu" and all(s < 4096 for s in r.shape):
            r.tolist()  # touch every element: an out-of-bounds view would show here under ASan
        return r
    except ALLOWED:
        return None


UNARY = ["abs", "neg", "sqrt", "exp", "log", "sin", "tanh", "sigmoid", "floor", "round", "bitwise_not",
         "logical_not", "isnan", "clone", "contiguous", "sum", "mean", "amax", "argmax", "t", "flatten"]
BINARY = ["add", "sub", "mul", "div", "remainder", "fmod", "pow", "maximum", "eq", "lt", "bitwise_and",
          "logical_or", "floor_divide", "matmul", "where"]


@FUZZ
@given(tensors(), st.sampled_from(UNARY))
def test_unary_any_tensor(x, name):
    call(getattr(mt.Tensor, name), x)


@FUZZ
@given(tensors(), st.one_of(tensors(), weird_float, weird_int, junk), st.sampled_from(BINARY))
def test_binary_any_operands(x, y, name):
    if name == "where":
        call(mt.where, x > 0 if x.dtype != mt.bool else x, x, y)
    else:
        call(getattr(mt, name), x, y)
        call(getattr(mt, name), y, x)


@FUZZ
@given(tensors(), weird_int, weird_int, st.booleans())
def test_dims_and_sizes(x, a, b, keep):
    call(mt.Tensor.sum, x, a, keepdim=keep)
    call(mt.Tensor.transpose, x, a, b)
    call(mt.Tensor.select, x, a, b)
    call(mt.Tensor.narrow, x, a, b, 1)
    call(mt.Tensor.view, x, a, b)
    call(mt.Tensor.reshape, x, a)
    call(mt.Tensor.expand, x, a, b)
    call(mt.Tensor.unsqueeze, x, a)
    call(mt.Tensor.squeeze, x, a)
    call(mt.Tensor.unfold, x, a, b, 1)
    call(mt.Tensor.max, x, a)
    call(mt.empty, a, b)
    call(mt.zeros, (a, b), dtype=mt.int8)


@FUZZ
@given(tensors(), st.lists(st.one_of(weird_int, st.none(), st.just(Ellipsis),
                                      st.builds(slice, small_int | st.none(), small_int | st.none(),
                                                st.sampled_from([None, 1, 2, -1, 0]))), max_size=4),
       st.one_of(weird_float, weird_int, tensors()))
def test_indexing(x, index, value):
    idx = tuple(index)
    call(x.__getitem__, idx)
    y = x.clone() if x.numel() else x
    call(y.__setitem__, idx, value)
    if x.numel():
        i = mt.tensor([abs(v) % 7 - 3 for v in index if isinstance(v, int) and abs(v) < 1 << 40] or [0])
        call(x.__getitem__, i)
        call(y.__setitem__, i, value)
        call(x.__getitem__, x > 0 if x.dtype != mt.bool else x)


@FUZZ
@given(tensors(), tensors(), st.sampled_from(["add_", "mul_", "copy_", "sub_", "clamp_", "fill_"]))
def test_in_place_overlapping(x, y, name):
    x = x.clone() if x.numel() else x
    view = x.reshape(-1)[: max(0, x.numel() - 1)] if x.numel() else x
    if name == "fill_":
        call(view.fill_, 2)
    elif name == "clamp_":
        call(view.clamp_, -1, 1)
    else:
        call(getattr(view, name), y)
        call(getattr(view, name), view)


@FUZZ
@given(tensors(), junk)
def test_wrong_argument_types(x, j):
    for fn in (mt.add, mt.matmul, mt.Tensor.view, mt.Tensor.to, mt.Tensor.sum, mt.Tensor.permute,
               mt.Tensor.__getitem__, mt.tensor, mt.ones_like, mt.Tensor.masked_fill):
        call(fn, x, j)
    call(mt.tensor, j)


F = mt.nn.functional
_x4 = mt.arange(2 * 3 * 5 * 5, dtype=mt.float32).reshape(2, 3, 5, 5)
_w4 = mt.ones(4, 3, 3, 3)
NN_CALLS = [
    lambda a, b: F.conv2d(_x4, _w4, padding=a, dilation=b),
    lambda a, b: F.conv2d(_x4, _w4, stride=a, groups=b),
    lambda a, b: F.conv2d(_x4, _w4, padding="same", dilation=a),
    lambda a, b: F.conv_transpose2d(_x4, _w4.transpose(0, 1), stride=a, output_padding=b),
    lambda a, b: F.pad(_x4, (a, b), mode="circular"),
    lambda a, b: F.pad(_x4, (a, b, b, a), mode="reflect"),
    lambda a, b: F.pad(_x4, (a, b), value=1.0),
    lambda a, b: F.max_pool2d(_x4, a, stride=b),
    lambda a, b: F.avg_pool2d(_x4, 2, stride=a, padding=b),
    lambda a, b: F.unfold(_x4, a, dilation=b),
    lambda a, b: F.interpolate(_x4, size=(a, b)),
    lambda a, b: F.embedding(mt.tensor([a, b]), _w4[0, 0]),
    lambda a, b: F.one_hot(mt.tensor([a]), b),
]


@FUZZ
@given(weird_int, weird_int, st.sampled_from(range(len(NN_CALLS))))
def test_nn_arguments(a, b, which):
    """sizes, paddings, strides and dilations from small to int64-extreme: a result or an error"""
    call(NN_CALLS[which], a, b)


def test_roi_ops_with_grids_past_an_int():
    """roi_align / ps_roi_align with a sampling_ratio past an int, huge or NaN roi coordinates, or a huge
    batch index: each raises (they crashed: a grid of negative or 2^62 samples, an index converted out of
    range; torchvision's int arithmetic overflows the same way)"""
    import pytest
    from mindtorch_v2 import _vision_ops as V
    x = mt.rand(1, 4, 5, 5, dtype=mt.float64)
    box = mt.tensor([[0, 0., 0., 4., 4.]], dtype=mt.float64)
    cases = [lambda: V.roi_align(x, box, 1.0, 2, 2, (1 << 31) + 5, False),
             lambda: V.roi_align(x, box, 1.0, 2, 2, 1 << 40, True),
             lambda: V.roi_align(x.float(), mt.tensor([[0, 0., 0., 1e30, 1e30]]), 1.0, 2, 2, 0, False),
             lambda: V.roi_align(x, box, 1e300, 2, 2, 0, True),
             lambda: V.roi_align(x, mt.tensor([[0, 0., 0., math.nan, 4.]], dtype=mt.float64), 1.0, 2, 2, 0, False),
             lambda: V.ps_roi_align(x, box, 1.0, 2, 2, (1 << 31) + 5),
             lambda: V._roi_align_backward(mt.ones(1, 4, 2, 2, dtype=mt.float64), box, 1.0, 2, 2, 1, 4, 5, 5,
                                           1 << 40, False)]
    for fn in cases:
        with pytest.raises(RuntimeError, match="needs more than 2147483647 samples"):
            fn()
    with pytest.raises(IndexError, match="has batch index 1e[+]30, out of range"):
        V.roi_align(x, mt.tensor([[1e30, 0., 0., 4., 4.]], dtype=mt.float64), 1.0, 2, 2, 0, False)
    assert V.roi_align(x, box, 1.0, 2, 2, 2, False).shape == (1, 4, 2, 2)  # ordinary grids run


def test_deform_im2col_sizes_past_int64():
    """a kernel of (2^31 - 1)^2 taps over 4 channels: the columns' rows (and the offset's channels for
    2+ groups) pass int64, computed before as signed overflow; now the numel error"""
    import pytest
    from mindtorch_v2._C import lib
    from mindtorch_v2._dispatch import call
    k = (1 << 31) - 1
    x, o = mt.rand(1, 4, 3, 3), mt.empty(1, 1, 1, 1)
    for groups in (1, 2, 4):
        with pytest.raises(RuntimeError, match="^numel: integer multiplication overflow$"):
            call(lib.mt_vision_deform_im2col, x._h, o._h, o._h, [k, k, 1, 1, (k - 1) // 2, (k - 1) // 2, 1, 1],
                 groups)


def test_embedding_backward_count_past_int64():
    """2^40 indices (an expanded view) times rows of 2^24 wrap to 0, the count of an empty grad: the
    check passed and the kernel read rows that do not exist; now the shapes' mismatch"""
    import pytest
    from mindtorch_v2._C import lib
    from mindtorch_v2._dispatch import call
    idx = mt.zeros(1, dtype=mt.int64).expand(1 << 40)
    with pytest.raises(RuntimeError, match="grad and indices shapes do not match"):
        call(lib.mt_embedding_backward, mt.empty(0, 1 << 24)._h, idx._h, 10, -1, 0)
