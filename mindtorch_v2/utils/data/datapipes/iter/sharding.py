"""ShardingFilter (`.sharding_filter`): keeps every n-th sample for one of n instances (workers, ranks)."""
from enum import IntEnum

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .callable import _len_of_source

__all__ = ["SHARDING_PRIORITIES", "ShardingFilterIterDataPipe"]


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


class _ShardingIterDataPipe(IterDataPipe):
    def apply_sharding(self, num_of_instances, instance_id, sharding_group):
        raise NotImplementedError


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(_ShardingIterDataPipe):
    """Yields the samples whose position modulo the instance count is this instance's id; the sharding
    groups (distributed, multiprocessing) combine, the higher priority the finer."""

    def __init__(self, source_datapipe, sharding_group_filter=None):
        super().__init__()
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups = {}
        self.num_of_instances = 1
        self.instance_id = 0
        self._update_num_of_instances()

    def apply_sharding(self, num_of_instances, instance_id, sharding_group=SHARDING_PRIORITIES.DEFAULT):
        if instance_id >= num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than num_of_instances({num_of_instances})")
        is_default = sharding_group == SHARDING_PRIORITIES.DEFAULT
        has_default = SHARDING_PRIORITIES.DEFAULT in self.groups
        if (is_default and self.groups and not has_default) or (not is_default and has_default):
            raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self._update_num_of_instances()

    def _update_num_of_instances(self):
        count, index = 1, 0
        for group in sorted(self.groups, reverse=True):  # highest priority innermost
            if self.sharding_group_filter is None or group == self.sharding_group_filter:
                n, i = self.groups[group]
                index += count * i
                count *= n
        self.num_of_instances, self.instance_id = count, index

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        n = _len_of_source(self, self.source_datapipe)
        return n // self.num_of_instances + (1 if self.instance_id < n % self.num_of_instances else 0)
