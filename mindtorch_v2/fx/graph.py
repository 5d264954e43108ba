"""torch.fx.Graph: the node list, its editing API, and its Python code generation."""
import builtins
import contextlib
import copy
import inspect
import keyword
import math
import re
import typing
from dataclasses import dataclass

from ._compatibility import compatibility
from .node import Node, _get_qualified_name, _legal_ops, _torch_module, _type_repr, map_arg

__all__ = ["PythonCode", "CodeGen", "Graph"]

magic_methods = dict({"eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
                      "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}"},
                     **(reflectable_magic_methods := {
                         "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
                         "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
                         "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
                         "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}"}))
inplace_methods = {"iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
                   "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
                   "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
                   "ixor": "{} ^= {}", "setitem": "{}[{}] = {}"}

# dtype abbreviations of verbose printouts (torch.utils._dtype_abbrs)
dtype_abbrs = {"bfloat16": "bf16", "float64": "f64", "float32": "f32", "float16": "f16", "complex64": "c64",
               "complex128": "c128", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "bool": "b8",
               "uint8": "u8"}


_CUSTOM_BUILTINS = {}


def _custom_builtins():
    """Objects every generated function can name without an import: {name: (import statement, object)}."""
    if not _CUSTOM_BUILTINS:
        import mindtorch_v2 as torch
        from . import _pytree as fx_pytree
        from ..utils import _pytree as pytree
        _CUSTOM_BUILTINS.update({
            "inf": ("from math import inf", math.inf), "nan": ("from math import nan", math.nan),
            # a pickled GraphModule's imports: mindtorch_v2 by its own name, with or without the proxy
            "NoneType": ("NoneType = type(None)", type(None)), "torch": ("import mindtorch_v2 as torch", torch),
            "device": ("from mindtorch_v2 import device", torch.device),
            "fx_pytree": ("import mindtorch_v2.fx._pytree as fx_pytree", fx_pytree),
            "pytree": ("import mindtorch_v2.utils._pytree as pytree", pytree)})
        _illegal_names.update((k, obj) for k, (_, obj) in _CUSTOM_BUILTINS.items())
    return _CUSTOM_BUILTINS


_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)  # can't shadow a builtin name


def _snake_case(s):
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", s).lower()


def _is_magic(x):
    return x.startswith("__") and x.endswith("__")


def _is_from_torch(obj):
    module = getattr(obj, "__module__", None)
    if module is None:
        return False
    module = _torch_module(module)
    return (module == "torch" or module.startswith("torch.")) and not module.startswith(
        ("torch._dynamo.", "torch._inductor."))


_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


class _Namespace:
    """Unique Python identifiers for objects: one name per object, none shadowing a builtin."""

    def __init__(self):
        _custom_builtins()  # their names are taken
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = re.sub("[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise AssertionError("obj is already associated")

    def _rename_object(self, obj, name):
        self._obj_to_name[obj] = name
        self._used_names.add(name)


@compatibility(is_backward_compatible=True)
@dataclass
class PythonCode:
    """The source of a graph's forward() and the globals it runs with."""
    src: str
    globals: dict
    _lineno_map: typing.Optional[dict] = None


def _format_target(base, target):
    r = base
    for e in target.split("."):
        r = f'getattr({r}, "{e}")' if not e.isidentifier() else f"{r}.{e}"
    return r


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):
        self.graph._insert = self.orig_insert


class _node_list:
    """The graph's nodes in order (or reversed); safe to mutate while iterating."""

    def __init__(self, graph, direction="_next"):
        self.graph, self.direction = graph, direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self):
        return _node_list(self.graph, "_prev" if self.direction == "_next" else "_next")


def _tensor_repr(t):
    return f"torch.Tensor(size={list(t.size())}, dtype={str(t.dtype).split('.')[-1]})"


