"""torch.profiler: CPU op timelines recorded by the C core (see autograd/profiler.py), PyTorch's
profile/schedule/record_function API, key_averages tables and Chrome traces."""
from ..autograd.profiler import record_function, kineto_available
from . import itt
from .profiler import (ExecutionTraceObserver, ProfilerAction, ProfilerActivity, _KinetoProfile, profile, schedule,
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "record_function", "ExecutionTraceObserver"]
