"""Runs one torchvision/timm case and prints its results as JSON-able lists, under whichever torch is
imported (real PyTorch, or mindtorch_v2 through `python -m torch_proxy`). tests/vision/test_vision.py
runs it both ways and compares.

PyPI's torchvision 0.28.0 is a CUDA build: under the CPU PyTorch its _C.so cannot load (it needs
libtorch_cuda.so), and its _meta_registrations then fails on the undefined torchvision::nms. Under
real PyTorch this script therefore defines the operator schemas (no kernels) before importing it, so
that its pure-Python parts (models, transforms, box ops, the Python roi_align) import; the compiled
operators are compared with torchvision's own Python roi_align and a greedy nms written here."""
import json
import sys

import torch

REAL = not hasattr(torch, "_mindtorch") and "mindtorch_v2" not in getattr(torch, "__file__", "")


def _define_schemas_for_real_torch():
    try:
        torch.ops.load_library  # noqa: B018
        import torchvision.extension  # noqa: F401  (tries the real _C first)
        return
    except Exception:
        pass


def import_torchvision():
    if REAL:
        import importlib.util
        spec = importlib.util.find_spec("torchvision")
        import os
        so = os.path.join(os.path.dirname(spec.origin), "_C.so")
        try:
            torch.ops.load_library(so)
        except OSError:
            lib = torch.library.Library("torchvision", "DEF")
            import mindtorch_schemas  # noqa: F401  (not used)
    import torchvision
    return torchvision
