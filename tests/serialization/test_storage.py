"""Storages (UntypedStorage, TypedStorage, legacy <Type>Storage), Tensor.set_, view(dtype), data_ptr,
asarray; differential against PyTorch where it is installed."""
import array
import io
import os
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt


def outcome(L, code, **ns):
    """What running code (an expression) gives in library L: a plain encoding, or the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval(code, {"L": L, "np": np, "array": array, **ns})
    except Exception as e:  # noqa: BLE001 - the outcome is whatever PyTorch does
        return ("error", next(k for k in type(e).__mro__ if k.__module__ == "builtins").__name__, str(e))
    if isinstance(r, L.Tensor):
        vals = (r.float() if str(r.dtype) in ("torch.float16", "torch.bfloat16") else r).tolist()
        return ("tensor", str(r.dtype), list(r.shape), list(r.stride()), r.storage_offset(), vals)
    return ("value", r if isinstance(r, (int, float, str, bool, list, tuple, type(None))) else repr(r))


CASES = [
    # untyped storages
    "L.arange(10, dtype=L.uint8).untyped_storage()[3]",
    "L.arange(10, dtype=L.uint8).untyped_storage()[-1]",
    "L.arange(10, dtype=L.uint8).untyped_storage()[20]",
    "L.arange(10, dtype=L.uint8).untyped_storage()[1:8:2]",
    "L.arange(10, dtype=L.uint8).untyped_storage()[2:5].tolist()",
    "L.arange(10, dtype=L.uint8).untyped_storage()[8:3].nbytes()",
    "L.arange(6.0).untyped_storage().nbytes()",
    "len(L.arange(6, dtype=L.int16)[2:].untyped_storage())",
    "L.arange(3.0).untyped_storage().size()",
    "repr(L.arange(3, dtype=L.uint8).untyped_storage())",
    "repr(L.arange(3.0).storage())",
    "L.UntypedStorage(0).data_ptr()",
    "L.UntypedStorage(4).fill_(7).tolist()",
    "L.UntypedStorage([1, 2, 255]).tolist()",
    "L.UntypedStorage(3).element_size()",
    "L.UntypedStorage(2, device='meta').nbytes()",
    "repr(L.UntypedStorage(2, device='meta'))",
    "L.UntypedStorage(3).copy_(L.UntypedStorage(4))",
    "L.arange(4, dtype=L.uint8).untyped_storage().clone().tolist()",
    "L.UntypedStorage(5).type()",
    "L.tensor([1.5, 2.5]).untyped_storage().float().tolist()",
    "L.tensor([1, 2], dtype=L.uint8).untyped_storage().float().tolist()",
    # typed storages
    "L.arange(4.0).storage().size()",
    "L.arange(4.0).storage()[2]",
    "L.arange(4.0).storage().tolist()",
    "L.arange(4.0).storage().dtype",
    "L.arange(4, dtype=L.bfloat16).storage()._pickle_storage_type()",
    "L.FloatStorage(3).size()",
    "L.FloatStorage([1, 2]).tolist()",
    "isinstance(L.arange(2.0).storage(), L.FloatStorage)",
    "isinstance(L.arange(2).storage(), L.FloatStorage)",
    "L.LongStorage(2).dtype",
    "L.arange(4.0).storage().type()",
    "L.arange(4.0).storage()[1:3].tolist()",
    "L.arange(4.0).storage().nbytes()",
    "L.arange(4.0).storage().element_size()",
    # set_
    "L.zeros(2).set_(L.arange(6.0).untyped_storage(), 1, (2, 2), (1, 2))",
    "L.zeros(2).set_(L.arange(6.0).untyped_storage())",
    "L.zeros(2).set_(L.arange(6.0).storage(), 2, (3,))",
    "L.zeros(2).set_(L.arange(6.0).reshape(2, 3).t())",
    "L.zeros(2).set_()",
    "L.zeros(2).set_(L.zeros(2, dtype=L.int64))",
    "L.zeros(2).set_(L.zeros(2, dtype=L.int64).storage())",
    "L.zeros(2, dtype=L.bfloat16).set_(L.zeros(2, dtype=L.float16))",
    "L.ones(2, requires_grad=True).set_(L.zeros(2))",
    "L.zeros(2).set_(L.arange(4, dtype=L.uint8).untyped_storage())",
    # view(dtype) and data_ptr
    "L.tensor([1.0, -2.0]).view(L.int32)",
    "L.tensor([1065353216, -1073741824], dtype=L.int32).view(L.float32)",
    "L.tensor([0, 63, 128, 191], dtype=L.uint8).view(L.bfloat16)",
    "L.tensor([[1.0, 2.0]], dtype=L.float64).view(L.int16)",
    "L.arange(6, dtype=L.int16).view(L.float32)",
    "L.arange(6, dtype=L.int16).reshape(2, 3).view(L.int32)",
    "L.arange(4.0)[1:].view(L.float64)",
    "L.tensor(1.0).view(L.int16)",
    "(lambda b: b[2:].data_ptr() - b.data_ptr())(L.arange(6.0))",
    "(lambda b: b.t()[1].data_ptr() - b.data_ptr())(L.arange(6.0).reshape(2, 3))",
    "L.zeros(0).data_ptr()",
    # asarray
    "L.asarray([1, 2, 3])",
    "L.asarray([[1.0, 2.0], [3, 4]], dtype=L.float16)",
    "L.asarray([1, 2], copy=False)",
    "L.asarray(3.5)",
    "L.asarray(np.float32(2))",
    "L.asarray([np.float32(1), 2])",
    "L.asarray(np.arange(3.0), dtype=L.float32)",
    "L.asarray(np.arange(3.0), dtype=L.float32, copy=False)",
    "L.asarray(L.arange(3.0), dtype=L.float64, copy=False)",
    "L.asarray(L.arange(4.0).untyped_storage())",
    "L.asarray(L.arange(4.0).untyped_storage(), dtype=L.int16)",
    "L.asarray(L.arange(4.0).storage())",
    "L.asarray(L.arange(4.0).storage(), dtype=L.int32)",
    "L.asarray(L.arange(4.0).untyped_storage()[4:12], dtype=L.float32)",
    "L.asarray(bytearray(8))",
    "L.asarray(b'abcd')",
    "L.asarray(array.array('f', [1, 2]))",
    "L.asarray(bytearray(3), dtype=L.float32)",
    "L.asarray(np.array(2.0))",
]


@pytest.mark.parametrize("code", CASES)
def test_matches_torch(code):
    torch = pytest.importorskip("torch")
    assert outcome(mt, code) == outcome(torch, code)


def test_storage_identity_and_sharing():
    t = mt.arange(12.0).reshape(3, 4)
    s = t.untyped_storage()
    assert s.data_ptr() == t.data_ptr() and s.nbytes() == 48
    assert t.t().untyped_storage().data_ptr() == s.data_ptr()
    assert t[1].untyped_storage().nbytes() == 48
    sl = s[16:32]
    assert sl.data_ptr() == s.data_ptr() + 16
    sl[0] = 0xFF  # writes through to the tensor's bytes
    assert t.view(mt.uint8)[1, 0].item() == 0xFF
    c = s.clone()
    c[1] = 1
    assert s[1] == 0
    assert mt.arange(4).requires_grad_(False).untyped_storage() is not None


def test_views_share_through_set_and_asarray():
    base = mt.arange(6.0)
    x = mt.empty(0).set_(base.untyped_storage(), 2, (2,), (1,))
    x[0] = 100.0
    assert base[2].item() == 100.0
    y = mt.asarray(base.untyped_storage(), dtype=mt.float32)
    assert y.data_ptr() == base.data_ptr()
    a = np.arange(4.0)
    z = mt.asarray(a)
    z[0] = 9.0
    assert a[0] == 9.0
    buf = bytearray(8)
    w = mt.asarray(buf)
    w[1] = 1.0
    assert bytes(buf[4:]) == np.float32(1.0).tobytes()
    t = mt.arange(3.0)
    assert mt.asarray(t) is t and mt.asarray(t, copy=True).data_ptr() != t.data_ptr()


def test_set_keeps_leaf_requires_grad_under_no_grad():
    p = mt.ones(2, requires_grad=True)
    with mt.no_grad():
        p.set_(mt.arange(3.0))
    assert p.requires_grad and p.is_leaf and p.tolist() == [0.0, 1.0, 2.0]


def test_from_file(tmp_path):
    path = str(tmp_path / "f.bin")
    with open(path, "wb") as f:
        f.write(bytes(range(16)))
    s = mt.UntypedStorage.from_file(path, False, 16)
    assert s.tolist() == list(range(16)) and s.filename is None
    s[0] = 99  # private mapping: the file is untouched
    with open(path, "rb") as f:
        assert f.read(1) == b"\x00"
    t = mt.empty(0, dtype=mt.int32).set_(s, 1, (3,))
    assert t.tolist() == [int.from_bytes(bytes(range(4 * i, 4 * i + 4)), "little") for i in (1, 2, 3)]
    sh = mt.UntypedStorage.from_file(str(tmp_path / "new.bin"), True, 8)  # created and sized
    assert os.path.getsize(tmp_path / "new.bin") == 8 and sh.filename == str(tmp_path / "new.bin")
    sh[2] = 5
    del sh, t, s
    with open(tmp_path / "new.bin", "rb") as f:
        assert f.read()[2] == 5
    fs = mt.FloatStorage.from_file(path, False, 4)
    assert fs.dtype == mt.float32 and fs.size() == 4


@pytest.mark.parametrize("code", [
    "L.UntypedStorage.from_file('/nonexistent/dir/x', False, 10)",
    "L.UntypedStorage.from_file(SMALL, False, 10)",
    "L.UntypedStorage.from_file(SMALL, False, 3).tolist()",
    "(lambda s: (s.filename, s.is_shared(), s.nbytes()))(L.UntypedStorage.from_file(SMALL, False, 2))",
])
def test_from_file_matches_torch(code, tmp_path):
    torch = pytest.importorskip("torch")
    small = str(tmp_path / "small.bin")
    with open(small, "wb") as f:
        f.write(b"abc")
    assert outcome(mt, code, SMALL=small) == outcome(torch, code, SMALL=small)


def test_legacy_raw_storage_io_and_byteswap():
    s = mt.tensor([1.0, 2.0]).untyped_storage()
    b = io.BytesIO()
    s._write_file(b, True, True, 4)
    assert b.getvalue()[:8] == (2).to_bytes(8, "little")
    b.seek(0)
    back = mt.UntypedStorage._new_with_file(b, 4)
    assert back.tolist() == s.tolist()
    b.seek(0)
    with pytest.raises(RuntimeError, match="wrong byte size"):
        mt.UntypedStorage(4)._set_from_file(b, 0, True, 4)
    x = mt.tensor([1, 256], dtype=mt.int32)
    x.untyped_storage().byteswap(mt.int32)
    assert x.tolist() == [1 << 24, 1 << 16]


def test_resize_and_meta():
    s = mt.UntypedStorage(2)
    s.resize_(6)
    assert s.nbytes() == 6
    m = mt.UntypedStorage(5, device="meta")
    assert m.device.type == "meta" and m.data_ptr() == 0 and m[1:3].nbytes() == 2
    assert mt.empty(2, 3, device="meta").untyped_storage().nbytes() == 24
