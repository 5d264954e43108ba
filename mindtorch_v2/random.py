"""torch.random: the default CPU generator's state, and fork_rng."""
import contextlib
import warnings

from ._random import (default_generator, get_rng_state, initial_seed, manual_seed, seed,  # noqa: F401
                      set_rng_state)

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


def thread_safe_generator():
    """The worker's thread-local Generator inside a DataLoader thread worker, else None (the global RNG)."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(info, "rng", None) is not None:
        return info.rng.torch_generator
    return None

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Fork the RNG: on exit the CPU generator's state is what it was on entry.

    mindtorch_v2 has no accelerators, so only the CPU state is forked (as
    PyTorch does on a machine without devices); ``devices`` must then be empty
    or None."""
    if device_type == "meta" or not enabled:
        yield
        return
    if devices is not None and len(list(devices)) > 0:
        warnings.warn(f"{_caller}: mindtorch_v2 has no {device_type or 'cuda'} devices; "
                      f"'{_devices_kw}' is ignored", stacklevel=3)
    cpu_rng_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
