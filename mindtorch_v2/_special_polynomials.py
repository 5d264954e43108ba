"""torch.special's orthogonal polynomials (Chebyshev T/U/V/W and their shifted forms, Hermite H/He,
Laguerre L, Legendre P) of degree n, as PyTorch's Math.h evaluates them: n truncated to an integer
(a negative, nan or out-of-range n gives 0), the closed values at the ends of the interval, the
trigonometric form inside it for large n, else the three-term recurrence (stopped early on nan).
PyTorch defines no derivative: the result never requires grad."""
import math

from . import _dtype
from ._dispatch import as_tensor_operand
from ._special import _float_dtype, _no_reduced, _where, binary_overload, broadcast_shape, finish
from .autograd.grad_mode import no_grad


def _select(default, *cases):
    """The value of the first (condition, value) case that holds, else default: the kernel's
    chain of early returns."""
    r = default
    for cond, value in reversed(cases):
        r = _where(cond, value, r)
    return r


def _recurrence(use, n, p, q, first, step):
    """q after the recurrence r = step(k, p, q); p, q = q, r for k = first, first + 1, ... while
    the element's own loop runs (k below its bound, q not nan), on the elements in `use`."""
    if not bool(use.any()):
        return q
    last = int(n[use].max())
    for k in range(first, last + 1):
        active = use & (k <= n) & ~q.isnan()
        if not bool(active.any()):
            break
        r = step(k, p, q)
        p, q = _where(active, q, p), _where(active, r, q)
    return q


def _ones(x):
    return x.new_ones(x.shape)


def _even(n):
    return n % 2 == 0


def _chebyshev_t(x, n, f):
    inside = (n > 6) & (x.abs() < 1.0)
    return _select(_recurrence(n >= 2, n, _ones(x), x, 2, lambda k, p, q: (x + x) * q - p),
                   (n < 0, 0.0), (x.abs() == 1.0, _where((x > 0) | _even(n), 1.0, -1.0)),
                   (inside, (f(n) * x.acos()).cos()), (n == 0, 1.0), (n == 1, x))


def _chebyshev_u(x, n, f):
    t = x.acos()
    trig = _where(t.sin() != 0, (f(n + 1) * t).sin() / t.sin(), f(n + 1) * (f(n + 1) * t).cos() / x)
    return _select(_recurrence(n >= 2, n, _ones(x), x + x, 2, lambda k, p, q: (x + x) * q - p),
                   (n < 0, 0.0), (x.abs() == 1.0, _where((x > 0) | _even(n), f(n + 1), -f(n + 1))),
                   ((n > 8) & (x.abs() < 1.0), trig), (n == 0, 1.0), (n == 1, x + x))


def _chebyshev_v(x, n, f):
    t = x.acos()
    odd_end = _where(_even(n), f(n + n + 1), -f(n + n + 1))
    trig = _where((t / 2.0).sin() != 1.0, ((f(n) + 0.5) * t).cos() / (t / 2.0).cos(), odd_end)
    return _select(_recurrence(n >= 2, n, _ones(x), x + x - 1.0, 2, lambda k, p, q: (x + x) * q - p),
                   (n < 0, 0.0), (x.abs() == 1.0, _where(x > 0, 1.0, odd_end)),
                   ((n > 8) & (x.abs() < 1.0), trig), (n == 0, 1.0), (n == 1, x + x - 1.0))


def _chebyshev_w(x, n, f):
    t = x.acos()
    end = _where(x > 0, f(n + n + 1), _where(_even(n), 1.0, -1.0))
    trig = _where((t / 2.0).cos() != 1.0, ((f(n) + 0.5) * t).sin() / (t / 2.0).sin(), end)
    return _select(_recurrence(n >= 2, n, _ones(x), x + x + 1.0, 2, lambda k, p, q: (x + x) * q - p),
                   (n < 0, 0.0), (x.abs() == 1.0, end),
                   ((n > 8) & (x.abs() < 1.0), trig), (n == 0, 1.0), (n == 1, x + x + 1.0))


def _shifted(x, n, f, first, at_one, at_zero, threshold, trig):
    """The shifted polynomials: the unshifted recurrence in y = 2x - 1 (computed as PyTorch does,
    y + y for 2y), with their own values at x = 1 and x = 0."""
    y = x + x - 1.0
    q0 = first(y)
    return _select(_recurrence(n >= 2, n, _ones(x), q0, 2, lambda k, p, q: (y + y) * q - p),
                   (n < 0, 0.0), (x == 1.0, at_one), (x == 0.0, at_zero),
                   ((n > threshold) & (y.abs() < 1.0), trig(y, y.acos())), (n == 0, 1.0), (n == 1, q0))


