from ._compatibility import _not_implemented


def is_fx_tracing():
    return False


def is_fx_symbolic_tracing():
    return False


class TracerBase:
    def __init__(self, *args, **kwargs):
        _not_implemented(f"torch.fx.{type(self).__name__}")


class Tracer(TracerBase):
    pass


def symbolic_trace(root, concrete_args=None):
    _not_implemented("torch.fx.symbolic_trace")


def wrap(fn_or_name):
    # PyTorch records fn_or_name as a leaf for symbolic tracing and returns it unchanged; with no
    # tracing here, returning it is the whole of its effect
    return fn_or_name
