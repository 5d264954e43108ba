"""torch.index_reduce (Tensor.index_reduce/index_reduce_) and torch.segment_reduce: reductions of a
source into positions of the result, each written as the scatter_reduce it is (an index along one
dim is a scatter index expanded over the others; a segment is a run of positions sharing one index),
with PyTorch's checks and texts. The graph records the scatter_reduce (ScatterReduceBackward0 where
PyTorch says IndexReduceBackward0 / SegmentReduceBackward0: the C core's node-name table has no
entry for those yet)."""
import warnings

from . import _dtype
from ._tensor import Tensor

_BETA_WARNED = []


def _index_reduce_checks(self, dim, index, source, reduce, include_self):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not _BETA_WARNED:
        _BETA_WARNED.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    if index.dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype.scalar_name(index.dtype)}")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{_dtype.scalar_name(index.dtype)} and size: {list(index.shape)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_dtype.scalar_name(self.dtype)}) and source "
                           f"({_dtype.scalar_name(source.dtype)}) must have the same scalar type")
    from ._tensor import _wrap_dim
    dim = _wrap_dim(dim, self.dim())
    n = source.shape[dim] if source.dim() else 1
    if index.numel() != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {dim}")
    if self.dim() and [s for i, s in enumerate(self.shape) if i != dim] != \
            [s for i, s in enumerate(source.shape) if i != dim]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    if self.dtype is _dtype.bool and self.dim() <= 1:  # PyTorch's 1-d kernel has no bool; its n-d one has
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    if self.dtype is _dtype.bool and not include_self:
        raise NotImplementedError("\"index_reduce_func_exclude_input_init\" not implemented for 'Bool'")
    if self.is_complex():
        if not include_self:
            raise NotImplementedError(f"\"index_reduce_func_exclude_input_init\" not implemented for "
                                      f"'{_dtype.scalar_name(self.dtype)}'")
        if reduce in ("amax", "amin"):
            raise NotImplementedError(f"\"{'maximum' if reduce == 'amax' else 'minimum'}_cpu\" not implemented for "
                                      f"'{_dtype.scalar_name(self.dtype)}'")
        from .autograd.grad_mode import is_grad_enabled
        if is_grad_enabled() and (self.requires_grad or source.requires_grad):
            raise RuntimeError("index_reduce does not support automatic differentiation for outputs with complex dtype.")
    if self.dtype is _dtype.bool and reduce == "mean":
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    limit = self.shape[dim] if self.dim() else 1
    if index.numel() and (bool((index < 0).any()) or bool((index >= limit).any())):
        raise IndexError("index out of range in self")
    return dim


def _scatter_index(self, dim, index, source):
    """index along dim as a scatter index: its values placed along dim, expanded over the others."""
    if source.dim() == 0:
        return index.reshape(()).to(_dtype.int64)
    shape = [1] * source.dim()
    shape[dim] = -1
    return index.to(_dtype.int64).reshape(shape).expand(source.shape)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    dim = _index_reduce_checks(input, dim, index, source, reduce, include_self)
    from ._shape_ops import scatter_reduce
    r = scatter_reduce(input, dim, _scatter_index(input, dim, index, source), source, reduce,
                       include_self=include_self)
    if out is not None:
        return out.resize_(r.shape).copy_(r)
    return r


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    dim = _index_reduce_checks(self, dim, index, source, reduce, include_self)
    from ._shape_ops import scatter_reduce_
    scatter_reduce_(self, dim, _scatter_index(self, dim, index, source), source, reduce, include_self=include_self)
    return self


# ---- segment_reduce ----

_SEGMENT = {"sum": ("sum", 0.0), "prod": ("prod", 1.0), "max": ("amax", float("-inf")),
            "amax": ("amax", float("-inf")), "min": ("amin", float("inf")), "amin": ("amin", float("inf")),
            "mean": ("sum", 0.0)}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Each segment (a run of lengths[..., j] positions of data along axis) reduced to one value;
    an empty segment gives `initial`, or the reduction's identity (nan for mean)."""
    if not isinstance(data, Tensor):
        raise TypeError(f"segment_reduce(): argument 'data' (position 1) must be Tensor, not {type(data).__name__}")
    if reduce not in _SEGMENT:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    from ._tensor import _wrap_dim
    axis = _wrap_dim(axis, data.dim())
    if indices is not None and lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{_dtype.scalar_name(data.dtype)}'")
    segs = lengths if lengths is not None else offsets
    if segs.dtype not in (_dtype.int32, _dtype.int64):
        kernel = "lengths" if lengths is not None else "offsets"
        raise NotImplementedError(f"\"_segment_reduce_{kernel}_cpu_kernel1\" not implemented for "
                                  f"'{_dtype.scalar_name(segs.dtype)}'")
    if axis != segs.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    if lengths is None:
        lengths = offsets[..., 1:] - offsets[..., :-1]
    lengths = lengths.to(_dtype.int64)
    if bool((lengths < 0).any()):
        raise RuntimeError("lengths contains negative value!")
    if not unsafe and bool((lengths.sum(-1) != data.shape[axis]).any()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    from ._creation import arange
    from ._shape_ops import scatter_reduce, searchsorted
    # each position's segment: how many segment ends lie at or before it
    ends = lengths.cumsum(-1)
    pos = arange(data.shape[axis]).expand(*lengths.shape[:-1], data.shape[axis]).contiguous()
    seg = searchsorted(ends.contiguous(), pos, right=True)
    trailing = data.dim() - axis - 1
    seg = seg.reshape(*seg.shape, *([1] * trailing)).expand(data.shape)
    out_shape = list(data.shape)
    out_shape[axis] = lengths.shape[-1]
    op, identity = _SEGMENT[reduce]
    start = data.new_full(out_shape, identity if initial is None else float(initial))
    # a position past the last segment (unsafe lengths) is dropped, as the kernel never reads it
    keep = seg < lengths.shape[-1]
    seg = seg.clamp(max=max(lengths.shape[-1] - 1, 0))
    src = data if bool(keep.all()) else data.where(keep, start.new_zeros(()) + identity)
    r = scatter_reduce(start, axis, seg, src, op, include_self=True)
    if reduce == "mean":
        count = lengths.reshape(*lengths.shape, *([1] * trailing)).expand(out_shape).to(data.dtype)
        empty = float("nan") if initial is None else float(initial)
        r = (r / count).where(count > 0, start.new_zeros(()) + empty)
    return r


FUNCTIONS = {"index_reduce": index_reduce, "segment_reduce": segment_reduce}
METHODS = {"index_reduce": index_reduce, "index_reduce_": index_reduce_}
