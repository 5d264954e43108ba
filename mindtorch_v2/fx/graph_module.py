"""torch.fx.GraphModule: an nn.Module whose forward is generated from a Graph."""
import copy
import itertools
import linecache
import sys
import traceback

from ..nn import Module
from ..nn.modules.module import _addindent
from ._compatibility import compatibility
from .graph import Graph, _custom_builtins

__all__ = ["GraphModule", "reduce_graph_module"]

_next_id = itertools.count()


def _exec_with_source(src, globals):
    # linecache keeps the generated source, so tracebacks and inspect.getsource show it
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals)


def _forward_from_src(src, globals, co_fields=None):
    globals_copy = dict(globals)
    _exec_with_source(src, globals_copy)
    return globals_copy.pop("forward")


def _format_import_statement(name, obj):
    builtins_ = _custom_builtins()
    if name in builtins_:
        return builtins_[name][0]
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", getattr(obj, "__name__", None))
    if module is None or qualname is None or "<locals>" in qualname:
        raise RuntimeError(f"cannot pickle a GraphModule whose code refers to {obj!r} (not importable)")
    return f"from {module} import {qualname} as {name}"


def _format_import_block(globals):
    return "\n".join(sorted({_format_import_statement(name, obj) for name, obj in globals.items()}))


@compatibility(is_backward_compatible=True)
def reduce_graph_module(body, import_block):
    """Unpickle a GraphModule: run its code (and imports), then trace it again for the graph."""
    fn_src = body.get("_code") or body["code"]
    forward = _forward_from_src(import_block + fn_src, {})
    return _deserialize_graph_module(forward, body)


class _CodeOnlyModule(Module):
    # symbolic_trace takes forward() from the class, so the deserialised forward is set on it
    def __init__(self, body):
        super().__init__()
        self.__dict__ = body


def _deserialize_graph_module(forward, body, graph_module_cls=None):
    _CodeOnlyModule.forward = forward
    tracer_cls = body.get("_tracer_cls")
    if tracer_cls is None:
        from ._symbolic_trace import Tracer
        tracer_cls = Tracer

    class KeepModules(tracer_cls):
        # the submodules were not traced in the original GraphModule
        def is_leaf_module(self, _, __):
            return True

    com = _CodeOnlyModule(body)
    graph = KeepModules().trace(com, **body.get("_tracer_extras", {}))
    graph._tracer_cls = tracer_cls
    gm = (graph_module_cls or GraphModule)(com, graph, class_name=body.get("_graphmodule_cls_name", "GraphModule"))
    for k, v in body.items():  # keep what the graph does not reference
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


