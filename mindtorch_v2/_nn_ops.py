"""NN ops at torch level (torch.softmax, torch.relu, torch.layer_norm, ...) and as Tensor
methods: one core call each (csrc/kernels/cpu/{softmax,norm,activation,...}.c).
torch.nn.functional builds on these."""

from . import _autocast as _ac
from ._C import ffi, lib
from ._dispatch import call, finish
from ._tensor import Tensor
from ._core import dtype_id, new_out, optional_handle

_NULL = ffi.NULL


def _check_tensor(fn, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")


# ---- softmax -------------------------------------------------------------------------------

def softmax(input, dim, dtype=None, *, _log=0):
    _check_tensor("log_softmax" if _log else "softmax", "input", 1, input)
    if isinstance(dim, bool) or not isinstance(dim, int):
        dim = int(dim)
    return call(lib.mt_softmax, input._h, dim, _log, dtype_id(dtype))


def log_softmax(input, dim, dtype=None):
    return softmax(input, dim, dtype, _log=1)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    r = call(lib.mt_softmax_backward, grad_output._h, output._h, dim, 0)
    return r if r.dtype is input_dtype else r.to(input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    r = call(lib.mt_softmax_backward, grad_output._h, output._h, dim, 1)
    return r if r.dtype is input_dtype else r.to(input_dtype)


# ---- layer_norm ----------------------------------------------------------------------------

def _int_list(fn, name, pos, v):
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    try:
        return [int(s) for s in v]
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, not "
                        f"{type(v).__name__}") from None


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    shape = _int_list("layer_norm", "normalized_shape", 2, normalized_shape)
    return call(lib.mt_layer_norm, input._h, len(shape), ffi.new("int64_t[]", shape or [0]), optional_handle(weight), optional_handle(bias),
                float(eps))


# ---- activations ---------------------------------------------------------------------------

def _act(act, x, a=0.0, b=0.0, c=0.0, inplace=False, fn="relu"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    res = new_out()
    st = lib.mt_activation(act, x._h, a, b, c, x._h if inplace else _NULL, res)
    return finish(st, res, x if inplace else None)


def relu(input):
    return _act(lib.MT_ACT_RELU, input)


def relu_(input):
    return _act(lib.MT_ACT_RELU, input, inplace=True, fn="relu_")


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input):
    return _act(lib.MT_ACT_ELU, input, _SELU_ALPHA, _SELU_SCALE, 1.0, fn="selu")


def selu_(input):
    return _act(lib.MT_ACT_ELU, input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace=True, fn="selu_")


def celu(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act(lib.MT_ACT_CELU, input, float(alpha), 1.0, 1.0 / alpha, fn="celu")


def celu_(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act(lib.MT_ACT_CELU, input, float(alpha), 1.0, 1.0 / alpha, inplace=True, fn="celu_")


def threshold(input, threshold, value):
    return _act(lib.MT_ACT_THRESHOLD, input, float(threshold), float(value), fn="threshold")


def threshold_(input, threshold, value):
    return _act(lib.MT_ACT_THRESHOLD, input, float(threshold), float(value), inplace=True, fn="threshold_")


def hardshrink(input, lambd=0.5):
    return _act(lib.MT_ACT_HARDSHRINK, input, float(lambd), fn="hardshrink")


# ---- embedding, dropout, linear ---------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if sparse and weight.requires_grad:
        from .sparse._grad import EmbeddingSparse
        return EmbeddingSparse.apply(weight, indices, int(padding_idx), bool(scale_grad_by_freq))
    return call(lib.mt_embedding, weight._h, indices._h, int(padding_idx), 1 if scale_grad_by_freq else 0)


def embedding_renorm_(input, indices, max_norm, norm_type):
    st = lib.mt_embedding_renorm_(input._h, indices._h, float(max_norm), float(norm_type))
    if st:
        from ._core import raise_status
        raise_status(st)
    return input


def _dropout(input, p, train, kind, inplace, fn, generator=None):
    _check_tensor(fn, "input", 1, input)
    if p == 0 or not train or input.numel() == 0:
        if not 0 <= p <= 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return input  # PyTorch hands back the input itself
    gh = _NULL if generator is None else generator._h
    res = new_out()
    st = lib.mt_dropout(input._h, float(p), 1 if train else 0, kind, 1 if inplace else 0, gh, res)
    return finish(st, res, input if inplace else None)


def dropout(input, p, train):
    return _dropout(input, p, train, 0, False, "dropout")


def dropout_(input, p, train):
    return _dropout(input, p, train, 0, True, "dropout_")


def feature_dropout(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_FEATURE, False, "feature_dropout")


def feature_dropout_(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_FEATURE, True, "feature_dropout_")


def alpha_dropout(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA, False, "alpha_dropout")


def alpha_dropout_(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA, True, "alpha_dropout_")


def feature_alpha_dropout(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA | lib.MT_DROPOUT_FEATURE, False, "feature_alpha_dropout")


def feature_alpha_dropout_(input, p, train):
    return _dropout(input, p, train, lib.MT_DROPOUT_ALPHA | lib.MT_DROPOUT_FEATURE, True, "feature_alpha_dropout_")


def linear(input, weight, bias=None):
    if _ac.ACTIVE[0]:
        input, weight, bias = _ac.lower(input, weight, bias)
    _check_tensor("linear", "input", 1, input)
    _check_tensor("linear", "weight", 2, weight)
    return call(lib.mt_linear, input._h, weight._h, optional_handle(bias))


# ---- bilinear forms and distances, composed as PyTorch composes them ----

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
    from ._linalg import matmul
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract in2 against x2 with a batched GEMM
    t = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = matmul(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_f,))


def _dist_rows(x, batch, m):
    """x broadcast to batch + its (rows, m) and flattened to (B, rows, m), as the distance kernels read it"""
    rows = x.shape[-2]
    n = 1
    for s in batch:
        n *= s
    return x.expand(tuple(batch) + (rows, m)).reshape(n, rows, m)


_DIST_FUNCTIONS = {}  # name -> its autograd Function, made on first use


def _dist_function(name):
    if not _DIST_FUNCTIONS:
        _DIST_FUNCTIONS.update(_make_dist_functions())
    return _DIST_FUNCTIONS[name]


def _once_differentiable(kernel, node, result, *inputs):
    """PyTorch's not_implemented derivative of a backward kernel: when the backward records (create_graph),
    its result hangs from a node whose own backward raises"""
    from .autograd.grad_mode import is_grad_enabled
    live = [t for t in inputs if t is not None and t.requires_grad]
    if not is_grad_enabled() or not live:
        return result
    return _dist_function(node).apply(result, kernel, *live)


def _make_dist_functions():
    from .autograd.function import Function

    def not_twice(node):
        class NotTwice(Function):
            _node_name = node

            @staticmethod
            def forward(ctx, result, kernel, *inputs):
                ctx.kernel = kernel
                return result.detach()

            @staticmethod
            def backward(ctx, *grads):
                raise NotImplementedError(f"the derivative for '{ctx.kernel}' is not implemented.")
        return NotTwice

    class Pdist(Function):
        # _pdist_forward's kernel; _pdist_backward's, which PyTorch does not differentiate
        _node_name = "PdistBackward0"

        @staticmethod
        def forward(ctx, x, p):
            out = call(lib.mt_pdist_forward, x._h, p)
            ctx.save_for_backward(x, out)
            ctx.p = p
            return out

        @staticmethod
        def backward(ctx, grad):
            x, out = ctx.saved_tensors
            g = call(lib.mt_pdist_backward, grad._h, x._h, ctx.p, out._h)
            return _once_differentiable("_pdist_backward", "PdistBackwardBackward0", g, grad, x, out), None

    class Cdist(Function):
        # _cdist_forward's kernel on (B, r, m) rows; x2's gradient is x1's kernel with the roles swapped
        _node_name = "CdistBackward0"

        @staticmethod
        def forward(ctx, x1, x2, p, batch):
            m = x1.shape[-1]
            a, b = _dist_rows(x1, batch, m), _dist_rows(x2, batch, m)
            out = call(lib.mt_cdist_forward, a._h, b._h, p).reshape(tuple(batch) + (a.shape[1], b.shape[1]))
            ctx.save_for_backward(x1, x2, out)
            ctx.p, ctx.batch = p, batch
            return out

        @staticmethod
        def backward(ctx, grad):
            x1, x2, out = ctx.saved_tensors
            batch, m = ctx.batch, x1.shape[-1]
            a, b = _dist_rows(x1, batch, m), _dist_rows(x2, batch, m)
            flat = (a.shape[0], a.shape[1], b.shape[1])
            g, d = grad.reshape(flat), out.reshape(flat)
            g1 = g2 = None
            if ctx.needs_input_grad[0]:
                g1 = call(lib.mt_cdist_backward, g._h, a._h, b._h, ctx.p, d._h)
                g1 = g1.reshape(tuple(batch) + tuple(x1.shape[-2:])).sum_to_size(x1.shape)
                g1 = _once_differentiable("_cdist_backward", "CdistBackwardBackward0", g1, grad, x1, x2, out)
            if ctx.needs_input_grad[1]:
                gt, dt = g.mT.contiguous(), d.mT.contiguous()
                g2 = call(lib.mt_cdist_backward, gt._h, b._h, a._h, ctx.p, dt._h)
                g2 = g2.reshape(tuple(batch) + tuple(x2.shape[-2:])).sum_to_size(x2.shape)
                g2 = _once_differentiable("_cdist_backward", "CdistBackwardBackward0", g2, grad, x1, x2, out)
            return g1, g2, None, None

    class EuclideanDist(Function):
        # PyTorch's _euclidean_dist: |a|^2 - 2 a.b + |b|^2 by one matmul, clamped at 0, square-rooted; its
        # backward from the result (0 where the distance is 0), composed of ops so it differentiates again
        _node_name = "EuclideanDistBackward0"

        @staticmethod
        def forward(ctx, a, b):
            from ._shape_ops import cat
            an, bn = a.pow(2).sum(-1, True), b.pow(2).sum(-1, True)
            one_a, one_b = an * 0 + 1, bn * 0 + 1
            out = cat([a * -2, an, one_a], -1).matmul(cat([b, one_b, bn], -1).mT).clamp_min(0).sqrt()
            ctx.save_for_backward(a, b, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            a, b, res = ctx.saved_tensors
            ratio = (grad / res).masked_fill(res == 0, 0)
            ga = gb = None
            if ctx.needs_input_grad[0]:
                ga = a * ratio.sum(-1, True) - ratio.matmul(b)
            if ctx.needs_input_grad[1]:
                gb = b * ratio.sum(-2, False).unsqueeze(-1) - ratio.mT.matmul(a)
            return ga, gb

    return {"pdist": Pdist, "cdist": Cdist, "euclidean": EuclideanDist,
            "PdistBackwardBackward0": not_twice("PdistBackwardBackward0"),
            "CdistBackwardBackward0": not_twice("CdistBackwardBackward0")}


def pdist(input, p=2):
    """the p-norm distances between the rows of input, for each pair i < j in order (PyTorch's
    _pdist_forward: one pass over each pair of rows, threaded over the pairs)"""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return _dist_function("pdist").apply(input, float(p))


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 and x2 (batched, broadcast batch dims); for p = 2 on
    more than 25 rows (or when asked) through a matrix product, as PyTorch's _euclidean_dist, else
    one pass over each pair of rows (_cdist_forward)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    from . import _dtype
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_dtype.scalar_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    from ._shape_ops import broadcast_shapes
    batch = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    r1, r2, m = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    mode = _CDIST_MODES[compute_mode]
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))) and x1.numel() and x2.numel():
        # (PyTorch views the result to the output shape: ViewBackward0 over EuclideanDistBackward0)
        if x1.dim() == 2 and x2.dim() == 2:
            return _dist_function("euclidean").apply(x1, x2).view(r1, r2)
        a, b = x1.expand(batch + (r1, m)), x2.expand(batch + (r2, m))
        return _dist_function("euclidean").apply(a, b).view(batch + (r1, r2))
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_name(x1.dtype)} but found "
                           f"{_dtype.scalar_name(x2.dtype)}")
    return _dist_function("cdist").apply(x1, x2, float(p), batch)


FUNCTIONS = {
    "bilinear": bilinear, "pdist": pdist, "cdist": cdist,
    "softmax": softmax, "log_softmax": log_softmax, "_softmax_backward_data": _softmax_backward_data,
    "_log_softmax_backward_data": _log_softmax_backward_data, "layer_norm": layer_norm,
    "relu": relu, "relu_": relu_, "selu": selu, "selu_": selu_, "celu": celu, "celu_": celu_,
    "threshold": threshold, "threshold_": threshold_, "hardshrink": hardshrink,
    "embedding": embedding, "embedding_renorm_": embedding_renorm_, "dropout": dropout, "dropout_": dropout_,
    "feature_dropout": feature_dropout, "feature_dropout_": feature_dropout_, "alpha_dropout": alpha_dropout,
    "alpha_dropout_": alpha_dropout_, "feature_alpha_dropout": feature_alpha_dropout,
    "feature_alpha_dropout_": feature_alpha_dropout_,
}

METHODS = {
    "softmax": softmax, "log_softmax": log_softmax, "relu": relu, "relu_": relu_, "hardshrink": hardshrink,
}
