"""torch.distributed.algorithms.join: the join context manager for uneven inputs (PyTorch's protocol):
ranks that ran out of inputs shadow the collectives of those still training."""
import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a Joinable runs while other ranks still train (main_hook) and once all joined (post_hook)."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(ABC):
    """A class taking part in Join: a hook, the device and the process group of its collectives."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

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


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(False, False, False)


_SKEW_WARNING = 1000  # shadowed rounds after which PyTorch warns about uneven inputs


class Join:
    """Context manager for ranks with uneven inputs. Every training iteration each joinable's first
    collective is an all_reduce of 1 (notify_join_context): a rank that has left the loop answers it
    with 0 while it runs its joinables' main hooks, which shadow the others' collectives, until the
    sum is 0 (everyone has joined); then the post hooks run."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group) for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[0].join_device
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc, tb):
        if not self._enable or exc_type:
            return
        rounds = 0
        warnings.simplefilter("once")
        while self._count(0.0) != 0:  # some rank still trains: shadow its collectives
            if rounds > _SKEW_WARNING:
                warnings.warn(f"Detected uneven input skew of greater than {_SKEW_WARNING}. This means that rank "
                              f"{self._rank} has at least {_SKEW_WARNING} fewer inputs than other currently-active "
                              "ranks. This level of skew could lead to performance degradation during training.",
                              stacklevel=2)
            if self._throw_on_early_termination:
                self._count(1.0)  # tells the others to stop
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            rounds += 1
        for hook in self._join_hooks:
            hook.post_hook(rounds == 0)  # the last rank to join never shadowed anyone

    def _count(self, value):
        t = torch.full((1,), value, device=self._device)
        dist.all_reduce(t, group=self._process_group)
        return t.item()

    @staticmethod
    def notify_join_context(joinable):
        """Run by a joinable at the start of each iteration: its rank still trains. Returns the async
        work of that all_reduce (None unless it is the first joinable of an enabled Join)."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not (config.is_first_joinable and config.enable):
            return None
        group, device = joinable.join_process_group, joinable.join_device
        work = dist.all_reduce(torch.ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            stop = torch.zeros(1, device=device)
            dist.all_reduce(stop, group=group)
            if stop.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
