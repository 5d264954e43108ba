"""tools/compat_run.py (the transformers sweep): its parsing, aggregation and file runner, on a
made-up checkout; no transformers needed."""
import importlib.util
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("compat_run", os.path.join(ROOT, "tools", "compat_run.py"))
cr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cr)

F = "tests/models/foo/test_modeling_foo.py"


def test_normalise_groups_one_cause():
    a = cr.normalise("RuntimeError: shape '[2, 7]' is invalid for input of size 14\n  more")
    b = cr.normalise("RuntimeError: shape '[3, 5]' is invalid for input of size 16")
    assert a == b == "RuntimeError: shape '[N, N]' is invalid for input of size N"
    # names that end in digits, dtypes and addresses
    assert cr.normalise("conv3d on float16 at 0x7f3a") == "conv3d on float16 at 0x…"
    assert cr.normalise("No such file: /tmp/tmpab12/x.bin") == "No such file: /tmp/…"


def test_read_log_keeps_failures_and_skips_cut_lines(tmp_path):
    log = tmp_path / "x.log"
    recs = [{"id": "a", "state": "passed", "msg": ""}, {"id": "a", "state": "failed", "msg": "teardown"},
            {"id": "b", "state": "failed", "msg": "E1"}, {"id": "b", "state": "passed", "msg": ""}]
    log.write_text("".join(json.dumps(r) + "\n" for r in recs) + '{"id": "c", "sta')
    assert cr.read_log(str(log)) == {"a": ("failed", "teardown"), "b": ("failed", "E1")}
    assert cr.read_log(str(tmp_path / "absent.log")) == {}


def _rec(status, **tests):
    return {"status": status, "note": "", "seconds": 1,
            "tests": {f"{F}::T::{k}": (v, "" if v == "passed" else f"E: {k} 12") for k, v in tests.items()}}


def test_pytorch_only_and_table():
    ref = _rec("done", t1="passed", t2="passed", t3="failed", t4="skipped", t5="passed")
    ours = _rec("timeout", t1="passed", t2="failed", t3="failed", t4="skipped")
    only = cr.pytorch_only(ref, ours)
    assert only == {f"{F}::T::t2": "E: t2 12", f"{F}::T::t5": "not run: file timeout"}
    out = cr.table([F, "tests/models/bar/test_modeling_bar.py"], lambda f: ref if f == F else None,
                   lambda f: ours)
    lines = out.split("\n")
    assert f"| {F} | 3 / 1 / 1 | 1 / 2 / 1 (timeout) | 2 |" in lines  # bar has no reference: no row
    assert "| **total (1 files)** | 3 / 1 / 1 | 1 / 2 / 1 | 2 |" in lines
    assert "- `E: t2 N` (1): foo: t2" in lines and "- `not run: file timeout` (1): foo: t5" in lines


def test_reference_round_trip():
    rec = _rec("done", t1="passed", t2="failed", t3="skipped")
    entry = cr.to_reference(rec, F)
    assert entry["tests"] == {"T::t1": "passed", "T::t2": "failed", "T::t3": "skipped"}
    assert entry["errors"] == {"T::t2": "E: t2 12"}
    back = cr.from_reference(json.loads(json.dumps(entry)), F)
    assert back["tests"][f"{F}::T::t2"] == ("failed", "E: t2 12") and back["status"] == "done"
    assert cr.counts(back["tests"]) == (1, 1, 1)


def test_expand_and_shard(tmp_path):
    for p in ["tests/models/foo/test_modeling_foo.py", "tests/models/bar/test_modeling_bar.py",
              "tests/utils/test_u.py", "tests/utils/sub/test_v.py", "tests/utils/helper.py"]:
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("")
    c = str(tmp_path)
    assert cr.expand(c, []) == ["tests/models/bar/test_modeling_bar.py", F]
    assert cr.expand(c, ["foo", "tests/utils"]) == [F, "tests/utils/sub/test_v.py", "tests/utils/test_u.py"]
    files = list("abcde")
    assert cr.shard(files, "1/2") == ["a", "c", "e"] and cr.shard(files, "2/2") == ["b", "d"]
    with pytest.raises(SystemExit):
        cr.shard(files, "0/2")
    with pytest.raises(SystemExit):
        cr.expand(c, ["tests/nothing_*.py"])


def test_run_file_streams_outcomes_and_times_out(tmp_path):
    pytest.importorskip("pytest_timeout")  # run_file passes --timeout
    (tmp_path / "test_x.py").write_text(
        "import time, pytest\n"
        "def test_ok(): pass\n"
        "def test_bad(): raise ValueError('bad 3\\nsecond line')\n"
        "@pytest.mark.skip(reason='why')\ndef test_skip(): pass\n"
        "def test_zz_hang(): time.sleep(300)\n")
    rec = cr.run_file(str(tmp_path), "test_x.py", False, 8, str(tmp_path / "out" / "x.log"))
    assert rec["status"] == "timeout"
    assert rec["tests"] == {"test_x.py::test_ok": ("passed", ""), "test_x.py::test_bad": ("failed", "ValueError: bad 3"),
                            "test_x.py::test_skip": ("skipped", "Skipped: why")}


def test_run_file_with_another_python_and_path(tmp_path):
    pytest.importorskip("pytest_timeout")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "extra_mod.py").write_text("VALUE = 7\n")
    (tmp_path / "test_y.py").write_text(
        "import sys, extra_mod\n"
        "def test_path(): assert extra_mod.VALUE == 7\n"
        f"def test_python(): assert sys.executable == {sys.executable!r}\n")
    rec = cr.run_file(str(tmp_path), "test_y.py", False, 120, str(tmp_path / "out" / "y.log"),
                      python=sys.executable, pythonpath=str(lib))
    assert rec["status"] == "done"
    assert rec["tests"] == {"test_y.py::test_path": ("passed", ""), "test_y.py::test_python": ("passed", "")}
    env = cr.child_env(True, os.pathsep.join([str(lib), ""]))
    assert env["PYTHONPATH"].split(os.pathsep) == [cr.ROOT, str(lib), cr.TOOLS]
