"""CI's fast subset of the transformers sweep (issue 24): transformers' own ModelTesterMixin over five
small models (transformers_common/subset.py) under mindtorch_v2 through the pytest plugin, against
PyTorch's outcomes: every test that passes on PyTorch passes here. PyTorch's outcomes come from
tests/fixtures/compat/transformers-4.57-subset.json, as the sweep's do (written with real PyTorch
installed by `python tests/models/test_transformers_common.py SDIST_TESTS`), so that CI runs one side.

The model tests need transformers' tests/ directory of the installed version: `.ci/run` extracts it
from the transformers sdist on PyPI into build/transformers-tests (the sdist holds the common test
modules, not the model files; the generation tests it imports are not in it, so their mixin is an
empty class here: the generation tests run in the full sweep only)."""
import importlib.util
import json
import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import compat_run  # noqa: E402

SDIST_TESTS = os.environ.get("TRANSFORMERS_SDIST_TESTS", os.path.join(ROOT, "build", "transformers-tests"))
REFERENCE = os.path.join(ROOT, "tests", "fixtures", "compat", "transformers-4.57-subset.json")
FILE = "tests/models/subset/test_modeling_subset.py"
GENERATION_STUB = ('class GenerationTesterMixin:\n'
                   '    """tests/generation is not in the transformers sdist: no generation tests in this subset"""\n')


def make_checkout(sdist_tests, dest):
    """A tree shaped as a transformers checkout: the sdist's test modules as the package `tests`, the
    generation mixin's stand-in, and the subset as tests/models/subset/test_modeling_subset.py."""
    tests = os.path.join(dest, "tests")
    os.makedirs(os.path.join(tests, "generation"))
    os.makedirs(os.path.join(tests, "models", "subset"))
    for name in os.listdir(sdist_tests):
        if name.endswith(".py"):
            shutil.copy(os.path.join(sdist_tests, name), tests)
    for pkg in ("", "generation", "models", "models/subset"):
        open(os.path.join(tests, pkg, "__init__.py"), "a").close()
    with open(os.path.join(tests, "generation", "test_utils.py"), "w") as f:
        f.write(GENERATION_STUB)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformers_common", "subset.py"),
                os.path.join(dest, FILE))
    return dest


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed")
@pytest.mark.skipif(not os.path.isfile(os.path.join(SDIST_TESTS, "test_modeling_common.py")),
                    reason=f"no transformers test modules in {SDIST_TESTS} (.ci/run extracts them from the sdist)")
def test_model_subset_passes_wherever_pytorch_passes(tmp_path):
    reference = compat_run.load_reference(REFERENCE)
    import transformers
    assert reference["meta"]["transformers"] == transformers.__version__, "rewrite the reference (see above)"
    ref = compat_run.from_reference(reference["files"][FILE], FILE)
    checkout = make_checkout(SDIST_TESTS, str(tmp_path / "checkout"))
    ours = compat_run.run_file(checkout, FILE, True, 900, str(tmp_path / "ours.log"))
    passed = [t for t, (s, _) in ref["tests"].items() if s == "passed"]
    assert len(passed) > 300, f"only {len(passed)} tests pass on PyTorch: the subset is not testing much"
    assert compat_run.pytorch_only(ref, ours) == {}
    assert set(ours["tests"]) == set(ref["tests"])


if __name__ == "__main__":  # PyTorch's outcomes into the committed reference (real PyTorch installed)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        rec = compat_run.run_file(make_checkout(sys.argv[1], os.path.join(tmp, "c")), FILE, False, 900,
                                  os.path.join(tmp, "torch.log"))
    with open(REFERENCE, "w") as f:
        json.dump({"meta": {"transformers": __import__("transformers").__version__, "source": "sdist tests/"},
                   "files": {FILE: compat_run.to_reference(rec, FILE)}}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(compat_run.counts(rec["tests"]))
