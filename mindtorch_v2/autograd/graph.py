"""torch.autograd.graph: grad_fn objects (Node), hooks on nodes and tensors, saved-tensor hooks.

A Node wraps one C graph node; the same C node always gives the same Python object while
one is alive. Hooks and metadata live in a state object the C node holds through an opaque
handle (autograd/_callback.py), so they last exactly as long as the node.
"""
import threading
import weakref
from collections import OrderedDict

from .._C import ffi, lib
from . import _callback

_NULL = ffi.NULL

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook", "allow_mutation_on_saved_tensors"]


def _add_hook(d, fn):
    from ..utils.hooks import RemovableHandle  # (lazily: torch.utils imports autograd)
    h = RemovableHandle(d)
    d[h.id] = fn
    return h


def _run_hooks(hooks, grad):
    """Tensor hooks in order; a hook may return a replacement of the same shape."""
    if not hooks:
        return grad
    for hook in list(hooks.values()):
        r = hook(grad)
        if r is None:
            continue
        from .._tensor import Tensor
        if not isinstance(r, Tensor):
            raise TypeError(f"expected Tensor, but hook returned '{type(r).__name__}'")
        if tuple(r.shape) != tuple(grad.shape):
            raise RuntimeError(f"hook '{getattr(hook, '__name__', 'hook')}' has changed the size of value")
        grad = r
    return grad


_CPP_NODES = {"AccumulateGrad", "CopyBackwards", "CopySlices", "DelayedError", "Error", "GraphRoot", "Identity",
              "NotImplemented"}


def _qualified(name):
    """Node.name(): PyTorch's hand-written C++ nodes carry their namespace."""
    return "torch::autograd::" + name if name in _CPP_NODES else name


class _HookState:
    """Hooks and metadata of one C node (held by it through a handle)."""

    def _init_state(self, ptr=None):
        self._ptr = ptr  # borrowed: the node owns this state
        self._handle = None
        self._meta = None
        self._pre = None
        self._post = None
        self._tensor_pre = None
        self._stack = None

    def _flags(self):
        f = 0
        if self._tensor_pre:
            f |= lib.MT_HOOK_TENSOR_PRE
        if self._pre:
            f |= lib.MT_HOOK_PRE
        if self._post:
            f |= lib.MT_HOOK_POST
        return f

    def _sync_flags(self):
        if self._ptr is not None:
            lib.mt_node_set_handle(self._ptr, self._handle, self._flags())

    def _pre_hooks(self):
        if self._pre is None:
            self._pre = OrderedDict()
        return self._pre

    def _post_hooks(self):
        if self._post is None:
            self._post = OrderedDict()
        return self._post

    def _tensor_pre_hooks(self, output_nr):
        if self._tensor_pre is None:
            self._tensor_pre = {}
        return self._tensor_pre.setdefault(output_nr, OrderedDict())

    def _run_tensor_hooks(self, k, grad):
        return _run_hooks(self._tensor_pre.get(k) if self._tensor_pre else None, grad)

    def _released(self):
        self._ptr = None


class _NodeState(_HookState):
    def __init__(self, ptr):
        self._init_state(ptr)


