"""Matrix products against live PyTorch: shapes, dtypes, layouts, error texts."""
import os

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def _own_sgemm():
    """Our float32 GEMM runs (AVX-512, no OpenBLAS switch): only it promises thread-count-free bits."""
    try:
        with open("/proc/cpuinfo") as f:
            avx512 = " avx512f" in f.read()
    except OSError:
        return False
    return avx512 and not os.environ.get("MINDTORCH_SGEMM_OPENBLAS")


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


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("nb,m,n,k", [(1, 33, 1000, 17), (1, 1000, 33, 17), (3, 100, 130, 50), (1, 17, 40, 600),
                                      (2, 70, 70, 70), (1, 2, 2, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_at_each_thread_count(nb, m, n, k, threads, dtype):
    # batched, split-sized and tiny GEMMs in every operand layout agree with numpy at 1-3 threads
    rng = np.random.default_rng(nb * m + n * k)
    a, b = rng.standard_normal((nb, m, k)), rng.standard_normal((nb, k, n))
    want = a @ b
    prev = mt.get_num_threads()
    mt.set_num_threads(threads)
    try:
        for ta in (False, True):
            for tb in (False, True):
                x = mt.tensor(a.transpose(0, 2, 1).copy()).transpose(1, 2) if ta else mt.tensor(a)
                y = mt.tensor(b.transpose(0, 2, 1).copy()).transpose(1, 2) if tb else mt.tensor(b)
                x, y = x.to(getattr(mt, dtype)), y.to(getattr(mt, dtype))
                got = np.array(mt.bmm(x, y).double().tolist())
                np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
                out = mt.empty(nb, n, m, dtype=x.dtype).transpose(1, 2)  # a column-major result
                mt.bmm(x, y, out=out)
                np.testing.assert_allclose(np.array(out.double().tolist()), want, rtol=TOL[dtype] * 10,
                                           atol=TOL[dtype] * 10)
    finally:
        mt.set_num_threads(prev)


@pytest.mark.parametrize("m", [250, 100])
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_sgemm_blocks_bitwise_across_threads(ta, tb, m):
    # float32 GEMM past every block edge (rows > 240, columns > 3072, inner > 2 x 256, ragged
    # 12x32 tiles), with alpha and beta: matches float64 numpy, and the bits do not depend on
    # the thread count (each element sees the same sums in the same order). 100 rows are one
    # row block: B is then packed per thread, a kc block at a time
    rng = np.random.default_rng(7)
    n, k = 3100, 520
    a, b, c = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    want = 0.5 * c + 1.5 * (a @ b)
    x = mt.tensor(a.T.copy()).t() if ta else mt.tensor(a)
    y = mt.tensor(b.T.copy()).t() if tb else mt.tensor(b)
    x, y, z = x.float(), y.float(), mt.tensor(c).float()
    prev, got = mt.get_num_threads(), []
    try:
        for threads in (1, 2, 3):
            mt.set_num_threads(threads)
            got.append(mt.addmm(z, x, y, beta=0.5, alpha=1.5).numpy())
    finally:
        mt.set_num_threads(prev)
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-3)
    if _own_sgemm():
        assert (got[0] == got[1]).all() and (got[0] == got[2]).all()


@pytest.mark.parametrize("nb,k", [(1, 1), (1, 17), (1, 4097), (1, 1 << 20), (3, 70000), (40, 300)])
def test_sgemm_dot_bitwise_across_threads(nb, k):
    # one row times one column with both contiguous along k (dot, vdot, a full tensordot) is a dot
    # product in chunks whose partial sums add in chunk order: the bits do not depend on the threads;
    # with beta and alpha, ragged chunk tails, batches; a strided column takes the gemv path
    rng = np.random.default_rng(k)
    a, b, c = rng.standard_normal((nb, 1, k)), rng.standard_normal((nb, k, 1)), rng.standard_normal((nb, 1, 1))
    want = 0.5 * c + 1.5 * (a @ b)
    x, y, z = mt.tensor(a).float(), mt.tensor(b).float(), mt.tensor(c).float()
    prev, got = mt.get_num_threads(), []
    try:
        for threads in (1, 2, 3):
            mt.set_num_threads(threads)
            got.append(mt.baddbmm(z, x, y, beta=0.5, alpha=1.5).numpy())
            got.append(mt.dot(x[0, 0], y[0, :, 0]).numpy())
            got.append(mt.tensordot(x[0], y[0].t()).numpy())
    finally:
        mt.set_num_threads(prev)
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-3)
    for r in (got[1], got[2]):
        np.testing.assert_allclose(r, a[0, 0] @ b[0, :, 0], rtol=1e-4, atol=1e-3)
    assert np.allclose(mt.dot(x[0, 0, ::2], y[0, ::2, 0]).item(), a[0, 0, ::2] @ b[0, ::2, 0], rtol=1e-4, atol=1e-3)
    if _own_sgemm():
        for i in range(3):
            assert (got[i] == got[i + 3]).all() and (got[i] == got[i + 6]).all()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("nb,k", [(1, 0), (1, 1), (1, 17), (1, 4097), (1, 1 << 20), (3, 70000), (40, 300)])
def test_dot16(dtype, nb, k):
    # float16/bfloat16 one row times one column (dot, a full tensordot, baddbmm of 1x1 outputs): the float32
    # dot product's chunks over the widened values, rounded once; PyTorch's bfloat16 dot runs one float chain,
    # so its bits agree to its tolerance, not always; ours do not depend on the thread count
    rng = np.random.default_rng(k + nb)
    a, b, c = rng.standard_normal((nb, 1, k)), rng.standard_normal((nb, k, 1)), rng.standard_normal((nb, 1, 1))
    m = [mt.tensor(v).to(getattr(mt, dtype)) for v in (a, b, c)]
    t = [torch.tensor(v).to(getattr(torch, dtype)) for v in (a, b, c)]
    forms = [lambda L, x, y, z: L.dot(x[0, 0], y[0, :, 0]), lambda L, x, y, z: L.tensordot(x[0], y[0].t()),
             lambda L, x, y, z: L.tensordot(x[0].reshape(-1), y[0].reshape(-1), dims=1),
             lambda L, x, y, z: L.baddbmm(z, x, y, beta=0.5, alpha=1.5),
             lambda L, x, y, z: L.dot(x[0, 0, ::2], y[0, ::2, 0]),  # strided: the GEMM's path
             lambda L, x, y, z: x[0, 0] @ y[0, :, 0]]
    prev, got = mt.get_num_threads(), []
    try:
        for threads in (1, 2, 3):
            mt.set_num_threads(threads)
            got.append([f(mt, *m) for f in forms])
    finally:
        mt.set_num_threads(prev)
    for f, r in zip(forms, got[0]):
        check(r, f(torch, *t), dtype)
    for i in range(len(forms)):
        for other in got[1:]:
            assert (got[0][i].view(mt.int16) == other[i].view(mt.int16)).all()
    x0, y0 = m[0][0, 0].float(), m[1][0, :, 0].float()  # the widened float32 dot's bits, rounded once
    assert mt.dot(m[0][0, 0], m[1][0, :, 0]).view(mt.int16).item() == mt.dot(x0, y0).to(getattr(mt, dtype)).view(mt.int16).item()


@pytest.mark.parametrize("nb,m,n,k", [(1, 250, 2100, 2050), (1, 13, 2100, 2050), (1030, 3, 64, 64),
                                      (1, 4100, 40, 1100)])
def test_sgemm_sections(nb, m, n, k):
    # products whose packed copies exceed the budgets (A 16 MiB, B 16 MiB) run in sections: column
    # ranges of one matrix (B 2050 x 2112 shared by two row blocks; with one row block B is packed
    # per thread and needs none), groups of batches (1030 x 64 x 64), row blocks (A 4104 x 1100 in
    # sections of 16 and 2 row blocks, which share one packed B)
    rng = np.random.default_rng(nb + m)
    a, b = rng.standard_normal((nb, m, k)), rng.standard_normal((nb, n, k)).transpose(0, 2, 1)
    x, y = mt.tensor(a).float(), mt.tensor(b.transpose(0, 2, 1).copy()).float().transpose(1, 2)
    prev, got = mt.get_num_threads(), []
    try:
        for threads in (1, 2):
            mt.set_num_threads(threads)
            got.append(mt.bmm(x, y).numpy())
    finally:
        mt.set_num_threads(prev)
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-4, atol=1e-3)
    if _own_sgemm():
        assert (got[0] == got[1]).all()


