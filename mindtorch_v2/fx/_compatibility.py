def compatibility(is_backward_compatible):
    """Marks an FX API's stability; returns the decorated object unchanged."""
    def mark(fn):
        return fn
    return mark


def _not_implemented(name):
    raise NotImplementedError(f"{name} is not implemented (mindtorch_v2 has no FX symbolic tracing)")
