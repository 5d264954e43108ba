"""MaskedTensor: a tensor whose elements a boolean mask of the same shape marks as present or absent.

PyTorch builds it as a wrapper subclass (no storage of its own) and implements each aten op in
__torch_dispatch__, below autograd. mindtorch_v2 has no dispatcher below autograd, so a MaskedTensor here
is a Tensor whose C handle holds its data (a copy of the data it was made from) plus a `_masked_mask`;
its ops are implemented at the __torch_function__ level on that handle, so autograd records them as on a
plain tensor (the same graph PyTorch's wrapper records) and results are wrapped over the same handle.
The gradient of a MaskedTensor is the engine's plain gradient shown with the tensor's mask (`.grad`).

Supported, as in PyTorch 2.13: the unary and binary elementwise ops of its tables (masks of both operands
must match), the reductions sum/mean/amin/amax/argmin/argmax/prod/all/norm/var/std (all elements, or
dims), the view-like ops that apply to data and mask alike (select, transpose, t, indexing, expand, view,
reshape, cat, stack, unsqueeze, split, unfold), where, softmax, to/type conversions, detach, clone,
contiguous, copy_, item and the metadata queries. Other ops warn and raise TypeError, as
PyTorch's __torch_dispatch__ returning NotImplemented does. Sparse layouts are not available here.
"""
import warnings

import mindtorch_v2 as torch
from mindtorch_v2._C import lib
from mindtorch_v2._tensor import Tensor, wrap
from mindtorch_v2.overrides import DisableTorchFunctionSubclass

from .._ops import is_masked_tensor

__all__ = ["MaskedTensor", "is_masked_tensor", "masked_tensor", "as_masked_tensor"]

_DTYPES = (torch.float16, torch.float32, torch.float64, torch.bool, torch.int8, torch.int16, torch.int32,
           torch.int64)


def _plain(t):
    """A plain Tensor over t's own handle: the same data and autograd history, without the mask."""
    lib.mt_tensor_retain(t._h)
    return wrap(t._h, Tensor)


def _wrap(data, mask):
    """A MaskedTensor over data's handle (keeping its history) with mask; no copy, no warning."""
    lib.mt_tensor_retain(data._h)
    out = wrap(data._h, MaskedTensor)
    out._masked_mask = mask
    return out


def _data(a):
    return _plain(a) if is_masked_tensor(a) else a


def _mask(a):
    return a._masked_mask if is_masked_tensor(a) else None


def _map(args, fn):
    """args with each MaskedTensor (also inside lists and tuples) replaced by fn(it)."""
    out = []
    for a in args:
        if is_masked_tensor(a):
            a = fn(a)
        elif isinstance(a, (list, tuple)):
            a = type(a)(_map(a, fn))
        out.append(a)
    return out


def _wrap_result(data, mask):
    if isinstance(data, (list, tuple)):
        return type(data)(_wrap_result(d, m) for d, m in zip(data, mask))
    return _wrap(data, mask)


def _masks_match(a, b):
    if is_masked_tensor(a) and is_masked_tensor(b):
        ma, mb = a._masked_mask, b._masked_mask
        return ma.dim() == mb.dim() and bool(torch.eq(ma, mb).all().item())
    return True


def _not_implemented(name):
    warnings.warn(f"{name} is not implemented in __torch_dispatch__ for MaskedTensor.\n"
                  "If you would like this operator to be supported, please file an issue for a feature request at "
                  "https://github.com/pytorch/maskedtensor/issues with a minimal reproducible code snippet.\n"
                  "In the case that the semantics for the operator are not trivial, it would be appreciated "
                  "to also include a proposal for the semantics.", stacklevel=3)
    return NotImplemented


# ---- the op tables (PyTorch's maskedtensor/unary.py, binary.py, reductions.py, passthrough.py) ----

