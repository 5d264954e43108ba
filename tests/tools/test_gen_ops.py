"""tools/gen_ops.py: the generated files are current, and the table's checks catch a bad line."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_ops  # noqa: E402


def test_generated_files_are_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_ops.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _table(tmp_path, text):
    p = tmp_path / "ops.tbl"
    p.write_text(text)
    return gen_ops.read_table(str(p))


def test_families_number_members_in_line_order(tmp_path):
    _, _, fams = _table(tmp_path, "family red mt_red RED names_red names_red_bwd\n"
                                  "red SUM sum sum_backward   # a comment\nred MEAN mean mean_backward\n"
                                  "family sc mt_sc SC\nsc - \nsc ADD\n")
    assert [m[0] for m in fams["red"]["members"]] == ["MT_RED_SUM", "MT_RED_MEAN"]
    assert [m[0] for m in fams["sc"]["members"]] == ["MT_SC", "MT_SC_ADD"]
    enum = gen_ops.gen_selectors(fams)
    assert "MT_RED_SUM = 0, /* a comment */" in enum and "MT_NUM_RED = 2" in enum
    assert ('const char *const mt__names_red_bwd[MT_NUM_RED] = {"sum_backward", "mean_backward"};'
            in gen_ops.gen_names_c(fams))


@pytest.mark.parametrize("text, message", [
    ("family red mt_red RED names_red\nred SUM sum\nred SUM sum\n", "MT_RED_SUM is declared twice"),
    ("family red mt_red RED names_red\nred SUM\n", "gives its constant and 1 name(s)"),
    ("family red mt_red RED\nfamily red mt_red2 RED2\n", "expected a new family"),
    ("abs unary num same fmi real\nabs unary num same fmi real\n", "abs is declared twice"),
])
def test_bad_lines_are_rejected(tmp_path, text, message):
    with pytest.raises(SystemExit, match=re.escape(message)):
        _table(tmp_path, text)


def test_the_core_sees_every_family_count():
    """mt.h's counts (the cdef) match the table: a family grows by its line alone"""
    from mindtorch_v2._C import lib
    _, _, fams = gen_ops.read_table()
    for fam in fams.values():
        assert getattr(lib, f"MT_NUM_{fam['prefix']}") == len(fam["members"])
        for i, (const, _, _) in enumerate(fam["members"]):
            assert getattr(lib, const) == i
