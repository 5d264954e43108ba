"""linear and bilinear as PyTorch composes them (aten/src/ATen/native/Linear.cpp), over the core's GEMM.

Private to the modules: nn.functional (another owner) will provide F.linear / F.bilinear, and then
Linear/Bilinear should call those instead.
"""
from ... import _linalg


def linear(input, weight, bias=None):
    dim = input.dim()
    if dim == 2 and bias is not None:
        return _linalg.addmm(bias, input, weight.t())  # the fused op, as PyTorch
    if bias is not None and dim == 3 and input.is_contiguous():
        # PyTorch's _flatten_nd_linear: fold the leading dims so the bias is added by addmm
        n, k = input.shape[0] * input.shape[1], input.shape[2]
        out = _linalg.addmm(bias, input.reshape(n, k), weight.t())
        return out.view(input.shape[0], input.shape[1], out.shape[1])
    out = _linalg.matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o], as two GEMM-backed products."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract in2 against x2 with a batched GEMM
    t = _linalg.matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = _linalg.matmul(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_f,))
