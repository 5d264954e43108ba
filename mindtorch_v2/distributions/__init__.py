"""torch.distributions: Normal, Categorical, MultivariateNormal and constraints (math through
mindtorch_v2 ops; ops the library lacks raise NotImplementedError naming them)."""
import importlib.machinery
import sys
import types

from .._missing import missing_class
from . import constraints, utils  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution, ExponentialFamily  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from . import categorical, distribution, multivariate_normal, normal  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .beta import Beta  # noqa: F401
from .binomial import Binomial  # noqa: F401
from .cauchy import Cauchy  # noqa: F401
from .chi2 import Chi2  # noqa: F401
from .dirichlet import Dirichlet  # noqa: F401
from .exponential import Exponential  # noqa: F401
from .gamma import Gamma  # noqa: F401
from .geometric import Geometric  # noqa: F401
from .laplace import Laplace  # noqa: F401
from .poisson import Poisson  # noqa: F401
from .uniform import Uniform  # noqa: F401
from . import transforms  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .independent import Independent  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .log_normal import LogNormal  # noqa: F401
from .half_normal import HalfNormal  # noqa: F401
from .half_cauchy import HalfCauchy  # noqa: F401
from .gumbel import Gumbel  # noqa: F401
from .weibull import Weibull  # noqa: F401
from .pareto import Pareto  # noqa: F401
from .continuous_bernoulli import ContinuousBernoulli  # noqa: F401
from .fishersnedecor import FisherSnedecor  # noqa: F401
from .generalized_pareto import GeneralizedPareto  # noqa: F401
from .inverse_gamma import InverseGamma  # noqa: F401
from .kumaraswamy import Kumaraswamy  # noqa: F401
from .lkj_cholesky import LKJCholesky  # noqa: F401
from .logistic_normal import LogisticNormal  # noqa: F401
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: F401
from .mixture_same_family import MixtureSameFamily  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .negative_binomial import NegativeBinomial  # noqa: F401
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough  # noqa: F401
from .relaxed_bernoulli import RelaxedBernoulli  # noqa: F401
from .relaxed_categorical import RelaxedOneHotCategorical  # noqa: F401
from .studentT import StudentT  # noqa: F401
from .von_mises import VonMises  # noqa: F401
from .wishart import Wishart  # noqa: F401
from . import constraint_registry, kl  # noqa: F401
from .constraint_registry import biject_to, transform_to  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401


# ---- the rest of torch.distributions' names: classes that libraries subclass or import at module
# level exist, and constructing one raises NotImplementedError naming it ----
def _missing(name, base=object):
    return missing_class(f"torch.distributions.{name}", base, " in mindtorch_v2")




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
    if _n not in globals():
        globals()[_n] = _missing(_n, Distribution)


# ---- PyTorch's submodules of the classes above that lack a file here (`from torch.distributions.relaxed_bernoulli import
# RelaxedBernoulli` at a library's module level imports; constructing raises as above) ----
_SUBMODULES = {"bernoulli": "Bernoulli", "beta": "Beta", "binomial": "Binomial", "cauchy": "Cauchy", "chi2": "Chi2",
               "continuous_bernoulli": "ContinuousBernoulli", "dirichlet": "Dirichlet", "exp_family": "ExponentialFamily",
               "exponential": "Exponential",
               "fishersnedecor": "FisherSnedecor", "gamma": "Gamma", "generalized_pareto": "GeneralizedPareto",
               "geometric": "Geometric", "gumbel": "Gumbel", "half_cauchy": "HalfCauchy", "half_normal": "HalfNormal",
               "independent": "Independent", "inverse_gamma": "InverseGamma", "kumaraswamy": "Kumaraswamy",
               "laplace": "Laplace", "lkj_cholesky": "LKJCholesky", "log_normal": "LogNormal",
               "logistic_normal": "LogisticNormal", "lowrank_multivariate_normal": "LowRankMultivariateNormal",
               "mixture_same_family": "MixtureSameFamily", "multinomial": "Multinomial",
               "negative_binomial": "NegativeBinomial", "one_hot_categorical": "OneHotCategorical "
               "OneHotCategoricalStraightThrough", "pareto": "Pareto", "poisson": "Poisson",
               "relaxed_bernoulli": "LogitRelaxedBernoulli RelaxedBernoulli",
               "relaxed_categorical": "ExpRelaxedCategorical RelaxedOneHotCategorical", "studentT": "StudentT",
               "transformed_distribution": "TransformedDistribution", "uniform": "Uniform", "von_mises": "VonMises",
               "weibull": "Weibull", "wishart": "Wishart", "transforms": " ".join(_TRANSFORMS + ["Transform"])}
for _module, _names in _SUBMODULES.items():
    if isinstance(globals().get(_module), types.ModuleType):
        continue  # a real module of ours
    _full = f"{__name__}.{_module}"
    _mod = sys.modules[_full] = globals()[_module] = types.ModuleType(_full)
    _mod.__spec__ = importlib.machinery.ModuleSpec(_full, None)  # what importlib.util.find_spec answers
    _mod.__all__ = _names.split()
    for _n in _mod.__all__:  # two live only in their submodule in PyTorch too
        setattr(_mod, _n, globals().get(_n) or _missing(_n, Distribution))
