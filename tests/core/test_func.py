"""torch.func's transforms against live PyTorch: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
linearize on elementwise, matmul, reduction and nn.Module (functional_call) functions; argnums, has_aux and
pytree variants; compositions (grad of grad, vmap of grad, jacrev of jacrev, jacfwd of jacrev); which
results require grad (no leak onto the caller's tensors, no_grad outside); functionalize's contract;
replace_all_batch_norm_modules_, debug_unwrap; and PyTorch's errors (type and text)."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3)).astype(np.float32)
X = RNG.standard_normal(3).astype(np.float32)
Y = RNG.standard_normal(3).astype(np.float32)
M = RNG.standard_normal((2, 3)).astype(np.float32)
B = RNG.standard_normal((5, 3)).astype(np.float32)
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}


def t(lib, a, **kw):
    return lib.tensor(a, **kw)


def outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001  (the error is the result compared)
        return ("raised", type(e).__name__, str(e))


def flat(r):
    """A result as nested plain data: tensors as (shape, dtype, requires_grad, values)."""
    if isinstance(r, (torch.Tensor, mt.Tensor)):
        return ("tensor", tuple(r.shape), str(r.dtype).replace("torch.", "").replace("mindtorch_v2.", ""),
                r.requires_grad, np.array(r.detach().tolist()))
    if isinstance(r, dict):
        return {k: flat(v) for k, v in r.items()}
    if isinstance(r, (tuple, list)):  # torch.Size as a tuple
        return (list if isinstance(r, list) else tuple)(flat(v) for v in r)
    return r


def same(a, b):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor", (a, b)
        assert a[1:4] == b[1:4], (a[:4], b[:4])
        rtol, atol = TOL.get(a[2], (0, 0))
        np.testing.assert_allclose(a[4], b[4], rtol=rtol, atol=atol)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (a, b)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert a == b


def check(fn):
    """fn(torch) and fn(mindtorch_v2) agree: structure, shapes, dtypes, requires_grad, values, or the error."""
    expected, got = flat(outcome(fn, torch)), flat(outcome(fn, mt))
    same(expected, got)
    return got


# ---- functions the transforms are applied to --------------------------------------------------------

def elementwise(lib):
    return lambda x: (x.sin() * x.exp()).sum()


def matmul(lib):
    a = t(lib, A)
    return lambda x: (a @ x).tanh().pow(2).sum()


def reduction(lib):
    return lambda x: x.logsumexp(0) + x.max() * x.mean()


def mlp(lib):
    """An nn.Module called through functional_call: loss(params, x, y)."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))

    def loss(params, x, y):
        out = lib.func.functional_call(model, params, (x,))
        return ((out.squeeze(-1) - y) ** 2).mean()
    return loss


def mlp_params(lib):
    r = np.random.default_rng(1)
    shapes = {"0.weight": (4, 3), "0.bias": (4,), "2.weight": (1, 4), "2.bias": (1,)}
    return {k: t(lib, r.standard_normal(s).astype(np.float32)) for k, s in shapes.items()}


SCALAR_FNS = {"elementwise": elementwise, "matmul": matmul, "reduction": reduction}


@pytest.mark.parametrize("name", sorted(SCALAR_FNS))
def test_grad_and_value(name):
    check(lambda lib: lib.func.grad(SCALAR_FNS[name](lib))(t(lib, X)))
    check(lambda lib: lib.func.grad_and_value(SCALAR_FNS[name](lib))(t(lib, X)))


@pytest.mark.parametrize("name", sorted(SCALAR_FNS))
def test_jacobians_and_hessian(name):
    check(lambda lib: lib.func.jacrev(SCALAR_FNS[name](lib))(t(lib, X)))
    check(lambda lib: lib.func.jacfwd(SCALAR_FNS[name](lib))(t(lib, X)))
    check(lambda lib: lib.func.hessian(SCALAR_FNS[name](lib))(t(lib, X)))
    check(lambda lib: lib.func.jacrev(lib.func.jacrev(SCALAR_FNS[name](lib)))(t(lib, X)))
    check(lambda lib: lib.func.jacfwd(lib.func.jacfwd(SCALAR_FNS[name](lib)))(t(lib, X)))