UNARY_NAMES = frozenset("""abs absolute acos arccos acosh arccosh angle asin arcsin asinh arcsinh atan arctan atanh
arctanh bitwise_not ceil clamp clip conj_physical cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 fix
floor frac lgamma log log10 log1p log2 logit i0 isnan nan_to_num neg negative positive pow rad2deg reciprocal
round rsqrt sigmoid sign sgn signbit sin sinc sinh sqrt square tan tanh trunc""".split())
INPLACE_UNARY_NAMES = frozenset(n + "_" for n in UNARY_NAMES - {"angle", "positive", "signbit", "isnan"})
BINARY_NAMES = frozenset("""add atan2 arctan2 bitwise_and bitwise_or bitwise_xor bitwise_left_shift
bitwise_right_shift div divide floor_divide fmod logaddexp logaddexp2 mul multiply nextafter remainder sub
subtract true_divide eq ne le ge greater greater_equal gt less_equal lt less maximum minimum fmax fmin
not_equal""".split())
INPLACE_BINARY_NAMES = frozenset(n + "_" for n in BINARY_NAMES - {"logaddexp", "logaddexp2", "fmin", "minimum",
                                                                    "maximum", "fmax"})
REDUCE_NAMES = frozenset("sum mean amin amax argmin argmax prod all norm var std".split())
PASSTHROUGH_NAMES = frozenset("""select transpose split t __getitem__ expand view reshape cat concat concatenate
stack unsqueeze unfold""".split())
# the operator methods that reach __torch_function__ under their own name: reflected ones swap operands
_REFLECTED = {"__rsub__": "sub", "__rdiv__": "div", "__rtruediv__": "div", "__rfloordiv__": "floor_divide",
              "__rmod__": "remainder"}
_OPERATOR_NAMES = {"__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor",
                   "__floordiv__": "floor_divide", "__lshift__": "bitwise_left_shift",
                   "__rshift__": "bitwise_right_shift", "__ifloordiv__": "floor_divide_", "__imod__": "remainder_",
                   "__iand__": "bitwise_and_", "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_"}
# queries answered from the data (no tensor result)
_METADATA = frozenset("""size dim ndimension numel nelement stride storage_offset element_size is_floating_point
is_complex is_signed requires_grad_ retain_grad register_hook backward data_ptr get_device is_same_size
is_contiguous __len__ __contains__ register_post_accumulate_grad_hook is_set_to is_shared is_pinned
is_inference""".split())
# positional parameters of the unary ops that may come by keyword (PyTorch's dispatch sees them positionally)
_UNARY_KWARGS = frozenset(("min", "max", "exponent", "eps", "nan", "posinf", "neginf"))
_CONVERSIONS = {"float": torch.float32, "double": torch.float64, "half": torch.float16, "int": torch.int32,
                "long": torch.int64, "short": torch.int16, "char": torch.int8, "byte": torch.uint8,
                "bool": torch.bool, "bfloat16": torch.bfloat16}


def _method(name):
    """Tensor.name, else torch.name (aliases such as arccos are not all methods)."""
    return getattr(Tensor, name, None) or getattr(torch, name)


def _unary(name, args, kwargs):
    if set(kwargs) - _UNARY_KWARGS:
        raise ValueError("MaskedTensor unary ops require that len(kwargs) == 0. "
                         "If you need support for this, please open an issue on Github.")
    if any(isinstance(a, Tensor) for a in args[1:]) or any(isinstance(a, Tensor) for a in kwargs.values()):
        raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")
    self = args[0]
    result = _method(name)(_plain(self), *args[1:], **kwargs)
    if name.endswith("_"):
        return self
    return _wrap(result, self._masked_mask)


