"""torch.mtia: Meta's accelerator backend is not built (PyTorch's CPU build answers the same)."""


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def _no_mtia(*args, **kwargs):
    raise RuntimeError("Cannot execute getCurrentDevice() without MTIA backend.")


synchronize = current_device = set_device = current_stream = default_stream = _no_mtia
