"""torch.distributed.fsdp.wrap: the auto-wrap policies, functions of (module, recurse,
nonwrapped_numel) that say whether FSDP would wrap a module (recurse=True asks whether to look into
its children). They are plain predicates, usable without FSDP; wrapping itself is not implemented."""
from ... import nn
from ..._missing import missing_class


def always_wrap_policy(*args, **kwargs):
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    return True if recurse else lambda_fn(module)


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    force_leaf = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
    exclude = size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES if exclude_wrap_modules is None else exclude_wrap_modules
    big_enough = nonwrapped_numel >= min_num_params
    if recurse:
        return big_enough and not isinstance(module, tuple(force_leaf))
    return big_enough and not isinstance(module, tuple(exclude))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}

ModuleWrapPolicy = missing_class("torch.distributed.fsdp.wrap.ModuleWrapPolicy")
CustomPolicy = missing_class("torch.distributed.fsdp.wrap.CustomPolicy")


def enable_wrap(*args, **kwargs):
    raise NotImplementedError("torch.distributed.fsdp.wrap.enable_wrap is not implemented")


def wrap(*args, **kwargs):
    raise NotImplementedError("torch.distributed.fsdp.wrap.wrap is not implemented")
