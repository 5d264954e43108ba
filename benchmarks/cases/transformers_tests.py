"""Wall time of transformers' own BERT test file, tests/models/bert/test_modeling_bert.py, run by
pytest under each library: PyTorch (`python -m pytest`) and mindtorch_v2 behind the torch proxy
(`python -m torch_proxy -m pytest`). One iteration is one whole pytest run in a new process.

It needs the test files of the installed transformers release and their test dependencies (see
docs/COMPATIBILITY.md, "How it is run"): set TRANSFORMERS_TESTS to the checkout's root. The case
is registered only then. A run that does not pass raises, with pytest's last lines."""
import os
import subprocess
import sys

from ..registry import case, skip

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_CHECKOUT = os.environ.get("TRANSFORMERS_TESTS", "")
_FILE = "tests/models/bert/test_modeling_bert.py"


def _pytest_run(lib_name):
    proxy = ["-m", "torch_proxy"] if lib_name == "mindtorch_v2" else []
    cmd = [sys.executable, *proxy, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--timeout", "600", _FILE]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=_ROOT if proxy else "")

    def run():
        r = subprocess.run(cmd, cwd=_CHECKOUT, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-2000:]}")
    return run


_NAME = "transformers BERT test file (pytest, wall time)"
if _CHECKOUT and os.path.isfile(os.path.join(_CHECKOUT, _FILE)):
    case(_NAME, rounds=3, once=True)(lambda lib: _pytest_run(lib.__name__))
else:
    skip(_NAME, f"set TRANSFORMERS_TESTS to a checkout of transformers' tests (holding {_FILE})")
