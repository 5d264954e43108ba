"""torch.compiler: no graph compiler exists, so compiled code is the eager code."""
import functools

from . import config  # noqa: F401

_stance = ["default"]
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")


def compile(*args, **kwargs):
    from .._compile import compile as c
    return c(*args, **kwargs)


def is_compiling():
    return False


is_dynamo_compiling = is_compiling


def is_exporting():
    return False


def reset():
    pass


def allow_in_graph(fn):
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, but got {type(fn)}")
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    return lambda fn: fn


def assume_constant_result(fn):
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """Runs fn without compiling it - which is how everything runs here."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    return fn


class _Stance:
    def __init__(self, prev):
        self.prev = prev

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _stance[0] = self.prev
        return False

    def __call__(self, fn):
        stance = _stance[0]
        _stance[0] = self.prev

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _stance[0]
            _stance[0] = stance
            try:
                return fn(*args, **kwargs)
            finally:
                _stance[0] = prev
        return wrapper


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Records the stance (a no-op without a compiler); usable as a call, context manager or decorator."""
    if stance not in _STANCES:
        raise RuntimeError(f"invalid torch.compiler.set_stance stance: {stance!r}")
    prev = _stance[0]
    _stance[0] = stance
    return _Stance(prev)


def cudagraph_mark_step_begin():
    pass


def list_backends(exclude_tags=("debug", "experimental")):
    return []


def nested_compile_region(fn=None, options=None):
    return fn if fn is not None else (lambda f: f)


def wrap_numpy(fn):
    raise NotImplementedError("torch.compiler.wrap_numpy is not implemented")
