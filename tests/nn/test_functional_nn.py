"""torch.nn.functional NN kernels against live PyTorch: values on every float dtype,
non-contiguous/empty/0-dim inputs, error texts, gradients, double backward, RNG-exact dropout."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")
MF, TF = mt.nn.functional, torch.nn.functional

FLOATS = ["float32", "float64", "bfloat16", "float16"]
# torch.testing.assert_close's defaults, a little wider for values through exp/erf (different vector libm)
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12), "bfloat16": (2e-2, 2e-2), "float16": (2e-3, 2e-3)}


def to_mt(t):
    """The same tensor in mindtorch (values exact), with its requires_grad."""
    src = t.detach().float() if t.dtype in (torch.bfloat16, torch.float16) else t.detach()
    # (cloned: a leaf of its own, as t is, not a view of the flat tensor)
    m = mt.tensor(src.reshape(-1).tolist(), dtype=getattr(mt, str(t.dtype)[6:])).reshape(tuple(t.shape)).clone()
    return m.requires_grad_(t.requires_grad) if t.is_floating_point() else m


def to_np(x):
    x = x.detach()
    if "float16" in str(x.dtype):
        x = x.float()
    return np.array(x.tolist(), dtype=float)


def close(m, t, tol=None, dtype_check=True):
    assert tuple(m.shape) == tuple(t.shape), (tuple(m.shape), tuple(t.shape))
    if dtype_check:
        assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    rtol, atol = tol or TOL.get(str(t.dtype)[6:], (0, 0))
    np.testing.assert_allclose(to_np(m), to_np(t), rtol=rtol, atol=atol, equal_nan=True)


def inputs(shapes, dtype="float32", seed=0, requires_grad=True, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    ts = []
    for s in shapes:
        t = (torch.randn(s, generator=g, dtype=torch.float64) * scale).to(getattr(torch, dtype))
        ts.append(t.requires_grad_(requires_grad))
    return ts, [to_mt(t) for t in ts]


def diff(fn, shapes, dtype="float32", grad=True, tol=None, gtol=None, seed=0, scale=1.0):
    """fn(L, F, *xs) in both libraries on the same inputs; values, grad_fn name and gradients."""
    ts, ms = inputs(shapes, dtype, seed, grad, scale)
    rt = fn(torch, TF, *ts)
    rm = fn(mt, MF, *ms)
    close(rm, rt, tol)
    if not grad or rt.grad_fn is None:
        return rm, rt
    if type(rt.grad_fn).__name__ != "SqueezeBackward4":  # in-place squeeze_'s name: the views' business
        assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__
    go = torch.randn(rt.shape, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64).to(rt.dtype)
    rt.backward(go)
    rm.backward(to_mt(go))
    for m, t in zip(ms, ts):
        assert (m.grad is None) == (t.grad is None)
        if t.grad is not None:
            close(m.grad, t.grad, gtol or tol)
    return rm, rt


def raises_same(fm, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as em:
        fm()
    base = next(k for k in type(et.value).__mro__ if k.__module__ == "builtins")
    assert isinstance(em.value, base), (em.value, et.value)
    assert str(em.value) == str(et.value).split("\nException raised from")[0]


def gradgrad(fn, shapes, seed=0, tol=1e-9):
    """Second derivatives (create_graph) against torch, in float64."""
    ts, ms = inputs(shapes, "float64", seed)
    out = []
    for L, F, xs in ((torch, TF, ts), (mt, MF, ms)):
        y = fn(L, F, *xs)
        go = L.ones_like(y) * 0.5 + y.detach() * 0.25
        gs = L.autograd.grad(y, xs, go, create_graph=True)
        s = sum((g * g).sum() for g in gs)
        out.append(L.autograd.grad(s, xs, allow_unused=True))
    for gm, gt, x in zip(out[1], out[0], ts):
        gt = torch.zeros_like(x) if gt is None else gt  # an unused input: None or zeros
        gm = mt.zeros(tuple(x.shape), dtype=mt.float64) if gm is None else gm
        close(gm, gt, (tol, tol))


# ---- softmax / log_softmax ------------------------------------------------------------------

SOFTMAXES = ["softmax", "log_softmax", "softmin"]


@pytest.mark.parametrize("name", SOFTMAXES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax_values_and_grads(name, dtype, dim):
    diff(lambda L, F, x: getattr(F, name)(x, dim), [(4, 7, 33)], dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_layouts(name):
    diff(lambda L, F, x: getattr(F, name)(x.transpose(0, 2), 1), [(5, 3, 4)])   # non-contiguous
    diff(lambda L, F, x: getattr(F, name)(x[:, ::2], -1), [(5, 8)])
    r, _ = diff(lambda L, F, x: getattr(L, name)(x.t(), 0), [(3, 300)])         # big column blocks
    assert r.is_contiguous()
    diff(lambda L, F, x: getattr(F, name)(x, 0), [()])                           # 0-dim
    diff(lambda L, F, x: getattr(F, name)(x, 1), [(0, 4)])                       # empty
    diff(lambda L, F, x: getattr(F, name)(x, 0), [(0, 4)])
    diff(lambda L, F, x: getattr(x, name)(-1), [(2, 3000)], scale=30)           # long rows, large values


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtype_arg(name):
    diff(lambda L, F, x: getattr(F, name)(x, 1, dtype=L.float64), [(3, 5)])
    diff(lambda L, F, x: getattr(L, name)(x, 1, L.float16), [(3, 5)], gtol=(3e-3, 3e-3))
    diff(lambda L, F, x: getattr(x, name)(-1, dtype=L.float32), [(3, 5)], "bfloat16")
    t = torch.arange(6).reshape(2, 3)
    close(getattr(MF, name)(to_mt(t), 1, dtype=mt.float32), getattr(TF, name)(t, 1, dtype=torch.float32))


def test_softmax_special_values():
    t = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [float("nan"), 1.0, 2.0], [1e30, -1e30, 0]])
    for name in ("softmax", "log_softmax"):
        close(getattr(MF, name)(to_mt(t), 1), getattr(TF, name)(t, 1))


@pytest.mark.parametrize("name", SOFTMAXES)
def test_softmax_implicit_dim_warns(name):
    for shape in [(), (4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        ts, ms = inputs([shape], requires_grad=False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            rm = getattr(MF, name)(ms[0])
        assert "Implicit dimension choice for " + name in str(w[0].message)
        assert w[0].filename == __file__  # _stacklevel=3: the caller's line
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(rm, getattr(TF, name)(ts[0]))


def test_softmax_errors():
    t = torch.arange(6).reshape(2, 3)
    m = to_mt(t)
    for name in ("softmax", "log_softmax"):
        raises_same(lambda: getattr(MF, name)(m, 1), lambda: getattr(TF, name)(t, 1))
        raises_same(lambda: getattr(MF, name)(m, 0), lambda: getattr(TF, name)(t, 0))
        raises_same(lambda: getattr(MF, name)(m.float(), 2), lambda: getattr(TF, name)(t.float(), 2))
        raises_same(lambda: getattr(MF, name)(m.float(), -3), lambda: getattr(TF, name)(t.float(), -3))


def test_softmax_gradgrad():
    gradgrad(lambda L, F, x: F.softmax(x, -1), [(3, 5)])
    gradgrad(lambda L, F, x: F.log_softmax(x, 0), [(3, 5)])
    gradgrad(lambda L, F, x: F.softmax(x, 1) * x, [(2, 4, 3)])


# ---- layer_norm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm(dtype, affine):
    def fn(L, F, x, w, b):
        return F.layer_norm(x, (6, 5), w if affine in ("weight", "both") else None,
                            b if affine in ("bias", "both") else None)
    gtol = {"bfloat16": (5e-2, 5e-2), "float16": (5e-3, 5e-3)}.get(dtype)
    diff(fn, [(3, 4, 6, 5), (6, 5), (6, 5)], dtype, gtol=gtol)


def test_layer_norm_layouts_and_mixed():
    diff(lambda L, F, x, w, b: F.layer_norm(x.transpose(0, 1), (4,), w, b, eps=1e-3), [(4, 3), (4,), (4,)])
    diff(lambda L, F, x, w, b: L.layer_norm(x, [3], w, b), [(3,), (3,), (3,)])
    diff(lambda L, F, x, w, b: F.layer_norm(x, (3,), w, b), [(0, 3), (3,), (3,)])
    diff(lambda L, F, x: F.layer_norm(x, (1000,)), [(5, 1000)], scale=100)
    # bfloat16 / float16 input with float32 parameters (PyTorch's mixed dtype)
    for dt in (torch.bfloat16, torch.float16):
        x = torch.randn(3, 8).to(dt).requires_grad_()
        w, b = torch.randn(8, requires_grad=True), torch.randn(8, requires_grad=True)
        mx, mw, mb = to_mt(x), to_mt(w), to_mt(b)
        rt, rm = TF.layer_norm(x, (8,), w, b), MF.layer_norm(mx, (8,), mw, mb)
        close(rm, rt)
        rt.sum().backward()
        rm.sum().backward()
        close(mx.grad, x.grad, (5e-2, 5e-2))
        close(mw.grad, w.grad, (5e-2, 5e-2))
        close(mb.grad, b.grad)


def test_layer_norm_errors():
    t = torch.arange(6.).reshape(2, 3)
    m = to_mt(t)
    cases = [((2,), None, None), ((3,), torch.ones(2), None), ((3,), torch.ones(3), torch.ones(2)),
             ((3,), torch.ones(3).double(), None), ((2, 3, 4), None, None), ((), None, None)]
    for shape, w, b in cases:
        raises_same(lambda: MF.layer_norm(m, shape, None if w is None else to_mt(w), None if b is None else to_mt(b)),
                    lambda: TF.layer_norm(t, shape, w, b))
    ti = torch.arange(6).reshape(2, 3)
    raises_same(lambda: MF.layer_norm(to_mt(ti), (3,)), lambda: TF.layer_norm(ti, (3,)))
    raises_same(lambda: MF.layer_norm(m, 3), lambda: TF.layer_norm(t, 3))
    tb = t.bfloat16()
    raises_same(lambda: MF.layer_norm(to_mt(tb), (3,), to_mt(torch.ones(3).double())),
                lambda: TF.layer_norm(tb, (3,), torch.ones(3).double()))


def test_layer_norm_gradgrad():
    gradgrad(lambda L, F, x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)])
    gradgrad(lambda L, F, x: F.layer_norm(x, (2, 3)), [(2, 2, 3)])


# ---- activations -----------------------------------------------------------------------------------

ACTS = {
    "relu": lambda L, F, x: F.relu(x),
    "relu6": lambda L, F, x: F.relu6(x * 4),
    "hardtanh": lambda L, F, x: F.hardtanh(x, -0.5, 0.7),
    "leaky_relu": lambda L, F, x: F.leaky_relu(x, 0.2),
    "elu": lambda L, F, x: F.elu(x, 1.3),
    "selu": lambda L, F, x: F.selu(x),
    "celu": lambda L, F, x: F.celu(x, 0.7),
    "gelu": lambda L, F, x: F.gelu(x),
    "gelu_tanh": lambda L, F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda L, F, x: F.silu(x),
    "mish": lambda L, F, x: F.mish(x),
    "softplus": lambda L, F, x: F.softplus(x, 2.0, 3.0),
    "softsign": lambda L, F, x: F.softsign(x),
    "hardsigmoid": lambda L, F, x: F.hardsigmoid(x * 4),
    "hardswish": lambda L, F, x: F.hardswish(x * 4),
    "tanhshrink": lambda L, F, x: F.tanhshrink(x),
    "softshrink": lambda L, F, x: F.softshrink(x, 0.3),
    "hardshrink": lambda L, F, x: F.hardshrink(x, 0.3),
    "logsigmoid": lambda L, F, x: F.logsigmoid(x * 5),
    "threshold": lambda L, F, x: F.threshold(x, 0.1, -2.0),
    "sigmoid": lambda L, F, x: F.sigmoid(x),
    "tanh": lambda L, F, x: F.tanh(x),
    "torch.relu": lambda L, F, x: L.relu(x),
    "Tensor.relu": lambda L, F, x: x.relu(),
    "torch.selu": lambda L, F, x: L.selu(x),
    "torch.celu": lambda L, F, x: L.celu(x, 2.0),
    "torch.threshold": lambda L, F, x: L.threshold(x, 0.0, 1.0),
    "Tensor.hardshrink": lambda L, F, x: x.hardshrink(),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(ACTS))
def test_activation(name, dtype):
    diff(ACTS[name], [(4, 33)], dtype, scale=2.0)
    diff(lambda L, F, x: ACTS[name](L, F, x.t()), [(5, 3)], dtype)  # non-contiguous: the layout is kept
    r, t = diff(lambda L, F, x: ACTS[name](L, F, x[:, 1::2]), [(3, 8)], dtype)
    diff(ACTS[name], [()], dtype)
    diff(ACTS[name], [(0, 3)], dtype)


@pytest.mark.parametrize("name", list(ACTS))
def test_activation_special_values(name):
    vals = [0.0, -0.0, float("nan"), float("-inf"), 3.0, -3.0, 20.0, 1e-8, -1e-8, 0.3, -0.3]
    if "gelu" not in name:  # PyTorch's vectorised erf makes gelu(inf) NaN; the limit is inf
        vals.append(float("inf"))
    t = torch.tensor(vals * 3)  # long enough for PyTorch's vectorised path
    rt, rm = ACTS[name](torch, TF, t), ACTS[name](mt, MF, to_mt(t))
    close(rm, rt)
    if name in ("relu", "relu6", "hardtanh", "leaky_relu", "threshold", "hardshrink", "torch.relu", "Tensor.relu"):
        assert (np.signbit(to_np(rm)) == np.signbit(to_np(rt))).all()  # -0.0 kept as PyTorch keeps it


INPLACE = {
    "relu": lambda L, F, x: F.relu(x, inplace=True), "relu_": lambda L, F, x: L.relu_(x),
    "Tensor.relu_": lambda L, F, x: x.relu_(), "relu6": lambda L, F, x: F.relu6(x, inplace=True),
    "hardtanh": lambda L, F, x: F.hardtanh(x, inplace=True), "hardtanh_": lambda L, F, x: F.hardtanh_(x, -0.2, 0.2),
    "leaky_relu": lambda L, F, x: F.leaky_relu(x, 0.3, True), "leaky_relu_": lambda L, F, x: F.leaky_relu_(x),
    "elu": lambda L, F, x: F.elu(x, inplace=True), "elu_": lambda L, F, x: F.elu_(x, 0.5),
    "selu": lambda L, F, x: F.selu(x, inplace=True), "celu": lambda L, F, x: F.celu(x, 2.0, inplace=True),
    "threshold": lambda L, F, x: F.threshold(x, 0.0, 5.0, inplace=True),
    "threshold_": lambda L, F, x: F.threshold_(x, 0.1, 5.0),
    "silu": lambda L, F, x: F.silu(x, inplace=True), "mish": lambda L, F, x: F.mish(x, inplace=True),
    "hardsigmoid": lambda L, F, x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda L, F, x: F.hardswish(x, inplace=True),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_activation_inplace(name):
    fn = INPLACE[name]
    # on a non-leaf: the result is the input tensor, the history follows PyTorch's node names
    rm, rt = diff(lambda L, F, x: fn(L, F, x * 2), [(3, 4)])
    # without grad: the same object comes back, modified
    ts, ms = inputs([(3, 4)], requires_grad=False)
    assert fn(mt, MF, ms[0]) is ms[0]
    fn(torch, TF, ts[0])
    close(ms[0], ts[0])
    # a leaf that requires grad
    ts, ms = inputs([(3, 4)])
    raises_same(lambda: fn(mt, MF, ms[0]), lambda: fn(torch, TF, ts[0]))


def test_activation_integers_and_errors():
    t = torch.tensor([[-3, 0, 2, 7]])
    m = to_mt(t)
    for f in (lambda F, x: F.relu(x), lambda F, x: F.relu6(x), lambda F, x: F.hardtanh(x, -2, 2),
              lambda F, x: F.threshold(x, 1, 9)):
        r, e = f(MF, m), f(TF, t)
        assert str(r.dtype) == str(e.dtype) and r.tolist() == e.tolist()
    for name in ["gelu", "silu", "elu", "leaky_relu", "softplus", "mish", "hardswish", "hardsigmoid", "logsigmoid",
                 "softshrink", "hardshrink", "selu", "celu"]:
        raises_same(lambda: getattr(MF, name)(m), lambda: getattr(TF, name)(t))
    tb = torch.tensor([True, False])
    for f in (lambda F, x: F.relu(x), lambda F, x: F.hardtanh(x), lambda F, x: F.threshold(x, 0, 1)):
        raises_same(lambda: f(MF, to_mt(tb)), lambda: f(TF, tb))
    x = torch.randn(3)
    raises_same(lambda: MF.gelu(to_mt(x), approximate="foo"), lambda: TF.gelu(x, approximate="foo"))
    raises_same(lambda: MF.hardtanh(to_mt(x), 2, 1), lambda: TF.hardtanh(x, 2, 1))


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh", "silu", "elu", "celu", "leaky_relu", "mish", "softplus",
                                  "hardswish", "logsigmoid", "softshrink", "threshold", "hardtanh"])  # (torch has no hardsigmoid gradgrad)
def test_activation_gradgrad(name):
    gradgrad(ACTS[name], [(3, 7)], seed=3)


# ---- embedding ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding(dtype):
    idx = torch.tensor([[1, 3, 0, 3], [4, 1, 1, 2]])
    for kw in [{}, {"padding_idx": 1}, {"padding_idx": -2}, {"scale_grad_by_freq": True},
               {"padding_idx": 3, "scale_grad_by_freq": True}]:
        diff(lambda L, F, w: F.embedding(to_mt(idx) if L is mt else idx, w, **kw), [(5, 3)], dtype)
    diff(lambda L, F, w: L.embedding(w, to_mt(idx[0]) if L is mt else idx[0]), [(5, 3)], dtype)
    diff(lambda L, F, w: F.embedding((to_mt(idx) if L is mt else idx).int(), w.t()), [(3, 5)], dtype)
    diff(lambda L, F, w: F.embedding(to_mt(idx[:, :0]) if L is mt else idx[:, :0], w), [(5, 3)], dtype)


def test_embedding_max_norm_and_errors():
    idx = torch.tensor([0, 2, 2, 3])
    for norm_type in (2.0, 1.0, 3.0, float("inf")):
        w = torch.randn(5, 4) * 3
        mw = to_mt(w)
        rt = TF.embedding(idx, w, max_norm=1.5, norm_type=norm_type)
        rm = MF.embedding(to_mt(idx), mw, max_norm=1.5, norm_type=norm_type)
        close(rm, rt)
        close(mw, w)  # renormalised in place
    w = torch.randn(5, 4)
    raises_same(lambda: MF.embedding(to_mt(torch.tensor([5])), to_mt(w)), lambda: TF.embedding(torch.tensor([5]), w))
    raises_same(lambda: MF.embedding(to_mt(torch.tensor([1.0])), to_mt(w)), lambda: TF.embedding(torch.tensor([1.0]), w))
    raises_same(lambda: MF.embedding(to_mt(idx), to_mt(w[0])), lambda: TF.embedding(idx, w[0]))
    with pytest.raises(AssertionError):
        MF.embedding(to_mt(idx), to_mt(w), padding_idx=7)


def test_embedding_gradgrad():
    idx = torch.tensor([[1, 3, 0, 3]])
    for kw in [{}, {"padding_idx": 3}, {"scale_grad_by_freq": True}]:
        gradgrad(lambda L, F, w: F.embedding(to_mt(idx) if L is mt else idx, w, **kw) ** 2, [(5, 3)])


# ---- dropout: the same numbers as PyTorch under the same seed ------------------------------------

DROPOUTS = {
    "dropout": lambda L, F, x: F.dropout(x, 0.3),
    "dropout_p1": lambda L, F, x: F.dropout(x, 1.0),
    "torch.dropout": lambda L, F, x: L.dropout(x, 0.2, True),
    "dropout1d": lambda L, F, x: F.dropout1d(x, 0.4),
    "dropout1d_2d": lambda L, F, x: F.dropout1d(x[0], 0.4),
    "dropout2d": lambda L, F, x: F.dropout2d(x.unsqueeze(0), 0.5),
    "dropout3d": lambda L, F, x: F.dropout3d(x.unsqueeze(0), 0.5),
    "dropout3d_4d": lambda L, F, x: F.dropout3d(x, 0.5),
    "alpha_dropout": lambda L, F, x: F.alpha_dropout(x, 0.2, True),
    "feature_alpha_dropout": lambda L, F, x: F.feature_alpha_dropout(x, 0.2, True),
    "noncontig": lambda L, F, x: F.dropout(x.transpose(0, 2), 0.5),
    "inplace": lambda L, F, x: F.dropout(x * 1, 0.5, inplace=True),
    "alpha_inplace": lambda L, F, x: F.alpha_dropout(x * 1, 0.5, True, inplace=True),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(DROPOUTS))
def test_dropout_bit_exact(name, dtype):
    ts, ms = inputs([(3, 4, 50)], dtype)
    torch.manual_seed(7)
    mt.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rt = DROPOUTS[name](torch, TF, ts[0])
        rm = DROPOUTS[name](mt, MF, ms[0])
    close(rm, rt, (0, 0))  # bit for bit
    if type(rt.grad_fn).__name__ != "SqueezeBackward4":
        assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__
    rt.sum().backward()
    rm.sum().backward()
    close(ms[0].grad, ts[0].grad, (0, 0))
    assert torch.rand(1).item() == mt.rand(1).item()  # the generators moved alike


def test_dropout_identity_and_errors():
    ts, ms = inputs([(3, 4)])
    assert MF.dropout(ms[0], 0.0) is ms[0]
    assert MF.dropout(ms[0], 0.5, training=False) is ms[0]
    assert MF.alpha_dropout(ms[0], 0.5) is ms[0]  # training=False by default
    for f in (lambda F, x: F.dropout(x, 1.5), lambda F, x: F.dropout2d(x, -0.1),
              lambda F, x: F.dropout1d(x[0, 0], 0.1), lambda F, x: F.feature_alpha_dropout(x[0], 0.1, True)):
        raises_same(lambda: f(MF, ms[0]), lambda: f(TF, ts[0]))
    raises_same(lambda: mt.dropout(ms[0], 1.5, True), lambda: torch.dropout(ts[0], 1.5, True))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        MF.dropout2d(ms[0], 0.5)
    assert "dropout2d: Received a 2-D input to dropout2d" in str(w[0].message)


# ---- linear -----------------------------------------------------------------------------------------

LINEARS = {
    "2d_bias": ((4, 3), (5, 3), (5,)), "3d_bias": ((2, 4, 3), (5, 3), (5,)), "4d_bias": ((2, 2, 4, 3), (5, 3), (5,)),
    "1d_bias": ((3,), (5, 3), (5,)), "2d": ((4, 3), (5, 3), None), "3d": ((2, 4, 3), (5, 3), None),
    "1d": ((3,), (5, 3), None), "empty": ((0, 3), (5, 3), (5,)), "bias_2d": ((2, 4, 3), (5, 3), (1, 5)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(LINEARS))
def test_linear(name, dtype):
    xs, ws, bs = LINEARS[name]
    shapes = [xs, ws] + ([bs] if bs else [])
    tol = {"bfloat16": (2e-2, 5e-2), "float16": (2e-3, 5e-3)}.get(dtype)
    diff(lambda L, F, x, w, *b: F.linear(x, w, *b), shapes, dtype, tol=tol)
    if len(xs) >= 2:  # non-contiguous input: the matmul path
        diff(lambda L, F, x, w, *b: F.linear(x.transpose(-1, -2).transpose(-1, -2)[..., ::1, :], w, *b), shapes, dtype, tol=tol)
        diff(lambda L, F, x, w, *b: F.linear(x[..., ::2, :], w.t().t(), *b), shapes, dtype, tol=tol)


def test_linear_grad_fn_chain_is_torchs():
    # Linear runs F.linear (one core call): its nodes are PyTorch's, TBackward0 for weight.t() included
    def chain(L, shape):
        lin = L.nn.Linear(16, 4)
        y = lin(L.ones(*shape, requires_grad=True))
        nodes, seen = [], [y.grad_fn]
        while seen:
            n = seen.pop(0)
            nodes.append(n.name())
            seen += [m for m, _ in n.next_functions if m is not None]
        return nodes

    for shape in [(16,), (2, 16), (2, 3, 16)]:
        assert chain(mt, shape) == chain(torch, shape), shape


def test_linear_errors():
    x, w = torch.randn(2, 3), torch.randn(4, 5)
    raises_same(lambda: MF.linear(to_mt(x), to_mt(w)), lambda: TF.linear(x, w))
    raises_same(lambda: MF.linear(to_mt(x[0, 0]), to_mt(w)), lambda: TF.linear(x[0, 0], w))


def test_unfold_fold_padding_past_int64_raise():
    # a padded extent past int64 (found by the C fuzzer: im2col's index sums overflowed) raises; ATen's own
    # size arithmetic overflows there (UB), so its outcome is not compared
    x = mt.ones(1, 1, 3, 3)
    for kw in (dict(kernel_size=1, padding=2**62, stride=2**62), dict(kernel_size=1, padding=2**62, stride=1)):
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            mt.nn.functional.unfold(x, **kw)
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            mt.nn.functional.fold(mt.ones(1, 1, 9), output_size=(3, 3), **kw)
