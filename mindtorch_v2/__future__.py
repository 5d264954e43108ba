"""torch.__future__: process-wide switches for behaviour PyTorch plans to make the default.

overwrite_module_params_on_conversion: Module._apply (.to(), .double(), ...) puts new Parameter objects in
place of the old instead of setting .data. swap_module_params_on_conversion needs torch.utils.swap_tensors,
which mindtorch_v2 does not have: it stays False, and turning it on raises."""

_overwrite = [False]


def set_overwrite_module_params_on_conversion(value):
    _overwrite[0] = value


def get_overwrite_module_params_on_conversion():
    return _overwrite[0]


def set_swap_module_params_on_conversion(value):
    if value:
        raise NotImplementedError("torch.__future__.set_swap_module_params_on_conversion(True) is not implemented "
                                  "(mindtorch_v2 has no torch.utils.swap_tensors)")


def get_swap_module_params_on_conversion():
    return False