def test_module_through_functional_call():
    def run(lib):
        loss, params = mlp(lib), mlp_params(lib)
        x, y = t(lib, B), t(lib, B[:, 0])
        grads = lib.func.grad(loss)(params, x, y)
        g_x = lib.func.grad(loss, argnums=1)(params, x, y)
        return grads, g_x, lib.func.hessian(loss, argnums=1)(params, x[:2], y[:2])
    check(run)


def test_per_sample_gradients_with_vmap():
    def run(lib):
        loss, params = mlp(lib), mlp_params(lib)
        x, y = t(lib, B), t(lib, B[:, 0])

        def one(p, xi, yi):
            return loss(p, xi.unsqueeze(0), yi.unsqueeze(0))
        return lib.func.vmap(lib.func.grad(one), in_dims=(None, 0, 0))(params, x, y)
    check(run)


def test_argnums_has_aux_and_pytrees():
    f = (lambda x, y: (x * y.cos()).sum())
    check(lambda lib: lib.func.grad(f, argnums=(0, 1))(t(lib, X), t(lib, Y)))
    check(lambda lib: lib.func.grad(f, argnums=-1)(t(lib, X), t(lib, Y)))
    check(lambda lib: lib.func.grad(lambda d: (d["a"] * d["b"][0]).sum())({"a": t(lib, X), "b": [t(lib, Y)]}))
    check(lambda lib: lib.func.grad(lambda x: ((x ** 2).sum(), {"d": x * 2, "n": (x.sum(),)}),
                                    has_aux=True)(t(lib, X)))
    check(lambda lib: lib.func.grad_and_value(lambda x, y: ((x * y).sum(), y), argnums=(0,),
                                              has_aux=True)(t(lib, X), t(lib, Y)))
    check(lambda lib: lib.func.grad(lambda x, *, s: (x * s).sum())(t(lib, X), s=t(lib, Y)))
    check(lambda lib: lib.func.jacrev(lambda x, y: {"p": x * y, "s": (x @ y)}, argnums=(0, 1))(t(lib, X), t(lib, Y)))
    check(lambda lib: lib.func.jacfwd(lambda x, y: {"p": x * y, "s": (x @ y)}, argnums=(0, 1))(t(lib, X), t(lib, Y)))
    check(lambda lib: lib.func.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True)(t(lib, M)))
    check(lambda lib: lib.func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(t(lib, M)))
    check(lambda lib: lib.func.jacfwd(lambda d: d["a"] * d["b"])({"a": t(lib, X), "b": t(lib, Y)}))
    check(lambda lib: lib.func.jacrev(lambda x: x.sum(1))(t(lib, M)))
    check(lambda lib: lib.func.jacfwd(lambda x: x.sum(1))(t(lib, M)))
    check(lambda lib: lib.func.jacrev(lambda x: x.double() * 2)(t(lib, X)))  # dtypes: the input's
    check(lambda lib: lib.func.jacfwd(lambda x: x.double() * 2)(t(lib, X)))  # the output's
    check(lambda lib: lib.func.hessian(lambda x, y: (x * x * y).sum(), argnums=(0, 1))(t(lib, X), t(lib, Y)))
    for jac in ("jacrev", "jacfwd"):  # empty inputs and 0-dim ones
        check(lambda lib: getattr(lib.func, jac)(lambda x: (x * 2, x.sum()))(t(lib, X[:0])))
        check(lambda lib: getattr(lib.func, jac)(lambda x: x * x)(t(lib, 1.5)))


@pytest.mark.parametrize("chunk_size", [None, 1, 2, 100])
def test_jacrev_chunk_size(chunk_size):
    check(lambda lib: lib.func.jacrev(lambda x: (t(lib, A) @ x).sin(), chunk_size=chunk_size)(t(lib, X)))


def test_vjp():
    def run(lib):
        x = t(lib, X)
        out, fn = lib.func.vjp(lambda x: (x.sin(), {"m": t(lib, A) @ x}), x)
        ct = (t(lib, Y), {"m": t(lib, A[:, 0])})
        return out, fn(ct), fn(ct)  # callable twice (retain_graph=True)
    check(run)
    check(lambda lib: lib.func.vjp(lambda x, y: (x * y, x.sum()), t(lib, X), t(lib, Y), has_aux=True)[2])
    check(lambda lib: lib.func.vjp(lambda x, y: x * y, t(lib, X), t(lib, Y))[1](t(lib, X)))


