"""torch.fx: symbolic tracing is not implemented. The classes exist so code can import, subclass
and `isinstance`-check them (no mindtorch_v2 value is ever a Proxy); constructing a tracer, graph
or proxy, or calling symbolic_trace/wrap, raises NotImplementedError naming the API."""
from . import _compatibility, _pytree, _symbolic_trace, node, proxy  # noqa: F401
from ._symbolic_trace import Tracer, symbolic_trace, wrap  # noqa: F401
from .graph import Graph  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .node import Node, map_arg  # noqa: F401
from .proxy import Proxy  # noqa: F401

from ._compatibility import _not_implemented


class Interpreter:
    def __init__(self, *args, **kwargs):
        _not_implemented("torch.fx.Interpreter")


class Transformer(Interpreter):
    pass


def replace_pattern(*args, **kwargs):
    _not_implemented("torch.fx.replace_pattern")
