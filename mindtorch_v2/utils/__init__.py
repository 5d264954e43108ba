from . import _pytree, checkpoint  # noqa: F401
"""torch.utils (only imports here: each submodule has its own owner)."""
from . import dlpack  # noqa: F401
