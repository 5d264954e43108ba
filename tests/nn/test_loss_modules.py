"""Loss modules against live PyTorch: same options, inputs and targets -> same loss and gradient."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5)).astype("float32")
Y = rng.standard_normal((4, 5)).astype("float32")
P = 1 / (1 + np.exp(-Y))  # probabilities
CLS = np.array([1, 0, 4, 2])
SIGN = np.sign(rng.standard_normal((4,))).astype("float32")

# name, kwargs, inputs builder (lib -> list of args; the first requires grad)
CASES = [
    ("L1Loss", {}, lambda L: [L.tensor(X), L.tensor(Y)]),
    ("MSELoss", {"reduction": "sum"}, lambda L: [L.tensor(X), L.tensor(Y)]),
    ("MSELoss", {"size_average": False}, lambda L: [L.tensor(X), L.tensor(Y)]),
    ("SmoothL1Loss", {"beta": 0.5}, lambda L: [L.tensor(X), L.tensor(Y)]),
    ("HuberLoss", {"delta": 0.7, "reduction": "none"}, lambda L: [L.tensor(X), L.tensor(Y)]),
    ("SoftMarginLoss", {}, lambda L: [L.tensor(X), L.tensor(np.sign(Y))]),
    ("CrossEntropyLoss", {}, lambda L: [L.tensor(X), L.tensor(CLS)]),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 0}, lambda L: [L.tensor(X), L.tensor(CLS)]),
    ("CrossEntropyLoss", {"weight": "w"}, lambda L: [L.tensor(X), L.tensor(CLS)]),
    ("NLLLoss", {"reduction": "sum"}, lambda L: [L.tensor(X), L.tensor(CLS)]),
    ("BCELoss", {}, lambda L: [L.tensor(P), L.tensor((Y > 0).astype("float32"))]),
    ("BCEWithLogitsLoss", {"pos_weight": "w"}, lambda L: [L.tensor(X), L.tensor(P)]),
    ("KLDivLoss", {"reduction": "batchmean"}, lambda L: [L.tensor(X), L.tensor(P)]),
    ("KLDivLoss", {"log_target": True}, lambda L: [L.tensor(X), L.tensor(Y)]),
    ("MarginRankingLoss", {"margin": 0.2}, lambda L: [L.tensor(X[:, 0]), L.tensor(Y[:, 0]), L.tensor(SIGN)]),
    ("HingeEmbeddingLoss", {}, lambda L: [L.tensor(X), L.tensor(np.sign(Y))]),
    ("CosineEmbeddingLoss", {"margin": 0.1}, lambda L: [L.tensor(X), L.tensor(Y), L.tensor(SIGN)]),
    ("TripletMarginLoss", {"swap": True}, lambda L: [L.tensor(X), L.tensor(Y), L.tensor(X[::-1].copy())]),
    ("PoissonNLLLoss", {"full": True}, lambda L: [L.tensor(X), L.tensor(np.abs(Y))]),
    ("GaussianNLLLoss", {}, lambda L: [L.tensor(X), L.tensor(Y), L.tensor(P)]),
]


@pytest.mark.parametrize("name,kwargs,make", CASES, ids=lambda v: str(v) if not callable(v) else "")
def test_loss_module(name, kwargs, make):
    outs = []
    for L in (mt, torch):
        kw = {k: (L.tensor(np.linspace(0.5, 1.5, 5, dtype="float32")) if v == "w" else v) for k, v in kwargs.items()}
        m = getattr(L.nn, name)(**kw)
        args = make(L)
        args[0].requires_grad_()
        loss = m(*args)
        loss.sum().backward()
        outs.append((repr(m), loss.detach().numpy(), args[0].grad.numpy(), list(m.state_dict())))
    (ra, la, ga, sa), (rb, lb, gb, sb) = outs
    assert ra == rb and sa == sb
    np.testing.assert_allclose(la, lb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ga, gb, rtol=1e-5, atol=1e-6)


def test_legacy_reduction_and_errors():
    assert mt.nn.MSELoss(size_average=False).reduction == torch.nn.MSELoss(size_average=False).reduction == "sum"
    assert mt.nn.L1Loss(reduce=False).reduction == "none"
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0 instead"):
        mt.nn.TripletMarginLoss(margin=0)
