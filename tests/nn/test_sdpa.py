"""F.scaled_dot_product_attention against live PyTorch 2.13: values, gradients, node names (the fused
CPU path and the math path), dtypes, layouts, masks, GQA, dropout streams, empty inputs, errors."""
import numpy as np
import pytest

import mindtorch_v2 as mt
import mindtorch_v2.nn.functional as MF
from mindtorch_v2.nn.attention import SDPBackend, sdpa_kernel

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {"float32": (2e-6, 2e-5), "float64": (1e-12, 1e-12), "bfloat16": (1.6e-2, 2e-2), "float16": (2e-3, 2e-3)}


def _np(x):
    return np.asarray(x.detach().float().numpy()) if x is not None else None


def _pair(shape, dtype, seed, transpose=False):
    """The same tensor in both libraries (transpose: a [B, L, H, E] buffer seen as [B, H, L, E])."""
    rng = np.random.default_rng(seed)
    s = (shape[0], shape[2], shape[1], shape[3]) if transpose else shape
    a = rng.standard_normal(s).astype(np.float32)
    t = torch.tensor(a).to(getattr(torch, dtype))
    m = mt.tensor(a).to(getattr(mt, dtype))
    if transpose:
        t, m = t.transpose(1, 2), m.transpose(1, 2)
    return t.requires_grad_(), m.requires_grad_()


def _mask(mask):
    if mask is None:
        return None, None
    return mask, mt.tensor(mask.numpy()) if mask.dtype != torch.bfloat16 else mt.tensor(mask.float().numpy()).bfloat16()


def run(shapes, dtype="float32", mask=None, transpose=False, grad=True, **kw):
    (tq, mq), (tk, mk), (tv, mv) = (_pair(s, dtype, i, transpose) for i, s in enumerate(shapes))
    tm, mm = _mask(mask)
    to = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kw)
    mo = MF.scaled_dot_product_attention(mq, mk, mv, attn_mask=mm, **kw)
    assert mo.dtype == getattr(mt, dtype) and tuple(mo.shape) == tuple(to.shape)
    assert mo.stride() == to.stride()
    assert type(to.grad_fn).__name__ == type(mo.grad_fn).__name__
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(_np(mo), _np(to), rtol=rtol, atol=atol)
    if grad:
        g = np.random.default_rng(9).standard_normal(tuple(to.shape)).astype(np.float32)
        to.backward(torch.tensor(g).to(to.dtype))
        mo.backward(mt.tensor(g).to(mo.dtype))
        for t, m in ((tq, mq), (tk, mk), (tv, mv)):
            np.testing.assert_allclose(_np(m.grad), _np(t.grad), rtol=rtol * 4, atol=atol * 4)
    return to, mo


FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"
Q, K = (2, 3, 5, 8), (2, 3, 7, 8)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}, {"scale": -0.7}])
def test_fused_path(dtype, kw):
    to, mo = run([Q, K, K], dtype, **kw)
    assert type(mo.grad_fn).__name__ == FLASH


