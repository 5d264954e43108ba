"""Attach the op library to Tensor as methods and Python operators."""
from ._C import ffi, lib
from . import _creation, _lapack, _dtype, _elementwise as ew, _generated_ops as g, _indexing, _linalg, _nn_ops, _random, _reduce, _views as v
from ._core import check, new_out, raise_status
from ._device import core_id
from ._dispatch import NotANumber, _binary, _unary, as_tensor_operand, call, is_complex_number, scalar_kind
from ._tensor import Tensor, wrap
from . import _index_reduce, _linalg_utils, _shape_ops, _special, _special_gamma
from ._registry import TENSOR, TORCH

# ---- conversions and copies -------------------------------------------------------


def clone(input, *, memory_format=None):
    if getattr(memory_format, "_name", "preserve_format") != "preserve_format":
        out = input.contiguous(memory_format=memory_format)  # a copy in that format, unless already in it
        if out is not input:
            return out
    return call(lib.mt_clone, input._h)  # preserves the strides of a dense tensor


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        try:  # PyTorch's argument parser takes a Python number as a 0-dim tensor here
            src = as_tensor_operand(src)
        except TypeError:
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}") from None
    here, there = lib.mt_tensor_device(self._h), lib.mt_tensor_device(src._h)
    if here != there and not lib.mt_tensor_is_wrapped_number(src._h):
        if there == lib.MT_META:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self  # into a meta tensor: shapes only, nothing to copy
    check(lib.mt_copy_(self._h, src._h))
    return self


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
        if lib.mt_tensor_device(self._h) == lib.MT_META:  # shapes only: the value is never read
            return self
        value = value.item()
    else:  # Python numbers are converted with PyTorch's overflow checks (tensor values are not)
        _dtype.check_scalar(value, self.dtype)
    if is_complex_number(value):
        value = complex(value)
        if value.imag and self.dtype.is_complex:  # mt_fill carries a real number: copy the complex one
            from ._dispatch import complex_operand
            return self.copy_(complex_operand(value).expand(self.shape))
        value = value.real
    f, i, kind = scalar_kind(value)
    check(lib.mt_fill(self._h, f, i, kind))
    return self


def zero_(self):
    return fill_(self, 0)


def fill(input, value):
    return fill_(clone(input), value)  # PyTorch's composition (FillBackward: the grad is zero)


def _to_dtype(self, dtype, copy=False):
    return call(lib.mt_to_dtype, self._h, dtype._id, 1 if copy else 0)


