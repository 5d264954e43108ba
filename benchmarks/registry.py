"""The case registry: each module in benchmarks/cases registers its cases with @case."""
import collections
import importlib
import pkgutil

Case = collections.namedtuple("Case", "name make flops bytes peak rounds once")
CASES = []
SKIPPED = []  # (name, reason): cases that need something this machine lacks


def case(name, flops=None, bytes_=None, peak=False, rounds=None, once=False):
    """Register a benchmark: fn(lib) -> zero-argument callable running one iteration.

    flops / bytes_: work per iteration, reported as GFLOP/s or GB/s; peak: also report the share
    of the machine's fp32 peak (float32 GEMM-like cases); rounds: cap the timed rounds (slow cases);
    once: one call per round and no calibration or warm-up calls (an iteration of tens of seconds
    that starts fresh each time, such as a whole pytest run)."""
    def deco(fn):
        CASES.append(Case(name, fn, flops, bytes_, peak, rounds, once))
        return fn
    return deco


def skip(name, reason):
    """Record a case that cannot run here (the report lists it with the reason)."""
    SKIPPED.append((name, reason))


def load_cases():
    """Import every benchmarks/cases module (in name order) and return the registered cases."""
    from . import cases
    for info in sorted(pkgutil.iter_modules(cases.__path__), key=lambda m: m.name):
        importlib.import_module(f"{cases.__name__}.{info.name}")
    return CASES
