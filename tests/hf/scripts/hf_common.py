"""Shared by the scripts: each runs once under real PyTorch and once under mindtorch_v2 (torch_proxy),
offline, and prints one JSON line that tests/hf/test_hf_libraries.py compares."""
import json
import os
import sys

os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
WORK = sys.argv[1] if len(sys.argv) > 1 else "."


def emit(result):
    import torch
    result["_library"] = torch.__name__  # the test checks that each side ran the library it meant to
    print("RESULT " + json.dumps(result))


def tolist(t):
    """Values of a tensor as nested lists of Python floats (reduced precision widened)."""
    return t.detach().float().tolist() if t.is_floating_point() else t.tolist()
