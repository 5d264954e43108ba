"""mindtorch_v2._tensor_str.format_tensor against repr() of real PyTorch tensors.

The inputs to format_tensor are built the way mindtorch does it: gather the indices chosen
by summarize_indices, then .tolist(), .shape and .dtype only."""
import math
import random

import pytest

from mindtorch_v2 import _tensor_str as ts

torch = pytest.importorskip("torch")

DEFAULTS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


@pytest.fixture(autouse=True)
def _reset_print_options():
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    old_default = torch.get_default_dtype()
    yield
    torch.set_default_dtype(old_default)
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")


def set_both(**kw):
    torch.set_printoptions(**kw)
    ts.set_printoptions(**kw)


def _gather(t, keep):
    for d, idx in enumerate(keep):
        if len(idx) != t.shape[d]:
            t = t.index_select(d, torch.tensor(idx, dtype=torch.long))
    return t.tolist()


def mt_repr(t, prefix="tensor("):
    shape = tuple(t.shape)
    dt = t.dtype
    name = str(dt).split(".")[-1]
    if t.is_meta or t.numel() == 0:
        values = []
    else:
        values = _gather(t.detach(), ts.summarize_indices(shape))
    grad_fn = t.grad_fn
    return ts.format_tensor(
        values=values, shape=shape, dtype_name=name, is_floating=dt.is_floating_point,
        is_bool=dt == torch.bool, default_dtype_name=str(torch.get_default_dtype()).split(".")[-1],
        device=None if t.device.type == "cpu" else str(t.device),
        requires_grad=t.requires_grad,
        grad_fn_name=type(grad_fn).__name__ if grad_fn is not None else None,
        is_meta=t.is_meta, prefix=prefix)


def check(t, prefix="tensor("):
    expected = repr(t)
    got = mt_repr(t, prefix)
    assert got == expected, f"\n--- got ---\n{got}\n--- expected ---\n{expected}"


# ---------------------------------------------------------------------------------------
# fixed cases

