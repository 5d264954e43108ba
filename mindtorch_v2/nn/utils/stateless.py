"""torch.nn.utils.stateless: call a module with some of its parameters and buffers temporarily replaced."""
import contextlib
import warnings

import mindtorch_v2 as torch  # the package; its attributes are read at call time
from ._named_member_accessor import NamedMemberAccessor

__all__ = ["functional_call"]


def _untie_named_tensors_map(module, parameters_and_buffers):
    """A copy of parameters_and_buffers in which a value given for one name of a tied tensor (one tensor
    reachable under several names) is also given for its other names; ValueError if the names of one tied
    tensor were given different values."""
    names_of = {}  # tensor -> every name it has in the module
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(t, set()).add(name)
    tied = {n: group for group in names_of.values() if len(group) > 1 for n in group}
    given = [n for n in parameters_and_buffers if n in tied]
    for name in given:
        group = tied[name]
        if len(group.intersection(given)) > 1 and len({parameters_and_buffers[n] for n in group}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        untied.update(dict.fromkeys(tied[name], parameters_and_buffers[name]))
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False, stack_weights=False):
    """Swap the given tensors into module for the duration of the block, then swap the originals back and
    write any tensor the module replaced meanwhile back into parameters_and_buffers."""
    new = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    accessor = NamedMemberAccessor(module)
    if strict:
        missing, unexpected = accessor.check_keys(new)
        problems = [f"{label} key(s): {', '.join(map(repr, keys))}."
                    for label, keys in (("Unexpected", unexpected), ("Missing", missing)) if keys]
        if problems:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(problems))
    originals = {}
    try:
        originals, _ = accessor.swap_tensors_dict(new, allow_missing=True)
        yield
    finally:
        if stack_weights:  # nested reparametrizations are undone last-in first-out
            originals = dict(reversed(originals.items()))
        current, _ = accessor.swap_tensors_dict(originals, allow_missing=True)
        parameters_and_buffers.update({k: current[k] for k in parameters_and_buffers if k in current})


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated alias of torch.func.functional_call (one dict only)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with parameters_and_buffers swapped in; a non-tuple args is one argument."""
    jit = torch.jit
    if jit.is_tracing() or jit.is_scripting() or isinstance(
            module, (jit.RecursiveScriptModule, jit.ScriptModule, jit.ScriptFunction)):
        raise RuntimeError("The stateless API can't be used with Jitted modules")
    if isinstance(module, torch.nn.DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **({} if kwargs is None else kwargs))
