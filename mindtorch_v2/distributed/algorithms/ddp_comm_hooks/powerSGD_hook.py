"""torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook: not implemented yet. The names import (accelerate
imports them whenever it sets up DDP); constructing a state or calling a hook raises NotImplementedError."""
from .... import _missing

PowerSGDState = _missing.missing_class(
    "torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.PowerSGDState",
    module="torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook")
powerSGD_hook = _missing.missing_function("torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.powerSGD_hook")
batched_powerSGD_hook = _missing.missing_function(
    "torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.batched_powerSGD_hook")
