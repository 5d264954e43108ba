"""torch.fx.Interpreter runs a GraphModule node by node; Transformer re-records it into a new one."""
import inspect

from ._compatibility import compatibility
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


@compatibility(is_backward_compatible=True)
class Interpreter:
    """Executes a GraphModule one node at a time: run_node dispatches to placeholder, get_attr,
    call_function, call_method, call_module and output, which subclasses override to change what a
    kind of node does. Values are freed after their last use (garbage_collect_values)."""

    @compatibility(is_backward_compatible=True)
    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(self.module.named_modules())
        self.graph = graph if graph is not None else self.module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if self.garbage_collect_values:
            node_to_last_use, self.user_to_last_uses = {}, {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    @compatibility(is_backward_compatible=True)
    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on args (positional, one per placeholder); initial_env maps nodes to values
        to use instead of running them."""
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else str(msg)
                    msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    msg += ("\nUse tlparse to see full graph. "
                            "(https://github.com/pytorch/tlparse?tab=readme-ov-file#tlparse-parse-structured-pt2-logs)")
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                output_val = self.env[node]
                return self.graph.process_outputs(output_val) if enable_io_processing else output_val

    @compatibility(is_backward_compatible=True)
    def boxed_run(self, args_list):
        """run() taking a list of the arguments, which it clears (so inputs can be freed early)."""
        placeholder_nodes = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args_list) != len(placeholder_nodes):
            detail = "extra arguments" if len(args_list) > len(placeholder_nodes) else "missing arguments"
            raise RuntimeError(f"Interpreter.boxed_run expected {len(placeholder_nodes)} arguments for placeholders "
                               f"but received {len(args_list)} ({detail})")
        env = dict(zip(placeholder_nodes, args_list))
        args_list.clear()
        return self.run(initial_env=env)

    @compatibility(is_backward_compatible=True)
    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    @compatibility(is_backward_compatible=True)
    def placeholder(self, target, args, kwargs):
        """The next positional argument of run() (all the rest for *args), else the default."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed in!") \
                from si

    @compatibility(is_backward_compatible=True)
    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    @compatibility(is_backward_compatible=True)
    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    @compatibility(is_backward_compatible=True)
    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    @compatibility(is_backward_compatible=True)
    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    @compatibility(is_backward_compatible=True)
    def output(self, target, args, kwargs):
        return args[0]

    @compatibility(is_backward_compatible=True)
    def fetch_attr(self, target):
        """The attribute of self.module at the dotted path target."""
        target_atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(target_atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target_atoms[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    @compatibility(is_backward_compatible=True)
    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    @compatibility(is_backward_compatible=True)
    def map_nodes_to_values(self, args, n):
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() "
                                   "to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


@compatibility(is_backward_compatible=True)
class Transformer(Interpreter):
    """An Interpreter that runs symbolically, recording into a new graph; transform() returns the new
    GraphModule. Override call_function etc. to rewrite what is recorded."""

    @compatibility(is_backward_compatible=True)
    def __init__(self, module):
        from ._symbolic_trace import Tracer
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)

        class TransformerTracer(Tracer):
            def __init__(self, graph):
                super().__init__()
                self.graph = graph
                self.tensor_attrs = {}

            def is_leaf_module(self, _, __):
                return True

        self.tracer = TransformerTracer(self.new_graph)
        self.tracer.root = module

    def run_node(self, n):
        if n.op != "call_function":
            return super().run_node(n)
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return self.call_function(getattr(self, "_patched", {}).get(n.target, n.target), args, kwargs)

    @compatibility(is_backward_compatible=True)
    def placeholder(self, target, args, kwargs):
        default_value = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default_value), self.tracer)

    @compatibility(is_backward_compatible=True)
    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    @compatibility(is_backward_compatible=True)
    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    @compatibility(is_backward_compatible=True)
    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    @compatibility(is_backward_compatible=True)
    def transform(self):
        """The GraphModule recorded by running self.module symbolically."""
        from ._symbolic_trace import _Patcher, _patch_torch_functions
        with _Patcher() as patcher:  # torch functions an override calls on Proxies record themselves
            _patch_torch_functions(patcher)
            # call_function sees the target as the torch namespace now holds it: `target is torch.sigmoid`
            self._patched = {}
            for where, name, orig in patcher.patches_made:  # torch.sigmoid's wrapper, not torch.special's
                if isinstance(where, dict):
                    self._patched.setdefault(orig, where[name])
            result = super().run(enable_io_processing=False)
        if result is not None:
            new_output_node = self.new_graph.output(
                map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
            old_output_node = list(self.graph.nodes)[-1]
            for k, v in old_output_node.meta.items():
                new_output_node.meta[k] = v
        return GraphModule(self.module, self.new_graph)
