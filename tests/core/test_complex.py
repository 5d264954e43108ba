"""complex64/complex128 against live PyTorch: dtype objects and promotion, creation, casts both ways,
item/tolist/numpy/printing/save-load, the complex views (view_as_real/view_as_complex, real/imag,
conj), elementwise ops over layouts (contiguous, transposed, broadcast, empty, 0-dim), reductions,
matrix products, PyTorch's errors for what complex does not support (type and text), and autograd:
gradients of real -> complex -> real graphs (the rotary-embedding path) and gradcheck."""
import io

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

CDTYPES = ("complex64", "complex128")
REALS = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
TOL = {"complex64": 2e-6, "complex128": 1e-13, "float32": 2e-6, "float64": 1e-13}


def outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001  (the error is the result compared)
        return ("raised", type(e).__name__, str(e))


def as_numpy(r):
    r = r.detach()
    if isinstance(r, torch.Tensor):
        r = r.resolve_conj()
        if r.dtype == torch.bfloat16:
            r = r.float()
    elif r.dtype == mt.bfloat16:
        r = r.float()
    return r.numpy()


def check(fn, rtol=None):
    """fn(torch) and fn(mindtorch_v2) agree: dtype, shape and values (within the dtype's tolerance), or the
    same exception type and text."""
    a, b = outcome(fn, torch), outcome(fn, mt)
    compare(a, b, rtol)
    return b


