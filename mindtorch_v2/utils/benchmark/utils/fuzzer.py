"""Fuzzer: random benchmark inputs (parameters, then tensors shaped by them) from a seeded numpy
RandomState, drawn in PyTorch 2.13's order so that a seed gives PyTorch's parameters and tensors."""
import functools
import itertools

import mindtorch_v2 as torch

__all__ = ["Fuzzer", "FuzzedParameter", "ParameterAlias", "FuzzedTensor"]

_DISTRIBUTIONS = ("loguniform", "uniform")


class FuzzedParameter:
    """A named parameter drawn from [minval, maxval] ("uniform": integers if both bounds are ints;
    "loguniform": integers, uniform in log2) or from a {value: probability} dict. A strict parameter keeps
    its value across the rejected candidates of one draw."""

    def __init__(self, name, minval=None, maxval=None, distribution=None, strict=False):
        self._name, self._minval, self._maxval = name, minval, maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self):
        return self._name

    def sample(self, state):
        kind = self._distribution
        if isinstance(kind, dict):
            return self._custom_distribution(state)
        return self._loguniform(state) if kind == "loguniform" else self._uniform(state)

    def _check_distribution(self, distribution):
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
            return distribution
        if any(p < 0 for p in distribution.values()):
            raise AssertionError("Probabilities cannot be negative")
        # PyTorch 2.13's check is inverted: it rejects a normalized distribution and accepts the others
        if abs(sum(distribution.values()) - 1) <= 1e-5:
            raise AssertionError("Distribution is not normalized")
        if self._minval is not None:
            raise AssertionError("When passing a custom distribution, 'minval' must be None")
        if self._maxval is not None:
            raise AssertionError("When passing a custom distribution, 'maxval' must be None")
        return distribution

    def _loguniform(self, state):
        import numpy as np
        lo = None if self._minval is None else np.log2(self._minval)
        hi = None if self._maxval is None else np.log2(self._maxval)
        value = int(2 ** state.uniform(low=lo, high=hi))
        if self._minval is not None and value < self._minval:
            return self._minval
        if self._maxval is not None and value > self._maxval:
            return self._maxval
        return value

    def _uniform(self, state):
        lo, hi = self._minval, self._maxval
        if isinstance(lo, int) and isinstance(hi, int):
            return int(state.randint(low=lo, high=hi + 1))  # both ends included
        return state.uniform(low=lo, high=hi)

    def _custom_distribution(self, state):
        import numpy as np
        values = list(self._distribution)
        return values[state.choice(np.arange(len(values)), p=tuple(self._distribution.values()))]


class ParameterAlias:
    """A parameter value that is another parameter's (by name), resolved after sampling."""

    def __init__(self, alias_to):
        self.alias_to = alias_to

    def __repr__(self):
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def dtype_size(dtype):
    if dtype == torch.bool:
        return 1
    info = torch.finfo(dtype) if dtype.is_floating_point or dtype.is_complex else torch.iinfo(dtype)
    return int(info.bits / 8)


def prod(values, base=1):
    return functools.reduce(lambda acc, v: int(acc) * int(v), values, base)


