"""repr of sparse tensors in PyTorch's layout: the index and value tensors, then size, nnz, dtype, layout."""
from .. import _dtype
from .._repr import _gather
from .._tensor_str import _add_suffixes, _tensor_body, summarize_indices


def _part(prefix, t, indent):
    """'prefix=tensor(<data>)', the data laid out as PyTorch's _tensor_str at that column."""
    t = t.detach()
    shape = tuple(t.shape)
    values = [] if t.numel() == 0 else _gather(t, summarize_indices(shape))
    body = _tensor_body(values, shape, indent + len(prefix) + len("tensor("), t.dtype.is_floating_point,
                        t.dtype.is_complex)
    if t.numel() == 0:
        body += ", size=" + str(shape)
    return prefix + "tensor(" + body + ")"


def sparse_repr(t):
    prefix = "tensor("
    indent = len(prefix)
    if t.is_sparse:
        parts = [("indices=", t._indices())]
    else:
        parts = [("crow_indices=", t.crow_indices()), ("col_indices=", t.col_indices())]
    parts.append(("values=", t._sp_values))
    body = (",\n" + " " * indent).join(_part(p, v, indent) for p, v in parts)
    suffixes = ["size=" + str(tuple(t.shape)), "nnz=" + str(t._nnz())]
    if t.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool):  # PyTorch's defaults
        suffixes.append("dtype=" + str(t.dtype))
    suffixes.append("layout=" + str(t.layout))
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, force_newline=t.is_sparse)
