"""torch.distributed.algorithms."""
from .join import Join, Joinable, JoinHook  # noqa: F401
