"""torch.func: the autograd transforms (_transforms.py: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, linearize), functionalize (_functionalize.py), rearrange (_rearrange.py), vmap (mindtorch_v2/_vmap.py), functional_call and
stack_module_state (over nn.utils.stateless), replace_all_batch_norm_modules_ and debug_unwrap."""
from collections.abc import Sequence

from .._vmap import vmap  # noqa: F401
from ._functionalize import functionalize  # noqa: F401
from ._rearrange import rearrange  # noqa: F401
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp  # noqa: F401


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call module with its parameters and buffers replaced by the given tensors (one dict or several)."""
    from ..nn.utils import stateless
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated_keys = [key for key, n in counts.items() if n > 1]
        if len(repeated_keys) > 0:
            raise ValueError(f"{repeated_keys} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return stateless._functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                                      strict=strict)


def stack_module_state(models):
    """The parameters and buffers of same-class models stacked along a new first dimension."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    model0_typ = type(models[0])
    if not all(type(m) is model0_typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(model.named_parameters()) for model in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(model.named_buffers()) for model in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors, name):
    from .. import stack
    all_requires_grad = all(t.requires_grad for t in tensors)
    if not all_requires_grad and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if all_requires_grad else result


def replace_all_batch_norm_modules_(root):
    """Stop every batch-norm module under root (root included) from tracking running statistics, in place."""
    from ..nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = m.running_var = m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse=True):
    """The tensor inside a vmap BatchedTensor (every level with recurse, else the innermost one only);
    any other tensor is returned as it is."""
    from .._vmap import BatchedTensor, _wrap
    if not isinstance(tensor, BatchedTensor):
        return tensor
    if recurse:
        return tensor._phys
    return _wrap(tensor._phys, tensor._lv[:-1])
