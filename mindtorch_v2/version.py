"""torch.version: the PyTorch release whose API mindtorch_v2 implements; no CUDA/ROCm build."""
__version__ = "2.13.0"
debug = False
cuda = None
hip = None
xpu = None
git_version = "unknown"
