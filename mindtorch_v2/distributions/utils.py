"""Helpers shared by the distributions (PyTorch's torch.distributions.utils)."""
import functools
import numbers

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060


def _torch():
    import mindtorch_v2
    return mindtorch_v2


def _op(path):
    """A torch function by dotted name, or NotImplementedError naming it while the op library lacks it."""
    obj = _torch()
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise NotImplementedError(f"torch.{path} is not implemented yet (needed by torch.distributions)")
    return obj


def broadcast_shape(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if d != 1:
                if out[i] != 1 and out[i] != d:
                    raise RuntimeError(f"shape mismatch: objects cannot be broadcast to a single shape.  Mismatch "
                                       f"is between arg 0 and arg {shapes.index(s)}.")
                out[i] = d
    return _torch().Size(out)


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape; numbers become tensors of the tensors' dtype."""
    torch = _torch()
    if not all(isinstance(v, (torch.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, torch.Tensor)), None)
        dtype = like.dtype if like is not None else torch.get_default_dtype()
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype) for v in values]
    shape = broadcast_shape(*(v.shape for v in values))
    return tuple(v.expand(shape) for v in values)


def _standard_normal(shape, dtype, device):
    return _torch().empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logsumexp(x, dim):
    """log(sum(exp(x))) over dim, kept; stable (subtracts the finite max, as PyTorch does)."""
    torch = _torch()
    m = x.amax(dim, keepdim=True)
    m = torch.where(m.isinf(), torch.zeros_like(m), m)
    return (x - m).exp().sum(dim, keepdim=True).log() + m


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return logits.sigmoid()
    return (logits - logsumexp(logits, -1)).exp()


def clamp_probs(probs):
    eps = _torch().finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed on first access and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with _torch().enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    torch = _torch()
    arange = torch.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal `diag`) of the last two dims, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """tril_matrix_to_vec's inverse: D x D matrices, zero above diagonal `diag`."""
    # the positive root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > _torch().finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _batch_shape_of(value, *originals):
    """Size() when every original parameter was a Python number, else the broadcast value's shape."""
    return _torch().Size() if all(isinstance(o, numbers.Number) for o in originals) else value.size()


class _BinaryParam:
    """The probs <-> logits pair of a binary event that Bernoulli, Binomial, NegativeBinomial,
    ContinuousBernoulli and (Logit)RelaxedBernoulli keep: one given, the other computed on first use."""

    def _init_param(self, probs, logits, total_count=None):
        """Stores probs or logits (exactly one given), broadcast with total_count (cast to its dtype) when given;
        returns the batch shape (Size() for a Python number)."""
        torch = _torch()
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        if total_count is None:
            (param,) = broadcast_all(value)
        else:
            total_count, param = broadcast_all(total_count, value)
            self.total_count = total_count.type_as(param)
        setattr(self, name, param)
        self._param = param
        return torch.Size() if total_count is None and isinstance(value, numbers.Number) else param.size()

    def _expand_param(self, cls, batch_shape, _instance, *names):
        new = self._expand_params(cls, batch_shape, _instance, *names, "probs", "logits")
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
