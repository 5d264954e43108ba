"""nn.functional.grouped_mm, scaled_mm and scaled_grouped_mm against live PyTorch's CPU behaviour:
values and output layouts of every operand arrangement (2-D x 3-D, 3-D x 2-D, 2-D x 2-D, 3-D x 3-D) in
float32/bfloat16/float16, gradients, float8 tensor-wise and row-wise scaled products, and every check's
exception type and text (PyTorch's CPU has no scaled_grouped_mm kernel: its dispatcher error)."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 2e-3}


def both(fn):
    """fn(L) in each library: (PyTorch's result or exception, ours)"""
    out = []
    for L in (torch, mt):
        try:
            out.append(fn(L))
        except Exception as e:  # noqa: BLE001  (the exception is the result compared)
            out.append(e)
    return out


def same_error(fn):
    t, m = both(fn)
    assert isinstance(t, Exception), t
    assert isinstance(m, Exception), (m, t)
    base = next(k for k in type(t).__mro__ if k.__module__ == "builtins")
    assert isinstance(m, base) and str(m) == str(t), (type(m), str(m), type(t), str(t))


def tensor(L, a, dtype, transpose=False):
    """a (numpy, float) as dtype; transpose: the same values through a column-major last two dims"""
    if transpose:
        return tensor(L, np.swapaxes(a, -1, -2), dtype).transpose(-1, -2)
    return L.tensor(a.reshape(-1).tolist(), dtype=getattr(L, dtype)).reshape(a.shape)


def offsets(L, ends):
    return L.tensor(ends, dtype=L.int32)


def compare(m, t, dtype, rows=None):
    """same dtype, shape and strides; values within the dtype's tolerance (rows: the defined rows only)"""
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape) and m.stride() == t.stride()
    mv, tv = np.array(m.float().tolist()), np.array(t.detach().float().tolist())
    if rows is not None:
        mv, tv = mv[rows], tv[rows]
    np.testing.assert_allclose(mv, tv, rtol=TOL[dtype], atol=TOL[dtype])


R = np.random.default_rng(0)
A2, B3, A3 = R.standard_normal((10, 8)), R.standard_normal((3, 8, 8)), R.standard_normal((3, 4, 8))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("b_transposed", [False, True])
def test_grouped_mm_2d_3d(dtype, b_transposed):
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, A2, dtype), tensor(L, B3, dtype, b_transposed),
                                                     offs=offsets(L, [3, 7, 10])))
    compare(m, t, dtype)
    # offs[-1] short of the rows: PyTorch leaves the rest uninitialised, ours are zeros
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, A2, dtype), tensor(L, B3, dtype),
                                                     offs=offsets(L, [2, 2, 8])))
    compare(m, t, dtype, rows=slice(0, 8))
    assert not m[8:].any()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_grouped_mm_other_arrangements(dtype):
    a3, b2 = R.standard_normal((3, 8, 16)), R.standard_normal((16, 8))
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, a3, dtype), tensor(L, b2, dtype, True),
                                                     offs=offsets(L, [3, 7, 16])))
    compare(m, t, dtype)
    a2 = R.standard_normal((8, 16))
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, a2, dtype), tensor(L, b2, dtype),
                                                     offs=offsets(L, [3, 7, 16])))
    compare(m, t, dtype)
    a3 = R.standard_normal((3, 4, 8))
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, a3, dtype), tensor(L, B3, dtype)))
    compare(m, t, dtype)


def test_grouped_mm_padded_output_layout():
    b = R.standard_normal((3, 8, 5))  # N = 5 float32 columns: rows are padded to 8 (32 bytes)
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, A2, "float32"), tensor(L, b, "float32", True),
                                                     offs=offsets(L, [3, 7, 10])))
    compare(m, t, "float32")
    t, m = both(lambda L: L.nn.functional.grouped_mm(tensor(L, A2[:0], "float32"), tensor(L, B3, "float32"),
                                                     offs=offsets(L, [0, 0, 0])))
    compare(m, t, "float32")


