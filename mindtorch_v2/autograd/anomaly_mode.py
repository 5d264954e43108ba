"""Anomaly detection: the forward stack of every recorded node, named when its backward fails
or (check_nan) returns NaN. The mode is process-wide, as in PyTorch."""
import traceback
import warnings

from .._C import lib

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled():
    return lib.mt_anomaly_mode() != 0


def is_anomaly_check_nan_enabled():
    return lib.mt_anomaly_mode() == 2


def _set(mode, check_nan):
    lib.mt_set_anomaly_mode((2 if check_nan else 1) if mode else 0)


class detect_anomaly:
    """Context manager / decorator enabling anomaly detection."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _set(True, self.check_nan)

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off, as a function or as a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        _set(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)


def _record(node):
    """A node was recorded in anomaly mode: keep the Python stack that made it."""
    from .graph import node_of
    lib.mt_node_retain(node)
    n = node_of(node)
    n._state()._stack = "".join(traceback.format_stack()[:-3])


def _report(state, node):
    stack = getattr(state, "_stack", None)
    if stack:
        from .._C import ffi
        name = ffi.string(lib.mt_node_name(node)).decode()
        warnings.warn(f"Error detected in {name}. Traceback of forward call that caused the error:\n{stack}",
                      stacklevel=2)
