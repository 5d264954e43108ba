import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "distributed"))
import build_gloo  # noqa: E402  (only asked whether Gloo is installed)
import build_mpi  # noqa: E402  (only asked whether MPI is installed)

# _C always; the Gloo engine where libgloo-dev is installed (torch.distributed.is_gloo_available()),
# the MPI engine where libopenmpi-dev is (is_mpi_available())
modules = ["csrc/build_ffi.py:ffibuilder"]
if build_gloo.found():
    modules.append("csrc/distributed/build_gloo.py:ffibuilder")
if build_mpi.found():
    modules.append("csrc/distributed/build_mpi.py:ffibuilder")
setup(cffi_modules=modules)
