"""The kernels behind torch.ops.aten (and prims, higher_order): PyTorch's operators run on our ops.

An overload of PyTorch's table (_ops._table) runs, in this order:
  1. a kernel written here (@kernel), for ops whose arguments differ from any public function's
     (_softmax's half_to_float, slice.Tensor, upsample_*.vec, the native_* tuples, ...);
  2. the public function PyTorch binds the op to (the table's "python" names: torch.add, Tensor.add_,
     nn.functional.gelu, linalg.inv, ...), ours of the same name, called with the schema's arguments by
     name. PyTorch generates those bindings from the same schemas, so the names mean the same there;
     a function that lacks a name the call needs is not a match, never a guess.
An overload with neither raises NotImplementedError naming it.
"""
import inspect

from ._tensor import Tensor

__all__ = ["run_builtin", "HigherOrderNamespace"]

_KERNELS = {}  # "ns::op" or "ns::op.overload" -> function taking the schema's arguments by name


def kernel(*names):
    """Registers a function as the kernel of "ns::op" (every overload) or "ns::op.overload"."""
    def register(fn):
        for name in names:
            if name in _KERNELS:
                raise RuntimeError(f"two kernels for {name}")
            _KERNELS[name] = fn
        return fn
    return register


def _public(name):
    """Our function for one of PyTorch's public names ("torch.add", "Tensor.add_", "linalg.inv")."""
    import importlib
    home, _, attr = name.rpartition(".")
    if home == "Tensor":
        obj = Tensor
    else:
        obj = importlib.import_module("mindtorch_v2" if home == "torch" else f"mindtorch_v2.{home}")
    return getattr(obj, attr, None)


_SIGS = {}


def _params(fn):
    """(keyword-passable parameter names, takes **kwargs) of fn; None when it has no signature."""
    key = id(fn)
    if key not in _SIGS:
        try:
            ps = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            _SIGS[key] = None
        else:
            _SIGS[key] = ({p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)},
                          any(p.kind == p.VAR_KEYWORD for p in ps), fn)  # fn kept alive: its id stays its own
    got = _SIGS[key]
    return None if got is None else got[:2]


def _outs(schema):
    return [a.name for a in schema.arguments if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write]


def _call_args(schema, values, method, accepts):
    """(first positional value, {name: value}) of a call of the public binding, or None when it does not
    take an argument the call needs. The first value is the tensor a method is bound to, or the first
    argument; every other argument goes by name (self -> input, as PyTorch's binding names it), at its
    schema default when not given (a binding's default can differ: torch.kl_div's reduction), unless
    the function has no such parameter and the value is the default; several outs go as one out= tuple."""
    from ._ops import _same_default
    first = "self" if method else schema.arguments[0].name
    outs = _outs(schema)
    kw = {}
    for a in schema.arguments:
        if a.name == first or len(outs) > 1 and a.name in outs:
            continue
        if a.name not in values and not a.has_default_value():
            continue  # an out= not given
        v = values.get(a.name, a.default_value)
        name = "input" if a.name == "self" else a.name
        if v is None and a.has_default_value() and a.default_value is None:
            continue  # absent
        if accepts(name):
            kw[name] = v
        elif not (a.has_default_value() and _same_default(v, a.default_value)):
            return None
    if len(outs) > 1 and any(o in values for o in outs):
        if not accepts("out"):
            return None
        kw["out"] = tuple(values[o] for o in outs)
    return values.get(first), kw


def _auto(op, values):
    """Our public function of the op's binding that takes the call's arguments, with them; or None."""
    for name in op._entry.builtin[1].get("python", ()):
        method = name.startswith("Tensor.")
        if method and not any(a.name == "self" for a in op._schema.arguments):
            continue
        fn = _public(name)
        got = fn is not None and _params(fn)
        if not got:
            continue
        accepted, var_kw = got
        call = _call_args(op._schema, values, method, lambda n: var_kw or n in accepted)
        if call is not None:
            return (fn,) + call
    return None


def _plain(result, schema):
    """What PyTorch's operator returns: a list for Tensor[], a plain tuple for several returns."""
    if len(schema.returns) == 1 and schema.returns[0].type.startswith("Tensor") \
            and schema.returns[0].type.endswith("[]") and isinstance(result, tuple):
        return list(result)
    if len(schema.returns) > 1 and isinstance(result, tuple) and type(result) is not tuple:
        return tuple(result)
    return result


