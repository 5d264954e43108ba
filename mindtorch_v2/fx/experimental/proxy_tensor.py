"""torch.fx.experimental.proxy_tensor: make_fx tracing is not implemented."""
import contextlib



def make_fx(f, *args, **kwargs):
    raise NotImplementedError("torch.fx.experimental.proxy_tensor.make_fx is not implemented (mindtorch_v2 has "
                              "no dispatcher-level tracing)")


def get_proxy_mode():
    return None


@contextlib.contextmanager
def maybe_disable_thunkify():
    yield
