"""torch.utils.benchmark: Timer, Measurement and Compare.  The instruction-count tools (Callgrind, which needs
valgrind and PyTorch's bindings) and the input fuzzers are not implemented."""
from ..._missing import missing_class
from .utils import common, compare, timer as _timer_module  # noqa: F401
from .utils.common import (Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads,  # noqa: F401
                           trim_sigfig, unit_to_english)
from .utils.compare import Colorize, Compare  # noqa: F401
from .utils.timer import Language, Timer, timer  # noqa: F401

_HERE = "torch.utils.benchmark"
CallgrindStats, FunctionCount, FunctionCounts, CopyIfCallgrind = (
    missing_class(f"{_HERE}.{n}") for n in ("CallgrindStats", "FunctionCount", "FunctionCounts", "CopyIfCallgrind"))
Fuzzer, FuzzedParameter, FuzzedTensor, FuzzedSparseTensor, ParameterAlias = (
    missing_class(f"{_HERE}.{n}")
    for n in ("Fuzzer", "FuzzedParameter", "FuzzedTensor", "FuzzedSparseTensor", "ParameterAlias"))
