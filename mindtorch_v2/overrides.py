"""torch.overrides: mindtorch_v2 does not implement the __torch_function__ protocol, so no argument
ever carries an override: the predicates answer False and handle_torch_function is never needed."""
import functools


def has_torch_function(relevant_args):
    return False


def has_torch_function_unary(arg):
    return False


def has_torch_function_variadic(*args):
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    raise NotImplementedError("torch.overrides.handle_torch_function: __torch_function__ is not implemented")


def is_tensor_like(inp):
    from ._tensor import Tensor
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    from ._tensor import Tensor
    return func in Tensor.__dict__.values() or getattr(func, "__name__", None) in Tensor.__dict__


def wrap_torch_function(dispatcher):
    return lambda fn: functools.wraps(fn)(fn)


def get_ignored_functions():
    return set()


def get_overridable_functions():
    return {}


def get_testing_overrides():
    return {}


class TorchFunctionMode:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.overrides.TorchFunctionMode is not implemented")


class BaseTorchFunctionMode(TorchFunctionMode):
    pass


def _get_current_function_mode():
    return None


def _get_current_function_mode_stack():
    return []


def _is_torch_function_mode_enabled():
    return False
