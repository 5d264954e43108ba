"""torch.profiler / torch.autograd.profiler: op events from the C core, compared with live PyTorch
(names, counts, shapes, nesting, memory, schedule steps, trace files)."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

import mindtorch_v2 as mt
from mindtorch_v2.profiler import ProfilerActivity, profile, record_function, schedule

torch = pytest.importorskip("torch")
if torch.__name__ != "torch":  # the proxy is active in this process: no oracle
    pytest.skip("real PyTorch is not importable beside the proxy", allow_module_level=True)


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4))


def _run_model(lib, **kw):
    m, x = _mlp(lib), lib.randn(5, 8)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **kw) as prof:
        with lib.profiler.record_function("model_inference"):
            m(x)
    return prof


def _by_key(prof, **kw):
    return {e.key: e for e in prof.key_averages(**kw)}


def test_key_averages_names_counts_and_shapes_equal_pytorch():
    ours, theirs = _run_model(mt, record_shapes=True), _run_model(torch, record_shapes=True)
    a, b = _by_key(ours), _by_key(theirs)
    for name in ("model_inference", "aten::linear", "aten::addmm", "aten::relu"):
        assert a[name].count == b[name].count, name
    # the shapes PyTorch records for the tensor inputs (it also lists scalars as [])
    ours_shapes = {(e.key, str(e.input_shapes)) for e in ours.key_averages(group_by_input_shape=True)}
    assert ("aten::linear", "[[5, 8], [16, 8], [16]]") in ours_shapes
    assert ("aten::linear", "[[5, 16], [4, 16], [4]]") in ours_shapes
    assert ours.key_averages()[0].input_shapes == ""  # not grouped by shape: PyTorch blanks them
    # every aten::linear holds its addmm, as PyTorch's does
    for evt in ours.events():
        if evt.name == "aten::linear":
            assert "aten::addmm" in [c.name for c in evt.cpu_children]


def test_self_and_total_times_are_consistent():
    prof = _run_model(mt)
    events = prof.events()
    top_total = 0.0
    for e in events:
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
        assert e.self_cpu_time_total >= 0
        for c in e.cpu_children:
            assert c.cpu_parent is e and c.thread == e.thread
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= e.time_range.end
        if e.cpu_parent is None:
            top_total += e.cpu_time_total
    avg = prof.key_averages()
    self_sum = sum(e.self_cpu_time_total for e in avg)
    assert self_sum == pytest.approx(top_total)
    assert avg.self_cpu_time_total == pytest.approx(self_sum)
    root = _by_key(prof)["model_inference"]
    assert root.cpu_time_total == pytest.approx(top_total)


def test_table_layout_equals_pytorch():
    def header_lines(lib, **kw):  # the name column's width follows the longest name: compare the rest
        table = _run_model(lib, **kw).key_averages().table(sort_by="cpu_time_total", row_limit=3)
        lines = table.splitlines()
        widths = [len(c) for c in lines[0].split("  ")]
        return lines[1].split(), widths[1:], len(lines), lines[-1].split(":")[0]
    for kw in ({}, {"profile_memory": True}):
        assert header_lines(mt, **kw) == header_lines(torch, **kw)
    table = _run_model(mt).key_averages().table(sort_by="self_cpu_time_total", row_limit=2)
    assert len(table.splitlines()) == 2 + 3 + 2  # header block, 2 rows, separator + total
    rows = _run_model(mt, record_shapes=True).key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in rows and "[[5, 8], [16, 8], [16]]" in rows


def test_record_function_nesting_and_decorator():
    @record_function("decorated")
    def f(x):
        return x * 2

    x, y = mt.ones(3), mt.ones(3)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                x + y
            f(x)
    tree = {e.name: (e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()}
    assert tree == {"outer": None, "inner": "outer", "aten::add": "inner", "decorated": "outer",
                    "aten::mul": "decorated"}
    assert all(e.is_user_annotation == (e.name in ("outer", "inner", "decorated")) for e in prof.events())
    with record_function("no profiler"):  # records nothing, raises nothing
        x + y


def test_in_place_and_backward_names():
    x = mt.ones(4, requires_grad=True)
    z = mt.zeros(4)
    with profile() as prof:
        z.add_(1)
        (x * 2).sum().backward()
    names = [e.name for e in prof.events()]
    assert "aten::add_" in names and "aten::mul" in names and "aten::sum" in names
    assert "autograd::engine::evaluate_function: MulBackward0" in names
    assert "autograd::engine::evaluate_function: SumBackward0" in names


def test_profile_memory_equals_pytorch():
    def add_bytes(lib):
        x, y = lib.ones(1000), lib.ones(1000)
        with lib.profiler.profile(profile_memory=True) as prof:
            x + y
        return _by_key(prof)["aten::add"].cpu_memory_usage
    assert add_bytes(mt) == add_bytes(torch) == 4000
    x = mt.ones(1000)
    with profile(profile_memory=True) as prof:
        with record_function("frees"):
            t = x + 1
            del t
    ranges = _by_key(prof)
    assert ranges["frees"].cpu_memory_usage == 0 and ranges["frees"].self_cpu_memory_usage == -4000


def test_chrome_trace_is_valid_json_with_the_events(tmp_path):
    x = mt.ones(2, 3)
    with profile(record_shapes=True) as prof:
        with record_function("label"):
            x + x
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    events = {e["name"]: e for e in doc["traceEvents"]}
    assert events["aten::add"]["ph"] == "X" and events["aten::add"]["cat"] == "cpu_op"
    assert events["aten::add"]["args"]["Input Dims"] == [[2, 3], [2, 3]]
    assert events["label"]["cat"] == "user_annotation"
    add, label = events["aten::add"], events["label"]
    assert label["ts"] <= add["ts"] and add["ts"] + add["dur"] <= label["ts"] + label["dur"]
    assert add["tid"] == label["tid"] and add["pid"] == os.getpid()


def _schedule_run(lib, tmp_path, **sched):
    """(step_num, step ranges in the trace, adds recorded) at each on_trace_ready."""
    seen = []

    def ready(prof):
        path = tmp_path / f"{lib.__name__}_{len(seen)}.json"
        prof.export_chrome_trace(str(path))
        names = [e["name"] for e in json.loads(path.read_text())["traceEvents"] if "name" in e]
        seen.append((prof.step_num, sorted(n for n in names if n.startswith("ProfilerStep#")),
                     names.count("aten::add")))

    x = lib.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                                  schedule=lib.profiler.schedule(**sched), on_trace_ready=ready) as p:
            for _ in range(11):
                x + 1
                p.step()
    return seen


@pytest.mark.parametrize("sched", [dict(wait=1, warmup=1, active=2),
                                   dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
                                   dict(wait=0, warmup=0, active=1, repeat=3),
                                   dict(wait=2, warmup=1, active=3, repeat=1, skip_first=2)])
def test_schedule_steps_equal_pytorch(tmp_path, sched):
    assert _schedule_run(mt, tmp_path, **sched) == _schedule_run(torch, tmp_path, **sched)


def test_schedule_actions_equal_pytorch():
    args = dict(wait=2, warmup=1, active=3, repeat=2, skip_first=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = schedule(**args), torch.profiler.schedule(**args)
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)


def test_tensorboard_trace_handler_writes_traces(tmp_path):
    x = mt.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(schedule=schedule(wait=0, warmup=1, active=1),
                     on_trace_ready=mt.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), "w0")) as p:
            for _ in range(4):
                x * 3
                p.step()
    files = sorted(os.listdir(tmp_path / "tb"))
    assert len(files) == 2 and all(f.startswith("w0.") and f.endswith(".pt.trace.json") for f in files)
    for f in files:
        assert any(e["name"] == "aten::mul" for e in json.loads((tmp_path / "tb" / f).read_text())["traceEvents"])


def test_activities_and_autograd_profiler_alias():
    assert mt.profiler.supported_activities() == {ProfilerActivity.CPU}
    assert [a.name for a in ProfilerActivity] == [a for a in torch.profiler.ProfilerActivity.__members__]
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        with pytest.raises(AssertionError, match="No activities specified for the profiler"):
            with profile(activities=[ProfilerActivity.CUDA]):
                pass
    x = mt.ones(2)
    with mt.autograd.profiler.profile(record_shapes=True) as prof:
        with mt.autograd.profiler.record_function("r"):
            x - 1
    assert [e.name for e in prof.function_events] == ["r", "aten::sub"]
    assert "aten::sub" in prof.key_averages().table()
    assert mt.autograd.profiler.record_function is record_function
    for name in ("emit_nvtx", "emit_itt"):
        with pytest.raises(NotImplementedError, match=name):
            getattr(mt.autograd.profiler, name)()



def test_nested_profilers_as_pytorch():
    """A profiler started inside another takes the timeline over; the outer one ends empty, with a warning."""
    def run(lib):
        x = lib.ones(2)
        with warnings.catch_warnings(record=True) as caught:  # PyTorch logs it from C++, we warn
            warnings.simplefilter("always")
            with lib.profiler.profile() as outer:
                x * 2
                with lib.profiler.profile() as inner:
                    x + 1
                x - 1
        return [e.name for e in outer.events()], [e.name for e in inner.events() if e.cpu_parent is None], caught
    ours, theirs = run(mt), run(torch)
    assert ours[:2] == theirs[:2] == ([], ["aten::add"])
    assert any("disableProfiler called but no active profiling session found" in str(w.message) for w in ours[2])


def test_with_stack_points_at_the_caller():
    x = mt.ones(2)
    with profile(with_stack=True) as prof:
        x + x
    add = [e for e in prof.events() if e.name == "aten::add"][0]
    assert add.stack and "test_with_stack_points_at_the_caller" in add.stack[0]


def test_generation_mixin_imports_under_proxy_with_accelerate():
    pytest.importorskip("accelerate")
    pytest.importorskip("transformers")
    code = textwrap.dedent("""
        import torch_proxy
        torch_proxy.install()
        import torch
        from transformers.generation import GenerationMixin
        from accelerate.utils import ProfileKwargs
        prof = ProfileKwargs(activities=["cpu"], record_shapes=True).build()
        with prof:
            torch.ones(2) + 1
        print(torch.__name__, GenerationMixin.__name__, any(e.key == "aten::add" for e in prof.key_averages()))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split()[-3:] == ["mindtorch_v2", "GenerationMixin", "True"], r.stdout + r.stderr


