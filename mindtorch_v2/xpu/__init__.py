"""torch.xpu: Intel GPUs are not supported; queries answer as a PyTorch build without XPU does."""


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def _no_xpu(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


current_device = set_device = synchronize = get_device_properties = get_device_name = get_device_capability = _no_xpu


def empty_cache():
    pass


def manual_seed(seed):
    pass


manual_seed_all = manual_seed


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def reset_peak_memory_stats(device=None):
    pass
