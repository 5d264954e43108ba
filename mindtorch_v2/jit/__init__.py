"""torch.jit: TorchScript is not implemented. The predicates and the decorators that mean
"leave this function alone" work; torch.jit.script of a plain function (libraries decorate helpers
with it at import time) returns the function wrapped to run eagerly: the same results, but no
graph, code or serialization (those raise NotImplementedError). Scripting modules and tracing raise
NotImplementedError."""
import contextlib
import warnings

from .._missing import missing_function


def is_scripting():
    return False


def is_tracing():
    return False


def unused(fn):
    return fn


def ignore(drop=False, **kwargs):
    if callable(drop):  # used as @torch.jit.ignore
        return drop
    return lambda fn: fn


def export(fn):
    return fn


def interface(obj):
    return obj


def _copy_to_script_wrapper(fn):
    return fn


def annotate(the_type, the_value):
    return the_value


def isinstance(obj, target_type):
    import builtins
    return builtins.isinstance(obj, target_type)


def _not_implemented(name):
    return missing_function(f"torch.jit.{name}", " (mindtorch_v2 has no TorchScript)")


class _EagerScriptFunction:
    """what torch.jit.script(fn) returns here: fn, run as Python"""

    def __init__(self, fn):
        import functools
        functools.update_wrapper(self, fn)
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name):
        if name in ("graph", "code", "save", "inlined_graph", "schema", "graph_for", "code_with_constants"):
            raise NotImplementedError(f"torch.jit.ScriptFunction.{name} is not implemented (mindtorch_v2 runs "
                                      "scripted functions as Python)")
        raise AttributeError(name)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    import inspect
    if inspect.isfunction(obj):
        return _EagerScriptFunction(obj)
    raise NotImplementedError("torch.jit.script of a module or class is not implemented (mindtorch_v2 has no "
                              "TorchScript)")


trace = _not_implemented("trace")
trace_module = _not_implemented("trace_module")
load = _not_implemented("load")
save = _not_implemented("save")
freeze = _not_implemented("freeze")
optimize_for_inference = _not_implemented("optimize_for_inference")
fork = _not_implemented("fork")
wait = _not_implemented("wait")


def script_if_tracing(fn):
    return fn  # never tracing: the function runs as is


_script_if_tracing = script_if_tracing  # torch.jit._script_if_tracing, its older name


def _overload_method(func):
    """Declares a TorchScript overload of a method; the undecorated definition after it is the one that runs."""
    return func


def _overload(func):
    """Declares a TorchScript overload of a function; the undecorated definition after it is the one that runs."""
    return func


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


@contextlib.contextmanager
def fuser(name):
    yield


from typing import Final  # noqa: E402  (torch.jit.Final is typing.Final, as in PyTorch)


class ScriptModule:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.jit.ScriptModule is not implemented (mindtorch_v2 has no TorchScript)")


class ScriptFunction:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.jit.ScriptFunction is not implemented (mindtorch_v2 has no TorchScript)")


class RecursiveScriptModule(ScriptModule):
    pass


class TracerWarning(Warning):
    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")


class Error(RuntimeError):
    pass


from . import _recursive, _state  # noqa: E402,F401  (their registries: empty, as nothing is scripted)
