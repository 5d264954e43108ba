"""PyTorch 2.13's module-level API (torch.optim, nn.utils, cpu, utils.benchmark, ... : tools/module_coverage.py's
MODULES) against ours.

Every in-scope public name must exist, except those in tests/fixtures/module_surface_missing.json, the gaps
still open: a name that goes missing fails, and so does a listed name that now exists (rewrite the list with
`python tools/module_coverage.py --missing`), so the list only shrinks. Out-of-scope names (quantization,
TorchScript, other backends) are tools/module_coverage.py's OUT_OF_SCOPE, each with its reason.
"""
import importlib.util
import json
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_spec = importlib.util.spec_from_file_location("module_coverage", os.path.join(ROOT, "tools", "module_coverage.py"))
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)

with open(cov.MISSING) as f:
    KNOWN_MISSING = json.load(f)
ROWS = cov.report()


@pytest.mark.parametrize("mod", cov.MODULES)
def test_no_in_scope_name_goes_missing(mod):
    scope, have, _ = ROWS[mod]
    missing = set(scope) - set(have) - set(KNOWN_MISSING[mod])
    assert not missing, f"torch.{mod} names missing: {sorted(missing)}"


@pytest.mark.parametrize("mod", cov.MODULES)
def test_known_gaps_list_is_current(mod):
    scope, have, _ = ROWS[mod]
    closed = set(KNOWN_MISSING[mod]) & set(have)
    assert not closed, f"{sorted(closed)} exist now: run python tools/module_coverage.py --missing"


def test_out_of_scope_names_are_torch_names():
    """Each OUT_OF_SCOPE entry names something PyTorch has (a stale entry would hide nothing)."""
    theirs = cov.torch_surface()
    stale = [q for q in cov.OUT_OF_SCOPE if q.rsplit(".", 1)[1] not in theirs[q.rsplit(".", 1)[0]]]
    assert not stale, stale


def test_missing_stubs_count_as_missing():
    """A _missing.py stub (class or function) is not coverage."""
    from mindtorch_v2._missing import missing_class, missing_function
    import types
    mod = types.SimpleNamespace(A=missing_class("x.A"), f=missing_function("x.f"), g=len)
    assert [n for n in ("A", "f", "g") if cov.op_coverage.implemented(mod, n)] == ["g"]
