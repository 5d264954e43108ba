"""Views, indexing, creation and protocol outcomes against goldens recorded from real PyTorch
(tests/fixtures/view_goldens.json, written by tests/fixtures/make_view_goldens.py). Runs with or
without torch installed."""
import importlib.util
import math
import os

import mindtorch_v2 as mt

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_view_goldens",
                                               os.path.join(_HERE, "..", "fixtures", "make_view_goldens.py"))
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)


def _same(a, b):
    """Outcome equality: NaN equals NaN; strides compared on dims of size > 1 of non-empty tensors
    (other strides are layout details PyTorch itself does not fix)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        if "stride" in a:
            keep = [i for i, n in enumerate(b["shape"]) if n > 1] if 0 not in b["shape"] else []
            if len(a["stride"]) != len(b["stride"]) or any(a["stride"][i] != b["stride"][i] for i in keep):
                return False
            return all(_same(a[k], b[k]) for k in a if k != "stride")
        return all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def test_goldens():
    doc = G.load_goldens()
    failures = []
    for rec in doc["records"]:
        got = G.run_case(mt, rec["case"])
        if not _same(got, rec["outcome"]):
            failures.append(f"{rec['case']}\n  torch: {str(rec['outcome'])[:300]}\n  mt:    {str(got)[:300]}")
    assert not failures, f"{len(failures)} of {len(doc['records'])} golden cases differ:\n" + "\n".join(failures[:20])


def test_goldens_are_current():
    """The fixture holds exactly the cases the generator lists (regenerate it after editing them)."""
    assert [r["case"] for r in G.load_goldens()["records"]] == G.golden_cases()
