"""torch.utils.benchmark (Timer, Measurement, Compare) against live PyTorch where it is deterministic: the
statistics and repr of given times, the Compare tables, and Timer's block sizing and stopping rules driven by
a fake clock that advances with the statement's executions."""
import importlib

import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")
LIBS = {"mt": importlib.import_module("mindtorch_v2.utils.benchmark"),
        "torch": importlib.import_module("torch.utils.benchmark")}

TIMES = [[1e-5, 1.2e-5, 1.1e-5, 0.9e-5, 1.5e-5], [3e-3], [2e-7, 2.1e-7], [5e-2, 1e-2, 9e-2],
         [1.0, 1.02, 0.99, 1.01, 1.0, 1.03], [4e-8, 4e-8, 4e-8, 4e-8], [7e-4, 1e-4, 2e-4, 9e-4, 3e-4, 8e-4, 2e-4]]
SPECS = [dict(stmt="x + 1", setup="pass", label="add", sub_label="small", description="float"),
         dict(stmt="y = x * 2\nz = y", setup="x = 1\ny=2"), dict(stmt="y", setup="", num_threads=4),
         dict(stmt="f(x)", setup="x = 2", sub_label="s", env="py3", description="multi\nline")]


def measurement(lib, number, times, spec):
    b = LIBS[lib]
    return b.Measurement(number, list(times), b.TaskSpec(**spec))


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("times", TIMES)
def test_measurement_matches_torch(times, spec):
    a, b = measurement("mt", 10, times, spec), measurement("torch", 10, times, spec)
    for name in ("median", "iqr", "significant_figures", "has_warnings", "times", "title", "env", "as_row_name",
                 "stmt", "num_threads", "number_per_run"):
        assert getattr(a, name) == getattr(b, name), name
    # the mean of float64 times: our reduction adds in another order than PyTorch's vectorised sum (last bit)
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-15)
    assert a.meets_confidence(0.2) == b.meets_confidence(0.2)
    assert a.task_spec.summarize() == b.task_spec.summarize()
    ra, rb = repr(a).split("\n"), repr(b).split("\n")
    assert ra[0].startswith("<mindtorch_v2.utils.benchmark.utils.common.Measurement object at 0x")
    assert ra[1:] == rb[1:]


def test_merge_and_helpers():
    for lib in LIBS:
        merged = LIBS[lib].Measurement.merge([measurement(lib, 10, TIMES[0], SPECS[0]),
                                              measurement(lib, 2, TIMES[3], SPECS[1]),
                                              measurement(lib, 5, TIMES[4], SPECS[0])])
        assert [(m.number_per_run, m.stmt, len(m.times)) for m in merged] == [(1, "x + 1", 11), (1, "y = x * 2\nz = y", 3)]
    for x in (3.3e-9, 1e-6, 4.5e-5, 1e-3, 0.25, 7.0, 1234.5):
        assert LIBS["mt"].select_unit(x) == LIBS["torch"].select_unit(x)
        for n in (1, 2, 3, 4):
            assert LIBS["mt"].trim_sigfig(x, n) == LIBS["torch"].trim_sigfig(x, n)
    assert LIBS["mt"].ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert [LIBS["mt"].unit_to_english(u) for u in ("ns", "us", "ms", "s")] == \
        ["nanosecond", "microsecond", "millisecond", "second"]
    before = mt.get_num_threads()
    with LIBS["mt"].set_torch_threads(1):
        assert mt.get_num_threads() == 1
    assert mt.get_num_threads() == before


def compare_text(lib, *, colorize=None, trim=False, highlight=False):
    rows = [(10, TIMES[0], dict(sub_label="small", description="float")),
            (10, TIMES[2], dict(sub_label="big", description="float", num_threads=2)),
            (10, TIMES[3], dict(sub_label="big", description="double", num_threads=2)),
            (10, TIMES[6], dict(description="double", num_threads=2)),
            (4, TIMES[4], dict(sub_label="small", description="float")),  # merged with the first
            (3, TIMES[4], dict(label="mul", description="a", env="A")),
            (3, TIMES[1], dict(label="mul", description="b", env="B")),
            (3, TIMES[5], dict(label="mul", sub_label="other", description="a", env="B"))]
    b = LIBS[lib]
    c = b.Compare([b.Measurement(n, t, b.TaskSpec(**dict(dict(stmt="x * 1", setup="pass", label="add"), **kw)))
                   for n, t, kw in rows])
    if colorize is not None:
        c.colorize(rowwise=colorize)
    if trim:
        c.trim_significant_figures()
    if highlight:
        c.highlight_warnings()
    return str(c)


@pytest.mark.parametrize("opts", [{}, dict(trim=True), dict(highlight=True), dict(colorize=False),
                                  dict(colorize=True, trim=True, highlight=True)])
def test_compare_matches_torch(opts):
    assert compare_text("mt", **opts) == compare_text("torch", **opts)


def fake_clock():
    """A clock that advances 1 us per execution of the statement, so that times depend only on counts."""
    state = {"n": 0}
    return state, (lambda: state["n"] * 1e-6)


def timed(lib, method, **kw):
    state, clock = fake_clock()
    t = LIBS[lib].Timer("S['n'] += 1", timer=clock, globals={"S": state}, label="L", description="d")
    calls = []
    m = getattr(t, method)(callback=lambda number, spent: calls.append((number, spent)), **kw) \
        if method != "timeit" else t.timeit(**kw)
    return m.number_per_run, m.raw_times, calls, state["n"], m.title


@pytest.mark.parametrize("method,kw", [("timeit", dict(number=1000)), ("blocked_autorange", {}),
                                       ("blocked_autorange", dict(min_run_time=0.01)),
                                       ("adaptive_autorange", {}), ("adaptive_autorange", dict(min_run_time=0.05))])
def test_timer_matches_torch(method, kw):
    assert timed("mt", method, **kw) == timed("torch", method, **kw)


def test_timer_runs_torch_code_and_errors():
    m = LIBS["mt"].Timer("torch.ones(2) + x", setup="x = torch.zeros(2)").timeit(10)
    assert m.number_per_run == 10 and len(m.times) == 1 and m.times[0] > 0
    for call in (lambda b: b.Timer(stmt=lambda: None), lambda b: b.Timer("x", global_setup="y = 1"),
                 lambda b: b.Timer("x", language="fortran"), lambda b: b.Timer().repeat(),
                 lambda b: b.Timer().autorange(), lambda b: b.Compare([1]),
                 lambda b: b.trim_sigfig(1.0, 1.5), lambda b: b.Timer().collect_callgrind(repeats=0)):
        same(lambda: call(LIBS["mt"]), lambda: call(LIBS["torch"]))
    with pytest.raises(NotImplementedError, match="language='cpp'"):
        LIBS["mt"].Timer("x", language="cpp")
    with pytest.raises(NotImplementedError, match="CallgrindStats"):
        LIBS["mt"].CallgrindStats()
