"""torch.special's functions without a kernel of their own here (i0/i0e/i1/i1e, ndtr, log_ndtr, ndtri,
erfcx, entr, xlog1py, logit, multigammaln), and their torch.*/Tensor names. Each is written with the
library's ops: PyTorch's compositions as PyTorch writes them (ndtr, multigammaln: autograd comes from
the ops; logit's forward too, under a LogitBackward0 node whose backward is the logit_backward kernel),
the others as an autograd Function whose forward evaluates PyTorch's own
algorithm (Cephes' Chebyshev and rational approximations; erfcx by continued fraction) and whose
backward is PyTorch's derivatives.yaml formula, under PyTorch's node name."""
import math

from . import _dtype
from ._dispatch import as_tensor_operand
from ._tensor import Tensor
from .autograd.function import Function


def _tensor_arg(name, x, pos=1, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")
    return x


def _float_dtype(dt):
    """PyTorch's int-to-float promotion of these ops: integers and bool give the default dtype."""
    return dt if dt.is_floating_point else _dtype.get_default_dtype()


def _opmath(dt):
    """The dtype PyTorch's CPU kernel computes in: float for float16/bfloat16."""
    return _dtype.float64 if dt is _dtype.float64 else _dtype.float32


def _no_reduced(kernel, dt):
    if dt in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{_dtype.scalar_name(dt)}\'')


def finish(result, out, inplace=False, cast_error=None):
    """out= and in-place: PyTorch's cast check (cast_error: the op's own text for it), then the values
    copied in (autograd through copy_)."""
    if out is None:
        return result
    if not _dtype.can_cast(result.dtype, out.dtype):
        raise RuntimeError(cast_error or f"result type {_dtype.scalar_name(result.dtype)} can't be cast to the "
                           f"desired output type {_dtype.scalar_name(out.dtype)}")
    if not inplace:
        if out.requires_grad or result.requires_grad:
            raise RuntimeError("functions with out=... arguments don't support automatic differentiation, but one "
                               "of the arguments requires grad.")
        if tuple(out.shape) != tuple(result.shape):
            out.resize_(result.shape)
    return out.copy_(result)


def _elementwise(name, node, compute, backward, kernel=None, work=_opmath):
    """torch.special.<name>(input, *, out=None): compute(x) runs on x in `work`(result dtype) without
    grad; backward(grad, x, result) is the derivative, itself made of differentiable ops."""
    class Op(Function):
        _node_name = node

        @staticmethod
        def forward(ctx, x):
            dt = _float_dtype(x.dtype)
            y = compute(x.to(work(dt))).to(dt)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return backward(grad, x, y)

    def fn(input, *, out=None):
        _tensor_arg(name, input)
        if kernel:
            _no_reduced(kernel, _float_dtype(input.dtype))
        return finish(Op.apply(input), out)
    fn.__name__ = name
    return fn


# ---- the Cephes Chebyshev expansions of the modified Bessel functions (PyTorch's Math.h) ----

def _chbevl(x, coefficients):
    """sum' c_i T_i(x/2), Clenshaw's recurrence (Cephes chbevl)."""
    b0, b1, b2 = x * 0 + coefficients[0], x * 0, x * 0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)


def _i1e_coefficients(x):
    # PyTorch's float kernels keep the leading terms only (17 and 7): float32 rounds the rest away
    return (_I1E_A, _I1E_B) if x.dtype is _dtype.float64 else (_I1E_A[12:], _I1E_B[18:])


def _bessel(x, A, B, small_form, big_form, odd):
    """Cephes' two expansions in a = |x|: over [0, 8] in a/2 - 2, over (8, inf) in 32/a - 2, then
    each branch's factors (small_form(a, series), big_form(a, series)); odd functions take x's sign."""
    a = x.abs()
    small = a <= 8.0
    big = a.clamp(min=8.0)  # the (8, inf) branch evaluated where it is finite
    r = _where(small, small_form(a, _chbevl(a / 2.0 - 2.0, A)), big_form(big, _chbevl(32.0 / big - 2.0, B)))
    return _where(x < 0, -r, r) if odd else r


