"""The Tensor class: a Python object over one C handle (mt_tensor*).

Metadata and Python protocols live here; ops are attached as methods by
_methods.py. The wrapper owns exactly one reference to its handle.
"""
from ._C import ffi, lib
from ._core import check as _check, new_out, raise_status
from . import _dtype
from ._device import BY_CORE_ID
from ._size import Size

_unpack = ffi.unpack
_BY_ID = _dtype.BY_ID
_tensor_dtype = lib.mt_tensor_dtype
_release = lib.mt_tensor_release
_new_obj = object.__new__


class Tensor:
    __slots__ = ("_h", "_shape", "__dict__", "__weakref__")

    def __new__(cls, *args, **kwargs):
        from ._creation import legacy_new
        return legacy_new(cls, *args, **kwargs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from . import overrides
        # the first class defining its own __torch_function__ installs the dispatch (a plain subclass
        # does not: the wrappers change the identity of every torch function, docs/ARCHITECTURE.md)
        if "__torch_function__" in cls.__dict__ and overrides._takes_part(cls):
            overrides.enable_torch_function()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """PyTorch's default: run func with the protocol off and return Tensor results as cls."""
        from .overrides import DisableTorchFunctionSubclass, _state, convert_result, get_default_nowrap_functions
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        if getattr(_state, "running", None) is func:  # func dispatched back to us: another library's (real
            return NotImplemented  # torch's F.relu on our tensors), whose TypeError then says so
        outer, _state.running = getattr(_state, "running", None), func
        try:
            with DisableTorchFunctionSubclass():
                ret = func(*args, **(kwargs or {}))
                return ret if func in get_default_nowrap_functions() else convert_result(ret, cls)
        finally:
            _state.running = outer

    def __del__(self):
        try:
            _release(self._h)
        except (AttributeError, TypeError):  # never initialised, or interpreter teardown
            pass

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, **kwargs):
        """A cls instance aliasing data's storage (how nn.Parameter is built): a leaf, detached from
        data's graph as PyTorch's _make_subclass is (not a view of data: a detached alias)."""
        out = new_out()
        _check(lib.mt_detach(data._h, out))
        t = wrap(out[0], cls)
        if require_grad:
            t.requires_grad_(True)
        return t

    def _as_subclass(self, cls):
        return self._alias(cls)

    def _alias(self, cls):
        """A new header over the same storage, sizes, strides and offset, wrapped as cls."""
        h = self._h
        out = new_out()
        n = lib.mt_tensor_ndim(h)
        st = lib.mt_as_strided(h, n, lib.mt_tensor_sizes(h), lib.mt_tensor_strides(h), lib.mt_tensor_offset(h), out)
        if st:
            raise_status(st)
        return wrap(out[0], cls)

    # ---- metadata ---------------------------------------------------------
    @property
    def shape(self):
        s = self._shape
        if s is None:
            h = self._h
            s = self._shape = Size(_unpack(lib.mt_tensor_sizes(h), lib.mt_tensor_ndim(h)))
        return s

    def size(self, dim=None):
        s = self.shape
        if dim is None:
            return s
        if type(dim) is int and -len(s) <= dim < len(s):  # the common case inline: a per-call path
            return s[dim]
        return s[_wrap_dim_strict(dim, len(s))]

    @property
    def dtype(self):
        return _BY_ID[_tensor_dtype(self._h)]

    @property
    def device(self):
        return BY_CORE_ID[lib.mt_tensor_device(self._h)]

    @property
    def is_meta(self):
        return lib.mt_tensor_device(self._h) == lib.MT_META

    @property
    def is_cpu(self):
        return lib.mt_tensor_device(self._h) == lib.MT_CPU

    is_cuda = False
    is_sparse = False
    is_sparse_csr = False
    is_quantized = False
    is_mps = False
    is_nested = False

    def get_device(self):
        return -1

    def stride(self, dim=None):
        h = self._h
        s = tuple(_unpack(lib.mt_tensor_strides(h), lib.mt_tensor_ndim(h)))
        if dim is None:
            return s
        return s[_wrap_dim_strict(dim, len(s))]

    def storage_offset(self):
        return lib.mt_tensor_offset(self._h)

    def data_ptr(self):
        h = self._h
        if lib.mt_tensor_numel(h) == 0:  # PyTorch: empty tensors have no data
            return 0
        if lib.mt_tensor_device(h) == lib.MT_META:  # PyTorch: a null base plus the offset in bytes
            return lib.mt_tensor_offset(h) * lib.mt_dtype_itemsize(lib.mt_tensor_dtype(h))
        return int(ffi.cast("uintptr_t", lib.mt_tensor_data_ptr(h)))

    def element_size(self):
        return lib.mt_dtype_itemsize(lib.mt_tensor_dtype(self._h))

    @property
    def itemsize(self):
        return self.element_size()

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    def numel(self):
        return lib.mt_tensor_numel(self._h)

    nelement = numel

    def dim(self):
        return lib.mt_tensor_ndim(self._h)

    ndimension = dim

    @property
    def ndim(self):
        return lib.mt_tensor_ndim(self._h)

    @property
    def _version(self):
        return lib.mt_tensor_version(self._h)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return lib.mt_tensor_dtype(self._h) >= lib.MT_C64

    def is_signed(self):
        return self.dtype.is_signed

    @property
    def layout(self):
        from . import strided
        return strided

    def to_dense(self, dtype=None, *, masked_grad=None):
        """Every tensor here is strided, that is dense already: itself, converted when a dtype is given
        (PyTorch's strided case)."""
        from ._dtype import dtype as _dtype_cls
        if dtype is not None and not isinstance(dtype, _dtype_cls):
            raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be torch.dtype, not {type(dtype).__name__}")
        return self if dtype is None or dtype is self.dtype else self.to(dtype)

    # ---- autograd (state and engine live in the core) ------------------------
    @property
    def requires_grad(self):
        return bool(lib.mt_tensor_requires_grad(self._h))

    @requires_grad.setter
    def requires_grad(self, value):
        _check(lib.mt_tensor_set_requires_grad(self._h, 1 if value else 0))

    def requires_grad_(self, requires_grad=True):
        _check(lib.mt_tensor_set_requires_grad(self._h, 1 if requires_grad else 0))
        return self

    @property
    def grad(self):
        h = lib.mt_tensor_grad(self._h)
        if h == ffi.NULL:  # or a sparse gradient (nn.Embedding(sparse=True)), kept beside the core's slot
            return None if lib.mt_tensor_handle(self._h) == ffi.NULL else _sparse_grad(self)
        return wrap(h)

    @grad.setter
    def grad(self, value):
        if value is not None and value.layout is not _strided():
            from .sparse._grad import set_sparse_grad
            set_sparse_grad(self, value)
            return
        if lib.mt_tensor_handle(self._h) != ffi.NULL:
            _set_sparse_grad(self, None)
        _check(lib.mt_tensor_set_grad(self._h, ffi.NULL if value is None else value._h))

    @grad.deleter
    def grad(self):
        self.grad = None

    @property
    def grad_fn(self):
        from .autograd.graph import node_of
        return node_of(lib.mt_tensor_grad_fn(self._h))

    def register_hook(self, hook):
        from .autograd.graph import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from .autograd.graph import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    @property
    def output_nr(self):
        return lib.mt_tensor_output_nr(self._h)

    @property
    def _base(self):
        h = lib.mt_tensor_base(self._h)
        return None if h == ffi.NULL else wrap(h)

    def _is_view(self):
        h = lib.mt_tensor_base(self._h)
        if h == ffi.NULL:
            return False
        lib.mt_tensor_release(h)
        return True

    def is_inference(self):
        return bool(lib.mt_tensor_is_inference(self._h))

    @property
    def is_leaf(self):
        return bool(lib.mt_tensor_is_leaf(self._h))

    def retain_grad(self):
        _check(lib.mt_tensor_retain_grad(self._h))

    @property
    def retains_grad(self):
        return bool(lib.mt_tensor_retains_grad(self._h))

    def detach(self):
        out = new_out()
        st = lib.mt_detach(self._h, out)
        if st:
            raise_status(st)
        return wrap(out[0])

    def detach_(self):
        if self._is_view():
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        lib.mt_detach_(self._h)
        return self

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        _check(lib.mt_tensor_set_data(self._h, value._h))
        self._shape = None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- values -------------------------------------------------------------
    def item(self):
        f = ffi.new("double *")
        i = ffi.new("int64_t *")
        st = lib.mt_item(self._h, f, i)
        if st:
            raise_status(st)
        dt = lib.mt_tensor_dtype(self._h)
        if dt >= lib.MT_C64:  # read as complex128
            c = ffi.new("double[2]")
            _check(lib.mt_read(self._h, lib.MT_C128, c, 1))
            return complex(c[0], c[1])
        if dt >= lib.MT_F16:
            return f[0]
        if dt == lib.MT_BOOL:
            return bool(i[0])
        return i[0]

    def tolist(self):
        h = self._h
        n = lib.mt_tensor_numel(h)
        dt = lib.mt_tensor_dtype(h)
        if dt >= lib.MT_C64:
            buf, kind = ffi.new("double[]", 2 * n), lib.MT_C128
        elif dt >= lib.MT_F16:
            buf, kind = ffi.new("double[]", n), lib.MT_F64
        else:
            buf, kind = ffi.new("int64_t[]", n), lib.MT_I64
        st = lib.mt_read(h, kind, buf, n)
        if st:
            raise_status(st)
        flat = _unpack(buf, 2 * n if kind == lib.MT_C128 else n)
        if kind == lib.MT_C128:
            flat = [complex(flat[k], flat[k + 1]) for k in range(0, 2 * n, 2)]
        if dt == lib.MT_BOOL:
            flat = [v != 0 for v in flat]
        shape = self.shape
        if not shape:
            return flat[0]
        return _nest(flat, shape)

    def numpy(self, *, force=False):
        from ._interop import to_numpy
        return to_numpy(self, force)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    __array_priority__ = 1000

    # ---- Python protocols ----------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from ._repr import tensor_repr
        return tensor_repr(self)

    def __len__(self):
        if lib.mt_tensor_ndim(self._h) == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if lib.mt_tensor_ndim(self._h) == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        n = lib.mt_tensor_numel(self._h)
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def _scalar(self):
        if lib.mt_tensor_numel(self._h) != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def _real_scalar(self, ctype):
        v = self._scalar()
        if isinstance(v, complex):  # PyTorch's checked conversion of a complex Scalar
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return v

    def __float__(self):
        return float(self._real_scalar("double"))

    def __int__(self):
        return int(self._real_scalar("int64_t"))

    def __index__(self):
        if lib.mt_tensor_dtype(self._h) >= lib.MT_F16 or lib.mt_tensor_numel(self._h) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self._scalar())

    def __hash__(self):
        return id(self)

    def __format__(self, spec):
        if lib.mt_tensor_ndim(self._h) == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __dir__(self):
        return sorted(set(object.__dir__(self)))


