"""torch.special: the functions mindtorch_v2 has; the others raise NotImplementedError naming themselves."""
from . import sigmoid as expit, erf, expm1, log1p, round, xlogy, logsumexp  # noqa: F401
from . import digamma, digamma as psi, erfc, erfinv, exp2, lgamma as gammaln, sinc  # noqa: F401
from ._nn_ops import FUNCTIONS as _N
from ._special import SPECIAL as _S
from ._special_bessel import SPECIAL as _B
from ._special_gamma import SPECIAL as _G
from ._special_polynomials import SPECIAL as _P

globals().update(_S)  # i0 i0e i1 i1e ndtr log_ndtr ndtri erfcx entr xlog1py logit multigammaln
globals().update(_G)  # zeta polygamma gammainc gammaincc
globals().update(_P)  # chebyshev_polynomial_t ... legendre_polynomial_p
globals().update(_B)  # bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, ...


def softmax(input, dim, *, dtype=None):
    return _N["softmax"](input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _N["log_softmax"](input, dim, dtype)


__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]


def __getattr__(name):
    if name in __all__:
        raise NotImplementedError(f"torch.special.{name} is not implemented in mindtorch_v2")
    raise AttributeError(f"module 'torch.special' has no attribute '{name}'")
