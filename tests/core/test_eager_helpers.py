"""torch's eager helpers against live PyTorch: the sym_* functions on Python numbers, while_loop,
get_device_module, init_num_threads, the autocast state functions (nesting counters and the deprecated
CPU setters) and torch.max_pool1d_with_indices with ATen's defaults."""
import math
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name, args", [
    ("sym_float", (3,)), ("sym_float", (2.5,)), ("sym_int", (3.9,)), ("sym_int", (-3.9,)), ("sym_int", (True,)),
    ("sym_max", (1, 2)), ("sym_max", (1, 1.0)), ("sym_max", (1.0, 1)), ("sym_max", (np.int64(4), 3)),
    ("sym_max", (1, "a")), ("sym_min", (2, -1.5)), ("sym_min", (3, 4)), ("sym_min", (None, 4)),
    ("sym_not", (True,)), ("sym_not", (0,)), ("sym_ite", (True, 1, 2)), ("sym_ite", (False, 1.0, 2.0)),
    ("sym_ite", (1, 1, 2)), ("sym_ite", (True, 1, 2.0)), ("sym_sqrt", (16,)), ("sym_sqrt", (2.0,)),
    ("sym_sqrt", (-1.0,)), ("sym_sum", ([1, 2, 3],)), ("sym_sum", (1, 2.5)), ("sym_sum", ((),)),
])
def test_sym_functions(name, args):
    ours, theirs = _outcome(lambda: getattr(mt, name)(*args)), _outcome(lambda: getattr(torch, name)(*args))
    if ours[0] == "AssertionError":  # the message names PyTorch's Sym types
        assert theirs[0] == "AssertionError"
        return
    assert ours == theirs and type(ours[1]) is type(theirs[1])


@pytest.fixture(autouse=True)
def _keep_validation():
    """PyTorch's while_loop runs through torch.compile, and dynamo turns the distributions' argument
    validation off for the whole process: restore it for the tests that follow"""
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def test_while_loop():
    for L in (torch, mt):
        i, x = L.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (L.tensor(0), L.ones(2)))
        assert int(i) == 3 and x.tolist() == [8.0, 8.0]
        n, y = L.while_loop(lambda n, y: n < 2, lambda n, y: (n + 1, y + n), (0, L.zeros(2)))
        assert n == 2 and y.tolist() == [1.0, 1.0]
        start = L.ones(2)
        out = L.while_loop(lambda x: x.sum() > 10, lambda x: (x - 1,), (start,))
        assert out[0].tolist() == [1.0, 1.0] and out[0] is not start  # no iteration: a copy comes back


@pytest.mark.parametrize("case", ["cond_int", "body_list", "body_len", "inputs_float", "not_callable", "inputs_not_seq"])
def test_while_loop_errors(case):
    def run(L):
        x = L.ones(2)
        if case == "cond_int":
            return L.while_loop(lambda x: 1, lambda x: (x,), (x,))
        if case == "body_list":
            return L.while_loop(lambda x: x.sum() < 5, lambda x: [x + 1], (x,))
        if case == "body_len":
            return L.while_loop(lambda x: x.sum() < 5, lambda x: (x + 1, x), (x,))
        if case == "inputs_float":
            return L.while_loop(lambda x, f: x.sum() < 5, lambda x, f: (x + 1, f), (x, 1.5))
        if case == "not_callable":
            return L.while_loop(None, lambda x: (x,), (x,))
        return L.while_loop(lambda x: x.sum() < 5, lambda x: (x + 1,), x)
    ours, theirs = _outcome(lambda: run(mt)), _outcome(lambda: run(torch))
    if theirs[0] == "UncapturedHigherOrderOpError":  # PyTorch compiles the loop even eagerly: dynamo's RuntimeError
        assert ours[0] == "RuntimeError" or ours[0] == "AssertionError" and case == "body_len"
    elif case == "not_callable":
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]


def test_get_device_module_and_threads():
    assert mt.get_device_module() is mt.cpu and mt.get_device_module("cpu") is mt.cpu
    assert mt.get_device_module(mt.device("cpu")) is mt.cpu
    for bad in (3, "foo"):
        ours, theirs = _outcome(lambda: mt.get_device_module(bad)), _outcome(lambda: torch.get_device_module(bad))
        assert ours[0] == theirs[0] == "RuntimeError"
    assert _outcome(lambda: mt.get_device_module(3))[1] == _outcome(lambda: torch.get_device_module(3))[1]
    assert mt.init_num_threads() is None and torch.init_num_threads() is None


def test_autocast_state_functions():
    for L in (torch, mt):
        base = L.autocast_increment_nesting()
        assert L.autocast_increment_nesting() == base + 1
        assert L.autocast_decrement_nesting() == base
        assert L.autocast_decrement_nesting() == base - 1
        before = L.get_autocast_dtype("cpu"), L.is_autocast_enabled("cpu")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.set_autocast_cpu_dtype(L.float16)
            L.set_autocast_cpu_enabled(True)
        assert L.get_autocast_dtype("cpu") == L.float16 and L.is_autocast_enabled("cpu")
        assert [x.category for x in w] == [DeprecationWarning, DeprecationWarning]
        assert str(w[0].message).startswith("torch.set_autocast_cpu_dtype(dtype) is deprecated. Please use "
                                            "torch.set_autocast_dtype('cpu', dtype) instead.")
        L.set_autocast_dtype("cpu", before[0])
        L.set_autocast_enabled("cpu", before[1])


def test_max_pool1d_with_indices():
    x = np.random.default_rng(0).standard_normal((2, 3, 9)).astype(np.float32)
    for args in [(2,), (3, 2), (3, (), 1), (2, 2, 1, 2, True)]:
        ov, oi = mt.max_pool1d_with_indices(mt.tensor(x), *args)
        tv, ti = torch.max_pool1d_with_indices(torch.tensor(x), *args)
        assert np.array_equal(ov.numpy(), tv.numpy()) and np.array_equal(oi.numpy(), ti.numpy())
    assert math.isnan(mt.sym_float(float("nan")))
