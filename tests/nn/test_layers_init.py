"""Linear/Bilinear/Flatten/Unflatten forward+backward and nn.init, differential against live PyTorch."""
import math
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
from mindtorch_v2 import nn
from mtdiff import values

torch = pytest.importorskip("torch")


def exact(m, t):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    np.testing.assert_array_equal(values(m), values(t))


def close(m, t, dtype):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    tol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 1e-2}[dtype]
    np.testing.assert_allclose(values(m), values(t), rtol=tol, atol=tol)


def make(lib, cls, *args, seed=0, **kw):
    lib.manual_seed(seed)
    return getattr(lib.nn, cls)(*args, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5), (2, 3, 5, "t"), (2, 2, 3, 5), (0, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(dtype, shape, bias):
    ms, ts = make(mt, "Linear", 5, 3, bias=bias), make(torch, "Linear", 5, 3, bias=bias)
    exact(ms.weight, ts.weight)
    ms.to(getattr(mt, dtype)), ts.to(getattr(torch, dtype))
    transposed = shape[-1] == "t"
    shape = shape[:-1] if transposed else shape
    mt.manual_seed(7), torch.manual_seed(7)
    xm = mt.randn(*shape, dtype=getattr(mt, dtype))
    xt = torch.randn(*shape, dtype=getattr(torch, dtype))
    if transposed:  # non-contiguous 3-D input takes matmul + add in PyTorch
        xm, xt = xm.transpose(0, 1).contiguous().transpose(0, 1), xt.transpose(0, 1).contiguous().transpose(0, 1)
    xm.requires_grad_(), xt.requires_grad_()
    ym, yt = ms(xm), ts(xt)
    close(ym, yt, dtype)  # GEMM kernels differ (OpenBLAS here, MKL in PyTorch's wheel): last-bit differences
    (ym * ym).sum().backward()
    (yt * yt).sum().backward()
    close(xm.grad, xt.grad, dtype)
    close(ms.weight.grad, ts.weight.grad, dtype)
    if bias:
        close(ms.bias.grad, ts.bias.grad, dtype)


def test_linear_errors_and_repr():
    assert repr(make(mt, "Linear", 3, 2, bias=False)) == repr(make(torch, "Linear", 3, 2, bias=False))
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        make(mt, "Linear", 3, 2)(mt.ones(2, 4))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bilinear(dtype):
    ms, ts = make(mt, "Bilinear", 3, 4, 2), make(torch, "Bilinear", 3, 4, 2)
    exact(ms.weight, ts.weight), exact(ms.bias, ts.bias)
    assert repr(ms) == repr(ts)
    ms.to(getattr(mt, dtype)), ts.to(getattr(torch, dtype))
    mt.manual_seed(3), torch.manual_seed(3)
    a = [mt.randn(2, 5, 3, dtype=getattr(mt, dtype)), mt.randn(2, 5, 4, dtype=getattr(mt, dtype))]
    b = [torch.randn(2, 5, 3, dtype=getattr(torch, dtype)), torch.randn(2, 5, 4, dtype=getattr(torch, dtype))]
    for x in a + b:
        x.requires_grad_()
    ym, yt = ms(*a), ts(*b)
    close(ym, yt, dtype)
    ym.sum().backward(), yt.sum().backward()
    for gm, gt in zip([a[0].grad, a[1].grad, ms.weight.grad, ms.bias.grad],
                      [b[0].grad, b[1].grad, ts.weight.grad, ts.bias.grad]):
        close(gm, gt, dtype)
    for bad in [((2, 3), (2, 5, 4)), ((3, 3), (2, 4)), ((2, 5), (2, 4)), ((2, 3), (2, 5))]:
        with pytest.raises(RuntimeError) as em:
            ms.float()(mt.ones(*bad[0]), mt.ones(*bad[1]))
        with pytest.raises(RuntimeError) as et:
            ts.float()(torch.ones(*bad[0]), torch.ones(*bad[1]))
        assert str(em.value) == str(et.value)
    with pytest.raises(ValueError) as em:
        make(mt, "Bilinear", 0, 1, 1)
    with pytest.raises(ValueError) as et:
        make(torch, "Bilinear", 0, 1, 1)
    assert str(em.value) == str(et.value)


def test_flatten_unflatten():
    x = mt.arange(24.).reshape(2, 3, 4)
    xt = torch.arange(24.).reshape(2, 3, 4)
    for args in [(), (0,), (0, 1), (1, 2), (-2, -1)]:
        exact(nn.Flatten(*args)(x), torch.nn.Flatten(*args)(xt))
        assert repr(nn.Flatten(*args)) == repr(torch.nn.Flatten(*args))
    for dim, size in [(1, (3, 1)), (2, [2, 2]), (-1, (2, -1))]:
        exact(nn.Unflatten(dim, size)(x), torch.nn.Unflatten(dim, size)(xt))
        assert repr(nn.Unflatten(dim, size)) == repr(torch.nn.Unflatten(dim, size))
    for bad in [3, (2.0, 2)]:
        with pytest.raises(TypeError) as em:
            nn.Unflatten(1, bad)
        with pytest.raises(TypeError) as et:
            torch.nn.Unflatten(1, bad)
        assert str(em.value) == str(et.value)
    assert nn.Identity(3, a=4)(x) is x


# ---- nn.init --------------------------------------------------------------------------------------

INITS = [
    ("uniform_", {}), ("uniform_", {"a": -2.0, "b": 3.0}), ("normal_", {}), ("normal_", {"mean": 1.0, "std": 0.1}),
    ("trunc_normal_", {}), ("trunc_normal_", {"mean": 0.5, "std": 2.0, "a": 0.0, "b": 0.3}),
    ("constant_", {"val": 0.3}), ("ones_", {}), ("zeros_", {}), ("eye_", {}),
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {}), ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "tanh"}),
    ("sparse_", {"sparsity": 0.5}),
]


