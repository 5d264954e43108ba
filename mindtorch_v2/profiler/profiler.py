"""torch.profiler.profiler: profile with schedules and trace handlers, over the core's op timeline
(autograd/profiler.py collects it). PyTorch's state machine (profiler.py in PyTorch 2.13) is kept
as it is, so which steps are recorded and when on_trace_ready runs are PyTorch's."""
import enum
import json
import os
import socket
import time
from functools import partial
from warnings import warn

from ..autograd.profiler import _Session, record_function
from ..autograd.profiler_util import EventList, _BoundEnum, _write_chrome_trace

__all__ = ["ProfilerAction", "ProfilerActivity", "_KinetoProfile", "profile", "schedule", "supported_activities",
           "tensorboard_trace_handler", "ExecutionTraceObserver"]


class ProfilerActivity(enum.Enum):
    """torch._C._profiler.ProfilerActivity: only CPU is recorded here."""
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"

    def __str__(self):
        return f"ProfilerActivity.{self.name}"


# torch._C._profiler.ProfilerState: which profiler a session runs (here only CPU ones record)
ProfilerState = _BoundEnum("ProfilerState", [
    ("Disabled", 0), ("CPU", 1), ("CUDA", 2), ("NVTX", 3), ("ITT", 4), ("PRIVATEUSE1", 5), ("KINETO", 6),
    ("KINETO_GPU_FALLBACK", 7), ("KINETO_PRIVATEUSE1_FALLBACK", 8), ("KINETO_PRIVATEUSE1", 9)], module=__name__)


class ProfilerConfig:
    """torch._C._profiler.ProfilerConfig: the settings a legacy profiling session starts with."""

    def __init__(self, state, report_input_shapes, profile_memory, with_stack, with_flops, with_modules,
                 experimental_config, trace_id=""):
        if not isinstance(state, ProfilerState):
            raise TypeError(f"ProfilerConfig(): state must be a ProfilerState, not {type(state).__name__}")
        self.state, self.report_input_shapes, self.profile_memory = state, report_input_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.experimental_config, self.trace_id = experimental_config, trace_id


def supported_activities():
    """The activities this build can record: CPU."""
    return {ProfilerActivity.CPU}


def _parse_activities(activities):
    chosen = set()
    for item in activities if activities is not None else supported_activities():
        chosen.update(item.keys() if isinstance(item, dict) else [item])
    return chosen


class _KinetoProfile:
    """The low-level profiler: start/stop around a region, then its events (no schedule)."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None):
        if with_flops:
            raise NotImplementedError("torch.profiler.profile(with_flops=True) is not supported by mindtorch_v2")
        if execution_trace_observer is not None:
            raise NotImplementedError("torch.profiler.profile(execution_trace_observer=...) is not supported by "
                                      "mindtorch_v2")
        self.activities = _parse_activities(activities)
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = None
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.profiler = None  # the recording session between start_trace and stop_trace
        self._events = None
        self._metadata = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        if self._events is not None and not self.acc_events:
            self._events = None  # a new cycle: PyTorch reports only its events

    def start_trace(self):
        for a in sorted(self.activities - supported_activities(), key=lambda a: a.value):
            warn(f"{a.name} is not available, disabling {a.name} profiling", stacklevel=2)
        if not self.activities & supported_activities():
            raise AssertionError("No activities specified for the profiler")
        self.profiler = _Session(self.record_shapes, self.profile_memory, self.with_stack)
        self.profiler.start()

    def stop_trace(self):
        if self.profiler is None:
            return
        events = self.profiler.stop()
        self.profiler = None
        if self._events is not None and self.acc_events:
            events = EventList(list(self._events) + list(events), profile_memory=self.profile_memory)
            events._build_tree()
        self._events = events

    def _require_events(self):
        if self._events is None:
            raise AssertionError("Expected profiling results")
        return self._events

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the trace as Chrome trace JSON (gzip when path ends in .gz)."""
        meta = {"record_shapes": int(self.record_shapes), "profile_memory": int(self.profile_memory),
                **self._metadata}
        _write_chrome_trace(path, self._require_events(), meta)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        return self._require_events().export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self._require_events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def events(self):
        return self._require_events()

    def add_metadata(self, key, value):
        self._metadata[key] = f'"{value}"'.replace("\n", "\\n")

    def add_metadata_json(self, key, value):
        self._metadata[key] = json.loads(value)

    def preset_metadata_json(self, key, value):
        self.add_metadata_json(key, value)

    def toggle_collection_dynamic(self, enable, activities):
        raise NotImplementedError("torch.profiler.profile.toggle_collection_dynamic is not supported by "
                                  "mindtorch_v2")

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("torch.profiler.profile.export_memory_timeline is not supported by mindtorch_v2")


class ProfilerAction(enum.Enum):
    """What the profiler does at a step, as the schedule says."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """PyTorch's schedule: skip_first steps, then cycles of wait, warmup and active steps (repeat of
    them, 0: until the end); the last active step of a cycle is RECORD_AND_SAVE."""

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An on_trace_ready that writes each trace into dir_name as <worker>.<ns>.pt.trace.json[.gz]."""

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name), use_python_export=use_python_export)

    return handler_fn


class profile(_KinetoProfile):
    """torch.profiler.profile: a context manager (or start/stop) whose step() follows a schedule."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        activities_set = _parse_activities(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2)
        if len(activities_set) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities_set, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback)
        if schedule:
            self.schedule = schedule
            self.record_steps = True  # ProfilerStep#N ranges in the trace and the table
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self.schedule(self.step_num)
        if self.current_action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        A = ProfilerAction
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warn, "Incorrect schedule: WARMUP followed by NONE"), self.start_trace,
                                 self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warn, "Incorrect schedule: RECORD followed by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warn, "Incorrect schedule: RECORD followed by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready, self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                            self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                                     self.start_trace],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }
        if schedule and not acc_events:
            warn("Warning: Profiler clears events at the end of each cycle. Only events from the current cycle "
                 "will be reported. To keep events across cycles, set acc_events=True.", stacklevel=2)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """The next step begins: the schedule's action for it is taken."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        action = self.schedule(self.step_num + 1)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        self.step_num += 1
        self.current_action = action
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def set_custom_trace_id_callback(self, callback):
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        return None

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action)) or ():
            action()


class ExecutionTraceObserver:
    """torch.profiler.ExecutionTraceObserver: not supported (PyTorch's execution graph format)."""

    def __init__(self):
        raise NotImplementedError("torch.profiler.ExecutionTraceObserver is not supported by mindtorch_v2")

    @staticmethod
    def build_execution_trace_obs_from_env():
        return None
