"""Elementwise functions whose signatures are not the generated unary/binary ones."""
import numbers

from ._C import lib
from . import _dtype
from . import _generated_ops as g
from ._core import rename_grad_fn
from ._dispatch import _binary, _ternary, _unary, as_tensor_operand, is_complex_number
from ._tensor import Tensor


def _check_alpha(input, other, alpha, sub=False):
    """PyTorch's alpha_check, against the result dtype; for sub the core's bool-subtraction error
    comes first."""
    if type(alpha) is int and alpha == 1:
        return 1
    if sub and any(v.dtype is _dtype.bool if isinstance(v, Tensor) else isinstance(v, bool) for v in (input, other)):
        return float(alpha)
    dt = result_type(input, other)
    if isinstance(alpha, bool):
        if dt is not _dtype.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not dt.is_floating_point and not isinstance(alpha, numbers.Integral):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if sub and alpha == 0 and isinstance(alpha, numbers.Integral):
        return -0.0  # PyTorch negates an integer 0 (no sign), subtracting +0.0 * other
    return float(alpha)


def add(input, other, *, alpha=1, out=None):
    return _binary(g.OP_ADD, input, other, out, _check_alpha(input, other, alpha))


def sub(input, other, *, alpha=1, out=None):
    return _binary(g.OP_SUB, input, other, out, _check_alpha(input, other, alpha, sub=True))


subtract = sub


def rsub(input, other, *, alpha=1):
    if not isinstance(input, Tensor):
        kinds = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (input, other))
        raise TypeError(f"rsub() received an invalid combination of arguments - got ({kinds}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Number alpha = 1)\n"
                        " * (Tensor input, Number other, Number alpha = 1)\n")
    return _binary(g.OP_SUB, other, input, None, _check_alpha(input, other, alpha, sub=True))


_ROUNDING = {None: g.OP_DIV, "trunc": g.OP_DIV_TRUNC, "floor": g.OP_DIV_FLOOR}


def div(input, other, *, rounding_mode=None, out=None):
    try:
        op = _ROUNDING[rounding_mode]
    except (KeyError, TypeError):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'") from None
    return _binary(op, input, other, out)


divide = div


def true_divide(input, other, *, out=None):
    return _binary(g.OP_DIV, input, other, out)


def floor_divide(input, other, *, out=None):
    return _binary(g.OP_DIV_FLOOR, input, other, out)


def multiply(input, other, *, out=None):
    return _binary(g.OP_MUL, input, other, out)


def pow(input, exponent, *, out=None):
    if (isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0
            and isinstance(input, Tensor) and not input.dtype.is_floating_point):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _binary(g.OP_POW, input, exponent, out)


def _float_power_dtype(*args):
    """double, or complex double when either operand is complex"""
    cplx = any(a.is_complex() if isinstance(a, Tensor) else is_complex_number(a) for a in args)
    return _dtype.complex128 if cplx else _dtype.float64


def float_power(input, exponent, *, out=None):
    dt = _float_power_dtype(input, exponent)
    x, e = (v.to(dt) if isinstance(v, Tensor) else complex(v) if dt.is_complex else float(v) for v in (input, exponent))
    return _binary(g.OP_POW, x, e, out)


def float_power_(self, exponent):
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.scalar_name(self)} but the operation's "
                           f"result requires dtype {_dtype.scalar_name(dt)}")
    return float_power(self, exponent, out=self)


def round(input, *, decimals=0, out=None):
    if decimals:
        raise NotImplementedError("round(decimals=...) is not implemented")
    return _unary(g.OP_ROUND, input, out)


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _ternary(g.OP_CLAMP, input, min, max, out=out)


clip = clamp


def clamp_min(input, min, *, out=None):
    return _clamp_named(_ternary(g.OP_CLAMP, input, min, None, out=out), "ClampMin", min, out)


def clamp_max(input, max, *, out=None):
    return _clamp_named(_ternary(g.OP_CLAMP, input, None, max, out=out), "ClampMax", max, out)


