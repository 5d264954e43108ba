"""Elementwise ops and type promotion against PyTorch.

Live differential tests (skipped without torch) run every case through both libraries with the
case machinery of tests/fixtures/make_elementwise_goldens.py and compare result dtype, shape,
strides and values (exact bits, sign of zero included, except where the case says tol=1: libm-class
functions within torch.testing.assert_close tolerances), or the exception type and message.
test_goldens checks the committed PyTorch outcomes and runs with or without torch.
"""
import importlib.util
import itertools
import json
import os
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_elementwise_goldens", os.path.join(_HERE, "..", "fixtures", "make_elementwise_goldens.py"))
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)

DTYPES, FLOATS, INTS = G.DTYPES, G.FLOATS, G.INTS
UNARY, BINARY, APPROX = G.UNARY, G.BINARY, G.APPROX
T = G.tensor_arg


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def case(call, args, kwargs=None, tol=False, extra=None):
    return G._case(call, args, kwargs, tol, extra)


def describe(c):
    def arg(a):
        if a[0] == "T":
            views = "".join(f".{v[0]}{v[1]}" for v in a[4])
            return f"{a[1]}{a[2]}{views}"
        return {"S": lambda: repr(a[1]), "R": lambda: f"&{a[1]}", "N": lambda: "None"}[a[0]]()
    kw = ", ".join(f"{k}={arg(v)}" for k, v in c.get("kwargs", {}).items())
    return f"{c['call'][0]}:{c['call'][1]}({', '.join(arg(a) for a in c['args'])}{', ' + kw if kw else ''})"


def run_cases(torch, cases, *, message=True, layout=True):
    """Every case against PyTorch; one assertion listing all differences."""
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in cases:
            exp = G.outcome(torch, c)
            got = G.outcome(mt, c)
            diff = G.compare(got, exp, c, message=message, layout=layout)
            if diff:
                failures.append(f"{describe(c)}: {diff}")
    shown = int(os.environ.get("MT_EW_SHOW", 25))  # how many differences the message lists
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures[:shown])


def kind_for(op, position):
    """Value kind for an operand: exponents small, integer divisors nonzero."""
    if op == "pow" and position == 1:
        return "small"
    if op in G.INT_DIVISION and position == 1:
        return "nonzero"
    return "plain" if op in G.PLAIN else "any"


# ---- layouts ----------------------------------------------------------------------------------------

def unary_layouts(dt, seed=0, kind="any"):
    return [
        T(dt, [16], seed, kind),
        T(dt, [4, 6], seed, kind, views=[["perm", [1, 0]]]),                    # transposed
        T(dt, [6, 9], seed, kind, views=[["slice", [[0, 6, 2], [1, 9, 3]]]]),   # steps and an offset
        T(dt, [2, 3, 4], seed, kind, views=[["perm", [2, 0, 1]]]),              # 3-D permuted
        T(dt, [1, 4], seed, kind, views=[["expand", [3, 4]]]),                  # stride 0
        T(dt, [], seed, kind),                                                  # 0-dim
        T(dt, [0, 3], seed, kind),                                              # empty
    ]


def binary_layouts(da, db, op=""):
    ka, kb = kind_for(op, 0), kind_for(op, 1)
    A = lambda shape, seed=1, views=(): T(da, shape, seed, ka, views)  # noqa: E731
    B = lambda shape, seed=2, views=(): T(db, shape, seed, kb, views)  # noqa: E731
    tr = [["perm", [1, 0]]]
    return [
        (A([3, 4]), B([3, 4])),
        (A([4, 3], views=tr), B([3, 4])),                                        # transposed + contiguous
        (A([4, 3], views=tr), B([4, 3], views=tr)),                              # both transposed: keeps layout
        (A([6, 9], views=[["slice", [[0, 6, 2], [1, 9, 2]]]]), B([3, 4])),       # stepped slice
        (A([3, 4]), B([5, 8], views=[["slice", [[1, 4, 1], [0, 8, 2]]]])),
        (A([1, 4], views=[["expand", [3, 4]]]), B([3, 4])),                      # expanded
        (A([3, 4]), B([4])),                                                     # different ranks
        (A([3, 1]), B([1, 4])),                                                  # broadcast both ways
        (A([2, 1, 4]), B([3, 1])),
        (A([]), B([3, 4])),                                                      # 0-dim with n-dim
        (A([3, 4]), B([])),
        (A([]), B([])),
        (A([0, 4]), B([4])),                                                     # empty
        (A([2, 0, 3]), B([1, 1, 3])),
        (A([2, 3, 4], views=[["perm", [2, 0, 1]]]), B([2, 3, 4], views=[["perm", [2, 0, 1]]])),
        (A([2, 3, 4], views=[["perm", [1, 2, 0]]]), B([3, 4, 2])),
    ]


SCALARS = [0, 3, -2, 1000, True, False, 2.5, -0.0, 0.1, float("nan"), float("inf"), 1e10]


# ---- unary ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", UNARY)
def test_unary(torch, op):
    cases = []
    for dt in DTYPES:
        for a in unary_layouts(dt):
            cases.append(case(["f", op], [a], tol=op in APPROX))
        cases.append(case(["m", op], [T(dt, [5], 3)], tol=op in APPROX))
    run_cases(torch, cases)