def compare(a, b, rtol=None):
    if isinstance(a, tuple) and a and a[0] == "raised":
        assert b == a
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            compare(x, y, rtol)
        return
    if isinstance(a, torch.Tensor):
        assert isinstance(b, mt.Tensor), b
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (a, b)
        tol = rtol if rtol is not None else TOL.get(str(a.dtype).split(".")[1], 0)
        x, y = as_numpy(a), as_numpy(b)
        if tol:
            np.testing.assert_allclose(y, x, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(y, x)
        return
    if isinstance(a, torch.dtype):
        assert str(a) == str(b)
        return
    if isinstance(a, (complex, float)) and isinstance(b, (complex, float)):
        assert type(a) is type(b) and abs(a - b) <= 1e-6 * max(1, abs(a)), (a, b)
        return
    assert a == b


def dt(lib, name):
    return getattr(lib, name)


# values with both parts of either sign, zeros, and a NaN/inf corner
VALUES = [1 + 2j, -3 + 0.5j, 0.25 - 1.5j, -0.75 - 0.125j, 2 + 0j, 0 - 1j, 0.5 + 0.5j, -1.25 + 2.5j]
RNG = np.random.default_rng(0)
MAT = (RNG.standard_normal((4, 5)) + 1j * RNG.standard_normal((4, 5))).tolist()


def cz(lib, name, values=VALUES):
    return lib.tensor(values, dtype=dt(lib, name))


LAYOUTS = {
    "contig": lambda lib, name: cz(lib, name, MAT),
    "transposed": lambda lib, name: cz(lib, name, MAT).t(),
    "strided": lambda lib, name: cz(lib, name, MAT)[:, ::2],
    "0dim": lambda lib, name: cz(lib, name, MAT)[1, 2],
    "empty": lambda lib, name: cz(lib, name, MAT)[:0],
}


# ---- dtype objects and promotion ----------------------------------------------------------

def test_dtype_objects():
    for name in CDTYPES:
        check(lambda lib: (dt(lib, name).is_complex, dt(lib, name).is_floating_point, dt(lib, name).itemsize,
                           dt(lib, name).is_signed, str(dt(lib, name).to_real()), str(dt(lib, name).to_complex()),
                           str(dt(lib, name))))
    check(lambda lib: (lib.cfloat is lib.complex64, lib.cdouble is lib.complex128))
    for name in ("float32", "float64", "bfloat16"):
        check(lambda lib: str(dt(lib, name).to_complex()))
    for name in ("int64", "bool"):
        check(lambda lib: dt(lib, name).to_complex())
    check(lambda lib: str(lib.float16.to_complex()))  # complex32: a name only here
    check(lambda lib: lib.iinfo(lib.complex64))
    for name in CDTYPES:
        check(lambda lib: (lib.finfo(dt(lib, name)).eps, lib.finfo(dt(lib, name)).bits, lib.finfo(dt(lib, name)).dtype))


@pytest.mark.parametrize("c", CDTYPES)
@pytest.mark.parametrize("other", REALS + CDTYPES)
def test_promotion(c, other):
    check(lambda lib: str(lib.promote_types(dt(lib, c), dt(lib, other))))
    check(lambda lib: str(lib.promote_types(dt(lib, other), dt(lib, c))))
    check(lambda lib: (lib.can_cast(dt(lib, c), dt(lib, other)), lib.can_cast(dt(lib, other), dt(lib, c))))
    # dimensioned and 0-dim operands, and complex wrapped numbers with every dtype
    check(lambda lib: str((lib.ones((), dtype=dt(lib, other)) + lib.ones(2, dtype=dt(lib, c))).dtype))
    if other != "float16":  # float16 with a 0-dim or Python complex: complex32, a name only here
        check(lambda lib: str((lib.ones(2, dtype=dt(lib, other)) + lib.ones((), dtype=dt(lib, c))).dtype))
        check(lambda lib: lib.ones(2, dtype=dt(lib, other)) * 1j)


def test_promotion_default_dtype_and_float16():
    check(lambda lib: lib.result_type(lib.ones(2), 1j))
    prev = mt.get_default_dtype()
    try:
        for lib in (torch, mt):
            lib.set_default_dtype(lib.float64)
        check(lambda lib: (lib.ones(2, dtype=lib.int64) * 1j, lib.tensor([1j]), lib.ones(2) * 1j))
    finally:
        torch.set_default_dtype(torch.float32)
        mt.set_default_dtype(prev)
    with pytest.raises((RuntimeError, NotImplementedError), match="complex32"):  # PyTorch: a complex32 tensor
        mt.ones(2, dtype=mt.float16) * 1j


# ---- creation, casts, values --------------------------------------------------------------

@pytest.mark.parametrize("name", CDTYPES)
def test_creation(name):
    d = lambda lib: dt(lib, name)  # noqa: E731
    check(lambda lib: lib.tensor(VALUES, dtype=d(lib)))
    check(lambda lib: (lib.zeros(2, 3, dtype=d(lib)), lib.ones(3, dtype=d(lib)), lib.empty(0, 2, dtype=d(lib)).shape))
    check(lambda lib: (lib.full((2, 2), 1.5 - 2j, dtype=d(lib)), lib.full((2,), 3, dtype=d(lib))))
    check(lambda lib: (lib.zeros_like(cz(lib, name)), lib.ones_like(cz(lib, name)), lib.full_like(cz(lib, name), 2j)))
    check(lambda lib: lib.arange(3, dtype=d(lib)))  # PyTorch's "not implemented" error
    for fn in ("randn", "rand"):  # PyTorch samples the (..., 2) real view (randn with std 1/sqrt(2))
        check(lambda lib: getattr(lib, fn)(3, 4, dtype=d(lib), generator=lib.Generator().manual_seed(7)))
    check(lambda lib: (lib.manual_seed(3), lib.randn(5, dtype=d(lib)))[1])
    check(lambda lib: lib.randn(4, dtype=d(lib)).normal_(2.0, 3.0, generator=lib.Generator().manual_seed(1)))


def test_creation_inference():
    check(lambda lib: (lib.tensor([1 + 2j]), lib.tensor([1, 2j, 3.5]), lib.tensor(1 - 1j), lib.tensor([[True, 1j]])))
    check(lambda lib: (lib.full((2,), 1 + 1j), lib.tensor([]).to(lib.cfloat)))
    check(lambda lib: lib.tensor([1 + 2j], dtype=lib.float32))


@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("other", REALS + CDTYPES)
def test_casts(name, other):
    vals = VALUES + [1e3 - 7j, -200.75 + 1j]
    check(lambda lib: cz(lib, name, vals).to(dt(lib, other)))  # complex -> real: the real part
    real = [0.0, 1.0, -2.5, 3.25, 100.0, 127.0]
    if other not in CDTYPES:
        check(lambda lib: lib.tensor(real).to(dt(lib, other)).to(dt(lib, name)))
        check(lambda lib: lib.zeros(2, 3, dtype=dt(lib, other)).copy_(cz(lib, name, [[1 + 1j] * 3, [2j] * 3])))
        check(lambda lib: lib.zeros(2, dtype=dt(lib, name)).copy_(lib.tensor(real[:2]).to(dt(lib, other))))


@pytest.mark.parametrize("name", CDTYPES)
def test_values(name):
    check(lambda lib: cz(lib, name)[1].item())
    check(lambda lib: cz(lib, name).tolist())
    check(lambda lib: cz(lib, name).reshape(2, 4).t().tolist())
    check(lambda lib: complex(cz(lib, name)[0]))
    check(lambda lib: float(cz(lib, name)[0]))
    check(lambda lib: int(cz(lib, name)[0]))
    check(lambda lib: (cz(lib, name).is_complex(), lib.is_complex(cz(lib, name)), lib.ones(2).is_complex()))
    check(lambda lib: cz(lib, name)[0] == cz(lib, name)[0].item())


@pytest.mark.parametrize("name", CDTYPES)
def test_numpy_and_save(name):
    a = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(name)
    t = mt.from_numpy(a)
    assert t.dtype == dt(mt, name) and np.array_equal(t.numpy(), a)
    assert np.shares_memory(t.numpy(), a)
    check(lambda lib: lib.tensor(a[:, ::2]))
    check(lambda lib: lib.as_tensor(a).t().numpy().tolist() if lib is mt else torch.as_tensor(a).t().numpy().tolist())
    for src, dst in ((mt, torch), (torch, mt), (mt, mt)):
        buf = io.BytesIO()
        src.save({"z": src.from_numpy(a), "v": src.from_numpy(a)[1]}, buf)
        buf.seek(0)
        r = dst.load(buf)
        assert str(r["z"].dtype) == f"torch.{name}" and np.array_equal(as_numpy(r["z"]), a)
        assert np.array_equal(as_numpy(r["v"]), a[1])


def test_printing():
    vals = [[1 + 2j, -3.5 - 0.25j, 1e-5j], [1e10 + 2j, 3, 0j]]
    for v in (vals[0], vals[1], [1 + 2j, -3 + 4j], 1 + 2j, []):
        for name in CDTYPES:
            check(lambda lib: repr(lib.tensor(v, dtype=dt(lib, name))))
    check(lambda lib: str(lib.tensor(vals)))
    check(lambda lib: repr(lib.tensor([1 + 2j, float("nan") + 1j, float("inf") - 2j])))


# ---- views --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_view_as_real_and_parts(name, layout):
    make = LAYOUTS[layout]
    check(lambda lib: lib.view_as_real(make(lib, name)))
    check(lambda lib: lib.view_as_real(make(lib, name)).stride())
    check(lambda lib: (make(lib, name).real, make(lib, name).imag, lib.real(make(lib, name)), lib.imag(make(lib, name))))
    check(lambda lib: (make(lib, name).real.stride(), make(lib, name).imag.storage_offset()))
    check(lambda lib: lib.view_as_complex(lib.view_as_real(make(lib, name))))


@pytest.mark.parametrize("name", ("float32", "float64"))
def test_view_as_complex(name):
    x = lambda lib: lib.arange(24, dtype=dt(lib, name)).reshape(3, 4, 2)  # noqa: E731
    check(lambda lib: lib.view_as_complex(x(lib)))
    check(lambda lib: lib.view_as_complex(x(lib)[::2]).stride())
    check(lambda lib: lib.view_as_complex(x(lib)[:, 1:]).storage_offset())
    # PyTorch's errors, in its order
    check(lambda lib: lib.view_as_complex(lib.ones(3, dtype=dt(lib, name))))
    check(lambda lib: lib.view_as_complex(lib.ones(3, 3, dtype=dt(lib, name))))
    check(lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=dt(lib, name)).t()))
    check(lambda lib: lib.view_as_complex(lib.ones((), dtype=dt(lib, name))))
    check(lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)))
    check(lambda lib: lib.view_as_complex(lib.ones(5, dtype=dt(lib, name))[1:].view(2, 2)))
    check(lambda lib: lib.view_as_complex(lib.ones(3, 3, dtype=dt(lib, name))[:, :2]))
    check(lambda lib: lib.view_as_real(lib.ones(3, dtype=dt(lib, name))))
    check(lambda lib: lib.imag(lib.ones(3, dtype=dt(lib, name))))
    check(lambda lib: lib.real(lib.ones(3, dtype=dt(lib, name))))