@pytest.mark.parametrize("openblas", [False, True])
def test_sgemm_single_rows_with_any_stride(openblas, monkeypatch):
    # a one-row operand's row stride is free (here 3 < 10 columns): both GEMM paths (ours, and
    # OpenBLAS behind the switch) must still give BLAS a valid leading dimension
    if openblas:
        monkeypatch.setenv("MINDTORCH_SGEMM_OPENBLAS", "1")
    row = mt.as_strided(mt.arange(10, dtype=mt.float32), (1, 10), (3, 1))
    col = mt.as_strided(mt.arange(10, dtype=mt.float32), (10, 1), (1, 3))
    w = mt.arange(30, dtype=mt.float32).reshape(10, 3)
    np.testing.assert_array_equal((row @ w).numpy(), row.numpy() @ w.numpy())
    np.testing.assert_array_equal((w.t() @ col).numpy(), w.numpy().T @ col.numpy())


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


# ---- more products, einsum, tensordot, cross ----------------------------------------------------


def agree(fn, *specs, dtype="float32"):
    """fn(lib, *tensors) on both libraries (specs are (shape, dtype, seed)): same result or same error."""
    ms, ts = zip(*[pair(*s) for s in specs]) if specs else ((), ())
    try:
        expected = fn(torch, *ts)
    except Exception as e:  # noqa: BLE001 - the oracle's error is the spec
        with pytest.raises(type(e)) as got:
            fn(mt, *ms)
        assert str(got.value).split("\n")[0] == str(e).split("\n")[0]
        return
    check(fn(mt, *ms), expected, dtype)