OPS = {
    "sum": lambda l, x, y: x.sum(), "mean": lambda l, x, y: x.mean(1), "softmax": lambda l, x, y: l.softmax(x, 1),
    "matmul": lambda l, x, y: x @ y, "mm": lambda l, x, y: l.mm(x, y), "bmm": lambda l, x, y: l.bmm(x[None], y[None]),
    "addmm": lambda l, x, y: l.addmm(x, x, y), "relu_": lambda l, x, y: x.relu_(), "cat": lambda l, x, y: l.cat([x, y]),
    "mul": lambda l, x, y: x * y, "sub_": lambda l, x, y: x.sub_(y), "exp": lambda l, x, y: x.exp(),
    "view": lambda l, x, y: x.view(16), "transpose": lambda l, x, y: x.transpose(0, 1),
    "layer_norm": lambda l, x, y: l.nn.functional.layer_norm(x, (4,)), "gelu": lambda l, x, y: l.nn.functional.gelu(x),
    "where": lambda l, x, y: l.where(x > 0, x, y), "clone": lambda l, x, y: x.clone(), "max": lambda l, x, y: x.max(1),
    "sdpa": lambda l, x, y: l.nn.functional.scaled_dot_product_attention(x[None, None], y[None, None], y[None, None]),
    "dropout": lambda l, x, y: l.nn.functional.dropout(x, 0.5), "to": lambda l, x, y: x.to(l.float64),
}