def _binary(name, args, kwargs):
    if kwargs:
        raise ValueError("len(kwargs) must equal 0")
    if any(isinstance(a, Tensor) for a in args[2:]):
        raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside from the lhs and rhs")
    if not _masks_match(*args[:2]):
        raise ValueError("Input masks must match. If you need support for this, please open an issue on Github.")
    a, b = args[0], args[1]
    fn = _method(name) if isinstance(a, Tensor) else getattr(torch, name)
    result = fn(_data(a), _data(b), *args[2:])
    if name.endswith("_"):
        if is_masked_tensor(a):
            a._set_data_mask(a, a._masked_mask)
        return a
    mask = _mask(a) if is_masked_tensor(a) else _mask(b)
    return _wrap(result, mask.expand_as(result))


def _multidim_any(mask, dim, keepdim):
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        mask = torch.any(mask, dim=d, keepdim=keepdim)
    return mask


def _masked_all(data, dim=None, keepdim=False, mask=None):
    filled = data if mask is None else data.masked_fill(~mask, True)
    return filled.all() if dim is None else torch.all(filled, dim=dim, keepdim=keepdim)


def _reduce(name, args, kwargs):
    from mindtorch_v2 import masked
    fn = _masked_all if name == "all" else getattr(masked, name)
    self = args[0]
    if not is_masked_tensor(self):
        raise TypeError("Input to reduce_dim must be a MaskedTensor")
    mask = self._masked_mask
    if name == "norm":  # PyTorch's Tensor.norm and torch.norm pass p by keyword, which this table refuses
        kwargs = {"p": "fro", **dict(zip(("p", "dim", "keepdim", "dtype"), args[1:])), **kwargs}
        args = args[:1]
    if len(args) == 1 and not kwargs:  # over every element
        data = fn(_plain(self), mask=mask) if name == "all" else fn(self, mask=mask)
        return as_masked_tensor(data, torch.any(mask))
    dim, keepdim, dtype = _reduce_dim_args(*args[1:], **kwargs)
    if name == "all":
        data = fn(_plain(self), dim=dim, keepdim=keepdim, mask=mask)
    else:
        data = fn(self, dim=dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return as_masked_tensor(data, _multidim_any(mask, dim, keepdim))


def _reduce_dim_args(dim, keepdim=False, dtype=None):
    return dim, keepdim, dtype


def _passthrough(name, args, kwargs):
    fn = getattr(Tensor, name) if is_masked_tensor(args[0]) else getattr(torch, name)
    data = fn(*_map(args, _plain), **kwargs)
    mask = fn(*_map(args, lambda a: a._masked_mask), **kwargs)
    return _wrap_result(data, mask)


def _where(name, args, kwargs):
    if len(args) != 3 or kwargs:
        raise ValueError(f"__torch_function__, torch.where: len(args) must be 3 but got {len(args)}"
                         if len(args) != 3 else "__torch_function__, torch.where: len(kwargs) must be 0 but got "
                         f"{len(kwargs)}")
    cond, x, y = args
    like = x if isinstance(x, Tensor) else y
    x, y = (v if isinstance(v, Tensor) else torch.full((), v, dtype=like.dtype) for v in (x, y))  # scalars
    x = x if is_masked_tensor(x) else MaskedTensor(x, torch.ones_like(x, dtype=torch.bool))
    y = y if is_masked_tensor(y) else MaskedTensor(y, torch.ones_like(y, dtype=torch.bool))
    data = torch.where(cond, _plain(x), _plain(y))
    return _wrap(data, torch.where(cond, x._masked_mask, y._masked_mask))


def _softmax(name, args, kwargs):
    """PyTorch's masked softmax: dropped elements, and every element of a fully dropped slice, give 0."""
    self, dim = args[0], (args[1] if len(args) > 1 else kwargs.get("dim"))
    mask = self._masked_mask
    data = _plain(self)
    out = torch.nn.functional.softmax(data.masked_fill(~mask, -float("inf")), dim)
    return _wrap(out.masked_fill(~mask, 0), mask)


def _convert(name, args, kwargs):
    self = args[0]
    if name in _CONVERSIONS:
        data = _plain(self).to(_CONVERSIONS[name])
        mask = self._masked_mask
    else:
        data = getattr(Tensor, name)(_plain(self), *args[1:], **kwargs)
        rest = [torch.bool if isinstance(a, torch.dtype) else a for a in args[1:]]
        mask = getattr(Tensor, name)(self._masked_mask, *rest, **{**kwargs, **({"dtype": torch.bool}
                                                                               if "dtype" in kwargs else {})})
    if data.dtype not in _DTYPES:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    return _wrap(data, mask)


def _on_data(name, args, kwargs):
    """detach, clone, contiguous, to_dense: the op on the data, the mask kept (a copy when the op
    copies)."""
    self = args[0]
    data = _method(name)(_plain(self), *args[1:], **kwargs)
    mask = self._masked_mask
    return _wrap(data, mask.contiguous() if name == "contiguous" else mask)


def _same(name, args, kwargs):
    """conj and friends: MaskedTensor data is never complex, so they return the tensor itself (as PyTorch)."""
    return args[0]


def _copy_(name, args, kwargs):
    if len(args) != 2:
        raise ValueError(f"__torch_dispatch__, aten.copy_.default: len(args) must be 2 but got {len(args)}")
    if not _masks_match(args[0], args[1]):
        raise ValueError("args[0] mask and args[1] mask must match but do not")
    Tensor.copy_(_plain(args[0]), _data(args[1]))
    return args[0]


def _item(name, args, kwargs):
    self = args[0]
    if not self._masked_mask:
        raise ValueError("__torch_dispatch__, aten._local_scalar_dense: expected a mask tensor")  # (PyTorch names the op packet)
    return _plain(self).item()


_HANDLERS = {}
for _names, _fn in ((UNARY_NAMES | INPLACE_UNARY_NAMES, _unary), (BINARY_NAMES | INPLACE_BINARY_NAMES, _binary),
                    (REDUCE_NAMES, _reduce), (PASSTHROUGH_NAMES, _passthrough), (("where",), _where),
                    (("softmax",), _softmax), (("to", *_CONVERSIONS), _convert),
                    (("detach", "clone", "contiguous", "to_dense"), _on_data),
                    (("copy_",), _copy_), (("conj", "resolve_conj", "resolve_neg"), _same), (("item",), _item)):
    for _n in _names:
        _HANDLERS[_n] = _fn


class MaskedTensor(Tensor):
    """data with a boolean mask of the same shape; the elements the mask drops take part in no op."""

    def __new__(cls, data, mask, requires_grad=False):
        if is_masked_tensor(data) or not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if is_masked_tensor(mask) or not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        warnings.warn("The PyTorch API of MaskedTensors is in prototype stage and will change in the near future. "
                      "Please open a Github issue for features requests and see our documentation on the "
                      "torch.masked module for further information about the project.", UserWarning, stacklevel=2)
        if data.requires_grad:
            warnings.warn("It is not recommended to create a MaskedTensor with a tensor that requires_grad. "
                          "To avoid this, you can use data.detach().clone()", UserWarning, stacklevel=2)
        with torch.no_grad():
            self = Tensor._make_subclass(cls, data.detach().clone())
        if requires_grad:
            Tensor.requires_grad_(self, True)
        return self

    def __init__(self, data, mask, requires_grad=False):
        if data.layout != mask.layout:
            raise TypeError("data and mask must have the same layout.")
        self._masked_mask = mask.clone()
        self._validate_members()

    def _validate_members(self):
        mask = self._masked_mask
        if type(mask) is not Tensor:
            raise TypeError(f"data and mask must have the same type. Got {Tensor} and {type(mask)}")
        if mask.dtype != torch.bool:
            raise TypeError("mask must have dtype bool.")
        if self.dtype not in _DTYPES:
            raise TypeError(f"{self.dtype} is not supported in MaskedTensor.")
        if Tensor.dim(self) != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if Tensor.size(self) != mask.size():
            raise ValueError("data.size() must equal mask.size()")

    def _set_data_mask(self, data, mask):
        if data is not self:
            Tensor.copy_(_plain(self), _data(data))
        self._masked_mask = mask
        self._validate_members()

    @staticmethod
    def _from_values(data, mask):
        return as_masked_tensor(data, mask)

    @property
    def _masked_data(self):
        return _plain(self).detach()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if isinstance(getattr(func, "__self__", None), property):  # a property: metadata of the data
            with DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if name in _REFLECTED:
            name, args = _REFLECTED[name], (args[1], args[0], *args[2:])
        name = _OPERATOR_NAMES.get(name, name)
        with DisableTorchFunctionSubclass():
            if name in _METADATA:
                plain = _map(args, _plain)
                result = func(*plain, **kwargs)
                return args[0] if result is plain[0] else result  # requires_grad_ returns self
            handler = _HANDLERS.get(name)
            if handler is None or (name == "where" and is_masked_tensor(args[0])):
                return _not_implemented(name)
            return handler(name, args, kwargs)

    def __lt__(self, other):
        return _wrap(_plain(self) < _data(other), self._masked_mask)

    @property
    def grad(self):
        g = Tensor.grad.fget(_plain(self))
        return None if g is None else _wrap(g, self._masked_mask)

    @grad.setter
    def grad(self, value):
        Tensor.grad.fset(_plain(self), None if value is None else _data(value))

    def get_data(self):
        """The data (all elements, dropped ones too) as a plain tensor; differentiable."""
        return GetData.apply(self)

    def get_mask(self):
        return self._masked_mask

    def to_tensor(self, value):
        """A plain tensor: the data, with value where the mask drops an element."""
        return self.get_data().masked_fill(~self._masked_mask, value)

    def is_sparse_coo(self):
        return False

    def is_sparse_csr(self):
        return False

    @property
    def is_sparse(self):
        return False

    def __repr__(self, *, tensor_contents=None):
        data, mask = _plain(self).detach(), self._masked_mask
        if data.dim() == 0:
            value = data.item()
            text = f"{value:8.4f}" if isinstance(value, float) else str(value)
            return f"MaskedTensor({text if mask.item() else '--'}, {mask.item()})"
        body = "\n".join("  " + line for line in _rows(data, mask).split("\n"))
        return "MaskedTensor(\n" + body + "\n)"

    __str__ = __repr__


def _rows(data, mask):
    """The nested-list text of a MaskedTensor: dropped elements shown as '--'."""
    if data.dim() == 1:
        items = [v.item() for v in data]
        texts = [f"{v:8.4f}" if isinstance(v, float) else str(v) for v in items]
        keep = mask.tolist()
        width = max([8 if not k else len(t) for t, k in zip(texts, keep)], default=0)
        return "[" + ", ".join(t if k else "--".rjust(width) for t, k in zip(texts, keep)) + "]"
    parts = ["\n".join("  " + line for line in _rows(d, m).split("\n")) for d, m in zip(data, mask)]
    return "[\n" + ",\n".join(parts) + "\n]"


class GetData(torch.autograd.Function):  # grad_fn: GetDataBackward, as PyTorch's
    @staticmethod
    def forward(ctx, self):
        return _plain(self).detach()

    @staticmethod
    def backward(ctx, grad):
        return grad


class Constructor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, data):
        return data.detach()

    @staticmethod
    def backward(ctx, grad):
        return grad



def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor leaf holding a copy of data (as torch.tensor does)."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor of data with mask that keeps data's autograd history (as torch.as_tensor does)."""
    if is_masked_tensor(data) or not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    if is_masked_tensor(mask) or not isinstance(mask, Tensor):
        raise TypeError("mask must be a Tensor")
    out = _wrap(Constructor.apply(data), mask.clone())
    out._validate_members()
    return out
