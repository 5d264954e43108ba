"""Shape and index ops: one core call each (csrc/kernels/cpu/{shape,scatter,sort}.c); the ones
PyTorch itself composes (hstack, tile, take_along_dim, argsort, meshgrid, ...) are composed here
from them the same way."""
import warnings

from ._C import ffi, lib
from . import _dtype
from . import _creation, _views
from ._core import new_out, raise_status
from ._creation import one_positional, parse_size, sizes_or_keyword
from ._dispatch import as_tensor_operand, call
from ._reduce import _return_type, return_types
from ._tensor import Tensor, _wrap_dim, wrap

_NULL = ffi.NULL

for _name in ("sort", "topk", "kthvalue", "cummax", "cummin"):
    setattr(return_types, _name, _return_type(_name))


def _pair(fn, *args, cls):
    vals, idx = new_out(), new_out()
    st = fn(*args, vals, idx)
    if st:
        raise_status(st)
    return cls(wrap(vals[0]), wrap(idx[0]))


def _tensor_list(name, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def _ints(v, name="dims"):
    if isinstance(v, (list, tuple)):
        return [d.__index__() for d in v]
    return [v.__index__()]


def _finish_out(result, out):
    """out=: PyTorch resizes out to the result and copies it in."""
    if out is None:
        return result
    if out.requires_grad or result.requires_grad:
        raise RuntimeError("functions with out=... arguments don't support automatic differentiation, but one of "
                           "the arguments requires grad.")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    return out.copy_(result)


# ---- cat / stack ----------------------------------------------------------------------


def cat(tensors, dim=0, *, out=None):
    ts = _tensor_list("cat", tensors)
    r = call(lib.mt_cat, len(ts), [t._h for t in ts], dim.__index__())
    return _finish_out(r, out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    ts = _tensor_list("stack", tensors)
    r = call(lib.mt_stack, len(ts), [t._h for t in ts], dim.__index__())
    return _finish_out(r, out)


def _atleast(n, name):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(fn(t) for t in tensors[0])
        if len(tensors) > 1:
            return tuple(fn(t) for t in tensors)
        t = tensors[0]
        nd = t.dim()
        if nd >= n:
            return t
        if n == 1 or nd == 0:
            return t.reshape([1] * n)
        if n == 2:
            return t.unsqueeze(0)
        return t.unsqueeze(0).unsqueeze(-1) if nd == 1 else t.unsqueeze(-1)
    fn.__name__ = name
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1, "atleast_1d"), _atleast(2, "atleast_2d"), _atleast(3, "atleast_3d")


def hstack(tensors, *, out=None):
    ts = [atleast_1d(t) for t in _tensor_list("hstack", tensors)]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    ts = [atleast_2d(t) for t in _tensor_list("vstack", tensors)]
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(ts, 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    ts = [atleast_3d(t) for t in _tensor_list("dstack", tensors)]
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(ts, 2, out=out)


def column_stack(tensors, *, out=None):
    ts = _tensor_list("column_stack", tensors)
    if not ts:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return hstack([t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in ts], out=out)


def _dim_split(name, min_dim, dim_of):
    """hsplit/vsplit/dsplit: tensor_split along one fixed dim; an int must divide it evenly."""
    def fn(input, indices_or_sections):
        if not isinstance(indices_or_sections, (list, tuple)) and (
                isinstance(indices_or_sections, bool) or not hasattr(indices_or_sections, "__index__")):
            kind = type(indices_or_sections).__name__
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {kind}), but "
                            f"expected one of:\n * (Tensor input, int sections)\n      didn't match because some of "
                            f"the arguments have invalid types: (Tensor, !{kind}!)\n * (Tensor input, tuple of ints "
                            f"indices)\n      didn't match because some of the arguments have invalid types: (Tensor, "
                            f"!{kind}!)\n")
        nd = input.dim()
        if nd < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {nd} dimensions!")
        d = dim_of(nd)
        if isinstance(indices_or_sections, (list, tuple)):
            return _views.tensor_split(input, _ints(indices_or_sections), d)
        n = indices_or_sections.__index__()
        if n == 0 or input.shape[d] % n:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                               f"{input.shape[d]} is not divisible by the split_size {n}!")
        return _views.tensor_split(input, n, d)
    fn.__name__ = name
    return fn


