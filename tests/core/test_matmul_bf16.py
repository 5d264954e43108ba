"""bfloat16 matrix products (gemm_bf16.c: AMX, else AVX512-BF16's vdpbf16ps, else float32 GEMM) against
live PyTorch and a float64 reference: mm/bmm/addmm/baddbmm/matmul/Linear, edge shapes, layouts, beta and
alpha, thread-count-free bits, autograd. The shapes are above 4096 multiply-adds unless a test says
otherwise: smaller products take the float32 route on both sides."""
import math

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def bf16_pair(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(*shape, generator=g) * scale).bfloat16()
    return mt.from_numpy(t.float().numpy()).bfloat16(), t


def as_torch(m):
    return torch.from_numpy(np.ascontiguousarray(m.float().numpy())).bfloat16()


def close_torch(m, t):
    """PyTorch's rounding; the float32 sums may differ in order: 1 bf16 ulp on a few elements, more where
    the sum cancels to near zero (atol: float32 rounding at the scale of the largest output)."""
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    r, e = as_torch(m).float(), t.float()
    assert torch.equal(r.isnan(), e.isnan())
    r, e = r.nan_to_num(), e.nan_to_num()
    if r.numel():
        assert torch.allclose(r, e, rtol=2 ** -7, atol=2 ** -16 * float(e.abs().max())), (r - e).abs().max()
        assert (r != e).float().mean() <= 0.01


def close_f64(m, ref, k, mag):
    """Within one bf16 rounding of the exact float64 product, plus float32 accumulation over k terms
    (mag: the float64 sum of |a||b| per element)."""
    r = as_torch(m).double()
    bound = ref.abs() * 2.0 ** -8 + mag * (k + 2) * 2.0 ** -23 + 1e-30
    assert bool(((r - ref).abs() <= bound).all()), ((r - ref).abs() - bound).max()


