"""torch.nn.functional: PyTorch's names and signatures over the C core's NN kernels.

Where PyTorch's own functional.py composes ops in Python (softsign, tanhshrink, the
dropout1d/2d/3d reshaping, the implicit softmax dim) this does the same; everything
else is one call into the core through mindtorch_v2._nn_ops."""
import math
import warnings

from .. import _autocast as _ac
from .. import _nn_ops as _ops
from .._C import lib as _lib
from .._dtype import scalar_name
from .._tensor import Tensor

# ---- softmax family --------------------------------------------------------------------------


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _ops.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _ops.softmax(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _ops.log_softmax(input, dim, dtype)


# ---- normalisation ---------------------------------------------------------------------------


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    return _ops.layer_norm(input, normalized_shape, weight, bias, eps)


# ---- activations -----------------------------------------------------------------------------

_act = _ops._act


def relu(input, inplace=False):
    return _ops.relu_(input) if inplace else _ops.relu(input)


relu_ = _ops.relu_


def relu6(input, inplace=False):
    return _act(_lib.MT_ACT_HARDTANH, input, 0.0, 6.0, inplace=inplace, fn="relu6")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act(_lib.MT_ACT_HARDTANH, input, float(min_val), float(max_val), inplace=inplace, fn="hardtanh")


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _act(_lib.MT_ACT_LEAKY_RELU, input, float(negative_slope), inplace=inplace, fn="leaky_relu")


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    return _act(_lib.MT_ACT_ELU, input, float(alpha), 1.0, 1.0, inplace=inplace, fn="elu")


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    return _ops.selu_(input) if inplace else _ops.selu(input)


selu_ = _ops.selu_


def celu(input, alpha=1.0, inplace=False):
    return _ops.celu_(input, alpha) if inplace else _ops.celu(input, alpha)


celu_ = _ops.celu_


def threshold(input, threshold, value, inplace=False):
    return _ops.threshold_(input, threshold, value) if inplace else _ops.threshold(input, threshold, value)


threshold_ = _ops.threshold_


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _act(_lib.MT_ACT_GELU if approximate == "none" else _lib.MT_ACT_GELU_TANH, input, fn="gelu")


def silu(input, inplace=False):
    return _act(_lib.MT_ACT_SILU, input, inplace=inplace, fn="silu")


def mish(input, inplace=False):
    return _act(_lib.MT_ACT_MISH, input, inplace=inplace, fn="mish")


def softplus(input, beta=1.0, threshold=20.0):
    return _act(_lib.MT_ACT_SOFTPLUS, input, float(beta), float(threshold), fn="softplus")


def hardsigmoid(input, inplace=False):
    return _act(_lib.MT_ACT_HARDSIGMOID, input, inplace=inplace, fn="hardsigmoid")


def hardswish(input, inplace=False):
    return _act(_lib.MT_ACT_HARDSWISH, input, inplace=inplace, fn="hardswish")


def softshrink(input, lambd=0.5):
    return _act(_lib.MT_ACT_SOFTSHRINK, input, float(lambd), fn="softshrink")


hardshrink = _ops.hardshrink


def logsigmoid(input):
    return _act(_lib.MT_ACT_LOGSIGMOID, input, fn="log_sigmoid")


def tanhshrink(input):
    return input - input.tanh()


def softsign(input):
    return input / (input.abs() + 1)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def prelu(input, weight):
    if _ac.ACTIVE[0]:
        input, weight = _ac.lower(input, weight)
    # composed (where over x > 0), values and gradients as PyTorch's kernel; its node is
    # WhereBackward0 where PyTorch records PreluKernelBackward0
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_name(input)} and {scalar_name(weight)}")
    channels = input.size(1) if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if weight.numel() > 1:
        weight = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    return input.where(input.gt(0), weight * input)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    # PyTorch's composition (torch/nn/functional.py)
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from .. import _elementwise
    return _elementwise.div(input, denom, out=out)


# ---- embedding ---------------------------------------------------------------------------------


def _padding_idx(padding_idx, num_embeddings, message):
    """padding_idx checked against the table size (PyTorch's assert and its words), negative wrapped"""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num_embeddings, message
        elif padding_idx < 0:
            assert padding_idx >= -num_embeddings, message
            padding_idx = num_embeddings + padding_idx
    return padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    padding_idx = _padding_idx(padding_idx, weight.size(0), "Padding_idx must be within num_embeddings")
    if padding_idx is None:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        from ..autograd.grad_mode import no_grad
        with no_grad():
            _ops.embedding_renorm_(weight, input, max_norm, norm_type)
    return _ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


# ---- dropout -----------------------------------------------------------------------------------


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _ops.dropout_(input, p, training) if inplace else _ops.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _ops.alpha_dropout_(input, p, training) if inplace else _ops.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return (_ops.feature_alpha_dropout_(input, p, training) if inplace
            else _ops.feature_alpha_dropout(input, p, training))


def _feature(input, p, training, inplace):
    return _ops.feature_dropout_(input, p, training) if inplace else _ops.feature_dropout(input, p, training)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
                           "spatial dimension, a channel dimension, and an optional batch dimension "
                           "(i.e. 2D or 3D inputs).")
    is_batched = inp_dim == 3
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature(input, p, training, inplace)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
                      "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if inp_dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
                      "is the channel dim. This behavior will change in a future release to interpret the "
                      "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
                      "channel-wise dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _feature(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout3d "
                      "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
                      "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    is_batched = inp_dim == 5
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature(input, p, training, inplace)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


# ---- linear ------------------------------------------------------------------------------------

linear = _ops.linear


# ---- helpers PyTorch's functional.py exposes --------------------------------------------------

from ..overrides import (handle_torch_function, has_torch_function, has_torch_function_unary,  # noqa: E402,F401
                         has_torch_function_variadic)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """torch._jit_internal.boolean_dispatch: one of two functions by a boolean argument (max_pool2d's
    return_indices)."""
    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = doc = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = doc = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


# ---- re-exports from sibling modules ----
from ._loss_functional import *  # noqa: E402,F401,F403  (losses)
from ._conv_functional import *  # noqa: E402,F401,F403  (spatial ops)
from ._mha_functional import (multi_head_attention_forward, _canonical_mask, _none_or_dtype,  # noqa: E402,F401
                              _in_projection, _in_projection_packed, _mha_shape_check)
from ._attention_functional import *  # noqa: E402,F401,F403  (scaled_dot_product_attention)
from ._norm_functional import *  # noqa: E402,F401,F403  (batch/group/instance/rms/local response norm)
from ._misc_functional import *  # noqa: E402,F401,F403  (glu, one_hot, distances, pixel shuffle)
from ._grid_functional import *  # noqa: E402,F401,F403  (affine_grid, grid_sample)
from ._embedding_bag import *  # noqa: E402,F401,F403
from ._extra_functional import *  # noqa: E402,F401,F403  (bilinear, pdist, unpooling, margin losses...)
from ._ctc import ctc_loss  # noqa: E402,F401
from ._fractional_pool import *  # noqa: E402,F401,F403
from ._linear_cross_entropy import linear_cross_entropy  # noqa: E402,F401
from ._grouped_mm import *  # noqa: E402,F401,F403  (grouped_mm, scaled_mm, scaled_grouped_mm)
from ._grouped_mm import _ScalingType, _SwizzleType  # noqa: E402,F401
from . import grad  # noqa: E402,F401  (torch.nn.functional.grad is torch.nn.grad)
