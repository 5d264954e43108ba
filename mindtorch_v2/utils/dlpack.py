"""torch.utils.dlpack: DLPack capsules in and out (implemented in mindtorch_v2/_dlpack.py)."""
from .._dlpack import DLDeviceType, from_dlpack, to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
