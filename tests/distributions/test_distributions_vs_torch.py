"""torch.distributions against live PyTorch: the same seed gives the same samples bit for bit; log_prob,
entropy, cdf, icdf, mean, variance, mode agree to rounding; rsample gradients agree; argument validation
raises PyTorch's exception type and text."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


_LEAVES = []  # the tensors _t made with requires_grad, in order


def _t(L, x, dtype="float64", grad=False):
    t = L.tensor(x, dtype=getattr(L, dtype), requires_grad=grad)
    if grad:
        _LEAVES.append(t)
    return t


def _leaves(ctor, L):
    _LEAVES.clear()
    d = ctor(L, True)
    return d, list(_LEAVES)


# name -> (constructor(L, grad), a value in the support for log_prob/cdf, a probability for icdf)
CASES = {
    "Uniform": (lambda L, g: L.distributions.Uniform(_t(L, [0.5, -1.0], grad=g), _t(L, [2.0, 3.0], grad=g)),
                [1.0, 0.0]),
    "Exponential": (lambda L, g: L.distributions.Exponential(_t(L, [0.5, 2.0, 7.0], grad=g)), [0.3, 1.0, 4.0]),
    "Gamma": (lambda L, g: L.distributions.Gamma(_t(L, [0.3, 1.0, 2.5, 12.0], grad=g), _t(L, [1.0, 2.0, 0.5, 3.0], grad=g)),
              [0.2, 1.0, 3.0, 4.0]),
    "Gamma32": (lambda L, g: L.distributions.Gamma(_t(L, [0.3, 1.0, 2.5, 12.0], "float32", g), _t(L, [1.0, 2.0, 0.5, 3.0], "float32", g)),
                [0.2, 1.0, 3.0, 4.0]),
    "Chi2": (lambda L, g: L.distributions.Chi2(_t(L, [1.0, 3.0, 10.0], grad=g)), [0.5, 2.0, 9.0]),
    "Beta": (lambda L, g: L.distributions.Beta(_t(L, [0.5, 2.0, 9.0], grad=g), _t(L, [0.7, 3.0, 8.0], grad=g)), [0.3, 0.5, 0.9]),
    "Beta32": (lambda L, g: L.distributions.Beta(_t(L, [0.5, 2.0, 9.0], "float32", g), _t(L, [0.7, 3.0, 8.0], "float32", g)), [0.3, 0.5, 0.9]),
    "Dirichlet": (lambda L, g: L.distributions.Dirichlet(_t(L, [[0.5, 2.0, 3.0], [7.0, 8.0, 0.2]], "float32", g)),
                  [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "Poisson": (lambda L, g: L.distributions.Poisson(_t(L, [0.5, 3.0, 25.0], grad=g)), [0.0, 2.0, 20.0]),
    "Binomial": (lambda L, g: L.distributions.Binomial(_t(L, [10.0, 50.0, 100.0]), _t(L, [0.2, 0.5, 0.9], grad=g)), [3.0, 20.0, 88.0]),
    "BinomialLogits": (lambda L, g: L.distributions.Binomial(20, logits=_t(L, [-1.0, 0.5], grad=g)), [3.0, 12.0]),
    "Bernoulli": (lambda L, g: L.distributions.Bernoulli(_t(L, [0.1, 0.5, 0.8], grad=g)), [0.0, 1.0, 1.0]),
    "BernoulliLogits": (lambda L, g: L.distributions.Bernoulli(logits=_t(L, [-2.0, 0.3], grad=g)), [1.0, 0.0]),
    "Geometric": (lambda L, g: L.distributions.Geometric(_t(L, [0.1, 0.5, 0.9], grad=g)), [0.0, 2.0, 7.0]),
    "Laplace": (lambda L, g: L.distributions.Laplace(_t(L, [0.0, 1.0], grad=g), _t(L, [1.0, 3.0], grad=g)), [0.5, -2.0]),
    "Cauchy": (lambda L, g: L.distributions.Cauchy(_t(L, [0.0, 1.0], grad=g), _t(L, [1.0, 3.0], grad=g)), [0.5, -2.0]),
    "LogNormal": (lambda L, g: L.distributions.LogNormal(_t(L, [0.0, 1.0], grad=g), _t(L, [0.5, 2.0], grad=g)), [0.5, 3.0]),
    "HalfNormal": (lambda L, g: L.distributions.HalfNormal(_t(L, [0.5, 2.0], grad=g)), [0.5, 3.0]),
    "HalfCauchy": (lambda L, g: L.distributions.HalfCauchy(_t(L, [0.5, 2.0], grad=g)), [0.5, 3.0]),
    "Gumbel": (lambda L, g: L.distributions.Gumbel(_t(L, [0.0, 1.0], grad=g), _t(L, [0.5, 2.0], grad=g)), [0.5, -1.0]),
    "Weibull": (lambda L, g: L.distributions.Weibull(_t(L, [1.0, 2.0], grad=g), _t(L, [0.5, 3.0], grad=g)), [0.5, 3.0]),
    "Pareto": (lambda L, g: L.distributions.Pareto(_t(L, [1.0, 2.0], grad=g), _t(L, [0.5, 3.0], grad=g)), [1.5, 3.0]),
    "StudentT": (lambda L, g: L.distributions.StudentT(_t(L, [0.8, 1.5, 3.0, 30.0], grad=g), _t(L, [0.0, 1.0, -1.0, 2.0], grad=g),
                                                       _t(L, [1.0, 0.5, 2.0, 3.0], grad=g)), [0.5, -2.0, 1.0, 4.0]),
    "FisherSnedecor": (lambda L, g: L.distributions.FisherSnedecor(_t(L, [1.0, 3.0, 9.0], grad=g), _t(L, [2.0, 5.0, 12.0], grad=g)),
                       [0.5, 1.0, 3.0]),
    "InverseGamma": (lambda L, g: L.distributions.InverseGamma(_t(L, [0.5, 1.5, 3.0], grad=g), _t(L, [1.0, 2.0, 0.5], grad=g)),
                     [0.2, 1.0, 3.0]),
    "Kumaraswamy": (lambda L, g: L.distributions.Kumaraswamy(_t(L, [0.5, 2.0, 5.0], grad=g), _t(L, [0.7, 3.0, 1.5], grad=g)),
                    [0.3, 0.5, 0.9]),
    # float32: PyTorch's log_prob compares the concentration with torch.tensor(0.0), which raises for float64
    "GeneralizedPareto32": (lambda L, g: L.distributions.GeneralizedPareto(
        _t(L, [0.0, 1.0, -1.0], "float32", g), _t(L, [1.0, 2.0, 0.5], "float32", g), _t(L, [0.3, 0.0, -0.2], "float32", g)),
        [0.5, 2.0, -0.5]),
    "VonMises": (lambda L, g: L.distributions.VonMises(_t(L, [0.0, 1.0, -2.0, 3.0], grad=g), _t(L, [0.5, 2.0, 5.0, 50.0], grad=g)),
                 [0.5, -2.0, 1.0, 3.0]),
    "VonMises32": (lambda L, g: L.distributions.VonMises(_t(L, [0.0, 1.0, -2.0], "float32", g), _t(L, [1e-6, 2.0, 5.0], "float32", g)),
                   [0.5, -2.0, 1.0]),
    "NegativeBinomial": (lambda L, g: L.distributions.NegativeBinomial(_t(L, [1.0, 5.0, 20.0]), _t(L, [0.2, 0.5, 0.9], grad=g)),
                         [0.0, 3.0, 150.0]),
    "NegativeBinomialLogits": (lambda L, g: L.distributions.NegativeBinomial(3.0, logits=_t(L, [-1.0, 0.5], grad=g)), [2.0, 0.0]),
    "ContinuousBernoulli": (lambda L, g: L.distributions.ContinuousBernoulli(_t(L, [0.1, 0.4995, 0.5, 0.8], grad=g)),
                            [0.2, 0.5, 0.0, 0.9]),
    "ContinuousBernoulliLogits": (lambda L, g: L.distributions.ContinuousBernoulli(logits=_t(L, [-2.0, 0.001, 3.0], grad=g)),
                                  [0.2, 0.5, 0.9]),
    "Multinomial": (lambda L, g: L.distributions.Multinomial(7, _t(L, [[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]], grad=g)),
                    [[2.0, 2.0, 3.0], [3.0, 4.0, 0.0]]),
    "OneHotCategorical": (lambda L, g: L.distributions.OneHotCategorical(_t(L, [[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]], grad=g)),
                          [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    "OneHotCategoricalStraightThrough": (lambda L, g: L.distributions.OneHotCategoricalStraightThrough(
        logits=_t(L, [[0.2, -0.3, 1.5], [0.6, 0.4, 0.0]], grad=g)), [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    "RelaxedBernoulli": (lambda L, g: L.distributions.RelaxedBernoulli(_t(L, 0.7, grad=g), _t(L, [0.1, 0.5, 0.8], grad=g)),
                         [0.3, 0.5, 0.9]),
    "RelaxedOneHotCategorical": (lambda L, g: L.distributions.RelaxedOneHotCategorical(
        _t(L, 0.5, grad=g), logits=_t(L, [[0.2, -0.3, 1.5], [0.6, 0.4, 0.0]], grad=g)), [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "LogisticNormal": (lambda L, g: L.distributions.LogisticNormal(_t(L, [0.0, 1.0], grad=g), _t(L, [0.5, 2.0], grad=g)),
                       [0.2, 0.3, 0.5]),
    "LowRankMultivariateNormal": (lambda L, g: L.distributions.LowRankMultivariateNormal(
        _t(L, [[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]], grad=g), _t(L, [[1.0, 0.5], [0.2, -0.3], [0.7, 1.1]], grad=g),
        _t(L, [0.5, 1.0, 2.0], grad=g)), [[0.5, 0.2, -1.0], [1.0, 1.0, 1.0]]),
    "MixtureSameFamily": (lambda L, g: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(_t(L, [[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]], grad=g)),
        L.distributions.Normal(_t(L, [[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]], grad=g), _t(L, [0.5, 1.0, 2.0], grad=g))), [0.5, -2.0]),
    "MixtureSameFamilyMVN": (lambda L, g: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(logits=_t(L, [0.2, 0.3], grad=g)),
        L.distributions.Independent(L.distributions.Normal(_t(L, [[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]], grad=g),
                                                           _t(L, [0.5, 1.0, 2.0], grad=g)), 1)), [0.5, -2.0, 0.1]),
    "LKJCholesky": (lambda L, g: L.distributions.LKJCholesky(3, _t(L, [0.5, 2.0], grad=g)),
                    [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]),
    "Wishart": (lambda L, g: L.distributions.Wishart(_t(L, [4.0, 6.5], grad=g), _t(L, [[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]], grad=g)),
                [[1.5, 0.2, 0.0], [0.2, 1.0, 0.1], [0.0, 0.1, 2.0]]),
    "WishartTril": (lambda L, g: L.distributions.Wishart(_t(L, 5.0, grad=g), scale_tril=_t(L, [[1.0, 0.0], [0.5, 2.0]], grad=g)),
                    [[1.5, 0.2], [0.2, 1.0]]),
}
PROBS = [0.1, 0.7]
# samples made by a transcendental op after the draws (log1p, exp, tan...): ours agree with PyTorch's SLEEF
# kernels to the last place or two, not bit for bit; and samples made by a matrix product or a norm after the
# draws (LowRankMultivariateNormal, Wishart, LKJCholesky): our reductions sum in another order than PyTorch's BLAS
# kernels. The draws themselves are the same (each test ends by comparing one more rand).
INEXACT = {"Laplace", "LogNormal", "Gumbel", "Weibull", "Pareto", "GeneralizedPareto32", "ContinuousBernoulli",
           "ContinuousBernoulliLogits", "RelaxedBernoulli", "RelaxedOneHotCategorical", "LowRankMultivariateNormal",
           "LKJCholesky", "Wishart", "WishartTril"}


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _same_bits(a, b):
    a, b = np.ascontiguousarray(_np(a)), np.ascontiguousarray(_np(b))
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), (a, b)


def _check_sample(name, a, b):
    if name in INEXACT:  # a transcendental op of ours rounds differently in the last place
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6 if a.dtype == mt.float32 else 1e-14)
    else:
        _same_bits(a, b)


def _both(fn):
    """fn(L) in both libraries: (values, None) or (None, (exception type name, text))."""
    out = []
    for L in (mt, torch):
        try:
            out.append((fn(L), None))
        except Exception as e:  # noqa: BLE001
            out.append((None, (type(e).__name__, str(e))))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_samples_bit_identical(name):
    ctor, _ = CASES[name]
    draws = []
    for L in (mt, torch):
        L.manual_seed(1234)
        d = ctor(L, False)
        s = [d.sample(), d.sample((2, 3))]
        if d.has_rsample:
            s.append(d.rsample((4,)))
        s.append(L.rand(2))  # the generator advanced by the same number of draws
        draws.append(s)
    for a, b in zip(*draws):
        _check_sample(name, a, b)


@pytest.mark.parametrize("name", list(CASES))
def test_statistics(name):
    ctor, value = CASES[name]
    dt = "float32" if name.endswith("32") or name == "Dirichlet" else "float64"
    tol = dict(rtol=1e-5, atol=1e-6) if dt == "float32" else dict(rtol=1e-10, atol=1e-12)
    stats = {"log_prob": lambda L, d: d.log_prob(_t(L, value, dt)), "cdf": lambda L, d: d.cdf(_t(L, value, dt)),
             "icdf": lambda L, d: d.icdf(_t(L, PROBS if d.batch_shape[-1:] == (2,) else value, dt).clamp(0, 1)),
             "entropy": lambda L, d: d.entropy(), "mean": lambda L, d: d.mean, "variance": lambda L, d: d.variance,
             "mode": lambda L, d: d.mode, "stddev": lambda L, d: d.stddev}
    for stat, fn in stats.items():
        (a, ea), (b, eb) = _both(lambda L: fn(L, ctor(L, False)))
        if eb is not None:
            assert ea is not None and ea[0] == eb[0], (stat, ea, eb)
            continue
        assert ea is None, (stat, ea)
        np.testing.assert_allclose(_np(a), _np(b), equal_nan=True, err_msg=stat, **tol)


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][0](mt, False).has_rsample])
def test_rsample_gradients(name):
    # Wishart's rsample writes into the mask its redraw indexed with (PyTorch's code), so both libraries' backward
    # raise the in-place modification error
    def run(L):
        L.manual_seed(7)
        d, params = _leaves(CASES[name][0], L)
        x = d.rsample((5,))
        (x * L.arange(1, x.shape[-1] + 1, dtype=x.dtype)).sum().backward()
        return [_np(p.grad) for p in params] + [_np(x)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (a, ea), (b, eb) = _both(run)
    assert ea == eb
    for x, y in zip(a or [], b or []):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", [n for n in CASES if not n.endswith("Logits")])
def test_log_prob_gradients(name):
    ctor, value = CASES[name]
    grads = []
    for L in (mt, torch):
        d, leaves = _leaves(ctor, L)
        dt = "float32" if name.endswith("32") or name == "Dirichlet" else "float64"
        d.log_prob(_t(L, value, dt)).sum().backward()
        grads.append([_np(p.grad) for p in leaves if p.grad is not None])
    assert len(grads[0]) == len(grads[1])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda L: L.distributions.Gamma(_t(L, [-1.0, 1.0]), 1.0),
    lambda L: L.distributions.Exponential(_t(L, [0.0])),
    lambda L: L.distributions.Uniform(_t(L, [2.0]), _t(L, [1.0])),
    lambda L: L.distributions.Beta(_t(L, [1.0]), _t(L, [-1.0])),
    lambda L: L.distributions.Dirichlet(_t(L, 1.0)),
    lambda L: L.distributions.Bernoulli(_t(L, [1.5])),
    lambda L: L.distributions.Bernoulli(),
    lambda L: L.distributions.Geometric(_t(L, [0.0])),
    lambda L: L.distributions.Poisson(_t(L, [-1.0])),
    lambda L: L.distributions.Binomial(_t(L, [2.5]), _t(L, [0.5])),
    lambda L: L.distributions.Gamma(_t(L, [1.0]), 1.0).log_prob(_t(L, [-1.0])),
    lambda L: L.distributions.Poisson(_t(L, [1.0])).log_prob(_t(L, [0.5])),
    lambda L: L.distributions.Bernoulli(_t(L, [0.5])).log_prob(_t(L, [[0.5, 1.0, 1.0]])),
    lambda L: L.distributions.StudentT(_t(L, [-1.0])),
    lambda L: L.distributions.FisherSnedecor(_t(L, [1.0]), _t(L, [0.0])),
    lambda L: L.distributions.InverseGamma(_t(L, [1.0]), _t(L, [-2.0])),
    lambda L: L.distributions.Kumaraswamy(_t(L, [1.0]), _t(L, [2.0])).log_prob(_t(L, [1.5])),
    lambda L: L.distributions.VonMises(_t(L, [0.0]), _t(L, [-1.0])),
    lambda L: L.distributions.GeneralizedPareto(_t(L, [0.0]), _t(L, [-1.0]), _t(L, [0.5])),
    lambda L: L.distributions.NegativeBinomial(_t(L, [-1.0]), _t(L, [0.5])),
    lambda L: L.distributions.NegativeBinomial(_t(L, [1.0]), _t(L, [1.0])),
    lambda L: L.distributions.NegativeBinomial(_t(L, [1.0])),
    lambda L: L.distributions.Multinomial(_t(L, 3.0), _t(L, [0.5, 0.5])),
    lambda L: L.distributions.Multinomial(3, _t(L, [-0.5, 1.5])),
    lambda L: L.distributions.Multinomial(3, _t(L, [0.5, 0.5])).log_prob(_t(L, [2.0, 2.0])),
    lambda L: L.distributions.OneHotCategorical(_t(L, [0.5, 0.5])).log_prob(_t(L, [1.0, 1.0])),
    lambda L: L.distributions.RelaxedBernoulli(_t(L, 0.5)),
    lambda L: L.distributions.RelaxedOneHotCategorical(_t(L, 0.5), logits=_t(L, 0.7)),
    lambda L: L.distributions.ContinuousBernoulli(_t(L, [1.5]), validate_args=True),
    lambda L: L.distributions.ContinuousBernoulli(_t(L, [0.5]), _t(L, [0.0])),
    lambda L: L.distributions.LogisticNormal(_t(L, [0.0]), _t(L, [0.0])),
    lambda L: L.distributions.LowRankMultivariateNormal(_t(L, 0.0), _t(L, [[1.0]]), _t(L, [1.0])),
    lambda L: L.distributions.LowRankMultivariateNormal(_t(L, [0.0, 1.0]), _t(L, [1.0, 2.0]), _t(L, [1.0, 1.0])),
    lambda L: L.distributions.LowRankMultivariateNormal(_t(L, [0.0, 1.0]), _t(L, [[1.0, 2.0, 3.0]]), _t(L, [1.0, 1.0])),
    lambda L: L.distributions.LowRankMultivariateNormal(_t(L, [0.0, 1.0]), _t(L, [[1.0], [2.0]]), _t(L, [1.0, 1.0, 1.0])),
    lambda L: L.distributions.LowRankMultivariateNormal(_t(L, [[0.0, 1.0]] * 3), _t(L, [[[1.0], [2.0]]] * 2), _t(L, [1.0, 1.0])),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Normal(0.0, 1.0), L.distributions.Normal(0.0, 1.0)),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(_t(L, [0.5, 0.5])), 3),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(_t(L, [0.5, 0.5])),
                                                L.distributions.Normal(_t(L, [0.0, 1.0, 2.0]), 1.0)),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(_t(L, [[0.5, 0.5]] * 3)),
                                                L.distributions.Normal(_t(L, [[0.0, 1.0]] * 2), 1.0)),
    lambda L: L.distributions.LKJCholesky(1, 1.0),
    lambda L: L.distributions.LKJCholesky(3, _t(L, [0.0])),
    lambda L: L.distributions.LKJCholesky(2, 1.0).log_prob(_t(L, [[1.0, 0.0], [0.5, 0.5]])),
    lambda L: L.distributions.Wishart(_t(L, [1.0]), L.eye(3, dtype=L.float64)),
    lambda L: L.distributions.Wishart(5.0, L.eye(3, dtype=L.float64), scale_tril=L.eye(3, dtype=L.float64)),
    lambda L: L.distributions.Wishart(5.0),
    lambda L: L.distributions.Wishart(5.0, _t(L, [1.0, 2.0])),
    lambda L: L.distributions.Wishart(5.0, _t(L, [[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.distributions.Wishart(5.0, L.eye(2, dtype=L.float64)).log_prob(_t(L, [[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.distributions.CatTransform([L.distributions.ExpTransform()] * 2, 0, [1, 2])(L.ones(2)),
    lambda L: L.distributions.CatTransform([L.distributions.ExpTransform()] * 2, 0, [1])(L.ones(2)),
    lambda L: L.distributions.CatTransform([L.distributions.ExpTransform()] * 2, 3)(L.ones(2)),
    lambda L: L.distributions.StackTransform([L.distributions.ExpTransform()] * 2, 0)(L.ones(3)),
    lambda L: L.distributions.StackTransform([L.distributions.ExpTransform()] * 2, 0).log_abs_det_jacobian(L.ones(2, 2), L.ones(3)),
    lambda L: L.distributions.CorrCholeskyTransform().forward_shape((4,)),
    lambda L: L.distributions.CorrCholeskyTransform().inverse_shape((2, 3)),
    lambda L: L.distributions.utils.vec_to_tril_matrix(L.ones(4)),
    lambda L: L.distributions.utils.tril_matrix_to_vec(L.ones(3, 3), diag=3),
    lambda L: L.distributions.constraints.cat([L.distributions.constraints.real], 0, [1, 2]),
    lambda L: L.distributions.constraints.stack([L.distributions.constraints.real], 2).check(L.ones(2)),
    lambda L: L.distributions.constraints.MixtureSameFamilyConstraint(3),
])
def test_validation_errors(make):
    (_, ea), (_, eb) = _both(make)
    assert eb is not None and ea == eb


@pytest.mark.parametrize("name", list(CASES))
def test_expand(name):
    ctor, value = CASES[name]
    out = []
    for L in (mt, torch):
        L.manual_seed(3)
        d = ctor(L, False)
        e = d.expand((2,) + tuple(d.batch_shape))
        out.append((tuple(e.batch_shape), tuple(e.event_shape), e.sample()))
    assert out[0][:2] == out[1][:2]
    _check_sample(name, out[0][2], out[1][2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_samplers_bit_identical(dtype):
    def run(L):
        dt = getattr(L, dtype)
        alpha = L.linspace(0.01, 20, 600, dtype=dt)
        res = [L._standard_gamma(alpha), L._sample_dirichlet(alpha[:60].reshape(6, 10) if dtype == "float32" else alpha[:6].reshape(3, 2)),
               L.poisson(L.linspace(0, 40, 300, dtype=dt))]
        for p in (0.05, 0.4, 0.6, 0.97):
            res.append(L.binomial(L.linspace(0, 200, 300, dtype=dt), L.full((300,), p, dtype=dt)))
        res.append(L._standard_gamma_grad(L.linspace(0.1, 30, 500, dtype=dt), L.linspace(0.01, 40, 500, dtype=dt).flip(0)))
        a = L.linspace(0.1, 12, 400, dtype=dt).reshape(100, 4)
        x = L.linspace(0.001, 0.999, 400, dtype=dt).reshape(100, 4)
        res.append(L._dirichlet_grad(x, a, a.sum(-1, True).expand(100, 4)))
        res.append(L.rand(2))
        return res
    torch.manual_seed(5)
    mt.manual_seed(5)
    for a, b in zip(run(mt), run(torch)):
        _same_bits(a, b)


def test_sampler_errors():
    for fn in (lambda L: L._standard_gamma(L.ones(2, dtype=L.half)), lambda L: L.poisson(-L.ones(2)),
               lambda L: L.poisson(L.ones(2, dtype=L.int64)), lambda L: L.binomial(L.ones(2), L.ones(2, dtype=L.float64)),
               lambda L: L._sample_dirichlet(L.ones(2, dtype=L.bfloat16)),
               lambda L: L._standard_gamma_grad(L.ones(3), L.ones(3, dtype=L.half))):
        (_, ea), (_, eb) = _both(fn)
        assert eb is not None and ea == eb
    a = mt.ones(3, requires_grad=True)
    assert type(mt._standard_gamma(a).grad_fn).__name__ == "StandardGammaBackward0"


# one or two members of each family, batch shape (2,), for KL(p || q) over every registered pair
_KL_MEMBERS = {
    "Bernoulli": lambda L, D, a, b: [D.Bernoulli(a / 3), D.Bernoulli(b / 3)],
    "Beta": lambda L, D, a, b: [D.Beta(a, b), D.Beta(b, a)],
    "Binomial": lambda L, D, a, b: [D.Binomial(_t(L, [5.0, 8.0]), a / 3), D.Binomial(_t(L, [5.0, 3.0]), b / 3)],
    "Categorical": lambda L, D, a, b: [D.Categorical(L.stack([a, b], -1)), D.Categorical(L.stack([b, a], -1))],
    "Cauchy": lambda L, D, a, b: [D.Cauchy(a, b), D.Cauchy(b, a)],
    "ContinuousBernoulli": lambda L, D, a, b: [D.ContinuousBernoulli(a / 3), D.ContinuousBernoulli(b / 3)],
    "Dirichlet": lambda L, D, a, b: [D.Dirichlet(L.stack([a, b], -1)), D.Dirichlet(L.stack([b, a], -1))],
    "Exponential": lambda L, D, a, b: [D.Exponential(a), D.Exponential(b)],
    "Gamma": lambda L, D, a, b: [D.Gamma(a, b), D.Gamma(b, a)],
    "Geometric": lambda L, D, a, b: [D.Geometric(a / 3), D.Geometric(b / 3)],
    "Gumbel": lambda L, D, a, b: [D.Gumbel(a, b), D.Gumbel(b, a)],
    "HalfNormal": lambda L, D, a, b: [D.HalfNormal(a), D.HalfNormal(b)],
    "Independent": lambda L, D, a, b: [D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(b, a), 1)],
    "Laplace": lambda L, D, a, b: [D.Laplace(a, b), D.Laplace(b, a)],
    "LogNormal": lambda L, D, a, b: [D.LogNormal(a, b), D.LogNormal(b, a)],
    "LowRankMultivariateNormal": lambda L, D, a, b: [
        D.LowRankMultivariateNormal(L.stack([a, b, a], -1), _t(L, [[1.0, 0.5], [0.2, -0.3], [0.7, 1.1]]), _t(L, [0.5, 1.0, 2.0])),
        D.LowRankMultivariateNormal(L.stack([b, a, b], -1), _t(L, [[0.3], [1.2], [-0.4]]), _t(L, [1.5, 0.4, 0.9]))],
    "MultivariateNormal": lambda L, D, a, b: [
        D.MultivariateNormal(L.stack([a, b, a], -1), _t(L, [[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]])),
        D.MultivariateNormal(L.stack([b, a, b], -1), scale_tril=_t(L, [[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.1, 0.7]]))],
    "Normal": lambda L, D, a, b: [D.Normal(a, b), D.Normal(b, a)],
    "OneHotCategorical": lambda L, D, a, b: [D.OneHotCategorical(L.stack([a, b], -1)), D.OneHotCategorical(L.stack([b, a], -1))],
    "Pareto": lambda L, D, a, b: [D.Pareto(a, b * 2), D.Pareto(b, a * 3), D.Pareto(a / 4, b + 2)],
    "Poisson": lambda L, D, a, b: [D.Poisson(a), D.Poisson(b)],
    "Uniform": lambda L, D, a, b: [D.Uniform(a - 1, a), D.Uniform(a - 2, a + 1), D.Uniform(a / 4, b / 2)],
}


def _kl_cases():
    from torch.distributions.kl import _KL_REGISTRY
    names = sorted({(p.__name__, q.__name__) for p, q in _KL_REGISTRY})
    fam = {"ExponentialFamily": ["Beta", "ContinuousBernoulli", "Gamma", "Dirichlet", "Exponential", "Poisson"],
           "TransformedDistribution": ["LogNormal"]}
    cases = []
    for p, q in names:
        for pp, qq in ([(f, f) for f in fam[p]] if p == q and p in fam else [(p, q)]):
            cases.append((pp, qq))
    return cases


def test_kl_registry_complete():
    from torch.distributions.kl import _KL_REGISTRY
    ours = {(p.__name__, q.__name__) for p, q in mt.distributions.kl._KL_REGISTRY}
    assert ours == {(p.__name__, q.__name__) for p, q in _KL_REGISTRY}


@pytest.mark.parametrize("pq", _kl_cases(), ids="-".join)
def test_kl_divergence(pq):
    def run(L):
        D = L.distributions
        a, b = _t(L, [0.5, 2.0]), _t(L, [1.5, 0.7])
        ps, qs = _KL_MEMBERS[pq[0]](L, D, a, b), _KL_MEMBERS[pq[1]](L, D, a, b)
        return [_np(D.kl_divergence(p, q)) for p in ps for q in qs]
    (a, ea), (b, eb) = _both(run)
    assert ea == eb
    for x, y in zip(a or [], b or []):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


def test_kl_errors():
    for make in (lambda L: L.distributions.kl_divergence(L.distributions.Geometric(0.5), L.distributions.Gamma(1.0, 1.0)),
                 lambda L: L.distributions.kl_divergence(L.distributions.Gamma(_t(L, [1.0]), 1.0),
                                                         L.distributions.Dirichlet(_t(L, [1.0, 2.0]))),
                 lambda L: L.distributions.kl_divergence(*_KL_MEMBERS["MultivariateNormal"](L, L.distributions, _t(L, [1.0]), _t(L, [2.0]))[:1],
                                                         L.distributions.MultivariateNormal(L.zeros(2, dtype=L.float64), L.eye(2, dtype=L.float64))),
                 lambda L: L.distributions.kl_divergence(L.distributions.Binomial(2, _t(L, [0.5])),
                                                         L.distributions.Binomial(5, _t(L, [0.5])))):
        (_, ea), (_, eb) = _both(make)
        assert eb is not None and ea == eb


@pytest.mark.parametrize("make", [
    lambda L: L.distributions.constraints.positive, lambda L: L.distributions.constraints.interval(-1.0, 2.0),
    lambda L: L.distributions.constraints.unit_interval, lambda L: L.distributions.constraints.greater_than(1.5),
    lambda L: L.distributions.constraints.less_than(-1.0), lambda L: L.distributions.constraints.simplex,
    lambda L: L.distributions.constraints.real, lambda L: L.distributions.constraints.independent(L.distributions.constraints.positive, 1),
])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_constraint_registry(make, registry):
    out = []
    for L in (mt, torch):
        t = getattr(L.distributions, registry)(make(L))
        x = _t(L, [[0.3, -1.2, 2.0], [0.0, 0.5, -0.5]])
        y = t(x)
        out.append((_np(y), _np(t.inv(y)), _np(t.log_abs_det_jacobian(x, y)) if t.bijective or registry == "biject_to" else 0))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda L: L.distributions.constraints.corr_cholesky,
    lambda L: L.distributions.constraints.cat([L.distributions.constraints.positive, L.distributions.constraints.real,
                                               L.distributions.constraints.interval(-1.0, 2.0)], 1, [1, 1, 1]),
    lambda L: L.distributions.constraints.cat([L.distributions.constraints.positive, L.distributions.constraints.real],
                                              -1, [1, 2]),
    lambda L: L.distributions.constraints.stack([L.distributions.constraints.positive, L.distributions.constraints.real,
                                                 L.distributions.constraints.less_than(1.0)], 1),
])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_constraint_registry_vectors(make, registry):
    out = []
    for L in (mt, torch):
        c = make(L)
        t = getattr(L.distributions, registry)(c)
        x = _t(L, [[0.3, -1.2, 2.0], [0.0, 0.5, -0.5]])
        y = t(x)
        out.append((type(t).__name__, bool(c.check(y).all()), t.domain.event_dim, t.codomain.event_dim,
                    _np(y), _np(t.inv(y)), _np(t.log_abs_det_jacobian(x, y)) if t.bijective else 0))
    assert out[0][:4] == out[1][:4]
    for a, b in zip(out[0][4:], out[1][4:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["lower_cholesky", "positive_definite", "positive_semidefinite"])
def test_transform_to_matrices(name):
    out = []
    for L in (mt, torch):
        t = L.distributions.transform_to(getattr(L.distributions.constraints, name))
        x = _t(L, [[[0.3, -1.2, 2.0], [0.1, 0.4, -0.5], [0.0, 0.5, -0.5]]] * 2)
        y = t(x)
        out.append((type(t).__name__, t == type(t)(), _np(y), _np(t.inv(y)), _np(getattr(L.distributions.constraints, name).check(y))))
    assert out[0][:2] == out[1][:2]
    for a, b in zip(out[0][2:], out[1][2:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_transform_shapes_and_caching():
    for L in (mt, torch):
        D = L.distributions
        t = D.CorrCholeskyTransform()
        assert t.forward_shape((5, 6)) == (5, 4, 4) and t.inverse_shape((5, 4, 4)) == (5, 6)
        cat = D.CatTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0)], dim=0, lengths=[2, 1], cache_size=1)
        x = _t(L, [0.1, 0.2, 0.3])
        assert cat(x) is cat(x) and cat.length == 3 and cat.event_dim == 0 and cat.bijective
        assert cat.with_cache(0)._cache_size == 0 and cat.with_cache(1) is cat
        st = D.StackTransform([D.ExpTransform(), D.SigmoidTransform()], dim=-1)
        assert repr(st.domain.cseq[0]) == "Real()" and st.codomain.event_dim == 1


@pytest.mark.parametrize("stat", ["covariance_matrix", "precision_matrix", "scale_tril", "variance"])
@pytest.mark.parametrize("name", ["LowRankMultivariateNormal", "Wishart", "WishartTril"])
def test_matrix_statistics(name, stat):
    (a, ea), (b, eb) = _both(lambda L: _np(getattr(CASES[name][0](L, False), stat)))
    assert ea == eb
    if eb is None:
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_distribution_extras():
    def run(L):
        D = L.distributions
        res = []
        oh = CASES["OneHotCategorical"][0](L, False)
        res += [oh.enumerate_support(), oh.enumerate_support(expand=False), oh.param_shape]
        msf = CASES["MixtureSameFamily"][0](L, False)
        res += [msf.cdf(_t(L, [0.5, -2.0])), msf.support.check(_t(L, [0.5, -2.0])), msf.expand((3, 2)).batch_shape]
        gp = CASES["GeneralizedPareto32"][0](L, False)
        res += [gp.log_survival_function(_t(L, [0.5, 2.0, -0.5], "float32")), gp.support.check(_t(L, [0.5, 20.0, 1.6], "float32"))]
        res += [D.RelaxedBernoulli(_t(L, 0.7), logits=_t(L, [0.1])).probs, D.relaxed_bernoulli.LogitRelaxedBernoulli(_t(L, 0.7), 0.3).batch_shape]
        res += [D.relaxed_categorical.ExpRelaxedCategorical(_t(L, 0.5), _t(L, [0.2, 0.8])).log_prob(_t(L, [-1.0, -0.3]))]
        res += [D.LogisticNormal(0.0, 1.0).batch_shape, D.LogisticNormal(0.0, 1.0).event_shape]
        res += [D.Multinomial(4, logits=_t(L, [0.0, 1.0])).entropy(), D.NegativeBinomial(3.0, _t(L, [0.2])).mode]
        res += [D.LKJCholesky(4, 0.5).log_prob(D.LKJCholesky(4, 0.5).sample((2,)) * 0 + L.eye(4, dtype=L.float64))]
        L.manual_seed(11)
        res += [D.VonMises(_t(L, [0.0, 2.0]), _t(L, [1e-6, 1e3])).sample((50,)), L.rand(1, dtype=L.float64)]
        return res
    for a, b in zip(run(mt), run(torch)):
        if isinstance(b, torch.Size):
            assert tuple(a) == tuple(b)
        else:
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
