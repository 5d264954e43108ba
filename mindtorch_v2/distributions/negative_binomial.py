from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryParam, _torch, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryParam, Distribution):
    """NegativeBinomial(total_count, probs=None, logits=None): successes before total_count failures."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(self._init_param(probs, logits, total_count), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_param(NegativeBinomial, batch_shape, _instance, "total_count")

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        """A Poisson draw whose rate is a Gamma draw."""
        torch = _torch()
        with torch.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        torch = _torch()
        F = torch.nn.functional
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
