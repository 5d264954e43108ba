"""The case registry: each module in benchmarks/cases registers its cases with @case."""
import importlib
import pkgutil

CASES = []


def case(name, flops=None, bytes_=None):
    """Register a benchmark: fn(lib) -> zero-argument callable running one iteration."""
    def deco(fn):
        CASES.append((name, fn, flops, bytes_))
        return fn
    return deco


def load_cases():
    """Import every benchmarks/cases module (in name order) and return the registered cases."""
    from . import cases
    for info in sorted(pkgutil.iter_modules(cases.__path__), key=lambda m: m.name):
        importlib.import_module(f"{cases.__name__}.{info.name}")
    return CASES
