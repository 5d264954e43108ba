"""F.normalize, nn.utils.clip_grad_norm_/clip_grad_value_/parameters_to_vector against live PyTorch."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((3, 4, 5)).astype("float32")


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (float("inf"), 0), (3.0, 2)])
def test_normalize(p, dim):
    a, b = mt.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ya, yb = mt.nn.functional.normalize(a, p, dim), torch.nn.functional.normalize(b, p, dim)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(X.shape).astype("float32")
    ya.backward(mt.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(mt.nn.functional.normalize(mt.zeros(2, 3)).numpy(), 0)  # eps keeps it finite


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm(norm_type):
    res = []
    for L in (mt, torch):
        ps = [L.tensor(X[i], requires_grad=True) for i in range(3)]
        for i, p in enumerate(ps):
            p.grad = L.tensor(X[i] * (i + 1))
        total = L.nn.utils.clip_grad_norm_(ps, 1.5, norm_type)
        res.append([total.item()] + [p.grad.numpy() for p in ps])
    assert res[0][0] == pytest.approx(res[1][0], rel=1e-6)
    for u, v in zip(res[0][1:], res[1][1:]):
        np.testing.assert_allclose(u, v, rtol=1e-6, atol=1e-7)


def test_clip_grad_value_and_vectors():
    p = mt.tensor(X[0], requires_grad=True)
    p.grad = mt.tensor(X[0] * 3)
    mt.nn.utils.clip_grad_value_([p], 0.5)
    np.testing.assert_array_equal(p.grad.numpy(), np.clip(X[0] * 3, -0.5, 0.5))
    ps = [mt.zeros(2, 3), mt.zeros(4)]
    v = mt.nn.utils.parameters_to_vector([mt.ones(2, 3), mt.ones(4) * 2])
    assert v.tolist() == [1.0] * 6 + [2.0] * 4
    mt.nn.utils.vector_to_parameters(v, ps)
    assert ps[1].tolist() == [2.0] * 4
