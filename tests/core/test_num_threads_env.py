"""The intra-op thread count at start-up follows MKL_NUM_THREADS / OMP_NUM_THREADS as PyTorch's does."""
import os
import subprocess
import sys

import pytest

# (environment, expected threads given the default of one per core)
CASES = [({}, lambda d: d), ({"OMP_NUM_THREADS": "1"}, lambda d: 1), ({"OMP_NUM_THREADS": "3"}, lambda d: min(3, d)),
         ({"OMP_NUM_THREADS": "abc"}, lambda d: d), ({"OMP_NUM_THREADS": "0"}, lambda d: d),
         ({"MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "2"}, lambda d: 1)]


def threads(module, extra):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(extra)
    out = subprocess.run([sys.executable, "-c", f"import {module}; print({module}.get_num_threads())"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


@pytest.mark.parametrize("extra,expected", CASES, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()) or "unset"
                         if isinstance(e, dict) else "")
def test_threads_from_environment(extra, expected):
    ours = threads("mindtorch_v2", extra)
    assert ours == expected(os.cpu_count())
    try:
        import torch  # noqa: F401  (the reference, when installed)
    except ImportError:
        return
    assert ours == threads("torch", extra)
