"""Tensor methods PyTorch writes in Python (torch/_tensor.py) or as thin entry points over other ops:
the per-element Python callbacks (apply_, map_, map2_), the legacy constructor `new`, the deprecated
out-of-place resize, sum_to_size, fill_diagonal_, and the memory/stream/layout queries of a CPU-only
build (is_pinned, pin_memory, record_stream, dim_order ...)."""
import functools
import numbers
import operator
import warnings

from . import _creation, _dtype
from ._creation import parse_size, sizes_or_keyword
from ._missing import missing_function, no_kernel_text
from ._tensor import Tensor


# ---- per-element Python callbacks (torch/csrc/utils/tensor_apply.cpp) -----------------------------

def _store(dtype):
    """How tensor_apply's store_scalar reads a callback's result for a tensor of dtype."""
    if dtype.is_floating_point:
        def conv(r):
            if isinstance(r, Tensor):
                return r.item()
            if not isinstance(r, numbers.Real):
                raise TypeError(f"must be real number, not {type(r).__name__}")
            return float(r)
        return conv
    if dtype is _dtype.bool:
        return bool

    def conv(r):  # PyLong_AsLongLong: an index, else a number truncated toward zero
        if isinstance(r, Tensor):
            return r.item()
        if isinstance(r, numbers.Real):
            return int(r)
        raise TypeError(f"'{type(r).__name__}' object cannot be interpreted as an integer")
    return conv


