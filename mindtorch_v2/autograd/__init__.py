"""torch.autograd: backward, grad, grad modes, Function, hooks (the engine and formulas run in the C core)."""
import threading

from .._C import ffi, lib
from .._core import check as _check, new_out as _new_out
from . import _callback
from .grad_mode import (enable_grad, enforce_grad_layout_policy, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, is_multithreading_enabled, no_grad, set_grad_enabled,
                        set_multithreading_enabled)
from . import graph
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .gradcheck import gradcheck, gradgradcheck
from . import functional
from . import forward_ad
from . import profiler, profiler_util, profiler_legacy
from ._saved import SavedTensor  # noqa: F401  (torch._C._autograd's classes, which torch.autograd re-exports)
from .profiler_legacy import ProfilerEvent  # noqa: F401
from .profiler_util import DeviceType  # noqa: F401
from ..profiler.profiler import ProfilerConfig, ProfilerState  # noqa: F401
from .profiler import kineto_available
from ..profiler.profiler import ProfilerActivity  # torch._C._profiler's enum, which torch.autograd re-exports
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like


def is_view_replay_enabled():
    """False: views of a tensor are never replayed here (PyTorch's default; there is no switch to turn it on)."""
    return False


def _tensors(x):
    if x is None:
        return []
    if isinstance(x, _Tensor):
        return [x]
    return list(x)


def _implicit_grad(r):
    """The root gradient backward() makes for a one-element real output: ones in its dtype and on its
    device (None for a root that requires no grad: the core's error names it, as PyTorch's engine)."""
    if not r.requires_grad:
        return None
    if r.numel() != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    h = r._h
    dt = lib.mt_tensor_dtype(h)
    if dt >= lib.MT_C64:
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {r.dtype}")
    if lib.mt_tensor_ndim(h) == 0 and lib.mt_tensor_device(h) == lib.MT_CPU:  # the usual loss: one core call
        out = _new_out()
        _check(lib.mt_scalar_tensor(1.0, 1, lib.MT_SCALAR_FLOAT, dt, 0, out))
        return _wrap(out[0])
    from .._creation import ones_like
    return ones_like(r)


def _root_grads(roots, grads):
    if grads is None:
        return [_implicit_grad(r) for r in roots]
    grads = _tensors(grads)
    if len(grads) != len(roots):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs" if not grads else
                           f"Mismatch in number of gradients: expected {len(roots)}, got {len(grads)}")
    out = []
    for r, g in zip(roots, grads):
        if g is None:
            g = _implicit_grad(r)
        elif not isinstance(g, _Tensor):
            from .._creation import full_like
            g = full_like(r, g)
        out.append(g)  # (a gradient of another shape: the core's error)
    return out


def _run(roots, grads, retain_graph, create_graph, inputs, accumulate):
    grads = _root_grads(roots, grads)
    if retain_graph is None:
        retain_graph = create_graph
    n = len(inputs)
    results = ffi.new("mt_tensor *[]", n) if n else ffi.NULL
    _callback.take_pending()
    callbacks = []
    try:
        running = _final.running
    except AttributeError:
        running = _final.running = []
    running.append((callbacks, n > 0))
    try:
        st = lib.mt_backward(len(roots), [r._h for r in roots], [ffi.NULL if g is None else g._h for g in grads],
                             int(bool(retain_graph)), int(bool(create_graph)), n,
                             [t._h for t in inputs] if n else ffi.NULL, results, accumulate)
        _callback.check(st)
        while callbacks:  # a final callback may queue another, as PyTorch's engine allows
            callbacks.pop(0)()
    finally:
        running.pop()
    return [_wrap(results[i]) if results[i] != ffi.NULL else None for i in range(n)]


# per thread, each running backward pass, innermost last: (its final callbacks, whether it has inputs)
_final = threading.local()


class _ImperativeEngine:
    """Variable._execution_engine: queue_callback(fn) runs fn once the running backward pass has
    finished (what DDP finalizes its gradient reduction with)."""

    def queue_callback(self, callback):
        running = getattr(_final, "running", None)
        if not running:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        running[-1][0].append(callback)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate the gradients of tensors into the leaves' .grad (or only into inputs' .grad)."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    if inputs is not None and not _tensors(inputs):
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    roots = _tensors(tensors)
    _run(roots, grad_tensors, retain_graph, create_graph, _tensors(inputs), 1)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs (nothing is accumulated into .grad)."""
    from .._creation import zeros_like
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("torch.autograd.grad(is_grads_batched=True) is not implemented")
    single = isinstance(inputs, _Tensor)
    roots, ins = _tensors(outputs), _tensors(inputs)
    if not ins:
        raise RuntimeError("grad requires non-empty inputs.")
    got = _run(roots, grad_outputs, retain_graph, create_graph, ins, 0)
    out = []
    for i, (t, g) in enumerate(zip(ins, got)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                g = zeros_like(t)
        out.append(g)
    return tuple(out)


def _is_checkpoint_valid():
    """False inside a backward pass run with inputs (autograd.grad, backward(inputs=)), which a
    reentrant checkpoint's nested backward cannot honour."""
    running = getattr(_final, "running", None)
    return not (running and running[-1][1])


from .._tensor import Tensor as Variable, Tensor as _Tensor, wrap as _wrap  # noqa: E402

Variable._execution_engine = _ImperativeEngine()


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