class FuzzedTensor:
    """A tensor whose sizes and steps (strides in elements of a larger allocation) name parameters or are
    ints; with probability 1 - probability_contiguous its memory is laid out in a random dimension order.
    Parameter sets giving too few/many elements or bytes are rejected."""

    def __init__(self, name, size, steps=None, probability_contiguous=0.5, min_elements=None, max_elements=None,
                 max_allocation_bytes=None, dim_parameter=None, roll_parameter=None, dtype=torch.float32,
                 cuda=False, tensor_constructor=None):
        self._name, self._size, self._steps, self._dtype, self._cuda = name, size, steps, dtype, cuda
        self._probability_contiguous = probability_contiguous
        self._min_elements, self._max_elements = min_elements, max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._tensor_constructor = tensor_constructor  # None: default_tensor_constructor

    @property
    def name(self):
        return self._name

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        if not (dtype.is_floating_point or dtype.is_complex):
            return torch.randint(1, 127, size=size, dtype=dtype, device="cpu")  # integers in [1, 127)
        return torch.rand(size=size, dtype=dtype, device="cpu")

    def _make_tensor(self, params, state):
        import numpy as np
        size, steps, allocation_size = self._get_size_and_steps(params)
        make = self._tensor_constructor or self.default_tensor_constructor
        raw = make(size=allocation_size, dtype=self._dtype, **params)
        if self._cuda:
            raw = raw.cuda()
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            while dim > 1 and np.all(order == np.arange(dim)):  # redraw the identity permutation
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(order)).contiguous().permute(tuple(np.argsort(order)))
        tensor = raw[tuple(slice(0, n * step, step) for n, step in zip(size, steps))]
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self._dtype)}
        return tensor, properties

    def _get_size_and_steps(self, params):
        dim = len(self._size) if self._dim_parameter is None else params[self._dim_parameter]

        def resolve(values):
            values = tuple(params.get(v, v) for v in values)[:dim]
            return values + (1,) * (dim - len(values))

        size, steps = resolve(self._size), resolve(self._steps or ())
        return size, steps, tuple(n * s for n, s in zip(size, steps))

    def satisfies_constraints(self, params):
        size, _, allocation_size = self._get_size_and_steps(params)
        numel = prod(size)
        if numel < 0:
            raise AssertionError("Computed number of elements is negative")
        nbytes = prod(allocation_size, base=dtype_size(self._dtype))

        def above(value, limit):
            return value is not None and limit is not None and value > limit
        return not (above(numel, self._max_elements) or above(self._min_elements, numel)
                    or above(nbytes, self._max_allocation_bytes))


class Fuzzer:
    """take(n) yields n (tensors, tensor_properties, params) triples: params satisfy every constraint
    (up to 1000 candidates per draw) and every tensor's limits. Each take() restarts from the seed and
    seeds torch's generator from it, so tensor values repeat too."""

    def __init__(self, parameters, tensors, constraints=None, seed=None):
        import numpy as np
        # without a seed, one from a fresh (OS-entropy) RandomState
        self._seed = seed if seed is not None else \
            int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._parameters, self._tensors = self._unpack(parameters, FuzzedParameter), self._unpack(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {overlap}")
        self._rejections = self._total_generated = 0

    @staticmethod
    def _unpack(values, cls):
        return tuple(itertools.chain.from_iterable([v] if isinstance(v, cls) else v for v in values))

    def take(self, n):
        import numpy as np
        rs = np.random.RandomState(self._seed)
        torch.manual_seed(rs.randint(low=0, high=2 ** 63, dtype=np.int64))  # tensor values follow the seed too
        for _ in range(n):
            params = self._generate(rs)
            made = {t.name: t._make_tensor(params, rs) for t in self._tensors}
            yield {k: v[0] for k, v in made.items()}, {k: v[1] for k, v in made.items()}, params

    @property
    def rejection_rate(self):
        return self._rejections / self._total_generated if self._total_generated else 0.

    def _generate(self, state):
        strict = {}
        for _ in range(1000):
            candidate = {}
            for p in self._parameters:
                if p.strict and p.name in strict:
                    candidate[p.name] = strict[p.name]
                else:
                    candidate[p.name] = p.sample(state)
                    if p.strict:
                        strict[p.name] = candidate[p.name]
            candidate = self._resolve_aliases(candidate)
            self._total_generated += 1
            if all(f(candidate) for f in self._constraints) and \
                    all(t.satisfies_constraints(candidate) for t in self._tensors):
                return candidate
            self._rejections += 1
        raise ValueError("Failed to generate a set of valid parameters.")

    @staticmethod
    def _resolve_aliases(params):
        params = dict(params)

        def pending():
            return sum(isinstance(v, ParameterAlias) for v in params.values())
        left = pending()
        while left:
            for k in list(params):
                if isinstance(params[k], ParameterAlias):
                    params[k] = params[params[k].alias_to]
            now = pending()
            if now == left:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            left = now
        return params
