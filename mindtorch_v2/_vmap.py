"""torch.vmap / torch.func.vmap.

Vectorised path: each batched input becomes a BatchedTensor, a Tensor whose values live in one
ordinary ("physical") tensor with a leading dim per active vmap level (sorted, outermost first)
followed by the per-sample ("logical") dims. Batching rules run each supported op once on the
physical tensors, aligned so that broadcasting pairs up levels and right-aligns logical dims:
  - elementwise operators and methods (arithmetic, comparisons, bitwise, unary math, casts,
    clamp), with PyTorch's per-sample type promotion (a per-sample 0-dim tensor keeps its
    lower promotion priority);
  - indexing: basic indexing of a BatchedTensor, and advanced indexing with integer tensors and
    ints where the indexed tensor or any index is batched (also an ordinary tensor indexed by
    BatchedTensors, through the hook in _indexing.getitem);
  - new_* factories and logical metadata (shape, dim, dtype, device...).
That covers the nested-vmap mask builders (arange indices compared, offset and used to index
padding masks) without a per-element Python loop.

Fallback: any other op on a BatchedTensor reaches its C handle (`_h`), which raises _Fallback;
the outermost vmap then runs the function once per sample and stacks the results (inner vmaps
run per sample too). Results are the same; only speed differs. Limitation: the function runs
again from the start, so side effects of the aborted vectorised attempt repeat, and
randomness='error' cannot detect random ops that take no batched input.
"""
import functools
import itertools
import threading

from ._tensor import Tensor
from .overrides import _disabled_torch_function_impl
from .utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_map_, tree_unflatten

_levels = itertools.count(1)
_tls = threading.local()


class _Fallback(Exception):
    """An op without a batching rule saw a BatchedTensor: rerun the function per sample."""


def _state():
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
        _tls.per_sample = 0
    return s


def _no_rule(self):
    raise _Fallback()


class BatchedTensor(Tensor):
    """A Tensor inside vmap: `_phys` holds every sample, dims [*levels, *logical]."""
    __torch_function__ = _disabled_torch_function_impl  # batching rules, not the protocol, handle it

    _h = property(_no_rule)

    def __del__(self):
        pass

    def __repr__(self, *, tensor_contents=None):
        return f"BatchedTensor(levels={self._lv}, value={self._phys!r})"

    # ---- logical metadata ---------------------------------------------------------------
    @property
    def shape(self):
        from ._size import Size
        return Size(self._phys.shape[len(self._lv):])

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[dim]

    def dim(self):
        return self._phys.dim() - len(self._lv)

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self):
        return self._phys.dtype

    @property
    def device(self):
        return self._phys.device

    @property
    def is_meta(self):
        return self._phys.is_meta

    @property
    def is_cpu(self):
        return self._phys.is_cpu

    @property
    def requires_grad(self):
        return self._phys.requires_grad

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def item(self):
        raise _Fallback()

    def __getitem__(self, index):
        items = index if type(index) is tuple else (index,)
        if all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items):
            if sum(i is not None and i is not Ellipsis for i in items) > self.dim():
                raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
            return _wrap(self._phys[(slice(None),) * len(self._lv) + items], self._lv)
        return _index(self, items)

    def new_tensor(self, data, **kw):
        return self._phys.new_tensor(data, **kw)

    def new_zeros(self, *size, **kw):
        return self._phys.new_zeros(*size, **kw)

    def new_ones(self, *size, **kw):
        return self._phys.new_ones(*size, **kw)

    def new_empty(self, *size, **kw):
        return self._phys.new_empty(*size, **kw)

    def new_full(self, size, fill_value, **kw):
        return self._phys.new_full(size, fill_value, **kw)

    def type_as(self, other):
        return self.to(other.dtype)


def _wrap(phys, levels):
    if not levels:
        return phys
    b = object.__new__(BatchedTensor)
    b._phys = phys
    b._lv = levels
    return b


def _logical_dim(x):
    return x.dim() if isinstance(x, Tensor) else 0


def _align(x, levels, rank):
    """x's physical tensor with a dim per level in `levels` (size 1 where x has none), then
    `rank` logical dims (x's own right-aligned, size-1 padding in front)."""
    if type(x) is not BatchedTensor:
        p, own = x, ()
    else:
        p, own = x._phys, x._lv
    n_own = len(own)
    logical = p.shape[n_own:]
    shape = [p.shape[own.index(L)] if L in own else 1 for L in levels]
    shape += [1] * (rank - len(logical)) + list(logical)
    return p.reshape(shape) if list(p.shape) != shape else p


