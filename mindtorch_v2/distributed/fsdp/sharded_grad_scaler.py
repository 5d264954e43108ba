"""torch.distributed.fsdp.sharded_grad_scaler: needs FSDP's sharded gradients; not implemented."""
from ..._missing import missing_class

ShardedGradScaler = missing_class("torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler")
