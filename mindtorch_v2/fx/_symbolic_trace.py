"""torch.fx symbolic tracing: Tracer, symbolic_trace, wrap.

The function runs once with Proxies for its inputs. PyTorch intercepts torch functions and Tensor methods
that receive a Proxy through `__torch_function__`; mindtorch_v2 has no such dispatch, so while tracing the
torch namespaces (torch, torch.nn.functional, torch.special, torch.linalg) and the Tensor class are patched
with _TorchFunction wrappers that record a node when a Proxy is among the arguments and call the function
otherwise. The patches are reverted when tracing ends, so untraced code pays nothing."""
import builtins
import collections
import copy
import functools
import inspect
import math
import os
import warnings
from itertools import chain
from types import FunctionType, MethodType

from ._compatibility import compatibility
from .graph import Graph, _is_magic
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import ParameterProxy, Proxy, Scope, ScopeContextManager, TracerBase

__all__ = ["PH", "ProxyableClassMeta", "Tracer", "symbolic_trace", "wrap"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_is_fx_tracing_flag = False
_proxyable_classes = {}


def is_fx_tracing():
    return _is_fx_tracing_flag


def is_fx_symbolic_tracing():
    return _is_fx_tracing_flag


@compatibility(is_backward_compatible=True)
class ProxyableClassMeta(type):
    """A metaclass whose classes, constructed with a Proxy among the arguments while tracing, record the
    construction as a call_function node."""

    def __init__(cls, name, bases, attrs):
        _proxyable_classes.setdefault(cls)
        super().__init__(name, bases, attrs)

    def __call__(cls, *args, **kwargs):
        instance = cls.__new__(cls)
        if not is_fx_tracing():
            cls.__init__(instance, *args, **kwargs)
            return instance
        found = []
        map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else None)
        if found:
            return found[0].tracer.create_proxy("call_function", cls, args, kwargs)
        cls.__init__(instance, *args, **kwargs)
        return instance


@compatibility(is_backward_compatible=False)
class PHBase:
    """A placeholder inside a concrete_args structure: that leaf stays an input."""

    def __repr__(self):
        return "PH"


PH = PHBase()


@compatibility(is_backward_compatible=False)
class PHWithMeta(PHBase):
    def __init__(self, ph_key=None):
        super().__init__()
        self.ph_key = ph_key


def _transfer_attrs(fr, to):
    for attr_name in dir(fr):
        attr_val = getattr(fr, attr_name)
        if not callable(attr_val) and not attr_name.startswith("__") and not hasattr(to, attr_name):
            setattr(to, attr_name, attr_val)


def _patch_function(fn, nargs):
    """fn with its *args/**kwargs turned into nargs plain positional parameters (the tracer passes one
    Proxy for each)."""
    co = fn.__code__
    code = co.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
                      co_flags=co.co_flags & ~HAS_VARSTUFF)
    return FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _assert_is_none(value, msg):
    assert value is None, msg


