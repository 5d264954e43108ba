"""torch.profiler.itt: Intel ITT ranges. There is no ITT library here: PyTorch's behaviour in a build
without one (is_available() is False, the range calls raise its RuntimeError)."""
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def is_available():
    return False


def _fail(*args, **kwargs):
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def range_push(msg):
    return _fail(msg)


def range_pop():
    return _fail()


def mark(msg):
    return _fail(msg)


@contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
