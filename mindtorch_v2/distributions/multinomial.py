import math

from . import constraints
from .binomial import Binomial
from .categorical import _OverCategorical
from .distribution import Distribution
from .utils import _torch, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_OverCategorical, Distribution):
    """Multinomial(total_count=1, probs=None, logits=None): counts of total_count Categorical draws."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._init_categorical(probs, logits, validate_args)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_categorical(Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        torch = _torch()
        sample_shape = torch.Size(sample_shape)
        samples = self._categorical.sample(torch.Size((self.total_count,)) + sample_shape)
        samples = samples.permute(*range(1, samples.dim()), 0)  # the draws dimension last
        counts = samples.new_zeros(self._extended_shape(sample_shape))
        counts.scatter_add_(-1, samples, torch.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        torch = _torch()
        n = torch.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - torch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = torch.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * torch.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        torch = _torch()
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = torch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = torch.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