def _shifted_t(x, n, f):
    return _shifted(x, n, f, lambda y: y, 1.0, _where(_even(n), 1.0, -1.0), 6, lambda y, t: (f(n) * t).cos())


def _shifted_u(x, n, f):
    return _shifted(x, n, f, lambda y: y + y, f(n + 1), _where(_even(n), f(n + 1), -f(n + 1)), 6,
                    lambda y, t: _where(t.sin() != 0, (f(n + 1) * t).sin() / t.sin(),
                                        f(n + 1) * (f(n + 1) * t).cos() / y))


def _shifted_v(x, n, f):
    odd_end = _where(_even(n), f(n + n + 1), -f(n + n + 1))
    return _shifted(x, n, f, lambda y: y + y - 1.0, 1.0, odd_end, 6,
                    lambda y, t: _where((t / 2.0).sin() != 1.0, ((f(n) + 0.5) * t).cos() / (t / 2.0).cos(), odd_end))


def _shifted_w(x, n, f):
    sign = _where(_even(n), 1.0, -1.0)
    return _shifted(x, n, f, lambda y: y + y + 1.0, f(n + n + 1), sign, 4,
                    lambda y, t: _where((t / 2.0).cos() != 1.0, ((f(n) + 0.5) * t).sin() / (t / 2.0).sin(), sign))


def _hermite_limit(x):
    return 128 if x.dtype is _dtype.float32 else 512


def _hermite_h(x, n, f):
    r = _recurrence((n >= 2) & (n <= _hermite_limit(x)), n - 1, _ones(x), x + x, 1,
                    lambda k, p, q: (x + x) * q - (2 * k) * p)
    return _select(r, (n < 0, 0.0), (n == 0, 1.0), (n == 1, x + x), (n > _hermite_limit(x), math.nan))


def _hermite_he(x, n, f):
    r = _recurrence((n >= 2) & (n <= _hermite_limit(x)), n - 1, _ones(x), x, 1, lambda k, p, q: x * q - k * p)
    return _select(r, (n < 0, 0.0), (n == 0, 1.0), (n == 1, x), (n > _hermite_limit(x), math.nan))


def _laguerre_l(x, n, f):
    r = _recurrence(n >= 2, n - 1, _ones(x), 1.0 - x, 1,
                    lambda k, p, q: (((k + k) + (1.0 - x)) * q - k * p) / (k + 1))
    return _select(r, (n < 0, 0.0), (x.abs() == 0.0, 1.0), (n == 0, 1.0), (n == 1, 1.0 - x))


def _legendre_p(x, n, f):
    r = _recurrence(n >= 2, n - 1, _ones(x), x, 1, lambda k, p, q: ((k + k + 1) * x * q - k * p) / (k + 1))
    return _select(r, (n < 0, 0.0), (x.abs() == 1.0, _where((x > 0) | _even(n), 1.0, -1.0)),
                   (n == 0, 1.0), (n == 1, x))


def _polynomial(name, evaluate):
    """torch.special.<name>(x, n, *, out=None) over PyTorch's three overloads; x and n promote
    together (integers to the default dtype), then n is truncated to an integer."""
    def fn(x, n, *, out=None):
        binary_overload(f"special_{name}", x, n, names=("x", "n"), self_name="x")
        from ._elementwise import result_type
        dt = _float_dtype(result_type(x, n))
        _no_reduced(name, dt)
        with no_grad():
            x, n = as_tensor_operand(x).to(dt), as_tensor_operand(n).to(dt)
            x, n = x.broadcast_to(broadcast_shape(x, n)), n
            whole = n.isfinite() & (n.abs() < 2.0 ** 63)
            k = _where(whole, n, -1.0).to(_dtype.int64).broadcast_to(x.shape)  # C's cast: out of range is negative
            r = evaluate(x, k, lambda m: m.to(dt))
        return finish(r, out)
    fn.__name__ = name
    return fn


SPECIAL = {name: _polynomial(name, f) for name, f in (
    ("chebyshev_polynomial_t", _chebyshev_t), ("chebyshev_polynomial_u", _chebyshev_u),
    ("chebyshev_polynomial_v", _chebyshev_v), ("chebyshev_polynomial_w", _chebyshev_w),
    ("shifted_chebyshev_polynomial_t", _shifted_t), ("shifted_chebyshev_polynomial_u", _shifted_u),
    ("shifted_chebyshev_polynomial_v", _shifted_v), ("shifted_chebyshev_polynomial_w", _shifted_w),
    ("hermite_polynomial_h", _hermite_h), ("hermite_polynomial_he", _hermite_he),
    ("laguerre_polynomial_l", _laguerre_l), ("legendre_polynomial_p", _legendre_p))}
