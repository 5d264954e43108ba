"""Whether sparse constructors check their invariants by default (process-wide, as PyTorch's global
context flag)."""

_checks = [False]


def checking(check_invariants):
    """The constructor's check_invariants argument, or the default when it is None."""
    return _checks[0] if check_invariants is None else bool(check_invariants)


def set_checks(on):
    _checks[0] = bool(on)


def checks():
    return _checks[0]
