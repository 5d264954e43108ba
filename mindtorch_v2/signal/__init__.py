"""torch.signal."""
from . import windows

__all__ = ["windows"]