@compatibility(is_backward_compatible=True)
class Tracer(TracerBase):
    """Tracer(autowrap_modules=(math,), autowrap_functions=())

    Implements symbolic_trace: `Tracer().trace(m)` is the graph of m. Subclasses change what is a leaf
    module (is_leaf_module), how module calls and attribute reads are recorded (call_module, getattr),
    and how values become node arguments (create_arg)."""

    @compatibility(is_backward_compatible=True)
    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {id(value) for name, value in
                                       chain.from_iterable(m.__dict__.items() for m in autowrap_modules)
                                       if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.num_calls = {}
        self.node_name_to_scope = {}

    _qualname_counter = collections.defaultdict(int)

    @compatibility(is_backward_compatible=True)
    def get_fresh_qualname(self, prefix):
        """A name prefix<N> that is not yet an attribute of the root module."""
        qualname = f"{prefix}0"
        if not hasattr(self.root, qualname):
            self._qualname_counter[prefix] = 0
            return qualname
        i = self._qualname_counter[prefix]
        while True:
            qualname = f"{prefix}{i}"
            i += 1
            if not hasattr(self.root, qualname):
                break
        self._qualname_counter[prefix] = i
        return qualname

    @compatibility(is_backward_compatible=True)
    def create_arg(self, a):
        """As TracerBase.create_arg, and: a parameter, buffer or submodule of the root becomes a get_attr
        node; another tensor is stored on the root as _tensor_constant<N> and read by get_attr."""
        import mindtorch_v2 as torch
        if isinstance(a, torch.nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, torch.Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
        elif isinstance(a, torch.nn.Module):
            for n_, p_ in self.root.named_modules():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(elem) for elem in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, torch.Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if type(a) in _proxyable_classes:
            qualname = self.get_fresh_qualname(f"_{a.__class__.__name__}_constant_")
            setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    @compatibility(is_backward_compatible=True)
    def is_leaf_module(self, m, module_qualified_name):
        """Whether a module call is recorded as one call_module node rather than traced through: by
        default the modules of torch.nn, except Sequential."""
        import mindtorch_v2 as torch
        return (m.__module__.startswith(("torch.nn", "torch.ao.nn", "mindtorch_v2.nn"))
                and not isinstance(m, torch.nn.Sequential))

    @compatibility(is_backward_compatible=True)
    def path_of_module(self, mod):
        """The qualified name of mod in the root's module hierarchy."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    @compatibility(is_backward_compatible=True)
    def call_module(self, m, forward, args, kwargs):
        """A module call: a call_module node for a leaf module, else its forward traced through."""
        module_qualified_name = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(module_qualified_name, type(m))) as _scope:
            num_calls = self.num_calls.get(module_qualified_name, 0)
            module_key = f"{_scope.module_path}@{num_calls}" if num_calls > 0 else _scope.module_path
            self.module_stack[module_key] = (module_qualified_name, _scope.module_type)
            self.num_calls[module_qualified_name] = num_calls + 1
            if not self.is_leaf_module(m, module_qualified_name):
                ret_val = forward(*args, **kwargs)
            else:
                ret_val = self.create_proxy("call_module", module_qualified_name, args, kwargs)
            key, _ = self.module_stack.popitem(last=True)
            if key != module_key:
                raise AssertionError(f"Unexpected key {key}, expected {module_key}")
        return ret_val

    @compatibility(is_backward_compatible=False)
    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A module attribute read: a parameter (and, with proxy_buffer_attributes, a buffer) becomes a
        get_attr Proxy, made once per name."""
        import mindtorch_v2 as torch

        def maybe_get_proxy_for_attr(attr_val, collection_to_search):
            for n, p in collection_to_search:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        kwargs = {}
                        if "proxy_factory_fn" in inspect.signature(self.create_proxy).parameters:
                            kwargs["proxy_factory_fn"] = (None if not self.param_shapes_constant else
                                                          lambda node: ParameterProxy(self, node, n, attr_val))
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {}, **kwargs)
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, torch.nn.Parameter):
            proxy = maybe_get_proxy_for_attr(attr_val, self.root.named_parameters())
            if proxy is not None:
                return proxy
        if self.proxy_buffer_attributes and isinstance(attr_val, torch.Tensor):
            proxy = maybe_get_proxy_for_attr(attr_val, self.root.named_buffers())
            if proxy is not None:
                return proxy
        return attr_val

    @compatibility(is_backward_compatible=False)
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Placeholders for root_fn's parameters (concrete_args fix some); returns the function to call
        (with *args/**kwargs made positional) and its arguments."""
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        skip_arg_idx = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip_arg_idx = 1
            next(names_iter)  # skip self
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)
        if isinstance(concrete_args, tuple) and len(concrete_args) > 0 and (co.co_flags & HAS_VARSTUFF) \
                and total_args == 1:
            for name_idx, concrete_arg in enumerate(concrete_args):
                out = self.create_proxy("placeholder", f"input_{name_idx}", (), {})
                if isinstance(concrete_arg, PHBase) and concrete_arg != PH:
                    _transfer_attrs(fr=concrete_arg, to=out.node)
                args.append(out)
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(skip_arg_idx, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} "
                                   "concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(name, concrete_args, sig, fn_for_analysis) for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args, sig, fn_for_analysis))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args, sig,
                                                    fn_for_analysis))
            root_fn = _patch_function(root_fn, len(args))
        if any(isinstance(a, (tuple, list, dict)) for a in args[skip_arg_idx:]):
            raise NotImplementedError("torch.fx.Tracer: concrete_args holding containers of fx.PH (pytree inputs) "
                                      "are not implemented")
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, fn_for_analysis):
        import mindtorch_v2 as torch
        if concrete_args is not None and name in concrete_args:
            # a specialised input stays a placeholder, checked against its traced value
            cnt = 0

            def replace_ph(x):
                nonlocal cnt
                cnt += 1
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
                out = self.create_proxy("placeholder", f"{name}_{cnt}", default, {})
                if isinstance(x, PHBase):
                    if x != PH:
                        _transfer_attrs(fr=x, to=out.node)
                    return out
                if type(x) in (bool, int, float, str, complex, torch.dtype, torch.device, torch.memory_format,
                               torch.layout):
                    self.create_proxy("call_function", torch._assert, (
                        out == x, f"{name} has been specialized to have value {x} but got another value"), {})
                elif x is None:
                    self.create_proxy("call_function", _assert_is_none, (
                        out, f"{name} has been specialized to have value None but got another value"), {})
                else:
                    warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to "
                                  "specialized function. It is up to the user to make sure that your inputs match "
                                  "the inputs you specialized the function with.")
                return x

            from ..utils import _pytree as pytree
            return pytree.tree_map(replace_ph, concrete_args[name])
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=fn_for_analysis.__annotations__.get(name, None))

    @compatibility(is_backward_compatible=True)
    def trace(self, root, concrete_args=None):
        """The Graph of root (a Module's forward, or a function) run on Proxies; concrete_args fix inputs
        (a dict by parameter name). After this call self.root is the module the graph refers to (a fresh
        Module for a function, holding its constants)."""
        import mindtorch_v2 as torch
        global _is_fx_tracing_flag
        old_is_fx_tracing_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, torch.nn.Module):
                self.root = root
                if not hasattr(type(root), self.traced_func_name):
                    raise AssertionError(f"traced_func_name={self.traced_func_name} doesn't exist in "
                                         f"{type(root).__name__}")
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = torch.nn.Module()
                fn = root
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            if hasattr(fn, "__code__"):
                code = fn.__code__
                self.graph._co_fields = {"co_name": code.co_name, "co_filename": code.co_filename,
                                         "co_firstlineno": code.co_firstlineno}
            # tensors stored as attributes are read by get_attr under their attribute name
            self.tensor_attrs = {}

            def collect_tensor_attrs(m, prefix_atoms):
                for k, v in m.__dict__.items():
                    if isinstance(v, torch.Tensor):
                        self.tensor_attrs[v] = ".".join(prefix_atoms + [k])
                for k, v in m.named_children():
                    collect_tensor_attrs(v, prefix_atoms + [k])

            collect_tensor_attrs(self.root, [])
            if not isinstance(fn, FunctionType):
                raise AssertionError(f"Expected FunctionType, got {type(fn)}")
            fn_globals = fn.__globals__  # before it gets patched
            fn, args = self.create_args_for_root(fn, isinstance(root, torch.nn.Module), concrete_args)
            parameter_proxy_cache = {}  # one get_attr per parameter
            orig_getattr, orig_call = _orig_module_getattr(), _orig_module_call()

            @functools.wraps(orig_getattr)
            def module_getattr_wrapper(mod, attr):
                attr_val = orig_getattr(mod, attr)
                return self.getattr(attr, attr_val, parameter_proxy_cache)

            @functools.wraps(orig_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return orig_call(mod, *args, **kwargs)

                _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                                self._autowrap_function_ids)
                return self.call_module(mod, forward, args, kwargs)

            with _Patcher() as patcher:
                patcher.patch_method(torch.nn.Module, "__getattr__", module_getattr_wrapper, deduplicate=False)
                patcher.patch_method(torch.nn.Module, "__call__", module_call_wrapper, deduplicate=False)
                _patch_torch_functions(patcher)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {},
                                 type_expr=fn.__annotations__.get("return", None))
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_is_fx_tracing_flag
        return self.graph

    def __deepcopy__(self, memo):
        new_tracer = Tracer.__new__(Tracer)
        for k, v in self.__dict__.items():
            new_tracer.__dict__[k] = copy.copy(v) if k == "_autowrap_search" else copy.deepcopy(v, memo)
        return new_tracer


def _orig_module_getattr():
    import mindtorch_v2 as torch
    return _unpatched(torch.nn.Module.__dict__["__getattr__"])


def _orig_module_call():
    import mindtorch_v2 as torch
    return _unpatched(torch.nn.Module.__dict__["__call__"])


def _unpatched(fn):
    return getattr(fn, "_fx_orig", fn)


# ---- patching (reverted on exit) ----

class _Patcher:
    """Replaces attributes for the duration of a trace and restores them after, in reverse order."""

    def __init__(self):
        self.patches_made = []  # (namespace dict or class, name, original or _MISSING)
        self.visited = set()

    def patch(self, frame_dict, name, new_fn, deduplicate=True):
        """frame_dict[name] = new_fn until exit (a builtin is shadowed, then the shadow removed)."""
        new_fn.__fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            self.patches_made.append((frame_dict, name, _MISSING))
        elif getattr(frame_dict[name], "__fx_already_patched", False):
            return
        else:
            self.patches_made.append((frame_dict, name, frame_dict[name]))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn, deduplicate=True):
        """cls.name = new_fn until exit."""
        new_fn.__fx_already_patched = deduplicate
        orig_fn = cls.__dict__.get(name, _MISSING)
        if getattr(orig_fn, "__fx_already_patched", False):
            return
        new_fn._fx_orig = orig_fn
        self.patches_made.append((cls, name, orig_fn))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        """True on the first call with thing."""
        idx = id(thing)
        if idx in self.visited:
            return False
        self.visited.add(idx)
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches_made:
            where, name, orig = self.patches_made.pop()
            if isinstance(where, dict):
                if orig is _MISSING:
                    del where[name]
                else:
                    where[name] = orig
            elif orig is _MISSING:
                delattr(where, name)
            else:
                setattr(where, name, orig)
        self.visited.clear()


_MISSING = object()


class _TorchFunction:
    """A torch function or Tensor method while tracing: with a Proxy among its arguments it records
    itself (what PyTorch's Proxy.__torch_function__ does), else it runs. It compares and hashes as the
    function it stands for, so tables keyed by torch.add or torch.Tensor.mul still find it."""
    _fx_traced_function = True  # a node records the function, never this wrapper

    def __init__(self, fn, method_name=None):
        functools.update_wrapper(self, fn)
        self._fx_orig, self._method_name = fn, method_name

    def __call__(self, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return self._fx_orig(*args, **kwargs)
        if self._method_name is not None:
            return proxy.tracer.create_proxy("call_method", self._method_name, args, kwargs)
        return type(proxy).__torch_function__(self._fx_orig, (type(proxy),), args, kwargs)

    def __get__(self, obj, cls=None):
        return self if obj is None else MethodType(self, obj)

    def __eq__(self, other):
        return self._fx_orig == _unpatched(other)

    def __hash__(self):
        return hash(self._fx_orig)

    def __repr__(self):
        return repr(self._fx_orig)


# what PyTorch does not trace (torch.overrides.get_ignored_functions): factories and global state, which
# take no tensor, predicates that answer for a Proxy as for any non-tensor, and F's aliases of torch ops
_UNTRACED = {"torch": frozenset("""
arange are_deterministic_algorithms_enabled as_strided as_tensor asarray broadcast_shapes can_cast
clear_autocast_cache compile cond empty empty_strided eye from_numpy frombuffer full get_autocast_cpu_dtype
get_autocast_dtype get_autocast_gpu_dtype get_default_device get_default_dtype get_deterministic_debug_mode
get_num_threads get_rng_state initial_seed is_anomaly_check_nan_enabled is_anomaly_enabled
is_autocast_cache_enabled is_autocast_cpu_enabled is_autocast_enabled is_deterministic_algorithms_warn_only_enabled
is_grad_enabled is_inference_mode_enabled is_tensor is_storage typename linspace load logspace manual_seed normal
ones promote_types rand rand_like randint randint_like randn randn_like randperm result_type save scalar_tensor
seed set_autocast_cache_enabled set_autocast_dtype set_autocast_enabled set_default_device set_default_dtype
set_deterministic_debug_mode set_num_threads set_rng_state tensor tril_indices triu_indices
use_deterministic_algorithms vmap zeros""".split()),
             "torch.nn.functional": frozenset("""_canonical_mask _none_or_dtype hardsigmoid hardswish sigmoid
tanh upsample upsample_bilinear upsample_nearest""".split()),
             "torch.Tensor": frozenset("""_make_subclass _reduce_ex_internal _typed_storage new_empty new_full
new_ones new_tensor new_zeros stride unflatten""".split())}
from ..overrides import DUNDER_METHODS as _TRACED_DUNDERS  # noqa: E402


def _patch_torch_functions(patcher):
    import mindtorch_v2 as torch
    package = os.path.dirname(torch.__file__) + os.sep

    def traced(fn, name, untraced):
        return (isinstance(fn, FunctionType) and fn.__code__.co_filename.startswith(package)
                and name not in untraced and (not _is_magic(name) or name in _TRACED_DUNDERS))

    for ns, key in ((torch, "torch"), (torch.nn.functional, "torch.nn.functional"), (torch.special, ""),
                    (torch.linalg, "")):
        for name, fn in list(vars(ns).items()):
            if traced(fn, name, _UNTRACED.get(key, ())):
                patcher.patch(ns.__dict__, name, _TorchFunction(fn))
    for name, fn in list(vars(torch.Tensor).items()):
        if traced(fn, name, _UNTRACED["torch.Tensor"]):
            patcher.patch_method(torch.Tensor, name, _TorchFunction(fn, _TRACED_DUNDERS.get(name, name)))


def _find_proxy(*objects_to_search):
    """The last Proxy in a nested structure, or None."""
    proxy = None

    def find_proxy(x):
        nonlocal proxy
        if isinstance(x, Proxy):
            proxy = x

    map_aggregate(objects_to_search, find_proxy)
    return proxy


# ---- fx.wrap: functions kept as call_function leaves ----

_wrapped_fns_to_patch = {}  # (id(globals), name) -> globals


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return_proxy = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            return_proxy.node.meta["is_wrapped"] = True
            return return_proxy
        return orig_fn(*args, **kwargs)
    return wrapped


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        orig_fn = getattr(builtins, name) if name not in frame_dict and hasattr(builtins, name) \
            else frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn))


def _autowrap_check(patcher, frame_dict, function_ids):
    """Wrap the autowrap functions (math.* by default) that the traced code's module globals hold."""
    if patcher.visit_once(frame_dict):
        for name, value in frame_dict.items():
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


@compatibility(is_backward_compatible=True)
def wrap(fn_or_name):
    """At module level, make the named global function a leaf: traced calls to it that receive a Proxy
    are recorded as one call_function node rather than traced through. Usable as a decorator."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    f = inspect.currentframe().f_back
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(f.f_globals), fn_name)] = f.f_globals
    return fn_or_name


@compatibility(is_backward_compatible=True)
def symbolic_trace(root, concrete_args=None):
    """The GraphModule recording the operations of root (an nn.Module or a function) on symbolic
    inputs; concrete_args (a dict by parameter name) specialises inputs to the given values."""
    import mindtorch_v2 as torch
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, torch.nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


wrap("_assert_is_none")
