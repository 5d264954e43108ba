"""torch.func's autograd transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize)
on mindtorch_v2's tape autograd.

PyTorch wraps tensors per transform level. Here each transform call is a `_Level`: it makes its own
differentiable stand-ins for the inputs and differentiates with autograd.grad. A stand-in is a fresh leaf
(`x.detach().requires_grad_()`, "own"), or `x.view_as(x)` when x already requires grad in a
grad-enabled region, so that an enclosing transform or plain autograd sees through this one. A result is
unwrapped (detached) unless its graph reaches a grad-requiring tensor that is not one of the level's own
leaves: what PyTorch's level unwrapping gives (grad of grad, a closure over a parameter, x requiring grad).
A graph is only kept (create_graph) when something outside the level can see it.

Forward mode is the double vjp: g(u) = J^T u is linear in u, so the vjp of g with cotangent t is J t,
exactly, for every function whose backward is itself differentiable (all built-in formulas are). jacfwd
differentiates g once per input element, reusing one forward and one backward pass.
"""
import functools

from .._C import ffi
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import _AccumulateGrad
from ..utils._pytree import tree_flatten, tree_map, tree_unflatten, treespec_pprint

JVP = "jvp(f, primals, tangents)"


def _address(t):
    return int(ffi.cast("uintptr_t", t._h))


def _autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph):
    """autograd.grad over the outputs that require grad; an unreached input gets zeros (PyTorch's rule)."""
    from .._creation import zeros_like
    from ..autograd import grad
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return tuple(zeros_like(i) for i in inputs)
    got = grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
               create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(i) if g is None else g for g, i in zip(got, inputs))