def test_views_alias():
    for lib in (torch, mt):
        z = lib.tensor(VALUES)
        z.real.mul_(2)
        z.imag[0] = 7
        lib.view_as_real(z)[1, 1] = -9
        x = lib.zeros(2, 2)
        lib.view_as_complex(x)[0] = 1 + 5j
        if lib is torch:
            ref = (z, x)
    compare(ref, (z, x))


@pytest.mark.parametrize("name", CDTYPES)
def test_conj(name):
    check(lambda lib: (cz(lib, name).conj(), cz(lib, name).conj().is_conj(), cz(lib, name).is_conj()))
    check(lambda lib: (cz(lib, name).conj().resolve_conj(), cz(lib, name).conj().resolve_conj().is_conj()))
    check(lambda lib: (lib.conj_physical(cz(lib, name)), cz(lib, name).conj_physical().is_conj()))
    check(lambda lib: lib.view_as_real(cz(lib, name).conj()))
    check(lambda lib: lib.view_as_real(cz(lib, name).conj().resolve_conj()))
    check(lambda lib: (cz(lib, name).reshape(2, 4).mH, cz(lib, name).reshape(2, 4).H, cz(lib, name).reshape(2, 4).adjoint()))
    check(lambda lib: cz(lib, name).clone().conj_physical_())
    x = lambda lib: lib.tensor([1.0, -2.0])  # noqa: E731
    check(lambda lib: (x(lib).conj().is_conj(), lib.conj_physical(x(lib)), x(lib).resolve_conj()))
    for lib in (torch, mt):
        t = lib.tensor([1.0, 2.0])
        assert t.conj() is t and lib.conj_physical(t) is t and t.resolve_conj() is t


@pytest.mark.parametrize("name", ("float32", "float64"))
def test_complex_and_polar(name):
    a = lambda lib: lib.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.5]], dtype=dt(lib, name))  # noqa: E731
    b = lambda lib: lib.tensor([0.5, -1.0, 2.5], dtype=dt(lib, name))  # noqa: E731
    check(lambda lib: (lib.complex(a(lib), b(lib)), lib.polar(a(lib).abs(), b(lib))))
    check(lambda lib: (lib.complex(a(lib).t(), a(lib).t()), lib.polar(a(lib)[:, ::2], a(lib)[:, :2])))
    check(lambda lib: lib.complex(a(lib), b(lib).double() if name == "float32" else b(lib).float()))
    check(lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)))
    check(lambda lib: lib.polar(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)))
    check(lambda lib: lib.complex(a(lib), 1.0))
    out = lambda lib: lib.empty(2, 3, dtype=lib.complex64 if name == "float32" else lib.complex128)  # noqa: E731
    check(lambda lib: lib.complex(a(lib), b(lib), out=out(lib)))