PRODUCT_DTYPES = ["float32", "float64", "bfloat16", "float16", "int64", "int32"]


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_addmv_addr_addbmm(dtype):
    for beta, alpha in ((1, 1), (0, 2), (2, 3)):
        agree(lambda L, s, m, v: L.addmv(s, m, v, beta=beta, alpha=alpha), ((3,), dtype, 1), ((3, 4), dtype, 2),
              ((4,), dtype, 3), dtype=dtype)
        agree(lambda L, s, m, v: L.addmv(s, m.t(), v, beta=beta, alpha=alpha), ((1,), dtype, 1), ((4, 3), dtype, 2),
              ((4,), dtype, 3), dtype=dtype)
        agree(lambda L, s, a, b: L.addr(s, a, b, beta=beta, alpha=alpha), ((3, 4), dtype, 1), ((3,), dtype, 2),
              ((4,), dtype, 3), dtype=dtype)
        agree(lambda L, s, a, b: L.addbmm(s, a, b, beta=beta, alpha=alpha), ((3, 5), dtype, 1),
              ((2, 3, 4), dtype, 2), ((2, 4, 5), dtype, 3), dtype=dtype)
    agree(lambda L, s, m, v: L.addmv(s, m, v), ((), dtype, 1), ((3, 4), dtype, 2), ((4,), dtype, 3), dtype=dtype)
    agree(lambda L, s, a, b: s.clone().addmv_(a, b, beta=2), ((3,), dtype, 1), ((3, 4), dtype, 2), ((4,), dtype, 3),
          dtype=dtype)
    agree(lambda L, s, a, b: s.clone().addr_(a, b), ((3, 4), dtype, 1), ((3,), dtype, 2), ((4,), dtype, 3),
          dtype=dtype)
    agree(lambda L, s, a, b: s.clone().addbmm_(a, b), ((3, 5), dtype, 1), ((2, 3, 4), dtype, 2),
          ((2, 4, 5), dtype, 3), dtype=dtype)
    agree(lambda L, s, a, b: s.clone().baddbmm_(a, b, alpha=2), ((2, 3, 5), dtype, 1), ((2, 3, 4), dtype, 2),
          ((2, 4, 5), dtype, 3), dtype=dtype)


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_vector_products(dtype):
    agree(lambda L, a, b: L.vdot(a, b), ((5,), dtype, 1), ((5,), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.outer(a, b), ((5,), dtype, 1), ((3,), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.ger(a, b), ((5,), dtype, 1), ((0,), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.inner(a, b), ((2, 3, 4), dtype, 1), ((5, 4), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.inner(a, b), ((), dtype, 1), ((5, 4), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.kron(a, b), ((2, 3), dtype, 1), ((4,), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.kron(a, b), ((2, 1, 3), dtype, 1), ((2, 2), dtype, 2), dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_tensordot_and_multi_dot(dtype):
    a, b = ((3, 4, 5), dtype, 1), ((4, 5, 6), dtype, 2)
    for dims in (2, 0, ([1, 2], [0, 1]), ([2, 1], [1, 0]), ([-1], [1]), (1, 0)):
        agree(lambda L, x, y: L.tensordot(x, y, dims=dims), a, b, dtype=dtype)
    agree(lambda L, x, y: L.tensordot(x, y, dims=([0], [2])), ((3, 1), dtype, 1), ((4, 2, 5), dtype, 2), dtype=dtype)
    agree(lambda L, x, y: L.tensordot(x, y, dims=([1], [0])), ((3, 4), dtype, 1), ((1, 5), dtype, 2), dtype=dtype)
    for shapes in ([(3, 4), (4,)], [(4,), (4, 3), (3, 5), (5,)], [(2, 3), (3, 4), (4, 5), (5, 6), (6, 2)],
                   [(4,), (4,)], [(10, 2), (2, 30), (30, 3)]):
        agree(lambda L, *ts: L.linalg.multi_dot(ts), *[(s, dtype, i) for i, s in enumerate(shapes)], dtype=dtype)
    agree(lambda L, x, y: L.chain_matmul(x, y), ((3, 4), dtype, 1), ((4, 2), dtype, 2), dtype=dtype)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii", [(4, 4)]), ("ii->i", [(4, 4)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]), ("iij->ij", [(3, 3, 4)]), ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 6)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("i,i,i->i", [(4,), (4,), (4,)]), ("...->...", [(2, 3)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]), ("ba,ab", [(3, 4), (4, 3)]), ("...i,...i->...", [(1, 3, 4), (2, 1, 4)]),
    ("Aa,aB->AB", [(2, 3), (3, 4)]), ("ijj,jk->ik", [(2, 3, 3), (3, 4)]), ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,kj->", [(3, 4), (5, 4)]), ("ij,jk->ik", [(0, 4), (4, 5)]), ("ij,jk->ik", [(3, 0), (0, 5)]),
    # errors
    ("ij,jk->ik", [(3, 4), (5, 6)]), ("ij->ik", [(3, 4)]), ("ij->ii", [(3, 4)]), ("ijk", [(3, 4)]),
    ("ij,jk", [(3, 4)]), ("ij", [(3, 4), (4, 5)]), ("i.j", [(3, 4)]), ("i$", [(3, 4)]), ("ii", [(3, 4)]),
    ("...i...", [(3, 4)]), ("ijkl", [(3, 4)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_einsum(eq, shapes, dtype):
    agree(lambda L, *ts: L.einsum(eq, *ts), *[(s, dtype, i) for i, s in enumerate(shapes)], dtype=dtype)
    if len(shapes) == 2:
        agree(lambda L, *ts: L.einsum(eq, list(ts)), *[(s, dtype, i) for i, s in enumerate(shapes)], dtype=dtype)


def test_einsum_sublist_and_views():
    agree(lambda L, a, b: L.einsum(a, [0, 1], b, [1, 2], [0, 2]), ((3, 4), "float32", 1), ((4, 5), "float32", 2))
    agree(lambda L, a: L.einsum(a, [Ellipsis, 0, 0], [Ellipsis, 0]), ((2, 3, 3), "float32", 1))
    ma, ta = pair((3, 4), "float32", 1)
    assert mt.einsum("ij->ji", ma).stride() == torch.einsum("ij->ji", ta).stride()  # a view, as in PyTorch


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bfloat16"])
def test_cross(dtype):
    agree(lambda L, a, b: L.linalg.cross(a, b), ((4, 3), dtype, 1), ((4, 3), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.linalg.cross(a, b, dim=0), ((3, 2), dtype, 1), ((3, 1), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.cross(a, b, dim=1), ((2, 3, 4), dtype, 1), ((2, 3, 4), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.linalg.cross(a.transpose(0, 1), b.transpose(0, 1), dim=0), ((4, 3), dtype, 1),
          ((4, 3), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.linalg.cross(a, b), ((4, 4), dtype, 1), ((4, 4), dtype, 2), dtype=dtype)
    agree(lambda L, a, b: L.linalg.cross(a, b), ((4, 3), dtype, 1), ((3,), dtype, 2), dtype=dtype)


LINALG_ERRORS = [
    lambda L: L.addmv(L.ones(3), L.ones(3, 4), L.ones(5)),
    lambda L: L.addmv(L.ones(2), L.ones(3, 4), L.ones(4)),
    lambda L: L.addmv(L.ones(3), L.ones(3, 4), L.ones(4, dtype=L.float64)),
    lambda L: L.addmv(L.ones(3), L.ones(4), L.ones(4)),
    lambda L: L.addr(L.ones(3, 4), L.ones(3, 4), L.ones(4)),
    lambda L: L.addr(L.ones(3, 4), L.ones(3), L.ones(3, 4)),
    lambda L: L.addr(L.ones(3, 4), L.ones(4), L.ones(3)),
    lambda L: L.addbmm(L.ones(3, 5), L.ones(2, 3, 4), L.ones(3, 4, 5)),
    lambda L: L.addbmm(L.ones(3, 5), L.ones(2, 3, 4), L.ones(2, 3, 4)),
    lambda L: L.vdot(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.vdot(L.ones(3, 2), L.ones(3, 2)),
    lambda L: L.vdot(L.ones(3), L.ones(4)),
    lambda L: L.outer(L.ones(3, 2), L.ones(3)),
    lambda L: L.inner(L.ones(3, 4), L.ones(3)),
    lambda L: L.tensordot(L.ones(3, 4), L.ones(2, 3, 4), dims=1),
    lambda L: L.tensordot(L.ones(3, 4), L.ones(2, 3, 4), dims=([0], [1, 2])),
    lambda L: L.tensordot(L.ones(3, 4), L.ones(4, dtype=L.int32), dims=1),
    lambda L: L.tensordot(L.ones(3, 4), L.ones(4), dims=-1),
    # a repeated dim (after the size checks, a's list first); a list longer than MT_MAX_DIMS read past the
    # kernel's arrays (found by the C fuzzer)
    lambda L: L.tensordot(L.ones(4, 4, 4), L.ones(4, 4, 4), dims=([0, 1], [2, 2])),
    lambda L: L.tensordot(L.ones(4, 1, 4), L.ones(4, 4, 4), dims=([1, 1], [0, 1])),
    lambda L: L.tensordot(L.ones(2, 3, 4), L.ones(2, 3, 4), dims=([0, 1], [2, 2])),
    lambda L: L.tensordot(L.ones(2, 2), L.ones(2, 2), dims=([0, 1] * 20, [0, 1] * 20)),
    lambda L: L.linalg.multi_dot([L.ones(3, 4)]),
    lambda L: L.linalg.multi_dot([L.ones(3), L.ones(3, 4, 5)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 3, 4), L.ones(4)]),
    lambda L: L.linalg.multi_dot([L.ones(3), L.ones(3, 4, 2), L.ones(2)]),
    lambda L: L.linalg.multi_dot([L.ones(3, 4), L.ones(4, dtype=L.float64)]),
    lambda L: L.linalg.cross(L.ones(3, 2), L.ones(3, 2, dtype=L.float64), dim=0),
    lambda L: L.linalg.cross(L.ones(3, 3), L.ones(3)),
    lambda L: L.bmm(L.ones(2, 3, 4), L.ones(2, 4, 5, dtype=L.float64)),
    lambda L: L.bmm(L.ones(2, 3, 4, dtype=L.bool), L.ones(2, 4, 5, dtype=L.bool)),
    lambda L: L.mm(L.ones(3, 4), L.ones(3, 4, dtype=L.float64)),
    lambda L: L.mm(L.ones(3, 4), L.ones(4, 5, dtype=L.float64)),
    lambda L: L.bmm(L.ones(2, 3, 4), L.ones(3, 4, 5)),
    lambda L: L.dot(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
    lambda L: L.baddbmm(L.ones(3, 3, 5), L.ones(2, 3, 4), L.ones(2, 4, 5)),
]


@pytest.mark.parametrize("i", range(len(LINALG_ERRORS)))
def test_linalg_error_texts(i):
    agree(lambda L: LINALG_ERRORS[i](L))


@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("k", [7, 520])
def test_sgemm_one_row_bits_equal_a_bigger_products_row(tb, k):
    # M = 1 (a Linear on one token) reads B in place instead of packing it, and still gives each element
    # the packed kernel's sums in its order: a row alone equals the same row of a 30-row product bit for
    # bit, with alpha/beta, past kc blocks (520 = 2 x 260) and ragged column tiles, at 1 and 2 threads
    rng = np.random.default_rng(k)
    n = 1000
    a, b, c = rng.standard_normal((30, k)), rng.standard_normal((k, n)), rng.standard_normal((30, n))
    x, z = mt.tensor(a).float(), mt.tensor(c).float()
    y = mt.tensor(b.T.copy()).float().t() if tb else mt.tensor(b).float()
    prev = mt.get_num_threads()
    try:
        for threads in (1, 2):
            mt.set_num_threads(threads)
            whole = mt.addmm(z, x, y, beta=0.5, alpha=1.5).numpy()
            for r in (0, 17):
                row = mt.addmm(z[r:r + 1], x[r:r + 1], y, beta=0.5, alpha=1.5).numpy()
                if _own_sgemm():
                    assert (row[0] == whole[r]).all()
                np.testing.assert_allclose(row[0], 0.5 * c[r] + 1.5 * (a[r] @ b), rtol=1e-4, atol=1e-3)
            lin = mt.nn.functional.linear(x[3:4], y.t()).numpy()  # Linear's transposed weight, beta 0
            np.testing.assert_allclose(lin[0], a[3] @ b, rtol=1e-4, atol=1e-3)
            if _own_sgemm():
                assert (lin[0] == (x @ y).numpy()[3]).all()
    finally:
        mt.set_num_threads(prev)


def test_tensordot_past_the_rank_limit():
    # 13 + 13 free dims: mindtorch_v2's tensors have at most 25 dims, so this raises where PyTorch returns
    # a 26-dim result (found by the C fuzzer: the kernel wrote the 26th size past its arrays)
    a = mt.ones(*([1] * 13))
    with pytest.raises(RuntimeError, match="tensors with more than 25 dimensions are not supported"):
        mt.tensordot(a, a, dims=0)
    assert mt.tensordot(a, mt.ones(*([1] * 12)), dims=0).dim() == 25


@pytest.mark.parametrize("dims", [3, 2 ** 63 - 1])
def test_tensordot_dims_past_the_ranks(dims):
    # refused before the dim lists are built (a huge dims exhausted memory)
    from mtdiff import same
    same(lambda: mt.tensordot(mt.ones(2, 3), mt.ones(3, 2), dims),
         lambda: torch.tensordot(torch.ones(2, 3), torch.ones(3, 2), dims))
