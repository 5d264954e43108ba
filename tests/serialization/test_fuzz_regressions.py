"""Inputs the load fuzzer (tools/fuzz_load.py) once failed on, replayed through every loader: each
must load or raise an error PyTorch users expect from a bad file (RuntimeError, UnpicklingError...)."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("safetensors")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGRESSIONS = os.path.join(ROOT, "tests", "serialization", "fuzz_regressions")


def test_load_fuzz_regressions_raise_ordinary_errors():
    assert os.listdir(REGRESSIONS)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fuzz_load.py"), "--replay", REGRESSIONS],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"replayed {len(os.listdir(REGRESSIONS))} inputs" in r.stdout