CASES = {
    "int": lambda: torch.tensor([1, 2, 3]),
    "int_neg_wide": lambda: torch.tensor([[1, -20000, 3], [400, 5, -6]]),
    "int_scalar": lambda: torch.tensor(7),
    "int32": lambda: torch.tensor([1, 2, 3], dtype=torch.int32),
    "int16": lambda: torch.tensor([-1, 2], dtype=torch.int16),
    "int8": lambda: torch.tensor([-128, 0, 127], dtype=torch.int8),
    "uint8": lambda: torch.tensor([0, 17, 255], dtype=torch.uint8),
    "float": lambda: torch.tensor([1.5, -2.25, 3.125]),
    "float_precise": lambda: torch.tensor([1.123456789, 2.0, 3.3]),
    "float_int_valued": lambda: torch.tensor([1.0, 2.0, -3.0]),
    "float_int_valued_2d": lambda: torch.tensor([[1.0, 200.0], [-3.0, 0.0]]),
    "float_zero": lambda: torch.zeros(3),
    "float_scalar": lambda: torch.tensor(3.5),
    "float_scalar_int": lambda: torch.tensor(3.0),
    "float_scalar_tiny": lambda: torch.tensor(1e-5),
    "float_scalar_big": lambda: torch.tensor(1e9),
    "float_scalar_nan": lambda: torch.tensor(float("nan")),
    "float_scalar_neginf": lambda: torch.tensor(float("-inf")),
    "float_scalar_negzero": lambda: torch.tensor(-0.0),
    "sci_ratio": lambda: torch.tensor([1.0, 2000.5]),
    "sci_ratio_int": lambda: torch.tensor([1.0, 2000.0]),
    "sci_small": lambda: torch.tensor([1e-5, 2e-5]),
    "sci_big": lambda: torch.tensor([1e9, 2e9]),
    "sci_big_int": lambda: torch.tensor([123456789.0, 1.0]),
    "sci_huge": lambda: torch.tensor([1e38, -3e-38]),
    "float64_huge": lambda: torch.tensor([1e300, 1e-300], dtype=torch.float64),
    "nan_inf_mix": lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5]),
    "nan_inf_int": lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0]),
    "nan_inf_only": lambda: torch.tensor([float("nan"), float("inf"), -float("inf")]),
    "nan_inf_sci": lambda: torch.tensor([float("nan"), 1e-7, 3.0]),
    "neg_zero": lambda: torch.tensor([-0.0, 0.0, 1.0]),
    "neg_zero_frac": lambda: torch.tensor([-0.0, 0.5]),
    "neg_zero_only": lambda: torch.tensor([-0.0, 0.0]),
    "neg_zero_sci": lambda: torch.tensor([-0.0, 1e-6]),
    "bool": lambda: torch.tensor([True, False, True]),
    "bool_2d": lambda: torch.tensor([[True], [False]]),
    "bool_scalar": lambda: torch.tensor(False),
    "float16": lambda: torch.tensor([1.1, 2.2, 65504.0], dtype=torch.float16),
    "float16_int": lambda: torch.tensor([1.0, 2.0], dtype=torch.float16),
    "float16_scalar": lambda: torch.tensor(0.1, dtype=torch.float16),
    "bfloat16": lambda: torch.tensor([0.1, 1e-3, 3.0e20], dtype=torch.bfloat16),
    "bfloat16_plain": lambda: torch.tensor([0.1, 0.2, 0.3], dtype=torch.bfloat16),
    "float64": lambda: torch.tensor([0.1, 0.2], dtype=torch.float64),
    "float64_scalar": lambda: torch.tensor(0.1, dtype=torch.float64),
    "int64_big": lambda: torch.tensor([2**62, -(2**63)]),
    "empty_1d": lambda: torch.tensor([]),
    "empty_1d_int": lambda: torch.tensor([], dtype=torch.int64),
    "empty_1d_bool": lambda: torch.tensor([], dtype=torch.bool),
    "empty_0x3": lambda: torch.empty(0, 3),
    "empty_2x0x4": lambda: torch.empty(2, 0, 4),
    "empty_2x0x4_f16": lambda: torch.empty(2, 0, 4, dtype=torch.float16),
    "empty_0x3_int": lambda: torch.empty(0, 3, dtype=torch.int32),
    "summ_1d_2000": lambda: torch.arange(2000),
    "summ_1d_2000_float": lambda: torch.arange(2000, dtype=torch.float32) / 7,
    "summ_2d_100": lambda: torch.arange(10000, dtype=torch.float32).reshape(100, 100) / 3,
    "summ_2d_100_int": lambda: torch.arange(10000).reshape(100, 100),
    "summ_3d": lambda: torch.linspace(-5, 5, 20 * 30 * 40).reshape(20, 30, 40),
    "summ_3d_narrow": lambda: torch.arange(2 * 600 * 5).reshape(2, 600, 5) * 1.0,
    "summ_4d": lambda: torch.arange(10 * 2 * 10 * 7, dtype=torch.float64).reshape(10, 2, 10, 7),
    "summ_2d_sci": lambda: torch.logspace(-10, 10, 2000).reshape(40, 50),
    "summ_bool": lambda: torch.arange(3000) % 3 == 0,
    "summ_hidden_big_value": lambda: torch.cat([torch.ones(5), torch.full((1990,), 1e10), torch.ones(5)]),
    "wrap_1d": lambda: torch.arange(100, dtype=torch.float32) * 1.37,
    "wrap_1d_int": lambda: torch.arange(200) * 123,
    "wrap_2d": lambda: torch.arange(3 * 40, dtype=torch.float32).reshape(3, 40) / 9,
    "wrap_3d": lambda: torch.arange(2 * 3 * 30, dtype=torch.float32).reshape(2, 3, 30) - 90.5,
    "wrap_suffix": lambda: torch.arange(25, dtype=torch.float16) * 1000.5,
    "suffix_wrap_single_line": lambda: torch.arange(11, dtype=torch.float16) / 3,
    "suffix_wrap_bf16": lambda: torch.arange(12, dtype=torch.bfloat16) / 3,
    "single_col": lambda: torch.arange(5.0).reshape(5, 1),
    "shape_1x1x1": lambda: torch.ones(1, 1, 1),
    "requires_grad": lambda: torch.tensor([1.0, 2.5], requires_grad=True),
    "requires_grad_scalar": lambda: torch.tensor(2.0, requires_grad=True),
    "requires_grad_f64": lambda: torch.tensor([1.0, 2.5], dtype=torch.float64, requires_grad=True),
    "grad_fn_add": lambda: torch.tensor([1.0, 2.5], requires_grad=True) + 1,
    "grad_fn_mul_2d": lambda: torch.ones(2, 3, requires_grad=True) * 3.5,
    "grad_fn_sum": lambda: torch.ones(2, 3, requires_grad=True).sum(),
    "grad_fn_empty": lambda: torch.ones(0, 3, requires_grad=True) * 2,
    "grad_fn_wrap": lambda: (torch.arange(30, dtype=torch.float64) / 7).requires_grad_() * 2,
    "meta": lambda: torch.empty(2, 3, device="meta"),
    "meta_int": lambda: torch.empty(4, dtype=torch.int64, device="meta"),
    "meta_scalar": lambda: torch.empty((), dtype=torch.float16, device="meta"),
    "meta_grad": lambda: torch.empty(2, device="meta", requires_grad=True),
    "complex": lambda: torch.tensor([1 + 2j, -3.5 - 0.25j]),
    "complex_scalar": lambda: torch.tensor(1 - 1e-6j),
    "complex128": lambda: torch.tensor([1 + 0j, float("nan") - 0.0j], dtype=torch.complex128),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    check(CASES[name]())


