"""torch.utils (only imports here: each submodule has its own owner)."""
from . import _pytree, _python_dispatch, checkpoint, data, dlpack, flop_counter, hooks  # noqa: F401
