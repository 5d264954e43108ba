"""PyTorch names mindtorch_v2 does not implement: they import (libraries reference them at module
level), and calling or constructing one raises NotImplementedError naming it. One factory for
every such stub."""


def missing_function(qualname, why=""):
    """A function raising NotImplementedError("<qualname> is not implemented<why>")."""
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{qualname} is not implemented{why}")
    fn.__name__ = fn.__qualname__ = qualname.rsplit(".", 1)[-1]
    fn._mindtorch_missing = True  # tools/op_coverage.py counts it as missing
    return fn


def missing_class(qualname, base=object, why="", module=None):
    """A subclass of base (for isinstance checks and subclassing) whose construction raises."""
    name = qualname.rsplit(".", 1)[-1]

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"{qualname} is not implemented{why}")
    return type(name, (base,), {"__init__": __init__, "__module__": module or qualname.rsplit(".", 1)[0]})
