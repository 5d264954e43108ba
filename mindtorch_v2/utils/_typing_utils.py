"""torch.utils._typing_utils: typing helpers with no run-time effect."""


def not_none(obj):
    """obj, asserted not None (for type checkers)."""
    if obj is None:
        raise TypeError("Invariant encountered: value was None when it should not be")
    return obj


def copy_method_params(source_method):
    """A decorator that gives the decorated method source_method's signature for type checkers; at run
    time it returns the method unchanged."""
    def keep(func):
        return func
    return keep
