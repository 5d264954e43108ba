"""FileStore: c10d's semantics and texts, and its file shared with a live PyTorch FileStore."""
import datetime
import os

import pytest

from mindtorch_v2.distributed import FileStore


def test_file_store_semantics_and_timeouts(tmp_path):
    s = FileStore(str(tmp_path / "store"), 1)
    s.set_timeout(datetime.timedelta(seconds=0.2))
    with pytest.raises(RuntimeError, match="^Timeout waiting for key: x after 200 ms$"):
        s.get("x")
    with pytest.raises(RuntimeError, match="^Wait timeout$"):
        s.wait(["x"])
    s.set("a", "1")
    assert s.add("c", 2) == 2 and s.get("c") == b"2" and s.num_keys() == 3  # with c10d's refcount/ key
    assert s.check(["a"]) and s.delete_key("a") and not s.check(["a"])
    assert (s.compare_set("k", "", "v"), s.compare_set("k", "x", "y"), s.compare_set("z", "x", "y")) == (b"v", b"v", b"x")
    s.append("k", "w")
    assert s.get("k") == b"vw" and sorted(s.list_keys()) == ["c", "k"]
    s.close()
    assert not os.path.exists(tmp_path / "store")  # the last of world_size instances removes it


def test_file_store_shared_with_pytorch(tmp_path):
    td = pytest.importorskip("torch.distributed")
    path = str(tmp_path / "store")
    ours, theirs = FileStore(path, 2), td.FileStore(path, 2)
    ours.set("from_us", b"\x00\x01")
    assert theirs.get("from_us") == b"\x00\x01"
    assert theirs.add("n", 5) == 5 and ours.add("n", 1) == 6 and theirs.get("n") == b"6"
    theirs.set("from_torch", "yes")
    assert ours.get("from_torch") == b"yes"
    ours.close()
    del theirs
    assert not os.path.exists(path)
