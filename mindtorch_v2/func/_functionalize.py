"""torch.func.functionalize for eager tensors.

PyTorch's functionalize runs func on wrappers that turn every mutation into an out-of-place op (so a
trace of it has no mutations) and, when func returns, writes the final values back into the inputs it
mutated. What the caller observes: the outputs equal func's, the inputs end up mutated as func mutated
them (data and metadata), and no output aliases an input func mutated (nor, with
remove='mutations_and_views', any input or other output), while an input returned untouched is
returned as itself.

mindtorch_v2 has no tracer for which removing mutations would matter, so func runs eagerly on the
inputs themselves, which gives the same mutations (aliasing between inputs included), and the outputs
are then unaliased as above by copying. One difference: if func raises midway, the mutations it made
before raising stay (PyTorch's inputs are then untouched).
"""
import functools

from .._tensor import Tensor
from ..utils._pytree import arg_tree_leaves, tree_map


def _storage(t):
    return t.untyped_storage()._cdata


def functionalize(func, *, remove="mutations"):
    """func with PyTorch's functionalize contract (see the module docstring for how it is met here)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")
    no_views = remove == "mutations_and_views"

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        inputs = [t for t in arg_tree_leaves(*args, **kwargs) if isinstance(t, Tensor)]
        versions = [t._version for t in inputs]
        outputs = func(*args, **kwargs)
        written = {_storage(t) for t, v in zip(inputs, versions) if t._version != v}
        untouched = {id(t) for t in inputs if _storage(t) not in written}
        shared = {_storage(t) for t in inputs}
        copies = {}

        def unalias(t):
            if not isinstance(t, Tensor) or id(t) in untouched:
                return t
            s = _storage(t)
            if s in written or (no_views and (s in shared or t._base is not None)):
                if id(t) not in copies:
                    copies[id(t)] = t.clone()
                return copies[id(t)]
            return t
        return tree_map(unalias, outputs)
    return wrapped
