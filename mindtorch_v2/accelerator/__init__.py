"""torch.accelerator: no accelerator is available to mindtorch_v2."""


def is_available():
    return False


def device_count():
    return 0


def current_accelerator(check_available=False):
    return None


def _no_accelerator(*args, **kwargs):
    raise RuntimeError("No available accelerator found.")


current_device_index = current_device_idx = set_device_index = set_device_idx = current_stream = _no_accelerator
set_stream = synchronize = _no_accelerator
