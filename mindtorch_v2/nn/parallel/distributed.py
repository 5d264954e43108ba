"""torch.nn.parallel.distributed: DistributedDataParallel needs a process group, which mindtorch_v2
does not have."""
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.nn.parallel.DistributedDataParallel is not implemented in mindtorch_v2 "
                                  "(torch.distributed is not available)")
