"""save/load: PyTorch's zip and legacy formats, both directions, against committed fixtures written by
real PyTorch (tests/fixtures/make_serialization_fixtures.py) and live PyTorch when installed."""
import importlib.util
import io
import json
import mmap as _mmap
import os
import pathlib
import struct

import pytest

import mindtorch_v2 as mt
from mindtorch_v2 import serialization
from mindtorch_v2._archive import ArchiveReader, ArchiveWriter

_HERE = os.path.dirname(os.path.abspath(__file__))
_FIX = os.path.join(_HERE, "..", "fixtures")
_spec = importlib.util.spec_from_file_location("make_serialization_fixtures",
                                               os.path.join(_FIX, "make_serialization_fixtures.py"))
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)
FIXDIR = G.OUT
BUILDERS = ["tensors", "nested", "params", "meta"]


def desc(L, obj):
    return json.loads(json.dumps(G.describe(L, obj)))


def roundtrip(obj, **kw):
    b = io.BytesIO()
    mt.save(obj, b, **kw)
    b.seek(0)
    return mt.load(b, weights_only=False)


# ---- fixtures written by PyTorch (no torch needed) -----------------------------------------------

@pytest.mark.parametrize("fname", list(G.FILES))
def test_fixture_loads_as_pytorch_wrote_it(fname):
    expected = G.load_expected()[fname]
    assert desc(mt, mt.load(os.path.join(FIXDIR, fname))) == expected
    assert desc(mt, mt.load(os.path.join(FIXDIR, fname), weights_only=False)) == expected


def test_fixture_tied_weights_stay_tied():
    d = mt.load(os.path.join(FIXDIR, "tensors.pt"))
    assert d["tied"] is d["weight"]
    d["weight"][1, 0] = 123.0
    assert d["weight_t"][0, 1].item() == 123.0 and d["row"][0].item() == 123.0
    assert d["strided"].untyped_storage().data_ptr() == d["weight"].untyped_storage().data_ptr()
    assert type(d).__name__ == "OrderedDict"


def test_fixture_legacy_format_keeps_sharing():
    d = mt.load(os.path.join(FIXDIR, "legacy.pt"))
    assert d["weight_t"].untyped_storage().data_ptr() == d["weight"].untyped_storage().data_ptr()
    assert d["bfloat16"].dtype == mt.bfloat16


# ---- our own round trips -----------------------------------------------------------------------

@pytest.mark.parametrize("name", BUILDERS)
@pytest.mark.parametrize("zip_format", [True, False])
def test_roundtrip(name, zip_format):
    if name == "meta" and not zip_format:
        pytest.skip("meta tensors carry no storage; same path in both formats")
    obj = G.build(mt, name)
    assert desc(mt, roundtrip(obj, _use_new_zipfile_serialization=zip_format)) == desc(mt, obj)


def test_paths_and_file_objects(tmp_path):
    t = mt.arange(5, dtype=mt.int16)
    for target in (str(tmp_path / "a.pt"), tmp_path / "b.pt"):
        mt.save(t, target)
        assert mt.load(target).tolist() == t.tolist()
    with open(tmp_path / "c.pt", "wb") as f:
        f.write(b"junk")  # a checkpoint at a non-zero offset of a file object
        mt.save(t, f)
    with open(tmp_path / "c.pt", "rb") as f:
        f.read(4)
        assert mt.load(f).tolist() == t.tolist()
    with open(tmp_path / "a.pt", "rb") as f:
        assert f.read(4) == b"PK\x03\x04"


def test_archive_layout(tmp_path):
    mt.save({"x": mt.ones(3)}, tmp_path / "my.model.pt")
    with open(tmp_path / "my.model.pt", "rb") as f:
        r = ArchiveReader(f)
        assert r.prefix == "my.model/"
        assert r.get_all_records() == ["data.pkl", ".format_version", ".storage_alignment", "byteorder", "data/0",
                                       "version", ".data/serialization_id"]
        assert r.get_record("version") == b"3\n" and r.get_record("byteorder") == b"little"
        assert r.get_record_offset("data/0") % 64 == 0
        assert len(r.serialization_id()) == 40
    with pytest.raises(RuntimeError, match="invalid file name"):
        mt.save(mt.ones(1), str(tmp_path / ".pt"))
    with pytest.raises(AttributeError, match="file-like object with a 'write' attribute"):
        mt.save(mt.ones(1), 3)