@compatibility(is_backward_compatible=True)
class CodeGen:
    """Writes a graph as the source of a Python function; subclasses change its signature and return."""

    def __init__(self):
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        if len(free_vars) == 0 or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args, *, descs=None, repr_fn=repr):
        return f"return {repr_fn(output_args)}"

    def process_inputs(self, *args):
        return args

    def process_outputs(self, outputs):
        return outputs

    def additional_globals(self):
        return []

    def _gen_python_code(self, nodes, root_module, namespace, *, verbose=False):
        import mindtorch_v2 as torch
        free_vars, body, globals_, wrapped_fns = [], [], {}, {}
        maybe_return_annotation = [""]

        def add_global(name_hint, obj):
            if _is_from_torch(obj) and obj != torch.device:
                return _get_qualified_name(obj)
            global_name = namespace.create_name(name_hint, obj)
            if global_name in globals_:
                if globals_[global_name] is not obj:
                    raise AssertionError(f"Global name {global_name} already assigned to different object")
                return global_name
            globals_[global_name] = obj
            return global_name

        for name, (_, obj) in _custom_builtins().items():
            add_global(name, obj)

        def type_repr(o):
            if o == ():
                return "()"
            typename = _type_repr(o)
            origin = getattr(o, "__origin__", None)
            if origin is not None:
                origin_typename = add_global(_type_repr(origin), origin)
                args = typing.get_args(o)
                return f"{origin_typename}[{','.join(type_repr(a) for a in args)}]" if args else origin_typename
            return add_global(typename, o)

        def _get_repr(arg):
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                return f"{add_global(_get_qualified_name(type(arg)), type(arg))}{repr(tuple(arg))}"
            if isinstance(arg, torch.Tensor):
                return _tensor_repr(arg)
            if isinstance(arg, tuple):
                return f"({_get_repr(arg[0])},)" if len(arg) == 1 else "(" + ", ".join(map(_get_repr, arg)) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(map(_get_repr, arg)) + "]"
            if isinstance(arg, slice):
                return f"slice({_get_repr(arg.start)}, {_get_repr(arg.stop)}, {_get_repr(arg.step)})"
            return repr(arg)

        def _format_args(args, kwargs):
            return ", ".join([_get_repr(a) for a in args] + [f"{k} = {_get_repr(v)}" for k, v in kwargs.items()])

        # free each value after its last use, as the generated code of PyTorch does
        node_to_last_use, user_to_last_uses = {}, {}
        for node in reversed(nodes):
            for input_node in node._input_nodes:
                if input_node not in node_to_last_use:
                    node_to_last_use[input_node] = node
                    user_to_last_uses.setdefault(node, []).append(input_node)

        def delete_unused_values(user):
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            to_delete = list(user_to_last_uses.get(user, []))
            if len(user.users) == 0:
                to_delete.append(user)
            body.append(f";  {' = '.join([repr(n) for n in to_delete] + ['None'])}\n" if to_delete else "\n")

        prev_summary = None

        def emit_node(node):
            nonlocal prev_summary
            annotation = "" if node.type is None else f" : {type_repr(node.type)}"
            if verbose:
                from .passes.shape_prop import TensorMetadata
                meta_val = node.meta.get("val", node.meta.get("tensor_meta", node.meta.get("example_value")))
                if isinstance(meta_val, (torch.Tensor, TensorMetadata)):
                    abbr = dtype_abbrs.get(str(meta_val.dtype).split(".")[-1], str(meta_val.dtype))
                    annotation = f': "{abbr}[{", ".join(str(x) for x in meta_val.shape)}]"'
                if node.op not in ("placeholder", "output"):
                    summary = "\n# No stacktrace found for following nodes\n"
                    if summary != prev_summary:
                        prev_summary = summary
                        body.append(summary)
            if node.op == "placeholder":
                default = "" if not node.args else f" = {_get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{annotation}{default}")
                raw_name = node.target.replace("*", "")
                if raw_name != repr(node):
                    body.append(f"{repr(node)} = {raw_name}\n")
                return
            if node.op == "call_method":
                body.append(f"{repr(node)}{annotation} = {_format_target(_get_repr(node.args[0]), node.target)}"
                            f"({_format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                name = getattr(node.target, "__name__", "")
                if getattr(node.target, "__module__", "") == "_operator" and name in magic_methods:
                    body.append(f"{repr(node)}{annotation} = "
                                f"{magic_methods[name].format(*(_get_repr(a) for a in node.args))}")
                    return
                if getattr(node.target, "__module__", "") == "_operator" and name in inplace_methods:
                    body.append(f"{inplace_methods[name].format(*(_get_repr(a) for a in node.args))};  "
                                f"{repr(node)}{annotation} = {_get_repr(node.args[0])}")
                    return
                global_name = add_global(_get_qualified_name(node.target), node.target)
                if (global_name == "getattr" and isinstance(node.args, tuple) and len(node.args) == 2
                        and isinstance(node.args[1], str) and node.args[1].isidentifier()):
                    body.append(f"{repr(node)}{annotation} = {_format_target(_get_repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{repr(node)}{annotation} = {global_name}({_format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(global_name)
                return
            if node.op == "call_module":
                body.append(f"{repr(node)}{annotation} = "
                            f"{_format_target(root_module, node.target)}({_format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{repr(node)}{annotation} = {_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    maybe_return_annotation[0] = f" -> {type_repr(node.type)}"
                params = inspect.signature(self.generate_output).parameters
                body.append(self.generate_output(node.args[0], repr_fn=_get_repr) if "repr_fn" in params
                            else self.generate_output(node.args[0]))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        for node in nodes:
            emit_node(node)
            delete_unused_values(node)
        if len(body) == 0:
            body.append("pass\n")
        wrap_stmts = ""
        if wrapped_fns:
            from ._symbolic_trace import wrap
            wrap_name = add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        if self._body_transformer:
            body = self._body_transformer(body)
        for name, value in self.additional_globals():
            add_global(name, value)
        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)


@compatibility(is_backward_compatible=True)
class Graph:
    """The nodes of a traced function in execution order: placeholders (inputs), operations, and one
    output node. `print(graph)` lists them; `python_code` writes them as Python."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields = {}

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _node_list(self)

    def output_node(self):
        output_node = next(iter(reversed(self.nodes)))
        if output_node.op != "output":
            raise AssertionError(f"Expected output node, got op={output_node.op}")
        return output_node

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    @compatibility(is_backward_compatible=True)
    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy g's nodes into this graph (val_map: g's nodes -> ours, filled in); returns the copied
        output value instead of copying the output node."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            output_val, old_output_node = output_vals
            new_output_node = g.output(output_val, type_expr=getattr(old_output_node, "type", None))
            new_output_node.meta = copy.copy(old_output_node.meta)
        return g

    @compatibility(is_backward_compatible=True)
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Create a Node and insert it at the insert point (see inserting_before/inserting_after)."""
        if not args:
            args = ()
        elif not isinstance(args, tuple):
            raise AssertionError(f"args must be a tuple, got {type(args)}")
        if not kwargs:
            kwargs = {}
        elif not isinstance(kwargs, dict):
            raise AssertionError(f"kwargs must be a dict, got {type(kwargs)}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def process_inputs(self, *args):
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        return self._codegen.process_outputs(out)

    @compatibility(is_backward_compatible=True)
    def erase_node(self, to_erase):
        """Remove a node that has no users left."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph != self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            import warnings
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True  # iterators may retain handles to erased nodes
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    @compatibility(is_backward_compatible=True)
    def inserting_before(self, n=None):
        """Insert new nodes before n (the start of the graph if None); as a context manager, only within it."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph != self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    @compatibility(is_backward_compatible=True)
    def inserting_after(self, n=None):
        """Insert new nodes after n (the end of the graph if None); as a context manager, only within it."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph != self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    @compatibility(is_backward_compatible=True)
    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    @compatibility(is_backward_compatible=True)
    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    @compatibility(is_backward_compatible=True)
    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    @compatibility(is_backward_compatible=True)
    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    @compatibility(is_backward_compatible=True)
    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None):
        return self.create_node("call_function", the_function, args, kwargs, name=name, type_expr=type_expr)

    @compatibility(is_backward_compatible=True)
    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy node into this graph, mapping its Node arguments through arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result_node = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result_node.meta = copy.copy(node.meta)
        return result_node

    @compatibility(is_backward_compatible=True)
    def output(self, result, type_expr=None):
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    @compatibility(is_backward_compatible=True)
    def python_code(self, root_module, *, verbose=False, **kwargs):
        """The graph as the source of a function `forward(self, ...)` with the globals it needs."""
        namespace = _Namespace()
        nodes = list(self.nodes)
        orig = [n._repr_fn for n in nodes]
        for n in nodes:
            n._repr_fn = lambda n: namespace.create_name(n.name, n)
        try:
            return self._codegen._gen_python_code(self.nodes, root_module, namespace, verbose=verbose)
        finally:
            for n, fn in zip(nodes, orig):
                n._repr_fn = fn

    def __str__(self):
        placeholder_names = []
        maybe_return_typename = [""]
        node_strs = [node.format_node(placeholder_names) for node in self.nodes]
        s = f"graph({', '.join(placeholder_names)}){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self):
        from tabulate import tabulate
        print(tabulate([[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes],
                       headers=["opcode", "name", "target", "args", "kwargs"]))

    @compatibility(is_backward_compatible=True)
    def lint(self):
        """Check that nodes belong to this graph, come in topological order, and have unique names; with an
        owning module, that get_attr/call_module targets exist."""
        import mindtorch_v2 as torch
        seen_names, seen_values = set(), set()
        for node in self.nodes:
            if node.op not in _legal_ops:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was used as an "
                        f"argument! If you are copying nodes from another graph, make sure to use "
                        f"``arg_transform`` on node_copy() to remap values\n{self}")
                if arg not in seen_values:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined! Please check "
                        f"that Nodes in the graph are topologically ordered\n{self}")
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
        if self.owning_module:
            for node in self.nodes:
                if node.op == "call_function":
                    if not callable(node.target):
                        raise ValueError(f"Node {node} target {node.target} has type "
                                         f"{torch.typename(node.target)} but a Callable is expected")
                elif not isinstance(node.target, str):
                    raise ValueError(f"Node {node} target {node.target} has type {torch.typename(node.target)} "
                                     "but a str is expected")
                if node.op in ("get_attr", "call_module"):
                    atoms = node.target.split(".")
                    m_itr = self.owning_module
                    for i, atom in enumerate(atoms):
                        new_m_itr = getattr(m_itr, atom, None)
                        seen_qualname = ".".join(atoms[:i])
                        if new_m_itr is None:
                            raise RuntimeError(f"Node {node} target {node.target} references nonexistent "
                                               f"attribute {atom} of {seen_qualname}")
                        if node.op == "call_module" and not isinstance(new_m_itr, torch.nn.Module):
                            raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen_qualname} "
                                               "does not reference an nn.Module")
                        m_itr = new_m_itr

    @compatibility(is_backward_compatible=True)
    def eliminate_dead_code(self, is_impure_node=None):
        """Erase nodes nothing uses and that have no side effect (Node.is_impure, or is_impure_node);
        returns whether the graph changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def set_codegen(self, codegen):
        self._codegen = codegen

    @contextlib.contextmanager
    def on_generate_code(self, make_transformer):
        """Within the context, transform the generated body (a list of source lines) with the function
        make_transformer(previous transformer) returns."""
        on_gen_code_old = self._codegen._body_transformer
        self._codegen._body_transformer = make_transformer(on_gen_code_old)
        try:
            yield
        finally:
            self._codegen._body_transformer = on_gen_code_old