class Node:
    """A node of the autograd graph (what Tensor.grad_fn returns)."""

    __slots__ = ()

    def _node_ptr(self):
        raise NotImplementedError

    def _state(self):
        """The hooks/metadata state, attached to the C node on first use."""
        ptr = self._node_ptr()
        st = _callback.state_of(lib.mt_node_handle(ptr))
        if st is None:
            st = _NodeState(ptr)
            st._handle = _callback.attach(st)
            st._sync_flags()
        return st

    def name(self):
        return _qualified(ffi.string(lib.mt_node_name(self._node_ptr())).decode())

    @property
    def next_functions(self):
        ptr = self._node_ptr()
        nr = ffi.new("int *")
        out = []
        for i in range(lib.mt_node_num_next(ptr)):
            n = node_of(lib.mt_node_next(ptr, i, nr))
            out.append((n, nr[0]))
        return tuple(out)

    @property
    def metadata(self):
        st = self._state()
        if st._meta is None:
            st._meta = {}
        return st._meta

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node ran; may return new grad_inputs."""
        st = self._state()
        h = _add_hook(st._post_hooks(), fn)
        st._sync_flags()
        return h

    def register_prehook(self, fn):
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""
        st = self._state()
        h = _add_hook(st._pre_hooks(), fn)
        st._sync_flags()
        return h

    def _register_hook_dict(self, tensor):
        raise NotImplementedError("Node._register_hook_dict is not implemented; use Tensor.register_hook")

    def _sequence_nr(self):
        return lib.mt_node_seq(self._node_ptr())

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"calling the autograd node {self.name()} directly is not implemented")

    @classmethod
    def __subclasshook__(cls, C):
        return NotImplemented


class _CNode(Node):
    """A node built by the C core (MulBackward0, AccumulateGrad, ...): owns one reference."""

    __slots__ = ("_ptr", "__weakref__")

    def _node_ptr(self):
        return self._ptr

    def __del__(self):
        try:
            lib.mt_node_release(self._ptr)
        except (AttributeError, TypeError):
            pass

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __getattr__(self, name):  # grad_fn._saved_<name> (a table per node name, autograd/_saved.py)
        if name.startswith("_saved_"):
            from . import _saved
            return _saved.get(self._ptr, type(self).__name__, name[7:])
        if name.startswith("_raw_saved_"):
            from . import _saved
            return _saved.get_raw(self._ptr, type(self).__name__, name[11:])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        from . import _saved
        return sorted(set(super().__dir__()) | set(_saved.names(type(self).__name__)))


class _AccumulateGrad(_CNode):
    __slots__ = ()

    @property
    def variable(self):
        from .._tensor import wrap
        p = lib.mt_node_variable(self._ptr)
        if p == ffi.NULL:  # a leaf view, held weakly, that nobody holds any more
            return None
        st = _callback.state_of(lib.mt_tensor_handle(p))
        t = st.wrapper() if isinstance(st, _TensorState) else None
        if t is not None:
            lib.mt_tensor_release(p)
            return t
        return wrap(p)


_CLASSES = {"AccumulateGrad": type("AccumulateGrad", (_AccumulateGrad,), {"__slots__": (), "__module__": "builtins"})}
_WRAPPERS = weakref.WeakValueDictionary()


def node_of(p):
    """The Python object for a node given as a new reference (None for NULL)."""
    if p == _NULL:
        return None
    st = _callback.state_of(lib.mt_node_handle(p))
    if isinstance(st, Node):  # a custom Function's node is its ctx object
        lib.mt_node_release(p)
        return st
    addr = int(ffi.cast("uintptr_t", p))
    w = _WRAPPERS.get(addr)
    if w is not None:
        lib.mt_node_release(p)
        return w
    name = ffi.string(lib.mt_node_name(p)).decode()
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (_CNode,), {"__slots__": (), "__module__": "builtins"})
    w = object.__new__(cls)
    w._ptr = p
    _WRAPPERS[addr] = w
    return w


# ---- tensor hooks -----------------------------------------------------------------------

class _TensorState:
    """A leaf's hooks (held by the C tensor through a handle)."""

    def __init__(self, tensor):
        self._ptr = tensor._h
        self._handle = None
        self.hooks = OrderedDict()
        self.post_accumulate = OrderedDict()
        self.wrapper = weakref.ref(tensor)

    def _sync_flags(self):
        if self._ptr is not None:
            f = (lib.MT_HOOK_TENSOR_PRE if self.hooks else 0) | \
                (lib.MT_HOOK_POST_ACCUMULATE if self.post_accumulate else 0)
            lib.mt_tensor_set_handle(self._ptr, self._handle, f)

    def _run_tensor_hooks(self, k, grad):
        return _run_hooks(self.hooks, grad)

    def _run_post_accumulate(self, p):
        t = self.wrapper()
        if t is None:
            t = _callback._tensor(p)
        for hook in list(self.post_accumulate.values()):
            hook(t)

    def _released(self):
        self._ptr = None


def _tensor_state(t):
    st = _callback.state_of(lib.mt_tensor_handle(t._h))
    if st is None:
        st = _TensorState(t)
        st._handle = _callback.attach(st)
        st._sync_flags()
    elif st.wrapper() is None:
        st.wrapper = weakref.ref(t)
    return st


