"""Matrix products against live PyTorch: shapes, dtypes, layouts, error texts."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

TOL = {"float32": 1e-4, "float64": 1e-10, "float16": 1e-2, "bfloat16": 2e-2, "int64": 0, "int32": 0}


def pair(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(-4, 5, size=shape) if "int" in dtype else rng.standard_normal(shape)
    data = data.tolist() if shape else data.item()
    return (mt.tensor(data).reshape(shape).to(getattr(mt, dtype)),
            torch.tensor(data).reshape(shape).to(getattr(torch, dtype)))


def check(m, t, dtype):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    a, b = np.array(m.double().tolist()), np.array(t.double().tolist())
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * 10)


SHAPES = [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)),
          ((5, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((3,), (2, 3, 4)), ((0, 3), (3, 4)), ((2, 0), (0, 4)),
          ((1, 1), (1, 1)), ((64, 33), (33, 17))]


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul(sa, sb, dtype):
    (ma, ta), (mb, tb) = pair(sa, dtype, 1), pair(sb, dtype, 2)
    check(ma @ mb, ta @ tb, dtype)
    if len(sa) >= 2:  # a transposed (non-contiguous) left operand
        check(ma.transpose(-1, -2).contiguous().transpose(-1, -2) @ mb,
              ta.transpose(-1, -2).contiguous().transpose(-1, -2) @ tb, dtype)
    if len(sb) >= 2:
        check(ma @ mb.transpose(-1, -2).contiguous().transpose(-1, -2),
              ta @ tb.transpose(-1, -2).contiguous().transpose(-1, -2), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
def test_addmm_baddbmm(dtype):
    (mi, ti), (m1, t1), (m2, t2) = pair((4,), dtype, 3), pair((2, 3), dtype, 4), pair((3, 4), dtype, 5)
    check(mt.addmm(mi, m1, m2), torch.addmm(ti, t1, t2), dtype)
    check(mt.addmm(mi, m1, m2, beta=0, alpha=2), torch.addmm(ti, t1, t2, beta=0, alpha=2), dtype)
    check(mt.addmm(mi, m1, m2, beta=2, alpha=3), torch.addmm(ti, t1, t2, beta=2, alpha=3), dtype)
    (mb, tb), (b1, u1), (b2, u2) = pair((2, 1, 4), dtype, 6), pair((2, 2, 3), dtype, 7), pair((2, 3, 4), dtype, 8)
    check(mt.baddbmm(mb, b1, b2, beta=2, alpha=3), torch.baddbmm(tb, u1, u2, beta=2, alpha=3), dtype)
    check(mt.bmm(b1, b2), torch.bmm(u1, u2), dtype)


def test_bfloat16_matches_bits():
    (ma, ta), (mb, tb) = pair((8, 16), "bfloat16", 9), pair((16, 8), "bfloat16", 10)
    assert (ma @ mb).float().tolist() == (ta @ tb).float().tolist()


def test_linear_and_outer():
    (mx, tx), (mw, tw), (mb, tb) = pair((3, 5), "float32", 1), pair((4, 5), "float32", 2), pair((4,), "float32", 3)
    from mindtorch_v2._linalg import linear
    check(linear(mx, mw, mb), torch.nn.functional.linear(tx, tw, tb), "float32")
    check(linear(mx.reshape(3, 1, 5), mw), torch.nn.functional.linear(tx.reshape(3, 1, 5), tw), "float32")
    check(mt.outer(mx[0], mb), torch.outer(tx[0], tb), "float32")


ERRORS = [
    (lambda L: L.mm(L.ones(2, 3), L.ones(4, 5)), RuntimeError),
    (lambda L: L.mm(L.ones(2, 3), L.ones(3, 5, dtype=L.bfloat16)), RuntimeError),
    (lambda L: L.matmul(L.ones(3), L.ones(4)), RuntimeError),
    (lambda L: L.matmul(L.ones(2, 3), L.ones(4)), RuntimeError),
    (lambda L: L.matmul(L.ones(3), L.ones(4, 5)), RuntimeError),
    (lambda L: L.matmul(L.ones(2, 2, 3), L.ones(2, 4, 5)), RuntimeError),
    (lambda L: L.matmul(L.ones(3, 2, 3), L.ones(2, 3, 5)), RuntimeError),
    (lambda L: L.bmm(L.ones(2, 3), L.ones(2, 3, 4)), RuntimeError),
    (lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 3, 4)), RuntimeError),
    (lambda L: L.mm(L.ones(2, 3, 1), L.ones(3, 5)), RuntimeError),
    (lambda L: L.mm(L.ones(2, 3, dtype=L.bool), L.ones(3, 5, dtype=L.bool)), NotImplementedError),
    (lambda L: L.matmul(L.ones(()), L.ones(3)), RuntimeError),
    (lambda L: L.mv(L.ones(2, 3), L.ones(4)), RuntimeError),
    (lambda L: L.dot(L.ones(3), L.ones(3, dtype=L.float64)), RuntimeError),
    (lambda L: L.addmm(L.ones(2, 5), L.ones(2, 3), L.ones(4, 5)), RuntimeError),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_error_texts(i):
    fn, exc = ERRORS[i]
    with pytest.raises(exc) as expected:
        fn(torch)
    with pytest.raises(exc) as got:
        fn(mt)
    assert str(got.value) == str(expected.value)
