"""torch.autograd.profiler: the legacy profiler API, record_function, and the event collection both
profilers share. The op timeline itself is recorded by the C core (csrc/core/profiler.c): every
public op entry is a scope there, so composite ops nest (aten::linear holds aten::addmm)."""
import contextlib
import os
import sys
import traceback
import warnings

from .._C import ffi, lib
from .._core import raise_status
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "EventList", "FunctionEvent",
           "FunctionEventAvg"]

_STEP_PREFIX = "ProfilerStep#"


class _Session:
    """One recording: starts the core's timeline, stops it and turns its events into FunctionEvents."""
    active = None  # the session recording now (one per process, as the core's timeline)

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.stacks = []  # with_stack: (time_ns, stack) at each call from Python into the core

    def start(self):
        flags = (lib.MT_PROF_SHAPES if self.record_shapes else 0) | (lib.MT_PROF_MEMORY if self.profile_memory else 0)
        st = lib.mt_profiler_start(flags)
        if st:
            raise_status(st)
        _Session.active = self
        if self.with_stack:
            sys.setprofile(self._on_call)

    def _on_call(self, frame, event, arg):
        # a call into the core from Python: the stack its ops run under (only C calls are seen here)
        if event == "c_call" and getattr(arg, "__self__", None) is lib and arg.__name__.startswith("mt_"):
            self.stacks.append((lib.mt_profiler_now(), _stack(frame)))

    def stop(self):
        if _Session.active is not self:  # a nested profiler took the timeline over and stopped it (PyTorch too)
            warnings.warn("disableProfiler called but no active profiling session found. This can happen if "
                          "profiling was cancelled during warmup.", stacklevel=3)
            result = EventList([], profile_memory=self.profile_memory)
            result._build_tree()
            return result
        if self.with_stack:
            sys.setprofile(None)
        lib.mt_profiler_stop()
        _Session.active = None
        return self.collect()

    def collect(self):
        n = lib.mt_profiler_count()
        raw, shapes = lib.mt_profiler_events(), lib.mt_profiler_shapes()
        now = lib.mt_profiler_now()
        events, stacks, si = [], self.stacks, 0
        for i in range(n):
            e = raw[i]
            name = ffi.string(e.name).decode("utf-8", "replace")
            trace_name = name
            if e.kind == lib.MT_PROF_RANGE:
                if name.startswith(_STEP_PREFIX):
                    name = "ProfilerStep*"  # PyTorch's key for every step range; the trace keeps the number
            elif e.kind == lib.MT_PROF_NODE:
                name = trace_name = "autograd::engine::evaluate_function: " + name
            elif "::" not in name:
                name = trace_name = "aten::" + name + ("_" if e.kind == lib.MT_PROF_INPLACE else "")
            input_shapes = []
            k = e.shapes
            for _ in range(e.ninputs):
                nd = shapes[k]
                input_shapes.append([shapes[k + 1 + d] for d in range(nd)] if nd >= 0 else [])
                k += 1 + max(nd, 0)
            end = e.end_ns if e.end_ns >= 0 else now  # still open at stop: closed there
            evt = FunctionEvent(id=i, name=name, trace_name=trace_name, thread=e.thread, start_us=e.start_ns / 1000,
                                end_us=end / 1000, input_shapes=input_shapes, cpu_memory_usage=e.bytes,
                                is_user_annotation=e.kind == lib.MT_PROF_RANGE)
            if e.parent >= 0:
                parent = events[e.parent]
                evt.set_cpu_parent(parent)
                parent.append_cpu_child(evt)
                evt.stack = parent.stack
            elif stacks:  # the latest call from Python at or before the op's start
                while si + 1 < len(stacks) and stacks[si + 1][0] <= e.start_ns:
                    si += 1
                if stacks[si][0] <= e.start_ns:
                    evt.stack = stacks[si][1]
            events.append(evt)
        result = EventList(events, profile_memory=self.profile_memory)
        result._build_tree()
        return result


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stack(frame):
    """PyTorch's with_stack entries, innermost first: 'file.py(line): function'. The package's private
    top-level modules (_methods.py, _dispatch.py...) are left out: they do what PyTorch's C++ does."""
    from ..overrides import WRAPPER_CODES  # __torch_function__'s wrappers: not frames of the user's
    return [f"{f.f_code.co_filename}({line}): {f.f_code.co_name}" for f, line in traceback.walk_stack(frame)
            if f.f_code not in WRAPPER_CODES and not (os.path.dirname(f.f_code.co_filename) == _PACKAGE
                                                      and os.path.basename(f.f_code.co_filename).startswith("_"))]


class profile:
    """torch.autograd.profiler.profile: records the ops run inside `with` (CPU only)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        if with_flops:
            raise NotImplementedError("torch.autograd.profiler.profile(with_flops=True) is not supported by "
                                      "mindtorch_v2")
        if use_cuda or use_device not in (None, "cpu"):
            raise NotImplementedError(f"torch.autograd.profiler.profile: device {use_device or 'cuda'} is not "
                                      "available in mindtorch_v2 (CPU only)")
        if not use_cpu:
            raise NotImplementedError("torch.autograd.profiler.profile(use_cpu=False): only CPU events exist here")
        self.enabled = enabled
        self.use_device = None
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules, self.acc_events = with_flops, with_modules, acc_events
        self.entered = False
        self.function_events = None
        self._session = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._session = _Session(self.record_shapes, self.profile_memory, self.with_stack)
        self._session.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        self.function_events = self._session.stop()
        return False

    def __repr__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else str(self.function_events)

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total


class record_function(contextlib.ContextDecorator):
    """A labelled range in the profile (a context manager or a function decorator). Outside a
    profiler it records nothing."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        if _Session.active is not None:  # one attribute read when no profiler records
            rid = ffi.new("int64_t *")
            st = lib.mt_profiler_range_begin(self.name.encode(), rid)
            if st:
                raise_status(st)
            self.record = rid[0]
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        if self.record is not None:
            lib.mt_profiler_range_end(self.record)
            self.record = None

    def _call_end_callbacks_on_future(self, fut):
        raise NotImplementedError("record_function._call_end_callbacks_on_future: mindtorch_v2 has no futures")


def _device_range_profiler(name):
    class _Unavailable:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(f"torch.autograd.profiler.{name}: mindtorch_v2 has no {name[5:].upper()} "
                                      "ranges to emit")
    _Unavailable.__name__ = _Unavailable.__qualname__ = name
    return _Unavailable


emit_nvtx = _device_range_profiler("emit_nvtx")
emit_itt = _device_range_profiler("emit_itt")


def _is_profiler_enabled():
    return _Session.active is not None


def kineto_available():
    return True


def load_nvprof(path):
    raise NotImplementedError("torch.autograd.profiler.load_nvprof: no CUDA traces in mindtorch_v2")

