import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "distributed"))
import build_gloo  # noqa: E402  (only asked whether Gloo is installed)

# _C always; the Gloo engine where libgloo-dev is installed (torch.distributed.is_gloo_available())
modules = ["csrc/build_ffi.py:ffibuilder"]
if build_gloo.found():
    modules.append("csrc/distributed/build_gloo.py:ffibuilder")
setup(cffi_modules=modules)
