"""torch.distributions: Normal, Categorical, MultivariateNormal and constraints (math through
mindtorch_v2 ops; ops the library lacks raise NotImplementedError naming them)."""
from . import constraints, utils  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution, ExponentialFamily  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from . import categorical, distribution, multivariate_normal, normal  # noqa: F401
