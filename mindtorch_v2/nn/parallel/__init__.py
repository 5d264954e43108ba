"""torch.nn.parallel: DataParallel as PyTorch's behaves without accelerators (it runs the module
itself); DistributedDataParallel over torch.distributed's process groups (distributed.py)."""
from ..modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []  # no accelerator: the module runs as is
        self.dim = dim
        self.output_device = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


from .distributed import DistributedDataParallel  # noqa: E402  (PyTorch's home of the class)
