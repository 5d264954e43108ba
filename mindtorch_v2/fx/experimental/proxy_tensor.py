"""torch.fx.experimental.proxy_tensor: make_fx tracing is not implemented."""
import contextlib

from .._compatibility import _not_implemented


def make_fx(f, *args, **kwargs):
    _not_implemented("torch.fx.experimental.proxy_tensor.make_fx")


def get_proxy_mode():
    return None


@contextlib.contextmanager
def maybe_disable_thunkify():
    yield
