"""View ops (share storage) and the functions PyTorch itself composes from them."""
from ._C import ffi, lib
from . import _dtype
from ._core import check, new_out, raise_status, rename_grad_fn
from ._creation import one_positional, parse_size, sizes_or_keyword
from ._dispatch import call
from ._tensor import Tensor, _wrap_dim, wrap

_new = ffi.new


def _shaped(fn, name, self, shape):
    """Call fn(handle, ndim, sizes): ints go straight to cffi, anything else is parsed first."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    out = new_out()
    try:
        st = fn(self._h, len(shape), shape, out)
    except TypeError:  # one sequence argument, Size, or 0-dim tensors as sizes
        sizes = parse_size(shape, name)
        st = fn(self._h, len(sizes), sizes, out)
    if st:
        raise_status(st)
    return wrap(out[0])


def view(self, *shape, dtype=None, size=None):
    if shape and type(shape[0]) is int and dtype is None and size is None:  # view(2, 8): the per-op path inline
        out = new_out()
        try:
            st = lib.mt_view(self._h, len(shape), shape, out)
        except TypeError:  # a non-int after the first: parsed below
            st = None
        if st == 0:
            return wrap(out[0])
        if st:
            raise_status(st)
    if dtype is not None or size is not None:  # the keyword forms view(dtype=...) / view(size=...)
        shape = shape + ((dtype,) if dtype is not None else (size,))
    elif not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but expected one of:\n"
                        " * (torch.dtype dtype)\n * (tuple of ints size)\n")
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return call(lib.mt_view_dtype, self._h, shape[0]._id)
    return _shaped(lib.mt_view, "view", self, shape)


def view_as(self, other):
    shape = other.shape
    out = new_out()  # inline rather than call(): 0.13 us of its 1 us per call
    st = lib.mt_view(self._h, len(shape), shape, out)
    if st:
        raise_status(st)
    return wrap(out[0])


def reshape(input, *args, shape=None):
    if shape is not None or not args:
        args = sizes_or_keyword("reshape", "shape", args, shape)
    return _shaped(lib.mt_reshape, "reshape", input, args)


def reshape_function(input, *args, shape=None):  # torch.reshape(input, shape)
    one_positional("reshape", args)
    return reshape(input, *args, shape=shape)


def reshape_as(self, other):
    return reshape(self, other.shape)


def transpose(input, dim0, dim1):
    return call(lib.mt_transpose, input._h, dim0, dim1)


def permute(input, *args, dims=None):
    return _shaped(lib.mt_permute, "permute", input, sizes_or_keyword("permute", "dims", args, dims))


def permute_function(input, *args, dims=None):  # torch.permute(input, dims)
    one_positional("permute", args)
    return permute(input, *args, dims=dims)


def t(input, _name="t"):
    h = input._h
    nd = lib.mt_tensor_ndim(h)
    if nd == 2:  # the common case inline: a per-op path (docs/PERFORMANCE.md)
        out = new_out()
        st = lib.mt_transpose(h, 0, 1, out)
        if st:
            raise_status(st)
        if lib.mt_tensor_grad_fn_name(out[0]):
            check(lib.mt_tensor_rename_grad_fn(out[0], b"TBackward0"))
        return wrap(out[0])
    if nd > 2:
        raise RuntimeError(f"{_name}() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return named(view_as(input, input), "TBackward0", input)


_REVERSED = {}  # T's permutation by rank
_T_WARNED = False


def _warn_T():
    """PyTorch's once-per-process deprecation of T on other ranks than 2"""
    global _T_WARNED
    _T_WARNED = True
    import warnings
    warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                  "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                  "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                  UserWarning, stacklevel=3)


def T(self):
    h = self._h
    nd = lib.mt_tensor_ndim(h)
    order = _REVERSED.get(nd)
    if order is None:
        order = _REVERSED[nd] = tuple(range(nd - 1, -1, -1))
    if nd != 2 and not _T_WARNED:
        _warn_T()
    out = new_out()  # inline rather than call(), as view_as
    st = lib.mt_permute(h, nd, order, out)
    if st:
        raise_status(st)
    return wrap(out[0])