def run_builtin(op, values):
    """Runs overload op of PyTorch's table on its bound arguments ({name: value})."""
    schema = op._schema
    qual = f"{op._namespace}::{op._opname}"
    fn = _KERNELS.get(f"{qual}.{op._overloadname}") or _KERNELS.get(qual)
    if fn is not None:
        full = {a.name: values.get(a.name, a.default_value) for a in schema.arguments}
        return fn(**full)
    row, entry = op._entry.builtin
    if op._namespace == "aten" and op._opname.startswith("_foreach_") and row[0] not in entry.get("jit_only", ()):
        return _foreach(op, values)
    if row[0] not in entry.get("jit_only", ()):
        found = _auto(op, values)
        if found is not None:
            fn, first, kw = found
            return _plain(fn(first, **kw), schema)
    raise NotImplementedError(f"{qual}.{op._overloadname} is not implemented in mindtorch_v2")


# arguments of a _foreach_ op that the per-tensor method takes by position (the rest go by name)
_FOREACH_POSITIONAL = {"other", "scalar", "scalars", "tensor1", "tensor2", "exponent", "weight", "tensors1",
                       "tensors2", "end", "src"}


def _foreach(op, values):
    """_foreach_<op>[_]: the per-tensor method over the lists (a list argument is zipped, others shared)."""
    name = op._opname[len("_foreach_"):]
    args = [a for a in op._schema.arguments if a.name != "self" and a.name in values]
    selves = values["self"]
    if not isinstance(selves, (list, tuple)):
        raise NotImplementedError(f"aten::{op._opname}.{op._overloadname} is not implemented in mindtorch_v2")
    out = []
    for i, t in enumerate(selves):
        pick = [(a, values[a.name][i] if a.type.endswith("[]") else values[a.name]) for a in args]
        fn = getattr(t, name, None)
        if fn is None:
            raise NotImplementedError(f"aten::{op._opname}.{op._overloadname} is not implemented in mindtorch_v2")
        out.append(fn(*[v for a, v in pick if a.name in _FOREACH_POSITIONAL],
                      **{a.name: v for a, v in pick if a.name not in _FOREACH_POSITIONAL}))
    return None if name.endswith("_") else out


# ---- kernels: ops whose arguments no public function takes as they are ----

def _torch():
    import mindtorch_v2
    return mindtorch_v2


def _F():
    from .nn import functional
    return functional


def _softmax_kernel(log):
    def run(self, dim, half_to_float, out=None):
        t = _torch()
        return (t.log_softmax if log else t.softmax)(self, dim, dtype=t.float32 if half_to_float else None)
    return run


kernel("aten::_softmax.default")(_softmax_kernel(False))
kernel("aten::_log_softmax.default")(_softmax_kernel(True))


@kernel("aten::slice.Tensor")
def _slice(self, dim=0, start=None, end=None, step=1):
    dim = dim + self.dim() if dim < 0 else dim
    return self[(slice(None),) * dim + (slice(start, end, step),)]


@kernel("aten::index.Tensor")
def _index(self, indices):
    return self[tuple(slice(None) if i is None else i for i in indices)]


@kernel("aten::_to_copy.default")
def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    if layout is not None and str(layout) != "torch.strided":
        raise NotImplementedError("aten::_to_copy.default: only the strided layout is implemented in mindtorch_v2")
    return self.to(device=device if device is not None else self.device, dtype=dtype if dtype is not None
                   else self.dtype, non_blocking=non_blocking, copy=True,
                   memory_format=memory_format if memory_format is not None else _torch().preserve_format)


@kernel("aten::copy.default")
def _copy(self, src, non_blocking=False):
    return self.clone().copy_(src, non_blocking)


@kernel("aten::alias.default")
def _alias(self):
    return self.view(self.shape)


@kernel("aten::lift_fresh.default")
def _lift_fresh(self):
    return self


@kernel("aten::lift_fresh_copy.default")
def _lift_fresh_copy(self):
    return self.clone()


@kernel("aten::_unsafe_view.default")
def _unsafe_view(self, size):
    return self.reshape(size)


@kernel("aten::_reshape_alias.default")
def _reshape_alias(self, size, stride):
    return self.as_strided(size, stride)


@kernel("aten::sym_size.int")
def _sym_size(self, dim):
    return self.size(dim)


@kernel("aten::sym_size.default")
def _sym_sizes(self):
    return list(self.size())


@kernel("aten::sym_stride.int")
def _sym_stride(self, dim):
    return self.stride(dim)


@kernel("aten::sym_stride.default")
def _sym_strides(self):
    return list(self.stride())


