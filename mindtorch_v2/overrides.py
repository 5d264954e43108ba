"""torch.overrides: the __torch_function__ protocol.

An argument whose type defines __torch_function__ (a Tensor subclass, or any class) takes over a call of a
torch function or Tensor method, as in PyTorch: its __torch_function__(func, types, args, kwargs) runs
instead, subclasses before their bases, the first result that is not NotImplemented winning.

PyTorch checks every call in C. Here the check is a Python wrapper around each torch.* function
(and torch.nn.functional, linalg, special, fft) and each Tensor method, and a wrapper costs every call,
plain tensors included. So the wrappers are installed only once a class that can take part exists:
at the definition of the first Tensor subclass that defines its own __torch_function__ (other than the
disabled one; `Tensor.__init_subclass__`), or at `enable_torch_function()`. Until then no call pays
anything, a plain subclass's results stay Tensors, and a non-Tensor class defining __torch_function__ is
not consulted (see docs/ARCHITECTURE.md). References taken before the installation (`from torch import
add`, a default argument `activation=F.relu`) stay the plain functions, so an identity test against the
namespace's (now wrapped) function is False after it: the known cost of doing this check in Python."""
import contextlib
import functools
import sys
import threading
from types import FunctionType

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_torch_function", "enable_reentrant_dispatch",
           "redispatch_function", "resolve_name"]


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """torch._C._disabled_torch_function_impl: a class whose __torch_function__ is this takes no part."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


_state = threading.local()  # .disabled: depth of DisableTorchFunction(Subclass) regions in this thread


class DisableTorchFunctionSubclass:
    """torch._C.DisableTorchFunctionSubclass: no __torch_function__ is consulted in this thread inside it."""

    def __enter__(self):
        _state.disabled = getattr(_state, "disabled", 0) + 1
        return self

    def __exit__(self, *exc):
        _state.disabled -= 1
        return False


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """torch._C.DisableTorchFunction (also disables torch function modes, which mindtorch_v2 does not have)."""


def convert_result(ret, cls):
    """Tensor.__torch_function__'s conversion (torch._tensor._convert): Tensors in ret become cls."""
    from ._tensor import Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [convert_result(r, cls) for r in ret]
        return ret._make(items) if hasattr(ret, "_make") else type(ret)(items)
    return ret


def _is_torch_function_enabled():
    return not getattr(_state, "disabled", 0)


_OVERRIDES = {}  # type -> does it take part (a __torch_function__ that is not the disabled one)
_PLAIN = frozenset()  # set at installation: the exact types that never take part (Tensor, numbers...)
_Tensor = None


def _takes_part(t):
    r = _OVERRIDES.get(t)
    if r is None:
        tf = getattr(t, "__torch_function__", None)
        r = _OVERRIDES[t] = tf is not None and getattr(tf, "__func__", tf) is not _disabled_torch_function_impl
    return r


def _get_overloaded_args(relevant_args, get_type_fn=type, exact_tensors=True):
    """The arguments whose __torch_function__ to call, in PyTorch's order (NEP-18: subclasses before their
    bases, else left to right; one per type). exact_tensors: include plain Tensors (the Python-level
    handle_torch_function does; the C dispatch of torch functions and methods does not)."""
    from ._tensor import Tensor
    if not _is_torch_function_enabled():
        return []
    types, overloaded = set(), []
    for arg in relevant_args:
        t = get_type_fn(arg)
        if t in types or not _takes_part(t) or (t is Tensor and not exact_tensors):
            continue
        index = len(overloaded)
        for i, old in enumerate(overloaded):
            if issubclass(t, get_type_fn(old)):
                index = i
                break
        types.add(t)
        overloaded.insert(index, arg)
    return overloaded


def _dispatch(public_api, overloaded, args, kwargs, func_name, python_text):
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if python_text:
        raise TypeError(f"no implementation found for '{func_name}' on types that implement __torch_function__: "
                        f"{[type(a) for a in overloaded]}")
    lines = "".join(f"  - tensor subclass {t}\n" for t in types)
    raise TypeError(f"Multiple dispatch failed for '{func_name}'; all __torch_function__ handlers returned "
                    f"NotImplemented:\n\n{lines}\nFor more information, try re-running with TORCH_LOGS=not_implemented")