@pytest.mark.parametrize("op", [op for op in UNARY if op not in ("isnan", "isinf", "isfinite")])
def test_unary_out_and_inplace(torch, op):
    cases = []
    for dt in DTYPES:
        x = T(dt, [2, 3], 4)
        for out_dt in ("float32", "int64", "bool", dt):
            cases.append(case(["f", op], [x], {"out": ["R", 1]}, op in APPROX, extra=[T(out_dt, [2, 3], 5)]))
        cases.append(case(["f", op], [x], {"out": ["R", 1]}, op in APPROX, extra=[T(dt, [3, 2], 5, views=[["perm", [1, 0]]])]))
        cases.append(case(["f", op], [x], {"out": ["R", 1]}, op in APPROX, extra=[T(dt, [0], 5)]))  # resized
        cases.append(case(["m", op + "_"], [T(dt, [4, 3], 4, views=[["perm", [1, 0]]])], tol=op in APPROX))
    run_cases(torch, cases)


def _wide(dt, n, lo, hi, seed):
    """n values log-spread over +-[10**lo, 10**hi] (both signs), exactly representable in dt."""
    rng = np.random.default_rng(seed)
    v = 10.0 ** rng.uniform(lo, hi, n) * np.where(rng.random(n) < 0.5, -1, 1)
    return ["T", dt, [n], [float(x) for x in G.representable(v, dt)], []]


@pytest.mark.parametrize("op", [op for op in UNARY if op in APPROX or op in ("reciprocal", "round", "floor")])
def test_unary_accuracy_wide_range(torch, op):
    """Thousands of values over many orders of magnitude, contiguous (PyTorch's vectorised loops)."""
    cases = []
    for dt in FLOATS:
        for lo, hi in ((-8, 0), (-1, 1.5), (0, 2.2), (1, 38)):
            cases.append(case(["f", op], [_wide(dt, 2048, lo, hi, seed=int(hi * 10))], tol=op in APPROX))
    run_cases(torch, cases)


def test_operators_unary(torch):
    cases = []
    for dt in DTYPES:
        for name in ("neg", "invert", "abs", "pos"):
            for a in unary_layouts(dt)[:3]:
                cases.append(case(["o", name], [a]))
    run_cases(torch, cases)


# ---- binary ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", BINARY)
def test_binary_dtype_matrix(torch, op):
    cases = []
    for da, db in itertools.product(DTYPES, DTYPES):
        cases.append(case(["f", op], [T(da, [16], 1, kind_for(op, 0)), T(db, [16], 2, kind_for(op, 1))],
                          tol=op in APPROX))
    run_cases(torch, cases)


@pytest.mark.parametrize("op", BINARY)
def test_binary_layouts(torch, op):
    cases = []
    for dt in DTYPES:
        for a, b in binary_layouts(dt, dt, op):
            cases.append(case(["f", op], [a, b], tol=op in APPROX))
    for da, db in (("int32", "float32"), ("bfloat16", "float16"), ("uint8", "int8"), ("bool", "float64")):
        for a, b in binary_layouts(da, db, op)[:8]:
            cases.append(case(["f", op], [a, b], tol=op in APPROX))
    run_cases(torch, cases)


@pytest.mark.parametrize("op", BINARY)
def test_binary_python_scalars(torch, op):
    cases = []
    for dt in DTYPES:
        x = T(dt, [3, 4], 5, "any")
        for s in SCALARS:
            if op in G.INT_DIVISION and not isinstance(s, float) and s == 0:
                continue  # integer zero divisors: test_integer_division_by_zero
            cases.append(case(["f", op], [x, ["S", s]], tol=op in APPROX))
            cases.append(case(["f", op], [["S", s], T(dt, [3, 4], 5, "nonzero")], tol=op in APPROX))
            cases.append(case(["m", op], [x, ["S", s]], tol=op in APPROX))
    run_cases(torch, cases)


OPERATORS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "eq", "ne", "lt", "le",
             "gt", "ge"]


@pytest.mark.parametrize("name", OPERATORS)
def test_python_operators(torch, name):
    """x <op> y, x <op> 2, and the reflected forms 2 - x, 2 ** x, 1 / x ..."""
    op = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder", "pow": "pow"}.get(name, name)
    tol = name in ("pow", "truediv")
    cases = []
    for dt in DTYPES:
        x, y = T(dt, [2, 3], 6, kind_for(op, 0)), T(dt, [2, 3], 7, kind_for(op, 1))
        cases.append(case(["o", name], [x, y], tol=tol))
        cases.append(case(["o", name], [T("float32", [3], 8), T(dt, [2, 3], 7, kind_for(op, 1))], tol=tol))
        for s in (2, 1, -3, 2.5, 0.1, True):
            cases.append(case(["o", name], [x, ["S", s]], tol=tol))
            cases.append(case(["o", name], [["S", s], T(dt, [2, 3], 9, "small" if op == "pow" else "nonzero")],
                              tol=tol))
    run_cases(torch, cases)


def test_reflected_division_exact(torch):
    """1 / x and s / x are x.reciprocal() * s in PyTorch: exact bits in every float dtype."""
    cases = []
    for dt in DTYPES:
        for s in (1, 2.5, 0.1, 3, True):
            cases.append(case(["o", "truediv"], [["S", s], T(dt, [64], 11, "nonzero")]))
            cases.append(case(["o", "truediv"], [["S", s], T(dt, [8, 8], 12, "any", views=[["perm", [1, 0]]])]))
    run_cases(torch, cases)