@kernel("aten::sym_numel.default")
def _sym_numel(self):
    return self.numel()


@kernel("aten::sym_storage_offset.default")
def _sym_storage_offset(self):
    return self.storage_offset()


@kernel("aten::split.Tensor")
def _split(self, split_size, dim=0):
    return list(_torch().split(self, split_size, dim))


def _max_pool_kernel(nd):
    def run(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return getattr(_F(), f"max_pool{nd}d")(self, kernel_size, list(stride) or None, padding, dilation, ceil_mode,
                                               return_indices=True)
    return run


for _nd in (1, 2, 3):
    kernel(f"aten::max_pool{_nd}d_with_indices.default")(_max_pool_kernel(_nd))


def _upsample(mode):
    def run(input, output_size, scale_factors, align_corners=None):
        return _F().interpolate(input, size=output_size, scale_factor=scale_factors, mode=mode,
                                align_corners=align_corners)
    return run


for _mode, _nds in (("nearest", (1, 2, 3)), ("nearest-exact", (1, 2, 3)), ("linear", (1,)), ("bilinear", (2,)),
                    ("bicubic", (2,)), ("trilinear", (3,))):
    for _nd in _nds:
        _name = {"nearest-exact": "_upsample_nearest_exact", "linear": "upsample_linear",
                 "bilinear": "upsample_bilinear", "bicubic": "upsample_bicubic",
                 "trilinear": "upsample_trilinear"}.get(_mode, "upsample_nearest")
        kernel(f"aten::{_name}{_nd}d.vec")(_upsample(_mode))


@kernel("aten::_native_batch_norm_legit_no_training.default")
def _bn_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    out = _torch().native_batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps)[0]
    empty = input.new_empty((0,))
    return out, empty, empty.clone()


@kernel("aten::_native_batch_norm_legit.default")
def _bn_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return tuple(_torch().native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps))


# activations whose nn.functional form is a Python function with other arguments (inplace=...)
@kernel("aten::silu.default")
def _silu(self):
    return _F().silu(self)


@kernel("aten::silu_.default")
def _silu_(self):
    return _F().silu(self, inplace=True)


@kernel("aten::hardswish.default")
def _hardswish(self):
    return _F().hardswish(self)


@kernel("aten::hardsigmoid.default")
def _hardsigmoid(self):
    return _F().hardsigmoid(self)


@kernel("aten::mish.default")
def _mish(self):
    return _F().mish(self)


@kernel("aten::leaky_relu.default")
def _leaky_relu(self, negative_slope=0.01):
    return _F().leaky_relu(self, negative_slope)


@kernel("aten::hardtanh.default")
def _hardtanh(self, min_val=-1, max_val=1):
    return _F().hardtanh(self, min_val, max_val)


@kernel("aten::elu.default")
def _elu(self, alpha=1, scale=1, input_scale=1):
    if input_scale != 1:  # ELU(x) = scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))
        neg = alpha * _torch().expm1(self * input_scale)
        return scale * _torch().where(self > 0, self, neg)
    return scale * _F().elu(self, alpha) if scale != 1 else _F().elu(self, alpha)


@kernel("aten::softplus.default")
def _softplus(self, beta=1, threshold=20):
    return _F().softplus(self, beta, threshold)


@kernel("aten::log_sigmoid.default")
def _log_sigmoid(self):
    return _F().logsigmoid(self)


@kernel("aten::glu.default")
def _glu(self, dim=-1):
    return _F().glu(self, dim)


@kernel("aten::relu6.default")
def _relu6(self):
    return _F().relu6(self)


def _inplace_of(fn):
    def run(self, **kw):
        return self.copy_(fn(self, **kw))
    return run


kernel("aten::relu6_.default")(_inplace_of(_relu6))
kernel("aten::hardswish_.default")(_inplace_of(_hardswish))
kernel("aten::hardsigmoid_.default")(_inplace_of(_hardsigmoid))
kernel("aten::mish_.default")(_inplace_of(_mish))


@kernel("aten::gelu_.default")
def _gelu_(self, approximate="none"):
    return self.copy_(_F().gelu(self, approximate=approximate))


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # at::Reduction


def _loss(name):
    def run(self, target, reduction=1, **kw):
        return getattr(_F(), name)(self, target, **kw, reduction=_REDUCTIONS[reduction])
    return run


for _loss_name in ("l1_loss", "mse_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss",
                   "binary_cross_entropy", "multilabel_margin_loss"):
    kernel(f"aten::{_loss_name}.default")(_loss(_loss_name))