def _clamp_named(r, kind, bound, out):
    """clamp_min/clamp_max have nodes of their own in PyTorch (Backward1: a tensor bound)"""
    if out is None:
        rename_grad_fn(r._h, f"{kind}Backward{1 if isinstance(bound, Tensor) else 0}".encode())
    return r


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from ._shape_ops import nonzero
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        def kind(v):
            return "Tensor" if isinstance(v, Tensor) else type(v).__name__
        raise TypeError(f"where() received an invalid combination of arguments - got ({kind(condition)}, {kind(input)}, "
                        f"{kind(other)}), but expected one of:\n * (Tensor condition)\n"
                        " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor condition, Number self, Tensor other)\n"
                        " * (Tensor condition, Tensor input, Number other)\n"
                        " * (Tensor condition, Number self, Number other)\n")
    return _ternary(g.OP_WHERE, condition, input, other, out=out)


def masked_fill(input, mask, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    return _ternary(g.OP_MASKED_FILL, input, mask, value)


def masked_fill_(self, mask, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    return _ternary(g.OP_MASKED_FILL, self, mask, value, out=self)


def _complex_scalar(value, dtype):
    """A complex Python scalar taken in the compute dtype, as PyTorch's Scalar conversion: a real
    part alone for a real dtype (half types convert through float), or its RuntimeError."""
    if not isinstance(value, complex) or dtype.is_complex:
        return value
    _dtype.check_scalar(value, _dtype.float32 if dtype in (_dtype.float16, _dtype.bfloat16) else dtype)
    return value.real


def lerp(input, end, weight, *, out=None):
    if isinstance(weight, complex) and not input.is_complex():
        # a real input takes the weight as a real Scalar (integer inputs reach the kernel's dtype error)
        weight = _complex_scalar(weight, input.dtype) if input.dtype.is_floating_point else weight.real
    return _ternary(g.OP_LERP, input, end, weight, out=out)


def _addc(op, input, tensor1, tensor2, value, out):
    if isinstance(value, complex):
        ops = [as_tensor_operand(v) for v in (input, tensor1, tensor2)]
        value = _complex_scalar(value, _dtype.from_id(lib.mt_result_type(3, [v._h for v in ops])))
        if isinstance(value, complex):  # complex compute: PyTorch's kernel multiplies tensor1 by value first
            return _ternary(op, input, tensor1 * value, tensor2, 1.0, out=out)
    return _ternary(op, input, tensor1, tensor2, float(value), out=out)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _addc(g.OP_ADDCMUL, input, tensor1, tensor2, value, out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    return _addc(g.OP_ADDCDIV, input, tensor1, tensor2, value, out)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    dt = input.dtype
    if dt.is_floating_point:
        info = _dtype.finfo(dt)
        posinf = info.max if posinf is None else posinf
        neginf = info.min if neginf is None else neginf
    else:
        posinf = neginf = 0.0
    return _ternary(g.OP_NAN_TO_NUM, input, float(posinf), float(neginf), float(nan), out=out)


def square(input, *, out=None):
    return pow(input, 2, out=out)  # PyTorch's own composition: PowBackward0, bool -> int64


def positive(input):
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _isinf_signed(name, inf):
    def fn(input, *, out=None):
        if out is not None and out.dtype is not _dtype.bool:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")
        if input.dtype.is_floating_point:
            return _binary(g.OP_EQ, input, inf, out)
        from ._creation import zeros_like
        r = zeros_like(input, dtype=_dtype.bool)  # an integer is never infinite
        return r if out is None else out.resize_(r.shape).copy_(r)
    fn.__name__ = name
    return fn


isposinf, isneginf = _isinf_signed("isposinf", float("inf")), _isinf_signed("isneginf", float("-inf"))


def isreal(input):
    if input.is_complex():
        return input.imag == 0
    from ._creation import ones_like
    return ones_like(input, dtype=_dtype.bool)


def result_type(tensor1, tensor2):
    from ._C import ffi
    a, b = as_tensor_operand(tensor1), as_tensor_operand(tensor2)
    return _dtype.from_id(lib.mt_result_type(2, [a._h, b._h]))


class _Heaviside:
    """heaviside has no derivative in PyTorch: its result still records a node, whose backward
    raises (built on first use: autograd imports this module)."""
    node = None

    @classmethod
    def apply(cls, input, values):
        if cls.node is None:
            from .autograd.function import Function

            class Heaviside(Function):
                _node_name = "NotImplemented"

                @staticmethod
                def forward(ctx, x, v):
                    return where(x == 0, v, x > 0).to(x.dtype)

                @staticmethod
                def backward(ctx, grad):
                    raise RuntimeError("derivative for aten::heaviside is not implemented")
            cls.node = Heaviside
        return cls.node.apply(input, values)


def heaviside(input, values, *, out=None):
    """0 where input < 0, values where input == 0, 1 where input > 0 (nan counts as < 0)."""
    for i, (name, v) in enumerate((("input", input), ("values", values))):
        if not isinstance(v, Tensor):
            raise TypeError(f"heaviside(): argument '{name}' (position {i + 1}) must be Tensor, not {type(v).__name__}")
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    r = _Heaviside.apply(input, values)
    return r if out is None else _special_finish(r, out)


def heaviside_(self, values):
    return _special_finish(heaviside(self, values), self, inplace=True)


def _special_finish(r, out, inplace=False):
    from ._special import finish
    return finish(r, out, inplace)


def frexp(input, *, out=None):
    """(mantissa, exponent): input = mantissa * 2**exponent, 0.5 <= |mantissa| < 1 (0, inf, nan: exponent 0)."""
    from ._reduce import return_types
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    from .autograd.grad_mode import no_grad, is_grad_enabled
    with no_grad():  # two kernels read the bits; the exponent comes in the input dtype (exact) and becomes int32
        mantissa = _unary(g.OP_FREXP_MANTISSA, input, None)
        e = _unary(g.OP_FREXP_EXPONENT, input, None)
    if input.requires_grad and is_grad_enabled():  # d mantissa / d input = 2**-exponent: the same values, scaled
        mantissa = _scale2(input.to(_dtype.float64), -e.to(_dtype.float64)).to(input.dtype)
    r = return_types.frexp(mantissa, e.to(_dtype.int32))
    if out is not None:
        from ._shape_ops import _pair_out
        return _pair_out(r, out)
    return r


def _scale2(x, e):
    """x * 2**e for float64 x and integral e, in two steps so 2**e never overflows or underflows alone."""
    from .autograd.grad_mode import no_grad
    with no_grad():
        h = (e / 2).floor()
        lo, hi = h.exp2(), (e - h).exp2()
    return x * lo * hi


def ldexp(input, other, *, out=None):
    """input * 2**other (PyTorch's composition), in the inputs' float result type."""
    dt = result_type(input, other)
    r = multiply(input, pow(2.0, other))
    return r.to(dt if dt.is_floating_point else _dtype.get_default_dtype()) if out is None else out.copy_(r)


def ldexp_(self, other):
    r = pow(2.0, other)
    if not _dtype.can_cast(result_type(self, r), self.dtype):
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_dtype.scalar_name(self.dtype)}")
    return self.mul_(r)


def _inplace(fn):
    """Tensor.<name>_ from a function with out=: compute into self."""
    def method(self, *args, **kwargs):
        return fn(self, *args, out=self, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


FUNCTIONS = {
    "add": add, "sub": sub, "subtract": sub, "rsub": rsub, "div": div, "divide": div, "true_divide": true_divide,
    "floor_divide": floor_divide, "multiply": multiply, "pow": pow, "float_power": float_power, "round": round,
    "clamp": clamp, "clip": clip, "clamp_min": clamp_min, "clamp_max": clamp_max, "where": where,
    "masked_fill": masked_fill, "lerp": lerp, "addcmul": addcmul, "addcdiv": addcdiv, "nan_to_num": nan_to_num,
    "result_type": result_type, "square": square, "positive": positive, "isposinf": isposinf,
    "isneginf": isneginf, "isreal": isreal, "heaviside": heaviside, "frexp": frexp, "ldexp": ldexp,
    "ldexp_": ldexp_,
}
METHODS = {name: fn for name, fn in FUNCTIONS.items() if name not in ("where", "result_type")}
METHODS["heaviside_"] = heaviside_
METHODS.update({name + "_": _inplace(FUNCTIONS[name]) for name in (
    "add", "sub", "div", "true_divide", "floor_divide", "pow", "round", "clamp", "clip", "clamp_min", "clamp_max",
    "lerp", "addcmul", "addcdiv", "nan_to_num", "subtract", "multiply", "divide", "square")})
# the in-place ops PyTorch also has as torch.<name>_
FUNCTIONS.update({name: METHODS[name] for name in (
    "clamp_", "clamp_min_", "clamp_max_", "clip_", "nan_to_num_", "round_", "square_")})
METHODS.update({
    "where": lambda self, condition, other: where(condition, self, other),
    "masked_fill_": masked_fill_, "float_power_": float_power_,
})