def test_jvp_and_linearize():
    def f(lib):
        return lambda x, y: (x.sin() * y, (t(lib, A) @ x).exp())
    check(lambda lib: lib.func.jvp(f(lib), (t(lib, X), t(lib, Y)), (t(lib, Y), t(lib, X))))
    check(lambda lib: lib.func.jvp(lambda x: (x.exp(), {"a": x * 2}), (t(lib, X),), (t(lib, Y),), has_aux=True))
    check(lambda lib: lib.func.jvp(lambda x: x.detach(), (t(lib, X),), (t(lib, Y),)))

    def lin(lib):
        out, fn = lib.func.linearize(lambda x, y: (x * y).sin(), t(lib, X), t(lib, Y))
        return out, fn(t(lib, Y), t(lib, X)), fn(t(lib, X), t(lib, X))
    check(lin)


def test_compositions():
    sin = (lambda x: x.sin())
    check(lambda lib: lib.func.grad(lib.func.grad(sin))(t(lib, 0.7)))
    check(lambda lib: lib.func.grad(lib.func.grad(lib.func.grad(sin)))(t(lib, 0.7)))
    check(lambda lib: lib.func.grad(lambda x: lib.func.grad(lambda y: (x * y).sum())(x).sum())(t(lib, X)))
    check(lambda lib: lib.func.vmap(lib.func.grad(lambda x: (x ** 3).sum()))(t(lib, M)))
    check(lambda lib: lib.func.vmap(lib.func.jacrev(lambda x: x.sin() * x.sum()))(t(lib, M)))
    check(lambda lib: lib.func.grad(lambda x: lib.func.vmap(lambda r: (r * r).sum())(x).sum())(t(lib, M)))
    check(lambda lib: lib.func.jacfwd(lib.func.jacrev(lambda x: (x.exp() * x).sum()))(t(lib, X)))
    check(lambda lib: lib.func.grad(lambda x: lib.func.jvp(lambda y: y.sin(), (x,), (x,))[1].sum())(t(lib, X)))

    def vmap_vjp(lib):
        _, fn = lib.func.vjp(lambda x: x.sin() * 2, t(lib, X))
        return lib.func.vmap(fn)(t(lib, M))
    check(vmap_vjp)


def test_results_require_grad_as_in_pytorch():
    f = (lambda x: (x ** 2).sum())

    def run(lib):
        x, xr, w = t(lib, X), t(lib, Y, requires_grad=True), t(lib, X, requires_grad=True)
        out = [lib.func.grad(f)(x), lib.func.grad(f)(xr), lib.func.grad(lambda x: (w * x).sum())(x),
               lib.func.grad(lambda x: w.sum() + f(x))(x), lib.func.grad_and_value(f)(xr),
               lib.func.vjp(f, xr)[0], lib.func.jvp(lambda x: x * x, (xr,), (x,)),
               lib.func.jacrev(lambda x: x * x)(xr), lib.func.jacfwd(lambda x: x * x)(x)]
        with lib.no_grad():
            out += [lib.func.grad(f)(xr), lib.func.grad(lambda x: (w * x).sum())(x), lib.func.grad_and_value(f)(xr)]
        out.append((x.requires_grad, x.grad, xr.grad, w.grad))  # nothing leaked onto the caller's tensors
        g = lib.func.grad(f)(xr)
        g.sum().backward()  # the transform's result is differentiable by plain autograd
        return out, xr.grad
    check(run)


def test_inside_no_grad_and_inner_no_grad():
    def run(lib):
        def f(x):
            with lib.no_grad():
                c = x.exp()
            return (c * x).sum()
        with lib.no_grad():
            outer = lib.func.grad(lambda x: (x.sin() ** 2).sum())(t(lib, X))
        return outer, lib.func.grad(f)(t(lib, X))
    check(run)