def test_grouped_mm_gradients():
    grads = []
    for L in (torch, mt):
        a = tensor(L, A2, "float32").requires_grad_()
        b = tensor(L, B3, "float32").requires_grad_()
        out = L.nn.functional.grouped_mm(a, b, offs=offsets(L, [3, 7, 10]))
        (out * L.tensor(np.arange(80.0).reshape(10, 8).tolist())).sum().backward()
        grads.append((a.grad, b.grad))
    for tg, mg in zip(*grads):
        compare(mg, tg, "float32")


def test_grouped_mm_gradcheck():
    # grouped_mm refuses float64: gradcheck in float32 with a step and tolerances to match
    a = mt.tensor(A2[:6, :8].tolist(), requires_grad=True)
    b = mt.tensor(B3[:2].tolist(), requires_grad=True)
    fn = lambda a, b: mt.nn.functional.grouped_mm(a, b, offs=mt.tensor([2, 6], dtype=mt.int32))  # noqa: E731
    assert mt.autograd.gradcheck(fn, (a, b), eps=1e-2, atol=1e-2, rtol=1e-2)


def bf(L, a):
    return tensor(L, a, "bfloat16")


@pytest.mark.parametrize("case", [
    lambda L: L.nn.functional.grouped_mm(tensor(L, A2, "float64"), tensor(L, B3, "float64"), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(L.ones(10, 8, dtype=L.int32), bf(L, B3), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), L.ones(3, 8, 8, dtype=L.int64), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2[0]), bf(L, B3), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3[None]), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2[:, :7]), bf(L, B3), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3[:, :, :5]), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(tensor(L, A2, "bfloat16", True), bf(L, B3), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2)[::2, ::2], bf(L, B3[:, :4]), offs=offsets(L, [1, 2, 5])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3)),
    lambda L: L.nn.functional.grouped_mm(bf(L, A3), bf(L, B3), offs=offsets(L, [1, 2, 3])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3), offs=offsets(L, [[3, 7, 10]])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3), offs=offsets(L, [3, 7, 10]).long()),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3), offs=offsets(L, [3, 7, 10]), bias=L.zeros(8)),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3), offs=offsets(L, [3, 7, 10]), out_dtype=L.float32),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), bf(L, B3), offs=offsets(L, [3, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A3[:2]), bf(L, B3)),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2), tensor(L, B3, "float32"), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(tensor(L, A2, "float16"), bf(L, B3), offs=offsets(L, [3, 7, 10])),
    lambda L: L.nn.functional.grouped_mm(bf(L, A2[:, :0]), bf(L, B3[:, :0]), offs=offsets(L, [3, 7, 10])),
])
def test_grouped_mm_errors(case):
    same_error(case)


F8 = "float8_e4m3fn"
SA, SB = R.standard_normal((16, 32)), R.standard_normal((32, 16))


def f8(L, a, dtype=F8, transpose=False):
    return tensor(L, a, "float32", transpose).to(getattr(L, dtype))


def st(L):
    return L.nn.functional.ScalingType


@pytest.mark.parametrize("out", ["bfloat16", "float32", "float16"])
@pytest.mark.parametrize("fp8", ["float8_e4m3fn", "float8_e5m2"])
def test_scaled_mm_tensorwise(out, fp8):
    t, m = both(lambda L: L.nn.functional.scaled_mm(
        f8(L, SA, fp8), f8(L, SB, fp8, True), L.tensor(0.5), st(L).TensorWise, L.tensor(2.5), st(L).TensorWise,
        output_dtype=getattr(L, out)))
    compare(m, t, out)


