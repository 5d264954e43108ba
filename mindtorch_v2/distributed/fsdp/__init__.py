"""torch.distributed.fsdp: the configuration values (enums and dataclasses, as PyTorch's) exist so
that libraries can import them and test `isinstance(model, FullyShardedDataParallel)`; sharding a
model is not implemented (FullyShardedDataParallel and fully_shard raise NotImplementedError)."""
import dataclasses
import enum
from typing import Any, Optional

from ... import nn
from ..._missing import missing_class


class ShardingStrategy(enum.Enum):
    FULL_SHARD = 1
    SHARD_GRAD_OP = 2
    NO_SHARD = 3
    HYBRID_SHARD = 4
    _HYBRID_SHARD_ZERO2 = 5


class StateDictType(enum.Enum):
    FULL_STATE_DICT = 1
    LOCAL_STATE_DICT = 2
    SHARDED_STATE_DICT = 3


class BackwardPrefetch(enum.Enum):
    BACKWARD_PRE = 1
    BACKWARD_POST = 2


class OptimStateKeyType(enum.Enum):
    PARAM_NAME = 1
    PARAM_ID = 2


@dataclasses.dataclass
class CPUOffload:
    offload_params: bool = False


@dataclasses.dataclass
class MixedPrecision:
    param_dtype: Optional[Any] = None
    reduce_dtype: Optional[Any] = None
    buffer_dtype: Optional[Any] = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = (nn.modules.batchnorm._BatchNorm,)


@dataclasses.dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclasses.dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclasses.dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclasses.dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclasses.dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclasses.dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclasses.dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclasses.dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclasses.dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    param_dtype: Optional[Any] = None
    reduce_dtype: Optional[Any] = None
    output_dtype: Optional[Any] = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    pass


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    pin_memory: bool = True


FullyShardedDataParallel = missing_class("torch.distributed.fsdp.FullyShardedDataParallel", nn.Module)


class FSDPModule:
    """The mixin fully_shard gives a module's class; no module here ever has it."""


def fully_shard(*args, **kwargs):
    raise NotImplementedError("torch.distributed.fsdp.fully_shard is not implemented")


def register_fsdp_forward_method(*args, **kwargs):
    raise NotImplementedError("torch.distributed.fsdp.register_fsdp_forward_method is not implemented")


def share_comm_ctx(*args, **kwargs):
    raise NotImplementedError("torch.distributed.fsdp.share_comm_ctx is not implemented")


UnshardHandle = missing_class("torch.distributed.fsdp.UnshardHandle")
DataParallelMeshDims = missing_class("torch.distributed.fsdp.DataParallelMeshDims")
