"""CPU autocast against live PyTorch: which ops run in bfloat16 and which in float32, the values and
gradients they give, enabled=False inside enabled regions, the per-thread state, custom_fwd/bwd, and a
TransformerEncoder layer trained a step under autocast."""
import threading

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def same(m, t, tol=0.0):
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    np.testing.assert_allclose(m.detach().float().numpy(), t.detach().float().numpy(), rtol=tol, atol=tol)


OPS = {  # name: (fn(L, *xs), shapes, tolerance)
    "matmul": (lambda L, a, b: a @ b, [(3, 4), (4, 5)], 0),
    "mm": (lambda L, a, b: L.mm(a, b), [(3, 4), (4, 5)], 0),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 5)], 0),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b), [(3, 5), (3, 4), (4, 5)], 1e-2),
    "baddbmm": (lambda L, c, a, b: L.baddbmm(c, a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)], 1e-2),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [(3, 4), (5, 4), (5,)], 1e-2),
    "conv2d": (lambda L, x, w: L.nn.functional.conv2d(x, w, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)], 2e-2),
    "conv1d": (lambda L, x, w: L.nn.functional.conv1d(x, w), [(1, 2, 6), (3, 2, 3)], 2e-2),
    "sdpa": (lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v), [(1, 2, 4, 8)] * 3, 2e-2),
    "prelu": (lambda L, x, w: L.nn.functional.prelu(x, w), [(2, 3), (3,)], 0),
    "mse_loss": (lambda L, a, b: L.nn.functional.mse_loss(a.bfloat16(), b.bfloat16()), [(3, 4)] * 2, 1e-6),
    "cross_entropy": (lambda L, a: L.nn.functional.cross_entropy(a.bfloat16(), L.tensor([0, 2, 1])), [(3, 4)], 1e-6),
    "bce_logits": (lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(a.bfloat16(), b.sigmoid()),
                   [(3, 4)] * 2, 1e-6),
    "unlisted_add": (lambda L, a, b: a + b.bfloat16(), [(3, 4)] * 2, 0),  # not in a list: ordinary promotion
    "float64_untouched": (lambda L, a, b: a.double() @ b.double(), [(3, 4), (4, 5)], 1e-12),
}


@pytest.mark.parametrize("name", OPS)
def test_op_dtypes_values_and_grads(name):
    fn, shapes, tol = OPS[name]
    outs = {}
    for L in (mt, torch):
        xs = [L.tensor(rnd(*s, seed=i), requires_grad=True) for i, s in enumerate(shapes)]
        with L.autocast("cpu"):
            y = fn(L, *xs)
        y.float().sum().backward()
        outs[L.__name__] = (y, [x.grad for x in xs])
    (ym, gm), (yt, gt) = outs["mindtorch_v2"], outs["torch"]
    same(ym, yt, tol)
    for a, b in zip(gm, gt):
        assert (a is None) == (b is None)
        if b is not None:
            same(a, b, max(tol, 1e-2))


def test_enabled_false_inside_and_state():
    assert not mt.is_autocast_enabled("cpu")
    with mt.autocast("cpu"):
        assert mt.is_autocast_enabled("cpu") and not mt.is_autocast_enabled()
        assert mt.get_autocast_dtype("cpu") is mt.bfloat16
        with mt.autocast("cpu", enabled=False):
            assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.float32
        assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.bfloat16
        with mt.autocast("cpu", dtype=mt.float16):
            assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.float16
    assert not mt.is_autocast_enabled("cpu") and (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.float32
    mt.set_autocast_enabled("cpu", True)
    try:
        assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.bfloat16
    finally:
        mt.set_autocast_enabled("cpu", False)
    assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.float32


def test_state_is_per_thread():
    seen = []
    with mt.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((mt.ones(2, 2) @ mt.ones(2, 2)).dtype))
        t.start()
        t.join()
    assert seen == [mt.float32]


def test_custom_fwd_cast_inputs():
    for L in (mt, torch):
        class F(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a @ b

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g @ b.mT, a.mT @ g

        a = L.ones(2, 2, dtype=L.bfloat16, requires_grad=True)
        with L.autocast("cpu"):
            y = F.apply(a, L.ones(2, 2))
        assert y.dtype == L.float32
        y.sum().backward()
        assert a.grad.dtype == L.bfloat16


def test_transformer_layer_step_under_autocast():
    res = {}
    for L in (mt, torch):
        L.manual_seed(0)
        layer = L.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        opt = L.optim.AdamW(layer.parameters(), lr=1e-2)
        x = L.tensor(rnd(2, 5, 16))
        with L.autocast("cpu"):
            y = layer(x)
            loss = y.float().pow(2).mean()
        loss.backward()
        opt.step()
        res[L.__name__] = (y, loss, [p.detach().clone() for p in layer.parameters()])
    (ym, lm, pm), (yt, lt, pt) = res["mindtorch_v2"], res["torch"]
    same(ym, yt, 5e-2)
    np.testing.assert_allclose(lm.item(), lt.item(), rtol=2e-2)
    for a, b in zip(pm, pt):
        same(a, b, 2e-2)
