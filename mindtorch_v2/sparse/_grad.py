"""Sparse gradients of dense leaves (nn.Embedding(sparse=True)).

The core's .grad slot holds dense tensors; a sparse gradient is kept in the leaf's Python state (the handle
the core carries for the leaf's hooks), so every wrapper of the leaf sees it, and Tensor.grad answers it
when the core's slot is empty."""
import mindtorch_v2 as torch
from ..autograd.function import Function
from ..autograd.graph import _tensor_state


def set_sparse_grad(leaf, g):
    if g.shape != leaf.shape:
        raise RuntimeError("assigned grad has data of a different size")
    if g.dtype is not leaf.dtype:
        raise RuntimeError("assigned grad has data of a different type")
    torch.Tensor.grad.fset(leaf, None)
    _tensor_state(leaf).sparse_grad = g


def accumulate(leaf, g):
    """leaf.grad += g (g sparse): PyTorch's AccumulateGrad, which keeps a first sparse gradient as it is."""
    old = leaf.grad
    if old is None:
        set_sparse_grad(leaf, g)
    elif old.layout is torch.strided:
        old.add_(g)
    else:
        set_sparse_grad(leaf, old + g)


class EmbeddingSparse(Function):
    """embedding(weight, indices) whose weight gradient is the COO tensor of the looked-up rows."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.weight, ctx.indices = weight, indices
        ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq
        return torch.embedding(weight, indices, padding_idx, scale_grad_by_freq)

    @staticmethod
    def backward(ctx, grad):
        from ._tensor import _coo
        weight, flat = ctx.weight, ctx.indices.reshape(-1)
        rows = grad.reshape(flat.shape[0], *weight.shape[1:])
        if ctx.scale:
            counts = torch.bincount(flat, minlength=weight.shape[0])
            rows = rows / counts[flat].to(rows.dtype).view((-1,) + (1,) * (rows.dim() - 1))
        if ctx.padding_idx >= 0:
            keep = flat != ctx.padding_idx
            flat, rows = flat[keep], rows[keep]
        accumulate(weight, _coo(flat.unsqueeze(0), rows, weight.shape))
        return None, None, None, None