# ---- elementwise ---------------------------------------------------------------------------

UNARY = ["neg", "abs", "angle", "sgn", "sqrt", "rsqrt", "exp", "expm1", "exp2", "log", "log1p", "log2", "log10",
         "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sigmoid",
         "reciprocal", "isnan", "isinf", "isfinite", "logical_not", "square", "conj_physical"]
UNSUPPORTED_UNARY = ["sign", "floor", "ceil", "round", "trunc", "frac", "erf", "signbit", "deg2rad", "rad2deg",
                     "bitwise_not", "relu", "lgamma", "digamma", "erfinv"]


@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, name, layout):
    make = LAYOUTS[layout]
    check(lambda lib: getattr(lib, op)(make(lib, name)), rtol=1e-5 if name == "complex64" else 1e-12)
    if layout == "contig":
        check(lambda lib: getattr(make(lib, name), op)(), rtol=1e-5 if name == "complex64" else 1e-12)


@pytest.mark.parametrize("name", CDTYPES)
def test_unary_special_values(name):
    vals = [0j, complex(float("nan"), 1), complex(1, float("inf")), complex(float("-inf"), 0), 1e-8 + 1e-8j, -0.0 + 0j]
    for op in ("abs", "angle", "sgn", "isnan", "isinf", "isfinite", "neg", "exp", "log1p", "expm1", "reciprocal"):
        check(lambda lib: getattr(lib, op)(cz(lib, name, vals)), rtol=1e-5 if name == "complex64" else 1e-12)


@pytest.mark.parametrize("op", UNSUPPORTED_UNARY)
def test_unary_errors(op):
    fn = getattr(torch.nn.functional, op) if op == "relu" else None
    check(lambda lib: (getattr(lib.nn.functional, op) if fn else getattr(lib, op))(lib.tensor(VALUES)))


BINARY = ["add", "sub", "mul", "div", "eq", "ne", "pow", "logical_and", "logical_or", "logical_xor", "true_divide"]
UNSUPPORTED_BINARY = ["lt", "le", "gt", "ge", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod", "atan2",
                      "floor_divide", "hypot", "copysign", "bitwise_and"]


@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary(op, name):
    tol = 1e-5 if name == "complex64" else 1e-12
    f = lambda lib: getattr(lib, op)  # noqa: E731
    check(lambda lib: f(lib)(cz(lib, name, MAT), cz(lib, name, MAT).flip(0)), tol)
    check(lambda lib: f(lib)(cz(lib, name, MAT).t(), cz(lib, name, MAT)[0, :4]), tol)  # transposed, broadcast
    check(lambda lib: f(lib)(cz(lib, name, MAT)[:, ::2], cz(lib, name, MAT)[1, 2]), tol)  # 0-dim operand
    check(lambda lib: f(lib)(cz(lib, name, MAT)[:0], cz(lib, name, MAT)[1]), tol)  # empty
    check(lambda lib: f(lib)(cz(lib, name, MAT), 0.5 - 2j), tol)  # Python complex
    check(lambda lib: f(lib)(cz(lib, name, MAT), 3), tol)
    check(lambda lib: f(lib)(cz(lib, name, MAT), lib.tensor(MAT).real.float()), tol)  # real tensor operand
    check(lambda lib: f(lib)(lib.arange(5), cz(lib, name, MAT)), tol)
    check(lambda lib: f(lib)(lib.ones(4, 5, dtype=lib.float64), cz(lib, name, MAT)), tol)


def test_binary_python_scalars_and_operators():
    z = lambda lib: lib.tensor(VALUES)  # noqa: E731
    check(lambda lib: (z(lib) * 1j, 1j * z(lib), z(lib) + (2 - 1j), (2 - 1j) - z(lib), z(lib) / 1j, 1j / z(lib)))
    check(lambda lib: (z(lib) ** 2, z(lib) ** 0.5, z(lib) ** (1 + 1j), 2 ** z(lib), z(lib) ** 0, z(lib) ** 1), 1e-5)
    check(lambda lib: (lib.ones(3) * 1j, lib.arange(3) + 1j, lib.tensor([True, False]) * 1j))
    check(lambda lib: (lib.ones(3, dtype=lib.bfloat16) * (1 + 1j), lib.ones(3, dtype=lib.float64) * 1j))
    check(lambda lib: (z(lib) == 1 + 2j, z(lib) != 2, z(lib) == z(lib).conj()))
    check(lambda lib: lib.ones(3) * np.complex128(1 + 1j))


def test_inplace_and_out():
    z = lambda lib: lib.tensor(VALUES)  # noqa: E731
    check(lambda lib: (z(lib).mul_(1j), z(lib).add_(z(lib), alpha=2), z(lib).div_(2 + 1j), z(lib).neg_()))
    check(lambda lib: lib.ones(8).mul_(z(lib)))  # result type complex can't be cast to float
    check(lambda lib: lib.abs(z(lib), out=lib.empty(8)))
    check(lambda lib: lib.mul(z(lib), z(lib), out=lib.empty(8, dtype=lib.complex128)))
    check(lambda lib: lib.exp(z(lib), out=lib.empty(8)))
    check(lambda lib: lib.where(z(lib).real > 0, z(lib), 0j))
    check(lambda lib: z(lib).masked_fill(z(lib).imag > 0, 2 - 2j))


