"""torch.fx: symbolic tracing (Tracer, symbolic_trace), the Graph/Node IR, GraphModule code generation,
Interpreter/Transformer, subgraph rewriting and ShapeProp -- pure Python over mindtorch_v2's Tensor,
as PyTorch's is. See _symbolic_trace.py for how torch functions are intercepted."""
from . import _compatibility, _pytree, immutable_collections, node, proxy  # noqa: F401
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap  # noqa: F401
from .graph import CodeGen, Graph  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .interpreter import Interpreter, Transformer  # noqa: F401
from .node import Node, has_side_effect, map_arg  # noqa: F401
from .proxy import Proxy  # noqa: F401
from .subgraph_rewriter import replace_pattern  # noqa: F401
from . import passes  # noqa: F401,E402