SHAPES = [(1, 768, 3072), (1, 64, 65), (7, 1, 1000), (64, 1, 70), (33, 129, 65), (12, 255, 32), (13, 256, 33),
          (100, 64, 130), (128, 768, 300), (200, 31, 129), (300, 1001, 257), (6, 6, 6000)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_mm_against_torch_and_float64(m, k, n):
    a, ta = bf16_pair((m, k), 0)
    b, tb = bf16_pair((k, n), 1)
    close_torch(a @ b, ta @ tb)
    close_f64(mt.mm(a, b), ta.double() @ tb.double(), k, ta.double().abs() @ tb.double().abs())


@pytest.mark.parametrize("m,k,n", [(33, 129, 65), (1, 300, 200), (128, 767, 96)])
def test_layouts(m, k, n):
    a, ta = bf16_pair((m, k), 2)
    b, tb = bf16_pair((k, n), 3)
    at, tat = bf16_pair((k, m), 4)
    bt, tbt = bf16_pair((n, k), 5)
    close_torch(at.t() @ b, tat.t() @ tb)  # A transposed
    close_torch(a @ bt.t(), ta @ tbt.t())  # B transposed (Linear's weight)
    close_torch(at.t() @ bt.t(), tat.t() @ tbt.t())
    close_torch(a[:, ::2] @ b[::2], ta[:, ::2] @ tb[::2])  # strided along K
    close_torch(a @ b[:, ::3], ta @ tb[:, ::3])  # strided columns of B
    big, tbig = bf16_pair((m, 2, k + 1), 6)
    close_torch(big[:, 1, 1:] @ b, tbig[:, 1, 1:] @ tb)  # rows of A far apart, offset start
    out, tout = mt.empty(n, m, dtype=mt.bfloat16), torch.empty(n, m, dtype=torch.bfloat16)
    mt.mm(a, b, out=out.t()), torch.mm(ta, tb, out=tout.t())  # column-major C
    close_torch(out, tout)
    big, tbig = mt.zeros(2 * m, 2 * n, dtype=mt.bfloat16), torch.zeros(2 * m, 2 * n, dtype=torch.bfloat16)
    mt.mm(a, b, out=big[::2, 1::2]), torch.mm(ta, tb, out=tbig[::2, 1::2])  # C strided both ways
    close_torch(big, tbig)


def test_bmm_baddbmm_and_batch_broadcast():
    x, tx = bf16_pair((5, 40, 72), 7)
    y, ty = bf16_pair((5, 72, 33), 8)
    c, tc = bf16_pair((5, 40, 33), 9)
    close_torch(mt.bmm(x, y), torch.bmm(tx, ty))
    close_torch(mt.baddbmm(c, x, y, beta=0.5, alpha=-2.0), torch.baddbmm(tc, tx, ty, beta=0.5, alpha=-2.0))
    close_torch(mt.bmm(x.transpose(1, 2).contiguous().transpose(1, 2), y), torch.bmm(tx, ty))
    p, tp = bf16_pair((2, 1, 40, 72), 10)
    close_torch(mt.matmul(p, y), torch.matmul(tp, ty))  # [2,1] against [5] batches
    close_torch(mt.matmul(x, y[0]), torch.matmul(tx, ty[0]))
    v, tv = bf16_pair((72,), 11)
    close_torch(mt.matmul(x, v), torch.matmul(tx, tv))
    close_torch(mt.matmul(v, y), torch.matmul(tv, ty))


@pytest.mark.parametrize("beta,alpha", [(0.0, 1.0), (0.0, 3.0), (1.0, 1.0), (0.5, 2.0), (-1.0, 0.25), (2.0, 0.0)])
def test_addmm_beta_alpha(beta, alpha):
    a, ta = bf16_pair((70, 96), 12)
    b, tb = bf16_pair((96, 50), 13)
    c, tc = bf16_pair((70, 50), 14)
    close_torch(mt.addmm(c, a, b, beta=beta, alpha=alpha), torch.addmm(tc, ta, tb, beta=beta, alpha=alpha))
    r, tr = bf16_pair((50,), 15)  # a broadcast bias
    close_torch(mt.addmm(r, a, b, beta=beta, alpha=alpha), torch.addmm(tr, ta, tb, beta=beta, alpha=alpha))
    ref = beta * tc.double() + alpha * (ta.double() @ tb.double())
    mag = abs(beta) * tc.double().abs() + abs(alpha) * (ta.double().abs() @ tb.double().abs())
    close_f64(mt.addmm(c, a, b, beta=beta, alpha=alpha), ref, 96, mag)


def test_beta_zero_ignores_nan_in_c():
    a, ta = bf16_pair((70, 96), 16)
    b, tb = bf16_pair((96, 50), 17)
    c, tc = mt.full((70, 50), float("nan"), dtype=mt.bfloat16), torch.full((70, 50), float("nan"), dtype=torch.bfloat16)
    r = mt.addmm(c, a, b, beta=0)
    assert not bool(mt.isnan(r).any())
    close_torch(r, torch.addmm(tc, ta, tb, beta=0))
    out = c.clone()
    mt.mm(a, b, out=out)  # out= with NaN in it: overwritten
    close_torch(out, ta @ tb)
    x, tx = bf16_pair((3, 40, 64), 18)
    y, ty = bf16_pair((3, 64, 72), 19)
    cb, tcb = mt.full((3, 40, 72), float("nan"), dtype=mt.bfloat16), torch.full((3, 40, 72), float("nan"), dtype=torch.bfloat16)
    close_torch(mt.baddbmm(cb, x, y, beta=0, alpha=0.5), torch.baddbmm(tcb, tx, ty, beta=0, alpha=0.5))


def test_special_values_in_operands():
    a, ta = bf16_pair((40, 64), 20)
    b, tb = bf16_pair((64, 48), 21)
    for i, v in enumerate([float("nan"), float("inf"), -float("inf")]):
        a[i, i] = v
        ta[i, i] = v
    b[3, 5] = float("inf")
    tb[3, 5] = float("inf")
    close_torch(a @ b, ta @ tb)


@pytest.mark.parametrize("shape_a,shape_b", [((0, 64), (64, 100)), ((100, 64), (64, 0)), ((100, 0), (0, 64)),
                                             ((0, 5, 64), (0, 64, 7)), ((3, 0, 64), (3, 64, 7))])
def test_empty_dims(shape_a, shape_b):
    a, ta = bf16_pair(shape_a, 22)
    b, tb = bf16_pair(shape_b, 23)
    close_torch(a @ b, ta @ tb)
    if len(shape_a) == 2:
        c, tc = bf16_pair((shape_a[0], shape_b[1]), 24)
        close_torch(mt.addmm(c, a, b, beta=0.5), torch.addmm(tc, ta, tb, beta=0.5))


def test_linear_module_against_torch():
    torch.manual_seed(0)
    tl = torch.nn.Linear(96, 200).bfloat16()
    ml = mt.nn.Linear(96, 200).bfloat16()
    with mt.no_grad():
        ml.weight.copy_(mt.from_numpy(tl.weight.float().detach().numpy()).bfloat16())
        ml.bias.copy_(mt.from_numpy(tl.bias.float().detach().numpy()).bfloat16())
    x, tx = bf16_pair((4, 33, 96), 25)
    close_torch(ml(x).detach(), tl(tx).detach())
    close_torch(ml(x[0, 0]).detach(), tl(tx[0, 0]).detach())  # one row


def test_thread_count_does_not_change_bits():
    old = mt.get_num_threads()
    cases = [((300, 1001), (1001, 257)), ((128, 768), (768, 300)), ((5, 64, 96), (5, 96, 80)), ((1, 512), (512, 2048))]
    try:
        for sa, sb in cases:
            a, _ = bf16_pair(sa, 26)
            b, _ = bf16_pair(sb, 27)
            c, _ = bf16_pair(sa[:-1] + sb[-1:], 28)
            res = []
            for nt in (1, 2, 3):
                mt.set_num_threads(nt)
                res.append([(a @ b).view(mt.int16).numpy(), (a @ b.transpose(-1, -2).contiguous().transpose(-1, -2)).view(mt.int16).numpy(),
                            (mt.baddbmm(c, a, b, beta=0.5, alpha=3) if len(sa) == 3 else mt.addmm(c, a, b, beta=0.5, alpha=3)).view(mt.int16).numpy()])
            for other in res[1:]:
                for x, y in zip(res[0], other):
                    assert np.array_equal(x, y)
    finally:
        mt.set_num_threads(old)


@pytest.mark.parametrize("m,k,n", [(37, 300, 200), (128, 768, 96), (5, 64, 700)])
def test_layout_does_not_change_bits(m, k, n):
    """Each output is one float32 sum over K in order, whatever the operands' layouts: A read in place (contiguous
    rows, even K, also at an odd row stride) or packed (transposed), B packed from rows or from columns."""
    a, _ = bf16_pair((m, k), 36)
    b, _ = bf16_pair((k, n), 37)
    wide, _ = bf16_pair((m, k + 1), 38)
    ref = (a @ b).view(mt.int16).numpy()
    variants = [a.t().contiguous().t() @ b, a @ b.t().contiguous().t(), a.t().contiguous().t() @ b.t().contiguous().t()]
    for c in variants:
        assert np.array_equal(c.view(mt.int16).numpy(), ref)
    w = wide[:, :k]  # row stride k + 1 (odd): pairs read unaligned
    w_ref = (w.contiguous() @ b).view(mt.int16).numpy()
    assert np.array_equal((w @ b).view(mt.int16).numpy(), w_ref)
    assert np.array_equal((w.t().contiguous().t() @ b).view(mt.int16).numpy(), w_ref)


def test_float32_route_agrees(monkeypatch):
    """MINDTORCH_NO_AVX512BF16 sends the product to the float32 GEMM: the two differ by summation order only."""
    a, _ = bf16_pair((70, 300), 29)
    b, _ = bf16_pair((300, 90), 30)
    fast = as_torch(a @ b).float()
    monkeypatch.setenv("MINDTORCH_NO_AVX512BF16", "1")
    slow = as_torch(a @ b).float()
    assert torch.allclose(fast, slow, rtol=2 ** -7, atol=1e-6)
    assert (fast != slow).float().mean() <= 0.01


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return set(next(line for line in f if line.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        return set()


@pytest.mark.skipif(not _cpu_flags() & {"avx512_bf16", "amx_bf16"},
                    reason="both libraries take their float32 routes on this CPU (no bf16 dot-product unit)")
def test_denormals_as_pytorch():
    """bf16 denormal inputs and float32 denormal partial sums: PyTorch's oneDNN kernel (vdpbf16ps or AMX)
    treats them as zero, so does ours; products of at most 4096 multiply-adds keep them on both sides."""
    for shape_a, shape_b, va, vb in [((32, 64), (64, 32), 1e-39, 1.0), ((32, 64), (64, 32), 1e-20, 1e-20),
                                     ((4, 16), (16, 4), 1e-39, 1.0), ((32, 64), (64, 32), 1e-18, 1e-18)]:
        ta, tb = torch.full(shape_a, va).bfloat16(), torch.full(shape_b, vb).bfloat16()
        a, b = mt.from_numpy(ta.float().numpy()).bfloat16(), mt.from_numpy(tb.float().numpy()).bfloat16()
        assert torch.equal(as_torch(a @ b), ta @ tb)


def test_autograd_through_bf16_matmul():
    a, ta = bf16_pair((33, 70), 31)
    b, tb = bf16_pair((70, 90), 32)
    a.requires_grad_(), ta.requires_grad_()
    b.requires_grad_(), tb.requires_grad_()
    g, tg = bf16_pair((33, 90), 33)
    (a @ b).backward(g)
    (ta @ tb).backward(tg)
    close_torch(a.grad, ta.grad)
    close_torch(b.grad, tb.grad)
    lin, tlin = bf16_pair((40, 70), 34)
    lin.requires_grad_(), tlin.requires_grad_()
    x, tx = bf16_pair((2, 9, 70), 35)
    mt.nn.functional.linear(x, lin).sum().backward()
    torch.nn.functional.linear(tx, tlin).sum().backward()
    close_torch(lin.grad, tlin.grad)
