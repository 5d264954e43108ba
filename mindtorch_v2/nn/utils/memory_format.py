"""torch.nn.utils.memory_format: restride only the convolution weights of a model (not every 4-d/5-d tensor,
as Module.to(memory_format=) would)."""
import mindtorch_v2 as torch  # the package; its attributes are read at call time

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    """Give the weight of every module of the given kinds in the tree the memory format, in place."""
    for m in module.modules():
        if isinstance(m, kinds):
            w = m.weight.detach().clone(memory_format=memory_format)
            m.weight.data = w.resize_(w.size(), memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Put the weights of the Conv2d/ConvTranspose2d modules in module (itself included) in memory_format."""
    return _convert(module, memory_format, (torch.nn.Conv2d, torch.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Put the weights of the Conv3d/ConvTranspose3d modules in module (itself included) in memory_format."""
    return _convert(module, memory_format, (torch.nn.Conv3d, torch.nn.ConvTranspose3d))