def mT(self):
    nd = lib.mt_tensor_ndim(self._h)
    if nd >= 2:
        return call(lib.mt_transpose, self._h, -2, -1)
    if nd == 0:  # deprecated identity, as in PyTorch
        return view_as(self, self)
    raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {nd}-D tensor.")


def expand(self, *sizes, size=None, implicit=False):
    return _shaped(lib.mt_expand, "expand", self, sizes_or_keyword("expand", "size", sizes, size))


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, size):
    return expand(input, size)


def squeeze(input, dim=None, *dims):
    if dims:  # x.squeeze(0, 1): the dims as varargs
        dim = (dim,) + dims
    if dim is None:
        return call(lib.mt_squeeze, input._h, -1, ffi.NULL)
    if isinstance(dim, (tuple, list)):
        return named(call(lib.mt_squeeze, input._h, len(dim), list(dim)), "SqueezeBackward2", input)
    return call(lib.mt_squeeze, input._h, 1, [dim])


def unsqueeze(input, dim):
    return call(lib.mt_unsqueeze, input._h, dim)


def flatten(input, start_dim=0, end_dim=-1):
    if start_dim == 0 and end_dim == -1 and lib.mt_tensor_ndim(input._h) > 1:  # all dims: one reshape
        return call(lib.mt_reshape, input._h, 1, [-1])
    shape = tuple(input.shape)
    nd = len(shape)
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if nd == 0:
        return reshape(input, [1])
    if s == e:
        return input
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, list(shape[:s]) + [n] + list(shape[e + 1:]))


def unflatten(input, dim, sizes):
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    shape = input.shape
    d = _wrap_dim(dim, len(shape))
    if not shape:
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions")
    known = 1
    for k in sizes:
        known *= k if type(k) is int and k >= 0 else 0
    if known != shape[d] or known == 0:  # not plain sizes that multiply up: PyTorch's infer_size on a shape-only tensor
        sizes = _infer_sizes(shape, d, sizes)
    new = shape[:d] + tuple(sizes) + shape[d + 1:]
    return call(lib.mt_view, input._h, len(new), new)


def _infer_sizes(shape, d, sizes):
    """unflatten's sizes against dim d (a -1 inferred), with PyTorch's errors"""
    try:
        return list(view(call(lib.mt_empty, 1, [shape[d]], lib.MT_U8, lib.MT_META), sizes).shape)
    except RuntimeError as e:
        if "is invalid for input of size" in str(e):
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {d} "
                               f"({shape[d]}) in the input tensor") from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None


