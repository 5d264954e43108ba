"""The thin path from a Python call to a core op: one cffi call, one wrapper."""
import numbers

from ._C import ffi, lib
from ._core import check, new_out, raise_status
from ._tensor import Tensor, wrap

_NULL = ffi.NULL
_BOOL, _INT, _FLOAT = lib.MT_SCALAR_BOOL, lib.MT_SCALAR_INT, lib.MT_SCALAR_FLOAT
_SCALAR_DTYPE = {_BOOL: lib.MT_BOOL, _INT: lib.MT_I64, _FLOAT: lib.MT_F64}


class NotANumber(TypeError):
    """An operand that is neither a Tensor nor a number: Python operators answer NotImplemented."""


def scalar_kind(v):
    """(f, i, kind) of a Python number for the core; TypeError for anything else."""
    t = type(v)
    if t is float:
        return v, 0, _FLOAT
    if t is int:
        if not -(1 << 63) <= v < (1 << 63):
            if v >= 1 << 64:
                raise OverflowError("int too big to convert")
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            raise RuntimeError("Overflow when unpacking long")  # PyTorch: a uint64 scalar (not supported)
        return 0.0, v, _INT
    if t is bool:
        return 0.0, int(v), _BOOL
    if isinstance(v, bool):
        return 0.0, int(v), _BOOL
    if isinstance(v, int):
        return scalar_kind(int(v))
    if isinstance(v, float):
        return float(v), 0, _FLOAT
    # numpy scalars and other number types (a 0-dim ndarray is an array: numpy handles it, as in PyTorch)
    if hasattr(v, "dtype") and hasattr(v, "item") and getattr(v, "ndim", 0) == 0 and type(v).__name__ != "ndarray":
        return scalar_kind(v.item())
    raise NotANumber(f"unsupported operand type: '{type(v).__name__}'")


def is_complex_number(v):
    """a Python complex or a numpy complex scalar (numpy's complex64 is not a Python complex)"""
    return isinstance(v, complex) or type(v).__module__ == "numpy" and getattr(v, "ndim", 1) == 0 and \
        getattr(getattr(v, "dtype", None), "kind", "") == "c"


def complex_operand(v):
    """a Python complex number as a 0-dim wrapped number (the default complex dtype in promotion)"""
    v = complex(v)
    out = new_out()
    check(lib.mt_scalar_complex(v.real, v.imag, lib.MT_C128, 1, out))
    return wrap(out[0])


def as_tensor_operand(v):
    """A Tensor as is; a Python number as a 0-dim wrapped-number tensor."""
    if isinstance(v, Tensor):
        return v
    if is_complex_number(v):
        return complex_operand(v)
    f, i, kind = scalar_kind(v)
    out = new_out()
    st = lib.mt_scalar_tensor(f, i, kind, _SCALAR_DTYPE[kind], 1, out)
    if st:
        raise_status(st)
    return wrap(out[0])


def finish(st, res, out):
    """Raise for a failed call; else the out= tensor (the core's extra reference dropped) or a new wrapper."""
    if st:
        raise_status(st)
    if out is not None:
        lib.mt_tensor_release(res[0])
        out._shape = None
        return out
    return wrap(res[0])


# Ops with a (Number self, Tensor other) overload: two numbers fail overload resolution instead.
# The value: the second argument's name, and whether that overload has no out= (PyTorch then adds
# the "didn't match" line).
_NUMBER_SELF = {lib.MT_OP_POW: ("exponent", False), lib.MT_OP_XLOGY: ("other", False),
                lib.MT_OP_REMAINDER: ("other", True), lib.MT_OP_BITWISE_AND: ("other", True),
                lib.MT_OP_BITWISE_OR: ("other", True), lib.MT_OP_BITWISE_XOR: ("other", True)}


