"""torch.distributed.algorithms.join: the hook and joinable interfaces as PyTorch defines them; Join
itself coordinates ranks through a process group, which mindtorch_v2 does not have."""
from abc import ABC, abstractmethod

from ..._missing import missing_class

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a Joinable runs while other ranks still train (main_hook) and once all joined (post_hook)."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(ABC):
    @abstractmethod
    def __init__(self):
        super().__init__()

    @abstractmethod
    def join_hook(self, **kwargs):
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


Join = missing_class("torch.distributed.algorithms.join.Join", why=" (mindtorch_v2 has no process groups)")