def test_scaled_mm_rowwise_and_bias():
    sa, sb, bias = R.uniform(0.5, 2, (16, 1)), R.uniform(0.5, 2, (1, 16)), R.standard_normal(16)
    t, m = both(lambda L: L.nn.functional.scaled_mm(
        f8(L, SA), f8(L, SB, transpose=True), tensor(L, sa, "float32"), st(L).RowWise, tensor(L, sb, "float32"),
        st(L).RowWise, bias=tensor(L, bias, "bfloat16"), output_dtype=L.float32))
    compare(m, t, "float32")
    # list arguments, and the output dtype of the inputs (float8) when output_dtype is None
    t, m = both(lambda L: L.nn.functional.scaled_mm(
        f8(L, SA), f8(L, SB), [L.tensor(1.0)], [st(L).TensorWise], [L.tensor(1.0)], [st(L).TensorWise],
        output_dtype=None))
    assert str(m.dtype) == str(t.dtype)
    np.testing.assert_array_equal(np.array(m.float().tolist()), np.array(t.float().tolist()))
    for a, b in ((SA[:0], SB), (SA[:, :0], SB[:0])):  # empty M; empty K gives zeros
        t, m = both(lambda L: L.nn.functional.scaled_mm(f8(L, a), f8(L, b), L.tensor(1.0), st(L).TensorWise,
                                                        L.tensor(1.0), st(L).TensorWise))
        compare(m, t, "bfloat16")


@pytest.mark.parametrize("case", [
    lambda L: L.nn.functional.scaled_mm(tensor(L, SA, "bfloat16"), tensor(L, SB, "bfloat16"), L.tensor(1.0),
                                        st(L).TensorWise, L.tensor(1.0), st(L).TensorWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.ones(16, 2), st(L).RowWise, L.ones(1, 16), st(L).RowWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.ones(16, 1), st(L).TensorWise, L.ones(1, 16),
                                        st(L).TensorWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0, dtype=L.float64), st(L).TensorWise,
                                        L.tensor(1.0), st(L).TensorWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), st(L).TensorWise, L.ones(1, 16),
                                        st(L).RowWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), st(L).BlockWise1x128, L.tensor(1.0),
                                        st(L).BlockWise1x128),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB[:8]), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA[0]), f8(L, SB), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise, bias=L.ones(15)),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise, bias=L.ones(16, dtype=L.float64)),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise, swizzle_a=L.nn.functional.SwizzleType.SWIZZLE_32_4_4,
                                        swizzle_b=L.nn.functional.SwizzleType.NO_SWIZZLE),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), 0, L.tensor(1.0), 0),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB).t(), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise, contraction_dim=(1, 1)),
    lambda L: L.nn.functional.scaled_mm(f8(L, SA), f8(L, SB), L.tensor(1.0), st(L).TensorWise, L.tensor(1.0),
                                        st(L).TensorWise, contraction_dim=(0, 1, 1)),
    lambda L: L.nn.functional.scaled_grouped_mm(f8(L, SA), f8(L, SB[None]), L.tensor(1.0), st(L).TensorWise,
                                                L.tensor(1.0), st(L).TensorWise, offs=offsets(L, [16])),
    lambda L: L.nn.functional.scaled_grouped_mm(tensor(L, SA, "bfloat16"), tensor(L, SB, "bfloat16"), L.tensor(1.0),
                                                st(L).TensorWise, L.tensor(1.0), st(L).TensorWise),
])
def test_scaled_mm_errors(case):
    t, m = both(case)
    assert isinstance(t, Exception) and isinstance(m, Exception), (t, m)
    base = next(k for k in type(t).__mro__ if k.__module__ == "builtins")
    assert isinstance(m, base), (type(m), type(t))
    # PyTorch's dispatcher error goes on to list its backends: ours is its first sentences
    assert str(t).startswith(str(m)) if "Could not run" in str(t) else str(m) == str(t), (str(m), str(t))


def test_scaling_enums():
    for name in ("ScalingType", "SwizzleType"):
        theirs, ours = getattr(torch.nn.functional, name), getattr(mt.nn.functional, name)
        assert {k: v.value for k, v in theirs.__members__.items()} == {k: v.value for k, v in ours.__members__.items()}
        assert ours.__name__ == theirs.__name__ and ours.__module__ == theirs.__module__