def _qualname(func):
    torch_name = getattr(func, "_torch_name", None)
    if torch_name is not None:
        return torch_name
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{module}.{name}" if module else name


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    overloaded = _get_overloaded_args(relevant_args)
    return _dispatch(public_api, overloaded, args, kwargs, _qualname(public_api), True)


def has_torch_function(relevant_args):
    from ._tensor import Tensor
    return _is_torch_function_enabled() and any(type(a) is not Tensor and _takes_part(type(a)) for a in relevant_args)


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def redispatch_function(func, types, args, kwargs):
    """Run func's own implementation on args, skipping __torch_function__ for this call only (the ops inside
    it dispatch as usual): a torch function or Tensor method runs the function it wraps; any other callable
    is called again, as PyTorch's one-hop skip does not reach Python-level handle_torch_function either."""
    impl = getattr(func, "__wrapped__", func) if getattr(func, "__name__", None) else func
    return impl(*args, **(kwargs or {}))


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """PyTorch restores the dispatch state saved on entering __torch_dispatch__; mindtorch_v2 has no
    __torch_dispatch__, so it is always outside one, where PyTorch raises this."""
    raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.")
    yield


def resolve_name(f):
    """The qualified name of an overridable function ("torch.add", "torch.Tensor.add", ...), else None."""
    import mindtorch_v2 as torch
    spaces = {torch: "torch", torch.Tensor: "torch.Tensor", torch.nn.functional: "torch.nn.functional",
              torch.special: "torch.special", torch.linalg: "torch.linalg", torch.fft: "torch.fft"}
    for ns, fns in get_overridable_functions().items():
        for name, v in vars(ns).items():
            if v is f and any(v is g for g in fns):
                return f"{spaces[ns]}.{name}"
    return None


def is_tensor_like(inp):
    from ._tensor import Tensor
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    from ._tensor import Tensor
    return func in Tensor.__dict__.values() or getattr(func, "__name__", None) in Tensor.__dict__