def _i0(x):
    return _bessel(x, _I0E_A, _I0E_B, lambda a, s: a.exp() * s, lambda a, s: a.exp() * s / a.sqrt(), False)


def _i0e(x):
    return _bessel(x, _I0E_A, _I0E_B, lambda a, s: s, lambda a, s: s / a.sqrt(), False)


def _i1(x):
    A, B = _i1e_coefficients(x)
    return _bessel(x, A, B, lambda a, s: a.exp() * a * s, lambda a, s: a.exp() * s / a.sqrt(), True)


def _i1e(x):
    A, B = _i1e_coefficients(x)
    return _bessel(x, A, B, lambda a, s: s * a, lambda a, s: s / a.sqrt(), True)


def _where(cond, a, b):
    from ._elementwise import where
    return where(cond, a, b)


def _tiny_safe(x):
    """x where |x| > eps, else eps: i1's derivative has a removable 0/0 at x = 0 (PyTorch's i1_backward)."""
    eps = _dtype.finfo(x.dtype).eps
    return x.abs() > eps, _where(x.abs() > eps, x, eps)


def _i1_backward(grad, x, y):
    ok, safe = _tiny_safe(x)
    return grad * _where(ok, i0(safe) - y * safe.reciprocal(), 0.5)


def _i1e_backward(grad, x, y):
    ok, safe = _tiny_safe(x)
    return grad * _where(ok, i0e(safe) - y * (safe.sgn() + safe.reciprocal()), 0.5)


i0 = _elementwise("i0", "I0Backward0", _i0, lambda g, x, y: g * i1(x))
i0e = _elementwise("special_i0e", "SpecialI0EBackward0", _i0e, lambda g, x, y: g * (i1e(x) - x.sgn() * y))
i1 = _elementwise("special_i1", "SpecialI1Backward0", _i1, _i1_backward)
i1e = _elementwise("special_i1e", "SpecialI1EBackward0", _i1e, _i1e_backward)


# ---- the normal distribution: ndtri (Cephes), erfcx, log_ndtr ----

def _polevl(x, coefficients):
    r = x * 0 + coefficients[0]
    for c in coefficients[1:]:
        r = r * x + c
    return r


_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXP_M2 = 0.13533528323661269189  # exp(-2)


def _ndtri(p):
    """Cephes ndtri: a rational function of p - 1/2 in the middle, of 1/sqrt(-2 log p) in the tails."""
    upper = p > 1.0 - _EXP_M2
    y = _where(upper, 1.0 - p, p)
    c = y - 0.5
    c2 = c * c
    middle = (c + c * (c2 * _polevl(c2, _NDTRI_P0) / _polevl(c2, _NDTRI_Q0))) * math.sqrt(2 * math.pi)
    t = (-2.0 * y.log()).sqrt()
    z = t.reciprocal()
    tail = (t - t.log() / t) - _where(t < 8.0, z * _polevl(z, _NDTRI_P1) / _polevl(z, _NDTRI_Q1),
                                       z * _polevl(z, _NDTRI_P2) / _polevl(z, _NDTRI_Q2))
    r = _where(y > _EXP_M2, middle, _where(upper, tail, -tail))
    r = _where(p == 0, -math.inf, _where(p == 1, math.inf, r))
    return _where((p < 0) | (p > 1), math.nan, r)


_ISPI = 0.56418958354775628694807945156  # 1/sqrt(pi)


def _exp_square(x):
    """exp(x*x) with x*x split exactly into hi + lo (Veltkamp), so the square's rounding, which exp
    would magnify by x*x, is not lost."""
    c = x * 134217729.0
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    lo = ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl
    return hi.exp() * lo.exp()


