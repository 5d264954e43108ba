"""torch.utils._pytree: nested containers flattened to leaves and a TreeSpec, rebuilt from them.

Behaves as PyTorch 2.13's Python pytree: tuple, list, dict, namedtuple, OrderedDict, defaultdict and
deque are nodes (a namedtuple's node type is `namedtuple` itself), everything else - None
included - is a leaf; register_pytree_node adds node types.
"""
import dataclasses
import threading
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, NamedTuple, Optional

Context = Any
PyTree = Any
FlattenFn = FlattenFunc = Callable
UnflattenFn = UnflattenFunc = Callable
DumpableContext = Any
KeyPath = tuple
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Optional[Callable]


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Optional[Callable]
    from_dumpable_context: Optional[Callable]


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES = {}
SUPPORTED_SERIALIZED_TYPES = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register a container-like type as a pytree node (ValueError if it already is one)."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None, flatten_with_keys_fn=None):
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                          stacklevel=2)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or "
                             "registered.")
        if serialized_type_name is None:
            serialized_type_name = NO_SERIALIZED_TYPE_NAME_FOUND
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, serialized_type_name, to_dumpable_context,
                                                            from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


_register_pytree_node = _private_register_pytree_node


def _deregister_pytree_node(cls):
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        node = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node.serialized_type_name, None)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Register a dataclass: its (init) fields are the children."""
    if field_names is None:
        drop = set(drop_field_names or ())
        field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in drop]
    field_names = list(field_names)

    def flatten(obj):
        return [getattr(obj, n) for n in field_names], field_names

    def unflatten(values, context):
        return cls(**dict(zip(context, values)))

    def flatten_with_keys(obj):
        return [(GetAttrKey(n), getattr(obj, n)) for n in field_names], field_names

    _private_register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


# ---- key paths -------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- the built-in node types -----------------------------------------------------------

def is_namedtuple_class(cls):
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields) and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


_is_namedtuple_instance = is_namedtuple_instance


def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _tuple_flatten(d):
    return list(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    values, context = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(context._fields, values)], context


def _namedtuple_unflatten(values, context):
    return context(*values)


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_unflatten(values, context):
    return OrderedDict((k, v) for k, v in zip(context, values))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _defaultdict_unflatten(values, context):
    return defaultdict(context[0], _dict_unflatten(values, context[1]))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten, serialized_type_name="builtins.tuple",
                              flatten_with_keys_fn=lambda d: (_seq_keys(d), None))
_private_register_pytree_node(list, _list_flatten, _list_unflatten, serialized_type_name="builtins.list",
                              flatten_with_keys_fn=lambda d: (_seq_keys(d), None))
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten, serialized_type_name="builtins.dict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
_private_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
                              serialized_type_name="collections.namedtuple",
                              flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              serialized_type_name="collections.OrderedDict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                              serialized_type_name="collections.defaultdict",
                              flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten, serialized_type_name="collections.deque",
                              flatten_with_keys_fn=lambda d: (_seq_keys(d), d.maxlen))

BUILTIN_TYPES = {tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque}
STANDARD_DICT_TYPES = {dict, OrderedDict, defaultdict}


def _get_node_type(tree):
    node_type = type(tree)
    if is_namedtuple_class(node_type):  # every namedtuple type is a node, typed `namedtuple`
        return namedtuple
    return node_type


def tree_is_leaf(tree, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


_is_leaf = tree_is_leaf


# ---- TreeSpec --------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: node type, its context and the children's specs."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self._context = context
        self._children = children_specs
        if type is None:
            self.num_nodes = self.num_leaves = 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
        self.num_children = len(children_specs)

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return self._children.copy()

    def child(self, index):
        return self._children[index]

    def __repr__(self, indent=0):
        s = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self.num_children:
            indent += 2
            s += self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            s += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return s + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is self.__class__:
            return (str(self.type) == str(other.type) and self._context == other._context
                    and self._children == other._children)
        return NotImplemented

    def __hash__(self):
        ctx = self._context
        if self.type is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif isinstance(ctx, list):
            ctx = tuple(ctx)
        return hash((self.type, ctx, tuple(hash(c) for c in self._children)))

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves (tree must have this spec as a prefix)."""
        out = []
        _flatten_up_to(self, tree, out)
        return out

    def unflatten(self, leaves):
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for c in self._children:
            children.append(c.unflatten(leaves[start:start + c.num_leaves]))
            start += c.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])

    def __repr__(self, indent=0):
        return "*"