@pytest.mark.parametrize("name,kw", INITS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_init_matches_torch(name, kw, dtype):
    shape = (6, 5)
    mt.manual_seed(11), torch.manual_seed(11)
    m = mt.empty(*shape, dtype=getattr(mt, dtype))
    t = torch.empty(*shape, dtype=getattr(torch, dtype))
    rm = getattr(nn.init, name)(m, **kw)
    rt = getattr(torch.nn.init, name)(t, **kw)
    assert rm is m and rt is t
    exact(m, t)
    exact(mt.rand(3), torch.rand(3))  # same amount of the stream consumed


@pytest.mark.parametrize("name,kw", [x for x in INITS if x[0] not in ("constant_", "ones_", "zeros_", "eye_",
                                                                     "sparse_")])
def test_init_generator(name, kw):
    gm, gt = mt.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    m, t = mt.empty(4, 7), torch.empty(4, 7)
    getattr(nn.init, name)(m, generator=gm, **kw)
    getattr(torch.nn.init, name)(t, generator=gt, **kw)
    exact(m, t)


@pytest.mark.parametrize("shape", [(4, 3, 5), (4, 2, 3, 3), (6, 3, 3, 3, 3)])
def test_init_conv_shapes_and_dirac(shape):
    for name in ("xavier_uniform_", "kaiming_normal_"):
        mt.manual_seed(1), torch.manual_seed(1)
        m, t = mt.empty(*shape), torch.empty(*shape)
        getattr(nn.init, name)(m), getattr(torch.nn.init, name)(t)
        exact(m, t)
    assert nn.init._calculate_fan_in_and_fan_out(mt.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for groups in (1, 2):
        m, t = mt.empty(*shape), torch.empty(*shape)
        exact(nn.init.dirac_(m, groups), torch.nn.init.dirac_(t, groups))


def test_calculate_gain_and_errors():
    for nl, p in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]:
        assert nn.init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)

    def same_error(fn):
        with pytest.raises(Exception) as em:
            fn(mt)
        with pytest.raises(Exception) as et:
            fn(torch)
        assert type(em.value) is type(et.value) and str(em.value) == str(et.value)

    same_error(lambda lib: lib.nn.init.calculate_gain("foo"))
    same_error(lambda lib: lib.nn.init.calculate_gain("leaky_relu", True))
    same_error(lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3)))
    same_error(lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan_x"))
    same_error(lambda lib: lib.nn.init.eye_(lib.empty(3)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2))
    same_error(lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.1))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        nn.init.kaiming_uniform_(mt.empty(0, 3))
    with pytest.warns(FutureWarning, match="`nn.init.normal` is now deprecated in favor of `nn.init.normal_`"):
        nn.init.normal(mt.empty(2))
    for old in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        assert getattr(nn.init, old).__name__ == old


def test_orthogonal_absent_or_right():
    if not hasattr(mt, "linalg"):
        with pytest.raises(NotImplementedError, match="orthogonal_"):
            nn.init.orthogonal_(mt.empty(3, 3))


def test_module_init_matches_torch_weights():
    """manual_seed(s) then building a model gives PyTorch's exact weights."""
    def build(lib):
        lib.manual_seed(1234)
        n = lib.nn
        return n.Sequential(n.Linear(7, 16), n.Linear(16, 16, bias=False), n.Bilinear(4, 5, 3), n.Linear(16, 2))
    m, t = build(mt), build(torch)
    for (km, vm), (kt, vt) in zip(m.state_dict().items(), t.state_dict().items()):
        assert km == kt
        exact(vm, vt)
