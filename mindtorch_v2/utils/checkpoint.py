"""torch.utils.checkpoint: activation checkpointing that recomputes in backward, as PyTorch does.

- Reentrant (`use_reentrant=True`): an autograd Function runs the function under no_grad, keeps only
  its inputs, and in backward runs it again with grad enabled and backpropagates through that graph
  (a nested backward, which the engine allows).
- Non-reentrant: the forward runs with grad enabled under saved-tensor hooks that keep a placeholder
  for each tensor an op saves; the first unpack in a backward runs the function again under hooks
  that fill the placeholders, in the same order, and stops once all are filled (early stop).
Both restore the CPU RNG state and the CPU autocast state of the forward while recomputing, so
dropout draws the same mask and the global RNG stream is left as if nothing ran twice.
`debug=True` is accepted but gives the plain CheckpointError (PyTorch adds operator logs).
"""
import contextlib
import warnings
import weakref

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


# PyTorch's hint after a CheckpointError (the same text, its line breaks written as \n)
_DEBUG_TIP = "\n".join([
    '',
    'Tip: To see a more detailed error message, either pass `debug=True` to',
    '`torch.utils.checkpoint.checkpoint(...)` or wrap the code block',
    'with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to',
    'enable checkpoint\u2011debug mode globally.',
    '',
    'If this error occurs under torch.compile with automatic_dynamic_shapes enabled,',
    'it may be because the recomputation selected a different compiled graph than the',
    'forward pass (e.g., a dynamic graph instead of the original static graph).',
    'To fix this, either:',
    '  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as',
    '    dynamic upfront, avoiding the static-to-dynamic transition.',
    '  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache',
    '    reordering, which can change which graph is checked first between forward',
    '    and recompute.',
    'See https://github.com/pytorch/pytorch/issues/166926 for more details and',
    'workaround examples.',
    '',
])

_early_stop_override = None  # set_checkpoint_early_stop's value while its context is open


def set_checkpoint_early_stop(enable):
    """Within it, non-reentrant checkpoints stop (or not) recomputing once all saved tensors are back."""
    @contextlib.contextmanager
    def ctx():
        global _early_stop_override
        prev, _early_stop_override = _early_stop_override, enable
        try:
            yield
        finally:
            _early_stop_override = prev
    return ctx()


def _forward_state(preserve_rng_state):
    """What the recomputation must see again: the CPU RNG state (if preserved) and CPU autocast."""
    from .. import get_rng_state
    from ..amp import autocast_mode as am
    rng = get_rng_state() if preserve_rng_state else None
    return rng, dict(enabled=am.is_autocast_enabled("cpu"), dtype=am.get_autocast_dtype("cpu"),
                     cache_enabled=am.is_autocast_cache_enabled())


@contextlib.contextmanager
def _replaying(state):
    """Runs the body under the forward's RNG and autocast state; the RNG is restored after."""
    from .. import set_rng_state
    from ..amp import autocast
    from ..random import fork_rng
    rng, autocast_kwargs = state
    with fork_rng(enabled=rng is not None):
        if rng is not None:
            set_rng_state(rng)
        with autocast("cpu", **autocast_kwargs):
            yield


def _reentrant_function():
    from ..autograd import Function

    class CheckpointFunction(Function):
        @staticmethod
        def forward(ctx, fn, preserve, *args):
            from .._tensor import Tensor
            from ..autograd.grad_mode import no_grad
            check_backward_validity(args)  # (warns when no input requires grad)
            ctx.fn = fn
            ctx.state = _forward_state(preserve)
            ctx.inputs = list(args)  # the tensors among them are taken from saved_tensors in backward
            ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            ctx.save_for_backward(*[args[i] for i in ctx.tensor_at])
            with no_grad():
                return fn(*args)

        @staticmethod
        def backward(ctx, *grads):
            from .._tensor import Tensor
            from ..autograd import _is_checkpoint_valid, backward
            from ..autograd.grad_mode import enable_grad
            if not _is_checkpoint_valid():
                raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                                   "or passing an `inputs` parameter to .backward(). To resolve this error, you can "
                                   "either set use_reentrant=False, or call .backward() without passing the "
                                   "`inputs` argument.")
            inputs = list(ctx.inputs)
            for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
                inputs[i] = t
            with _replaying(ctx.state):
                inputs = detach_variable(tuple(inputs))
                with enable_grad():
                    outputs = ctx.fn(*inputs)
            outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
            pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
            if not pairs:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
            backward([o for o, _ in pairs], [g for _, g in pairs])
            return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)

    return CheckpointFunction


