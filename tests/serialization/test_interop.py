"""numpy protocols, DLPack (numpy and live PyTorch), pickle and copy of tensors."""
import copy
import gc
import pickle

import numpy as np
import pytest

import mindtorch_v2 as mt
from mindtorch_v2.utils import dlpack

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def sample(dtype, shape=(2, 3)):
    x = mt.arange(6).reshape(shape) % 5 - 1
    return (x > 0) if dtype == "bool" else (x.abs() if dtype == "uint8" else x).to(getattr(mt, dtype))


def outcome(L, code):
    try:
        r = eval(code, {"L": L, "np": np})
    except Exception as e:  # noqa: BLE001 - the outcome is whatever PyTorch does
        return ("error", type(e).__name__, str(e))
    if isinstance(r, L.Tensor):
        return ("tensor", str(r.dtype), list(r.shape), r.tolist())
    if isinstance(r, np.ndarray):
        return ("ndarray", str(r.dtype), r.tolist())
    return ("value", repr(r))


NUMPY_CASES = [
    "L.tensor([1.0, 2.0]) + np.array([1.0, 2.0])",
    "L.ones(2) + np.array(2.0)",
    "L.ones(2, dtype=L.float16) + np.array([2.0])",
    "L.ones(2, dtype=L.int32) + np.array([2], dtype=np.int64)",
    "L.ones(2) * np.array([2], dtype=np.int64)",
    "L.ones(2) * np.float64(2)",
    "np.float64(2) * L.ones(2)",
    "np.int64(3) + L.ones(2, dtype=L.int32)",
    "L.ones(2, dtype=L.float16) + np.float64(3)",
    "np.float32(2) * L.ones(2, dtype=L.float16)",
    "L.ones(2) + np.bool_(True)",
    "L.ones(2) < np.array([1.0, 3.0])",
    "np.sin(L.ones(2))",
    "np.add(L.ones(2), 1)",
    "np.greater(L.ones(2), 0)",
    "np.exp(L.ones(2, requires_grad=True))",
    "L.ones(2, requires_grad=True).numpy()",
    "L.ones(2, requires_grad=True).numpy(force=True)",
    "np.asarray(L.ones(2, dtype=L.float16))",
    "np.asarray(L.ones(2), dtype=np.float64)",
    "np.asarray(L.ones(2, dtype=L.bfloat16))",
    "L.ones(3)[np.int64(1)]",
    "L.ones(3)[np.array([0, 2])]",
    "L.tensor(np.array([1, 2]))",
    "L.ones(2).__array_priority__",
]


@pytest.mark.parametrize("code", NUMPY_CASES)
def test_numpy_protocols_match_torch(code):
    torch = pytest.importorskip("torch")
    assert outcome(mt, code) == outcome(torch, code)


def test_numpy_shares_memory_both_ways():
    t = mt.arange(6.0).reshape(2, 3)
    a = t.numpy()
    a[0, 0] = 5.0
    assert t[0, 0].item() == 5.0
    b = np.arange(4, dtype=np.int32)
    u = mt.from_numpy(b)
    u[1] = 9
    assert b[1] == 9
    assert np.shares_memory(np.asarray(t), a)


# ---- DLPack -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bfloat16"])
def test_dlpack_numpy_roundtrip_shares_one_buffer(dtype):
    t = sample(dtype)
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr() and a.shape == (2, 3) and a.tolist() == t.tolist()
    back = mt.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype and back.tolist() == t.tolist()
    back[0, 0] = 1
    assert a[0, 0] == 1 and t[0, 0].item() == 1


def test_dlpack_keeps_memory_alive():
    t = mt.arange(1000.0)
    a = np.from_dlpack(t)
    del t
    gc.collect()
    mt.ones(10000)  # reuse freed memory, if it had been freed
    assert a[999] == 999.0
    n = np.arange(1000.0)
    u = mt.from_dlpack(n)
    del n
    gc.collect()
    assert u[999].item() == 999.0


def test_dlpack_layouts():
    t = mt.arange(12.0).reshape(3, 4)
    for view in (t.t(), t[:, ::2], t[1:], t[0, 0], mt.zeros(0, 3), t.unsqueeze(1).expand(3, 2, 4)):
        a = np.from_dlpack(view)
        assert a.tolist() == view.tolist()
        assert list(a.strides) == [s * 4 for s in view.stride()] or view.numel() <= 1
    n = np.arange(12.0).reshape(3, 4)[:, ::2]
    u = mt.from_dlpack(n)
    assert u.stride() == (4, 2) and u.tolist() == n.tolist()
    with pytest.raises(RuntimeError, match="negative sizes or strides"):
        mt.from_dlpack(np.arange(3.0)[::-1])


