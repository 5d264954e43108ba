"""glu, one_hot, cosine_similarity, pairwise_distance, pixel_shuffle, pixel_unshuffle: PyTorch's
compositions (cosine_similarity, pairwise_distance) and short compositions of views and core ops
for the ones PyTorch runs as native kernels (pixel_shuffle: values and gradients as PyTorch's, grad_fn
names are those of the composing ops); glu is one GluBackward0 node whose backward is PyTorch's
glu_backward (a fused kernel for the second half)."""
from .. import _dtype
from .._shape_ops import broadcast_tensors
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad

__all__ = ["glu", "one_hot", "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "rrelu",
           "rrelu_"]


def _rrelu_noise(input, lower, upper):
    """PyTorch's rrelu_with_noise on CPU: every element <= 0, in order, draws a double
    uniform(lower, upper) (lower/upper first rounded to the compute type) from the default
    generator; the others get 1. A float64 uniform_ draws the same stream."""
    import mindtorch_v2 as mt
    x = input.detach().contiguous().reshape(-1)
    neg = x <= 0
    k = int(neg.sum().item())
    opmath = mt.float64 if input.dtype == mt.float64 else mt.float32
    lo, up = (mt.tensor([lower, upper], dtype=opmath).double().tolist())
    noise = mt.ones(x.shape, dtype=input.dtype)
    if k:
        noise[neg] = mt.empty(k, dtype=mt.float64).uniform_(lo, up).to(opmath).to(input.dtype)
    return noise.reshape(input.shape)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: a random slope per negative element in training, their mean in eval."""
    if not training or upper - lower <= 1e-6:
        from .functional import leaky_relu
        return leaky_relu(input, (lower + upper) / 2, inplace)
    noise = _rrelu_noise(input, lower, upper)
    import mindtorch_v2 as mt
    out = mt.where(input <= 0, input * noise, input)
    if inplace:
        return input.copy_(out)
    return out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.dim() if dim < 0 else dim
    if not 0 <= d < input.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {dim})")
    n = input.size(d)
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return _Glu.apply(input, d)


class _Glu(Function):
    """glu's node: PyTorch's glu_backward, sigmoid(b) * grad for the first half and its fused
    (1 - s) * s * a * grad for the second (three half-size passes and a cat, where the composition's
    backward took eight); under create_graph the same formula from differentiable ops."""
    _node_name = "GluBackward0"

    @staticmethod
    def forward(ctx, input, d):
        ctx.save_for_backward(input)
        ctx.d = d
        h = input.size(d) // 2
        a, b = input.narrow(d, 0, h), input.narrow(d, h, h)
        if input.dtype in (_dtype.float16, _dtype.bfloat16):  # PyTorch's kernel: in float, rounded once
            return (a.float() * b.float().sigmoid()).to(input.dtype)
        return a * b.sigmoid()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        d, h = ctx.d, x.size(ctx.d) // 2
        a, b = x.narrow(d, 0, h), x.narrow(d, h, h)
        from ..autograd.grad_mode import is_grad_enabled
        if is_grad_enabled():
            from .._shape_ops import cat
            s = b.sigmoid()
            return cat([s * grad, (1 - s) * s * a * grad], d), None
        from .._C import lib
        from .._creation import empty
        from .._dispatch import _ternary
        from .._generated_ops import sigmoid
        gi = empty(tuple(x.shape), dtype=x.dtype)  # PyTorch's order: sigmoid into the first half, the
        first, second = gi.narrow(d, 0, h), gi.narrow(d, h, h)  # second half from it, then first *= grad
        sigmoid(b, out=first)
        _ternary(lib.MT_OP_GLU_BACKWARD, first, a, grad, out=second)
        first.mul_(grad)
        return gi, None


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    if tensor.numel() and int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    from .._creation import arange
    return tensor.unsqueeze(-1).eq(arange(num_classes)).to(_dtype.int64)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    # PyTorch's composition (ATen's cosine_similarity): each input divided by its norm first (keeps the
    # result in [-1, 1]); the norms clamped to eps outside autograd
    from .._elementwise import result_type
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.scalar_name(common)}")
    x1 = x1 if x1.is_floating_point() else x1.to(common)
    x2 = x2 if x2.is_floating_point() else x2.to(common)
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    # PyTorch's composition: norm over the innermost dim of the broadcast difference
    inner = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, inner if inner >= 0 else None, keepdim)


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if r > (2 ** 63 - 1) // r:  # r * r past int64, as PyTorch checks it
        raise ValueError(f"upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor={r}")
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    batch = tuple(input.shape[:-3])
    n = len(batch)
    x = input.reshape(batch + (c // (r * r), r, r, h, w))
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(batch + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    batch = tuple(input.shape[:-3])
    n = len(batch)
    x = input.reshape(batch + (c, h // r, r, w // r, r))
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(batch + (c * r * r, h // r, w // r))
