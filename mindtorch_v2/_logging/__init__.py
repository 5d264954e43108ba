"""torch._logging: the logging controls of PyTorch's compiler stack (dynamo, inductor, ...). None of
those components exist here, so their artifacts are never logged: set_logs validates nothing and has
no effect; warning_once and getArtifactLogger behave as PyTorch's for ordinary loggers."""
import functools
import logging


def set_logs(**kwargs):
    """PyTorch's set_logs configures log levels of compiler components mindtorch_v2 does not have."""


def getArtifactLogger(module_qname, artifact_name):
    return logging.getLogger(f"{module_qname}.__{artifact_name}")


@functools.lru_cache(None)
def warning_once(logger_obj, *args, **kwargs):
    logger_obj.warning(*args, **kwargs)


def trace_structured(*args, **kwargs):
    pass


class LazyString:
    def __init__(self, func, *args, **kwargs):
        self.func, self.args, self.kwargs = func, args, kwargs

    def __str__(self):
        return self.func(*self.args, **self.kwargs)
