"""The legacy tensor type objects (torch.FloatTensor, torch.LongTensor, ...; torch.sparse.FloatTensor, ...):
PyTorch's torch.tensortype instances. isinstance(t, torch.LongTensor) checks a CPU tensor's dtype and
layout; calling a dense one makes an uninitialized tensor from sizes, or one from data, calling a sparse
one a COO tensor (sparse/_legacy.py; torch/csrc/tensor/python_tensor.cpp)."""
import numbers

from . import _dtype
from ._methods import _LEGACY_NAMES
from ._tensor import Tensor


class tensortype(type):
    """The metaclass: each legacy type object is an instance."""

    def __instancecheck__(cls, inst):
        return (isinstance(inst, Tensor) and inst.dtype == cls.dtype and inst.layout is cls.layout
                and inst.device.type == "cpu")

    @property
    def layout(cls):
        import mindtorch_v2 as torch  # (a property: the layouts are defined after this module is imported)
        return torch.sparse_coo if cls.is_sparse else torch.strided

    def __call__(cls, *args, **kwargs):
        if cls.is_sparse:
            from .sparse._legacy import construct
            return construct(cls, args, kwargs)
        return cls._dense(*args, **kwargs)

    def _dense(cls, *args, device=None):
        from . import _creation
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device} was passed")
        if not args:
            return _creation.empty(0, dtype=cls.dtype, device="cpu")
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype != cls.dtype:
                raise TypeError(f"expected {cls.__name__} (got {type_name(args[0])})")
            return args[0].detach()  # PyTorch: an alias of the tensor
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return _creation.empty(*args, dtype=cls.dtype, device="cpu")
        if len(args) == 1 and isinstance(args[0], tuple) and type(args[0]).__name__ == "Size":
            return _creation.empty(args[0], dtype=cls.dtype, device="cpu")
        if len(args) == 1 and not isinstance(args[0], (str, bytes)):
            return _creation.tensor(args[0], dtype=cls.dtype, device="cpu")
        raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def type_name(t):
    return "torch." + _LEGACY_NAMES[t.dtype._name]


def _make(dtype_name, type_name_, sparse=False):
    return tensortype(type_name_, (), {"dtype": getattr(_dtype, dtype_name), "is_cuda": False, "is_sparse": sparse,
                                       "__module__": "torch.sparse" if sparse else "torch"})


TYPES = {name: _make(dt, name) for dt, name in _LEGACY_NAMES.items()}
# torch.sparse has the real and integer ones (no bool or complex)
SPARSE_TYPES = {name: _make(dt, name, sparse=True) for dt, name in _LEGACY_NAMES.items()
                if dt not in ("bool", "complex64", "complex128")}
