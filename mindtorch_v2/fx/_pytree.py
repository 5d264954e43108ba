"""torch.fx._pytree: flatten a pytree along a given TreeSpec (per-type flatten_spec functions)."""
from collections import OrderedDict, namedtuple

from ..utils._pytree import TreeSpec, _get_node_type

SUPPORTED_NODES = {}
SUPPORTED_NODES_EXACT_MATCH = {}


def register_pytree_flatten_spec(cls, flatten_fn_spec, flatten_fn_exact_match_spec=None):
    SUPPORTED_NODES[cls] = flatten_fn_spec
    SUPPORTED_NODES_EXACT_MATCH[cls] = flatten_fn_exact_match_spec


def tree_flatten_spec(pytree, spec, exact_structural_match=False):
    if spec.is_leaf():
        return [pytree]
    node_type = _get_node_type(pytree) if spec.type is namedtuple else type(pytree)
    if spec.type not in SUPPORTED_NODES:
        raise RuntimeError(f"{type(pytree)} does not have a flatten_fn_spec associated with it. Please register "
                           "one with torch.fx._pytree.register_pytree_flatten_spec.  If you have serialized your "
                           "model, make sure that any custom pytrees have been registered before loading it.")
    if exact_structural_match and node_type is not spec.type:
        raise RuntimeError(f"Cannot flatten pytree {pytree}, given spec: {spec}")
    children = SUPPORTED_NODES[spec.type](pytree, spec)
    result = []
    for child, child_spec in zip(children, spec.children_specs):
        result += tree_flatten_spec(child, child_spec, exact_structural_match)
    return result


def _dict_flatten_spec(d, spec):
    return [d[k] for k in spec.context]


def _list_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


def _tuple_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


def _namedtuple_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


register_pytree_flatten_spec(dict, _dict_flatten_spec)
register_pytree_flatten_spec(OrderedDict, _dict_flatten_spec)
register_pytree_flatten_spec(list, _list_flatten_spec)
register_pytree_flatten_spec(tuple, _tuple_flatten_spec)
register_pytree_flatten_spec(namedtuple, _namedtuple_flatten_spec)