@pytest.mark.parametrize("name", ["float", "summ_2d_100", "sci_small", "float_int_valued",
                                  "wrap_1d", "complex", "summ_3d"])
def test_precision_2(name):
    set_both(precision=2)
    check(CASES[name]())


@pytest.mark.parametrize("profile", ["default", "short", "full"])
@pytest.mark.parametrize("name", ["summ_1d_2000", "summ_2d_100", "summ_3d", "float_precise",
                                  "wrap_2d", "summ_bool"])
def test_profiles(profile, name):
    set_both(profile=profile)
    check(CASES[name]())


@pytest.mark.parametrize("sci_mode", [True, False])
@pytest.mark.parametrize("name", ["float", "float_int_valued", "sci_small", "sci_big_int",
                                  "nan_inf_mix", "neg_zero", "float16", "float_scalar_int",
                                  "summ_2d_sci"])
def test_forced_sci_mode(sci_mode, name):
    set_both(sci_mode=sci_mode)
    check(CASES[name]())


@pytest.mark.parametrize("kw", [dict(threshold=5), dict(threshold=5, edgeitems=1),
                                dict(threshold=0), dict(edgeitems=0), dict(threshold=5, edgeitems=0),
                                dict(linewidth=30), dict(linewidth=1), dict(linewidth=200),
                                dict(precision=0), dict(precision=10)])
@pytest.mark.parametrize("name", ["int", "float", "summ_2d_100", "summ_3d", "wrap_1d",
                                  "float_scalar", "bool_2d", "requires_grad", "float16",
                                  "empty_0x3"])
def test_options(kw, name):
    set_both(**kw)
    check(CASES[name]())


@pytest.mark.parametrize("name", ["float", "float64", "empty_1d", "empty_0x3", "meta",
                                  "complex", "complex128", "float16", "requires_grad"])
def test_default_dtype_float64(name):
    torch.set_default_dtype(torch.float64)
    check(CASES[name]())
    t = CASES[name]().float() if not CASES[name]().is_complex() else CASES[name]()
    check(t)


def test_parameter_prefix():
    p = torch.nn.Parameter(torch.tensor([[1.5, 2.0], [3.0, 4.25]]))
    assert "Parameter containing:\n" + mt_repr(p) == repr(p)


def test_subclass_prefix():
    class MyTensor(torch.Tensor):
        pass

    t = torch.arange(40, dtype=torch.float32).reshape(2, 20).as_subclass(MyTensor) / 3
    assert mt_repr(t, prefix="MyTensor(") == repr(t)


def test_full_values_are_summarized_too():
    """format_tensor also accepts the full nested list of a summarized tensor."""
    for t in (CASES["summ_3d"](), CASES["summ_1d_2000"](), CASES["summ_2d_sci"]()):
        dt = t.dtype
        got = ts.format_tensor(values=t.tolist(), shape=tuple(t.shape),
                               dtype_name=str(dt).split(".")[-1], is_floating=dt.is_floating_point,
                               is_bool=False, default_dtype_name="float32")
        assert got == repr(t)