def _copy_attr(from_module, to_module, target):
    """Copy from_module's attribute at the dotted path target into to_module, making empty Modules for
    the missing parents."""
    import mindtorch_v2 as torch
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:  # a parent already installed: the attribute came with it
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, torch.Tensor) and not isinstance(orig, torch.nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    import mindtorch_v2 as torch
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, torch.Tensor) and not isinstance(from_obj, torch.nn.Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class _WrappedCall:
    """Calls the module; an error raised in generated code is reported with the generated lines."""

    def __init__(self, cls, cls_call):
        self.cls, self.cls_call = cls, cls_call

    @staticmethod
    def _generate_error_message(frame_summary):
        err_lineno = frame_summary.lineno
        all_src_lines = linecache.getlines(frame_summary.filename)
        custom_msg = ("Call using an FX-traced Module, "
                      f"line {err_lineno} of the traced Module's generated forward function:")
        before_err = "".join(all_src_lines[err_lineno - 2:err_lineno])
        marker = "~" * len(frame_summary.line) + "~~~ <--- HERE"
        err_and_after_err = "\n".join(all_src_lines[err_lineno:err_lineno + 2])
        return "\n".join([traceback.format_exc(), custom_msg, before_err, marker, err_and_after_err])

    def __call__(self, obj, *args, **kwargs):
        try:
            if self.cls_call is not None:
                return self.cls_call(obj, *args, **kwargs)
            return super(self.cls, obj).__call__(*args, **kwargs)
        except Exception as e:
            top = traceback.StackSummary.extract(traceback.walk_tb(e.__traceback__))[-1]
            if "eval_with_key" in top.filename:
                print(_WrappedCall._generate_error_message(top), file=sys.stderr)
                raise e.with_traceback(None)  # noqa: B904
            raise


@compatibility(is_backward_compatible=True)
class GraphModule(Module):
    """An nn.Module made from a Graph: it holds the graph, the attributes its get_attr and call_module
    nodes name (copied from `root`), and a forward() generated as Python source (`code`)."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, since recompile() sets forward on the class
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    @compatibility(is_backward_compatible=True)
    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            if isinstance(root, _CodeOnlyModule):  # everything it held, referenced or not
                for k, _ in itertools.chain(root.named_children(), root.named_buffers(), root.named_parameters()):
                    _copy_attr(root, self, k)
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError("Node " + str(node) + " referenced target " + node.target +
                                           " but that target was not provided in ``root``!")
                    targets_to_copy.append(node.target)
            targets_to_copy.sort(key=lambda t: t.count("."))  # parents first
            for target_to_copy in targets_to_copy:
                _assign_attr(root[target_to_copy], self, target_to_copy)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if self.graph._tracer_cls and "<locals>" not in self.graph._tracer_cls.__qualname__:
            self._tracer_cls = self.graph._tracer_cls
        self._tracer_extras = self.graph._tracer_extras or {}
        self.meta = {}

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @compatibility(is_backward_compatible=True)
    def add_submodule(self, target, m):
        """Install m at the dotted path target, making empty Modules for missing parents; False if a
        parent exists but is not a Module."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    @compatibility(is_backward_compatible=True)
    def delete_submodule(self, target):
        """Remove the submodule at target; False if there is none."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod) or not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    @compatibility(is_backward_compatible=True)
    def delete_all_unused_submodules(self):
        """Remove the submodules that no call_module or get_attr node uses."""
        used = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                used.extend(".".join(fullpath[:i]) for i in range(1, len(fullpath) + 1))
                if node.op == "call_module":
                    submod = self.get_submodule(node.target)
                    used.extend(f"{node.target}.{name}" for name, _ in submod.named_modules() if name)
        for name in [name for name, _ in self.named_modules() if name and name not in used]:
            self.delete_submodule(name)

    @property
    def code(self):
        """The Python source of forward(), generated from the graph."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    @compatibility(is_backward_compatible=True)
    def recompile(self):
        """Regenerate forward() from the graph; call it after editing the graph."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        cls_call = cls.__call__ if "__call__" in vars(cls) else None
        if "_wrapped_call" not in vars(cls):
            cls._wrapped_call = _WrappedCall(cls, cls_call)

        def call_wrapped(self, *args, **kwargs):
            return self._wrapped_call(self, *args, **kwargs)

        cls.__call__ = call_wrapped
        for mod in self.children():
            if isinstance(mod, GraphModule):
                mod.recompile()
        return python_code

    def __reduce__(self):
        """Pickle the generated code, not the graph: unpickling traces the code again."""
        dict_without_graph = self.__dict__.copy()
        python_code = self.recompile()
        import_block = _format_import_block(python_code.globals)
        del dict_without_graph["_graph"]
        return (reduce_graph_module, (dict_without_graph, import_block))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake_mod = _CodeOnlyModule(copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"])
        for attr in ("_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            if attr in self.__dict__:
                setattr(res, attr, copy.deepcopy(self.__dict__[attr], memo))
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    @compatibility(is_backward_compatible=False)
    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False, **kwargs):
        """The generated code of this module and its GraphModule children, as a class (printed too)."""
        return _print_readable(self, self._get_name(), print_output)

    def __str__(self):
        orig_str = super().__str__()
        print_readable_reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([orig_str, self._code, print_readable_reminder])


def _print_readable(module, module_name, print_output=True):
    module_code = module.graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
    module_code = _addindent(f"class {module_name}(torch.nn.Module):\n" + module_code, 4)
    submodule_code_list = [""]
    for submodule_name, submodule in module.named_children():
        if isinstance(submodule, GraphModule):
            submodule_code_list.append(_print_readable(submodule, submodule_name, print_output=False))
    output = module_code + _addindent("\n".join(submodule_code_list), 4)
    if print_output:
        print(output)
    return output