def wrap_torch_function(dispatcher):
    """Decorator: the function consults __torch_function__ on the arguments dispatcher(*args, **kwargs) names."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


# ---- the wrappers of torch functions and Tensor methods ---------------------------------------

def _scan(args, kwargs):
    """The arguments that take part, or None: positional and keyword ones, and those inside a list or tuple.
    Every call of a wrapped function runs this, so it only compares types (plain tensors, numbers)."""
    found = None
    for a in (args if not kwargs else (*args, *kwargs.values())):
        t = type(a)
        if t in _PLAIN:
            continue
        if t is list or t is tuple:
            for b in a:
                tb = type(b)
                if tb not in _PLAIN and _takes_part(tb):
                    found = (found or []) + [b]
        elif _takes_part(t):
            found = (found or []) + [a]
    return found


# The code of the wrappers: they add a frame between a torch function and its caller, which warnings and the
# profiler's stacks skip, so both still point at the caller (as without wrappers).
WRAPPER_CODES = set()


def unwrapped(fn):
    """fn without its __torch_function__ wrapper: identity checks (activation is F.relu) hold either way."""
    code = getattr(fn, "__code__", None)
    return fn.__wrapped__ if code is not None and code in WRAPPER_CODES else fn


def _warn_past_wrappers(original):
    """warnings.warn counting stacklevel over the caller's frames only, the wrappers' frames not included."""
    def warn(message, category=None, stacklevel=1, source=None, **kwargs):
        frame, walked, remaining = sys._getframe(1), 1, stacklevel - 1
        while remaining > 0 and frame.f_back is not None:
            frame, walked = frame.f_back, walked + 1
            if frame.f_code not in WRAPPER_CODES:
                remaining -= 1
        return original(message, category, walked + 1, source, **kwargs)
    warn._mindtorch_original = original
    return warn


def _wrap(fn, func_name, python_text=False, operator=False, method=None):
    """fn consulting __torch_function__; method: the Tensor method named as func instead (operators)."""
    def dispatching(*args, **kwargs):
        found = _scan(args, kwargs)
        if found is None or getattr(_state, "disabled", 0):
            return fn(*args, **kwargs)
        func = dispatching if method is None else getattr(_Tensor, method, dispatching)
        try:
            return _dispatch(func, _get_overloaded_args(found), args, kwargs, _qualname(func), python_text)
        except TypeError:
            if operator:  # Python then tries the reflected operator, and raises its own TypeError
                return NotImplemented
            raise
    functools.update_wrapper(dispatching, fn)  # fn's module and name: pickle finds the wrapper by them
    WRAPPER_CODES.add(dispatching.__code__)  # one code object for every wrapper
    dispatching.__name__ = func_name.rpartition(".")[2]
    dispatching._torch_name = func_name  # what PyTorch's messages call it (_qualname)
    return dispatching


# names PyTorch does not dispatch (get_ignored_functions): factories and global state, which take no tensor
_IGNORED = frozenset("""
arange are_deterministic_algorithms_enabled as_strided as_tensor asarray broadcast_shapes can_cast
clear_autocast_cache compile cond empty empty_strided eye from_numpy frombuffer full get_autocast_cpu_dtype
get_autocast_dtype get_autocast_gpu_dtype get_default_device get_default_dtype get_deterministic_debug_mode
get_num_threads get_rng_state initial_seed is_anomaly_check_nan_enabled is_anomaly_enabled
is_autocast_cache_enabled is_autocast_cpu_enabled is_autocast_enabled is_deterministic_algorithms_warn_only_enabled
is_grad_enabled is_inference_mode_enabled is_tensor is_storage typename linspace load logspace manual_seed
ones promote_types rand randint randn randperm result_type save scalar_tensor
seed set_autocast_cache_enabled set_autocast_dtype set_autocast_enabled set_default_device set_default_dtype
set_deterministic_debug_mode set_num_threads set_rng_state tensor tril_indices triu_indices
use_deterministic_algorithms vmap zeros _make_subclass _as_subclass as_subclass _alias __torch_function__
_reduce_ex_internal _typed_storage __init__ __new__ __del__ __repr__ __format__ __hash__ __bool__ __len__
__iter__ __index__ __int__ __float__ __reduce_ex__ __setstate__ __getstate__ __deepcopy__ __dir__
__array__ __array_wrap__ __dlpack__ __dlpack_device__ __init_subclass__ __class_getitem__
_version data_ptr untyped_storage storage is_leaf dim ndimension""".split())
# the method PyTorch names for a Tensor operator: what __torch_function__ receives as func (and what an
# fx trace records)
DUNDER_METHODS = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__rsub__": "__rsub__", "__mul__": "mul",
    "__rmul__": "mul", "__truediv__": "div", "__rtruediv__": "__rdiv__", "__matmul__": "matmul",
    "__rmatmul__": "__rmatmul__", "__pow__": "pow", "__rpow__": "__rpow__", "__floordiv__": "__floordiv__",
    "__rfloordiv__": "__rfloordiv__", "__mod__": "remainder", "__rmod__": "__rmod__", "__and__": "__and__",
    "__rand__": "bitwise_and", "__or__": "__or__", "__ror__": "bitwise_or", "__xor__": "__xor__",
    "__rxor__": "bitwise_xor", "__lshift__": "__lshift__", "__rshift__": "__rshift__", "__eq__": "eq",
    "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__getitem__": "__getitem__",
    "__setitem__": "__setitem__", "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_",
    "__itruediv__": "div_"}
_UNARY_DUNDERS = {"__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not", "__pos__": "positive"}
_OPERATORS = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__matmul__", "__rmatmul__", "__pow__", "__rpow__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
              "__ge__", "__div__", "__rdiv__"}
_DUNDERS = _OPERATORS | {"__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__setitem__",
                         "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
                         "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
                         "__imatmul__", "__contains__"}
_installed = False
_NOWRAP = {"_base", "grad", "_grad"}  # get_default_nowrap_functions: their results keep their own type


def _wrap_property(cls, name, prop):
    """A Tensor property whose getter consults __torch_function__ with func = Tensor.<name>.__get__."""
    getter = prop.fget

    def fget(self):
        if type(self) is cls or getattr(_state, "disabled", 0) or not _takes_part(type(self)):
            return getter(self)
        public = vars(cls)[name]
        return _dispatch(public.__get__, [self], (self,), None, f"torch.Tensor.{name}.__get__", False)
    setattr(cls, name, property(fget, prop.fset, prop.fdel, prop.__doc__))


def get_default_nowrap_functions():
    from ._tensor import Tensor
    return {vars(Tensor)[n].__get__ for n in _NOWRAP if n in vars(Tensor)}


def enable_torch_function():
    """Install the dispatching wrappers (once; Tensor.__init_subclass__ calls it)."""
    global _installed, _PLAIN, _Tensor
    if _installed:
        return
    _installed = True
    import warnings
    if not hasattr(warnings.warn, "_mindtorch_original"):
        warnings.warn = _warn_past_wrappers(warnings.warn)
    import mindtorch_v2 as torch
    _Tensor = torch.Tensor
    _PLAIN = frozenset((torch.Tensor, int, float, bool, str, type(None), slice, type(Ellipsis)))
    from ._registry import TORCH
    from .nn import functional as F
    package = torch.__file__.rsplit("/", 1)[0] + "/"

    def ours(fn):
        return isinstance(fn, FunctionType) and fn.__code__.co_filename.startswith(package)

    for name in TORCH:
        fn = vars(torch).get(name)
        if ours(fn) and name not in _IGNORED and not name.startswith("__"):
            setattr(torch, name, _wrap(fn, f"torch.{name}"))
    for ns, prefix, python_text in ((F, "torch.nn.functional", True), (torch.special, "torch.special", False),
                                    (torch.linalg, "torch.linalg", False), (torch.fft, "torch.fft", False)):
        for name, fn in list(vars(ns).items()):
            if ours(fn) and not name.startswith("_") and name not in _IGNORED:
                setattr(ns, name, _wrap(fn, f"{prefix}.{name}", python_text))
    for name, fn in list(vars(torch.Tensor).items()):
        if ours(fn) and name not in _IGNORED and (not name.startswith("__") or name in _DUNDERS):
            method = DUNDER_METHODS.get(name) or _UNARY_DUNDERS.get(name)
            setattr(torch.Tensor, name, _wrap(fn, f"torch.Tensor.{name}", operator=name in _OPERATORS,
                                              method=method if method != name else None))
        elif isinstance(fn, property) and ours(fn.fget) and name not in _IGNORED:
            _wrap_property(torch.Tensor, name, fn)


def get_ignored_functions():
    import mindtorch_v2 as torch
    return {getattr(torch, n) for n in _IGNORED if callable(getattr(torch, n, None))}


def get_overridable_functions():
    """{namespace: [functions]} that consult __torch_function__ (the wrapped ones once installed)."""
    import mindtorch_v2 as torch
    from ._registry import TORCH
    out = {torch: [getattr(torch, n) for n in TORCH if n not in _IGNORED and callable(getattr(torch, n, None))]}
    out[torch.Tensor] = [v for n, v in vars(torch.Tensor).items()
                         if callable(v) and n not in _IGNORED and (not n.startswith("__") or n in _DUNDERS)]
    for ns in (torch.nn.functional, torch.special, torch.linalg, torch.fft):
        out[ns] = [v for n, v in vars(ns).items() if isinstance(v, FunctionType) and not n.startswith("_")]
    return out


def get_testing_overrides():
    raise NotImplementedError("torch.overrides.get_testing_overrides is not implemented in mindtorch_v2")


class TorchFunctionMode:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.overrides.TorchFunctionMode is not implemented")


class BaseTorchFunctionMode(TorchFunctionMode):
    pass


def _get_current_function_mode():
    return None


def _get_current_function_mode_stack():
    return []


def _is_torch_function_mode_enabled():
    return False
