"""torch.distributed.algorithms.ddp_comm_hooks: the default hooks (allreduce, fp16/bf16 compression) and
PowerSGD. Quantization and the other hook families are not implemented."""
from . import default_hooks as default  # noqa: F401
from . import default_hooks, powerSGD_hook  # noqa: F401
