"""torch.fx.Proxy: the value that flows through a function being traced and records what touches it."""
import collections
import dis
import inspect
import operator
import sys

from ._compatibility import compatibility
from .graph import magic_methods, reflectable_magic_methods
from .node import Node, map_aggregate, map_arg

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute", "ParameterProxy", "Scope",
           "ScopeContextManager"]


@compatibility(is_backward_compatible=False)
class Scope:
    """The qualified name and type of the module whose forward is being traced."""

    def __init__(self, module_path, module_type):
        self.module_path, self.module_type = module_path, module_type


@compatibility(is_backward_compatible=False)
class ScopeContextManager:
    """Sets a Scope's fields for the duration of a module call."""

    def __init__(self, scope, current_scope):
        self._prev_scope = Scope(scope.module_path, scope.module_type)
        self._scope = scope
        scope.module_path, scope.module_type = current_scope.module_path, current_scope.module_type

    def __enter__(self):
        return self._scope

    def __exit__(self, *args):
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


@compatibility(is_backward_compatible=True)
class TracerBase:
    graph = None
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    module_stack = None
    node_name_to_scope = None

    @compatibility(is_backward_compatible=True)
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Insert a node into the graph; override to check or change what is recorded."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        self.node_name_to_scope[node.name] = (self.scope.module_path, self.scope.module_type)
        if self.module_stack:
            node.meta["nn_module_stack"] = collections.OrderedDict(self.module_stack)
        return node

    @compatibility(is_backward_compatible=True)
    def proxy(self, node):
        return Proxy(node, self)

    @compatibility(is_backward_compatible=True)
    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Create a node from the arguments (lowered by create_arg) and return it wrapped in a Proxy.
        A placeholder's args hold its default value, if any."""
        if getattr(type(target), "_fx_traced_function", False):
            target = target._fx_orig
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError(f"Expected args_ to be tuple, got {type(args_)}")
        if not isinstance(kwargs_, dict):
            raise AssertionError(f"Expected kwargs_ to be dict, got {type(kwargs_)}")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if not proxy_factory_fn else proxy_factory_fn(node)

    @compatibility(is_backward_compatible=True)
    def create_arg(self, a):
        """Lower a traced value to what a node stores: Proxies become their Nodes, containers are
        lowered element-wise, base types stay."""
        import mindtorch_v2 as torch
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            args = [self.create_arg(elem) for elem in a]
            return type(a)(*args) if hasattr(a, "_fields") else type(a)(args)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                if not isinstance(k, str):  # keys must not hold a Proxy
                    k = self.create_arg(k)
                    map_arg(k, _no_nodes_error)
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, (str, int, float, bool, complex, torch.dtype, torch.Tensor, torch.device,
                          torch.memory_format, torch.layout)) or a is None or a is ...:
            return a
        import enum
        if isinstance(a, enum.Enum):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    @compatibility(is_backward_compatible=True)
    def to_bool(self, obj):
        """Called when a Proxy is converted to bool (control flow); a subclass may return a value."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    @compatibility(is_backward_compatible=True)
    def iter(self, obj):
        """Called when a Proxy is iterated; a subclass may return an iterator."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
                         "loop or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org "
                         "for a more detailed explanation of what types of control flow can be traced, and check "
                         "out the Proxy docstring for help troubleshooting Proxy iteration errors")

    @compatibility(is_backward_compatible=True)
    def keys(self, obj):
        """Called when keys() is called on a Proxy (what ** does)."""
        return Attribute(obj, "keys")()


def _no_nodes_error(arg):
    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {arg}")


@compatibility(is_backward_compatible=True)
class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made around a raw Node: appends to that node's graph."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


@compatibility(is_backward_compatible=False)
def assert_fn(x):
    assert x


@compatibility(is_backward_compatible=True)
class TraceError(ValueError):
    pass


@compatibility(is_backward_compatible=True)
class Proxy:
    """Wraps a Node during symbolic tracing: torch functions, Tensor methods and operators applied to it
    add nodes to the graph instead of computing. A Proxy cannot be iterated or used as a bool (control
    flow); fx.wrap a function that needs to, or pass the deciding value in concrete_args."""

    @compatibility(is_backward_compatible=True)
    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # not added to the graph yet: a method call becomes one call_method node
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        import copy
        new_proxy = Proxy.__new__(type(self))
        for k, v in self.__dict__.items():
            try:
                new_proxy.__dict__[k] = copy.deepcopy(v, memo)
            except Exception:
                new_proxy.__dict__[k] = copy.copy(v)
        return new_proxy

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks by index: the caller's bytecode says how many values it wants
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        if sys.version_info >= (3, 11):
            from bisect import bisect_left
            inst = insts[bisect_left(insts, frame.f_lasti, key=lambda x: x.offset)]
        else:
            inst = insts[frame.f_lasti // 2]
        if inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    @compatibility(is_backward_compatible=True)
    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        """Record a torch function or Tensor method called with a Proxy among its arguments (the
        tracer's interception calls this, as PyTorch's dispatch does)."""
        args, kwargs = args or (), kwargs or {}
        tracers = {}
        map_aggregate((args, kwargs), lambda a: tracers.setdefault(a.tracer) if isinstance(a, cls) else None)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while trying to trace "
                               f"operations {orig_method}")
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


def _is_tensor_method(fn):
    """A Tensor method that is not also a torch function (mindtorch_v2's torch.add *is* Tensor.add)."""
    import mindtorch_v2 as torch
    name = getattr(fn, "__name__", "")
    return getattr(torch.Tensor, name, None) is fn and getattr(torch, name, None) is not fn


@compatibility(is_backward_compatible=True)
class Attribute(Proxy):
    @compatibility(is_backward_compatible=True)
    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        # added lazily: most attributes are method calls, recorded as one call_method node
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


@compatibility(is_backward_compatible=False)
class ParameterProxy(Proxy):
    """A Proxy of a module parameter whose shape queries answer from the parameter itself, so that
    conditions on them do not need tracing."""

    def __init__(self, tracer, node, name, param):
        import mindtorch_v2 as torch
        super().__init__(node, tracer)
        if not isinstance(param, torch.nn.Parameter):
            raise AssertionError(f"Expected Parameter, got {type(param)}")
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self):
        return self.param.size()

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _define_magic(method):
    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", getattr(operator, method), args, kwargs)
    impl.__name__ = method
    setattr(Proxy, f"__{method.strip('_')}__", impl)


def _define_reflectable(orig_method_name):
    method_name = f"__r{orig_method_name.strip('_')}__"

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", getattr(operator, orig_method_name), (rhs, self), {})
    impl.__name__ = impl.__qualname__ = method_name
    setattr(Proxy, method_name, impl)


for _m in magic_methods:
    _define_magic(_m)
for _m in reflectable_magic_methods:
    _define_reflectable(_m)