def to(self, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword {list(kwargs)[0]}")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            continue  # non_blocking / copy positional flags
        elif a is not None:
            device = a
    t = self
    if device is not None:
        dev = core_id(device)
        here = lib.mt_tensor_device(self._h)
        if dev != here:
            if here == lib.MT_META:
                raise NotImplementedError("Cannot copy out of meta tensor; no data!")
            t = _creation.empty_strided(self.shape, self.stride(), dtype=dtype or self.dtype, device=device)
            return t
    if dtype is not None and dtype is not t.dtype:
        return _to_dtype(t, dtype)
    if copy:
        return clone(t)
    return t


def type_as(self, other):
    return to(self, other.dtype)


_LEGACY_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "uint8": "ByteTensor", "int8": "CharTensor",
                 "int16": "ShortTensor", "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor",
                 "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type's name, or a conversion to a dtype, legacy type or legacy type name. Only the dtype
    changes: PyTorch keeps the layout either way (x.type(torch.sparse.DoubleTensor) of a strided x is strided)."""
    layout = self.layout._name
    if dtype is None:
        if layout == "sparse_csr":
            raise RuntimeError("Unimplemented backend SparseCsrCPU")
        return ("torch.sparse." if layout == "sparse_coo" else "torch.") + _LEGACY_NAMES[self.dtype._name]
    if isinstance(dtype, str):
        names = {p + v: k for k, v in _LEGACY_NAMES.items() for p in ("torch.", "torch.sparse.")
                 if p == "torch." or k not in ("bool", "complex64", "complex128")}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_dtype, names[dtype])
    elif not isinstance(dtype, _dtype.dtype):  # a legacy type object
        dtype = dtype.dtype
    return self.to(dtype)


def _caster(dt):
    def method(self, memory_format=None):
        return to(self, dt)
    return method


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                            requires_grad=requires_grad)


def _new_factory(factory, name):
    def method(self, *size_args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        if size is not None:  # by keyword (x.new_ones(size=...)), with the parser's errors
            if size_args:
                raise TypeError(f"{name}() got multiple values for argument 'size'")
            if not isinstance(size, (list, tuple)):
                raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
            size_args = (size,)
        elif not size_args:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        return factory(*size_args, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad,
                       _name=name)
    return method


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    return _creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad, _name="new_full")


_lib_binary, _lib_binary_scalar = lib.mt_binary, lib.mt_binary_scalar
_FLOAT, _INT, _I64_MIN, _I64_MAX = lib.MT_SCALAR_FLOAT, lib.MT_SCALAR_INT, -(1 << 63), (1 << 63) - 1
_NULL = ffi.NULL

# ---- operators ----------------------------------------------------------------------

def _op(fn):
    """A binary Python operator: NotImplemented for operands that are not numbers (so == None is False)."""
    def op(self, other):
        try:
            return fn(self, other)
        except NotANumber:
            return NotImplemented
    return op


def _plain(opid):
    """self <op> other, with a Tensor, float or int64 other going straight to the core."""
    def op(self, other):
        if isinstance(other, Tensor):
            res = new_out()
            st = _lib_binary(opid, self._h, other._h, 1.0, _NULL, res)
        elif type(other) is float:
            res = new_out()
            st = _lib_binary_scalar(opid, self._h, other, 0, _FLOAT, 0, 1.0, _NULL, res)
        elif type(other) is int and _I64_MIN <= other <= _I64_MAX:
            res = new_out()
            st = _lib_binary_scalar(opid, self._h, 0.0, other, _INT, 0, 1.0, _NULL, res)
        else:
            try:
                return _binary(opid, self, other, None)
            except NotANumber:
                return NotImplemented
        if st:
            raise_status(st)
        return wrap(res[0])
    return op


def _reflected(opid):
    return _op(lambda self, other: _binary(opid, other, self, None))


def _rdiv(self, other):
    """number / tensor is reciprocal(tensor) * number in PyTorch (its rounding and its grad_fn)."""
    if isinstance(other, Tensor):
        return _binary(g.OP_DIV, other, self, None)
    return _binary(g.OP_MUL, _unary(g.OP_RECIPROCAL, self, None), other, None)


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _unary(g.OP_BITWISE_NOT, self, None)


def _iop(opid):
    return lambda self, other: _binary(opid, self, other, self)


def _contains(self, element):
    import numbers
    if isinstance(element, (Tensor, numbers.Number)):
        return bool((element == self).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")


OPERATORS = {
    "__contains__": _contains,
    "__add__": _plain(g.OP_ADD), "__radd__": _plain(g.OP_ADD), "__iadd__": _iop(g.OP_ADD),
    "__sub__": _plain(g.OP_SUB), "__rsub__": _reflected(g.OP_SUB),
    "__isub__": lambda self, other: ew.sub(self, other, out=self),
    "__mul__": _plain(g.OP_MUL), "__rmul__": _plain(g.OP_MUL), "__imul__": _iop(g.OP_MUL),
    "__truediv__": _plain(g.OP_DIV), "__rtruediv__": _op(lambda self, other: _rdiv(self, other)),
    "__itruediv__": _iop(g.OP_DIV),
    "__floordiv__": _plain(g.OP_DIV_FLOOR), "__rfloordiv__": _reflected(g.OP_DIV_FLOOR),
    "__ifloordiv__": _iop(g.OP_DIV_FLOOR),
    "__mod__": _plain(g.OP_REMAINDER), "__rmod__": _reflected(g.OP_REMAINDER), "__imod__": _iop(g.OP_REMAINDER),
    "__pow__": _op(ew.pow), "__rpow__": _op(lambda self, other: ew.pow(other, self)),
    "__ipow__": lambda self, other: ew.pow(self, other, out=self),
    "__and__": _plain(g.OP_BITWISE_AND), "__rand__": _plain(g.OP_BITWISE_AND), "__iand__": _iop(g.OP_BITWISE_AND),
    "__or__": _plain(g.OP_BITWISE_OR), "__ror__": _plain(g.OP_BITWISE_OR), "__ior__": _iop(g.OP_BITWISE_OR),
    "__xor__": _plain(g.OP_BITWISE_XOR), "__rxor__": _plain(g.OP_BITWISE_XOR), "__ixor__": _iop(g.OP_BITWISE_XOR),
    "__lshift__": _plain(g.OP_BITWISE_LEFT_SHIFT), "__rlshift__": _reflected(g.OP_BITWISE_LEFT_SHIFT),
    "__ilshift__": _iop(g.OP_BITWISE_LEFT_SHIFT),
    "__rshift__": _plain(g.OP_BITWISE_RIGHT_SHIFT), "__rrshift__": _reflected(g.OP_BITWISE_RIGHT_SHIFT),
    "__irshift__": _iop(g.OP_BITWISE_RIGHT_SHIFT),
    "__eq__": _plain(g.OP_EQ), "__ne__": _plain(g.OP_NE), "__lt__": _plain(g.OP_LT), "__le__": _plain(g.OP_LE),
    "__gt__": _plain(g.OP_GT), "__ge__": _plain(g.OP_GE),
    "__neg__": lambda self: _unary(g.OP_NEG, self, None),
    "__pos__": ew.positive,
    "__abs__": lambda self: _unary(g.OP_ABS, self, None),
    "__invert__": _invert,
    "__getitem__": _indexing.getitem,
    "__setitem__": _indexing.setitem,
    "__matmul__": lambda self, other: _linalg.matmul(self, other),
    "__rmatmul__": lambda self, other: _linalg.matmul(other, self),
}


METHODS = {
    "clone": clone, "copy_": copy_, "fill_": fill_, "zero_": zero_, "to": to, "type_as": type_as,
    "type": type_, "new_tensor": new_tensor, "new_zeros": _new_factory(_creation.zeros, "new_zeros"),
    "new_ones": _new_factory(_creation.ones, "new_ones"), "new_empty": _new_factory(_creation.empty, "new_empty"),
    "new_full": new_full,
    "float": _caster(_dtype.float32), "double": _caster(_dtype.float64), "half": _caster(_dtype.float16),
    "bfloat16": _caster(_dtype.bfloat16), "long": _caster(_dtype.int64), "int": _caster(_dtype.int32),
    "short": _caster(_dtype.int16), "char": _caster(_dtype.int8), "byte": _caster(_dtype.uint8),
    "bool": _caster(_dtype.bool), "cpu": lambda self, memory_format=None: to(self, "cpu"),
    "cfloat": _caster(_dtype.complex64), "cdouble": _caster(_dtype.complex128),
    "chalf": lambda self, memory_format=None: to(self, _dtype.float16.to_complex()),  # complex32: raises naming itself
}


def install():
    """Register every op module's functions and methods (an error on a name registered twice), then
    attach the methods to Tensor."""
    from ._numpy_compat import accept_numpy_names
    from ._tensor_serial import METHODS as serial_methods
    from . import _runtime, _symbolic, _tensor_misc, _spectral, sparse
    for module in (g, ew, v, _reduce, _linalg, _lapack, _random, _nn_ops, _shape_ops, _runtime, _special, _special_gamma,
                   _index_reduce, _linalg_utils, _creation, _tensor_misc, _spectral, _symbolic, sparse):
        TORCH.register(module.FUNCTIONS, module.__name__)
        TENSOR.register(module.METHODS, module.__name__)
    TORCH.register({"clone": clone, "fill": fill, "fill_": fill_, "zero_": zero_}, __name__)
    TENSOR.register(METHODS, __name__)
    TENSOR.register(serial_methods, "mindtorch_v2._tensor_serial")
    TENSOR.register(OPERATORS, __name__)
    for name, fn in TENSOR.items():
        if name in Tensor.__dict__:
            raise RuntimeError(f"Tensor.{name} is defined twice: in the Tensor class and by {TENSOR.origin[name]}")
        setattr(Tensor, name, accept_numpy_names(fn))
    for name, fn in v.PROPERTIES.items():
        setattr(Tensor, name, property(fn))


install()
