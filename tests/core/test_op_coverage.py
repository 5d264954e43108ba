"""PyTorch 2.13's public op surface (torch, Tensor, nn.functional, linalg, special, fft) against ours.

Every in-scope name must exist, except those in tests/fixtures/op_surface_missing.json, the gaps
still open: a name that goes missing fails, and so does a listed name that now exists (rewrite the
list with `python tools/op_coverage.py --missing`), so the list only shrinks. Out-of-scope families
(sparse, quantized, backend-specific, TorchScript internals) are tools/op_coverage.py's OUT_OF_SCOPE.
"""
import importlib.util
import json
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_spec = importlib.util.spec_from_file_location("op_coverage", os.path.join(ROOT, "tools", "op_coverage.py"))
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)

with open(cov.MISSING) as f:
    KNOWN_MISSING = json.load(f)
ROWS = cov.report()


@pytest.mark.parametrize("ns", cov.NAMESPACES)
def test_no_in_scope_name_goes_missing(ns):
    scope, have, _ = ROWS[ns]
    missing = set(scope) - set(have)
    assert not missing - set(KNOWN_MISSING[ns]), f"torch {ns} names missing: {sorted(missing - set(KNOWN_MISSING[ns]))}"


@pytest.mark.parametrize("ns", cov.NAMESPACES)
def test_known_gaps_list_is_current(ns):
    scope, have, _ = ROWS[ns]
    closed = set(KNOWN_MISSING[ns]) & set(have)
    assert not closed, f"{sorted(closed)} exist now: run python tools/op_coverage.py --missing"
