"""torch.func: vmap (see mindtorch_v2/_vmap.py); the other transforms are not implemented."""
from .._vmap import vmap  # noqa: F401


def _ni(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.func.{name} is not implemented")
    fn.__name__ = name
    return fn


grad = _ni("grad")
grad_and_value = _ni("grad_and_value")
vjp = _ni("vjp")
jvp = _ni("jvp")
jacrev = _ni("jacrev")
jacfwd = _ni("jacfwd")
hessian = _ni("hessian")
functional_call = _ni("functional_call")
functionalize = _ni("functionalize")
stack_module_state = _ni("stack_module_state")