hsplit = _dim_split("hsplit", 1, lambda nd: 0 if nd == 1 else 1)
vsplit = _dim_split("vsplit", 2, lambda nd: 0)
dsplit = _dim_split("dsplit", 3, lambda nd: 2)


def block_diag(*tensors):
    if not tensors:
        return _creation.empty((1, 0))
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    dt = _dtype.from_id(lib.mt_result_type(len(tensors), [t._h for t in tensors]))  # 0-dim inputs rank lower
    blocks = [t if t.dim() == 2 else t.reshape(1, -1) for t in tensors]
    r = _creation.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=dt)
    row = col = 0
    for b in blocks:  # PyTorch's own loop: each block copied into its slice of zeros
        h, w = b.shape
        r[row:row + h, col:col + w] = b
        row, col = row + h, col + w
    return r


def _vector(t):
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    return t


def cartesian_prod(*tensors):
    ts = [_vector(t) for t in tensors]
    if len(ts) == 1:
        return ts[0]
    if any(t.dtype != ts[0].dtype for t in ts):  # (at::meshgrid's text, not torch.meshgrid's)
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    return stack([g.flatten() for g in meshgrid(ts, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _creation.empty(0, dtype=input.dtype)
    if r > (2 ** 63 - 1) // 8:  # PyTorch first makes a C++ vector of r grids
        raise RuntimeError("cannot create std::vector larger than max_size()")
    # PyTorch's way: the r-fold grid, kept where the indices rise (or never fall, with replacement)
    idx = meshgrid([_creation.arange(input.numel())] * r, indexing="ij")
    mask = _creation.ones(idx[0].shape, dtype=_dtype.bool)
    for a, b in zip(idx, idx[1:]):
        mask = mask & ((a <= b) if with_replacement else (a < b))
    return stack([g.masked_select(mask) for g in meshgrid([input] * r, indexing="ij")], 1)


# ---- flip / roll / repeat ----------------------------------------------------------------


def flip(input, *dims_args, dims=None):
    if dims is not None:
        if dims_args:
            raise TypeError("flip() got multiple values for argument 'dims'")
        if not isinstance(dims, (list, tuple)):
            raise TypeError(f"flip(): argument 'dims' must be tuple of ints, not {type(dims).__name__}")
        dims_args = (dims,)
    elif not dims_args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _ints(dims_args[0] if len(dims_args) == 1 else dims_args)
    return call(lib.mt_flip, input._h, len(dims), dims)


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def roll(input, shifts, dims=None):
    shifts = _ints(shifts)
    dims = [] if dims is None else _ints(dims)
    return call(lib.mt_roll, input._h, len(shifts), shifts, len(dims), dims)


def rot90(input, k=1, dims=(0, 1)):
    dims = _ints(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    if _wrap_dim(dims[0], input.dim()) == _wrap_dim(dims[1], input.dim()):
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return call(lib.mt_rot90, input._h, k.__index__(), dims[0], dims[1])


def repeat(self, *sizes, repeats=None):
    sizes = parse_size(sizes_or_keyword("repeat", "repeats", sizes, repeats), "repeat", arg="repeats")
    return call(lib.mt_repeat, self._h, len(sizes), sizes)


def tile_method(self, *sizes, dims=None, _position=1):  # x.tile(2, 1), x.tile((2, 1)), x.tile(dims=...)
    dims = parse_size(sizes_or_keyword("tile", "dims", sizes, dims), "tile", arg="dims", position=_position)
    if len(dims) < self.dim():
        dims = [1] * (self.dim() - len(dims)) + dims
    return repeat(self, dims)


def tile(input, *args, dims=None):  # torch.tile(input, dims): one sizes argument, a sequence
    one_positional("tile", args)
    return tile_method(input, *args, dims=dims, _position=2)


def narrow_copy(input, dim, start, length):
    return call(lib.mt_narrow_copy, input._h, dim.__index__(), start.__index__(), length.__index__())


# ---- triangles and diagonals -------------------------------------------------------------


def tril(input, diagonal=0, *, out=None):
    return _finish_out(call(lib.mt_tril, input._h, diagonal.__index__(), 0, _NULL), out)


def triu(input, diagonal=0, *, out=None):
    return _finish_out(call(lib.mt_tril, input._h, diagonal.__index__(), 1, _NULL), out)


def tril_(self, diagonal=0):
    call(lib.mt_tril, self._h, diagonal.__index__(), 0, self._h)
    return self


def triu_(self, diagonal=0):
    call(lib.mt_tril, self._h, diagonal.__index__(), 1, self._h)
    return self


def diagonal(input, offset=0, dim1=0, dim2=1):
    return call(lib.mt_diagonal, input._h, offset, dim1, dim2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    return call(lib.mt_diag_embed, input._h, offset, dim1, dim2)


def diag(input, diagonal=0, *, out=None):
    return _finish_out(call(lib.mt_diag, input._h, diagonal.__index__()), out)


def diagflat(input, offset=0):
    return diag_embed(input.contiguous().view(-1), offset, 0, 1)


def trace(input):
    return call(lib.mt_trace, input._h)


# ---- gathers -------------------------------------------------------------------------------


def index_select(input, dim, index, *, out=None):
    return _finish_out(call(lib.mt_index_select, input._h, dim.__index__(), index._h), out)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    if sparse_grad:
        raise NotImplementedError("gather(sparse_grad=True): sparse tensors are not supported")
    return _finish_out(call(lib.mt_gather, input._h, dim.__index__(), index._h), out)


def take(input, index):
    return call(lib.mt_take, input._h, index._h)


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
        out.append(y if x == 1 else x)
    return out


def broadcast_shapes(*shapes):
    from ._size import Size
    norm = []
    for shape in shapes:
        if isinstance(shape, int):
            norm.append((shape,))
        elif isinstance(shape, (tuple, list)):
            norm.append(shape)
        else:
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max((len(s) for s in norm), default=0)
    for arg_idx, shape in enumerate(norm):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            elif shape[idx] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching "
                                   f"argument at index {arg_idx} had {shape}; but expected shape should be "
                                   f"broadcastable to {common}")
    return Size(common)


def broadcast_tensors(*tensors):
    _tensor_list("broadcast_tensors", tensors)
    shapes = [t.shape for t in tensors]
    shape = shapes[0] if shapes else ()
    if any(s != shape for s in shapes):
        shape = []
        for s in shapes:
            shape = _broadcast_shape(shape, s)
        shape = tuple(shape)
    # a tensor already of the common shape is returned itself, as PyTorch's expand_outplace does
    return tuple(t if s == shape else call(lib.mt_expand, t._h, len(shape), shape) for t, s in zip(tensors, shapes))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    # ATen's composition: n times a narrowed difference (logical_xor for bool) along dim
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if prepend is not None or append is not None:
        input = cat([t for t in (prepend, input, append) if t is not None], dim)
    for _ in range(n):
        length = input.size(dim)
        if length == 0:
            break
        a, b = input.narrow(dim, 1, length - 1), input.narrow(dim, 0, length - 1)
        input = a.logical_xor(b) if input.dtype is _dtype.bool else a - b
    return input


def equal(input, other):
    for pos, (name, v) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"equal(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")
    return tuple(input.shape) == tuple(other.shape) and bool(input.eq(other).all())


def take_along_dim(input, indices, dim=None, *, out=None):
    if dim is None:
        return _finish_out(gather(input.view(-1), 0, indices.view(-1)), out)
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    if str(indices.dtype) != "torch.int64":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype_name(indices)}")
    d = _wrap_dim(dim, input.dim())
    ssz, isz = list(input.shape), list(indices.shape)
    if ssz:
        ssz[d] = indices.shape[d]
    idx = indices.broadcast_to(_broadcast_shape(ssz, indices.shape))
    if isz:
        isz[d] = input.shape[d]
    src = input.broadcast_to(_broadcast_shape(isz, input.shape))
    return _finish_out(gather(src, d, idx), out)


def _dtype_name(t):
    return _dtype.scalar_name(t)


# ---- scatters ------------------------------------------------------------------------------

_LEGACY_REDUCE = {"add": lib.MT_SR_SUM, "multiply": lib.MT_SR_PROD}
_REDUCE = {"sum": lib.MT_SR_SUM, "prod": lib.MT_SR_PROD, "mean": lib.MT_SR_MEAN, "amax": lib.MT_SR_AMAX,
           "amin": lib.MT_SR_AMIN, "max": lib.MT_SR_AMAX, "min": lib.MT_SR_AMIN}  # PyTorch also takes max/min


def _scatter(kind, self, dim, index, src, reduce, include_self, inplace):
    is_value = not isinstance(src, Tensor)
    if is_value:
        src = as_tensor_operand(src)
    return call(lib.mt_scatter, kind, self._h, dim.__index__(), index._h, src._h, int(is_value), reduce,
                int(bool(include_self)), int(inplace))


def _legacy_reduce(reduce):
    if reduce is None:
        return lib.MT_SR_NONE
    if reduce not in _LEGACY_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return _LEGACY_REDUCE[reduce]


def _warn_legacy_reduce(src, reduce):
    if reduce is not None and isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=3)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    if src is None:
        src = value
    _warn_legacy_reduce(src, reduce)
    r = _scatter(lib.MT_SCATTER, input, dim, index, src, _legacy_reduce(reduce), True, False)
    return _finish_out(r, out)


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    _warn_legacy_reduce(src, reduce)
    _scatter(lib.MT_SCATTER, self, dim, index, src, _legacy_reduce(reduce), True, True)
    return self


def scatter_add(input, dim, index, src, *, out=None):
    return _finish_out(_scatter(lib.MT_SCATTER_ADD, input, dim, index, src, lib.MT_SR_SUM, True, False), out)


def scatter_add_(self, dim, index, src):
    _scatter(lib.MT_SCATTER_ADD, self, dim, index, src, lib.MT_SR_SUM, True, True)
    return self


def _reduce_op(reduce):
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _REDUCE[reduce]


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    r = _scatter(lib.MT_SCATTER_REDUCE, input, dim, index, src, _reduce_op(reduce), include_self, False)
    return _finish_out(r, out)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    _scatter(lib.MT_SCATTER_REDUCE, self, dim, index, src, _reduce_op(reduce), include_self, True)
    return self


def _index_op(kind, self, dim, index, source, alpha, inplace):
    return call(lib.mt_index_op, kind, self._h, dim.__index__(), index._h, source._h, float(alpha), int(inplace))


def index_add(input, dim, index, source, *, alpha=1, out=None):
    return _finish_out(_index_op(lib.MT_INDEX_ADD, input, dim, index, source, alpha, False), out)


def index_add_(self, dim, index, source, *, alpha=1):
    _index_op(lib.MT_INDEX_ADD, self, dim, index, source, alpha, True)
    return self


def index_copy(input, dim, index, source, *, out=None):
    return _finish_out(_index_op(lib.MT_INDEX_COPY, input, dim, index, source, 1, False), out)


def index_copy_(self, dim, index, source):
    _index_op(lib.MT_INDEX_COPY, self, dim, index, source, 1, True)
    return self


def index_fill(input, dim, index, value):
    return _index_op(lib.MT_INDEX_FILL, input, dim, index, as_tensor_operand(value), 1, False)


def index_fill_(self, dim, index, value):
    _index_op(lib.MT_INDEX_FILL, self, dim, index, as_tensor_operand(value), 1, True)
    return self


def index_put_(self, indices, values, accumulate=False):
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"index_put_(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    values = as_tensor_operand(values)
    idx = [_NULL if i is None else i._h for i in indices]
    st = lib.mt_index_put_(self._h, len(idx), idx, values._h, int(bool(accumulate)))
    if st:
        raise_status(st)
    return self


def index_put(input, indices, values, accumulate=False):
    return index_put_(input.clone(), indices, values, accumulate)


def masked_select(input, mask, *, out=None):
    return _finish_out(call(lib.mt_masked_select, input._h, mask._h), out)


def masked_scatter(input, mask, source):
    return call(lib.mt_masked_scatter, input._h, mask._h, source._h, 0)


def masked_scatter_(self, mask, source):
    call(lib.mt_masked_scatter, self._h, mask._h, source._h, 1)
    return self


# ---- nonzero / where ------------------------------------------------------------------------


def nonzero(input, *, out=None, as_tuple=False):
    if as_tuple:
        t = input.unsqueeze(0) if input.dim() == 0 else input
        return call(lib.mt_nonzero, t._h).unbind(1)
    return _finish_out(call(lib.mt_nonzero, input._h), out)


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero's rows, cut or padded with fill_value to exactly `size` rows."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    idx = nonzero(input)[:size]
    if idx.shape[0] < size:
        from ._creation import full
        idx = cat([idx, full((size - idx.shape[0], idx.shape[1]), fill_value, dtype=idx.dtype)])
    return idx


def argwhere(input):
    return call(lib.mt_nonzero, input._h)


# ---- sorting ----------------------------------------------------------------------------------


def sort(input, dim=-1, descending=False, *, stable=None, out=None):
    st = -1 if stable is None else int(bool(stable))  # -1: the overload without `stable`
    r = _pair(lib.mt_sort, input._h, dim.__index__(), int(bool(descending)), st, cls=return_types.sort)
    return r if out is None else _pair_out(r, out)


def _pair_out(r, out):
    _finish_out(r[0], out[0])
    _finish_out(r[1], out[1])
    return type(r)(out[0], out[1])


def argsort(input, dim=-1, descending=False, *, stable=None):
    return sort(input, dim, descending, stable=stable).indices


def msort(input, *, out=None):
    return _finish_out(sort(input, 0).values, out)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    r = _pair(lib.mt_topk, input._h, k.__index__(), dim.__index__(), int(bool(largest)), int(bool(sorted)),
              cls=return_types.topk)
    return r if out is None else _pair_out(r, out)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    r = _pair(lib.mt_kthvalue, input._h, k.__index__(), dim.__index__(), int(bool(keepdim)),
              cls=return_types.kthvalue)
    return r if out is None else _pair_out(r, out)


def cummax(input, dim, *, out=None):
    r = _pair(lib.mt_cummax, 0, input._h, dim.__index__(), cls=return_types.cummax)
    return r if out is None else _pair_out(r, out)


def cummin(input, dim, *, out=None):
    r = _pair(lib.mt_cummax, 1, input._h, dim.__index__(), cls=return_types.cummin)
    return r if out is None else _pair_out(r, out)


# ---- meshgrid -------------------------------------------------------------------------------


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    ts = list(tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    elif indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for i in range(1, len(ts)):
        if ts[i].dtype != ts[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype.")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    n = len(ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * n
        view[i] = -1
        out.append(t.view(view).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ---- repeat_interleave ------------------------------------------------------------------------


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): each index repeated its count of times
        return call(lib.mt_repeat_interleave, input._h, -1 if output_size is None else output_size.__index__())
    if isinstance(repeats, Tensor):
        x = input.flatten() if dim is None else input
        d = _wrap_dim(0 if dim is None else dim, x.dim())
        size = x.shape[d] if x.dim() else 1
        if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
            repeats = repeats.reshape(1).expand(size)
        elif repeats.dim() == 1:
            if repeats.shape[0] != size:
                raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                                   f"{repeats.shape[0]} and input.size({d}) = {size}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        idx = call(lib.mt_repeat_interleave, repeats._h, -1 if output_size is None else output_size.__index__())
        return index_select(x, d, idx)
    repeats = repeats.__index__()
    x = input if dim is not None else input.flatten()
    d = _wrap_dim(dim if dim is not None else 0, input.dim())
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = x.unsqueeze(d + 1)
    shape = list(x.shape)
    shape[d + 1] = repeats
    if output_size is not None and output_size != repeats * shape[d]:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {repeats * shape[d]} but got "
                           f"{output_size}")
    return x.expand(shape).contiguous().flatten(d, d + 1)


# ---- unique / searchsorted / isin / bincount ---------------------------------------------------


def _unique(input, consecutive, return_inverse, return_counts, dim):
    # outputs not asked for are not computed (NULL)
    outs = [new_out(), new_out() if return_inverse else _NULL, new_out() if return_counts else _NULL]
    st = lib.mt_unique(input._h, int(consecutive), int(dim is not None), 0 if dim is None else dim.__index__(), *outs)
    if st:
        raise_status(st)
    vals = wrap(outs[0][0])
    if not return_inverse and not return_counts:
        return vals
    return (vals,) + ((wrap(outs[1][0]),) if return_inverse else ()) + ((wrap(outs[2][0]),) if return_counts else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return _unique(input, False, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    return _unique(input, True, return_inverse, return_counts, dim)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None, sorter=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                               "right was True")
        right = side == "right"
    values = input if isinstance(input, Tensor) else as_tensor_operand(input)
    r = call(lib.mt_searchsorted, sorted_sequence._h, values._h, int(bool(out_int32)), int(bool(right)),
             _NULL if sorter is None else sorter._h)
    return _finish_out(r, out)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    e = elements if isinstance(elements, Tensor) else as_tensor_operand(elements)
    t = test_elements if isinstance(test_elements, Tensor) else as_tensor_operand(test_elements)
    return call(lib.mt_isin, e._h, t._h, int(bool(invert)))


def bincount(input, weights=None, minlength=0):
    return call(lib.mt_bincount, input._h, _NULL if weights is None else weights._h, minlength.__index__())


def vander(x, N=None, increasing=False):
    """Columns x**0, x**1, ... (decreasing powers unless increasing), by a cumprod as PyTorch builds it:
    integer inputs give int64."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = _dtype.promote_types(x.dtype, _dtype.int64)
    if n <= 1:
        r = _creation.ones((x.shape[0], n), dtype=dt)
    else:
        powers = x.unsqueeze(1).expand(x.shape[0], n - 1).to(dt).cumprod(1)
        r = cat([_creation.ones((x.shape[0], 1), dtype=dt), powers], 1)
    return r if increasing else flip(r, 1)


def unravel_index(indices, shape):
    """The coordinates, one tensor per dim of shape, of flat (row-major) indices."""
    if not isinstance(indices, Tensor) or indices.dtype.is_floating_point or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, list, tuple)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    for d in shape:
        if not isinstance(d, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(d)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        coefs[i] = coefs[i + 1] * shape[i + 1]
    r = (indices.unsqueeze(-1).floor_divide(_creation.tensor(coefs, dtype=_dtype.int64))
         % _creation.tensor(shape, dtype=_dtype.int64))
    return r.unbind(-1)


# ---- the *_scatter ops: self with one view of it replaced by src (PyTorch's functional forms) ----

def _view_scatter(input, src, view):
    """A copy of input whose view(copy) holds src; autograd through the in-place copy (CopySlices)."""
    out = input.clone()
    target = view(out)
    if tuple(src.shape) != tuple(target.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = _wrap_dim(dim, input.dim())
    return _view_scatter(input, src, lambda t: t[(slice(None),) * d + (slice(start, end, step),)])


def select_scatter(input, src, dim, index):
    return _view_scatter(input, src, lambda t: t.select(dim, index))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _view_scatter(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return _view_scatter(input, src, lambda t: t.as_strided(size, stride, storage_offset))


def put_(self, index, source, accumulate=False):
    """self's elements at flat (row-major) positions index set to, or with accumulate increased by, source."""
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_dtype_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_dtype_name(self.dtype)} and source.dtype = {_dtype_name(source.dtype)}")
    if index.numel() != source.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    if index.numel():
        lo, hi = index.min().item(), index.max().item()
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    flat = index_put(self.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return self.copy_(flat.view(self.shape))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of slicing src: a view of input's storage with src's geometry (size, strides,
    offset), as PyTorch's eager kernel defines it."""
    h = src._h
    n = lib.mt_tensor_ndim(h)
    return call(lib.mt_as_strided, input._h, n, lib.mt_tensor_sizes(h), lib.mt_tensor_strides(h), lib.mt_tensor_offset(h))


def put(input, index, source, accumulate=False):
    return put_(input.clone(), index, source, accumulate)


FUNCTIONS = {
    "broadcast_shapes": broadcast_shapes, "broadcast_tensors": broadcast_tensors, "equal": equal, "diff": diff,
    "cat": cat, "concat": concat, "concatenate": concatenate, "stack": stack, "hstack": hstack, "vstack": vstack,
    "row_stack": row_stack, "dstack": dstack, "atleast_1d": atleast_1d, "atleast_2d": atleast_2d,
    "atleast_3d": atleast_3d, "flip": flip, "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
    "tile": tile, "narrow_copy": narrow_copy, "tril": tril, "triu": triu, "diagonal": diagonal,
    "diag_embed": diag_embed, "diag": diag, "diagflat": diagflat, "trace": trace, "index_select": index_select,
    "gather": gather, "take": take, "take_along_dim": take_along_dim, "scatter": scatter,
    "scatter_add": scatter_add, "scatter_reduce": scatter_reduce, "index_add": index_add, "index_copy": index_copy,
    "index_fill": index_fill, "index_put": index_put, "index_put_": index_put_, "masked_select": masked_select,
    "masked_scatter": masked_scatter, "nonzero": nonzero, "argwhere": argwhere, "sort": sort,
    "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue, "cummax": cummax, "cummin": cummin,
    "meshgrid": meshgrid, "repeat_interleave": repeat_interleave, "unique": unique,
    "unique_consecutive": unique_consecutive, "searchsorted": searchsorted, "bucketize": bucketize, "isin": isin,
    "bincount": bincount, "column_stack": column_stack, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "block_diag": block_diag, "cartesian_prod": cartesian_prod, "combinations": combinations,
    "slice_scatter": slice_scatter, "select_scatter": select_scatter, "diagonal_scatter": diagonal_scatter,
    "as_strided_scatter": as_strided_scatter, "put": put, "vander": vander, "nonzero_static": nonzero_static, "slice_inverse": slice_inverse, "unravel_index": unravel_index,
}

METHODS = {name: fn for name, fn in FUNCTIONS.items()
           if name not in ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
                           "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid", "column_stack",
                           "block_diag", "cartesian_prod", "combinations", "searchsorted", "isin",
                           "broadcast_shapes", "broadcast_tensors", "vander", "unravel_index")}
METHODS.update({
    "put_": put_, "flip": flip, "repeat": repeat, "tile": tile_method, "tril_": tril_, "triu_": triu_, "scatter_": scatter_,
    "scatter_add_": scatter_add_, "scatter_reduce_": scatter_reduce_, "index_add_": index_add_,
    "index_copy_": index_copy_, "index_fill_": index_fill_, "masked_scatter_": masked_scatter_,
})