@pytest.mark.parametrize("mode", [None, "trunc", "floor", "bad"])
def test_div_rounding_modes(torch, mode):
    cases = []
    kw = {"rounding_mode": ["S", mode] if mode else ["N"]}
    for da, db in itertools.product(DTYPES, DTYPES):
        cases.append(case(["f", "div"], [T(da, [16], 13), T(db, [16], 14, "nonzero")], kw))
    for dt in DTYPES:
        for a, b in binary_layouts(dt, dt, "div")[:10]:
            cases.append(case(["f", "div"], [a, b], kw))
        for s in (2, -3, 2.5, 0.1, float("inf"), -0.0, True):
            cases.append(case(["f", "div"], [T(dt, [12], 15), ["S", s]], kw))
            cases.append(case(["m", "div"], [T(dt, [12], 15), ["S", s]], kw))
    run_cases(torch, cases)


def test_reduced_float_arithmetic_exact(torch):
    """float16/bfloat16 add/sub/mul/div: bit-exact on larger inputs, with tensors, scalars, 0-dim and
    broadcast operands, contiguous and strided (the vectorised and the scalar paths of PyTorch)."""
    cases = []
    for dt in ("float16", "bfloat16"):
        a, b = T(dt, [257], 20, "plain"), T(dt, [257], 21, "nonzero")
        strided = T(dt, [2, 257], 22, "plain", views=[["slice", [[0, 2, 1], [0, 257, 3]]]])
        for op in ("add", "sub", "mul", "div"):
            cases.append(case(["f", op], [a, b]))
            cases.append(case(["f", op], [strided, T(dt, [2, 86], 23, "nonzero")]))
            for s in (0.1, 1 / 3, 7.3, 3, -0.0, 1e-3, 1e5):
                cases.append(case(["f", op], [a, ["S", s]]))
                cases.append(case(["f", op], [strided, ["S", s]]))
                cases.append(case(["o", "truediv" if op == "div" else op], [["S", s], b]))
            for other in (T("float32", [], 24, "nonzero"), T("float64", [], 25, "nonzero"), T(dt, [1], 26, "nonzero"),
                          T(dt, [1, 1], 27, "nonzero"), T("int64", [], 28, "nonzero")):
                cases.append(case(["f", op], [a, other]))
                cases.append(case(["f", op], [other, a]))
            for mode in ("trunc", "floor"):
                if op == "div":
                    cases.append(case(["f", op], [a, b], {"rounding_mode": ["S", mode]}))
                    cases.append(case(["f", op], [a, ["S", 0.3]], {"rounding_mode": ["S", mode]}))
                    cases.append(case(["f", op], [strided, T(dt, [2, 86], 23, "nonzero")], {"rounding_mode": ["S", mode]}))
    run_cases(torch, cases)


def test_add_sub_alpha(torch):
    """alpha != 1 is one fused multiply-add in PyTorch's vectorised loop; its scalar tail loop (the
    last numel % 32 elements of a float16/bfloat16 tensor) rounds alpha * other first. The sizes
    here are multiples of 32 so every element takes the vectorised path."""
    cases = []
    for dt in DTYPES:
        for op in ("add", "sub"):
            for alpha in (2, -1, 0, 0.0, 3, 0.5, 0.3, True, False):
                cases.append(case(["f", op], [T(dt, [64], 30), T(dt, [64], 31)], {"alpha": ["S", alpha]}))
                cases.append(case(["f", op], [T(dt, [64], 30), ["S", 3]], {"alpha": ["S", alpha]}))
                cases.append(case(["m", op + "_"], [T(dt, [64], 30), T(dt, [64], 31)], {"alpha": ["S", alpha]}))
            cases.append(case(["f", op], [T(dt, [4], 30), T("float32", [4], 31)], {"alpha": ["S", 1.5]}))
    run_cases(torch, cases)


def test_integer_overflow_wraps(torch):
    cases = []
    for dt in INTS:
        info = np.iinfo(dt)
        big = ["T", dt, [4], [int(info.max), int(info.min), int(info.max) - 1, int(info.min) + 1], []]
        for op in ("add", "sub", "mul"):
            cases.append(case(["f", op], [big, big]))
            cases.append(case(["f", op], [big, ["S", 3]]))
        for op in ("neg", "abs"):
            cases.append(case(["f", op], [big]))
        cases.append(case(["f", "pow"], [big, ["S", 3]]))
        cases.append(case(["f", "pow"], [["T", dt, [4], [3, 5, 7, 2], []], ["S", 40]]))
        cases.append(case(["f", "floor_divide"], [big, ["T", dt, [4], [-1 if info.min else 1, -1 if info.min else 1, 7, 2], []]]))
        cases.append(case(["f", "remainder"], [big, ["T", dt, [4], [-1 if info.min else 1, 5, 7, 3], []]]))
        cases.append(case(["f", "fmod"], [big, ["T", dt, [4], [-1 if info.min else 1, 5, 7, 3], []]]))
    run_cases(torch, cases)