@pytest.mark.parametrize("L,S", [(70, 300), (300, 70), (129, 129), (1, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_blocks_and_causal_alignment(L, S, causal):
    run([(1, 2, L, 16), (1, 2, S, 16), (1, 2, S, 16)], is_causal=causal)


def test_transposed_heads_as_transformers_give_them():
    to, mo = run([(2, 4, 9, 16), (2, 4, 11, 16), (2, 4, 11, 16)], transpose=True)
    assert type(mo.grad_fn).__name__ == FLASH


def test_non_contiguous_rows_go_through_copies():
    # last-dim stride != 1: PyTorch takes the math path; so do we
    run([Q, K, K], grad=True, transpose=False)
    tq, mq = _pair((2, 3, 8, 5), "float32", 0)
    tk, mk = _pair((2, 3, 8, 7), "float32", 1)
    tv, mv = _pair(K, "float32", 2)
    to = F.scaled_dot_product_attention(tq.transpose(-1, -2), tk.transpose(-1, -2), tv)
    mo = MF.scaled_dot_product_attention(mq.transpose(-1, -2), mk.transpose(-1, -2), mv)
    assert type(to.grad_fn).__name__ == type(mo.grad_fn).__name__
    np.testing.assert_allclose(_np(mo), _np(to), rtol=2e-6, atol=2e-5)


@pytest.mark.parametrize("shape", [(5, 7), (1, 7), (5, 1), (2, 1, 5, 7), (1, 3, 5, 7), (2, 3, 5, 7), (1, 1, 1, 1)])
@pytest.mark.parametrize("kind", ["bool", "float32", "float64"])
def test_masks_broadcast(shape, kind):
    rng = np.random.default_rng(3)
    if kind == "bool":
        mask = torch.tensor(rng.random(shape) > 0.3)
        dtype = "float32"
    else:
        mask = torch.tensor(rng.standard_normal(shape)).to(getattr(torch, kind))
        dtype = kind
    run([Q, K, K], dtype, mask=mask)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_with_float32_mask(dtype):
    run([Q, K, K], dtype, mask=torch.randn(5, 7))


def test_fully_masked_rows_give_zero():
    mask = torch.ones(5, 7, dtype=torch.bool)
    mask[1] = False
    mask[3] = False
    to, mo = run([Q, K, K], mask=mask)  # fused
    assert not np.isnan(_np(mo)).any()
    run([Q[1:], K[1:], K[1:]], mask=mask, is_causal=False)
    fm = torch.zeros(5, 7)
    fm[2] = float("-inf")
    run([Q, K, K], mask=fm)
    run([(3, 5, 8), (3, 7, 8), (3, 7, 8)], mask=mask)  # math path: _safe_softmax


def test_mask_and_causal_together_on_the_fused_path():
    run([Q, K, K], mask=torch.rand(5, 7) > 0.3, is_causal=True)


def test_float_mask_gradient_takes_the_math_path():
    mask_np = np.random.default_rng(5).standard_normal((5, 7)).astype(np.float32)
    tm, mm = torch.tensor(mask_np, requires_grad=True), mt.tensor(mask_np).requires_grad_()
    (tq, mq), (tk, mk), (tv, mv) = (_pair(s, "float32", i) for i, s in enumerate([Q, K, K]))
    to = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    mo = MF.scaled_dot_product_attention(mq, mk, mv, attn_mask=mm)
    assert type(mo.grad_fn).__name__ == type(to.grad_fn).__name__ == "UnsafeViewBackward0"
    to.sum().backward()
    mo.sum().backward()
    np.testing.assert_allclose(_np(mm.grad), _np(tm.grad), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(mq.grad), _np(tq.grad), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes", [
    [(3, 5, 8), (3, 7, 8), (3, 7, 8)],            # 3-D
    [(5, 8), (7, 8), (7, 8)],                      # 2-D
    [(2, 2, 3, 5, 8), (2, 2, 3, 7, 8), (2, 2, 3, 7, 8)],  # 5-D
    [Q, K, (2, 3, 7, 6)],                          # value head dim differs
    [Q, (1, 3, 7, 8), (1, 3, 7, 8)],               # broadcast batch
])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_math_path(shapes, dtype, causal):
    run(shapes, dtype, is_causal=causal)


@pytest.mark.parametrize("shapes", [[(2, 6, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8)],
                                    [(2, 6, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8)],
                                    [(2, 6, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6)],
                                    [(6, 5, 8), (3, 7, 8), (3, 7, 8)],
                                    # several query and key blocks per key head (the backward's loops)
                                    [(1, 4, 200, 16), (1, 2, 300, 16), (1, 2, 300, 16)],
                                    [(1, 4, 300, 16), (1, 2, 130, 16), (1, 2, 130, 16)]])
def test_gqa(shapes):
    run(shapes, enable_gqa=True)
    run(shapes, enable_gqa=True, is_causal=True)


@pytest.mark.parametrize("shapes", [[(2, 3, 0, 8), K, K], [Q, (2, 3, 0, 8), (2, 3, 0, 8)],
                                    [(0, 3, 5, 8), (0, 3, 7, 8), (0, 3, 7, 8)], [(3, 0, 8), (3, 7, 8), (3, 7, 8)]])
def test_empty(shapes):
    run(shapes)


def test_dropout_draws_pytorchs_stream():
    for seed in (0, 3):
        torch.manual_seed(seed)
        mt.manual_seed(seed)
        to, mo = run([Q, K, K], dropout_p=0.4)
    torch.manual_seed(0)
    mt.manual_seed(0)
    run([Q, K, K], dropout_p=1.0)


def test_backends():
    from torch.nn.attention import sdpa_kernel as torch_sdpa_kernel, SDPBackend as TB
    with sdpa_kernel(SDPBackend.MATH), torch_sdpa_kernel(TB.MATH):
        to, mo = run([Q, K, K])
        assert type(mo.grad_fn).__name__ == "UnsafeViewBackward0"
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch_sdpa_kernel(TB.FLASH_ATTENTION):
        run([Q, K, K])
        with pytest.raises(RuntimeError, match=r"^No available kernel.  Aborting execution.$"):
            MF.scaled_dot_product_attention(*(mt.randn(3, 4, 8) for _ in range(3)))
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused kernels."):
            MF.scaled_dot_product_attention(*(mt.randn(*Q) for _ in range(3)))
    assert mt.backends.cuda.flash_sdp_enabled() and mt.backends.cuda.math_sdp_enabled()


def test_no_grad_records_nothing():
    q = mt.randn(*Q)
    assert MF.scaled_dot_product_attention(q, q, q).grad_fn is None
    with mt.no_grad():
        q.requires_grad_()
        assert MF.scaled_dot_product_attention(q, q, q).grad_fn is None


def test_gradcheck_float64():
    for kw in ({}, {"is_causal": True}, {"enable_gqa": True}):
        qs = (1, 2, 3, 4) if "enable_gqa" not in kw else (1, 4, 3, 4)
        q = mt.randn(*qs, dtype=mt.float64, requires_grad=True)
        k = mt.randn(1, 2, 5, 4, dtype=mt.float64, requires_grad=True)
        v = mt.randn(1, 2, 5, 4, dtype=mt.float64, requires_grad=True)
        assert mt.autograd.gradcheck(lambda q, k, v: MF.scaled_dot_product_attention(q, k, v, **kw), (q, k, v))
    m = mt.randn(3, 5, dtype=mt.float64)
    assert mt.autograd.gradcheck(lambda q, k, v: MF.scaled_dot_product_attention(q, k, v, attn_mask=m), (q[:, :2], k, v))


def test_double_backward_is_pytorchs_error():
    q = mt.randn(*Q, requires_grad=True)
    o = MF.scaled_dot_product_attention(q, q, q)
    g, = mt.autograd.grad(o.sum(), q, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward "
                       "is not implemented"):
        g.sum().backward()


def _both(fn_args):
    """Run with both libraries; both must raise the same type and text."""
    errs = []
    for lib, f in ((torch, F), (mt, MF)):
        try:
            f.scaled_dot_product_attention(*fn_args(lib)[0], **fn_args(lib)[1])
            errs.append(None)
        except Exception as e:  # noqa: BLE001
            errs.append((type(e).__name__, str(e).split("\n")[0]))
    return errs


@pytest.mark.parametrize("case", [
    lambda l: ((l.randn(*Q), l.randn(*K, dtype=l.float64), l.randn(*K)), {}),
    lambda l: ((l.randn(8), l.randn(7, 8), l.randn(7, 8)), {}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"attn_mask": l.ones(5, 7, dtype=l.int64)}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"attn_mask": l.ones(5, 7, dtype=l.float64)}),
    lambda l: ((l.randn(*Q, dtype=l.float16),) * 1 + (l.randn(*K, dtype=l.float16),) * 2,
               {"attn_mask": l.ones(5, 7, dtype=l.bfloat16)}),
    lambda l: ((l.randn(3, 5, 8), l.randn(3, 7, 8), l.randn(3, 7, 8)),
               {"attn_mask": l.ones(5, 7, dtype=l.bool), "is_causal": True}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"attn_mask": l.ones(4, 7)}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"attn_mask": l.ones(7)}),
    lambda l: ((l.randn(2, 4, 5, 8), l.randn(2, 3, 7, 8), l.randn(2, 3, 7, 8)), {"enable_gqa": True}),
    lambda l: ((l.randn(2, 6, 5, 8), l.randn(2, 3, 7, 8), l.randn(2, 3, 7, 8)), {}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"dropout_p": 1.5}),
    lambda l: ((1, l.randn(*K), l.randn(*K)), {}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"attn_mask": 3}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"dropout_p": "a"}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K)), {"foo": 1}),
    lambda l: ((l.randn(*Q), l.randn(*K), l.randn(*K), None, 0.0, False, None), {}),
])
def test_errors(case):
    t, m = _both(case)
    assert t is not None and t == m