_CheckpointFunction = None


class _StopRecomputation(Exception):
    pass


class _Slot:
    """The placeholder a node keeps for one saved tensor; `.value` holds the recomputed tensor
    until backward unpacks it (each unpack takes it, so a second backward recomputes)."""
    __slots__ = ("value", "__weakref__")

    def __init__(self):
        self.value = None


class _Frame:
    """One non-reentrant checkpoint call: its inputs, how to recompute, and its placeholders."""

    def __init__(self, recompute, args, kwargs, early_stop, check_metadata):
        self.recompute, self.args, self.kwargs = recompute, args, kwargs
        self.early_stop, self.check_metadata = early_stop, check_metadata
        self.slots, self.metadata = [], []

    def pack(self, t):
        slot = _Slot()
        self.slots.append(weakref.ref(slot))
        if self.check_metadata:
            self.metadata.append(_metadata(t))
        return slot

    def unpack(self, slot):
        if slot.value is None:
            self._run_again()
        t, slot.value = slot.value, None
        return t

    def _run_again(self):
        from ..autograd.graph import saved_tensors_hooks
        from ..autograd.grad_mode import enable_grad
        got = []

        def keep(t):
            t = t.detach() if t.requires_grad else t
            if len(got) >= len(self.slots):
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      "than during the original forward pass.\n" + _DEBUG_TIP)
            got.append(t)
            if self.early_stop and len(got) == len(self.slots):
                raise _StopRecomputation
            return t

        try:
            with saved_tensors_hooks(keep, lambda t: t), enable_grad():
                self.recompute(*self.args, **self.kwargs)
        except _StopRecomputation:
            pass
        if len(got) != len(self.slots):
            raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                  "original forward and recomputation.\n"
                                  f"Number of tensors saved during forward: {len(self.slots)}\n"
                                  f"Number of tensors saved during recomputation: {len(got)}.\n" + _DEBUG_TIP)
        if self.check_metadata:
            bad = "".join(f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: {_metadata(t)}\n"
                          for i, (m, t) in enumerate(zip(self.metadata, got))
                          if self.slots[i]() is not None and m != _metadata(t))
            if bad:
                raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                      f"different metadata than during the forward pass.\n{bad}.\n" + _DEBUG_TIP)
        for ref, t in zip(self.slots, got):
            slot = ref()
            if slot is not None:  # (a slot whose node is gone needs nothing)
                slot.value = t


def _metadata(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, early_stop, args, kwargs):
    from ..autograd.graph import saved_tensors_hooks
    from ..autograd.grad_mode import is_grad_enabled
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got " + str(determinism_check))
    fwd_ctx, rerun_ctx = context_fn()
    if not is_grad_enabled():
        with fwd_ctx:
            return function(*args, **kwargs)
    state = _forward_state(preserve)

    def recompute(*a, **k):
        with _replaying(state), rerun_ctx:
            function(*a, **k)

    frame = _Frame(recompute, args, kwargs, early_stop if _early_stop_override is None else _early_stop_override,
                   determinism_check == "default")
    with saved_tensors_hooks(frame.pack, frame.unpack), fwd_ctx:
        return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Run function(*args, **kwargs) without keeping its intermediate tensors; backward recomputes them."""
    global _CheckpointFunction
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
                      "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        _CheckpointFunction = _CheckpointFunction or _reentrant_function()
        return _CheckpointFunction.apply(function, preserve, *args)
    if (debug if _checkpoint_debug_enabled is None else _checkpoint_debug_enabled) and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, early_stop, args, kwargs)


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
