import math
import numbers

from . import constraints
from .distribution import Distribution
from .utils import _batch_shape_of, _torch, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration); concentration 0 is the exponential limit."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(_batch_shape_of(self.loc, loc, scale, concentration), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration")

    def _safe_concentration(self, zero_like=None):
        """(concentration == 0 up to isclose, the concentration with those entries set to 1)."""
        torch = _torch()
        c = self.concentration
        eq_zero = torch.isclose(c, torch.tensor(0.0) if zero_like is None else torch.zeros_like(c))
        return eq_zero, torch.where(eq_zero, torch.ones_like(c), c)

    def rsample(self, sample_shape=()):
        u = _torch().rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        torch = _torch()
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, numbers.Real) else self.scale.log()
        return -log_scale - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        torch = _torch()
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        torch = _torch()
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return _torch().exp(self.log_cdf(value))

    def icdf(self, value):
        torch = _torch()
        eq_zero, safe_conc = self._safe_concentration(zero_like=True)
        logu = torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * torch.expm1(-safe_conc * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        torch = _torch()
        valid = self.concentration < 1
        safe_conc = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        torch = _torch()
        valid = self.concentration < 0.5
        safe_conc = torch.where(valid, self.concentration, 0.25)
        return torch.where(valid, self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), math.nan)

    def entropy(self):
        torch = _torch()
        return torch.broadcast_to(torch.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        torch = _torch()
        upper = torch.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)
