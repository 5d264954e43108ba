"""The Tensor methods PyTorch writes in Python or over other ops (mindtorch_v2/_tensor_misc.py) and the
runtime settings of torch.* (set_warn_always, set_default_tensor_type, set_anomaly_enabled, from_file,
set_printoptions, to_dlpack), against live PyTorch: values, dtypes, strides, warnings, errors (type and
text)."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")
LIBS = (mt, torch)


def close(m, t):
    if isinstance(t, (tuple, list)):
        assert isinstance(m, (tuple, list)) and len(m) == len(t)
        for a, b in zip(m, t):
            close(a, b)
        return
    if not hasattr(t, "shape"):
        assert str(m) == str(t), (m, t)
        return
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    assert tuple(m.shape) == tuple(t.shape) and m.stride() == t.stride(), (m.shape, m.stride(), t.shape, t.stride())
    np.testing.assert_array_equal(np.array(m.double().tolist()).reshape(tuple(t.shape)), t.double().numpy())


def both(fn, cmp=close):
    return same(lambda: fn(mt), lambda: fn(torch), cmp=cmp)


def x(lib, dtype="float32", t=False):
    a = lib.tensor([[0, 1, 2], [3, 4, 5]]).to(getattr(lib, dtype))
    return a.t() if t else a


# ---- apply_ / map_ / map2_ -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("t", [False, True])
def test_apply_values(dtype, t):
    both(lambda lib: x(lib, dtype, t).clone().apply_(lambda v: v * 2 + 1))
    both(lambda lib: x(lib, dtype, t).t().apply_(lambda v: v + 0.7))  # a non-contiguous self is written in place


@pytest.mark.parametrize("fn", [lambda v: "a", lambda v: None])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_apply_bad_results(fn, dtype):
    both(lambda lib: x(lib, dtype).apply_(fn))


def test_apply_errors():
    both(lambda lib: x(lib).apply_(3))
    both(lambda lib: x(lib).requires_grad_().apply_(lambda v: v))
    both(lambda lib: lib.empty(0).apply_(lambda v: v))


def test_map_and_map2():
    both(lambda lib: x(lib).map_(lib.tensor([1.0, 2, 3]), lambda a, b: a * b))
    both(lambda lib: x(lib, t=True).clone().map_(lib.tensor([[1.0], [2], [3]]), lambda a, b: a - b))
    both(lambda lib: x(lib).map2_(lib.tensor([1.0, 2, 3]), lib.tensor([[1.0], [2.0]]), lambda a, b, c: a + b * c))
    both(lambda lib: x(lib).map_(lib.tensor([1, 2, 3]), lambda a, b: a))
    both(lambda lib: x(lib).map_(lib.tensor([1.0, 2]), lambda a, b: a))
    both(lambda lib: x(lib).map2_(lib.tensor([1, 2, 3]), lib.tensor([1.0]), lambda a, b, c: a))
    both(lambda lib: x(lib).map2_(lib.tensor([1.0]), lib.tensor([1]), lambda a, b, c: a))


# ---- new / new_empty_strided ----------------------------------------------------------------------------

def test_new_forms():
    both(lambda lib: x(lib, "float64").new([1, 2]))
    both(lambda lib: x(lib, "int32").new(((1, 2), (3, 4))))
    both(lambda lib: x(lib).new().shape)
    both(lambda lib: x(lib).new(2, 3).shape)
    both(lambda lib: x(lib).new(lib.Size([4])).shape)
    both(lambda lib: x(lib).new(x(lib)))
    both(lambda lib: x(lib).new(x(lib, "int64")))
    both(lambda lib: x(lib).new(2.5))
    both(lambda lib: x(lib).new(None))
    both(lambda lib: x(lib).new(2, dtype=lib.int64))
    both(lambda lib: x(lib).new([1, 2], dtype=lib.int64))
    both(lambda lib: x(lib).new(2, 3, device="meta"))
    both(lambda lib: x(lib).new([1.0], device="cpu"))
    m = x(mt)
    assert m.new(m.untyped_storage()).data_ptr() == m.data_ptr()


def test_new_factories_size_forms():
    """new_ones/new_zeros/new_empty take the size as varargs, a sequence or the keyword (longformer's
    new_ones(size=...)), with the argument parser's errors."""
    for name in ("new_ones", "new_zeros", "new_empty"):
        both(lambda lib: getattr(x(lib), name)(size=(2, 3)).shape)
        both(lambda lib: getattr(x(lib), name)(size=lib.Size([2])).shape)
        both(lambda lib: getattr(x(lib), name)(2, 3).shape)
        both(lambda lib: getattr(x(lib), name)([2, 3]).shape)
        both(lambda lib: getattr(x(lib), name)((2,), size=(3,)))
        both(lambda lib: getattr(x(lib), name)(size=3))
        both(lambda lib: getattr(x(lib), name)())


