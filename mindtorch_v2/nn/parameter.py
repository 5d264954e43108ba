"""torch.nn.parameter: Parameter, Buffer and the uninitialized (lazy) variants."""

from .._tensor import Tensor
from ..overrides import _disabled_torch_function_impl

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]


def _empty0(device=None, dtype=None):
    from .._creation import empty
    return empty(0, device=device, dtype=dtype)


class _ParameterMeta(type):
    # isinstance(t, Parameter) is also True for tensor-subclass instances flagged _is_param
    def __instancecheck__(self, instance):
        if self is Parameter and isinstance(instance, Tensor) and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that a Module registers as a parameter when assigned as an attribute."""
    __torch_function__ = _disabled_torch_function_impl  # results of ops on parameters are plain Tensors

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty0()
        if type(data) is Tensor or type(data) is Parameter:
            return Tensor._make_subclass(cls, data, requires_grad)
        # custom tensor subclasses stay their type, flagged as parameters
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(
                f"Creating a Parameter from an instance of type {type(data).__name__} "
                "requires that detach() returns an instance of the same type, but return "
                f"type {type(t).__name__} was found instead. To use the type as a "
                "Parameter, please correct the detach() semantics defined by "
                "its __torch_dispatch__() implementation.")
        t._is_param = True
        return t

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    # pickling: Tensor.__reduce_ex__ (_tensor_serial.py) writes torch._utils._rebuild_parameter


class UninitializedTensorMixin:
    """Shape-less placeholder of the lazy modules until materialize(shape)."""
    __torch_function__ = _disabled_torch_function_impl

    def materialize(self, shape, device=None, dtype=None):
        from .._creation import empty
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def size(self, dim=None):
        return self.data.size(dim)

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether param is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (LazyLinear's weight before its first forward)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor._make_subclass(cls, _empty0(device, dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class _BufferMeta(type):
    def __instancecheck__(self, instance):
        if self is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that a Module registers as a buffer when assigned as an attribute."""
    __torch_function__ = _disabled_torch_function_impl  # never instantiated: Buffer(t) returns a flagged Tensor

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty0()
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        ret = Tensor._make_subclass(cls, _empty0(device, dtype), requires_grad)
        ret.persistent = persistent
        ret._is_buffer = True
        return ret