def _union_levels(args):
    lv = set()
    for a in args:
        if type(a) is BatchedTensor:
            lv.update(a._lv)
    return tuple(sorted(lv))


def _logical_common_dtype(args):
    """PyTorch's per-sample promotion when it differs from the physical one (a per-sample 0-dim
    operand is dimensioned physically); None when no cast is needed."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    if len(tensors) < 2 or len({t.dtype for t in tensors}) == 1:
        return None
    if not any(type(t) is BatchedTensor and t.dim() == 0 for t in tensors):
        return None
    from ._creation import empty
    from ._elementwise import result_type
    stand = [empty((1,) if a.dim() else (), dtype=a.dtype, device="meta") if isinstance(a, Tensor) else a
             for a in args]
    common = result_type(stand[0], stand[1])
    for s in stand[2:]:
        common = result_type(empty((), dtype=common, device="meta"), s)
    return common


def _elementwise(name):
    def rule(self, *args, **kwargs):
        ops = (self,) + args
        levels = _union_levels(ops)
        rank = max(_logical_dim(a) for a in ops)
        common = _logical_common_dtype(ops)
        phys = []
        for a in ops:
            if type(a) is BatchedTensor:
                a = _align(a, levels, rank)
            elif not isinstance(a, Tensor):
                if hasattr(a, "__torch_function__") or isinstance(a, (list, tuple)):
                    raise _Fallback()
                phys.append(a)
                continue
            phys.append(a if common is None else a.to(common))
        out = getattr(Tensor, name)(*phys, **kwargs)
        if out is NotImplemented:
            return out
        return _wrap(out, levels)
    rule.__name__ = name
    return rule


def _unary(name):
    def rule(self, *args, **kwargs):
        for a in itertools.chain(args, kwargs.values()):
            if isinstance(a, Tensor):
                raise _Fallback()
        return _wrap(getattr(Tensor, name)(self._phys, *args, **kwargs), self._lv)
    rule.__name__ = name
    return rule


_BINARY = ("__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ "
           "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ "
           "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ add sub subtract mul multiply div divide true_divide "
           "floor_divide remainder fmod pow eq ne lt le gt ge greater greater_equal less less_equal not_equal "
           "maximum minimum logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor atan2 "
           "rsub").split()
_UNARY = ("__neg__ __pos__ __abs__ __invert__ abs absolute neg negative exp exp2 expm1 log log2 log10 log1p "
          "sqrt rsqrt sin cos tan tanh sinh cosh asin acos atan sigmoid relu erf erfc reciprocal square sign "
          "floor ceil trunc frac round logical_not bitwise_not isnan isinf isfinite isneginf isposinf signbit "
          "clamp clip clamp_min clamp_max nan_to_num float double half bfloat16 long int short char byte bool "
          "to clone detach contiguous").split()

for _n in _BINARY:
    setattr(BatchedTensor, _n, _elementwise(_n))
for _n in _UNARY:
    setattr(BatchedTensor, _n, _unary(_n))
BatchedTensor.__hash__ = Tensor.__hash__


def _index(x, items):
    """x[items] where x or some items are batched: ints and integer tensors only (advanced indexing)."""
    from ._creation import arange, tensor
    from . import bool as _bool, int64, uint8
    for it in items:
        if not (type(it) is int or (isinstance(it, Tensor) and not it.dtype.is_floating_point
                                     and it.dtype not in (_bool, uint8))):
            raise _Fallback()
    if len(items) > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    levels = _union_levels((x,) + tuple(items))
    n = len(levels)
    r = max(_logical_dim(it) for it in items)
    px = _align(x, levels, x.dim())
    idx = []
    for j in range(n):
        size = px.shape[j]
        idx.append(arange(size).reshape([1] * j + [size] + [1] * (n - 1 - j + r)))
    for it in items:
        if type(it) is int:
            idx.append(tensor(it, dtype=int64).reshape([1] * (n + r)))
        else:
            idx.append(_align(it, levels, r))
    return _wrap(px[tuple(idx)], levels)


def _index_hook(tensor, items):
    return _index(tensor, items)


# ---- levels in and out -----------------------------------------------------------------

def _add_level(arg, in_dim, level):
    if type(arg) is BatchedTensor:
        n = len(arg._lv)
        return _wrap(arg._phys.movedim(n + in_dim, n), arg._lv + (level,))
    return _wrap(arg.movedim(in_dim, 0), (level,))


def _remove_level(x, level, size, out_dim):
    if type(x) is BatchedTensor and level in x._lv:
        i = x._lv.index(level)
        lv = x._lv[:i] + x._lv[i + 1:]
        logical = x.dim() + 1
        out_dim = out_dim % logical if -logical <= out_dim < logical else out_dim
        if not 0 <= out_dim < logical:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-logical}, {logical - 1}], "
                             f"but got {out_dim})")
        return _wrap(x._phys.movedim(i, len(lv) + out_dim), lv)
    # an output that does not depend on this level: expanded along out_dim, as PyTorch does
    lv = x._lv if type(x) is BatchedTensor else ()
    p = x._phys if type(x) is BatchedTensor else x
    logical = p.dim() - len(lv) + 1
    out_dim = out_dim % logical if -logical <= out_dim < logical else out_dim
    p = p.unsqueeze(len(lv) + out_dim)
    shape = list(p.shape)
    shape[len(lv) + out_dim] = size
    return _wrap(p.expand(shape), lv)


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _process_inputs(func, in_dims, args):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                             f"input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    sizes = [a.size(d) for d, a in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _flat_out_dims(func, out_dims, outputs):
    flat, spec = tree_flatten(outputs)

    def incompatible():
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                         f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                         f"outputs has structure {spec}.")
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            dims = list(out_dims)
        else:
            incompatible()
    else:
        dims = _broadcast_to_and_flatten(out_dims, spec)
        if dims is None:
            incompatible()
    return flat, spec, dims


def _check_output(name, out, out_dim):
    if out_dim is None:
        if type(out) is BatchedTensor:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return False
    if not isinstance(out, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. Did you mean "
                         "to set out_dims= to None for output?")
    return True


def _vectorised(func, size, flat_in_dims, flat_args, spec, out_dims, kwargs):
    level = next(_levels)
    stack = _state()
    stack.append(level)
    try:
        batched = [a if d is None else _add_level(a, d, level) for d, a in zip(flat_in_dims, flat_args)]
        outputs = func(*tree_unflatten(batched, spec), **kwargs)
    finally:
        stack.pop()
    flat, ospec, dims = _flat_out_dims(func, out_dims, outputs)
    name = _get_name(func)
    return tree_unflatten([_remove_level(o, level, size, d) if _check_output(name, o, d) else o
                           for o, d in zip(flat, dims)], ospec)


def _per_sample(func, size, flat_in_dims, flat_args, spec, out_dims, kwargs):
    _state()
    _tls.per_sample += 1
    try:
        results = []
        for b in range(size):
            args = [a if d is None else a.select(d, b) for d, a in zip(flat_in_dims, flat_args)]
            results.append(func(*tree_unflatten(args, spec), **kwargs))
    finally:
        _tls.per_sample -= 1
    name = _get_name(func)
    flats = [tree_flatten(r)[0] for r in results]
    first, ospec, dims = _flat_out_dims(func, out_dims, results[0]) if size else (None, None, None)
    if size == 0:
        raise NotImplementedError("vmap over a batch of size 0 without a batching rule is not implemented")
    out = []
    for k, d in enumerate(dims):
        if not _check_output(name, first[k], d):
            out.append(first[k])
            continue
        logical = first[k].dim() + 1
        out.append(_stack([f[k] for f in flats], dim=d if d >= 0 else d + logical))
    return tree_unflatten(out, ospec)


def _stack(tensors, dim):
    """torch.stack through empty + copy_ into views (the op library's stack may not exist yet)."""
    from ._creation import empty
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    shape = list(first.shape)
    shape.insert(dim, len(tensors))
    out = empty(shape, dtype=first.dtype, device=first.device)
    for b, t in enumerate(tensors):
        out.select(dim, b).copy_(t)
    return out


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorise func over a dimension of its inputs (see the module docstring)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not isinstance(out_dims, int):
        def check(x):
            if not (isinstance(x, int) or x is None):
                raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                                 "None or a python collection of ints representing where in the outputs the "
                                 "vmapped dimension should appear.")
        tree_map_(check, out_dims)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        from . import _indexing
        _indexing.INDEX_HOOKS.setdefault(BatchedTensor, _index_hook)
        size, flat_in_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        stack = _state()
        if _tls.per_sample:
            return _per_sample(func, size, flat_in_dims, flat_args, spec, out_dims, kwargs)
        try:
            return _vectorised(func, size, flat_in_dims, flat_args, spec, out_dims, kwargs)
        except _Fallback:
            if stack:  # an enclosing vmap is running vectorised: it restarts per sample
                raise
            return _per_sample(func, size, flat_in_dims, flat_args, spec, out_dims, kwargs)
    return wrapped