@pytest.mark.parametrize("op", UNSUPPORTED_BINARY)
def test_binary_errors(op):
    check(lambda lib: getattr(lib, op)(lib.tensor(VALUES), lib.tensor(VALUES)))


def test_other_errors():
    z = lambda lib: lib.tensor(VALUES)  # noqa: E731
    check(lambda lib: z(lib) < 1)
    check(lambda lib: z(lib).clamp(0, 1))
    check(lambda lib: z(lib).clamp(min=z(lib)))
    check(lambda lib: z(lib).max())
    check(lambda lib: z(lib).amax())
    check(lambda lib: lib.ones(2, dtype=lib.complex64).random_())
    check(lambda lib: lib.ones(2, dtype=lib.complex64).bernoulli_(0.5))
    check(lambda lib: lib.ones(2, dtype=lib.complex64).exponential_())
    check(lambda lib: lib.randperm(3, dtype=lib.complex64))
    check(lambda lib: lib.randint(0, 5, (2,), dtype=lib.complex64))
    with pytest.raises(RuntimeError, match="floating point and complex"):
        mt.ones(2, dtype=mt.int64).requires_grad_()


# ---- reductions and products -----------------------------------------------------------------

@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("op", ("sum", "mean", "prod"))
def test_reductions(op, name):
    tol = 1e-5 if name == "complex64" else 1e-12
    x = lambda lib: cz(lib, name, MAT)  # noqa: E731
    check(lambda lib: getattr(x(lib), op)(), tol)
    check(lambda lib: getattr(x(lib), op)(0), tol)
    check(lambda lib: getattr(x(lib).t(), op)(1, keepdim=True), tol)
    check(lambda lib: getattr(x(lib)[:, ::2], op)(-1), tol)
    check(lambda lib: getattr(x(lib)[1, 1], op)(), tol)
    check(lambda lib: getattr(x(lib)[:0], op)(0), tol)
    if op != "prod":
        check(lambda lib: getattr(x(lib).reshape(2, 2, 5), op)((0, 2)), tol)
        check(lambda lib: getattr(x(lib), op)(dtype=lib.complex128), tol)
    check(lambda lib: (x(lib).any(), (x(lib) * 0).all(), lib.count_nonzero(x(lib) * lib.tensor([0, 1, 1, 0, 1]))))


@pytest.mark.parametrize("name", CDTYPES)
def test_matmul(name):
    tol = 1e-5 if name == "complex64" else 1e-12
    a = lambda lib: cz(lib, name, MAT)  # noqa: E731
    check(lambda lib: lib.mm(a(lib), a(lib).t()), tol)
    check(lambda lib: lib.mm(a(lib).t(), a(lib)), tol)
    check(lambda lib: a(lib) @ a(lib).conj().t(), tol)
    check(lambda lib: lib.mm(a(lib)[:, ::2], a(lib)[:3]), tol)
    check(lambda lib: lib.bmm(a(lib).reshape(2, 2, 5), a(lib).reshape(2, 5, 2)), tol)
    check(lambda lib: lib.matmul(a(lib).reshape(2, 2, 5), a(lib).t()), tol)
    check(lambda lib: lib.mm(a(lib)[:0], a(lib).t()), tol)
    check(lambda lib: lib.mm(a(lib), lib.ones(5, 2)))  # PyTorch's dtype error


# ---- lerp, addcmul, addcdiv, sinc, logaddexp, logcumsumexp: PyTorch's CPU kernels take complex -----

def _tol(name):
    return 1e-5 if name == "complex64" else 1e-12