def _erfcx_positive(x):
    """erfcx on x >= 0 (float64): exp(x^2) erfc(x) while erfc(x) is a normal number, then the
    continued fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) (converged to float64
    for x >= 20 with 40 terms)."""
    near = x.clamp(max=20.0)
    direct = _exp_square(near) * near.erfc()
    far = x.clamp(min=20.0)
    f = far
    for k in range(40, 0, -1):
        f = far + (k / 2.0) / f
    return _where(x < 20.0, direct, _ISPI / f)


def _erfcx(x):
    pos = _erfcx_positive(x.abs())
    neg = 2.0 * (x * x).exp() - pos  # PyTorch's erfcx(-x) = 2 exp(x^2) - erfcx(x), inf below -26.7
    return _where(x >= 0, pos, _where(x < -26.7, math.inf, neg)).where(~x.isnan(), x)


def _log_ndtr(x):
    t = x * math.sqrt(0.5)
    return _where(x < -1.0, (_erfcx(-t) / 2.0).log() - t * t, (-(t.erfc() / 2.0)).log1p())


def _float64(dt):
    return _dtype.float64


ndtri = _elementwise("special_ndtri", "SpecialNdtriBackward0", _ndtri,
                     lambda g, x, y: g * math.sqrt(2 * math.pi) * (y.square() / 2).exp(), kernel="ndtri")
erfcx = _elementwise("special_erfcx", "SpecialErfcxBackward0", _erfcx,
                     lambda g, x, y: (2.0 * x * y - 2.0 / math.sqrt(math.pi)) * g, kernel="erfcx", work=_float64)
log_ndtr = _elementwise("special_log_ndtr", "SpecialLogNdtrBackward0", _log_ndtr,
                        lambda g, x, y: g / math.sqrt(2 * math.pi) * (y + x.pow(2) / 2).neg().exp(),
                        kernel="log_ndtr", work=_float64)


def _entr(x):
    r = _where(x > 0, -x * x.log(), _where(x == 0, 0.0, -math.inf))
    return _where(x.isnan(), x, r)


entr = _elementwise("special_entr", "SpecialEntrBackward0", _entr, lambda g, x, y: g * (-(1 + x.log())))


def ndtr(input, *, out=None):
    _tensor_arg("special_ndtr", input)
    x = input if input.dtype.is_floating_point else input.to(_dtype.get_default_dtype())
    return finish((1 + (x * math.sqrt(0.5)).erf()) * 0.5, out)  # PyTorch's composition


# ---- xlog1py: x * log1p(y), 0 where x == 0 (unless y is nan) ----

def broadcast_shape(a, b):
    """The shape two tensors broadcast to, with the elementwise ops' error text."""
    from ._shape_ops import broadcast_tensors
    return broadcast_tensors(a, b)[0].shape


def _sum_to(g, shape):
    """A broadcast result's gradient summed back to an input's shape."""
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1]
    return (g.sum(dims, keepdim=True) if dims else g).reshape(shape)


def _xlog1py_node(overload):
    """The node of xlog1py's overload (0: two tensors, 1: a number self, 2: a number other)."""
    class Xlog1py(Function):
        _node_name = f"SpecialXlog1PyBackward{overload}"

        @staticmethod
        def forward(ctx, x, y, dt):
            ctx.save_for_backward(x, y)
            return _where(y.isnan(), y, _where(x == 0, 0.0, x * y.log1p())).to(dt)

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            gx = xlog1py(grad, y).masked_fill((x == 0.) & (y <= -1.), 0.)
            return _sum_to(gx, x.shape), _sum_to(grad * x / (y + 1), y.shape), None
    return Xlog1py


_XLOG1PY = [_xlog1py_node(i) for i in range(3)]