def test_new_empty_strided():
    both(lambda lib: x(lib).new_empty_strided((2, 3), (1, 2)).stride())
    both(lambda lib: x(lib).new_empty_strided((2, 3), (1, 2), dtype=lib.int32).dtype)
    both(lambda lib: x(lib).new_empty_strided((0, 3), (3, 1)).shape)


# ---- resize, resize_as, resize_as_, sum_to_size, swapaxes_ ---------------------------------------------------

def test_resize_deprecated_out_of_place():
    for fn in (lambda lib: x(lib).resize(3, 2), lambda lib: x(lib, t=True).resize(6),
               lambda lib: x(lib).resize_as(lib.zeros(1, 6))):
        with warnings.catch_warnings(record=True) as wm:
            warnings.simplefilter("always")
            m = fn(mt)
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            t = fn(torch)
        close(m, t)
        assert [str(w.message) for w in wm] == [str(w.message) for w in wt]
    both(lambda lib: x(lib).resize(4))
    m = mt.arange(6.0, requires_grad=True)
    m.resize(2, 3).sum().backward()
    assert m.grad.tolist() == [1.0] * 6


def test_resize_as_():
    both(lambda lib: x(lib).clone().resize_as_(lib.zeros(4)))
    both(lambda lib: lib.resize_as_(x(lib).clone(), lib.zeros(1, 2)))
    both(lambda lib: x(lib).clone().resize_as_(lib.zeros(0)))


@pytest.mark.parametrize("size", [(3,), (1, 3), ((2, 1),), ([1, 3],), (2, 3), (1, 1), (4,), (2, 2, 3), (-1,),
                                  (2, -1), ()])
def test_sum_to_size(size):
    both(lambda lib: x(lib, "float64").sum_to_size(*size))
    both(lambda lib: x(lib, "float64", t=True).sum_to_size(*[s for s in reversed(size) if isinstance(s, int)]))


def test_sum_to_size_0dim_and_grad():
    both(lambda lib: lib.tensor(3.0).sum_to_size(()))
    both(lambda lib: lib.tensor(3.0).sum_to_size(1))
    both(lambda lib: x(lib).sum_to_size(lib.Size([1, 3]), 3))
    g = []
    for lib in LIBS:
        a = lib.ones(2, 3, requires_grad=True)
        (a.sum_to_size(1, 3) * lib.tensor([1.0, 2, 3])).sum().backward()
        g.append(a.grad)
    close(*g)


def test_swapaxes_():
    both(lambda lib: x(lib).clone().swapaxes_(0, 1))
    both(lambda lib: x(lib).clone().swapdims_(1, 0))
    both(lambda lib: x(lib).clone().swapaxes_(0, 2))


# ---- fill_diagonal_ ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 4), (7, 3), (3, 3, 3), (4, 2), (1, 1), (0, 0)])
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_(shape, wrap):
    both(lambda lib: lib.zeros(shape).fill_diagonal_(2, wrap=wrap))
    both(lambda lib: lib.zeros(shape[::-1], dtype=lib.int64).t().fill_diagonal_(5, wrap))


def test_fill_diagonal_errors_and_grad():
    both(lambda lib: lib.zeros(3, 4, 5).fill_diagonal_(1))
    both(lambda lib: lib.zeros(3).fill_diagonal_(1))
    g = []
    for lib in LIBS:
        a = lib.ones(3, 3, requires_grad=True)
        (a * 1).fill_diagonal_(0).sum().backward()
        g.append(a.grad)
    close(*g)


# ---- memory, streams, layout queries -----------------------------------------------------------------------

def test_pinned_memory_and_streams():
    both(lambda lib: x(lib).is_pinned())
    both(lambda lib: x(lib).pin_memory())
    both(lambda lib: x(lib).pin_memory("cpu"))
    both(lambda lib: x(lib).pin_memory("meta"))
    both(lambda lib: x(lib).record_stream(None))
    both(lambda lib: x(lib).record_stream(1))
    with pytest.warns(DeprecationWarning, match=r"^The argument 'device' of Tensor.is_pinned\(\) is deprecated"):
        assert x(mt).is_pinned("cpu") is False


@pytest.mark.parametrize("make", [
    lambda lib: lib.empty(2, 3, 5, 7), lambda lib: lib.empty(2, 3, 5, 7).transpose(1, 2),
    lambda lib: lib.empty(2, 3, 4, 5).permute(0, 2, 3, 1), lambda lib: lib.empty(1, 2, 3, 4),
    lambda lib: lib.empty(1, 3), lambda lib: lib.tensor(1.0), lambda lib: lib.empty(4),
    lambda lib: lib.empty(4, 4)[:, ::2], lambda lib: lib.empty(3, 1).expand(3, 4)])
@pytest.mark.parametrize("check", [False, True, "formats", "bad"])
def test_dim_order(make, check):
    def fn(lib):
        amb = {"formats": [lib.contiguous_format, lib.channels_last], "bad": "x"}.get(check, check)
        return make(lib).dim_order(ambiguity_check=amb)
    both(fn)