def test_dlpack_capsules_and_errors():
    t = mt.arange(3)
    cap = dlpack.to_dlpack(t)
    assert "dltensor" in repr(cap)
    u = dlpack.from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
        mt.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        mt.from_dlpack(1)
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
    assert t.__dlpack_device__() == (dlpack.DLDeviceType.kDLCPU, 0)
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        mt.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(AssertionError, match="stream should be None on cpu"):
        t.__dlpack__(stream=3)
    with pytest.raises(ValueError, match="Unknown device type meta for Dlpack"):
        mt.empty(2, device="meta").__dlpack_device__()
    with pytest.raises(BufferError, match="Cannot pack tensors on meta"):
        mt.empty(2, device="meta").__dlpack__()
    with pytest.raises(RuntimeError, match="Unsupported DLPack dtype"):
        mt.from_dlpack(np.ones(2, dtype=np.complex64))
    with pytest.raises(RuntimeError, match="Unsupported dtype in DLTensor"):  # numpy has no bfloat16
        np.from_dlpack(mt.ones(2, dtype=mt.bfloat16))
    with pytest.raises(AssertionError, match="device and copy kwargs not supported"):
        mt.from_dlpack(dlpack.to_dlpack(t), copy=True)
    c = mt.from_dlpack(np.arange(3.0), copy=True)
    assert c.tolist() == [0.0, 1.0, 2.0]
    assert mt.from_dlpack(t, copy=True).data_ptr() != t.data_ptr()


@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_with_torch(dtype):
    torch = pytest.importorskip("torch")
    t = sample(dtype)
    r = torch.from_dlpack(t)
    assert r.data_ptr() == t.data_ptr() and str(r.dtype) == str(t.dtype)
    assert (r.float() if dtype == "bfloat16" else r).tolist() == (t.float() if dtype == "bfloat16" else t).tolist()
    back = mt.from_dlpack(r)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
    rt = torch.arange(6).reshape(2, 3).t().to(getattr(torch, dtype))
    m = mt.from_dlpack(rt)
    assert m.data_ptr() == rt.data_ptr() and m.stride() == rt.stride()


# ---- pickle and copy ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_tensors(dtype):
    t = sample(dtype)
    views = [t, t.t(), t[1]]
    got = pickle.loads(pickle.dumps(views))
    assert [g.tolist() for g in got] == [v.tolist() for v in views]
    assert [g.stride() for g in got] == [v.stride() for v in views]
    # as in PyTorch, a plain pickle stores each tensor's storage on its own (torch.save keeps sharing)
    assert got[0].data_ptr() != t.data_ptr()


def test_pickle_keeps_requires_grad_and_attributes():
    t = mt.arange(3.0).requires_grad_()
    t.note = "x"
    g = pickle.loads(pickle.dumps(t))
    assert g.requires_grad and g.is_leaf and g.note == "x" and g.tolist() == [0.0, 1.0, 2.0]
    m = pickle.loads(pickle.dumps(mt.empty(2, 3, device="meta")))
    assert m.device.type == "meta" and tuple(m.shape) == (2, 3)


def test_copy_shares_deepcopy_copies():
    t = mt.arange(4.0).requires_grad_()
    c = copy.copy(t)
    assert c.requires_grad and c.data_ptr() == t.data_ptr()
    t.grad = mt.ones(4)
    d = copy.deepcopy(t)
    assert d.requires_grad and d.data_ptr() != t.data_ptr() and d.tolist() == t.tolist()
    assert d.grad.tolist() == [1.0] * 4 and d.grad.data_ptr() != t.grad.data_ptr()
    w = mt.arange(6.0).reshape(2, 3)
    a, b, a2 = copy.deepcopy([w, w.t(), w])
    assert a is a2 and b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() != w.data_ptr()
    b[0, 1] = 50.0
    assert a[1, 0].item() == 50.0 and w[1, 0].item() == 3.0
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(t * 2)


def test_pickle_and_copy_of_parameters():
    Parameter = getattr(mt.nn, "Parameter", None)
    if Parameter is None:
        pytest.skip("nn.Parameter is provided by the nn package")
    p = Parameter(mt.ones(2))
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert isinstance(q, Parameter) and q.requires_grad and q.tolist() == [1.0, 1.0]


def test_dlpack_ignores_other_libraries_ctypes_settings():
    # dill sets argtypes on ctypes.pythonapi's shared capsule functions process-wide
    import ctypes
    api = ctypes.pythonapi
    saved = {f: getattr(api, f).argtypes for f in ("PyCapsule_IsValid", "PyCapsule_GetPointer")}
    try:
        for f in saved:
            getattr(api, f).argtypes = (ctypes.py_object, ctypes.c_char_p)
        a = np.arange(6.0).reshape(2, 3)
        assert mt.from_dlpack(a).tolist() == a.tolist()
    finally:
        for f, v in saved.items():
            getattr(api, f).argtypes = v
