"""torch._dynamo: there is no graph compiler; every function runs eagerly, so the decorators that
steer dynamo return their argument and the queries answer "not compiling"."""
from . import config, eval_frame, exc  # noqa: F401
from .eval_frame import OptimizedModule  # noqa: F401
from ..compiler import allow_in_graph, disable, is_compiling, reset, set_stance  # noqa: F401


def mark_static_address(t, guard=False):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    pass


def maybe_mark_dynamic(t, index):
    pass


def mark_static(t, index=None):
    pass


def disallow_in_graph(fn):
    return fn


def forbid_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def nonstrict_trace(fn):
    return fn


def graph_break(msg=""):
    pass


def is_dynamo_supported():
    return False


def is_inductor_supported():
    return False


def list_backends(exclude_tags=("debug", "experimental")):
    return []


def reset_code_caches():
    pass


def optimize(*args, **kwargs):
    raise NotImplementedError("torch._dynamo.optimize is not implemented (mindtorch_v2 has no graph compiler)")


def explain(f, *args, **kwargs):
    raise NotImplementedError("torch._dynamo.explain is not implemented (mindtorch_v2 has no graph compiler)")


def export(f, *args, **kwargs):
    raise NotImplementedError("torch._dynamo.export is not implemented (mindtorch_v2 has no graph compiler)")