@pytest.mark.parametrize("name", CDTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_interpolation_and_log_ops(name, layout):
    x = lambda lib: LAYOUTS[layout](lib, name)  # noqa: E731
    y = lambda lib: LAYOUTS[layout](lib, name) * (0.5 - 1j) + 0.25  # noqa: E731
    w = lambda lib: LAYOUTS[layout](lib, name).conj() * 0.3  # noqa: E731  (some |w| < 0.5, some above)
    for fn in (lambda lib: lib.lerp(x(lib), y(lib), w(lib)), lambda lib: lib.lerp(x(lib), y(lib), 0.3),
               lambda lib: lib.lerp(x(lib), y(lib), 0.75 - 0.25j),
               lambda lib: lib.addcmul(x(lib), y(lib), w(lib), value=0.5),
               lambda lib: lib.addcdiv(x(lib), y(lib), w(lib) + 1, value=-2),
               lambda lib: lib.addcmul(x(lib), y(lib), w(lib), value=1 - 2j),
               lambda lib: lib.addcdiv(x(lib), y(lib), w(lib) + 1, value=0.5j),
               lambda lib: lib.sinc(x(lib)), lambda lib: lib.logaddexp(x(lib), y(lib)),
               lambda lib: x(lib).sinc(), lambda lib: x(lib).logaddexp(y(lib))):
        check(fn, _tol(name))
    if layout != "0dim":
        check(lambda lib: lib.logcumsumexp(x(lib), 0), _tol(name))
        check(lambda lib: lib.logcumsumexp(x(lib), -1), _tol(name))
    else:
        check(lambda lib: lib.logcumsumexp(x(lib), 0), _tol(name))


@pytest.mark.parametrize("name", CDTYPES)
def test_interpolation_and_log_ops_broadcast_and_mixed(name):
    z = lambda lib: cz(lib, name, MAT)  # noqa: E731
    r = lambda lib: lib.tensor(A[0][:1] * 5)  # noqa: E731  (a real float32 row, broadcast)
    check(lambda lib: lib.addcmul(z(lib), r(lib), z(lib)[0]), _tol(name))
    check(lambda lib: lib.addcdiv(r(lib), z(lib), z(lib)[:, :1] + 2), _tol(name))
    check(lambda lib: lib.lerp(z(lib), z(lib)[0], lib.tensor(0.25 + 0.5j, dtype=dt(lib, name))), _tol(name))
    check(lambda lib: lib.logaddexp(z(lib), z(lib)[1, 1]), _tol(name))
    out = lambda lib: lib.empty(4, 5, dtype=dt(lib, name))  # noqa: E731
    check(lambda lib: lib.addcmul(z(lib), z(lib), z(lib), value=2, out=out(lib)), _tol(name))
    check(lambda lib: z(lib).clone().lerp_(z(lib).flip(0), 0.6), _tol(name))
    check(lambda lib: z(lib).clone().addcdiv_(z(lib), z(lib) + 3, value=1j), _tol(name))


@pytest.mark.parametrize("name", CDTYPES)
def test_interpolation_and_log_ops_special_values(name):
    inf, nan = float("inf"), float("nan")
    vals = [0j, -0.0 + 0j, complex(inf, 1), complex(inf, 2), complex(-inf, 0), complex(-inf, 3), complex(nan, 0),
            complex(1, nan), 1e-8 + 1e-8j, 30 + 1j]
    flip = list(reversed(vals))
    check(lambda lib: lib.sinc(cz(lib, name, vals)), _tol(name))
    check(lambda lib: lib.logaddexp(cz(lib, name, vals), cz(lib, name, flip)), _tol(name))
    check(lambda lib: lib.logaddexp(cz(lib, name, vals), cz(lib, name, vals)), _tol(name))
    check(lambda lib: lib.logcumsumexp(cz(lib, name, vals), 0), _tol(name))
    check(lambda lib: lib.logcumsumexp(cz(lib, name, flip), 0), _tol(name))


def test_interpolation_and_log_ops_errors():
    z = lambda lib: lib.tensor(VALUES)  # noqa: E731
    x = lambda lib: lib.tensor([1.0, 2.0])  # noqa: E731
    check(lambda lib: lib.lerp(z(lib), z(lib).real, 0.5))
    check(lambda lib: lib.lerp(z(lib), z(lib), z(lib).real))
    check(lambda lib: lib.lerp(x(lib), x(lib), 0.5j))
    check(lambda lib: lib.lerp(x(lib).double(), x(lib).double(), 0.5 + 0j))
    check(lambda lib: lib.lerp(x(lib).long(), x(lib).long(), 0.5j))
    check(lambda lib: lib.addcmul(x(lib), x(lib), x(lib), value=1j))
    check(lambda lib: lib.addcdiv(x(lib).half(), x(lib), x(lib), value=2 - 1j))
    check(lambda lib: lib.addcmul(x(lib).long(), x(lib).long(), x(lib).long(), value=1j))
    check(lambda lib: x(lib).addcmul_(z(lib)[:2], z(lib)[:2]))
    check(lambda lib: lib.logaddexp(z(lib), 1))


COMPLEX_OPS_GRAPHS = {  # functions of complex leaves z, w for the interpolation and log ops
    "lerp_tensor": "lib.lerp(z, w, z * 0.2 + 0.1j)", "lerp_scalar": "lib.lerp(z, w, 0.3)",
    "lerp_complex_scalar": "lib.lerp(z, w, 0.3 - 0.4j)", "addcmul": "lib.addcmul(z, w, z, value=0.5)",
    "addcdiv": "lib.addcdiv(w, z, w, value=-1.5)", "addcmul_complex_value": "lib.addcmul(z, w, z, value=2j)",
    "sinc": "lib.sinc(z) * w", "logaddexp": "lib.logaddexp(z, w)", "logcumsumexp": "lib.logcumsumexp(z * w, 0)",
}


@pytest.mark.parametrize("graph", COMPLEX_OPS_GRAPHS)
def test_interpolation_and_log_ops_gradients(graph):
    fn = lambda lib: eval(f"lambda z, w: {COMPLEX_OPS_GRAPHS[graph]}", {"lib": lib})  # noqa: E731,S307
    z = mt.tensor(Z, dtype=mt.complex128, requires_grad=True)
    w = mt.tensor(W, dtype=mt.complex128, requires_grad=True)
    assert mt.autograd.gradcheck(fn(mt), (z, w))
    assert mt.autograd.gradgradcheck(fn(mt), (z, w))

    def grads_of(lib):
        zz = lib.tensor(Z, dtype=lib.complex128, requires_grad=True)
        ww = lib.tensor(W, dtype=lib.complex128, requires_grad=True)
        y = fn(lib)(zz, ww)
        return lib.autograd.grad(y, (zz, ww), lib.ones_like(y) * (1 - 0.5j), allow_unused=True)
    check(grads_of, 1e-10)
    if "complex" not in graph:  # PyTorch's node names (a complex value multiplies tensor1 in a MulBackward0 first)
        check(lambda lib: type(fn(lib)(lib.tensor(Z, requires_grad=True), lib.tensor(W)).grad_fn).__name__)


# ---- autograd -----------------------------------------------------------------------------------

def grads(lib, fn, *inputs, dtype="float64"):
    xs = [lib.tensor(x, dtype=dt(lib, dtype), requires_grad=True) for x in inputs]
    y = fn(lib, *xs)
    y.backward()
    return [y] + [x.grad for x in xs]


A = RNG.standard_normal((3, 4)).tolist()
B = RNG.standard_normal((3, 4)).tolist()
POS = (np.abs(RNG.standard_normal((3, 4))) + 0.5).tolist()

GRAPHS = {  # real -> complex -> real, each through a complex op (PyTorch's conjugate Wirtinger gradients)
    "abs": lambda lib, a, b: lib.complex(a, b).abs().sum(),
    "angle": lambda lib, a, b: lib.complex(a, b).angle().sum(),
    "sgn": lambda lib, a, b: lib.view_as_real(lib.complex(a, b).sgn()).pow(2).mul(lib.arange(2.0) + 1).sum(),
    "real_imag": lambda lib, a, b: (lib.complex(a, b).real * 2 + lib.complex(a, b).imag ** 3).sum(),
    "mul": lambda lib, a, b: lib.view_as_real(lib.complex(a, b) * lib.complex(b, a)).sum(),
    "div": lambda lib, a, b: (lib.complex(a, b) / lib.complex(b + 3, a)).abs().sum(),
    "mul_scalar": lambda lib, a, b: lib.view_as_real(lib.complex(a, b) * (0.5 - 2j)).pow(2).sum(),
    "add_sub": lambda lib, a, b: (lib.complex(a, b) + lib.complex(b, b) - 1j * lib.complex(a, a)).abs().sum(),
    "exp": lambda lib, a, b: lib.complex(a, b).exp().real.sum(),
    "log": lambda lib, a, b: lib.complex(a, b).log().imag.sum(),
    "sqrt": lambda lib, a, b: lib.complex(a, b).sqrt().abs().pow(3).sum(),
    "reciprocal": lambda lib, a, b: lib.view_as_real(lib.complex(a, b).reciprocal()).sum(),
    "sin_cos_tanh": lambda lib, a, b: (lib.complex(a, b).sin() + lib.complex(b, a).cos() * lib.complex(a, a).tanh()).abs().sum(),
    "neg_conj": lambda lib, a, b: lib.view_as_real(-lib.complex(a, b).conj() * lib.complex(b, a)).pow(2).sum(),
    "sum_mean_prod": lambda lib, a, b: (lib.complex(a, b).sum(0).abs().sum() + lib.complex(a, b).mean(1).angle().sum()
                                        + lib.complex(a, b).prod(1).real.sum()),
    "mm": lambda lib, a, b: lib.view_as_real(lib.complex(a, b) @ lib.complex(b, a).t()).pow(2).sum(),
    "bmm": lambda lib, a, b: (lib.complex(a, b).reshape(3, 2, 2) @ lib.complex(b, a).reshape(3, 2, 2)).abs().sum(),
    "polar": lambda lib, a, b: lib.view_as_real(lib.polar(a.abs() + 0.1, b)).pow(2).mul(lib.arange(2.0) + 2).sum(),
    "rotary": lambda lib, a, b: (lib.view_as_real(lib.view_as_complex(a.reshape(3, 2, 2))
                                                   * lib.polar(lib.ones_like(b[:, :2]), b[:, :2])).flatten(1)
                                 * lib.arange(4.0)).sum(),
    "pow": lambda lib, a, b: (lib.complex(a, b) ** 2).abs().sum(),
    "to_real": lambda lib, a, b: lib.complex(a, b).to(lib.float64).sum() + (lib.complex(a, b) * a).real.sum(),
}


@pytest.mark.parametrize("graph", GRAPHS)
def test_gradients(graph):
    pos = graph in ("log", "sqrt")
    check(lambda lib: grads(lib, GRAPHS[graph], POS if pos else A, B), 1e-10)
    check(lambda lib: type(GRAPHS[graph](lib, *(lib.tensor(A, dtype=lib.float64, requires_grad=True),) * 2).grad_fn).__name__)


@pytest.mark.parametrize("graph", GRAPHS)
def test_gradcheck(graph):
    a = mt.tensor(POS if graph in ("log", "sqrt") else A, dtype=mt.float64, requires_grad=True)
    b = mt.tensor(B, dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradcheck(lambda a, b: GRAPHS[graph](mt, a, b), (a, b))


def test_complex_leaf_gradients():
    """a complex leaf receives the conjugate Wirtinger gradient, as PyTorch's"""
    def fn(lib):
        z = lib.tensor(MAT, requires_grad=True)
        w = lib.tensor(MAT, dtype=lib.complex64).flip(1).requires_grad_()
        loss = ((z * w).exp().abs() + (z / (w + 3)).angle() + lib.view_as_real(z.conj() * z).sum(-1)).sum()
        loss.backward()
        return z.grad, w.grad, type(z.conj().grad_fn).__name__, type(lib.view_as_real(z).grad_fn).__name__
    check(fn, 1e-5)
    check(lambda lib: type(lib.view_as_complex(lib.ones(2, 2, requires_grad=True)).grad_fn).__name__)
    check(lambda lib: type(lib.tensor(MAT, requires_grad=True).real.grad_fn).__name__)


Z = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).tolist()
W = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4) + 2).tolist()
COMPLEX_FNS = {  # functions of complex leaves z, w (as source: run with either library as `lib`)
    "exp_abs2": "(z * z.conj()).exp()", "sin_mul": "z.sin() * w", "abs_angle": "z.abs() + w.angle()",
    "sgn": "z.sgn()", "log_sqrt_div": "z.log() / w.sqrt()", "reciprocal_tanh": "z.reciprocal().tanh()",
    "prod_sum_mean": "z.prod() + w.sum() * z.mean()", "pow": "z ** 2.5 + w ** z",
    "sigmoid_exp2_log10_asinh": "z.sigmoid() + w.exp2() + z.log10() + w.asinh()",
    "dot_mm": "z / w + z @ w + (z.reshape(2, 2) @ w.reshape(2, 2)).sum()",
    "views": "lib.view_as_real(z * w).sum(-1) + z.real * w.imag",
}