def _tensor_arg(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def ravel(input):
    # PyTorch's composition contiguous().view(-1): a view when it can be, ViewBackward0
    src = input if lib.mt_tensor_is_contiguous(_tensor_arg("ravel", input)._h) else contiguous(input)
    return call(lib.mt_view, src._h, 1, (-1,))  # src holds the handle alive through the call


def adjoint(input):
    if _tensor_arg("adjoint", input).dim() == 0:
        import warnings
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return input
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return conj(transpose(input, -2, -1))


# ---- complex numbers -----------------------------------------------------------------------
# conj() is materialised (PyTorch's is a lazy bit over the same storage): its result is a new
# tensor marked _conj, so that is_conj(), resolve_conj() and view_as_real's refusal answer as
# PyTorch's do; a write into it does not reach the original (docs/ARCHITECTURE.md).

def conj(input):
    if not _tensor_arg("conj", input).is_complex():
        return input
    r = call(lib.mt_unary, lib.MT_OP_CONJ, input._h, ffi.NULL)
    r._conj = True
    return r


def is_conj(input):
    return bool(_tensor_arg("is_conj", input).__dict__.get("_conj"))


def resolve_conj(input):
    return input.clone() if is_conj(_tensor_arg("resolve_conj", input)) else input


def conj_physical(input, *, out=None):
    if not _tensor_arg("conj_physical", input).is_complex() and out is None:
        return input
    from ._dispatch import _unary
    return _unary(lib.MT_OP_CONJ_PHYSICAL, input, out)


def conj_physical_(input):
    if _tensor_arg("conj_physical_", input).is_complex():
        from ._dispatch import _unary
        _unary(lib.MT_OP_CONJ_PHYSICAL, input, input)
    return input


def resolve_neg(input):
    return _tensor_arg("resolve_neg", input)  # no lazily negated tensors here


def is_neg(input):
    _tensor_arg("is_neg", input)
    return False


def is_complex(input):
    return _tensor_arg("is_complex", input).is_complex()


def view_as_real(input):
    if is_conj(_tensor_arg("view_as_real", input)):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return call(lib.mt_view_as_real, input._h)


def view_as_complex(input):
    return call(lib.mt_view_as_complex, _tensor_arg("view_as_complex", input)._h)


def real(input):
    """the real part as a view (PyTorch's select of view_as_real: SelectBackward0); a real tensor itself"""
    if not _tensor_arg("real", input).is_complex():
        return input
    return select(call(lib.mt_view_as_real, input._h), -1, 0)


def imag(input):
    if not _tensor_arg("imag", input).is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(call(lib.mt_view_as_real, input._h), -1, 1)


def _parts(name, fn_op):
    """torch.complex(real, imag) / torch.polar(abs, angle): two tensors of one float dtype"""
    first, second = ("real", "imag") if name == "complex" else ("abs", "angle")

    def fn(a, b, *, out=None):
        for pos, (arg, v) in enumerate(((first, a), (second, b)), 1):
            if not isinstance(v, Tensor):
                raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}")
        from ._dispatch import _binary
        return _binary(fn_op, a, b, out)
    fn.__name__ = name
    return fn


complex_ = _parts("complex", lib.MT_OP_COMPLEX)
polar = _parts("polar", lib.MT_OP_POLAR)


def select(input, dim, index):
    return call(lib.mt_select, input._h, dim, index.__index__())


def narrow(input, dim, start, length):
    nd = input.dim()
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, nd)
    size = input.shape[d]
    start = start.__index__()
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return call(lib.mt_slice, input._h, d, start, start + length, 1)


def slice_dim(input, dim, start, end, step=1):
    return call(lib.mt_slice, input._h, dim, start, end, step)


def unbind(input, dim=0):
    shape = input.shape
    d = _wrap_dim(dim, len(shape))
    if not shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return _multi_output(lib.mt_unbind, input, shape[d], d)


def _multi_output(fn, t, n, *args):
    """a core function writing n views of t (one multi-output node) into its last argument"""
    outs = _new("mt_tensor *[]", max(n, 1))
    st = fn(t._h, *args, outs)
    if st:
        raise_status(st)
    return tuple([wrap(outs[i]) for i in range(n)])


def _even_sections(size, step):
    """split's pieces of `step` along a dim of `size` (the last one shorter; one piece for step 0)"""
    n = max((size + step - 1) // step, 1) if step else 1
    return [step] * (n - 1) + [size - step * (n - 1)]


def split(tensor, split_size_or_sections, dim=0):
    nd = tensor.dim()
    if nd == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, (list, tuple)):
        sections = [int(s) for s in split_size_or_sections]
        step = -1  # split_with_sizes
        d = _wrap_dim(dim, nd)
        size = tensor.shape[d]
        if any(s < 0 for s in sections):
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sections}")
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                               f"size at dimension {dim}), but got split_sizes={sections}")
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        d = _wrap_dim(dim, nd)
        size = tensor.shape[d]
        if step == 0 and size != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sections = _even_sections(size, step)
    return _multi_output(lib.mt_split_with_sizes, tensor, len(sections), d, len(sections), _new("int64_t[]", sections),
                         step)


