"""torch.mps: Apple's Metal backend is not built."""


def is_available():
    return False


def device_count():
    return 0


def _no_mps(*args, **kwargs):
    raise RuntimeError("MPS backend is not available")


synchronize = get_rng_state = set_rng_state = current_allocated_memory = driver_allocated_memory = _no_mps


def empty_cache():
    pass


def manual_seed(seed):
    pass


seed = manual_seed