def complex_fn(name, lib):
    return eval(f"lambda z, w: {COMPLEX_FNS[name]}", {"lib": lib})  # noqa: S307  (the table above)


@pytest.mark.parametrize("name", COMPLEX_FNS)
def test_gradcheck_complex_leaves(name):
    """gradcheck of complex leaves checks real and imaginary parts (PyTorch's slow mode); the gradients are
    PyTorch's (conjugate Wirtinger)"""
    z = mt.tensor(Z, dtype=mt.complex128, requires_grad=True)
    w = mt.tensor(W, dtype=mt.complex128, requires_grad=True)
    assert mt.autograd.gradcheck(complex_fn(name, mt), (z, w))
    if name in ("exp_abs2", "sin_mul", "log_sqrt_div", "dot_mm", "views"):
        assert mt.autograd.gradgradcheck(complex_fn(name, mt), (z, w))

    def grads_of(lib):
        zz = lib.tensor(Z, dtype=lib.complex128, requires_grad=True)
        ww = lib.tensor(W, dtype=lib.complex128, requires_grad=True)
        y = complex_fn(name, lib)(zz, ww)
        return lib.autograd.grad(y, (zz, ww), lib.ones_like(y), allow_unused=True)
    check(grads_of, 1e-10)


def test_complex_casts_and_view_copies():
    """Tensor.cfloat/cdouble (chalf names complex32, which raises naming itself) and view_as_real_copy /
    view_as_complex_copy: the views' values in new contiguous tensors."""
    check(lambda L: L.tensor([1.5, -2.0]).cfloat())
    check(lambda L: L.tensor([1, 2]).cdouble())
    check(lambda L: L.view_as_real_copy(L.view_as_complex(L.tensor([[1.0, 2.0], [3.0, 4.0]]))))
    check(lambda L: L.view_as_complex_copy(L.tensor([[1.0, 2.0], [3.0, 4.0]]).t().contiguous()))
    check(lambda L: L.view_as_real_copy(L.ones(2)))
    c = mt.view_as_complex(mt.tensor([[1.0, 2.0]]))
    r = mt.view_as_real_copy(c)
    r[0, 0] = 9.0
    assert c[0].real.item() == 1.0 and r.is_contiguous()
    with pytest.raises(NotImplementedError, match="complex32"):
        mt.ones(2).chalf()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_angle_backward_real_is_zeros(dtype):
    """PyTorch's angle_backward: zeros_like(self) for a real input (no complex formula, no NaN from a NaN,
    0 or inf input), of the input's dtype and shape; the complex input keeps its formula (gradcheck)"""
    vals = np.array([[-2.0, -0.0, 0.0, 3.0], [np.nan, np.inf, -np.inf, 1e-30]])
    grads = []
    for lib in (mt, torch):
        x = lib.tensor(vals, dtype=getattr(lib, dtype)).t().requires_grad_()  # non-contiguous
        y = x.angle()
        y.backward(lib.ones(tuple(y.shape), dtype=y.dtype) * 3)
        assert x.grad.dtype == x.dtype and tuple(x.grad.shape) == (4, 2)
        grads.append(np.array(x.grad.float().tolist()))
    np.testing.assert_array_equal(grads[0], grads[1])
    assert not np.signbit(grads[0]).any() and (grads[0] == 0).all()
    r = np.random.default_rng(3)
    z = mt.complex(mt.tensor(r.standard_normal((3, 4))), mt.tensor(r.standard_normal((3, 4)))).requires_grad_()
    assert mt.autograd.gradcheck(lambda z: z.angle(), (z,))