def test_integer_division_by_zero(torch):
    cases = []
    for dt in INTS:
        a, z = ["T", dt, [3], [5, 0, 7], []], ["T", dt, [3], [1, 0, 2], []]
        for op in ("floor_divide", "remainder", "fmod"):
            cases.append(case(["f", op], [a, z]))
            cases.append(case(["f", op], [a, ["S", 0]]))
            cases.append(case(["f", op], [a, ["S", False]]))
        for mode in ("trunc", "floor"):
            cases.append(case(["f", "div"], [a, z], {"rounding_mode": ["S", mode]}))
        cases.append(case(["f", "div"], [a, z]))  # true division: inf / nan
        cases.append(case(["o", "floordiv"], [a, ["S", 0]]))
        cases.append(case(["o", "mod"], [["S", 3], z]))
        cases.append(case(["f", "remainder"], [a, ["S", 0.0]]))
    for dt in FLOATS:
        a, z = T(dt, [8], 40), ["T", dt, [8], [0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0], []]
        for op in ("div", "floor_divide", "remainder", "fmod"):
            cases.append(case(["f", op], [a, z]))
    run_cases(torch, cases)


def test_pow_special_exponents_exact(torch):
    """x ** 2, 3, -2, -1 are products/reciprocals in PyTorch (float32, float64, bfloat16): exact bits."""
    cases = []
    for dt in ("float32", "float64", "bfloat16", "int64", "int8"):
        for e in (2, 3, -2, -1, 2.0, 0, 1, True, False):
            if dt.startswith("int") and e in (-2, -1):
                continue
            x = T(dt, [64], 45, "plain")
            cases.append(case(["f", "pow"], [x, ["S", e]]))
            cases.append(case(["o", "pow"], [T(dt, [8, 8], 46, "plain", views=[["perm", [1, 0]]]), ["S", e]]))
    run_cases(torch, cases)


def test_pow(torch):
    cases = []
    for dt in DTYPES:
        x = T(dt, [12], 41, "any")
        for e in (2, 3, 0, 1, -1, -2, 0.5, 2.0, -0.5, True, 3.5, 1000, 1e10):
            cases.append(case(["f", "pow"], [x, ["S", e]], tol=True))
            cases.append(case(["m", "pow"], [x, ["S", e]], tol=True))
            cases.append(case(["o", "pow"], [["S", e], T(dt, [12], 42, "small")], tol=True))
        cases.append(case(["f", "pow"], [T(dt, [12], 43, "small"), T(dt, [12], 44, "small")], tol=True))
        cases.append(case(["f", "pow"], [T(dt, [12], 43, "small"), T("int64", [], 44, "small")], tol=True))
    run_cases(torch, cases)


# ---- type promotion -----------------------------------------------------------------------------------

def test_result_type(torch):
    def m_obj(kind, dt):
        return {"dim": lambda: mt.ones(2, dtype=getattr(mt, dt)), "zero": lambda: mt.tensor(1, dtype=getattr(mt, dt))}[kind]()

    def t_obj(kind, dt):
        return {"dim": lambda: torch.ones(2, dtype=getattr(torch, dt)),
                "zero": lambda: torch.tensor(1, dtype=getattr(torch, dt))}[kind]()

    failures = []
    kinds = ["dim", "zero"]
    for ka, kb in itertools.product(kinds, kinds):
        for da, db in itertools.product(DTYPES, DTYPES):
            exp = torch.result_type(t_obj(ka, da), t_obj(kb, db))
            got = mt.result_type(m_obj(ka, da), m_obj(kb, db))
            if str(got) != str(exp):
                failures.append(f"{ka} {da}, {kb} {db}: {got} expected {exp}")
    for ka in kinds:
        for da in DTYPES:
            for s in (1, 2.5, True, -0.0):
                exp = torch.result_type(t_obj(ka, da), s)
                got = mt.result_type(m_obj(ka, da), s)
                exp2, got2 = torch.result_type(s, t_obj(ka, da)), mt.result_type(s, m_obj(ka, da))
                if str(got) != str(exp) or str(got2) != str(exp2):
                    failures.append(f"{ka} {da}, {s!r}: {got}/{got2} expected {exp}/{exp2}")
    for s1, s2 in itertools.product((1, 2.5, True), repeat=2):
        exp, got = torch.result_type(s1, s2), mt.result_type(s1, s2)
        if str(got) != str(exp):
            failures.append(f"{s1!r}, {s2!r}: {got} expected {exp}")
    for da, db in itertools.product(DTYPES, DTYPES):
        if str(mt.promote_types(getattr(mt, da), getattr(mt, db))) != str(torch.promote_types(getattr(torch, da), getattr(torch, db))):
            failures.append(f"promote_types({da}, {db})")
        if mt.can_cast(getattr(mt, da), getattr(mt, db)) != torch.can_cast(getattr(torch, da), getattr(torch, db)):
            failures.append(f"can_cast({da}, {db})")
    assert not failures, "\n".join(failures[:40])


