"""torch.fx.Node: one operation of a Graph, in a doubly linked list, with its users tracked."""
import builtins
import operator
import types

from ._compatibility import compatibility
from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_legal_ops = dict.fromkeys(["placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
                            "root"])


def _base_types():
    import mindtorch_v2 as torch
    return (str, int, float, bool, complex, torch.dtype, torch.Tensor, torch.device, torch.memory_format,
            torch.layout)


Argument = object
Target = object
_side_effectful_functions = {operator.setitem}


@compatibility(is_backward_compatible=True)
def has_side_effect(fn):
    """Registers fn as a function that eliminate_dead_code must keep."""
    _side_effectful_functions.add(fn)
    return fn


# ---- names of targets in generated code and printouts: mindtorch_v2's objects print as torch's ----

def _unwrap(fn):
    """fn with wrappers peeled (functools.wraps' __wrapped__, the tracer's _fx_orig)."""
    while True:
        inner = getattr(fn, "_fx_orig", None) or getattr(fn, "__wrapped__", None)
        if inner is None or inner is fn:
            return fn
        fn = inner


def _public_name(obj):
    """'torch.X' (or torch.nn.functional.X, ...) when that public name holds obj or a wrapper of it, looked
    up now, so that a name patched while tracing (transformers wraps torch.arange) still counts."""
    import mindtorch_v2 as torch
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    base = _unwrap(obj)
    for prefix, ns in (("torch", torch), ("torch.nn.functional", torch.nn.functional),
                       ("torch.special", torch.special), ("torch.linalg", torch.linalg), ("torch.Tensor", torch.Tensor)):
        candidate = vars(ns).get(name)
        if candidate is not None and (candidate is obj or _unwrap(candidate) is base):
            return f"{prefix}.{name}"
    return None


def _torch_module(module):
    """'mindtorch_v2.x.y' -> 'torch.x.y' (under the proxy, torch *is* mindtorch_v2), else unchanged."""
    if module == "mindtorch_v2" or module.startswith("mindtorch_v2."):
        return "torch" + module[len("mindtorch_v2"):]
    return module


def _get_qualified_name(func):
    if getattr(builtins, func.__name__, None) is func:  # getattr, len, ...
        return func.__name__
    public = _public_name(func)
    if public is not None:
        return public
    name = func.__name__
    if name == "<lambda>":
        import inspect
        try:
            name = inspect.getsource(func).split("=")[0].strip()
        except Exception as e:
            raise RuntimeError("Unable to represent lambda") from e
    return f"{_torch_module(func.__module__)}.{name}"


def _type_repr(obj):
    if isinstance(obj, type) and not isinstance(obj, types.GenericAlias):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        if obj.__module__.startswith("mindtorch_v2"):
            return _get_qualified_name(obj)
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg):
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return "%" + str(arg) if isinstance(arg, Node) else str(arg)


@compatibility(is_backward_compatible=True)
class Node:
    """One operation: `op` is placeholder, get_attr, call_function, call_module, call_method or output;
    `target` what it calls (a callable for call_function, else a string); `args`/`kwargs` its operands,
    where other Nodes stand for their values. `users` are the Nodes that read this one."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        import mindtorch_v2 as torch
        if op == "call_function":
            if not callable(target):
                raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                                 f"{torch.typename(target)} but a Callable is expected")
        else:
            if op not in _legal_ops:
                raise AssertionError(f"op '{op}' is not in _legal_ops")
            if not isinstance(target, str):
                raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                                 f"{torch.typename(target)} but a str is expected")
        self.graph, self.name, self.op, self.target, self.type = graph, name, op, target, return_type
        self._input_nodes = {}
        self.users = {}
        self._prev = self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta = {}
        self._args, self._kwargs = (), {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list (the graph's root node is the sentinel) ----
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def _remove_from_list(self):
        # the node keeps its own links, so an iteration standing on it continues to its old successor
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    @compatibility(is_backward_compatible=True)
    def prepend(self, x):
        """Insert x before this node in the list of nodes in the graph."""
        if self is x:
            raise AssertionError("Cannot prepend self")
        if self.graph != x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    @compatibility(is_backward_compatible=True)
    def append(self, x):
        """Insert x after this node in the list of nodes in the graph."""
        self._next.prepend(x)

    # ---- operands ----
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for n in self._input_nodes:
            n.users.pop(self, None)
        self._input_nodes = {}
        collect = lambda n: self._input_nodes.setdefault(n) or n  # noqa: E731
        self._args = map_aggregate(new_args, lambda a: collect(a) if isinstance(a, Node) else a)
        self._kwargs = map_aggregate(new_kwargs, lambda a: collect(a) if isinstance(a, Node) else a)
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    def __repr__(self):
        return self._repr_fn(self) if self._repr_fn else self.name

    @staticmethod
    def _pretty_print_target(target):
        if isinstance(target, str):
            return target
        name = getattr(target, "__name__", None)
        if name is not None and getattr(target, "__module__", None) == "builtins":
            return f"builtins.{name}"
        if name is not None and getattr(target, "__module__", None) == "_operator":
            return f"operator.{name}"
        return _get_qualified_name(target)

    @compatibility(is_backward_compatible=True)
    def format_node(self, placeholder_names=None, maybe_return_typename=None, *, include_tensor_metadata=False):
        """The node as one line of `print(graph)`; a placeholder adds its name to placeholder_names
        (and returns None) when that list is given."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += arg_str + f": {_type_repr(self.type)}" if self.type else ""
            if placeholder_names:
                placeholder_names.append(arg_str)
                return None
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default_val}")
        if self.op == "get_attr":
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    # ---- rewriting ----
    @compatibility(is_backward_compatible=True)
    def replace_all_uses_with(self, replace_with, delete_user_cb=None, *, propagate_meta=False):
        """Make every user of this node read replace_with instead (only users for which delete_user_cb
        answers True, when given); returns the users changed."""
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        result = []
        for use_node in list(self.users):
            if delete_user_cb is not None and not delete_user_cb(use_node):
                continue
            result.append(use_node)
            use_node._replace_input_with(self, replace_with)
        return result

    @compatibility(is_backward_compatible=True)
    def replace_input_with(self, old_input, new_input):
        self._replace_input_with(old_input, new_input)

    def _replace_input_with(self, old_input, new_input):
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    @compatibility(is_backward_compatible=False)
    def is_impure(self, impure_random=True):
        """Whether eliminate_dead_code must keep this node though nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            return getattr(self.graph.owning_module.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_function":
            import mindtorch_v2 as torch
            random = {getattr(torch, name, None) for name in _RANDOM_FUNCTIONS}
            return self.target in _side_effectful_functions or self.target in random or self.target is torch._assert
        return False

    def _rename(self, candidate):
        if candidate == self.name:
            return
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)


# torch functions that draw from the RNG: impure though their results go unused
_RANDOM_FUNCTIONS = ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
                     "poisson", "bernoulli", "multinomial")


def map_aggregate(a, fn):
    """Apply fn to each leaf of a nested tuple/list/dict/slice/range (lists and dicts come back immutable)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        rv = immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
        return rv if type(a) in (dict, immutable_dict) else type(a)(rv)
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    if isinstance(a, range):
        return range(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


@compatibility(is_backward_compatible=True)
def map_arg(a, fn):
    """Apply fn to each Node in a nested argument structure."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)