def test_storage_type_const_data_ptr_is_set_to():
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        import mindtorch_v2.storage as st
        st._warned_typed = False
        assert x(mt).storage_type() is mt.FloatStorage
    assert x(mt, "int64").storage_type() is mt.LongStorage
    m = x(mt)
    assert m.const_data_ptr() == m.data_ptr()
    for fn in (lambda a: a.is_set_to(a), lambda a: a.is_set_to(a.view(6)), lambda a: a.is_set_to(a.view(2, 3)),
               lambda a: a.is_set_to(a.clone()), lambda a: a.is_set_to(a.t()), lambda a: a.is_set_to(a[1:])):
        both(lambda lib: fn(x(lib)))


def test_as_subclass_and_is_distributed():
    class Sub(mt.Tensor):
        pass
    m = mt.ones(2, requires_grad=True)
    s = (m * 2).as_subclass(Sub)
    assert type(s) is Sub and s.data_ptr() != 0
    s.sum().backward()
    assert m.grad.tolist() == [2.0, 2.0]
    both(lambda lib: type(x(lib).as_subclass(lib.nn.Parameter)).__name__)
    both(lambda lib: x(lib).as_subclass(int))
    both(lambda lib: x(lib).is_distributed())
    both(lambda lib: lib.is_distributed(x(lib)))
    both(lambda lib: lib.is_distributed(3))


def test_module_load_reinforce_prelu_index():
    both(lambda lib: x(lib).module_load(lib.ones(2, 3)))
    both(lambda lib: x(lib).module_load(lib.ones(2, 3), assign=True))
    both(lambda lib: x(lib).reinforce(1))
    both(lambda lib: (x(lib) - 2).prelu(lib.tensor([0.1])))
    both(lambda lib: (x(lib) - 2).prelu(lib.tensor([0.1, 0.2, 0.3])))
    with pytest.raises(NotImplementedError, match="Tensor.index is not implemented"):
        x(mt).index((0,), None)


# ---- torch.* runtime settings ---------------------------------------------------------------------------

def test_warn_always():
    for lib in LIBS:
        assert lib.is_warn_always_enabled() is False
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
        lib.set_warn_always(False)
    both(lambda lib: lib.set_warn_always("a"))
    both(lambda lib: lib.set_warn_always(1))


@pytest.mark.parametrize("arg", ["torch.DoubleTensor", "torch.HalfTensor", "torch.IntTensor", "torch.cuda.FloatTensor",
                                 "x.y", 3, "float64"])
def test_set_default_tensor_type(arg):
    def fn(lib):
        a = getattr(lib, arg.split(".")[1]) if isinstance(arg, str) and arg.startswith("torch.") and "cuda" not in arg \
            and arg.endswith("Tensor") and arg != "torch.HalfTensor" else arg
        a = getattr(lib, a) if a == "float64" else a
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_default_tensor_type(a)
            return lib.get_default_dtype(), lib.tensor([1.5]).dtype
        finally:
            lib.set_default_dtype(lib.float32)
    both(fn, cmp=lambda m, t: (str(m[0]), str(m[1])) == (str(t[0]), str(t[1])) or pytest.fail(f"{m} {t}"))


def test_set_default_tensor_type_warns_once():
    import mindtorch_v2._runtime as rt
    rt._warned_once.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mt.set_default_tensor_type(mt.FloatTensor)
        mt.set_default_tensor_type(mt.FloatTensor)
        mt.set_warn_always(True)
        mt.set_default_tensor_type(mt.FloatTensor)
        mt.set_warn_always(False)
    assert [str(m.message) for m in w] == ["torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                                           "use torch.set_default_dtype() and torch.set_default_device() as "
                                           "alternatives."] * 2


def test_set_anomaly_enabled():
    for lib in LIBS:
        lib.set_anomaly_enabled(True)
        assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(True, False)
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled()
    both(lambda lib: lib.set_anomaly_enabled("a"))
    both(lambda lib: lib.set_anomaly_enabled(True, 1))


def test_from_file(tmp_path):
    f = tmp_path / "data.bin"
    np.arange(8, dtype=np.float32).tofile(f)
    both(lambda lib: lib.from_file(str(f), size=8))
    both(lambda lib: lib.from_file(str(f), False, 4, dtype=lib.int32))
    both(lambda lib: lib.from_file(str(f), size=0))
    both(lambda lib: lib.from_file(str(f), size=9))
    both(lambda lib: lib.from_file(str(tmp_path / "missing"), size=2))
    m = mt.from_file(str(f), True, 8)
    m[0] = 42.0
    del m
    assert np.fromfile(f, dtype=np.float32)[0] == 42.0


def test_set_printoptions_and_to_dlpack():
    try:
        for lib in LIBS:
            lib.set_printoptions(precision=2)
        assert repr(mt.tensor([1.23456])) == repr(torch.tensor([1.23456]))
    finally:
        for lib in LIBS:
            lib.set_printoptions(profile="default")
    cap = mt.to_dlpack(mt.arange(3.0))
    assert torch.from_dlpack(cap).tolist() == [0.0, 1.0, 2.0]
