"""torch.distributed.fsdp.fully_sharded_data_parallel: where PyTorch defines FSDP and its enums."""
from . import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,  # noqa: F401
               FullyShardedDataParallel, LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision,
               OptimStateDictConfig, OptimStateKeyType, ShardedOptimStateDictConfig, ShardedStateDictConfig,
               ShardingStrategy, StateDictConfig, StateDictSettings, StateDictType)
