"""torch.autograd.Function: custom ops with a Python forward and backward.

Function.apply runs forward without recording, then records one C node with an edge per
forward argument (none for non-tensors) and one output per returned tensor. The engine
calls the node's backward through the autograd callback; the ctx object is the node's
Python state and is what the outputs' grad_fn returns.
"""
import functools
import inspect

from .._C import ffi, lib
from . import _callback
from . import graph as _graph
from .graph import Node, _HookState

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction"]

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
          "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
          "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
          "if you need to access saved tensors after calling backward.")


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


class FunctionCtx:
    """What forward/setup_context record for backward."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not _is_tensor(t):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        raise RuntimeError("mark_shared_storage is deprecated. Tensors with shared storages are automatically "
                           "tracked. Note that calls to `set_()` are not tracked")

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, _HookState, Node):
    """The ctx of one Function.apply, and the grad_fn of its outputs."""

    _forward_cls = None

    def __init__(self):
        self._init_state()
        self.to_save = ()
        self.dirty_tensors = ()
        self.non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._freed = False

    def _node_ptr(self):
        if self._ptr is None:
            raise RuntimeError("the autograd node of this Function is no longer alive")
        return self._ptr

    def _flags(self):
        return _HookState._flags(self) | lib.MT_HOOK_FUNCTION

    def _state(self):
        return self

    def name(self):
        from .graph import _qualified
        return _qualified(ffi.string(type(self)._c_name).decode())

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>"

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(_FREED)
        if self._saved is None:  # forward is still running
            return tuple(self.to_save)
        out = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            t, version, output_nr = entry
            if isinstance(t, _graph._Packed):  # version: whether it is an input requiring grad
                from .grad_mode import is_grad_enabled
                if version and is_grad_enabled():
                    raise NotImplementedError("saved_tensors_hooks: a custom Function's backward recorded "
                                              "(create_graph=True) through a saved input is not implemented")
                t, version = t.tensor(), None
            if version is not None and t._version != version:
                _modified_error(t, version, *((self, output_nr) if output_nr is not None else (t.grad_fn, t.output_nr)))
            if output_nr is not None and self._ptr is not None:  # an output comes back attached to this node
                from .._core import check, new_out
                from .._tensor import wrap
                o = new_out()
                check(lib.mt_node_attach(self._ptr, t._h, output_nr, o))
                t = wrap(o[0])
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def _free_saved(self):
        self._saved = ()
        self._freed = True

    def _run_backward(self, grads):
        """The engine's call: grads of the tensor outputs -> grads of every forward argument."""
        from .._creation import zeros
        cls = self._forward_cls
        full = [None] * self._n_outputs
        for pos, g, meta in zip(self._tensor_out_pos, grads, self._out_meta):
            if g is None and self.materialize_grads:
                g = zeros(meta[0], dtype=meta[1])
            full[pos] = g
        backward_fn, vjp_fn = cls.backward, cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        user_fn = vjp_fn if vjp_fn is not Function.vjp else backward_fn
        result = user_fn(self, *full)
        if not isinstance(result, tuple):
            result = (result,)
        name, n_in = self.name(), len(self._input_meta)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n_in}, "
                                   f"got {len(result)})")
        out = []
        for i, (g, meta) in enumerate(zip(result, self._input_meta)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                out.append(None)
                continue
            if g is not None:
                if not _is_tensor(g):
                    raise TypeError(f"function {name} returned a gradient of type {type(g).__name__} at position "
                                    f"{i + 1}, but expected a Tensor or None")
                if not _expandable(meta, tuple(g.shape)):
                    raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                                       f"{list(g.shape)} but expected shape compatible with {list(meta)}")
            out.append(g)
        return [g for g, meta in zip(out, self._input_meta) if meta is not None]  # one per tensor input


def _expandable(shape, desired):
    """PyTorch's is_expandable_to(shape, desired)."""
    if len(shape) > len(desired):
        return False
    for a, b in zip(reversed(shape), reversed(desired)):
        if a != b and a != 1:
            return False
    return True


class FunctionMeta(type):
    """Gives each Function subclass its node class, named <ClassName>Backward."""

    def __init__(cls, name, bases, attrs):
        node_name = attrs.get("_node_name") or name + "Backward"
        backward_cls = type(node_name, (BackwardCFunction,), {"_forward_cls": cls,
                                                              "__module__": "torch.autograd.function"})
        backward_cls._c_name = ffi.new("char[]", node_name.encode())
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Subclass with static forward(ctx, *args) (or forward(*args) + setup_context) and backward."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will "
                      "raise an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    is_traceable = False
    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("torch.autograd.Function.vmap is not implemented")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            args = inspect.signature(cls.forward).bind(*((None,) if _takes_ctx(cls) else ()), *args, **kwargs)
            args.apply_defaults()
            args = args.args[1:] if _takes_ctx(cls) else args.args
        return _apply(cls, tuple(args))

    @classmethod
    def _compiled_autograd_key(cls, ctx):
        return (id(cls),)