@pytest.mark.parametrize("op", OPS)
def test_top_level_op_names_equal_pytorch(op):
    def top(lib):
        x, y = lib.ones(4, 4), lib.ones(4, 4)
        with lib.profiler.profile() as p:
            OPS[op](lib, x, y)
        return [e.name for e in p.events() if e.cpu_parent is None]
    assert top(mt) == top(torch)


def test_ops_of_other_threads_nest_on_their_own_thread():
    import threading
    x, b = mt.ones(8, 8), mt.ones(8)

    def work():
        with record_function("worker"):
            mt.nn.functional.linear(x, x, b)

    with profile() as prof:
        with record_function("main"):
            t = threading.Thread(target=work)
            t.start()
            x.sum()
            t.join()
    events = prof.events()
    threads = {e.name: e.thread for e in events if e.name in ("main", "worker")}
    assert threads["main"] != threads["worker"]
    for e in events:
        if e.cpu_parent is not None:
            assert e.thread == e.cpu_parent.thread
    worker_ops = [e.name for e in events if e.thread == threads["worker"]]
    assert worker_ops[:3] == ["worker", "aten::linear", "aten::transpose"] and "aten::addmm" in worker_ops


def test_a_range_left_open_across_a_restart_closes_nothing_new():
    import time
    x = mt.ones(2)
    with profile():
        x + 1
        stale = record_function("stale")
        stale.__enter__()
    with profile() as prof:
        with record_function("fresh"):
            x + 1
            time.sleep(0.05)
            stale.__exit__(None, None, None)  # its id belongs to the stopped timeline
    add = [e for e in prof.events() if e.name == "aten::add"][0]
    assert add.cpu_parent.name == "fresh" and add.cpu_time_total < 40_000