def test_views_of_one_storage_as_different_dtypes_are_refused():
    t = mt.arange(4, dtype=mt.float32)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        mt.save([t, t.view(mt.int32)], io.BytesIO())


def test_storages_and_untyped_storage_roundtrip():
    s = mt.arange(6, dtype=mt.uint8).untyped_storage()
    t = mt.arange(3, dtype=mt.uint8)
    got = roundtrip([s, t.untyped_storage(), t])
    # as in PyTorch, a loaded storage comes back as a TypedStorage (uint8 for an untyped one)
    assert isinstance(got[0], mt.TypedStorage) and got[0].dtype == mt.uint8 and got[0].tolist() == list(range(6))
    assert got[1].data_ptr() == got[2].untyped_storage().data_ptr()


def test_big_endian_checkpoint_is_byteswapped():
    vals = [1.5, -2.25, 3.0]
    b = io.BytesIO()
    w = ArchiveWriter(b)
    src = io.BytesIO()
    mt.save(mt.tensor(vals, dtype=mt.float64), src)
    src.seek(0)
    r = ArchiveReader(src)
    w.write_record("data.pkl", r.get_record("data.pkl"))
    w.write_record("byteorder", b"big")
    w.write_record("data/0", struct.pack(">3d", *vals))
    w.write_end_of_file()
    b.seek(0)
    assert mt.load(b).tolist() == vals


# ---- map_location and mmap ------------------------------------------------------------------------

def test_map_location(tmp_path):
    path = os.path.join(FIXDIR, "tensors.pt")
    ref = mt.load(path)["float32"].tolist()
    seen = []
    for loc in ("cpu", mt.device("cpu"), {"cpu": "cpu"}, lambda s, l: seen.append(l) or s, lambda s, l: None):
        assert mt.load(path, map_location=loc)["float32"].tolist() == ref
    assert seen and set(seen) == {"cpu"}
    meta = mt.load(path, map_location="meta")
    assert meta["float32"].device.type == "meta" and tuple(meta["weight_t"].shape) == (4, 3)
    assert meta["weight_t"].stride() == (1, 4)
    with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
        mt.load(path, map_location="cuda:0")


def _mapped_ranges(path):
    real = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith(real):
                lo, hi = line.split()[0].split("-")
                yield int(lo, 16), int(hi, 16)


def test_mmap_is_zero_copy_and_private(tmp_path):
    path = str(tmp_path / "m.pt")
    mt.save({"a": mt.arange(1000.0), "b": mt.ones(4, dtype=mt.int16)}, path)
    d = mt.load(path, mmap=True)
    assert d["a"][10].item() == 10.0
    ptr = d["a"].data_ptr()
    assert any(lo <= ptr < hi for lo, hi in _mapped_ranges(path)), "tensor is not backed by the mapped file"
    d["a"][0] = 42.0  # MAP_PRIVATE: copy on write, the file keeps its bytes
    assert mt.load(path)["a"][0].item() == 0.0


def test_mmap_shared_writes_through(tmp_path):
    path = str(tmp_path / "m.pt")
    mt.save(mt.zeros(8), path)
    with serialization.set_default_mmap_options(_mmap.MAP_SHARED):
        t = mt.load(path, mmap=True)
        t[3] = 7.0
    del t
    assert mt.load(path)[3].item() == 7.0