@kernel("aten::norm.Scalar", "aten::norm.ScalarOpt_dim", "aten::norm.ScalarOpt_dtype", "aten::norm.ScalarOpt_dim_dtype")
def _norm(self, p=2, dim=None, keepdim=False, dtype=None):
    return _torch().linalg.vector_norm(self, 2 if p is None else p, dim or None, keepdim, dtype=dtype)


@kernel("aten::sigmoid_backward.default")
def _sigmoid_backward(grad_output, output):
    return grad_output * (1 - output) * output


@kernel("aten::tanh_backward.default")
def _tanh_backward(grad_output, output):
    return grad_output * (1 - output * output)


@kernel("aten::zero.default")
def _zero(self):
    return _torch().zeros_like(self)


@kernel("aten::complex.default")
def _complex(real, imag):
    return _torch().complex(real, imag)


@kernel("aten::polar.default")
def _polar(abs, angle):
    return _torch().polar(abs, angle)


@kernel("aten::cdist.default")
def _cdist(x1, x2, p=2.0, compute_mode=None):
    mode = {None: "use_mm_for_euclid_dist_if_necessary", 0: "use_mm_for_euclid_dist_if_necessary",
            1: "use_mm_for_euclid_dist", 2: "donot_use_mm_for_euclid_dist"}[compute_mode]
    return _torch().cdist(x1, x2, p, mode)


for _nd in (1, 2, 3):
    kernel(f"aten::atleast_{_nd}d.default")(lambda self, _nd=_nd: getattr(_torch(), f"atleast_{_nd}d")(self))


@kernel("aten::result_type.Tensor")
def _result_type(tensor, other):
    return _torch().result_type(tensor, other)


@kernel("aten::mT.default")
def _mT(self):
    return self.mT


@kernel("aten::mH.default", "aten::adjoint.default")
def _mH(self):
    return self.mH


@kernel("aten::matrix_H.default")
def _matrix_H(self):
    return self.mH


@kernel("aten::numpy_T.default")
def _numpy_T(self):
    return self.permute(*range(self.dim() - 1, -1, -1))


@kernel("aten::is_leaf.default")
def _is_leaf(self):
    return self.is_leaf


@kernel("aten::output_nr.default")
def _output_nr(self):
    return self.output_nr


@kernel("aten::retains_grad.default")
def _retains_grad(self):
    return self.retains_grad


@kernel("aten::data.default")
def _data(self):
    return self.data


@kernel("aten::to.dtype_layout")
def _to_dtype_layout(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False,
                     memory_format=None):
    if layout is not None and str(layout) != "torch.strided":
        raise NotImplementedError("aten::to.dtype_layout: only the strided layout is implemented in mindtorch_v2")
    return self.to(device=device, dtype=dtype, non_blocking=non_blocking, copy=copy,
                   **({} if memory_format is None else {"memory_format": memory_format}))


@kernel("aten::to.device")
def _to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to_dtype_layout(self, dtype, None, device, None, non_blocking, copy, memory_format)


@kernel("aten::to.dtype")
def _to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to_dtype_layout(self, dtype, None, None, None, non_blocking, copy, memory_format)


@kernel("aten::to.other")
def _to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return _to_dtype_layout(self, other.dtype, None, other.device, None, non_blocking, copy, memory_format)


@kernel("prims::convert_element_type.default")
def _convert_element_type(a, dtype):
    return a.to(dtype)


# ---- torch.ops.higher_order ----

class HigherOrderOperator:
    """torch.ops.higher_order.<name>: an operator taking functions; eagerly it runs them."""

    def __init__(self, name, fn):
        self._name, self._fn = name, fn
        self.__name__ = name
        self.namespace = "higher_order"

    def name(self):
        return self._name

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __str__(self):
        return self._name


class HigherOrderNamespace:
    """torch.ops.higher_order: the higher-order operators mindtorch_v2 runs eagerly (cond)."""

    def __init__(self):
        from ._higher_order import cond
        self.name = "higher_order"
        self._ops = {"cond": HigherOrderOperator("cond", cond)}

    def __getattr__(self, name):
        if name.startswith("__") or name not in self.__dict__.get("_ops", {}):
            raise AttributeError(f"'_HigherOrderNamespace' 'torch.ops.higher_order' object has no attribute '{name}'")
        return self._ops[name]

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._ops))

    def __repr__(self):
        return "<module 'torch.ops.higher_order' from 'torch.ops'>"