def test_randomness():
    def run(lib, randomness):
        lib.manual_seed(0)
        return lib.func.jacfwd(lambda x: x * lib.rand(3), randomness=randomness)(t(lib, X))
    for r in ("error", "same", "different", "bad"):
        check(lambda lib: run(lib, r))


def test_functionalize():
    def mutate(a):
        a.add_(1)
        return a.view(-1)[:2]

    def run(lib, remove):
        x = t(lib, X)
        out = lib.func.functionalize(mutate, remove=remove)(x)
        v = lib.func.functionalize(lambda a: a[:2], remove=remove)(x)
        same_obj = lib.func.functionalize(lambda a: a, remove=remove)(x) is x
        shares = [o.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for o in (out, v)]
        y = t(lib, X)
        y2 = lib.func.functionalize(lambda a, b: (a.mul_(2), b)[1])(y, y)  # aliased inputs stay aliased
        return x, out, v, same_obj, shares, y, y2

    def grad_through(lib):
        def k(a):
            b = a * 1
            b.add_(1)
            return (b * b).sum()
        return lib.func.grad(lib.func.functionalize(k))(t(lib, X))

    def metadata(lib):
        x = t(lib, M)
        lib.func.functionalize(lambda a: a.t_())(x)
        return x.shape
    check(lambda lib: run(lib, "mutations"))
    check(lambda lib: run(lib, "mutations_and_views"))
    check(grad_through)
    check(metadata)
    check(lambda lib: lib.func.functionalize(lambda a: a, remove="views"))


def test_replace_all_batch_norm_modules_():
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3), lib.nn.Sequential(lib.nn.BatchNorm1d(3)))
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        bns = [m[1], m[2][0]]
        return [(b.running_mean, b.running_var, b.num_batches_tracked, b.track_running_stats) for b in bns]
    check(run)


def test_debug_unwrap():
    def run(lib):
        seen = []

        def f(x):
            seen.append((tuple(lib.func.debug_unwrap(x).shape), tuple(lib.func.debug_unwrap(x, recurse=False).shape)))
            return x * 2
        x = t(lib, M)
        lib.func.vmap(f)(x)
        lib.func.vmap(lib.func.vmap(f))(t(lib, np.stack([M, M])))
        return seen, lib.func.debug_unwrap(x) is x
    check(run)


def vjp_twice(lib):
    _, fn = lib.func.vjp(lambda x: x.exp(), t(lib, X))
    fn(t(lib, X), retain_graph=False)
    return fn(t(lib, X))


REARRANGE = ["a b c -> c a b", "a b c -> a (b c)", "a b c -> (c b a)", "... c -> c ...", "a ... -> (a ...)",
             "a ... c -> c (... a)", "b ... -> ... b 1", "a b c -> a b () c", "a (b 1) c -> a b c", "... -> ...",
             "a b c -> a b c", "a 1 c -> a c", "a b -> a b", "a b c -> a b", "a b c", "a 2 c -> a c", "a 0 c -> a c",
             "(a ...) -> a", "a b c -> ...", "a b b -> a b", "a (b (c)) -> a", "a b) c -> a", "a (b c -> a",
             "a b$ c -> a", "a _b c -> a", "a .. c -> a", "a ... ... -> a", "... a b c d -> a b c d ..."]
REARRANGE_SIZES = [("a (h w) c -> a h w c", {"h": 3}), ("a (h w) c -> a h w c", {"h": 2}),
                   ("a (h w) c -> a h w c", {}), ("a (h w) c -> a h w c", {"h": 3, "w": 2}),
                   ("a b (c d) -> (d a) c b", {"d": 2}), ("a b (c d e) -> a b c d e", {"c": 2}),
                   ("a b c -> a b c", {"d": 2}), ("a b c -> a b c", {"a": 3}), ("a b c -> a b c", {"a": 2.0})]