def chunk(input, chunks, dim=0):
    shape = input.shape
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, len(shape))
    size = shape[d]
    step = (size + chunks - 1) // chunks
    if step == 0:
        return split(input, [0] * chunks if size == 0 else 1, dim)
    sections = _even_sections(size, step)  # split(input, step, dim) inline: a per-call path
    return _multi_output(lib.mt_split_with_sizes, input, len(sections), d, len(sections), sections, step)


def tensor_split(input, indices_or_sections, dim=0):
    nd = input.dim()
    if nd == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, nd)
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.dim() == 0:
        indices_or_sections = indices_or_sections.item()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n > (2 ** 63 - 1) // 8:  # PyTorch reserves a C++ vector of n tensors first
            raise RuntimeError("cannot create std::vector larger than max_size()")
        q, r = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [int(b) for b in indices_or_sections] + [size]
    return tuple(call(lib.mt_slice, input._h, d, a, b, 1) for a, b in zip(bounds, bounds[1:]))


def unfold(self, dimension, size, step):
    return call(lib.mt_unfold, self._h, dimension, size, step)


def movedim(input, source, destination):
    nd = lib.mt_tensor_ndim(input._h)
    if type(source) is int and type(destination) is int and -nd <= source < nd and -nd <= destination < nd:
        order = list(range(nd))  # one dim moved: the per-call path
        order.insert(destination % nd, order.pop(source % nd))
        return call(lib.mt_permute, input._h, nd, order)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    nsrc = [_wrap_dim(s, nd) for s in src]
    ndst = [_wrap_dim(s, nd) for s in dst]
    if len(set(nsrc)) != len(nsrc):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(ndst)) != len(ndst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if nd == 0:
        return view_as(input, input)
    order = [-1] * nd
    for s, d in zip(nsrc, ndst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in nsrc)
    return permute(input, [o if o >= 0 else next(rest) for o in order])


def as_strided(input, size, stride, storage_offset=None):
    size, stride = parse_size((size,)), parse_size((stride,))
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    off = input.storage_offset() if storage_offset is None else storage_offset
    return call(lib.mt_as_strided, input._h, len(size), size, stride, off)


# the channels-last formats: their rank, and the dims from the innermost (stride 1) outwards
_CHANNELS_LAST = {"channels_last": (4, (1, 3, 2, 0)), "channels_last_3d": (5, (1, 4, 3, 2, 0))}


def _channels_last_contiguous(t, fmt):
    """PyTorch's compute_channels_last_contiguous: dense in the format's order (size-1 dims free)."""
    rank, order = _CHANNELS_LAST[fmt]
    if t.dim() != rank:
        return False
    expected = 1
    for d in order:
        size = t.shape[d]
        if size != 1:
            if t.stride(d) != expected:
                return False
            expected *= size
    return True


def channels_last_strides(shape, fmt):
    """The strides of a dense tensor of `shape` in a channels-last format (PyTorch's, for size-0 dims too)."""
    rank, order = _CHANNELS_LAST[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt} format")
    strides, expected = [0] * rank, 1
    for d in order:
        strides[d] = expected
        expected *= max(shape[d], 1)
    return strides


def is_contiguous(self, memory_format=None):
    if memory_format is None:
        return bool(lib.mt_tensor_is_contiguous(self._h))
    fmt = getattr(memory_format, "_name", None)
    if fmt in _CHANNELS_LAST:
        return _channels_last_contiguous(self, fmt)
    return bool(lib.mt_tensor_is_contiguous(self._h))  # contiguous_format (preserve_format: the same)


def contiguous(self, memory_format=None):
    if memory_format is None and lib.mt_tensor_is_contiguous(self._h):
        return self
    fmt = getattr(memory_format, "_name", None)
    if fmt in _CHANNELS_LAST:
        if _channels_last_contiguous(self, fmt):
            return self
        strides = channels_last_strides(self.shape, fmt)
        if self.numel() == 0:
            return as_strided(self.new_empty((0,)), self.shape, strides)
        rank = self.dim()
        last = (0,) + tuple(range(2, rank)) + (1,)  # channels innermost, then back to NC...
        return self.permute(last).contiguous().permute((0, rank - 1) + tuple(range(1, rank - 1)))
    if lib.mt_tensor_is_contiguous(self._h):
        return self
    return call(lib.mt_contiguous, self._h)


def swap_handle(self, other, name=None):
    """In-place metadata ops (t_, squeeze_, ...): self takes other's header; like any in-place op
    they bump the version counter. name: PyTorch's node name for the in-place op."""
    lib.mt_tensor_retain(other._h)
    old = self._h
    self._h = other._h
    self._shape = None
    lib.mt_tensor_release(old)
    if name is None or other._h == old:
        lib.mt_tensor_bump_version(self._h)
    else:
        check(lib.mt_tensor_inplace_view(self._h, name.encode()))
    return self


def named(r, name, src):
    """r's new grad_fn takes PyTorch's name for the overload called (src: the input, whose
    own node must not be renamed when the op returned it unchanged)."""
    if r._h != src._h:
        rename_grad_fn(r._h, name.encode())
    return r


def resize_(self, *sizes, size=None, memory_format=None):
    sizes = parse_size(sizes_or_keyword("resize_", "size", sizes, size), "resize_")
    from ._core import check
    check(lib.mt_resize_(self._h, len(sizes), sizes))
    self._shape = None
    fmt = getattr(memory_format, "_name", None)  # then PyTorch restrides the tensor to the format, in place
    if fmt in _CHANNELS_LAST:
        self.as_strided_(self.shape, channels_last_strides(self.shape, fmt))
    elif fmt == "contiguous_format" and not lib.mt_tensor_is_contiguous(self._h):
        from .storage import _contiguous_strides
        self.as_strided_(self.shape, _contiguous_strides(self.shape))
    return self


# ---- split_with_sizes, the unsafe_* splits (views here too: PyTorch's only skip view tracking) ----

def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    return split(input, split_size.__index__(), dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0):
    return chunk(input, chunks, dim)


# ---- the *_copy forms of the views: the view's values in a new contiguous tensor ----

def _fresh(v):
    """v's values in a new contiguous tensor"""
    return v.clone() if v.is_contiguous() else v.contiguous()


def _copy_of(view_fn, copied=False):
    """the *_copy form of a view; copied: view_fn's results are already new tensors"""
    def fn(input, *args, out=None, **kwargs):
        r = view_fn(input, *args, **kwargs)
        # one copy each: contiguous() copies a strided view (a transpose by tiles), clone() a contiguous one
        if not copied:
            r = tuple(_fresh(v) for v in r) if isinstance(r, tuple) else _fresh(r)
        if out is None:
            return r
        from ._special import finish
        if isinstance(r, tuple):
            for o, v in zip(out, r):
                finish(v, o)
            return None
        return finish(r, out)
    fn.__name__ = view_fn.__name__ + "_copy"
    return fn


def _slice(input, dim=0, start=None, end=None, step=1):
    d = _wrap_dim(dim, input.dim())
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _alias(input):
    return as_strided(input, input.shape, input.stride(), input.storage_offset())


_COPIES = {
    "alias_copy": _alias, "as_strided_copy": as_strided, "detach_copy": lambda input: input.detach(),
    "diagonal_copy": lambda input, offset=0, dim1=0, dim2=1: input.diagonal(offset, dim1, dim2),
    "expand_copy": lambda input, size, *, implicit=False: expand(input, size, implicit=implicit),
    "permute_copy": lambda input, dims: permute(input, dims), "select_copy": select, "slice_copy": _slice,
    "split_copy": lambda input, split_size, dim=0: split(input, split_size.__index__(), dim),
    "split_with_sizes_copy": split_with_sizes, "squeeze_copy": squeeze, "t_copy": t, "transpose_copy": transpose,
    "unbind_copy": unbind, "unfold_copy": unfold, "unsqueeze_copy": unsqueeze,
    "view_as_real_copy": lambda input: view_as_real(input), "view_as_complex_copy": lambda input: view_as_complex(input),
    "view_copy": lambda input, size: view(input, dtype=size) if not isinstance(size, (list, tuple)) and
    not hasattr(size, "__index__") else view(input, size),
}
COPIES = {name: _copy_of(fn) for name, fn in _COPIES.items()}


def _unbind_copied(input, dim=0):
    d = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return _multi_output(lib.mt_unbind_copy, input, input.shape[d], d)


_unbind_copied.__name__ = "unbind"
COPIES["unbind_copy"] = _copy_of(_unbind_copied, copied=True)


def _sparse_part_copy(name):
    """indices_copy/values_copy: PyTorch 2.13 has no SparseCPU kernel for them (its own NotImplementedError);
    a strided input gets indices()/values()'s layout error."""
    def fn(input, *, out=None):
        if getattr(input, "is_sparse", False):
            from ._missing import no_kernel_text
            raise NotImplementedError(no_kernel_text(name, "SparseCPU"))
        return getattr(input, name[:-len("_copy")])()
    fn.__name__ = name
    return fn


COPIES.update({name: _sparse_part_copy(name) for name in ("indices_copy", "values_copy")})


FUNCTIONS = {
    "reshape": reshape, "transpose": transpose, "swapaxes": transpose, "swapdims": transpose, "permute": permute,
    "t": t, "squeeze": squeeze, "unsqueeze": unsqueeze, "flatten": flatten, "unflatten": unflatten,
    "narrow": narrow, "select": select, "unbind": unbind, "split": split, "chunk": chunk,
    "tensor_split": tensor_split, "movedim": movedim, "moveaxis": movedim, "as_strided": as_strided,
    "broadcast_to": broadcast_to, "ravel": ravel, "adjoint": adjoint, "conj": conj, "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg, "conj_physical": conj_physical, "conj_physical_": conj_physical_, "is_complex": is_complex, "is_conj": is_conj,
    "is_neg": is_neg, "view_as_real": view_as_real, "view_as_complex": view_as_complex,
 "real": real, "imag": imag,
    "complex": complex_, "polar": polar, "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "unsafe_chunk": unsafe_chunk,
}
# Tensor.is_complex: _tensor.py; Tensor.real/imag: properties below
METHODS = {name: fn for name, fn in FUNCTIONS.items()
           if name not in ("is_complex", "view_as_real", "view_as_complex", "real", "imag", "complex", "polar")}
FUNCTIONS.update(COPIES)  # torch.* only
FUNCTIONS.update({"reshape": reshape_function, "permute": permute_function})  # one sizes argument there
reshape_function.__name__, permute_function.__name__ = "reshape", "permute"
METHODS.update({
    "view": view, "view_as": view_as, "reshape_as": reshape_as, "expand": expand, "expand_as": expand_as,
    "unfold": unfold, "contiguous": contiguous, "is_contiguous": is_contiguous, "resize_": resize_,
    "t_": lambda self: swap_handle(self, t(self, "t_"), "TBackward1"),
    "transpose_": lambda self, d0, d1: swap_handle(self, transpose(self, d0, d1), "TransposeBackward1"),
    "squeeze_": lambda self, dim=None: swap_handle(
        self, squeeze(self, dim), "SqueezeBackward" + ("3" if dim is None else "5" if isinstance(dim, (tuple, list))
                                                       else "4")),
    "unsqueeze_": lambda self, dim: swap_handle(self, unsqueeze(self, dim), "UnsqueezeBackward1"),
    "as_strided_": lambda self, size, stride, storage_offset=None:
        swap_handle(self, as_strided(self, size, stride, storage_offset), "AsStridedBackward1"),
})
FUNCTIONS["as_strided_"] = METHODS["as_strided_"]


def H(self):
    return conj(T(self))


def mH(self):
    return conj(mT(self))


PROPERTIES = {"T": T, "mT": mT, "H": H, "mH": mH, "real": real, "imag": imag}
