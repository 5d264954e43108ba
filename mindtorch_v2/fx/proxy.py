from ._compatibility import _not_implemented
from ._symbolic_trace import TracerBase  # noqa: F401


class Proxy:
    def __init__(self, *args, **kwargs):
        _not_implemented(f"torch.fx.{type(self).__name__}")


class Attribute(Proxy):
    pass


class ParameterProxy(Proxy):
    pass


class GraphAppendingTracer:
    def __init__(self, *args, **kwargs):
        _not_implemented("torch.fx.proxy.GraphAppendingTracer")
