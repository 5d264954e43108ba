"""torch.signal.windows: SciPy-style windows (sym=True symmetric, sym=False periodic), each a function of
one linspace grid in the requested dtype."""
import math
from collections.abc import Iterable

import mindtorch_v2 as torch  # the package; its attributes are read at call time
from ..._tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _resolve(name, M, dtype, layout):
    """The dtype to use (default if None), after the length/layout/dtype checks every window makes."""
    dtype = torch.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not torch.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, f, single_is_one=False):
    """The window when there is nothing to compute: empty for M == 0, [1.] for M == 1 where asked."""
    if M == 0:
        return torch.empty((0,), **f)
    if M == 1 and single_is_one:
        return torch.ones((1,), **f)
    return None


def _span(M, sym):
    """The denominator of the grid: M - 1 points apart for a symmetric window, M for a periodic one."""
    return M if not sym and M > 1 else M - 1


def _grid(M, origin, scale, f):
    """M points origin*scale, (origin+1)*scale, ..., (origin+M-1)*scale."""
    return torch.linspace(origin * scale, (origin + M - 1) * scale, M, **f)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=torch.strided, device=None, requires_grad: bool = False) -> Tensor:
    """exp(-|n - center| / tau)."""
    f = dict(dtype=_resolve("exponential", M, dtype, layout), layout=layout, device=device,
             requires_grad=requires_grad)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, f)
    center = _span(M, sym) / 2.0 if center is None else center
    return torch.exp(-torch.abs(_grid(M, -center, 1 / tau, f)))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """sin(pi (n + 1/2) / M), the half-period sine."""
    f = dict(dtype=_resolve("cosine", M, dtype, layout), layout=layout, device=device, requires_grad=requires_grad)
    if M == 0:
        return _trivial(M, f)
    return torch.sin(_grid(M, 0.5, torch.pi / (_span(M, sym) + 1), f))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=torch.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """exp(-(n - centre)^2 / (2 std^2))."""
    f = dict(dtype=_resolve("gaussian", M, dtype, layout), layout=layout, device=device, requires_grad=requires_grad)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, f)
    x = _grid(M, -_span(M, sym) / 2.0, 1 / (std * math.sqrt(2)), f)
    return torch.exp(-(x ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=torch.strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """I0(beta sqrt(1 - x^2)) / I0(beta) on x in [-1, 1], evaluated as I0(sqrt(beta^2 - (beta x)^2))."""
    dtype = _resolve("kaiser", M, dtype, layout)
    f = dict(dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, f, single_is_one=True)
    b = torch.tensor(beta, dtype=dtype, device=device)  # in the window's dtype, so that beta^2 - x^2 >= 0 holds
    step = 2.0 * b / _span(M, sym)
    x = torch.linspace(-b, torch.minimum(b, -b + (M - 1) * step), M, **f)
    return torch.i0(torch.sqrt(b * b - torch.pow(x, 2))) / torch.i0(b)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The triangle 1 - |x| on x from -1 in steps of 2 / span."""
    f = dict(dtype=_resolve("bartlett", M, dtype, layout), layout=layout, device=device, requires_grad=requires_grad)
    if M <= 1:
        return _trivial(M, f, single_is_one=True)
    x = torch.linspace(-1, -1 + (M - 1) * (2 / _span(M, sym)), M, **f)
    return 1 - torch.abs(x)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=torch.strided, device=None,
                   requires_grad: bool = False) -> Tensor:
    """sum_i (-1)^i a_i cos(2 pi i n / span)."""
    dtype = _resolve("general_cosine", M, dtype, layout)
    f = dict(dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    if M <= 1:
        return _trivial(M, f, single_is_one=True)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    phase = _grid(M, 0, 2 * torch.pi / _span(M, sym), f)
    coef = torch.tensor([w if i % 2 == 0 else -w for i, w in enumerate(a)], dtype=dtype, device=device,
                        requires_grad=requires_grad)
    order = torch.arange(coef.shape[0], dtype=dtype, device=coef.device, requires_grad=requires_grad)
    return (coef.unsqueeze(-1) * torch.cos(order.unsqueeze(-1) * phase)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=torch.strided, device=None,
                    requires_grad: bool = False) -> Tensor:
    """alpha - (1 - alpha) cos(2 pi n / span)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The three-term cosine window 0.42, 0.5, 0.08."""
    _resolve("blackman", M, dtype, layout)  # errors name blackman, not general_cosine
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """Nuttall's four-term minimum-sidelobe cosine window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
