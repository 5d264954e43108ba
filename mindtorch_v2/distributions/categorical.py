from . import constraints
from .distribution import Distribution
from .utils import _torch, broadcast_shape, lazy_property, logits_to_probs, logsumexp, probs_to_logits


class Categorical(Distribution):
    """Categorical(probs=None, logits=None): K categories over the last dim."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        torch = _torch()
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logsumexp(logits, -1)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else torch.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        torch = _torch()
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = torch.Size(batch_shape)
        param_shape = batch_shape + torch.Size((self._num_events,))
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        torch = _torch()
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        torch = _torch()
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=()):
        torch = _torch()
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        n = 1
        for s in sample_shape:
            n *= s
        samples_2d = torch.multinomial(probs_2d, n, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        # log_pmf.gather(-1, value) written as a one-hot selection (gather is not in the op library yet)
        torch = _torch()
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        hit = value == torch.arange(self._num_events, device=value.device)
        shape = broadcast_shape(hit.shape, self.logits.shape)
        picked = torch.where(hit.expand(shape), self.logits.expand(shape), torch.zeros((), dtype=self.logits.dtype))
        return picked.sum(-1)

    def entropy(self):
        torch = _torch()
        min_real = torch.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        torch = _torch()
        values = torch.arange(self._num_events, dtype=torch.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class _OverCategorical:
    """A distribution over a Categorical's K outcomes (kept as _categorical; event shape (K,)): Multinomial,
    OneHotCategorical, ExpRelaxedCategorical share its parameters and its expand."""

    def _init_categorical(self, probs, logits, validate_args):
        self._categorical = Categorical(probs, logits)
        Distribution.__init__(self, self._categorical.batch_shape, self._categorical.param_shape[-1:],
                              validate_args=validate_args)

    def _expand_categorical(self, cls, batch_shape, _instance):
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _torch().Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape
