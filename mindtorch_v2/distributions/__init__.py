"""torch.distributions: Normal, Categorical, MultivariateNormal and constraints (math through
mindtorch_v2 ops; ops the library lacks raise NotImplementedError naming them)."""
from .._missing import missing_class
from . import constraints, utils  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution, ExponentialFamily  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from . import categorical, distribution, multivariate_normal, normal  # noqa: F401


# ---- the rest of torch.distributions' names: classes that libraries subclass or import at module
# level exist, and constructing one raises NotImplementedError naming it ----
def _missing(name, base=object):
    return missing_class(f"torch.distributions.{name}", base, " in mindtorch_v2")


Transform = _missing("Transform")


_DISTRIBUTIONS = ["Bernoulli", "Beta", "Binomial", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet", "Exponential",
                  "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
                  "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal",
                  "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
                  "NegativeBinomial", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto",
                  "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Poisson", "Uniform", "VonMises",
                  "Weibull", "Wishart", "TransformedDistribution"]
_TRANSFORMS = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
               "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
               "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
               "SoftplusTransform", "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform"]
for _n in _DISTRIBUTIONS:
    globals()[_n] = _missing(_n, Distribution)
for _n in _TRANSFORMS:
    globals()[_n] = _missing(_n, Transform)
