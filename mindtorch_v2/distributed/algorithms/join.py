"""torch.distributed.algorithms.join (PyTorch 2.13's code): the join context manager for uneven
inputs. Ranks that ran out of inputs shadow the collectives of those still training."""
import warnings
from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any, NamedTuple
import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist
__all__ = ['JoinHook', 'Joinable', 'Join']

class JoinHook:

    def main_hook(self) -> None:
        pass

    def post_hook(self, is_last_joiner: bool) -> None:
        pass

class Joinable(ABC):

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        ...

    @property
    @abstractmethod
    def join_device(self) -> torch.device:
        ...

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        ...

class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)

class Join:

    def __init__(self, joinables: list[Joinable], enable: bool=True, throw_on_early_termination: bool=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError('The join context manager requires at least one joinable')
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self) -> None:
        if len(self._joinables) <= 0:
            raise AssertionError
        is_first_joinable = True
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig(enable=self._enable, throw_on_early_termination=self._throw_on_early_termination, is_first_joinable=is_first_joinable)
            is_first_joinable = False

    def _extract_dist_info(self) -> None:
        process_group = None
        device = None
        for joinable in self._joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError('Using join context manager with multiple process groups')
            if device is None:
                device = joinable.join_device
        self._process_group = process_group
        self._rank = dist.get_rank(self._process_group)
        self._device = device

    def __enter__(self):
        ...

    def __exit__(self, type: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None):
        if not self._enable or type:
            return
        all_procs_joined = False
        is_last_joiner = True
        i = 0
        WARN_THRESHOLD = 1000
        warnings.simplefilter('once')
        while not all_procs_joined:
            if i > WARN_THRESHOLD:
                warnings.warn(f'Detected uneven input skew of greater than {WARN_THRESHOLD}. This means that rank {self._rank} has at least {WARN_THRESHOLD} fewer inputs than other currently-active ranks. This level of skew could lead to performance degradation during training.', stacklevel=2)
            num_nonjoined_procs = self._get_num_nonjoined_procs()
            if num_nonjoined_procs == 0:
                all_procs_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for join_hook in self._join_hooks:
                    join_hook.main_hook()
                is_last_joiner = False
                i += 1
        for join_hook in self._join_hooks:
            join_hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self):
        num_nonjoined_procs = torch.zeros(1, device=self._device)
        dist.all_reduce(num_nonjoined_procs, group=self._process_group)
        return num_nonjoined_procs.item()

    def _notify_procs_to_terminate(self):
        ones = torch.ones(1, device=self._device)
        dist.all_reduce(ones, group=self._process_group)
        raise RuntimeError(f'Rank {self._rank} exhausted all inputs.')

    @staticmethod
    def notify_join_context(joinable: Joinable):
        if not hasattr(joinable, '_join_config'):
            raise AssertionError(f'Check that the {type(joinable)} constructor calls the ``Joinable`` constructor')
        join_config = joinable._join_config
        if not join_config.is_first_joinable or not join_config.enable:
            return None
        device = joinable.join_device
        process_group = joinable.join_process_group
        ones = torch.ones(1, device=device)
        work = dist.all_reduce(ones, group=process_group, async_op=True)
        if join_config.throw_on_early_termination:
            zeros = torch.zeros(1, device=device)
            dist.all_reduce(zeros, group=process_group)
            should_throw = zeros.item()
            if should_throw:
                raise RuntimeError('Detected at least one rank that exhausted inputs. Throwing across all ranks.')
        return work
