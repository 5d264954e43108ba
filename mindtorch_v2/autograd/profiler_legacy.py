"""torch.autograd.profiler_legacy: the deprecated profiler whose session hands back raw push/pop records
(ProfilerEvent), paired into FunctionEvents afterwards. It runs on the same core timeline as
autograd.profiler.profile."""
from ..profiler.profiler import ProfilerConfig, ProfilerState
from .profiler import _Session, profile as _profile
from .profiler_util import MEMORY_EVENT_NAME, DeviceType, EventList, FunctionEvent  # noqa: F401

__all__ = ["profile"]

_legacy = [None]  # the session _enable_profiler_legacy started


class ProfilerEvent:
    """torch._C._autograd.ProfilerEvent: one raw record of a legacy session, kind "push" (a range opens),
    "pop" (it closes) or "mark"; times in microseconds."""

    def __init__(self, *args, **kwargs):
        raise TypeError("torch._C._autograd.ProfilerEvent: No constructor defined!")

    @classmethod
    def _of(cls, kind, name, thread, time_us, handle, shapes=(), memory=0, stack=()):
        e = object.__new__(cls)
        e._fields = (kind, name, thread, time_us, handle, [list(s) for s in shapes], memory, list(stack))
        return e

    def kind(self):
        return self._fields[0]

    def name(self):
        return self._fields[1]

    def thread_id(self):
        return self._fields[2]

    def fwd_thread_id(self):
        return self._fields[2]

    def start_us(self):
        return self._fields[3]

    def cpu_elapsed_us(self, other):
        return other._fields[3] - self._fields[3]

    def handle(self):
        return self._fields[4]

    def shapes(self):
        return self._fields[5]

    def cpu_memory_usage(self):
        return self._fields[6]

    def stack(self):
        return self._fields[7]

    def device(self):
        return -1

    def node_id(self):
        return -1

    def sequence_nr(self):
        return -1

    def scope(self):
        return 0

    def correlation_id(self):
        return 0

    def flops(self):
        return 0

    def is_remote(self):
        return False

    def is_async(self):
        return False

    def has_cuda(self):
        return False

    def cuda_memory_usage(self):
        return 0

    def cuda_elapsed_us(self, other):
        raise RuntimeError("Events were not recorded for CUDA")


def _enable_profiler_legacy(config):
    if config.state not in (ProfilerState.CPU, ProfilerState.Disabled):
        raise NotImplementedError(f"torch.autograd.profiler_legacy: {config.state} profiling is not available in "
                                  "mindtorch_v2 (CPU only)")
    _legacy[0] = _Session(config.report_input_shapes, config.profile_memory, config.with_stack)
    _legacy[0].start()


def _disable_profiler_legacy():
    """The records of the session: one list per thread, each a start mark then push/pop pairs in time order."""
    session, _legacy[0] = _legacy[0], None
    if session is None:
        raise RuntimeError("Can't disable Kineto profiler when it's not running")
    threads = {}
    for i, evt in enumerate(session.stop()):
        records = threads.setdefault(evt.thread, [ProfilerEvent._of("mark", "__start_profile", evt.thread,
                                                                     evt.time_range.start, -1)])
        records.append(ProfilerEvent._of("push", evt.name, evt.thread, evt.time_range.start, i, evt.input_shapes,
                                         evt.cpu_memory_usage, evt.stack))
        records.append(ProfilerEvent._of("pop", evt.name, evt.thread, evt.time_range.end, i))
    return [sorted(r, key=lambda e: (e.start_us(), e.kind() == "push")) for r in threads.values()]


def _parse_legacy_records(thread_records):
    """FunctionEvents from push/pop records (a push and its pop share a handle)."""
    events, opened = [], {}
    for records in thread_records:
        for r in records:
            if r.kind() == "push":
                opened[r.handle()] = r
            elif r.kind() == "pop" and r.handle() in opened:
                start = opened.pop(r.handle())
                events.append(FunctionEvent(id=start.handle(), name=start.name(), thread=start.thread_id(),
                                            start_us=start.start_us(), end_us=r.start_us(),
                                            input_shapes=start.shapes(), stack=start.stack(),
                                            cpu_memory_usage=start.cpu_memory_usage()))
    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    return events


class profile(_profile):
    """DEPRECATED (use torch.profiler): the legacy profiler, CPU only."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False, profile_memory=False,
                 with_stack=False, with_modules=False):
        super().__init__(enabled, use_cuda=use_cuda, record_shapes=record_shapes or with_flops, with_flops=with_flops,
                         profile_memory=profile_memory, with_stack=with_stack, with_modules=with_modules)
        self.use_cuda, self.profiler_kind = False, ProfilerState.CPU

    def config(self):
        return ProfilerConfig(self.profiler_kind, self.record_shapes, self.profile_memory, self.with_stack,
                              self.with_flops, self.with_modules, None)

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        _enable_profiler_legacy(self.config())
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        self.function_events = EventList(_parse_legacy_records(_disable_profiler_legacy()),
                                         profile_memory=self.profile_memory, with_flops=self.with_flops)
        self.function_events._build_tree()
        return False

    def __repr__(self):
        return "<unfinished profiler_legacy.profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self):
        return ("<unfinished profile.profiler_legacy.profile>" if self.function_events is None
                else str(self.function_events))
