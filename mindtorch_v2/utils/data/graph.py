"""torch.utils.data.graph: the graph of DataPipes a pipeline is built from, found by pickling each pipe
with hooks that record (instead of serialising) every other DataPipe it references."""
import io
import pickle
import warnings
from collections.abc import Collection

from .datapipes.datapipe import HAS_DILL, IterDataPipe, MapDataPipe

__all__ = ["traverse", "traverse_dps"]

DataPipe = IterDataPipe | MapDataPipe
DataPipeGraph = dict  # {id(pipe): (pipe, DataPipeGraph of the pipes it references)}


def _stub_unpickler():
    return "STUB"


def _keep_pipes_only(state):
    """A pipe's pickled state reduced to its DataPipes and collections (where pipes may hide)."""
    kinds = (IterDataPipe, MapDataPipe, Collection)
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if isinstance(v, kinds)}
    if isinstance(state, (tuple, list)):
        return [v for v in state if isinstance(v, kinds)]
    return state if isinstance(state, kinds) else None


def _list_connected_datapipes(scan_obj, only_datapipe, cache):
    """The DataPipes scan_obj's state references directly (each recorded once, by id, in cache)."""
    found = []

    def record(obj):
        if obj == scan_obj or id(obj) in cache:
            raise NotImplementedError  # pickle this one normally (scan_obj itself, or one seen before)
        found.append(obj)
        cache.add(id(obj))
        return _stub_unpickler, ()

    families = (IterDataPipe, MapDataPipe)
    sink = io.BytesIO()
    try:
        for cls in families:
            cls.set_reduce_ex_hook(record)
            if only_datapipe:
                cls.set_getstate_hook(_keep_pipes_only)
        try:
            pickle.Pickler(sink).dump(scan_obj)
        except (pickle.PickleError, AttributeError, TypeError):
            if not HAS_DILL:
                raise
            import dill
            dill.Pickler(sink).dump(scan_obj)  # lambdas and local functions
    finally:
        for cls in families:
            cls.set_reduce_ex_hook(None)
            if only_datapipe:
                cls.set_getstate_hook(None)
        if HAS_DILL:
            import dill
            dill.extend(False)  # dill's Pickler patches pickle's dispatch table; undo it
    return found


def _traverse_helper(datapipe, only_datapipe, cache):
    if not isinstance(datapipe, (IterDataPipe, MapDataPipe)):
        raise RuntimeError(f"Expected `IterDataPipe` or `MapDataPipe`, but {type(datapipe)} is found")
    key = id(datapipe)
    if key in cache:
        return {}
    cache.add(key)
    children = {}
    for item in _list_connected_datapipes(datapipe, only_datapipe, cache.copy()):
        children.update(_traverse_helper(item, only_datapipe, cache.copy()))
    return {key: (datapipe, children)}


def traverse_dps(datapipe):
    """{id(datapipe): (datapipe, graph of the DataPipes it is built on)}, recursively."""
    return _traverse_helper(datapipe, only_datapipe=True, cache=set())


def traverse(datapipe, only_datapipe=None):
    """Deprecated form of traverse_dps (only_datapipe=False also follows non-DataPipe state)."""
    msg = ("`traverse` function is deprecated and will be removed after 1.13. "
           "Please use `traverse_dps` instead.")
    if not only_datapipe:
        msg += " And, the behavior will be changed to the equivalent of `only_datapipe=True`."
    warnings.warn(msg, FutureWarning, stacklevel=2)
    return _traverse_helper(datapipe, bool(only_datapipe), set())
