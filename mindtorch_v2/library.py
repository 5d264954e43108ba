"""torch.library: custom operators. mindtorch_v2 has no operator registry for Python ops, so a
custom_op is the Python function itself (eager calls give its results); registering fake
(meta) or autograd implementations on it is recorded, and ops needing a real registry raise."""
import functools


class CustomOpDef:
    """What custom_op returns: calls the wrapped function."""

    def __init__(self, name, fn, mutates_args, device_types=None, schema=None):
        self._name = name
        self._init_fn = fn
        self._mutates_args = mutates_args
        self._fake_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._init_fn(*args, **kwargs)

    def register_fake(self, fn):
        self._fake_fn = fn
        return fn

    def register_kernel(self, device_types, fn=None):
        def inner(f):
            return f
        return inner(fn) if fn is not None else inner

    def register_autograd(self, backward, *, setup_context=None):
        raise NotImplementedError(f"torch.library: register_autograd on custom op {self._name} is not implemented")

    def register_vmap(self, fn=None):
        return fn if fn is not None else (lambda f: f)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None):
        return fn if fn is not None else (lambda f: f)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    def inner(f):
        return CustomOpDef(name, f, mutates_args, device_types, schema)
    return inner(fn) if fn is not None else inner


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Records a fake implementation; returns the function (decorator form too)."""
    def inner(f):
        if isinstance(op, CustomOpDef):
            op._fake_fn = f
        return f
    return inner(func) if func is not None else inner


impl_abstract = register_fake


def register_kernel(op, device_types, func=None, /, *, lib=None):
    return func if func is not None else (lambda f: f)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    raise NotImplementedError("torch.library.register_autograd is not implemented")


def register_vmap(op, func=None, /, *, lib=None):
    return func if func is not None else (lambda f: f)


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)


def wrap_triton(triton_kernel, /):
    raise NotImplementedError("torch.library.wrap_triton is not implemented")


def get_ctx():
    raise NotImplementedError("torch.library.get_ctx is not implemented")


class Library:
    def __init__(self, ns, kind, dispatch_key=""):
        raise NotImplementedError("torch.library.Library is not implemented (no operator registry)")


def define(qualname, schema, *, lib=None, tags=()):
    raise NotImplementedError("torch.library.define is not implemented (no operator registry)")


def impl(qualname, types, func=None, *, lib=None):
    raise NotImplementedError("torch.library.impl is not implemented (no operator registry)")


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None, rtol=None):
    raise NotImplementedError("torch.library.opcheck is not implemented")
