"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, in the core)."""
import functools
import threading

from .._C import lib


def is_grad_enabled():
    return bool(lib.mt_is_grad_enabled())


def is_inference_mode_enabled():
    return bool(lib.mt_is_inference_mode_enabled())


class _DecoratorContextManager:
    """A context manager that is also a decorator (a fresh instance per call)."""

    def __call__(self, fn):
        import inspect
        if inspect.isclass(fn):
            raise RuntimeError("Applying a grad mode decorator to a class is not supported")
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException:
                        with self.clone():
                            response = gen.throw(*__import__("sys").exc_info())
                    else:
                        with self.clone():
                            response = gen.send(request)
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _GradMode(_DecoratorContextManager):
    enabled = True

    def __enter__(self):
        self._prev = lib.mt_is_grad_enabled()
        lib.mt_set_grad_enabled(1 if self.enabled else 0)
        return None

    def __exit__(self, *exc):
        lib.mt_set_grad_enabled(self._prev)
        return False


class _NoParamGradMode(_GradMode):
    """Usable as @no_grad as well as @no_grad() and `with no_grad():`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        pass


class no_grad(_NoParamGradMode):
    enabled = False


class enable_grad(_NoParamGradMode):
    enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on call; as a context manager restores the previous mode on exit."""

    def __init__(self, mode):
        self.prev = lib.mt_is_grad_enabled()
        self.mode = bool(mode)
        lib.mt_set_grad_enabled(1 if mode else 0)

    def __call__(self, fn):
        lib.mt_set_grad_enabled(self.prev)  # as a decorator it must not change the mode now
        return super().__call__(fn)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        lib.mt_set_grad_enabled(self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Grad mode off, and tensors allocated inside are inference tensors."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self._prev = (lib.mt_is_grad_enabled(), lib.mt_is_inference_mode_enabled())
        if self.mode:
            lib.mt_set_grad_enabled(0)
            lib.mt_set_inference_mode(1)
        else:
            lib.mt_set_inference_mode(0)
        return None

    def __exit__(self, *exc):
        lib.mt_set_grad_enabled(self._prev[0])
        lib.mt_set_inference_mode(self._prev[1])
        return False

    def clone(self):
        return self.__class__(self.mode)


def _enter_inference_mode(mode):
    m = inference_mode(mode)
    m.__enter__()
    return m


def _exit_inference_mode(m):
    m.__exit__(None, None, None)


_multithreading = [True]  # the setting is_multithreading_enabled reports (process-wide, as PyTorch's)


def is_multithreading_enabled():
    """Whether set_multithreading_enabled is on (the engine here always runs on the calling thread)."""
    return _multithreading[0]


class set_multithreading_enabled(_DecoratorContextManager):
    """Sets the flag on construction and restores the previous one on exit, as PyTorch; the engine runs on
    the calling thread either way."""

    def __init__(self, mode):
        self.prev = _multithreading[0]
        self.mode = _multithreading[0] = bool(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _multithreading[0] = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)


_layout = threading.local()  # enforce_grad_layout_policy's setting, per thread (True unless changed)


def _is_grad_layout_enforcement_enabled():
    return getattr(_layout, "on", True)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """Sets, per thread, whether accumulated gradients must follow the gradient layout contract (a dense
    leaf's .grad has the leaf's strides). False only allows the engine to keep a gradient's own layout:
    the engine here always gives the contract's layout, which False permits too (values are the same)."""

    def __init__(self, enable=True):
        self.prev = _is_grad_layout_enforcement_enabled()
        _layout.on = self.mode = enable

    def __call__(self, orig_func):
        _layout.on = self.prev
        return super().__call__(orig_func)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _layout.on = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)
