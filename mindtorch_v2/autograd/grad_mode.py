"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, in the core)."""
import functools

from .._C import lib


def is_grad_enabled():
    return bool(lib.mt_is_grad_enabled())


class _GradMode:
    """A context manager that is also a decorator."""

    enabled = True

    def __enter__(self):
        self._prev = lib.mt_is_grad_enabled()
        lib.mt_set_grad_enabled(1 if self.enabled else 0)
        return self

    def __exit__(self, *exc):
        lib.mt_set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_GradMode):
    enabled = False

    def __init__(self, orig_func=None):
        pass


class enable_grad(_GradMode):
    enabled = True


class set_grad_enabled(_GradMode):
    def __init__(self, mode):
        self.enabled = bool(mode)
        self._prev = lib.mt_is_grad_enabled()
        lib.mt_set_grad_enabled(1 if mode else 0)  # takes effect as a plain call too

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.mt_set_grad_enabled(self._prev)
        return False

    def clone(self):
        return self.__class__(self.enabled)


class inference_mode(_GradMode):
    def __init__(self, mode=True):
        self.enabled = not mode

    def clone(self):
        return self.__class__(not self.enabled)


def is_inference_mode_enabled():
    return False
