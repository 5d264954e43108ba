"""The fast paths of the performance push against PyTorch: float32 in-place folds of norm and
logsumexp (several blocks per row, special values), contiguous index_select (every dim and
dtype), vectorised contiguous casts."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def both(a):
    return mt.from_numpy(a.copy()), torch.from_numpy(a.copy())


def close(m, t, rtol=1e-6, atol=0.0):
    assert str(m.dtype) == str(t.dtype)
    assert tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.array(m.float().tolist() if m.dtype != mt.float64 else m.tolist()),
                               t.double().numpy(), rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((6, 9000)) * 3).astype(np.float32)  # rows of 3 blocks (4096 each)
    a[1, 5] = np.nan
    a[2, :] = -np.inf
    a[3, 7000] = np.inf
    a[4, 17] = -np.inf
    return a


@pytest.mark.parametrize("p", [1, 2, 3, 0, float("inf")])
@pytest.mark.parametrize("dim", [1, -1, 0])
def test_norm_f32(rows, p, dim):
    m, t = both(rows)
    close(m.norm(p=p, dim=dim), t.norm(p=p, dim=dim), rtol=2e-6)
    close(mt.linalg.vector_norm(m[:, 1:], ord=p, dim=dim), torch.linalg.vector_norm(t[:, 1:], ord=p, dim=dim), rtol=2e-6)


def test_norm_f32_short_and_empty_rows():
    m, t = both(np.arange(-10, 27, dtype=np.float32).reshape(37, 1) * np.ones((1, 5), np.float32))
    close(m.norm(dim=1), t.norm(dim=1))
    close(m.norm(p=1, dim=0), t.norm(p=1, dim=0))
    m, t = both(np.zeros((3, 0), np.float32))
    close(m.norm(dim=1), t.norm(dim=1))


@pytest.mark.parametrize("dim", [1, 0, (0, 1)])
def test_logsumexp_f32(rows, dim):
    m, t = both(rows)
    # PyTorch sums in float32, mindtorch_v2 in double: results near 0 differ by float32 rounding
    close(m.logsumexp(dim), t.logsumexp(dim), rtol=2e-6, atol=1e-6)
    close(m[:, ::2].logsumexp(dim), t[:, ::2].logsumexp(dim), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int64"])
def test_logsumexp_other_dtypes(dtype):
    a = np.arange(-300, 300, dtype=np.float64).reshape(6, 100) / 7
    m, t = mt.tensor(a.tolist()), torch.tensor(a.tolist())
    if dtype == "int64":
        m, t = (m * 7).to(mt.int64), (t * 7).to(torch.int64)
    else:
        m, t = m.to(getattr(mt, dtype)), t.to(getattr(torch, dtype))
    close(m.logsumexp(1), t.logsumexp(1), rtol=1e-2 if "16" in dtype else 1e-6)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "float16", "float32", "int64", "float64"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select_contiguous(dtype, dim):
    a = np.arange(4 * 50 * 300).reshape(4, 50, 300) % 97
    m, t = mt.tensor(a.tolist()).to(getattr(mt, dtype)), torch.tensor(a.tolist()).to(getattr(torch, dtype))
    size = a.shape[dim]
    for idx in ([size - 1, 0, 3, 3, 1], list(range(0, size, 2)), [], [2]):
        for it in ("int64", "int32"):
            mi, ti = mt.tensor(idx, dtype=getattr(mt, it)), torch.tensor(idx, dtype=getattr(torch, it))
            r, e = m.index_select(dim, mi), t.index_select(dim, ti)
            assert tuple(r.shape) == tuple(e.shape) and str(r.dtype) == str(e.dtype)
            assert r.tolist() == e.tolist()
    mi, ti = mt.tensor([3, 1, 0, 2]), torch.tensor([3, 1, 0, 2])
    assert m.index_select(dim, mi[::2]).tolist() == t.index_select(dim, ti[::2]).tolist()


def test_index_select_big_parallel():
    m, t = mt.arange(1024 * 1024.0).view(1024, 1024), torch.arange(1024 * 1024.0).view(1024, 1024)
    i = [1023, 5, 0] * 100
    for dim in (0, 1):
        assert m.index_select(dim, mt.tensor(i)).tolist() == t.index_select(dim, torch.tensor(i)).tolist()


@pytest.mark.parametrize("src", ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("dst", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                                 "float64"])
def test_contiguous_casts(src, dst):
    a = (np.arange(-600, 600) * 0.75).tolist() + [1e10, -1e10, float("inf"), float("nan"), 65504.0, 70000.0]
    m, t = mt.tensor(a).to(getattr(mt, src)), torch.tensor(a).to(getattr(torch, src))
    r, e = m.to(getattr(mt, dst)), t.to(getattr(torch, dst))
    np.testing.assert_array_equal(np.array(r.double().tolist()), e.double().numpy())


# ---- bfloat16 GEMM (AMX where the CPU has it, float32 GEMM otherwise) -------------------

def _bf16_pair(shape, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g).bfloat16()
    return mt.tensor(t.float().tolist()).bfloat16(), t


def _close_bf16(m, t):
    """Same rounding as PyTorch; the float32 sums may differ in order: at most 1 bf16 ulp apart."""
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    r, e = torch.tensor(m.float().tolist()), t.float()
    assert torch.allclose(r, e, rtol=2 ** -7, atol=1e-5), (r - e).abs().max()
    assert (r != e).float().mean() < 0.01


@pytest.mark.parametrize("m,k,n", [(32, 32, 32), (5, 7, 3), (33, 40, 17), (100, 64, 130), (128, 768, 300),
                                   (64, 1000, 48), (200, 31, 129)])
def test_bf16_mm(m, k, n):
    a, ta = _bf16_pair((m, k), 0)
    b, tb = _bf16_pair((k, n), 1)
    _close_bf16(a @ b, ta @ tb)
    _close_bf16(b.t() @ a.t(), tb.t() @ ta.t())  # transposed operands
    _close_bf16(a[:, ::2] @ b[::2], ta[:, ::2] @ tb[::2])  # strided operands


def test_bf16_addmm_bmm_linear_out():
    a, ta = _bf16_pair((70, 96), 0)
    b, tb = _bf16_pair((96, 50), 1)
    c, tc = _bf16_pair((70, 50), 2)
    _close_bf16(mt.addmm(c, a, b, beta=0.5, alpha=2.0), torch.addmm(tc, ta, tb, beta=0.5, alpha=2.0))
    _close_bf16(mt.addmm(c, a, b), torch.addmm(tc, ta, tb))
    x, tx = _bf16_pair((3, 40, 64), 3)
    y, ty = _bf16_pair((3, 64, 72), 4)
    _close_bf16(mt.bmm(x, y), torch.bmm(tx, ty))
    _close_bf16(x @ y[0], tx @ ty[0])
    w, tw = _bf16_pair((72, 64), 5)
    _close_bf16(mt.nn.functional.linear(x, w), torch.nn.functional.linear(tx, tw))
    out, tout = mt.empty(50, 70, dtype=mt.bfloat16), torch.empty(50, 70, dtype=torch.bfloat16)
    mt.mm(a, b, out=out.t()), torch.mm(ta, tb, out=tout.t())  # a transposed output
    _close_bf16(out, tout)


def test_bf16_mm_special_values():
    a = mt.tensor([[float("nan"), 1.0] * 32, [float("inf"), 2.0] * 32] * 16).bfloat16()
    ta = torch.tensor(a.float().tolist()).bfloat16()
    b, tb = mt.ones(64, 40).bfloat16(), torch.ones(64, 40).bfloat16()
    r, e = torch.tensor((a @ b).float().tolist()), (ta @ tb).float()
    assert torch.equal(r.isnan(), e.isnan()) and torch.equal(r[~r.isnan()], e[~e.isnan()])


# ---- indexing fast paths (one handle walk for ints/slices/None/Ellipsis, x[idx] as one gather) ----

@pytest.mark.parametrize("index", [
    (slice(None), 1), (1, 2), (slice(1, 5), slice(None, None, 2), None), (Ellipsis, 1), (None, Ellipsis, None),
    (-1, slice(-3, None)), (slice(None), slice(None)), (slice(10, 20),), (Ellipsis,), (1, Ellipsis, 2),
    (Ellipsis, Ellipsis)])
def test_basic_index_tuples(index):
    m, t = mt.arange(48.0).view(6, 8), torch.arange(48.0).view(6, 8)
    r, e = m[index], t[index]
    assert tuple(r.shape) == tuple(e.shape) and r.tolist() == e.tolist()
    assert tuple(r.stride()) == tuple(e.stride()) and r.storage_offset() == e.storage_offset()


@pytest.mark.parametrize("index", [(6, 0), (0, 8), (1, 2, 3), (slice(None, None, -1),), (slice(None, None, 0), 1),
                                   (slice(1.5, 2),), (0, slice(None, 2.0))])
def test_basic_index_errors(index):
    m, t = mt.arange(48.0).view(6, 8), torch.arange(48.0).view(6, 8)
    with pytest.raises(Exception) as e:
        t[index]
    with pytest.raises(type(e.value)) as r:
        m[index]
    assert str(r.value) == str(e.value)


def test_tensor_index_fast_path():
    m, t = mt.arange(48.0).view(6, 8), torch.arange(48.0).view(6, 8)
    for idx in ([0, 5, -1, 2], [[1, 2], [3, 4]]):
        for dt in ("int64", "int32"):
            r, e = m[mt.tensor(idx, dtype=getattr(mt, dt))], t[torch.tensor(idx, dtype=getattr(torch, dt))]
            assert r.tolist() == e.tolist()
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        m[mt.tensor([6])]
    x = mt.arange(6.0, requires_grad=True)
    x[mt.tensor([1, 1, 4])].sum().backward()
    assert x.grad.tolist() == [0, 2, 0, 0, 1, 0]


# ---- sums: vectorised contiguous leaves, one long sum split across threads (bit-identical) ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_long_sum_split_matches_one_thread(dtype):
    x = np.random.default_rng(0).standard_normal(3_000_017).astype(np.float32)
    m, t = mt.from_numpy(x).to(getattr(mt, dtype)), torch.from_numpy(x).to(getattr(torch, dtype))
    n = mt.get_num_threads()
    try:
        mt.set_num_threads(1)
        one = [m.sum().item(), m.mean().item(), m.nansum().item()]
        for nt in (2, 3, 5):  # 3 and 5 threads split the tree deeper (four ranges per thread)
            mt.set_num_threads(nt)
            assert [m.sum().item(), m.mean().item(), m.nansum().item()] == one
    finally:
        mt.set_num_threads(n)
    tol = 2e-2 if "16" in dtype else 1e-4
    np.testing.assert_allclose(one[0], t.sum().item(), rtol=tol, atol=tol)
    np.testing.assert_allclose(one[1], t.mean().item(), rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [1, 7, 31, 32, 33, 1000, 1024, 1025, 5000])
def test_contiguous_sum_lengths(n):
    x = (np.arange(n * 3) % 13 - 6).astype(np.float32).reshape(3, n) / 8  # exact sums
    m, t = both(x)
    assert m.sum(1).tolist() == t.sum(1).tolist()
    assert m.sum().item() == t.sum().item()
    x = np.full((2, n), np.nan, np.float32)
    m, t = both(x)
    assert np.isnan(m.sum(1).tolist()).all() and m.nansum(1).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(23, 3001), (5, 256), (3, 300_007)])
def test_row_sums_in_streams_match_each_row_alone(dtype, shape):
    """Rows are summed four parts of a thread's rows at a time, a leaf of each in turn (reduce.c's
    sum_streams); every row must still be its own pairwise sum, whatever the thread count."""
    x = (np.random.default_rng(1).standard_normal(shape) * 100).astype(np.float32)
    x[1, 7] = np.nan
    m = mt.from_numpy(x).to(getattr(mt, dtype))
    n = mt.get_num_threads()
    try:
        for nt in (1, 2, 3):
            mt.set_num_threads(nt)
            for op in ("sum", "mean", "nansum"):
                rows = getattr(m, op)(-1).float().tolist()
                alone = [getattr(m[i], op)().float().item() for i in range(shape[0])]
                np.testing.assert_array_equal(rows, alone)
    finally:
        mt.set_num_threads(n)
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    tol = 2e-2 if "16" in dtype else 1e-5
    close(m.nansum(-1), t.nansum(-1), rtol=tol, atol=tol * 100)


@pytest.mark.parametrize("p", [1, 2])
def test_norm_f32_blocks_in_streams_match_each_row_alone(rows, p):
    """float32 norm folds four blocks far apart in turn (reduce_stats.c); each row's value must be
    the one it has alone, for rows of unequal blocks (9000 = 4096 + 4096 + 808) and any thread count."""
    m = mt.from_numpy(np.concatenate([rows, rows[::-1] * 0.5]))
    n = mt.get_num_threads()
    try:
        for nt in (1, 2, 3):
            mt.set_num_threads(nt)
            got = m.norm(p=p, dim=1).tolist()
            alone = [m[i].norm(p=p).item() for i in range(m.shape[0])]
            np.testing.assert_array_equal(got, alone)
    finally:
        mt.set_num_threads(n)


def test_bf16_mm_out_aliasing_an_input():
    a, ta = _bf16_pair((64, 64), 0)
    b, tb = _bf16_pair((64, 64), 1)
    expect = ta @ tb
    mt.mm(a, b, out=b)
    _close_bf16(b, expect)


@pytest.mark.parametrize("shape", [(5,), (4, 6), (2, 3, 5), (3, 0, 2), (1, 1, 7)])
def test_mask_index_positions(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    mask = (x.astype(np.int64) % 3) != 1
    m, t = both(x)
    mm, tm = mt.from_numpy(mask.copy()), torch.from_numpy(mask.copy())
    assert m[mm].tolist() == t[tm].tolist()
    if len(shape) > 1:  # a mask over the leading dims
        assert m[mm[..., 0]].tolist() == t[tm[..., 0]].tolist()
