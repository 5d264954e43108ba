"""torch.backends.opt_einsum: contraction-order optimisation through the opt_einsum package."""
import importlib.util

_available = importlib.util.find_spec("opt_einsum") is not None
enabled = _available
strategy = "auto" if _available else None


def is_available():
    return _available


def get_opt_einsum():
    if not _available:
        return None
    import opt_einsum
    return opt_einsum
