"""torch.sym_*: PyTorch's SymInt-aware helpers. Sizes here are plain Python numbers (there is no
symbolic tracing), so each is its Python counterpart, with PyTorch's checks and promotions."""
import builtins
import math

__all__ = ["sym_float", "sym_int", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum"]


def _numbers():
    try:
        import numpy as np
    except ImportError:
        return (int, float), (float,)
    return (int, float, np.integer, np.floating), (float, np.floating)


def sym_float(a):
    """float(a)"""
    return builtins.float(a)


def sym_int(a):
    """int(a) (a float is truncated)"""
    return builtins.int(a)


def _extreme(pick, a, b):
    numbers, floats = _numbers()
    for v in (a, b):
        if not isinstance(v, numbers):
            raise AssertionError(f"expected {numbers}, got {type(v)}")
    r = pick(a, b)
    return builtins.float(r) if isinstance(a, floats) or isinstance(b, floats) else r


def sym_max(a, b):
    """max of two numbers, a float when either is one (max(1, 1.0) is 1.0 either way round)"""
    return _extreme(builtins.max, a, b)


def sym_min(a, b):
    """min of two numbers, promoted as sym_max"""
    return _extreme(builtins.min, a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    """t if b else f"""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):
    """the sum of the numbers given, as sym_sum(a, b, c) or sym_sum([a, b, c])"""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


FUNCTIONS = {name: globals()[name] for name in __all__}
METHODS = {}
