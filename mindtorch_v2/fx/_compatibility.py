def compatibility(is_backward_compatible):
    """Marks an FX API's stability; returns the decorated object unchanged."""
    def mark(fn):
        return fn
    return mark
