"""Embedding, LayerNorm, Dropout* and the activation modules against live PyTorch (same weights)."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

ACTIVATIONS = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("SELU", (), {}), ("SiLU", (), {}), ("Mish", (), {}),
    ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Hardtanh", (-0.5, 0.7), {}), ("Sigmoid", (), {}),
    ("Tanh", (), {}), ("LogSigmoid", (), {}), ("Softsign", (), {}), ("Tanhshrink", (), {}),
    ("ELU", (0.7,), {}), ("CELU", (1.3,), {}), ("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}),
    ("Hardshrink", (0.3,), {}), ("Softshrink", (0.3,), {}), ("LeakyReLU", (0.2,), {}),
    ("Softplus", (2.0, 1.0), {}), ("Threshold", (0.1, 20.0), {}), ("Softmax", (1,), {}),
    ("Softmin", (0,), {}), ("LogSoftmax", (-1,), {}), ("Softmax2d", (), {}), ("PReLU", (), {}), ("PReLU", (5,), {}),
]


# backward kernels that reduce over a row: in bfloat16 a 1-ulp difference in the saved output moves
# small gradient entries (cancellation), so they compare at the scale of the largest entry
ROW_REDUCING = {"Softmax", "Softmin", "LogSoftmax", "Softmax2d"}


def _pair(x, dtype="float32", grad=True):
    a = mt.tensor(x, dtype=getattr(mt, dtype)).requires_grad_(grad)
    b = torch.tensor(x, dtype=getattr(torch, dtype)).requires_grad_(grad)
    return a, b


def _close(a, b, dtype="float32", row_reducing=False):
    tol = {"float32": (1e-5, 1.3e-6), "bfloat16": (1.6e-2, 1e-5)}[dtype]
    if row_reducing and dtype == "bfloat16":
        tol = (tol[0], 2 ** -7 * float(b.detach().float().abs().max()))
    np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(), rtol=tol[0], atol=tol[1])


def _backward(ya, yb):
    """Backpropagate the same random upstream gradient through both."""
    g = np.random.default_rng(3).standard_normal(tuple(ya.shape)).astype("float32")
    ya.backward(mt.tensor(g, dtype=ya.dtype))
    yb.backward(torch.tensor(g, dtype=yb.dtype))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name,args,kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_modules(name, args, kwargs, dtype):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype("float32")
    a, b = _pair(x, dtype)
    ma, mb = getattr(mt.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    ma.to(getattr(mt, dtype))
    mb.to(getattr(torch, dtype))
    assert repr(ma) == repr(mb)
    ya, yb = ma(a.transpose(1, 3)), mb(b.transpose(1, 3))  # non-contiguous input
    _close(ya, yb, dtype)
    _backward(ya, yb)
    _close(a.grad, b.grad, dtype, row_reducing=name in ROW_REDUCING)


def test_inplace_activation():
    a, b = _pair(np.linspace(-2, 2, 12, dtype="float32"), grad=False)
    assert mt.nn.ReLU(inplace=True)(a) is a
    torch.nn.ReLU(inplace=True)(b)
    _close(a, b)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("padding_idx", [None, 1, -2])
def test_embedding(dtype, padding_idx):
    ma = mt.nn.Embedding(10, 6, padding_idx=padding_idx, dtype=getattr(mt, dtype))
    mb = torch.nn.Embedding(10, 6, padding_idx=padding_idx, dtype=getattr(torch, dtype))
    mb.load_state_dict({k: torch.from_numpy(v.float().numpy()).to(getattr(torch, dtype))
                        for k, v in ma.state_dict().items()})
    assert repr(ma) == repr(mb) and ma.padding_idx == mb.padding_idx
    if padding_idx is not None:
        assert not ma.weight[ma.padding_idx].float().abs().sum().item()
    idx = [[1, 2, 8], [8, 0, 1]]
    ya, yb = ma(mt.tensor(idx)), mb(torch.tensor(idx))
    _close(ya, yb, dtype)
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    _close(ma.weight.grad, mb.weight.grad, dtype)


def test_embedding_from_pretrained():
    w = np.arange(12, dtype="float32").reshape(4, 3)
    ma = mt.nn.Embedding.from_pretrained(mt.tensor(w))
    assert not ma.weight.requires_grad
    np.testing.assert_array_equal(ma(mt.tensor([3, 0])).numpy(), w[[3, 0]])
    assert mt.nn.Embedding.from_pretrained(mt.tensor(w), freeze=False).weight.requires_grad


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True)])
def test_layer_norm(dtype, affine, bias):
    rng = np.random.default_rng(1)
    ma = mt.nn.LayerNorm((4, 5), eps=1e-6, elementwise_affine=affine, bias=bias, dtype=getattr(mt, dtype))
    mb = torch.nn.LayerNorm((4, 5), eps=1e-6, elementwise_affine=affine, bias=bias, dtype=getattr(torch, dtype))
    assert repr(ma) == repr(mb)
    assert list(ma.state_dict()) == list(mb.state_dict())
    with mt.no_grad(), torch.no_grad():
        for (_, pa), (_, pb) in zip(ma.named_parameters(), mb.named_parameters()):
            v = rng.standard_normal(tuple(pa.shape)).astype("float32")
            pa.copy_(mt.tensor(v))
            pb.copy_(torch.tensor(v))
    a, b = _pair(rng.standard_normal((3, 4, 5)).astype("float32"), dtype)
    ya, yb = ma(a), mb(b)
    _close(ya, yb, dtype)
    _backward(ya, yb)
    _close(a.grad, b.grad, dtype, row_reducing=True)
    for pa, pb in zip(ma.parameters(), mb.parameters()):
        _close(pa.grad, pb.grad, dtype, row_reducing=True)


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_dropout_modules(name):
    shape = {"Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 4, 5, 6)}.get(name, (2, 3, 4, 5))
    x = np.random.default_rng(2).standard_normal(shape).astype("float32")
    ma, mb = getattr(mt.nn, name)(0.4), getattr(torch.nn, name)(0.4)
    assert repr(ma) == repr(mb)
    ma.eval()
    np.testing.assert_array_equal(ma(mt.tensor(x)).numpy(), x)  # eval: identity
    if name == "Dropout":  # the core's RNG stream is PyTorch's
        ma.train()
        mt.manual_seed(7)
        torch.manual_seed(7)
        np.testing.assert_array_equal(ma(mt.tensor(x)).numpy(), mb(torch.tensor(x)).numpy())
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        getattr(mt.nn, name)(1.5)


def test_softmax2d_error():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        mt.nn.Softmax2d()(mt.ones(2, 3))


def test_prelu_weight_grad_and_errors():
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype("float32")
    outs = []
    for L in (mt, torch):
        m = L.nn.PReLU(3, init=0.1)
        a = L.tensor(x, requires_grad=True)
        m(a).pow(2).sum().backward()
        outs.append((a.grad.numpy(), m.weight.grad.numpy()))
    for u, v in zip(*outs):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 3"):
        mt.nn.functional.prelu(mt.ones(2, 3, 4), mt.ones(4))
    with pytest.raises(RuntimeError, match="prelu: Type promoting not supported. Got BFloat16 and Float"):
        mt.nn.functional.prelu(mt.ones(2, 3, dtype=mt.bfloat16), mt.ones(3))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        mt.nn.functional.prelu(mt.ones(2, 3), mt.ones(1, 3))
