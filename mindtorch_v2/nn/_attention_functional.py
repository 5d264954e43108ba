"""torch.nn.functional.scaled_dot_product_attention: one core call
(csrc/autograd/formulas_attention.c checks the arguments, picks PyTorch's CPU backend and runs the
fused kernel of csrc/kernels/cpu/attention.c or the math path). Python only parses arguments the
way PyTorch's argument parser does and passes the enabled backends (torch.nn.attention.sdpa_kernel,
torch.backends.cuda.enable_*_sdp)."""
from .. import _autocast as _ac
from .._C import ffi, lib
from .._dispatch import call
from .._tensor import Tensor
from ..backends import cuda as _cuda_backends

__all__ = ["scaled_dot_product_attention"]

_NAME = "scaled_dot_product_attention"


def _float_arg(name, v):
    if isinstance(v, Tensor) and v.dim() == 0 or hasattr(v, "__float__") and not isinstance(v, (str, bytes)):
        return float(v)
    raise TypeError(f"{_NAME}(): argument '{name}' must be float, not {type(v).__name__}")


def _bool_arg(name, v):
    if isinstance(v, bool) or (hasattr(v, "__index__") and v in (0, 1)):
        return bool(v)
    raise TypeError(f"{_NAME}(): argument '{name}' must be bool, not {type(v).__name__}")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False):
    if _ac.ACTIVE[0]:
        query, key, value = _ac.lower(query, key, value)
    for pos, (name, t) in enumerate((("query", query), ("key", key), ("value", value)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{_NAME}(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError(f"{_NAME}(): argument 'attn_mask' must be Tensor, not {type(attn_mask).__name__}")
    dropout_p = _float_arg("dropout_p", dropout_p)
    is_causal = _bool_arg("is_causal", is_causal)
    enable_gqa = _bool_arg("enable_gqa", enable_gqa)
    has_scale = scale is not None
    scale = _float_arg("scale", scale) if has_scale else 0.0
    sdp = _cuda_backends._sdp
    backends = (lib.MT_SDPA_MATH if sdp["math"] else 0) | (lib.MT_SDPA_FLASH if sdp["flash"] else 0)
    return call(lib.mt_scaled_dot_product_attention, query._h, key._h, value._h,
                ffi.NULL if attn_mask is None else attn_mask._h, dropout_p, int(is_causal), int(has_scale), scale,
                int(enable_gqa), backends, ffi.NULL)
