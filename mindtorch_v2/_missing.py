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
    return type(name, (base,), {"__init__": __init__, "__module__": module or qualname.rsplit(".", 1)[0],
                                "_mindtorch_missing": True})  # tools/module_coverage.py counts it as missing


def no_kernel_text(op, backend="CPU"):
    """PyTorch's dispatcher error for an operator without a kernel for the backend (its first sentences)."""
    return (f"Could not run 'aten::{op}' with arguments from the '{backend}' backend. This could be because the "
            "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
            "using custom build).")


def no_cpu_kernel(op):
    """An ATen operator PyTorch registers only for accelerators: on CPU it raises PyTorch's own
    NotImplementedError, which is this build's behaviour too (not a gap: tools/op_coverage.py counts it)."""
    def fn(*args, **kwargs):
        raise NotImplementedError(no_kernel_text(op))
    fn.__name__ = fn.__qualname__ = op
    return fn
