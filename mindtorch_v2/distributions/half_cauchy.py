import math

from .cauchy import Cauchy
from .half_normal import _Half
from .transforms import AbsTransform
from .utils import _torch

__all__ = ["HalfCauchy"]


class HalfCauchy(_Half):
    """HalfCauchy(scale): |Cauchy(0, scale)|."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return _torch().full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
