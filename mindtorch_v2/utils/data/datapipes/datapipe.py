"""IterDataPipe and MapDataPipe: datasets chained by functional methods (`dp.map(f).filter(g)`), each
method a pipe class registered by `functional_datapipe`; DataChunk, the batches they produce."""
import functools
import pickle
from abc import ABCMeta
from typing import TypeVar

from mindtorch_v2.utils.data.dataset import Dataset, IterableDataset
from ._hook_iterator import _SnapshotState, hook_iterator

try:
    import dill
    # importing dill installs its picklers into pickle's own tables; undo that, as PyTorch does, so that
    # torch.save and every other pickle.dump stay plain pickle (dill is used only where asked for)
    dill.extend(use_dill=False)
except ImportError:
    dill = None
HAS_DILL = dill is not None

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)

# functional names whose result the DataFrame tracing leaves alone
UNTRACABLE_DATAFRAME_PIPES = ["batch", "groupby", "_dataframes_as_tuples", "trace_as_dataframe"]


class DataChunk(list[_T]):
    """A batch: a list that also keeps its items as `.items`."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


class _DataPipeMeta(ABCMeta):
    """The metaclass of every DataPipe (PyTorch 2.13's adds no typing behaviour either)."""


class _IterDataPipeMeta(_DataPipeMeta):
    """Wraps the `__iter__`/`__next__`/`reset` a class body defines (see _hook_iterator)."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        if "reset" in namespace:
            namespace["reset"] = _snapshot_aware_reset(namespace["reset"])
        if "__iter__" in namespace:
            hook_iterator(namespace)
        return super().__new__(mcs, name, bases, namespace, **kwargs)


def _snapshot_aware_reset(reset):
    """Run reset unless the pipe was just restored from a snapshot (its first iterator keeps that state)."""
    @functools.wraps(reset)
    def wrapped(*args, **kwargs):
        dp = args[0]
        if dp._snapshot_state in (_SnapshotState.Iterating, _SnapshotState.NotStarted):
            dp._number_of_samples_yielded = 0
            dp._fast_forward_iterator = None
            reset(*args, **kwargs)
        dp._snapshot_state = _SnapshotState.Iterating
    return wrapped


class _PipeAPI:
    """What IterDataPipe and MapDataPipe share: the functional registry and the pickling hooks.
    `_root` is the family class whose registry and hooks apply (class attributes of that class)."""
    _root = None

    def __getattr__(self, name):
        fn = type(self)._root.functions.get(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}")
        bound = functools.partial(fn, self)
        functools.update_wrapper(bound, fn, assigned=("__doc__",))
        return bound

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def _register_class(cls, function_name, make):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")
        cls.functions[function_name] = make

    def __getstate__(self):
        hook = type(self)._root.getstate_hook
        return self.__dict__ if hook is None else hook(self.__dict__)

    def __reduce_ex__(self, *args, **kwargs):
        hook = type(self)._root.reduce_ex_hook
        if hook is not None:
            try:
                return hook(self)
            except NotImplementedError:  # the hook declines this object: pickle it normally
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def set_getstate_hook(cls, hook_fn):
        root = cls._root
        if root.getstate_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing getstate_hook")
        root.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn):
        root = cls._root
        if root.reduce_ex_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing reduce_ex_hook")
        root.reduce_ex_hook = hook_fn

    def __repr__(self):
        return str(type(self).__qualname__) if self.repr_hook is None else self.repr_hook(self)

    def __str__(self):
        return str(type(self).__qualname__) if self.str_hook is None else self.str_hook(self)

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions.keys())


class IterDataPipe(_PipeAPI, IterableDataset[_T_co], metaclass=_IterDataPipeMeta):
    """An iterable-style DataPipe: lazily yields samples; one valid iterator at a time (a new `iter()`
    invalidates the previous one and calls `reset()`)."""
    functions = {}
    reduce_ex_hook = None
    getstate_hook = None
    str_hook = None
    repr_hook = None
    _valid_iterator_id = None
    _number_of_samples_yielded = 0
    _snapshot_state = _SnapshotState.NotStarted
    _fast_forward_iterator = None

    def __iter__(self):
        return self

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        def make(source_dp, *args, **kwargs):
            result = cls_to_register(source_dp, *args, **kwargs)
            if (isinstance(result, IterDataPipe) and (enable_df_api_tracing or isinstance(source_dp, DFIterDataPipe))
                    and function_name not in UNTRACABLE_DATAFRAME_PIPES):
                raise NotImplementedError("torch.utils.data.datapipes.dataframe (DataFrame API tracing) is not "
                                          "implemented")
            return result
        functools.update_wrapper(make, cls_to_register, assigned=("__doc__",), updated=())
        cls._register_class(function_name, make)

    def reset(self):
        """Called by every new iterator; pipes with buffers or pointers override it."""


IterDataPipe._root = IterDataPipe


class DFIterDataPipe(IterDataPipe):
    def _is_dfpipe(self):
        return True


class MapDataPipe(_PipeAPI, Dataset[_T_co], metaclass=_DataPipeMeta):
    """A map-style DataPipe: `__getitem__` by key, and usually `__len__`."""
    functions = {}
    reduce_ex_hook = None
    getstate_hook = None
    str_hook = None
    repr_hook = None

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        def make(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)
        functools.update_wrapper(make, cls_to_register, assigned=("__doc__",), updated=())
        cls._register_class(function_name, make)


MapDataPipe._root = MapDataPipe


class _DataPipeSerializationWrapper:
    """What DataLoader hands to workers: pickles the pipe with pickle, or with dill when pickle fails
    (lambdas)."""

    def __init__(self, datapipe):
        self._datapipe = datapipe

    def __getstate__(self):
        try:
            return pickle.dumps(self._datapipe), False
        except Exception:
            if not HAS_DILL:
                raise
            return dill.dumps(self._datapipe), True

    def __setstate__(self, state):
        blob, with_dill = state
        self._datapipe = (dill if with_dill else pickle).loads(blob)

    def __len__(self):
        try:
            return len(self._datapipe)
        except Exception as e:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length") from e


class _IterDataPipeSerializationWrapper(_DataPipeSerializationWrapper, IterDataPipe):
    def __init__(self, datapipe):
        super().__init__(datapipe)
        self._datapipe_iter = None

    def __iter__(self):
        self._datapipe_iter = iter(self._datapipe)
        return self

    def __next__(self):
        if self._datapipe_iter is None:
            raise AssertionError("Iterator has not been initialized; call __iter__() before __next__()")
        return next(self._datapipe_iter)


class _MapDataPipeSerializationWrapper(_DataPipeSerializationWrapper, MapDataPipe):
    def __getitem__(self, idx):
        return self._datapipe[idx]