def test_result_type_under_default_dtype(torch):
    """Python floats and integer->float ops follow the default dtype."""
    cases = [case(["f", "add"], [T("int32", [3], 1), ["S", 2.5]]), case(["f", "sqrt"], [T("int64", [3], 1)]),
             case(["f", "div"], [T("int16", [3], 1), T("int16", [3], 2, "nonzero")]),
             case(["f", "mul"], [T("bfloat16", [3], 1), ["S", 2.5]]),
             case(["f", "add"], [T("int64", [3], 1), T("float16", [], 2)])]
    for default in ("float64", "float16", "bfloat16"):
        torch.set_default_dtype(getattr(torch, default))
        mt.set_default_dtype(getattr(mt, default))
        try:
            run_cases(torch, cases)
        finally:
            torch.set_default_dtype(torch.float32)
            mt.set_default_dtype(mt.float32)


def test_zero_dim_promotion(torch):
    """A 0-dim tensor of a higher category promotes an n-dim tensor; of the same category it does not."""
    cases = []
    for d_dim, d_zero in itertools.product(DTYPES, DTYPES):
        for op in ("add", "mul", "maximum", "eq"):
            cases.append(case(["f", op], [T(d_dim, [5], 50), T(d_zero, [], 51)]))
            cases.append(case(["f", op], [T(d_zero, [], 51), T(d_dim, [5], 50)]))
    run_cases(torch, cases)


# ---- out= and in place --------------------------------------------------------------------------------

def test_out(torch):
    cases = []
    for dt in DTYPES:
        for out_dt in DTYPES:
            for op in ("add", "mul", "div", "eq", "maximum", "bitwise_and", "logical_xor"):
                cases.append(case(["f", op], [T(dt, [2, 3], 60), T(dt, [2, 3], 61, kind_for(op, 1))], {"out": ["R", 2]},
                                  extra=[T(out_dt, [2, 3], 62)]))
    for dt in ("float32", "int64", "bfloat16"):
        a, b = T(dt, [2, 3], 63), T(dt, [3], 64)
        for out in (T(dt, [3, 2], 65, views=[["perm", [1, 0]]]),                 # non-contiguous out keeps strides
                    T(dt, [0], 66), T(dt, [5], 67),                              # resized (with a warning if non-empty)
                    T(dt, [2, 6], 68, views=[["slice", [[0, 2, 1], [0, 6, 2]]]]),
                    T(dt, [1, 3], 69, views=[["expand", [2, 3]]])):              # overlapping out: error
            cases.append(case(["f", "add"], [a, b], {"out": ["R", 2]}, extra=[out]))
            cases.append(case(["f", "sub"], [a, b], {"out": ["R", 2], "alpha": ["S", 2]}, extra=[out]))
        cases.append(case(["f", "add"], [a, b], {"out": ["R", 0]}))                # out aliases an input
        cases.append(case(["f", "mul"], [a, b], {"out": ["R", 1]}))                # broadcast into a smaller input
        cases.append(case(["f", "neg" if dt != "bool" else "abs"], [a], {"out": ["R", 0]}))
    run_cases(torch, cases)


INPLACE_METHODS = ["add_", "sub_", "mul_", "div_", "floor_divide_", "remainder_", "fmod_", "pow_", "bitwise_and_",
                   "bitwise_or_", "bitwise_xor_", "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_and_",
                   "logical_or_", "logical_xor_", "clamp_", "clamp_min_", "clamp_max_"]
INPLACE_OPERATORS = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor"]


@pytest.mark.parametrize("name", INPLACE_METHODS + INPLACE_OPERATORS)
def test_inplace(torch, name):
    """x.add_(y), x += y: result written into x (any dtype y can be cast to), broadcasting of y only."""
    kind = "o" if name in INPLACE_OPERATORS else "m"
    base = name.strip("_").lstrip("i") if kind == "o" else name[:-1]
    base = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder", "and": "bitwise_and",
            "or": "bitwise_or", "xor": "bitwise_xor", "floor_divide": "floor_divide"}.get(base, base)
    tol = base in ("pow", "div")
    cases = []
    for dx, dy in itertools.product(DTYPES, DTYPES):
        cases.append(case([kind, name], [T(dx, [2, 3], 70, "any"), T(dy, [3], 71, kind_for(base, 1))], tol=tol))
    for dt in DTYPES:
        cases.append(case([kind, name], [T(dt, [3], 72), T(dt, [2, 3], 73, kind_for(base, 1))], tol=tol))   # broadcast error
        cases.append(case([kind, name], [T(dt, [4, 3], 74, views=[["perm", [1, 0]]]), T(dt, [4], 75, kind_for(base, 1))], tol=tol))
        cases.append(case([kind, name], [T(dt, [3], 76), ["S", 2]], tol=tol))
        cases.append(case([kind, name], [T(dt, [3], 76), ["S", 2.5]], tol=tol))
        cases.append(case([kind, name], [T(dt, [3], 76), ["S", True]], tol=tol))
        cases.append(case([kind, name], [T(dt, [3], 77), ["R", 0]], tol=tol))                     # x op= x
    run_cases(torch, cases)


