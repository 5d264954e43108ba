"""torch.utils.benchmark: Timer, Measurement, Compare and the input fuzzers.  The instruction-count tools
(Callgrind, which needs valgrind and PyTorch's bindings) are not implemented."""
from ..._missing import missing_class
from .utils import common, compare, timer as _timer_module  # noqa: F401
from .utils.common import (Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads,  # noqa: F401
                           trim_sigfig, unit_to_english)
from .utils.compare import Colorize, Compare  # noqa: F401
from .utils.timer import Language, Timer, timer  # noqa: F401
from .utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias  # noqa: F401
from .utils.sparse_fuzzer import FuzzedSparseTensor  # noqa: F401

_HERE = "torch.utils.benchmark"
CallgrindStats, FunctionCount, FunctionCounts, CopyIfCallgrind = (
    missing_class(f"{_HERE}.{n}") for n in ("CallgrindStats", "FunctionCount", "FunctionCounts", "CopyIfCallgrind"))