def _strided():
    from . import strided
    return strided


def _sparse_grad(t):
    from .autograd import _callback
    return getattr(_callback.state_of(lib.mt_tensor_handle(t._h)), "sparse_grad", None)


def _set_sparse_grad(t, value):
    from .autograd import _callback
    st = _callback.state_of(lib.mt_tensor_handle(t._h))
    if getattr(st, "sparse_grad", None) is not None:
        st.sparse_grad = value


def _autograd_backward(*args, **kwargs):
    """autograd.backward, bound on first use (autograd imports this module; an import per call costs
    a microsecond on the per-step path)."""
    global _autograd_backward
    from .autograd import backward as _autograd_backward
    return _autograd_backward(*args, **kwargs)


def wrap(h, cls=Tensor):
    """A new wrapper owning the reference h."""
    t = _new_obj(cls)
    t._h = h
    t._shape = None
    return t


def _wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _wrap_dim_strict(dim, ndim):
    """size(dim)/stride(dim): a 0-dim tensor has no dims to name."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _nest(flat, shape):
    """Reshape a flat row-major list into nested lists of the given shape."""
    last = len(shape) - 1
    steps = [1] * len(shape)
    for d in range(last - 1, -1, -1):
        steps[d] = steps[d + 1] * shape[d + 1]

    def build(offset, d):
        if d == last:
            return flat[offset:offset + shape[d]]
        return [build(offset + i * steps[d], d + 1) for i in range(shape[d])]

    return build(0, 0)
