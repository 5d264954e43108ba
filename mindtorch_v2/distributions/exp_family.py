"""torch.distributions.exp_family: ExponentialFamily lives beside Distribution in distribution.py."""
from .distribution import ExponentialFamily

__all__ = ["ExponentialFamily"]
