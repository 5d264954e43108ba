"""The one door from the C engine into Python (cffi extern "Python" mt_py_autograd_callback).

The core calls it with the opaque handle Python attached to a node or tensor: for tensor
and node hooks, a custom Function's backward, freeing a Function's saved tensors, anomaly
traces, and to drop the handle when its owner dies. An exception raised in Python is kept
here and re-raised by the Python call that started the backward run.
"""
import threading

from .._C import ffi, lib

_HANDLES = {}  # address -> the ffi handle keeping the Python state alive while C holds it
_pending = threading.local()


def attach(obj):
    """An opaque handle for obj, alive until the core releases it (MT_CB_RELEASE)."""
    h = ffi.new_handle(obj)
    _HANDLES[int(ffi.cast("uintptr_t", h))] = h
    return h


def state_of(handle):
    return None if handle == ffi.NULL else ffi.from_handle(handle)


def take_pending():
    """The Python exception a callback raised during the last core call, if any."""
    exc = getattr(_pending, "exc", None)
    _pending.exc = None
    return exc


def check(status):
    """Raise for a failed core call that may have run Python callbacks."""
    if status:
        exc = take_pending()
        if exc is not None:
            raise exc
        from .._core import raise_status
        raise_status(status)


def _tensor(p):
    """A new wrapper over a borrowed tensor pointer (or None)."""
    if p == ffi.NULL:
        return None
    from .._tensor import wrap
    lib.mt_tensor_retain(p)
    return wrap(p)


def _give(out, k, t):
    """Hand t to the core in out[k] (a new reference)."""
    if t is not None:
        lib.mt_tensor_retain(t._h)
        out[k] = t._h


def _dispatch(handle, kind, node, nin, ins, nout, outs):
    if kind == lib.MT_CB_RELEASE:
        h = _HANDLES.pop(int(ffi.cast("uintptr_t", handle)), None)
        if h is not None:
            ffi.from_handle(h)._released()
        return
    if kind == lib.MT_CB_PACK:  # a tensor saved under saved_tensors_hooks: outs[0] gets the handle
        from .graph import _pack
        outs[0] = ffi.cast("mt_tensor *", attach(_pack(_tensor(ins[0]))))
        return
    if kind == lib.MT_CB_UNPACK:
        _give(outs, 0, state_of(handle).tensor())
        return
    if kind == lib.MT_CB_ANOMALY_RECORD:
        from .anomaly_mode import _record
        _record(node)
        return
    state = state_of(handle)
    if state is None:
        return
    if kind == lib.MT_CB_TENSOR_PRE:
        grads = [_tensor(ins[k]) for k in range(nin)]
        for k, g in enumerate(grads):
            if g is not None:
                r = state._run_tensor_hooks(k, g)
                if r is not g:
                    _give(outs, k, r)
    elif kind == lib.MT_CB_NODE_PRE:
        grads = tuple(_tensor(ins[k]) for k in range(nin))
        for hook in list(state._pre_hooks().values()):
            r = hook(grads)
            if r is not None:
                grads = _replace(grads, r, "pre-hook")
                for k in range(nout):
                    _give(outs, k, grads[k])
    elif kind == lib.MT_CB_NODE_POST:
        grad_inputs = tuple(_tensor(ins[k]) for k in range(nout))
        grad_outputs = tuple(_tensor(ins[k]) for k in range(nout, nin))
        for hook in list(state._post_hooks().values()):
            r = hook(grad_inputs, grad_outputs)
            if r is not None:
                grad_inputs = _replace(grad_inputs, r, "hook")
                for k in range(nout):
                    _give(outs, k, grad_inputs[k])
    elif kind == lib.MT_CB_POST_ACCUMULATE:
        state._run_post_accumulate(ins[0])
    elif kind == lib.MT_CB_BACKWARD:
        grads = state._run_backward([_tensor(ins[k]) for k in range(nin)])
        for k in range(nout):
            _give(outs, k, grads[k])
    elif kind == lib.MT_CB_FREE_SAVED:
        state._free_saved()
    elif kind == lib.MT_CB_ANOMALY_REPORT:
        from .anomaly_mode import _report
        _report(state, node)


def _replace(old, new, what):
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"{what} returned an incorrect number of values (got {len(new)}, but expected {len(old)})")
    return new


@ffi.def_extern()
def mt_py_autograd_callback(handle, kind, node, nin, ins, nout, outs):
    try:
        _dispatch(handle, kind, node, nin, ins, nout, outs)
        return 0
    except BaseException as e:  # noqa: B036 - carried to the Python frame that started backward
        if kind in (lib.MT_CB_RELEASE, lib.MT_CB_ANOMALY_RECORD):
            return 0  # nothing to report to: a node died or an op recorded
        _pending.exc = e
        return lib.MT_ERR_RUNTIME


lib.mt_autograd_set_callback(lib.mt_py_autograd_callback)
