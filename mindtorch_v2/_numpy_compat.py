"""NumPy's argument names PyTorch's argument parser accepts as aliases (python_arg_parser.cpp's
numpy_compatibility_arg_names): axis for dim, keepdims for keepdim - `x.sum(axis=1, keepdims=True)`,
`torch.cat(ts, axis=0)`. Functions taking dim/keepdim are wrapped once, when installed."""
import functools
import inspect

_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def accept_numpy_names(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    names = tuple((a, d) for a, d in _ALIASES if d in params and a not in params)
    if not names:
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for alias, name in names:
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{alias}'")
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return wrapper
