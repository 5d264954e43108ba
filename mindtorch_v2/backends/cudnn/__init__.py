"""torch.backends.cudnn: not built; the module-level flags are plain settable attributes."""
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True
fp32_precision = "none"


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    import contextlib
    import sys
    mod = sys.modules[__name__]

    @contextlib.contextmanager
    def ctx():
        names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
        prev = {n: getattr(mod, n) for n in names}
        for n, v in zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)):
            setattr(mod, n, v)
        try:
            yield
        finally:
            for n, v in prev.items():
                setattr(mod, n, v)
    return ctx()