def register_tensor_hook(t, hook):
    """Tensor.register_hook: hook(grad) on the summed gradient; may return a replacement."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = node_of(lib.mt_tensor_grad_fn(t._h))
    if fn is None:
        st = _tensor_state(t)
        h = _add_hook(st.hooks, hook)
    else:
        st = fn._state()
        h = _add_hook(st._tensor_pre_hooks(lib.mt_tensor_output_nr(t._h)), hook)
    st._sync_flags()
    return h


def tensor_hooks(t):
    """{handle id: hook} of t's register_hook hooks (PyTorch's Tensor._backward_hooks); {} if none."""
    fn = node_of(lib.mt_tensor_grad_fn(t._h))
    if fn is not None:
        return dict(fn._state()._tensor_pre_hooks(lib.mt_tensor_output_nr(t._h)))
    st = _callback.state_of(lib.mt_tensor_handle(t._h))
    return dict(st.hooks) if st is not None else {}


def register_post_accumulate_grad_hook(t, hook):
    """hook(tensor) after the leaf's .grad was accumulated."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not t.is_leaf:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    st = _tensor_state(t)
    h = _add_hook(st.post_accumulate, hook)
    st._sync_flags()
    return h


class GradientEdge:
    """(node, output_nr): where a tensor's gradient enters the graph."""

    __slots__ = ("node", "output_nr")

    def __init__(self, node, output_nr):
        self.node = node
        self.output_nr = output_nr

    def __iter__(self):
        return iter((self.node, self.output_nr))

    def __repr__(self):
        return f"GradientEdge(node={self.node!r}, output_nr={self.output_nr})"


def get_gradient_edge(tensor):
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    fn = tensor.grad_fn
    if fn is None:
        raise NotImplementedError("get_gradient_edge of a leaf tensor (its AccumulateGrad node) is not implemented")
    return GradientEdge(fn, lib.mt_tensor_output_nr(tensor._h))


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    raise NotImplementedError("torch.autograd.graph.register_multi_grad_hook is not implemented")


# ---- saved tensor hooks -----------------------------------------------------------------

_disabled = threading.local()
_hooks = threading.local()  # .stack: the (pack, unpack) pairs installed in this thread, innermost last


def _current_hooks():
    """The innermost (pack, unpack) pair in force, or None (none installed, or disabled)."""
    stack = getattr(_hooks, "stack", None)
    if not stack or getattr(_disabled, "message", None) is not None:
        return None
    return stack[-1]


def _sync_core():
    from .._C import lib
    lib.mt_set_saved_tensors_hooks(1 if _current_hooks() is not None else 0)


class _Packed:
    """What a node keeps for a tensor saved under saved_tensors_hooks."""
    __slots__ = ("unpack", "obj")

    def __init__(self, unpack, obj):
        self.unpack, self.obj = unpack, obj

    def _released(self):
        self.obj = None

    def tensor(self):
        from .._tensor import Tensor
        t = self.unpack(self.obj)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t


def _pack(t):
    """Run the innermost pack hook on t (a tensor being saved): the object the node keeps."""
    from .grad_mode import no_grad
    pack, unpack = _current_hooks()
    with no_grad():  # as PyTorch runs it
        return _Packed(unpack, pack(t))


class saved_tensors_hooks:
    """Pack/unpack hooks for the tensors ops save for backward: pack_hook(tensor) -> any object,
    kept by the graph instead of the tensor; unpack_hook(object) -> the tensor, when backward
    needs it. Thread-local; nested contexts use the innermost pair."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        msg = getattr(_disabled, "message", None)
        if msg is not None:
            raise RuntimeError(msg)
        if not hasattr(_hooks, "stack"):
            _hooks.stack = []
        _hooks.stack.append((self.pack_hook, self.unpack_hook))
        _sync_core()
        return self

    def __exit__(self, *exc):
        _hooks.stack.pop()
        _sync_core()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (copied there if they live elsewhere; pin_memory is
    accepted and has no effect: this build has no accelerator) and moved back on unpack."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return (t.device, t if t.device.type == "cpu" else t.to("cpu"))

        def unpack(packed):
            device, t = packed
            return t if t.device == device else t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Within it, installing saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if getattr(_hooks, "stack", None):  # hooks already in force: PyTorch refuses at once
            raise RuntimeError(self.error_message)
        self._prev = getattr(_disabled, "message", None)
        _disabled.message = self.error_message
        _sync_core()
        return self

    def __exit__(self, *exc):
        _disabled.message = self._prev
        _sync_core()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


class allow_mutation_on_saved_tensors:
    def __enter__(self):
        raise NotImplementedError("torch.autograd.graph.allow_mutation_on_saved_tensors is not implemented")

    def __exit__(self, *exc):
        return False


def increment_version(tensor):
    """Count an in-place write autograd did not see (a kernel that wrote through data_ptr) in the
    version counter of a tensor or of each tensor of an iterable."""
    for t in (tensor,) if hasattr(tensor, "_h") else tensor:
        lib.mt_tensor_bump_version(t._h)
