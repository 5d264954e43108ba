"""LinearCrossEntropyOptions: the settings of F.linear_cross_entropy's chunked path, which runs the
batch in row chunks so the (N, C) logits are never whole in memory."""
import dataclasses
from typing import Optional

from ... import _dtype

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = ("auto", "accurate", "balanced", "compact")
# what "auto" resolves to for (device type, input dtype); other pairs take _FALLBACK
_AUTO = {("cpu", _dtype.bfloat16): ("accurate", "aspect_ratio"), ("cpu", _dtype.float16): ("accurate", "aspect_ratio"),
         ("cuda", _dtype.bfloat16): ("compact", "aspect_ratio:2"), ("cuda", _dtype.float16): ("compact", "aspect_ratio:2")}
_FALLBACK = ("compact", "aspect_ratio:2")
_ACC_DTYPES = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


def _ceil_div(a, b):
    return -(-a // b)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Chunking of F.linear_cross_entropy: batch_chunk_size rows at a time, or a size picked by
    chunking_method ("aspect_ratio[:N]": a chunk's logits about as large as the input, N times smaller);
    acc_policy and acc_dtype set the precision of the accumulation; allow_retain_graph keeps the
    precomputed gradients for a second backward."""

    allow_retain_graph: bool = False
    batch_chunk_size: Optional[int] = None
    chunking_method: Optional[str] = "auto"
    acc_policy: str = "auto"
    acc_dtype: Optional[_dtype.dtype] = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method not in (None, "auto"):
            name, colon, factor = self.chunking_method.partition(":")
            factor = factor if colon else "1"
            if name != "aspect_ratio" or not factor.isdigit() or int(factor) <= 0:
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if size is not None and not (isinstance(size, int) and size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 accumulation for half-precision input on CPU; None (the input dtype) otherwise."""
        if device is not None and device.type == "cpu" and dtype in (_dtype.float16, _dtype.bfloat16):
            return _dtype.float32
        return None

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None):
        method = str(method if method is not None else self.chunking_method)
        if not method.startswith("aspect_ratio"):
            raise AssertionError(f"unhandled chunking_method: {method!r}")
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        # the power of two at or above num_batches / ceil(C / in_features), divided by the factor
        target = _ceil_div(num_batches, _ceil_div(num_classes, in_features))
        return min((1 << (target - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options with "auto" and None resolved for one call (shapes, dtype, device)."""
        policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # an explicit size wins over the automatic one
        if "auto" in (policy, method):
            auto = _AUTO.get((device.type, dtype), _FALLBACK) if device is not None else _FALLBACK
            policy = auto[0] if policy == "auto" else policy
            method = auto[1] if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                                 f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc = self.acc_dtype
        if acc is None:
            acc = (self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None) or dtype
        return dataclasses.replace(self, acc_policy=policy, chunking_method=method, batch_chunk_size=max(1, size),
                                   acc_dtype=acc)
