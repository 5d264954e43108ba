"""torch.utils.checkpoint.

Limitation (first step): the checkpointed function runs once and its graph is kept, so no memory
is saved; values, gradients and the RNG stream are PyTorch's (PyTorch's recomputation restores the
RNG state, so its stream advances exactly once too). Recomputing in backward needs
torch.autograd.Function (reentrant) or saved-tensor hooks (non-reentrant), which arrive with the
autograd work. The reentrant variant's visible rule is kept: if no input requires grad, the
output does not either (PyTorch warns and runs the forward under no_grad).
"""
import contextlib
import warnings

_checkpoint_debug_enabled = None


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def set_checkpoint_debug_enabled(enabled):
    global _checkpoint_debug_enabled

    @contextlib.contextmanager
    def ctx():
        global _checkpoint_debug_enabled
        prev = _checkpoint_debug_enabled
        _checkpoint_debug_enabled = enabled
        try:
            yield
        finally:
            _checkpoint_debug_enabled = prev
    return ctx()


def set_checkpoint_early_stop(enable):
    return contextlib.nullcontext()


def get_device_states(*args):
    """(device ids, RNG states) of the accelerator devices that args' tensors live on: none, as every
    mindtorch_v2 tensor is on the CPU or meta device, which PyTorch skips."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restores what get_device_states returned: nothing, without accelerator devices."""
    if len(devices):
        raise NotImplementedError("torch.utils.checkpoint.set_device_states: mindtorch_v2 has no accelerator devices")


def detach_variable(inputs):
    from .._tensor import Tensor
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    from .._tensor import Tensor
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)
        return False
    return True


class CheckpointError(RuntimeError):
    pass


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    from ..autograd.grad_mode import no_grad
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
                      "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if not check_backward_validity(args):
            with no_grad():
                return function(*args)
        return function(*args)
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got " + str(determinism_check))
    forward_context, _recompute_context = context_fn()
    with forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
