"""torch.distributed.launcher: launching workers from Python (what torchrun and accelerate call)."""
from .api import LaunchConfig, elastic_launch, launch_agent  # noqa: F401
