from ._compatibility import _not_implemented


class Node:
    def __init__(self, *args, **kwargs):
        _not_implemented("torch.fx.Node")


Argument = object
Target = object


def map_aggregate(a, fn):
    """Apply fn to each leaf of a nested tuple/list/dict/slice (FX's argument traversal)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return type(a)((k, map_aggregate(v, fn)) for k, v in a.items()) if type(a) is not dict else \
            {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply fn to each Node in a nested argument structure."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)