_LEAF_SPEC = LeafSpec()


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=()):
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping=(), **kwargs):
    d = dict(mapping, **kwargs)
    return TreeSpec(dict, list(d.keys()), list(d.values()))


def _flatten_up_to(spec, node, out):
    if spec.is_leaf():
        out.append(node)
        return
    node_type = _get_node_type(node)
    if spec.type not in BUILTIN_TYPES:
        if node_type != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
    else:
        both_dicts = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
        if not both_dicts and node_type != spec.type:
            raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        if len(node) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(node)}.")
        if both_dicts:
            keys = spec._context if spec.type is not defaultdict else spec._context[1]
            got, want = set(node), set(keys)
            if got != want:
                msg = ""
                if want - got:
                    msg += f"; missing key(s): {want - got}"
                if got - want:
                    msg += f"; extra key(s): {got - want}"
                raise ValueError(f"Node keys mismatch{msg}.")
            children = [node[k] for k in keys]
        else:
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if node_type is not deque and context != spec._context:
                raise ValueError(f"Node context mismatch for node type {spec.type!r}; expected {spec._context!r}, "
                                 f"but got {context!r}.")
    for sub, subspec in zip(children, spec._children):
        _flatten_up_to(subspec, sub, out)


# ---- flatten / map ----------------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
    leaves = []

    def helper(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [helper(c) for c in children])

    spec = helper(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
    else:
        children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
        for c in children:
            yield from tree_iter(c, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


class _Star:
    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The structure as Python would print it, with * for each leaf: "(*, {'a': *})"."""
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))


def tree_map(func, tree, *rests, is_leaf=None):
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*flat):
        func(*args)
    return tree


def _type_pred(t):
    if isinstance(t, (type, tuple)) or type(t).__name__ == "UnionType":
        return lambda x: isinstance(x, t)
    if callable(t):
        return t
    raise TypeError(f"Unexpected type {type(t)}")


def map_only(type_or_types_or_pred):
    pred = _type_pred(type_or_types_or_pred)

    def wrapper(func):
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    t = _type_pred(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if t(x))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    t = _type_pred(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if t(x))


def arg_tree_leaves(*args, **kwargs):
    return tree_leaves(list(args)) + tree_leaves(kwargs) if kwargs else tree_leaves(list(args))


def _generate_key_paths(key_path, tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield key_path, tree
        return
    node = SUPPORTED_NODES[_get_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {_get_node_type(tree)}. Please pass a "
                         "flatten_with_keys_fn argument to register_pytree_node.")
    key_children, _ = node.flatten_with_keys_fn(tree)
    for k, c in key_children:
        yield from _generate_key_paths((*key_path, k), c, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    _, spec = tree_flatten(tree, is_leaf)
    return list(_generate_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_generate_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    keypath_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    keypaths, leaves = zip(*keypath_leaves) if keypath_leaves else ((), ())
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*a) for a in zip(keypaths, *flat))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """`tree` broadcast to `treespec`'s structure, flattened; None if it is not a prefix of it."""
    def go(node, spec, out):
        if tree_is_leaf(node, is_leaf):
            out.extend([node] * spec.num_leaves)
            return True
        if spec.is_leaf():
            return False
        node_type = _get_node_type(node)
        if node_type != spec.type:
            return False
        children, ctx = SUPPORTED_NODES[node_type].flatten_fn(node)
        if len(children) != spec.num_children or ctx != spec._context:
            return False
        return all(go(c, s, out) for c, s in zip(children, spec._children))

    out = []
    return out if go(tree, treespec, out) else None