def test_summarize_indices():
    assert ts.summarize_indices((4, 5)) == [[0, 1, 2, 3], [0, 1, 2, 3, 4]]
    assert ts.summarize_indices((2000,)) == [[0, 1, 2, 1997, 1998, 1999]]
    assert ts.summarize_indices((2, 600), edgeitems=1) == [[0, 1], [0, 599]]
    assert ts.summarize_indices((10, 10), threshold=50, edgeitems=5) == [list(range(10))] * 2
    assert ts.summarize_indices(()) == []
    assert ts.summarize_indices((0, 3)) == [[], [0, 1, 2]]
    # edgeitems=0: prints [...] whatever the values; one index per dim avoids empty gathers
    assert ts.summarize_indices((2000,), edgeitems=0) == [[0]]
    assert ts.summarize_indices((3, 2000), edgeitems=0) == [[0], [0]]


def test_get_set_printoptions():
    assert ts.get_printoptions() == DEFAULTS
    ts.set_printoptions(profile="short", precision=6, sci_mode=True)
    assert ts.get_printoptions() == dict(precision=6, threshold=1000, edgeitems=2, linewidth=80,
                                         sci_mode=True)
    ts.set_printoptions(linewidth=100)  # sci_mode resets to None, like PyTorch
    assert ts.get_printoptions()["sci_mode"] is None
    ts.set_printoptions(profile="full")
    assert ts.PRINT_OPTS.threshold == math.inf
    with ts.printoptions(precision=1):
        assert ts.PRINT_OPTS.precision == 1
    assert ts.PRINT_OPTS.precision == 4
    ts.set_printoptions(profile="default")
    torch.set_printoptions(profile="short", precision=6, sci_mode=True)
    ts.set_printoptions(profile="short", precision=6, sci_mode=True)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()


# ---------------------------------------------------------------------------------------
# randomized sweep

def _random_tensor(rng):
    dtype = rng.choice([torch.float32, torch.float32, torch.float64, torch.float16,
                        torch.bfloat16, torch.int64, torch.int32, torch.int8, torch.uint8,
                        torch.bool])
    ndim = rng.choice([0, 1, 1, 2, 2, 3, 4])
    shape = [rng.choice([1, 2, 3, 5, 8, 13]) for _ in range(ndim)]
    n = math.prod(shape)
    kind = rng.choice(["normal", "int", "tiny", "huge", "mixed"])
    vals = []
    for _ in range(n):
        if kind == "normal":
            v = rng.gauss(0, 1) * 10 ** rng.randint(-2, 3)
        elif kind == "int":
            v = float(rng.randint(-1000, 1000))
        elif kind == "tiny":
            v = rng.uniform(-1, 1) * 1e-6
        elif kind == "huge":
            v = rng.uniform(-1, 1) * 1e12
        else:
            v = rng.choice([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1.0,
                            rng.gauss(0, 100)])
        vals.append(v)
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    if dtype == torch.bool:
        return t > 0
    if not dtype.is_floating_point:
        t = torch.nan_to_num(t, nan=0.0, posinf=100.0, neginf=-100.0).clamp(-1e6, 1e6)
        info = torch.iinfo(dtype)
        return t.clamp(info.min, info.max).to(dtype)
    return t.to(dtype)


@pytest.mark.parametrize("seed", range(40))
def test_random(seed):
    rng = random.Random(seed)
    for _ in range(10):
        opts = dict(precision=rng.choice([0, 1, 2, 4, 4, 6, 8]),
                    threshold=rng.choice([1000, 1000, 20, 50, 5]),
                    edgeitems=rng.choice([3, 3, 1, 2, 4]),
                    linewidth=rng.choice([80, 80, 40, 120, 20]),
                    sci_mode=rng.choice([None, None, None, True, False]))
        set_both(**opts)
        t = _random_tensor(rng)
        if t.is_floating_point() and rng.random() < 0.3:
            t = t.requires_grad_() * 1 if rng.random() < 0.5 else t.requires_grad_()
        expected = repr(t)
        got = mt_repr(t)
        assert got == expected, f"{opts}\n--- got ---\n{got}\n--- expected ---\n{expected}"
