"""torch.backends.mps: Apple's Metal backend is not built."""


def is_available():
    return False


def is_built():
    return False


def is_macos_or_newer(major, minor):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


def is_macos13_or_newer(minor=0):
    return False
