"""torch.autograd: backward, grad, grad modes (the engine and formulas run in the C core)."""
from .._C import ffi, lib
from .._core import raise_status
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)


def _tensors(x):
    from .._tensor import Tensor
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_grads(roots, grads):
    from .._creation import ones_like
    from .._tensor import Tensor
    grads = _tensors(grads) if grads is not None else [None] * len(roots)
    if isinstance(grads, Tensor):
        grads = [grads]
    if len(grads) != len(roots):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs" if not grads else
                           f"Mismatch in number of gradients: expected {len(roots)}, got {len(grads)}")
    out = []
    for r, g in zip(roots, grads):
        if g is None:
            if r.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(r)
        elif not isinstance(g, Tensor):
            from .._creation import full_like
            g = full_like(r, g)
        elif tuple(g.shape) != tuple(r.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] has a "
                               f"shape of {r.shape}.")
        out.append(g)
    return out


def _run(roots, grads, retain_graph, create_graph, inputs, accumulate):
    from .._tensor import wrap
    grads = _root_grads(roots, grads)
    if retain_graph is None:
        retain_graph = create_graph
    n = len(inputs)
    results = ffi.new("mt_tensor *[]", max(n, 1))
    st = lib.mt_backward(len(roots), [r._h for r in roots], [g._h for g in grads], int(bool(retain_graph)),
                         int(bool(create_graph)), n, [t._h for t in inputs] if n else ffi.NULL,
                         results if n else ffi.NULL, accumulate)
    if st:
        raise_status(st)
    return [wrap(results[i]) if results[i] != ffi.NULL else None for i in range(n)]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    roots = _tensors(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    ins = _tensors(inputs)
    got = _run(roots, grad_tensors, retain_graph, create_graph, ins, 1)
    for t in got:
        if t is not None:
            t._h  # gradients were accumulated into the leaves by the core
    return None


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    from .._creation import zeros_like
    roots, ins = _tensors(outputs), _tensors(inputs)
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not implemented")
    if allow_unused is None:
        allow_unused = materialize_grads
    got = _run(roots, grad_outputs, retain_graph, create_graph, ins, 0)
    out = []
    for i, (t, g) in enumerate(zip(ins, got)):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                g = zeros_like(t)
        out.append(g)
    return tuple(out)


class Function:
    """torch.autograd.Function arrives with the autograd issue's custom-function support."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.autograd.Function is not implemented yet")

    @classmethod
    def apply(cls, *args, **kwargs):
        raise NotImplementedError("torch.autograd.Function.apply is not implemented yet")