def _apply_values(self, fn, others, name):
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    legacy = self.type()
    for arg, t in others:
        if t.dtype != self.dtype:
            raise TypeError(f"{name}: expected {legacy} for {arg} (got {t.type()})")
    cols = [self.reshape(-1).tolist()] + [t.expand(self.shape).reshape(-1).tolist() for _, t in others]
    conv = _store(self.dtype)
    values = [conv(fn(*vals)) for vals in zip(*cols)]
    with _no_grad():
        self.copy_(_creation.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


def apply_(self, callable):
    return _apply_values(self, callable, [], "apply_")


def map_(self, tensor, callable):
    return _apply_values(self, callable, [("'other'", tensor)], "map_")


def map2_(self, x, y, callable):
    return _apply_values(self, callable, [("argument 'x'", x), ("argument 'y'", y)], "map2_")


# ---- the legacy constructor Tensor.new --------------------------------------------------------------

_NEW_SIGNATURES = ("new() received an invalid combination of arguments - got ({}), but expected one of:\n"
                   " * (*, torch.device device = None)\n"
                   "      didn't match because some of the keywords were incorrect: {}\n"
                   " * (torch.Storage storage)\n"
                   " * (Tensor other)\n"
                   " * (tuple of ints size, *, torch.device device = None)\n"
                   " * (object data, *, torch.device device = None)\n")


def new(self, *args, **kwargs):
    """self.new(...): torch.Tensor's legacy forms with self's dtype (sizes, a sequence, a tensor of the same
    dtype, a storage, or nothing)."""
    device = kwargs.pop("device", None)
    if kwargs:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={_typename(v)}" for k, v in kwargs.items()])
        raise TypeError(_NEW_SIGNATURES.format(got, ", ".join(kwargs)))
    if device is not None:
        from ._device import device as _device_cls
        dev = device if isinstance(device, _device_cls) else _device_cls(device)
        if dev.type != self.device.type:
            raise RuntimeError(f"legacy constructor expects device type: {self.device.type} but device type: "
                               f"{dev.type} was passed")
    dtype = self.dtype
    if not args:
        return _creation.empty(0, dtype=dtype, device=self.device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if a.dtype != dtype:
                raise TypeError(f"expected {_options(dtype)} (got {_options(a.dtype)})")
            return a.view_as(a)
        from .storage import TypedStorage, UntypedStorage
        if isinstance(a, (TypedStorage, UntypedStorage)):
            return _creation.empty(0, dtype=dtype).set_(a)
        if isinstance(a, (float, complex, bool)) or a is None:
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
        if not (isinstance(a, int) or type(a).__name__ == "Size"):
            return _creation.tensor(a, dtype=dtype)
    return _creation.empty(*args, dtype=dtype, device=self.device)


def _typename(v):
    return "torch." + type(v).__name__ if type(v).__module__.startswith(("mindtorch_v2", "torch")) else \
        type(v).__name__


def _options(dtype):
    return (f"TensorOptions(dtype={_dtype.CPP_NAMES[dtype._name]}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False):
    return _creation.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                                   requires_grad=requires_grad)


# ---- resizing ---------------------------------------------------------------------------------------

class _Resize:
    """torch.autograd._functions.Resize: a reshape that keeps the element count, as a Function."""

    @staticmethod
    def apply(tensor, sizes):
        from .autograd.function import Function

        class Resize(Function):
            @staticmethod
            def forward(ctx, t):
                ctx.input_sizes = t.size()
                return t.contiguous().view(*sizes)

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output.contiguous().view(ctx.input_sizes)

        numel = functools.reduce(operator.mul, sizes, 1)
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the given tensor "
                f"has a size of {'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's resize "
                "can only change the shape of a given tensor, while preserving the number of elements. ")
        return Resize.apply(tensor)


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return _Resize.apply(self, sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return _Resize.apply(self, tensor.size())


def resize_as_(self, the_template, *, memory_format=None):
    return self.resize_(the_template.shape, memory_format=memory_format)


def sum_to_size(self, *sizes, size=None):
    size = parse_size(sizes_or_keyword("sum_to_size", "size", sizes, size), "sum_to_size")
    shape = list(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{shape}}}.")
    r = self.sum(tuple(range(lead))) if lead else self
    dims = tuple(i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    return r.sum(dims, keepdim=True) if dims else r


def swapaxes_(self, axis0, axis1):
    return self.transpose_(axis0, axis1)


def swapdims_(self, dim0, dim1):
    return self.transpose_(dim0, dim1)


def fill_diagonal_(self, fill_value, wrap=False):
    """ATen's fill_diagonal_: the main diagonal as one strided view (all dims must be equal beyond 2-D), and
    with wrap a 2-D tall matrix's diagonal restarting every width + 1 rows."""
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.size(0), self.size(1)
    if n > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset, stride = self.storage_offset(), sum(self.stride())
    size = min(height, width)
    self.as_strided((size,), (stride,), offset).fill_(fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        self.as_strided((wrap_size,), (stride,), offset + self.stride(0) * (width + 1)).fill_(fill_value)
    return self


# ---- memory, streams and layout on a CPU-only build ------------------------------------------------

def is_pinned(self, device=None):
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this argument.",
                      DeprecationWarning, stacklevel=2)
    return False  # pinned memory needs an accelerator: none here


def pin_memory(self, device=None):
    if device is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    from ._device import device as _device_cls
    dev = device if isinstance(device, _device_cls) else _device_cls(device)
    if dev.type in ("cpu", "meta"):
        raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
    raise RuntimeError(f"Cannot access accelerator device {dev.type} when none is available.")


def record_stream(self, stream):
    if type(stream).__name__ != "Stream":
        raise RuntimeError("unknown parameter type")
    raise NotImplementedError(no_kernel_text("record_stream", self.device.type.upper()))


def storage_type(self):
    from .storage import _LEGACY_BY_DTYPE, _warn_typed_storage_removal
    _warn_typed_storage_removal()
    return _LEGACY_BY_DTYPE[self.dtype]


def const_data_ptr(self):
    return self.data_ptr()


def is_set_to(self, tensor):
    """Same storage, offset, sizes and strides."""
    from ._C import lib
    return (lib.mt_tensor_storage_ptr(self._h) == lib.mt_tensor_storage_ptr(tensor._h)
            and self.storage_offset() == tensor.storage_offset() and self.shape == tensor.shape
            and self.stride() == tensor.stride())


def as_subclass(self, cls):
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    return self._as_subclass(cls)


def is_distributed(self):
    if not isinstance(self, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not {type(self).__name__}")
    return False


def module_load(self, other, assign=False):
    return other.detach() if assign else self.copy_(other).detach()


def reinforce(self, reward):
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\n"
        "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
        "probs = policy_network(state)\naction = probs.multinomial()\nnext_state, reward = env.step(action)\n"
        "action.reinforce(reward)\naction.backward()\n\nUse:\n\n"
        "probs = policy_network(state)\n# NOTE: categorical is equivalent to what used to be called multinomial\n"
        "m = torch.distributions.Categorical(probs)\naction = m.sample()\nnext_state, reward = env.step(action)\n"
        "loss = -m.log_prob(action) * reward\nloss.backward()\n")


def _dim_order_should_swap(shape, strides, a, b):
    """torch._prims_common's comparison of two dims for the physical order (one tensor)."""
    def ge(x, y):
        return y == 0 or (x != 0 and (x >= y or x % y == 0))
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    return 1 if ge(sa, sb) else 0


def _contiguous_as(t, fmt):
    """t.is_contiguous(memory_format=fmt) as PyTorch computes it (channels_last: C innermost, 4-D only)."""
    from . import channels_last
    if fmt is not channels_last:
        return t.is_contiguous()
    if t.dim() != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if t.size(d) != 1:
            if t.stride(d) != expected:
                return False
            expected *= t.size(d)
    return True


def dim_order(self, *, ambiguity_check=False):
    """torch/_tensor.py's dim_order: the dims from outermost to innermost in memory."""
    from . import channels_last, memory_format
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(isinstance(m, memory_format) for m in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides, ndim = tuple(self.shape), self.stride(), self.dim()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check_multiple = ambiguity_check if isinstance(ambiguity_check, bool) else True
    multiple = any(a == b for a, b in zip(strides, strides[1:])) or any(s == 1 for s in shape)
    unique_format = sum(1 for m in formats if _contiguous_as(self, m)) == 1
    if check_multiple and multiple and not unique_format:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    if ndim <= 1:
        return tuple(range(ndim))
    contiguous, channels = self.is_contiguous(), _contiguous_as(self, channels_last)
    if contiguous and not channels:
        return tuple(range(ndim))
    if channels and not contiguous:
        return (0, *range(2, ndim), 1)
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):  # insertion sort with ambiguous comparisons, back to front
        d1 = i
        for d0 in reversed(range(i)):
            c = _dim_order_should_swap(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if ambiguity_check and any(_dim_order_should_swap(shape, strides, perm[i], perm[i + 1]) != -1
                               for i in range(ndim - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


def _prelu(self, weight):
    from .nn.functional import prelu
    return prelu(self, weight)


# hash_tensor's result is always uint64, a dtype mindtorch_v2 has no tensors of
_NO_UINT64 = " (its result is a torch.uint64 tensor; mindtorch_v2 has no uint16/uint32/uint64 tensors)"

METHODS = {
    "apply_": apply_, "map_": map_, "map2_": map2_, "new": new, "new_empty_strided": new_empty_strided,
    "resize": resize, "resize_as": resize_as, "resize_as_": resize_as_, "sum_to_size": sum_to_size,
    "swapaxes_": swapaxes_, "swapdims_": swapdims_, "fill_diagonal_": fill_diagonal_, "is_pinned": is_pinned,
    "pin_memory": pin_memory, "record_stream": record_stream, "storage_type": storage_type,
    "const_data_ptr": const_data_ptr, "is_set_to": is_set_to, "as_subclass": as_subclass,
    "is_distributed": is_distributed, "module_load": module_load, "reinforce": reinforce, "dim_order": dim_order,
    "prelu": _prelu,
    # first-class dimensions (functorch.dim) and uint64 results are not implemented
    "index": missing_function("Tensor.index", " (first-class dimensions, functorch.dim)"),
    "hash_tensor": missing_function("Tensor.hash_tensor", _NO_UINT64),
}
FUNCTIONS = {"resize_as_": resize_as_, "is_distributed": is_distributed,
             "hash_tensor": missing_function("torch.hash_tensor", _NO_UINT64)}