class _Level:
    """One transform call: its own leaves, and how its results are unwrapped."""

    def __init__(self):
        self.outer = is_grad_enabled()  # plain autograd outside sees through the transform only then
        self._own = []  # kept alive, so their addresses stay theirs
        self._own_addresses = set()
        self._inside = {}  # id -> graph node known to reach own leaves only (held: ids stay theirs)

    def leaf(self, t):
        t = t.requires_grad_()
        self._own.append(t)
        self._own_addresses.add(_address(t))
        return t

    def differentiable(self, x):
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not (x.is_floating_point() or x.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self.outer and x.requires_grad:
            return x.view_as(x)
        return self.leaf(x.detach())

    def differentiable_args(self, args, argnums):
        """args with the argnums ones made differentiable, and those (one pytree, or a tuple for a tuple)."""
        argnums = _checked_argnums(argnums, len(args))
        args = list(args)
        for i in (argnums,) if isinstance(argnums, int) else argnums:
            args[i] = tree_map(self.differentiable, args[i])
        diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
        return tuple(args), diff

    def reaches_outside(self, t):
        """Whether t's graph reaches a tensor requiring grad that this level did not make."""
        if not t.requires_grad:
            return False
        if t.grad_fn is None:
            return _address(t) not in self._own_addresses
        seen, todo = {}, [t.grad_fn]
        while todo:
            node = todo.pop()
            if node is None or id(node) in seen or id(node) in self._inside:
                continue
            seen[id(node)] = node
            if isinstance(node, _AccumulateGrad):  # a leaf
                v = node.variable
                if v is not None and _address(v) not in self._own_addresses:
                    return True
                continue
            todo.extend(n for n, _ in node.next_functions)
        self._inside.update(seen)
        return False

    def keeps_graph(self, *tensors):
        return self.outer and any(isinstance(t, Tensor) and self.reaches_outside(t) for t in tensors)

    def unwrap(self, t, outer=None):
        """t as the caller sees it: detached unless its graph reaches outside this level."""
        outer = self.outer if outer is None else outer
        if t.requires_grad and not (outer and self.reaches_outside(t)):
            return t.detach()
        return t

    def unwrap_tree(self, tree):
        def one(x):
            if isinstance(x, Tensor):
                return self.unwrap(x)
            if isinstance(x, tuple):
                return self.unwrap_tree(x)
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        return tree_map(one, tree)

    def forward(self, flat_out, flat_in):
        """The double vjp prepared: returns push(flat_tangents) -> the outputs' tangents (None where an
        output does not depend on the inputs)."""
        from .._creation import zeros_like
        from ..autograd import grad
        diff = [k for k, o in enumerate(flat_out) if o.requires_grad]
        us = [self.leaf(zeros_like(flat_out[k])) for k in diff]
        g = grad([flat_out[k] for k in diff], flat_in, us, create_graph=True, allow_unused=True) if diff else ()
        live = [(gi, i) for i, gi in enumerate(g) if gi is not None and gi.requires_grad]

        def push(flat_tangents, outer=None):
            outer = self.outer if outer is None else outer
            got = [None] * len(us)
            if live:
                cg = outer and (any(self.reaches_outside(gi) for gi, _ in live)
                                or any(flat_tangents[i].requires_grad for _, i in live))
                got = grad([gi for gi, _ in live], us, [flat_tangents[i] for _, i in live], retain_graph=True,
                           create_graph=cg, allow_unused=True)
            out = [None] * len(flat_out)
            for k, r in zip(diff, got):
                out[k] = None if r is None else self.unwrap(r, outer)
            return out
        return push


def _checked_argnums(argnums, n):
    """argnums validated and made non-negative (PyTorch's texts and order)."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")

    def one(a):
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if -n <= a < n:
            return a % n
        raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    if isinstance(argnums, int):
        return one(argnums)
    argnums = tuple(one(a) for a in argnums)
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def _slice_argnums(args, argnums):
    """The argnums arguments as a tuple."""
    argnums = _checked_argnums(argnums, len(args))
    return (args[argnums],) if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _split_aux(output, api):
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_tensor_outputs(flat, api):
    if len(flat) < 1 or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat})")
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _check_tensor_list(flat, api, what):
    if not flat:
        raise RuntimeError(f"{api}: Expected {what} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected {what} to only contain Tensors, got {type(t)}")


def _error_if_complex(api, tree, is_input):
    for idx, x in enumerate(tree_flatten(tree)[0]):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            raise RuntimeError(f"{api}: Expected all {'inputs' if is_input else 'outputs'} to be real but received "
                               f"complex tensor at flattened input idx: {idx}")


# ---- reverse mode --------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (the gradient of func's scalar output with respect to args[argnums], the output);
    with has_aux, func returns (output, aux) and the value is (output, aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        lv = _Level()
        with enable_grad():
            args, diff = lv.differentiable_args(args, argnums)
            output = func(*args, **kwargs)
            if has_aux:
                output, aux = _split_aux(output, api)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat_diff, spec = tree_flatten(diff)
            grads = _autograd_grad((output,), flat_diff, (None,), None, lv.keeps_graph(output))
            grads = lv.unwrap_tree(tree_unflatten(list(grads), spec))
            output = lv.unwrap(output)
            if has_aux:
                return grads, (output, lv.unwrap_tree(aux))
            return grads, output
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output with respect to args[argnums] (a pytree,
    or a tuple of them for a tuple of argnums); with has_aux, (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def _vjp(func, primals, argnums, has_aux):
    """Run func on differentiable primals: (level, flat outputs, their spec, flat diff inputs, their spec,
    unwrapped output, aux)."""
    lv = _Level()
    aux = None
    with enable_grad():
        if argnums is None:
            diff = primals = tree_map(lv.differentiable, primals)
        else:
            primals, diff = lv.differentiable_args(primals, argnums)
        out = func(*primals)
        if has_aux:
            out, aux = _split_aux(out, "vjp(f, *primals)")
            aux = lv.unwrap_tree(aux)
        flat_out, out_spec = tree_flatten(out)
        _check_tensor_outputs(flat_out, "vjp(f, *primals)")
        flat_diff, diff_spec = tree_flatten(diff)
        results = tree_map(lv.unwrap, out)
        for o in flat_out:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {o.dtype}")
    return lv, flat_out, out_spec, flat_diff, diff_spec, results, aux


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) is the vector-Jacobian product with respect to
    the primals, callable many times (retain_graph=True by default)."""
    lv, flat_out, out_spec, flat_diff, diff_spec, results, aux = _vjp(func, primals, None, has_aux)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(ct_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        seen = create_graph and (lv.keeps_graph(*flat_out)
                                 or any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct))
        got = _autograd_grad(flat_out, flat_diff, flat_ct, retain_graph, seen)
        return tree_unflatten([lv.unwrap(g, seen) for g in got], diff_spec)
    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def _rows(out, flat_in, create_graph):
    """The Jacobian of one output with respect to each input: out.shape + input.shape, one backward pass per
    output element."""
    from .._creation import zeros
    from .._shape_ops import stack
    m = out.numel()
    if not out.requires_grad or m == 0:
        return [zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype, device=x.device) for x in flat_in]
    rows = [[] for _ in flat_in]
    for k in range(m):
        e = zeros(m, dtype=out.dtype, device=out.device)
        e[k] = 1
        got = _autograd_grad((out,), flat_in, (e.view(out.shape),), True, create_graph)
        for r, g in zip(rows, got):
            r.append(g)
    return [stack(r).view(tuple(out.shape) + tuple(x.shape)) for r, x in zip(rows, flat_in)]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func with respect to args[argnums] by reverse mode, one row per output element
    (chunk_size bounds PyTorch's vectorised chunks; rows here are computed one by one either way)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper_fn(*args):
        _error_if_complex("jacrev", args, is_input=True)
        lv, flat_out, out_spec, flat_diff, _, _, aux = _vjp(func, args, argnums, has_aux)
        _error_if_complex("jacrev", flat_out, is_input=False)
        _, primals_spec = tree_flatten(_slice_argnums(args, argnums))
        cg = lv.keeps_graph(*flat_out)
        with enable_grad():
            per_output = [tree_unflatten([lv.unwrap(j) for j in _rows(o, flat_diff, cg)], primals_spec)
                          for o in flat_out]
        if isinstance(argnums, int):
            per_output = [j[0] for j in per_output]
        jac = tree_unflatten(per_output, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper_fn


# ---- forward mode --------------------------------------------------------------------------------

def _forward(func, primals, tangent_sets, argnums, strict, has_aux):
    """func's outputs and their tangents for each set of flat tangents: (flat primal outputs, spec,
    [flat tangents per set], aux)."""
    from .._creation import zeros_like
    lv = _Level()
    with enable_grad():
        if argnums is None:
            flat_in, spec = tree_flatten(primals)
            flat_in = [lv.differentiable(p) for p in flat_in]
            primals = tree_unflatten(flat_in, spec)
        else:
            primals, diff = lv.differentiable_args(primals, argnums)
            flat_in = tree_flatten(diff)[0]
        out = func(*primals)
        aux = None
        if has_aux:
            out, aux = _split_aux(out, JVP)
            aux = lv.unwrap_tree(aux)
        flat_out, out_spec = tree_flatten(out)
        _check_tensor_outputs(flat_out, JVP)
        push = lv.forward(flat_out, flat_in)
        tangents_out = []
        for ts in tangent_sets:
            got = push(ts)
            if strict and any(t is None for t in got):
                raise RuntimeError(f"{JVP[:-1]}, strict=True): The output of f is independent of the inputs. This is "
                                   "not allowed with strict=True.")
            tangents_out.append([zeros_like(o) if t is None else t for o, t in zip(flat_out, got)])
        return [lv.unwrap(o) for o in flat_out], out_spec, tangents_out, aux


def _check_tangents(flat_primals, flat_tangents):
    for p, t in zip(flat_primals, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")


def _jvp(func, primals, tangents, argnums, strict, has_aux):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff = primals if argnums is None else _slice_argnums(primals, argnums)
    flat_primals, primals_spec = tree_flatten(diff)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    _check_tensor_list(flat_primals, JVP, "primals")
    _check_tensor_list(flat_tangents, JVP, "tangents")
    _check_tangents(flat_primals, flat_tangents)
    outs, spec, (touts,), aux = _forward(func, primals, [flat_tangents], argnums, strict, has_aux)
    result = tree_unflatten(outs, spec), tree_unflatten(touts, spec)
    return result + (aux,) if has_aux else result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product J @ tangents[, aux]), primals and tangents being
    tuples of the same structure."""
    return _jvp(func, primals, tangents, None, strict, has_aux)


def _basis(flat_primals):
    """One list of flat tangents per element of the flattened primals: the standard basis."""
    from .._creation import zeros
    sets = []
    for i, p in enumerate(flat_primals):
        for k in range(p.numel()):
            ts = [zeros(q.shape, dtype=q.dtype, device=q.device) for q in flat_primals]
            ts[i].view(-1)[k] = 1
            sets.append(ts)
    return sets


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func with respect to args[argnums] by forward mode (one column per input element).
    randomness: 'same' runs func once for every column, 'different' once per column (fresh random draws),
    'error' runs it once and raises if it drew from the default generator."""
    @functools.wraps(func)
    def wrapper_fn(*args):
        from .. import _random
        from .._creation import zeros
        from .._shape_ops import equal, stack
        _error_if_complex("jacfwd", args, is_input=True)
        primals = _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        basis = _basis(flat_primals)
        _check_randomness(randomness)
        if randomness == "different" and basis:
            runs = [_forward(func, args, [ts], argnums, False, has_aux) for ts in basis]
            outs, spec, _, aux = runs[0]
            columns = [r[2][0] for r in runs]
        else:
            state = _random.default_generator.get_state()
            outs, spec, columns, aux = _forward(func, args, basis, argnums, False, has_aux)
            if randomness == "error" and not equal(state, _random.default_generator.get_state()):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        _error_if_complex("jacfwd", outs, is_input=False)
        per_output = []
        for j, o in enumerate(outs):
            jac = (stack([c[j] for c in columns], dim=-1) if columns  # out.shape + (total input numel,)
                   else zeros(tuple(o.shape) + (0,), dtype=o.dtype, device=o.device))
            pieces, start = [], 0
            for p in flat_primals:
                piece = jac.narrow(-1, start, p.numel())
                pieces.append(piece.squeeze(-1) if p.dim() == 0 else piece.unflatten(-1, p.shape))
                start += p.numel()
            per_output.append(tree_unflatten(pieces, primals_spec))
        if isinstance(argnums, int):
            per_output = [j[0] for j in per_output]
        jac = tree_unflatten(per_output, spec)
        return (jac, aux) if has_aux else jac
    return wrapper_fn


def hessian(func, argnums=0):
    """The Hessian of func with respect to args[argnums]: jacfwd of jacrev."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals, computed from
    one recorded double-vjp graph (func is not run again)."""
    output = func(*primals)
    _, out_spec = tree_flatten(output)
    flat_primals, primals_spec = tree_flatten(primals)
    for p in flat_primals:
        if not isinstance(p, Tensor):  # where PyTorch's first tensor method call on it fails
            raise AttributeError(f"'{type(p).__name__}' object has no attribute 'new_empty'")
    lv = _Level()
    with enable_grad():
        flat_in = [lv.differentiable(p) for p in flat_primals]
        flat_out = tree_flatten(func(*tree_unflatten(flat_in, primals_spec)))[0]
        tensor_out = [o for o in flat_out if isinstance(o, Tensor)]
        push = lv.forward(tensor_out, flat_in)

    def jvp_fn(*tangents):
        from .._creation import zeros_like
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the primals {primals_spec}")
        for idx, (t, p) in enumerate(zip(flat_t, flat_primals)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(f"tangent:{idx} with {what} {getattr(t, what)} in flattened pytree doesn't "
                                       f"match the {what} {getattr(p, what)} of the corresponding primal.")
        with enable_grad():
            got = iter(push(flat_t, lv.outer and is_grad_enabled()))
        res = []
        for o in flat_out:
            if isinstance(o, Tensor):
                t = next(got)
                o = zeros_like(o) if t is None else t
            res.append(o)
        return tree_unflatten(res, out_spec)
    return output, jvp_fn