def _not_tensor(op, x, other=None):
    name = ffi.string(lib.mt_op_name(op)).decode()
    if op not in _NUMBER_SELF or isinstance(other, Tensor):
        return TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    arg, no_out = _NUMBER_SELF[op]
    kinds = (type(x).__name__, type(other).__name__)
    number_self = (f" * (Number self, Tensor {arg})\n      didn't match because some of the arguments have invalid types: "
                   f"(!{kinds[0]}!, !{kinds[1]}!)\n" if no_out else f" * (Number self, Tensor {arg}, *, Tensor out = None)\n")
    return TypeError(f"{name}() received an invalid combination of arguments - got ({kinds[0]}, {kinds[1]}), but expected "
                     f"one of:\n * (Tensor input, Tensor {arg}, *, Tensor out = None)\n{number_self}"
                     f" * (Tensor input, Number {arg}, *, Tensor out = None)\n")


def _only_tensors(name, input, other, position=2):
    """PyTorch's argument error for ops whose operands must both be Tensors (no Python numbers)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position {position}) must be Tensor, not {type(other).__name__}")


def _no_number_input(name, input, other):
    """PyTorch's overload error for ops that take a Python number only as `other`."""
    def kind(v):
        return "Tensor" if isinstance(v, Tensor) else type(v).__name__
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({kind(input)}, {kind(other)}), "
                    "but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
                    " * (Tensor input, Number other, *, Tensor out = None)\n")


def _unary(op, x, out):
    res = new_out()
    try:
        xh = x._h
    except AttributeError:
        raise _not_tensor(op, x) from None
    st = lib.mt_unary(op, xh, out._h if out is not None else _NULL, res)
    return finish(st, res, out)


_NUMBERS_AS_TENSORS = frozenset((lib.MT_OP_ADD, lib.MT_OP_SUB, lib.MT_OP_MUL, lib.MT_OP_DIV, lib.MT_OP_DIV_TRUNC,
                                 lib.MT_OP_DIV_FLOOR))


_NEVER_COMPLEX = frozenset((Tensor, float, int, bool))


def _binary(op, a, b, out, alpha=1):
    res = new_out()
    oh = _NULL if out is None else out._h
    # no complex Scalar in mt_binary_scalar: a wrapped-number tensor (tensors and Python's real numbers
    # are not asked: the per-op path)
    if type(b) not in _NEVER_COMPLEX and is_complex_number(b):
        b = complex_operand(b)
    elif type(a) not in _NEVER_COMPLEX and is_complex_number(a):
        a = complex_operand(a)
    if isinstance(b, Tensor):
        if isinstance(a, Tensor):
            st = lib.mt_binary(op, a._h, b._h, alpha, oh, res)
        else:
            f, i, kind = scalar_kind(a)
            st = lib.mt_binary_scalar(op, b._h, f, i, kind, 1, alpha, oh, res)
    elif isinstance(a, Tensor):
        f, i, kind = scalar_kind(b)
        st = lib.mt_binary_scalar(op, a._h, f, i, kind, 0, alpha, oh, res)
    elif op in _NUMBERS_AS_TENSORS and isinstance(a, numbers.Number):
        # PyTorch's argument parser takes a number as `input` for these ops alone (its
        # should_allow_numbers_as_tensors): torch.add(7, 2) is tensor(9)
        from ._creation import tensor
        return _binary(op, tensor(a), b, out, alpha)
    else:
        raise _not_tensor(op, a, b)
    return finish(st, res, out)


def _ternary(op, a, b, c, s=0.0, out=None):
    """a, b, c: Tensors, Python numbers (wrapped) or None (passed as NULL)."""
    ops = [_NULL if v is None else as_tensor_operand(v) for v in (a, b, c)]
    res = new_out()
    st = lib.mt_ternary(op, *(v if v is _NULL else v._h for v in ops), s,
                        _NULL if out is None else out._h, res)
    return finish(st, res, out)


def call(fn, *args):
    """Run a core function whose last argument is `mt_tensor **out`; wrap the result."""
    res = new_out()
    try:
        st = fn(*args, res)
    except OverflowError:  # a Python int beyond int64 (cffi's conversion): PyTorch's argument-parser error
        raise ValueError("Overflow when unpacking long long") from None
    if st:
        raise_status(st)
    return wrap(res[0])