def test_mmap_errors(tmp_path):
    path = str(tmp_path / "m.pt")
    mt.save(mt.zeros(2), path)
    with open(path, "rb") as f, pytest.raises(ValueError, match="f must be a file path"):
        mt.load(f, mmap=True)
    mt.save(mt.zeros(2), path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        mt.load(path, mmap=True)


def test_nonseekable_file_is_refused():
    class Pipe(io.RawIOBase):
        def readable(self):
            return True

        def seek(self, *a):
            raise io.UnsupportedOperation("seek")

    with pytest.raises(io.UnsupportedOperation, match="You can only torch.load from a file that is seekable"):
        mt.load(Pipe())


# ---- live differential against PyTorch ----------------------------------------------------------------

@pytest.mark.parametrize("name", BUILDERS)
@pytest.mark.parametrize("zip_format", [True, False])
def test_our_file_loads_in_torch(name, zip_format):
    torch = pytest.importorskip("torch")
    if name == "meta" and not zip_format:
        pytest.skip("meta tensors need the zip format path only")
    b = io.BytesIO()
    mt.save(G.build(mt, name), b, _use_new_zipfile_serialization=zip_format)
    b.seek(0)
    got = torch.load(b)  # weights_only=True: our pickle names only PyTorch's allowlisted globals
    want = desc(mt, G.build(mt, name))
    if name == "params" and not hasattr(mt.nn, "Parameter"):
        want = desc(torch, G.build(torch, name))
    assert desc(torch, got) == want


@pytest.mark.parametrize("name", BUILDERS)
@pytest.mark.parametrize("zip_format", [True, False])
def test_torch_file_loads_in_ours(name, zip_format):
    torch = pytest.importorskip("torch")
    if name == "meta" and not zip_format:
        pytest.skip("meta tensors need the zip format path only")
    b = io.BytesIO()
    torch.save(G.build(torch, name), b, _use_new_zipfile_serialization=zip_format)
    for weights_only in (True, False):
        b.seek(0)
        assert desc(mt, mt.load(b, weights_only=weights_only)) == desc(torch, G.build(torch, name))


@pytest.mark.parametrize("name", ["tensors", "nested", "meta"])
def test_files_are_byte_identical_to_torch(name, tmp_path):
    torch = pytest.importorskip("torch")
    ours, theirs = io.BytesIO(), io.BytesIO()
    mt.save(G.build(mt, name), ours)
    torch.save(G.build(torch, name), theirs)
    assert ours.getvalue() == theirs.getvalue()
    os.makedirs(tmp_path / "t")
    mt.save(G.build(mt, name), tmp_path / "ckpt.pt")
    torch.save(G.build(torch, name), tmp_path / "t" / "ckpt.pt")
    assert (tmp_path / "ckpt.pt").read_bytes() == (tmp_path / "t" / "ckpt.pt").read_bytes()


def test_torch_mmap_of_our_file(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "x.pt"
    mt.save({"a": mt.arange(100.0), "b": mt.tensor([1, 2], dtype=mt.bfloat16)}, path)
    d = torch.load(path, mmap=True)
    assert d["a"][99].item() == 99.0 and d["b"].dtype == torch.bfloat16
    d2 = mt.load(path, mmap=True)
    t_path = tmp_path / "t.pt"
    torch.save({"a": torch.arange(100.0)}, t_path)
    assert mt.load(t_path, mmap=True)["a"][99].item() == 99.0
    assert d2["b"].tolist() == [1.0, 2.0]


def test_crc_off_files_load_in_both(tmp_path):
    torch = pytest.importorskip("torch")
    serialization.set_crc32_options(False)
    try:
        b = io.BytesIO()
        mt.save(mt.arange(3.0), b)
    finally:
        serialization.set_crc32_options(True)
    b.seek(0)
    assert torch.load(b).tolist() == [0.0, 1.0, 2.0]
    b.seek(0)
    assert mt.load(b).tolist() == [0.0, 1.0, 2.0]


def test_pathlike_is_accepted():
    assert isinstance(pathlib.Path(FIXDIR) / "tensors.pt", os.PathLike)
    assert "float32" in mt.load(pathlib.Path(FIXDIR) / "tensors.pt")


def test_legacy_tar_format(tmp_path):
    """PyTorch's oldest (tar) format: storages, tensors and pickle members (built here as it wrote them)."""
    import pickle
    import tarfile

    def pickled(obj):
        b = io.BytesIO()
        serialization._TorchPickler(b, 2, lambda o: None).dump(obj)  # torch.FloatStorage as PyTorch names it
        return b.getvalue()

    storages = pickled(1) + pickled(("s0", "cpu", mt.FloatStorage)) + (4).to_bytes(8, "little") + \
        struct.pack("<4f", 1.0, 2.0, 3.0, 4.0) + pickled([])
    tensors = pickled(1) + pickled((7, "s0", None)) + struct.pack("<ii", 2, 0) + struct.pack("<qqqqq", 2, 2, 1, 2, 0)

    class Ref:  # the pickle names tensors by persistent id
        def __reduce__(self):
            return (int, (0,))

    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return "7" if isinstance(obj, Ref) else None

    b = io.BytesIO()
    P(b, protocol=2).dump({"w": Ref()})
    path = tmp_path / "old.tar"
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("storages", storages), ("tensors", tensors), ("pickle", b.getvalue())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    got = mt.load(path, weights_only=False)
    assert got["w"].tolist() == [[1.0, 3.0], [2.0, 4.0]]
    with pytest.raises(RuntimeError, match="Cannot use ``weights_only=True`` with files saved in the legacy .tar"):
        mt.load(path)