@pytest.mark.parametrize("pattern,sizes", [(p, {}) for p in REARRANGE] + REARRANGE_SIZES)
def test_rearrange(pattern, sizes):
    def run(lib):
        x = t(lib, np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        r = lib.func.rearrange(x, pattern, **sizes)
        return r, r is x
    check(run)
    check(lambda lib: lib.func.rearrange([t(lib, X), t(lib, Y)], "a b -> b a"))
    check(lambda lib: lib.func.rearrange(t(lib, np.ones((2, 1, 3), np.float32)), "a () c -> c a"))
    check(lambda lib: lib.func.rearrange(t(lib, 5.0), "-> 1"))


ERRORS = {
    "non-scalar": lambda lib: lib.func.grad(lambda x: x * 2)(t(lib, X)),
    "non-tensor": lambda lib: lib.func.grad(lambda x: 3.0)(t(lib, X)),
    "argnum range": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=2)(t(lib, X)),
    "argnum negative range": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=-2)(t(lib, X)),
    "argnums unique": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=(0, 0))(t(lib, X)),
    "argnums empty": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=())(t(lib, X)),
    "argnums type": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=1.0)(t(lib, X)),
    "argnum type": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=(0, 1.0))(t(lib, X), t(lib, X)),
    "int input": lambda lib: lib.func.grad(lambda x: x.sum())(lib.arange(3)),
    "float input": lambda lib: lib.func.grad(lambda x: x.sum())(3.0),
    "has_aux shape": lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(t(lib, X)),
    "aux non-tensor": lambda lib: lib.func.grad(lambda x: (x.sum(), 3), has_aux=True)(t(lib, X)),
    "leaf in place": lambda lib: lib.func.grad(lambda x: x.mul_(2).sum())(t(lib, X)),
    "vjp has_aux": lambda lib: lib.func.vjp(lambda x: x, t(lib, X), has_aux=True),
    "vjp int output": lambda lib: lib.func.vjp(lambda x: x.argmax(), t(lib, X)),
    "vjp None output": lambda lib: lib.func.vjp(lambda x: None, t(lib, X)),
    "vjp non-tensor output": lambda lib: lib.func.vjp(lambda x: [x, 1], t(lib, X)),
    "vjp structure": lambda lib: lib.func.vjp(lambda x: (x, x), t(lib, X))[1](t(lib, X)),
    "vjp shape": lambda lib: lib.func.vjp(lambda x: x * 2, t(lib, X))[1](t(lib, X[:2])),
    "vjp retain_graph": lambda lib: vjp_twice(lib),
    "jvp primals": lambda lib: lib.func.jvp(lambda x: x, t(lib, X), (t(lib, X),)),
    "jvp structure": lambda lib: lib.func.jvp(lambda x: x, (t(lib, X),), t(lib, X)),
    "jvp empty": lambda lib: lib.func.jvp(lambda: 1, (), ()),
    "jvp non-tensor": lambda lib: lib.func.jvp(lambda x: x, (1.0,), (1.0,)),
    "jvp tangent size": lambda lib: lib.func.jvp(lambda x: x, (t(lib, X),), (t(lib, X[:2]),)),
    "jvp output": lambda lib: lib.func.jvp(lambda x: 2.0, (t(lib, X),), (t(lib, X),)),
    "jvp strict": lambda lib: lib.func.jvp(lambda x: x.detach(), (t(lib, X),), (t(lib, X),), strict=True),
    "jacrev chunk": lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0),
    "jacrev complex": lambda lib: lib.func.jacrev(lambda x: x.abs())(t(lib, X).to(lib.complex64)),
    "jacfwd complex": lambda lib: lib.func.jacfwd(lambda x: x.abs())(t(lib, X).to(lib.complex64)),
    "jacrev int output": lambda lib: lib.func.jacrev(lambda x: x.argmax())(t(lib, X)),
    "jacfwd aux": lambda lib: lib.func.jacfwd(lambda x: (x * 2, "a"), has_aux=True)(t(lib, X)),
    "linearize argspec": lambda lib: lib.func.linearize(lambda x: x * x, t(lib, X))[1](t(lib, X), t(lib, X)),
    "linearize shape": lambda lib: lib.func.linearize(lambda x: x * x, t(lib, X))[1](t(lib, X[:2])),
    "linearize float primal": lambda lib: lib.func.linearize(lambda x: x * 2, 3.0),
    "linearize dtype": lambda lib: lib.func.linearize(lambda x: x * x, t(lib, X))[1](t(lib, X).double()),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    got = check(ERRORS[name])
    assert isinstance(got, tuple) and got[0] == "raised", got