def _error_text(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def test_memory_overlap_errors(torch):
    """Writing into a tensor that overlaps an input partially, or into itself (expanded), is refused
    with PyTorch's texts; identical layouts (x.add_(x)) and disjoint views are fine."""
    def scenarios(lib):
        a = lib.arange(12.0)
        sq = lib.arange(9.0).reshape(3, 3)
        return {
            "shifted views": lambda: a[1:].add_(a[:-1]),
            "transposed self": lambda: sq.add_(sq.t()),
            "out overlaps input": lambda: lib.add(a[:4], a[4:8], out=a[2:6]),
            "expanded self": lambda: lib.ones(1, 3).expand(2, 3).mul_(2),
            "expanded out": lambda: lib.neg(lib.ones(3), out=lib.zeros(1).expand(3)),
            "same layout": lambda: sq.add_(sq),
            "disjoint views": lambda: a[:6].add_(a[6:]),
            "sliced out, disjoint": lambda: lib.mul(a[:3], 2, out=a[9:]),
        }
    for name, fn in scenarios(torch).items():
        exp = _error_text(fn)
        got = _error_text(scenarios(mt)[name])
        assert got == exp, (name, got, exp)
    for lib in (torch, mt):  # the allowed ones computed the same values
        a = lib.arange(12.0)
        a[:6].add_(a[6:])
        lib.mul(a[:3], 2, out=a[9:])
        sq = lib.arange(9.0).reshape(3, 3)
        sq.add_(sq)
        if lib is torch:
            expected = (a.tolist(), sq.tolist())
    assert (a.tolist(), sq.tolist()) == expected


def test_inplace_version_and_identity(torch):
    x = mt.ones(3)
    v = x._version
    y = x.add_(1)
    assert y is x and x._version > v
    x += 2
    assert x.tolist() == [4.0, 4.0, 4.0]
    xt = mt.ones(2, 3).t()
    xt.mul_(mt.tensor([1.0, 2.0]))
    assert xt.stride() == (1, 3) and xt.tolist() == [[1.0, 2.0]] * 3


# ---- ternary ops ---------------------------------------------------------------------------------------

def test_where(torch):
    cases = []
    for da, db in itertools.product(DTYPES, DTYPES):
        cases.append(case(["f", "where"], [T("bool", [8], 80), T(da, [8], 81), T(db, [8], 82)]))
    for dt in DTYPES:
        c = T("bool", [3, 4], 83)
        cases += [case(["f", "where"], [c, T(dt, [4, 3], 84, views=[["perm", [1, 0]]]), T(dt, [4], 85)]),
                  case(["f", "where"], [T("bool", [3, 1], 86), T(dt, [1, 4], 87), T(dt, [], 88)]),
                  case(["f", "where"], [c, T(dt, [3, 4], 89), ["S", 2.5]]),
                  case(["f", "where"], [c, ["S", 1], T(dt, [3, 4], 89)]),
                  case(["f", "where"], [c, T(dt, [], 90), T(dt, [], 91)]),
                  case(["f", "where"], [T(dt, [3, 4], 92), T(dt, [3, 4], 93), T(dt, [3, 4], 94)]),   # non-bool condition
                  case(["m", "where"], [T(dt, [3, 4], 95), c, T(dt, [4], 96)]),
                  case(["f", "where"], [T("bool", [0, 4], 97), T(dt, [4], 98), T(dt, [0, 1], 99)]),
                  case(["f", "where"], [c, T(dt, [3, 4], 89), T(dt, [3, 4], 90)], {"out": ["R", 3]}, extra=[T(dt, [3, 4], 0)])]
    run_cases(torch, cases)


def test_clamp(torch):
    cases = []
    for dt in DTYPES:
        x = T(dt, [12], 100)
        lo, hi = T(dt, [12], 101), T(dt, [12], 102)
        for kw in ({"min": ["S", 0], "max": ["S", 5]}, {"min": ["S", -1.5], "max": ["S", 2.5]}, {"min": ["S", 1]},
                   {"max": ["S", 0]}, {"min": ["S", 3], "max": ["S", 1]}, {"min": ["S", float("nan")]},
                   {"max": ["S", 0.5]}, {"min": ["S", True]}, {"max": ["S", False]}, {"min": ["S", True], "max": ["S", True]},
                   {"min": lo, "max": hi}, {"min": lo}, {"max": hi}, {"min": T(dt, [], 103)},
                   {"min": T("float32", [], 103), "max": T(dt, [], 104)}, {"min": ["N"], "max": ["N"]}, {}):
            cases.append(case(["f", "clamp"], [x], kw))
            cases.append(case(["m", "clamp_"], [x], kw))
        cases.append(case(["f", "clamp"], [T(dt, [4, 3], 105, views=[["perm", [1, 0]]]), T(dt, [4], 106),
                                          T(dt, [3, 1], 107)]))
        cases.append(case(["f", "clamp_min"], [x, ["S", 2]]))
        cases.append(case(["f", "clamp_max"], [x, T(dt, [12], 108)]))
        cases.append(case(["f", "clip"], [x, ["S", -1], ["S", 1]]))
        cases.append(case(["f", "clamp"], [x], {"min": ["S", 0], "max": ["S", 1], "out": ["R", 1]}, extra=[T(dt, [12], 0)]))
    for da, db in itertools.product(DTYPES, DTYPES):
        cases.append(case(["f", "clamp"], [T(da, [6], 109), T(db, [6], 110), T(db, [6], 111)]))
    run_cases(torch, cases)


def test_lerp(torch):
    cases = []
    for dt in DTYPES:
        a, b = T(dt, [16], 120, "plain"), T(dt, [16], 121, "plain")
        for w in (0.25, 0.7, 0.5, -0.3, 1.5, 0.0, 1.0, 2, True):
            cases.append(case(["f", "lerp"], [a, b, ["S", w]]))
            cases.append(case(["m", "lerp_"], [a, b, ["S", w]]))
        cases.append(case(["f", "lerp"], [a, b, T(dt, [16], 122, "unit")]))
        cases.append(case(["f", "lerp"], [T(dt, [4, 4], 123, "plain", views=[["perm", [1, 0]]]), T(dt, [4], 124, "plain"),
                                          T(dt, [4, 1], 125, "unit")]))
        cases.append(case(["f", "lerp"], [a, b, T(dt, [], 126, "unit")]))
        cases.append(case(["f", "lerp"], [T(dt, [16], 127), T(dt, [16], 128), ["S", 0.3]]))    # specials
        cases.append(case(["f", "lerp"], [a, T("float64" if dt != "float64" else "float32", [16], 121), ["S", 0.5]]))
        cases.append(case(["f", "lerp"], [a, b, T("float64" if dt != "float64" else "float32", [16], 122, "unit")]))
    run_cases(torch, cases)


def test_addcmul_addcdiv(torch):
    cases = []
    for dt in DTYPES:
        x, y, z = T(dt, [16], 130), T(dt, [16], 131), T(dt, [16], 132, "nonzero")
        for v in (1, 2, -1, 0.5, 0.3, True, 300, 1e300):
            cases.append(case(["f", "addcmul"], [x, y, z], {"value": ["S", v]}))
            cases.append(case(["f", "addcdiv"], [x, y, z], {"value": ["S", v]}))
            cases.append(case(["m", "addcmul_"], [x, y, z], {"value": ["S", v]}))
            cases.append(case(["m", "addcdiv_"], [x, y, z], {"value": ["S", v]}))
        cases.append(case(["f", "addcmul"], [T(dt, [4, 4], 133, views=[["perm", [1, 0]]]), T(dt, [4], 134), T(dt, [4, 1], 135)]))
        cases.append(case(["f", "addcdiv"], [T(dt, [4, 4], 133, views=[["perm", [1, 0]]]), T(dt, [4], 134), T(dt, [4, 1], 135, "nonzero")]))
    for da, db in itertools.product(DTYPES, DTYPES):
        cases.append(case(["f", "addcmul"], [T(da, [6], 136), T(db, [6], 137), T(db, [6], 138)]))
        cases.append(case(["f", "addcdiv"], [T(da, [6], 136), T(db, [6], 137), T(db, [6], 138, "nonzero")]))
    run_cases(torch, cases)


def test_masked_fill(torch):
    cases = []
    for dt in DTYPES:
        x, m = T(dt, [3, 4], 140), T("bool", [3, 4], 141)
        for v in (0, 2, -1, 2.5, float("nan"), float("inf"), True, 300):
            cases.append(case(["f", "masked_fill"], [x, m, ["S", v]]))
            cases.append(case(["m", "masked_fill_"], [x, m, ["S", v]]))
        for vdt in DTYPES:
            cases.append(case(["f", "masked_fill"], [x, T("bool", [4], 142), T(vdt, [], 143)]))
        cases += [case(["f", "masked_fill"], [x, T(dt, [3, 4], 144), ["S", 1]]),                 # non-bool mask
                  case(["f", "masked_fill"], [x, m, T(dt, [4], 145)]),                          # non-0-dim value
                  case(["f", "masked_fill"], [T(dt, [4, 3], 146, views=[["perm", [1, 0]]]), T("bool", [3, 1], 147), ["S", 1]]),
                  case(["m", "masked_fill_"], [T(dt, [4], 148), m, ["S", 1]])]                  # mask broadcasts self: error
    run_cases(torch, cases)


def test_nan_to_num(torch):
    cases = []
    for dt in DTYPES:
        x = ["T", dt, [8], G.values(dt, 8, 150), []] if dt not in FLOATS else \
            ["T", dt, [8], [float(v) for v in G.representable([float("nan"), float("inf"), float("-inf"), 1.5, -0.0, 3e38, -2.0, 7.0], dt)], []]
        for kw in ({}, {"nan": ["S", 1.5]}, {"posinf": ["S", 9.0]}, {"neginf": ["S", -9]}, {"nan": ["S", 2], "posinf": ["S", 1e6], "neginf": ["S", -1e6]},
                   {"posinf": ["S", 1e300]}):
            cases.append(case(["f", "nan_to_num"], [x], kw))
            cases.append(case(["m", "nan_to_num_"], [x], kw))
        cases.append(case(["f", "nan_to_num"], [T(dt, [4, 3], 151, views=[["perm", [1, 0]]])]))
        cases.append(case(["f", "nan_to_num"], [x], {"out": ["R", 1]}, extra=[T(dt, [8], 0)]))
    run_cases(torch, cases)


# ---- random layouts: output strides follow PyTorch's TensorIterator ------------------------------------

def _random_view(rng, shape, dt, seed):
    """A tensor of `shape` reached from a contiguous base by permute, stepped slices and expand."""
    nd = len(shape)
    perm = list(range(nd))
    rng.shuffle(perm)
    steps = [rng.choice([1, 1, 2]) for _ in range(nd)]
    expand = [rng.random() < 0.25 for _ in range(nd)]
    pre = [1 if e else s for s, e in zip(shape, expand)]
    big = [p * st for p, st in zip(pre, steps)]
    base = [0] * nd
    for i, p in enumerate(perm):
        base[p] = big[i]
    views = [["perm", perm], ["slice", [[0, b, st] for b, st in zip(big, steps)]]]
    if any(expand):
        views.append(["expand", list(shape)])
    return T(dt, base, seed, "nonzero", views)


@pytest.mark.parametrize("seed", range(4))
def test_random_layouts(torch, seed):
    """Permuted, stepped, expanded, size-0/size-1 operands of up to 5 dims, mixed dtypes (converted
    operands), one to three inputs; also clone and .to(): dtype, shape, strides and values."""
    import random
    rng = random.Random(seed)
    cases = []
    for _ in range(150):
        nd = rng.randint(0, 5)
        shape = [rng.choice([0, 1, 2, 3, 4] if rng.random() < 0.1 else [1, 2, 3, 4]) for _ in range(nd)]

        def sub():
            k = rng.randint(0, nd)
            return [1 if rng.random() < 0.3 else d for d in shape[nd - k:]]
        op = rng.choice(["add", "mul", "div", "maximum", "eq", "remainder", "where", "clamp", "lerp", "addcmul",
                         "neg", "exp", "clone", "float", "isnan"])
        dt = rng.choice(["float32", "int32", "bfloat16", "float64"])
        if op == "where":
            c = case(["f", op], [_random_view(rng, sub(), "bool", 1), _random_view(rng, sub(), dt, 2),
                                 _random_view(rng, sub(), dt, 3)])
        elif op in ("clamp", "lerp", "addcmul"):
            dt = "float32" if op == "lerp" and dt == "int32" else dt
            c = case(["f", op], [_random_view(rng, sub(), dt, k) for k in (1, 2, 3)], tol=op == "lerp")
        elif op in ("neg", "exp", "clone", "float", "isnan"):
            c = case(["m", op], [_random_view(rng, shape, dt, 1)], tol=op == "exp")
        else:
            c = case(["f", op], [_random_view(rng, sub(), dt, 1),
                                 _random_view(rng, sub(), rng.choice([dt, "float32", "int64"]), 2)])
        cases.append(c)
    run_cases(torch, cases)


# ---- the C core never crashes on odd inputs -----------------------------------------------------------

def test_large_strided_parallel(torch):
    """Large inputs take the multi-threaded path: same values as small ones."""
    cases = []
    for dt in ("float32", "bfloat16", "int64"):
        a = T(dt, [300, 257], 160, "plain")
        b = T(dt, [257], 161, "nonzero")
        cases.append(case(["f", "add"], [a, b]))
        cases.append(case(["f", "mul"], [T(dt, [257, 300], 162, views=[["perm", [1, 0]]]), b]))
        cases.append(case(["f", "div"], [a, b], {"rounding_mode": ["S", "floor"]}))
    run_cases(torch, cases)


# ---- goldens: always run, with or without torch -----------------------------------------------------

def test_goldens():
    doc = G.load_goldens()
    records = doc["records"]
    assert len(records) >= len(DTYPES) * (len(UNARY) + len(BINARY))
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in records:
            diff = G.compare(G.outcome(mt, r["case"]), r["expected"], r["case"])
            if diff:
                failures.append(f"{describe(r['case'])}: {diff}")
    assert not failures, f"{len(failures)} of {len(records)} golden cases differ:\n" + "\n".join(failures[:int(os.environ.get("MT_EW_SHOW", 25))])


def test_goldens_cover_every_op_and_dtype():
    """The committed fixture is the generator's current case list and covers every op x dtype."""
    doc = G.load_goldens()
    dump = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731 - NaN-safe comparison
    assert dump([r["case"] for r in doc["records"]]) == dump(G.golden_cases()), \
        "tests/fixtures/elementwise_goldens.json is stale: run python tests/fixtures/make_elementwise_goldens.py"
    seen = set()
    for r in doc["records"]:
        c = r["case"]
        dts = {a[1] for a in c["args"] if a[0] == "T"}
        for d in dts:
            seen.add((c["call"][1], d))
    for op in UNARY + BINARY + G.TERNARY:
        for dt in DTYPES:
            assert (op, dt) in seen, (op, dt)
    assert os.path.getsize(G.GOLDEN_PATH) < 2_000_000


def test_numbers_as_input(torch):
    """torch.add/sub/mul/div (and their aliases) take a Python number as `input`, giving a 0-dim
    tensor; every other binary function raises PyTorch's argument error."""
    cases = []
    names = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
             "maximum", "atan2", "remainder", "eq", "pow", "rsub", "fmod", "xlogy", "bitwise_and", "bitwise_xor"]
    for a, b in [(7, 2), (7, 2.0), (True, 2), (7.5, 2), (True, True), (-7, 2), (1e300, 1)]:
        for name in names:
            cases.append(case(["f", name], [["S", a], ["S", b]]))
    cases += [case(["f", "add"], [["S", 7], ["S", 2]], {"alpha": ["S", 3]}),
              case(["f", "div"], [["S", -7], ["S", 2]], {"rounding_mode": ["S", "trunc"]}),
              case(["f", "rsub"], [["S", 7], T("float32", [3], 1)])]
    run_cases(torch, cases)
