"""Calling a legacy sparse type (torch.sparse.FloatTensor(...)): PyTorch's deprecated COO constructor.
Its four forms, each warning once: (), (*sizes) or (Size), (indices, values) and (indices, values, size);
only device= (cpu) as a keyword. The values keep their own dtype; the type's dtype is used only when
there are no values. Like PyTorch's, it does not check the indices against the size."""
import numbers

_FORMS = ("(*, torch.device device = None)", "(Tensor indices, Tensor values, *, torch.device device = None)",
          "(Tensor indices, Tensor values, tuple of ints size, *, torch.device device = None)",
          "(tuple of ints size, *, torch.device device = None)")


def _deprecated(form, advice):
    from .._runtime import warn_once
    warn_once(f"torch.sparse.SparseTensor({form}) is deprecated.  Please use torch.sparse_coo_tensor({advice}).")


def _no_match(args):
    got = ", ".join(type(a).__name__ if not _is_tensor(a) else "Tensor" for a in args)
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + "".join(f" * {f}\n" for f in _FORMS))


def _is_tensor(a):
    from .._tensor import Tensor
    return isinstance(a, Tensor)


def _is_int(a):
    return isinstance(a, numbers.Integral) and not isinstance(a, bool)


def _check_device(device):
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device} was passed")


def _empty(cls, size):
    import mindtorch_v2 as torch
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    from . import _tensor
    return _tensor._coo(torch.zeros(len(size), 0, dtype=torch.int64), torch.zeros(0, dtype=cls.dtype),
                        tuple(size), True)


def construct(cls, args, kwargs):
    import mindtorch_v2 as torch
    from .._size import Size
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    for name in ("indices", "values", "size"):  # the tensor forms' arguments by keyword
        if name in kwargs:
            args = args + (kwargs.pop(name),)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) > 3 and _is_tensor(args[0]):
        raise TypeError(f"new() takes 3 positional arguments but {len(args)} were given")
    if not args:
        _deprecated("", "(0,), dtype=")
        _check_device(device)
        return _empty(cls, (0,))
    if _is_tensor(args[0]):
        if len(args) == 1 or not _is_tensor(args[1]):
            raise _no_match(args)
        indices, values = args[0], args[1]
        if len(args) == 3:
            if not isinstance(args[2], (tuple, list)) or not all(_is_int(n) for n in args[2]):
                raise _no_match(args)
            _deprecated("indices, values, shape, *, device=", "indices, values, shape, dtype=, device=")
        else:
            _deprecated("indices, values, *, device=", "indices, values, dtype=, device=")
        _check_device(device)
        if indices.dtype != torch.int64:
            raise RuntimeError("indices must be an int64 tensor")
        return torch.sparse_coo_tensor(indices, values, args[2] if len(args) == 3 else None, check_invariants=False)
    if len(args) == 1 and isinstance(args[0], (tuple, list)) and not isinstance(args[0], Size):
        raise TypeError("torch.sparse.SparseTensor(sequence) only accepts sizes.  Please use torch.sparse_coo_tensor() "
                        "or construct a strided tensor and convert it to sparse via to_sparse.")
    size = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
    if not _is_int(size[0]):
        raise _no_match(args)
    for pos, n in enumerate(size, 1):
        if not _is_int(n):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                            f"\"type must be tuple of ints,but got {type(n).__name__}\"")
    _deprecated("shape, *, device=", "shape, dtype=, device=")
    _check_device(device)
    return _empty(cls, size)
