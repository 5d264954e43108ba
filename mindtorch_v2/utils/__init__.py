"""torch.utils (only imports here: each submodule has its own owner)."""
from . import _pytree, checkpoint, data, dlpack, hooks  # noqa: F401