def binary_overload(name, a, b, names=("input", "other"), self_name="self"):
    """Which of PyTorch's three overloads (Tensor, Tensor), (Number, Tensor), (Tensor, Number) a call
    takes: 0, 1 or 2; two numbers are PyTorch's TypeError."""
    tensors = isinstance(a, Tensor), isinstance(b, Tensor)
    if not any(tensors):
        x, y = names
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
                        f" * (Tensor {x}, Tensor {y}, *, Tensor out = None)\n"
                        f" * (Number {self_name}, Tensor {y}, *, Tensor out = None)\n"
                        f" * (Tensor {x}, Number {y}, *, Tensor out = None)\n")
    return 0 if all(tensors) else 1 if tensors[1] else 2


def xlog1py(input, other, *, out=None):
    overload = binary_overload("special_xlog1py", input, other)
    from ._elementwise import result_type
    dt = _float_dtype(result_type(input, other))
    node = _XLOG1PY[overload]
    return finish(node.apply(as_tensor_operand(input), as_tensor_operand(other), dt), out)


# ---- logit (its node runs the logit_backward kernel) and PyTorch's composition multigammaln ----

class _Logit(Function):
    """logit's node: the composed forward, and PyTorch's logit_backward kernel (one fused pass, eps < 0 for
    none; the composition's own backward took four); under create_graph its differentiable form
    (infinitely_differentiable_logit_backward)."""
    _node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        ctx.eps = eps
        z = x.clamp(eps, 1.0 - eps) if eps >= 0 else x
        return (z / (1 - z)).log()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        eps = ctx.eps
        from .autograd import is_grad_enabled
        if not is_grad_enabled():
            from ._dispatch import _binary
            from ._C import lib
            return _binary(lib.MT_OP_LOGIT_BACKWARD, grad, x, None, alpha=float(eps)), None
        lo, hi = (eps, 1.0 - eps) if eps >= 0 else (0.0, 1.0)
        return _where((x < lo) | (x > hi), 0.0 if eps >= 0 else math.nan, grad / (x * (1 - x))), None


def logit(input, eps=None, *, out=None):
    """log(z / (1 - z)), z = input clamped to [eps, 1 - eps] when eps is given."""
    _tensor_arg("logit", input)
    z = input if input.dtype.is_floating_point else input.to(_dtype.get_default_dtype())
    return finish(_Logit.apply(z, -1.0 if eps is None or eps < 0 else float(eps)), out)


def logit_(input, eps=None):
    return finish(logit(input, eps), input, inplace=True)


def multigammaln(input, p, *, out=None):
    """PyTorch's mvlgamma: sum_i lgamma(input + (1 - i)/2), i = 1..p, plus p(p-1)/4 log(pi)."""
    _tensor_arg("mvlgamma", input)
    if input.dtype is _dtype.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    from ._creation import arange
    args = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=_float_dtype(input.dtype)) + input.unsqueeze(-1)
    return finish(args.lgamma().sum(-1) + p * (p - 1) * math.log(math.pi) / 4, out)


def mvlgamma(input, p, *, out=None):
    return multigammaln(input, p, out=out)


def mvlgamma_(self, p):
    # (PyTorch's text names the types the other way round)
    return finish(multigammaln(self, p), self, inplace=True, cast_error=f"mvlgamma: result type "
                  f"{_dtype.scalar_name(self.dtype)} can't be cast to the desired output type Float")


def i0_(self):
    return finish(i0(self), self, inplace=True)


def special_i0(input, *, out=None):
    _tensor_arg("special_i0", input)
    return i0(input, out=out)


# torch.special's names; torch.* and Tensor have only some of them
SPECIAL = {"i0": special_i0, "i0e": i0e, "i1": i1, "i1e": i1e, "ndtri": ndtri, "erfcx": erfcx, "log_ndtr": log_ndtr,
           "entr": entr, "ndtr": ndtr, "xlog1py": xlog1py, "logit": logit, "multigammaln": multigammaln}
FUNCTIONS = {"i0": i0, "i0_": i0_, "logit": logit, "logit_": logit_, "mvlgamma": mvlgamma}
METHODS = {"i0": i0, "i0_": i0_, "logit": logit, "logit_": logit_, "mvlgamma": mvlgamma, "mvlgamma_": mvlgamma_}
