"""Tensor.__repr__: gather the values PyTorch would show, format them like PyTorch."""
from . import _dtype, _tensor_str


def tensor_repr(t, prefix="tensor("):
    shape = tuple(t.shape)
    dt = t.dtype
    is_meta = t.is_meta
    if is_meta or t.numel() == 0:
        values = []
    else:
        keep = _tensor_str.summarize_indices(shape)
        values = _gather(t, keep)
    return _tensor_str.format_tensor(
        values=values, shape=shape, dtype_name=dt._name, is_floating=dt.is_floating_point,
        is_bool=dt is _dtype.bool, default_dtype_name=_dtype.get_default_dtype()._name,
        device=None if t.device.type == "cpu" else str(t.device),
        requires_grad=t.requires_grad, grad_fn_name=type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        is_meta=is_meta, prefix=prefix)


def _gather(t, keep):
    """t restricted to the kept indices of each dim, as nested lists."""
    from ._creation import tensor
    for d, idx in enumerate(keep):
        if len(idx) != t.shape[d]:
            sel = (slice(None),) * d + (tensor(idx, dtype=_dtype.int64),)
            t = t[sel]
    return t.tolist()