def _takes_ctx(cls):
    return cls.setup_context is Function.setup_context


def _apply(cls, args):
    from .grad_mode import is_grad_enabled, no_grad
    ctx = cls._backward_cls()
    grad_mode = is_grad_enabled()
    needs = tuple(_is_tensor(a) and grad_mode and a.requires_grad for a in args)
    ctx.needs_input_grad = needs
    with no_grad():
        if _takes_ctx(cls):
            outputs = cls.forward(ctx, *args)
        else:
            outputs = cls.forward(*args)
            cls.setup_context(ctx, args, outputs)
    is_tuple = isinstance(outputs, tuple)
    outs = list(outputs) if is_tuple else [outputs]
    dirty = {id(t) for t in ctx.dirty_tensors}
    nondiff = {id(t) for t in ctx.non_differentiable}
    inputs = {id(a) for a in args if _is_tensor(a)}
    record = any(needs)
    originals = list(outs)
    pos, flags, dirt = [], [], []
    for k, o in enumerate(outs):
        if not _is_tensor(o):
            continue
        if id(o) in inputs and id(o) not in dirty:  # an input returned as is: a new alias gets the history
            o = outs[k] = o.detach()
        pos.append(k)
        differentiable = o.dtype.is_floating_point or o.dtype.is_complex  # PyTorch's isDifferentiableType
        flags.append(int(record and differentiable and id(originals[k]) not in nondiff))
        dirt.append(int(id(originals[k]) in dirty))
    for t in ctx.dirty_tensors:
        if not any(t is o for o in originals):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as "
                               "output. The inputs that are modified inplace must all be outputs of the Function.")
    for t in ctx.dirty_tensors:
        if record and t.is_leaf and t.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        lib.mt_tensor_bump_version(t._h)  # as PyTorch: a dirty tensor counts one more write
    ctx._n_outputs = len(outs)
    ctx._tensor_out_pos = pos
    ctx._out_meta = [(tuple(outs[k].shape), outs[k].dtype) for k in pos]
    ctx._input_meta = [tuple(a.shape) if _is_tensor(a) else None for a in args]
    if record and any(flags):
        handle = _callback.attach(ctx)
        ctx._handle = handle
        n = len(pos)
        node = ffi.new("mt_node **")
        ins = [a._h for a in args if _is_tensor(a)]
        st = lib.mt_function_record(cls._backward_cls._c_name, handle, len(ins), ins if ins else ffi.NULL, n,
                                    [outs[k]._h for k in pos], flags, dirt, int(ctx.materialize_grads), node)
        if st:
            _callback._HANDLES.pop(int(ffi.cast("uintptr_t", handle)), None)
            _callback.check(st)
        ctx._ptr = node[0]
    elif record:
        pass  # nothing differentiable came out: no node
    _save(ctx, originals, outs, pos)
    return tuple(outs) if is_tuple else outs[0]


def _modified_error(t, version, producer, output_nr):
    """PyTorch's text for a saved tensor written in place since: its producer named without
    "Backward<N>" (none for a leaf)."""
    from .._methods import _LEGACY_NAMES
    which = ""
    if producer is not None:
        which = f", which is output {output_nr} of {producer.name().split('Backward')[0]},"
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{_LEGACY_NAMES[t.dtype._name]} {list(t.shape)}]{which} is at version {t._version}; expected version "
        f"{version} instead. Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def _save(ctx, originals, outs, pos):
    """Saved tensors keep their versions; an output is kept as a detached alias (no cycle)."""
    saved = []
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
            continue
        nr = None
        for i, k in enumerate(pos):
            if t is originals[k] or t is outs[k]:
                nr = i
                t = outs[k].detach() if ctx._ptr is not None else outs[k]
                break
        if _graph._current_hooks() is not None:  # saved_tensors_hooks: keep the packed object
            saved.append((_graph._pack(t), t.requires_grad and nr is None, nr))
            continue
        saved.append((t, t._version, nr))
    ctx._saved = saved
    ctx.to_save = ()


def once_differentiable(fn):
    """backward runs without recording; differentiating its result raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from .grad_mode import is_grad_enabled, no_grad
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(_is_tensor(a) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs

        def fake_requires_grad(v):
            if v is not None:
                v = v.detach()
                v.requires_grad = True
            return v
        res = _DelayedError.apply(*[fake_requires_grad(v) for v in outs])
        return res[0] if single else res
    return wrapper


class _DelayedError(Function):
    _node_name = "Error"  # PyTorch's DelayedError records an Error node

    @staticmethod
    def forward(ctx, *args):
        return tuple(a.detach() if a is not None else None for a in args)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.autograd.function.NestedIOFunction is not implemented")
