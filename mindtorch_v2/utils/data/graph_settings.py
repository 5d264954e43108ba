"""torch.utils.data.graph_settings: settings applied to every DataPipe of a graph that supports them
(sharding, shuffling, random seeds)."""
import inspect
import warnings

import mindtorch_v2 as torch
from .datapipes.iter.sharding import SHARDING_PRIORITIES, _ShardingIterDataPipe
from .graph import DataPipe, DataPipeGraph, traverse_dps  # noqa: F401

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed", "apply_shuffle_settings",
           "get_all_graph_pipes"]


def get_all_graph_pipes(graph):
    """Every DataPipe of the graph once, depth first."""
    seen, out = set(), []

    def walk(g):
        for key, (dp, sub) in g.items():
            if key not in seen:
                seen.add(key)
                out.append(dp)
                walk(sub)
    walk(graph)
    return out


def _has_method(dp, *names):
    return all(inspect.ismethod(getattr(dp, n, None)) for n in names)


def _is_sharding_datapipe(dp):
    return isinstance(dp, _ShardingIterDataPipe) or _has_method(dp, "apply_sharding")


def apply_sharding(datapipe, num_of_instances, instance_id, sharding_group=SHARDING_PRIORITIES.DEFAULT):
    """Shard the pipeline: apply_sharding on its sharding pipes (at most one on any path to the source)."""
    def visit(graph, above):
        for dp, sub in graph.values():
            here = above
            if _is_sharding_datapipe(dp):
                if above is not None:
                    raise RuntimeError("Sharding twice on a single pipeline is likely unintended and will cause data "
                                       f"loss. Sharding already applied to {above} while trying to apply to {dp}")
                if len(inspect.signature(dp.apply_sharding).parameters) < 3:
                    dp.apply_sharding(num_of_instances, instance_id)
                else:
                    dp.apply_sharding(num_of_instances, instance_id, sharding_group=sharding_group)
                here = dp
            visit(sub, here)
    visit(traverse_dps(datapipe), None)
    return datapipe


def _is_shuffle_datapipe(dp):
    return _has_method(dp, "set_shuffle", "set_seed")


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turn every shuffling pipe on or off (None: leave them); shuffle=True without one appends a Shuffler."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in get_all_graph_pipes(traverse_dps(datapipe)) if _is_shuffle_datapipe(dp)]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. Adding one at the end. "
                      "Be aware that the default buffer size might not be sufficient for your task.", stacklevel=2)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for dp in shufflers:
        dp.set_shuffle(shuffle)
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the future releases. "
                  "Please use `apply_random_seed` instead.", FutureWarning, stacklevel=2)
    return apply_random_seed(datapipe, rng)


def apply_random_seed(datapipe, rng):
    """set_seed on every random pipe (one with a set_seed method), each with a seed drawn from rng."""
    for dp in get_all_graph_pipes(traverse_dps(datapipe)):
        if _has_method(dp, "set_seed"):
            dp.set_seed(int(torch.empty((), dtype=torch.int64).random_(generator=rng).item()))
    return datapipe
