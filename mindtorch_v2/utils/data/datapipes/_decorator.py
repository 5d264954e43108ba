"""The DataPipe decorators: functional_datapipe (registers a pipe class as a method of its family),
the determinism switches, and the argument/runtime validation of PyTorch 2.13."""
import inspect
from functools import wraps
from typing import get_type_hints

from .datapipe import IterDataPipe, MapDataPipe, _DataPipeMeta


class functional_datapipe:
    """`@functional_datapipe("map")` makes `dp.map(...)` construct the decorated class on dp."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if issubclass(cls, IterDataPipe):
            # a class, or a non_deterministic wrapper of one
            if isinstance(cls, type):
                ok = isinstance(cls, _DataPipeMeta)
            else:
                ok = isinstance(cls, non_deterministic) or isinstance(getattr(cls, "__self__", None),
                                                                      non_deterministic)
            if not ok:
                raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       enable_df_api_tracing=self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism = False
_runtime_validation_enabled = True


class _FlagSetting:
    """Sets the module flag _flag to _value from construction to the end of its `with`."""
    _flag = _value = None

    def __init__(self):
        self.prev = globals()[self._flag]
        globals()[self._flag] = self._value

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        globals()[self._flag] = self.prev


class guaranteed_datapipes_determinism(_FlagSetting):
    """While active, building a non-deterministic pipe raises."""
    _flag, _value = "_determinism", True


class non_deterministic:
    """Marks an IterDataPipe class as non-deterministic, always (`@non_deterministic`) or when a predicate
    of the constructor arguments says so (`@non_deterministic(fn)`)."""
    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`, "
                                f"but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:  # constructing the decorated class
            if _determinism:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        # decorating with a predicate: args[0] is the class
        target = args[0]
        if not (isinstance(target, type) and issubclass(target, IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {target.__name__} is found")
        self.cls = target
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        verdict = self.deterministic_fn(*args, **kwargs)
        if not isinstance(verdict, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean "
                            f"value, but {type(verdict)} is found")
        if _determinism and verdict:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                            "if that is acceptable for your application")
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Check the arguments annotated with a DataPipe class are DataPipes of a compatible type."""
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def checked(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            hint = hints.get(name)
            if not isinstance(hint, _DataPipeMeta):
                continue
            if not isinstance(value, IterDataPipe):
                raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found {type(value)}")
            # PyTorch 2.13's pipes carry no `.type` (its typing metaclass returns before setting it), so
            # reading it fails there as here, with the AttributeError of the pipe's __getattr__
            if not value.type.issubtype(hint.type):
                raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {hint.type}, "
                                f"but found {value.type}")
        return f(*args, **kwargs)
    return checked


class runtime_validation_disabled(_FlagSetting):
    """While active, runtime_validation checks nothing."""
    _flag, _value = "_runtime_validation_enabled", False


def runtime_validation(f):
    """Decorates `__iter__` to check each yielded sample against the pipe's `.type` (see
    argument_validation on that attribute)."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def checked(self):
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        for d in f(self):
            if not self.type.issubtype_of_instance(d):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found {d}({type(d)})")
            yield d
    return checked
