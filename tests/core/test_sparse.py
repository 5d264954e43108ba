"""torch.sparse against live PyTorch 2.13: COO/CSR construction, conversions, printing, ops (values, result
layouts, nnz and coalesced flags), gradients (sparse ones compared as dense), errors (type and text),
nn.Embedding(sparse=True) with SGD and SparseAdam, and save/load."""
import io
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse (invariant|CSR)")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # uncoalesced: (0, 2) twice
VAL = [3.0, 4.0, 5.0, -1.5, 2.0]
SIZE = (3, 3)


def coo(L, dtype="float32", idx=IDX, val=VAL, size=SIZE, **kw):
    return L.sparse_coo_tensor(L.tensor(idx), L.tensor(val, dtype=getattr(L, dtype)), size, **kw)


def dense(L, shape, seed=0, dtype="float32"):
    a = np.random.default_rng(seed).integers(-8, 9, int(np.prod(shape))) / 4.0
    return L.tensor(a.tolist(), dtype=getattr(L, dtype)).reshape(shape)


def same(a, b, exact_nnz=True, flags=True):
    """Layouts, dtypes and (for sparse results) nnz and coalesced flags equal; values equal as dense.
    flags=False: a sparse gradient, whose coalesced flag here is its leaf's (PyTorch's depends on the op)."""
    assert str(a.layout) == str(b.layout), (a.layout, b.layout)
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    if b.layout == torch.sparse_coo and flags:
        assert a.is_coalesced() == b.is_coalesced()
        if exact_nnz:
            assert a._nnz() == b._nnz()
        if b.is_coalesced() and a.is_coalesced():
            assert a.indices().tolist() == b.indices().tolist()
    if b.layout == torch.sparse_csr:
        assert a.crow_indices().tolist() == b.crow_indices().tolist()
        assert a.col_indices().tolist() == b.col_indices().tolist()
    da = a.to_dense() if b.layout != torch.strided else a
    db = b.to_dense() if b.layout != torch.strided else b
    np.testing.assert_allclose(np.array(da.detach().tolist()), np.array(db.detach().tolist()), rtol=1e-6, atol=1e-6)


def both(fn, exact_nnz=True):
    same(fn(mt), fn(torch), exact_nnz)


def raises_same(fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(mt)
    t = str(theirs.value)
    if t.startswith("Could not run"):  # PyTorch's text then lists its registered backends
        t = t.split(" This could be")[0]
    assert str(ours.value).startswith(t), (str(ours.value), t)


# ---- construction, metadata, conversions ------------------------------------------------------

def test_metadata():
    s, r = coo(mt), coo(torch)
    assert isinstance(s, mt.Tensor)
    for name in ("is_sparse", "is_sparse_csr", "requires_grad", "is_leaf"):
        assert getattr(s, name) == getattr(r, name), name
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.is_coalesced(), s.numel(), s.dim()) == \
        (r.sparse_dim(), r.dense_dim(), r._nnz(), r.is_coalesced(), r.numel(), r.dim())
    assert str(s.layout) == "torch.sparse_coo" and mt.sparse_coo is s.layout
    assert s.stride() == r.stride() and str(s.device) == str(r.device)
    c, rc = s.to_sparse_csr(), r.to_sparse_csr()
    assert (c.is_sparse, c.is_sparse_csr, c._nnz(), str(c.layout)) == (rc.is_sparse, rc.is_sparse_csr, rc._nnz(),
                                                                        str(rc.layout))
    d = dense(mt, (2, 3))
    assert (d.is_sparse, d.is_sparse_csr, d.sparse_dim(), d.dense_dim()) == (False, False, 0, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_coalesce_and_conversions(dtype):
    both(lambda L: coo(L, dtype))
    both(lambda L: coo(L, dtype).coalesce())
    both(lambda L: coo(L, dtype).to_dense())
    both(lambda L: coo(L, dtype).to_sparse_csr())
    both(lambda L: coo(L, dtype).to_sparse_csr().to_dense())
    both(lambda L: coo(L, dtype).to_sparse_csr().to_sparse())
    both(lambda L: coo(L, dtype).to_dense().to_sparse())
    both(lambda L: coo(L, dtype).to_dense().to_sparse_csr())
    both(lambda L: coo(L, dtype).to_dense().to_sparse(layout=L.sparse_csr))
    both(lambda L: coo(L, dtype, is_coalesced=True, idx=[[0, 1], [1, 0]], val=[1, 2]))
    s, r = coo(mt, dtype).coalesce(), coo(torch, dtype).coalesce()
    assert s.indices().tolist() == r.indices().tolist() and s.values().tolist() == r.values().tolist()


def test_hybrid_and_empty():
    both(lambda L: L.sparse_coo_tensor(L.tensor([[0, 2, 0]]), dense(L, (3, 2)), (3, 2)))
    both(lambda L: L.sparse_coo_tensor(L.tensor([[0, 2, 0]]), dense(L, (3, 2)), (3, 2)).coalesce())
    both(lambda L: L.sparse_coo_tensor(L.tensor([[0, 2, 0]]), dense(L, (3, 2)), (3, 2)).to_dense())
    both(lambda L: dense(L, (4, 3)).to_sparse(1))
    both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 3)))
    both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 3)).coalesce())
    both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 3)).to_dense())
    both(lambda L: L.sparse_coo_tensor(L.tensor([[0, 4], [1, 0]]), L.tensor([1.0, 2.0])))  # size inferred
    both(lambda L: L.zeros(2, 3).to_sparse())
    both(lambda L: L.sparse_csr_tensor(L.tensor([0, 1, 3]), L.tensor([2, 0, 2]), L.tensor([3.0, 4.0, 5.0]), (2, 3)))
    both(lambda L: L.sparse_csr_tensor([0, 1, 3], [2, 0, 2], [3.0, 4.0, 5.0]))


def test_printing():
    cases = [lambda L: coo(L), lambda L: coo(L, "float64"), lambda L: coo(L, "int64"),
             lambda L: coo(L).requires_grad_(), lambda L: coo(L).coalesce().to_sparse_csr(),
             lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 3)),
             lambda L: L.sparse_coo_tensor(L.tensor([[0, 2, 0]]), dense(L, (3, 2)), (3, 2))]
    for fn in cases:
        assert repr(fn(mt)) == repr(fn(torch))


def test_save_load():
    buf = io.BytesIO()
    mt.save({"s": coo(mt), "c": coo(mt).coalesce()}, buf)
    buf.seek(0)
    got = mt.load(buf)
    same(got["s"], coo(torch))
    same(got["c"], coo(torch).coalesce())


# ---- ops -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul(dtype):
    d = lambda L: dense(L, (3, 4), 1, dtype)  # noqa: E731
    both(lambda L: L.sparse.mm(coo(L, dtype), d(L)))
    both(lambda L: L.mm(coo(L, dtype), d(L)))
    both(lambda L: L.matmul(coo(L, dtype), d(L)))
    both(lambda L: coo(L, dtype) @ d(L))
    both(lambda L: coo(L, dtype) @ dense(L, (4, 3), 2, dtype).t())  # non-contiguous dense operand
    both(lambda L: coo(L, dtype).to_sparse_csr() @ d(L))
    both(lambda L: dense(L, (2, 3), 3, dtype) @ coo(L, dtype))
    both(lambda L: L.sparse.mm(coo(L, dtype), coo(L, dtype).t()))
    both(lambda L: L.sparse.addmm(dense(L, (3, 4), 5, dtype), coo(L, dtype), d(L), beta=2, alpha=3))
    both(lambda L: L.addmm(dense(L, (3, 4), 5, dtype), coo(L, dtype), d(L)))
    both(lambda L: L.sparse.mm(L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0, dtype=getattr(L, dtype)),
                                                   (3, 3)), d(L)))


def test_sum_softmax():
    both(lambda L: L.sparse.sum(coo(L)))
    for dim in (0, 1, (0, 1), -1):
        both(lambda L: L.sparse.sum(coo(L), dim))
    both(lambda L: coo(L).sum())
    both(lambda L: L.sparse.sum(L.sparse_coo_tensor(L.tensor([[0, 2, 0]]), dense(L, (3, 2)), (3, 2)), 1))
    for dim in (0, 1, -1):
        both(lambda L: L.sparse.softmax(coo(L), dim))
        both(lambda L: L.sparse.log_softmax(coo(L), dim))
    both(lambda L: L.sparse.softmax(coo(L), 1, dtype=L.float64))


def test_elementwise():
    d = lambda L: dense(L, SIZE, 7)  # noqa: E731
    other = lambda L: coo(L, idx=[[2, 0], [1, 1]], val=[1.0, 6.0])  # noqa: E731
    both(lambda L: coo(L) + coo(L))
    both(lambda L: coo(L) + other(L))
    both(lambda L: coo(L).coalesce() + other(L).coalesce())
    both(lambda L: coo(L) - other(L))
    both(lambda L: L.add(coo(L), other(L), alpha=2))
    both(lambda L: d(L) + coo(L))
    both(lambda L: d(L).t() + coo(L))  # non-contiguous dense
    both(lambda L: d(L) - coo(L))
    both(lambda L: coo(L) * 2)
    both(lambda L: 2.5 * coo(L))
    both(lambda L: coo(L) / 2)
    both(lambda L: coo(L) * d(L))
    both(lambda L: d(L) * coo(L))
    both(lambda L: coo(L).coalesce() * other(L).coalesce())
    both(lambda L: coo(L, "int64") + coo(L))
    for name in ("neg", "abs", "sqrt", "sin", "tanh", "square", "relu", "floor", "sign", "expm1", "log1p"):
        both(lambda L: getattr(coo(L).abs() if name in ("sqrt", "log1p") else coo(L), name)())
    both(lambda L: -coo(L))
    both(lambda L: L.abs(coo(L)))
    both(lambda L: coo(L).coalesce().sin_())
    both(lambda L: coo(L).t())
    both(lambda L: coo(L).transpose(0, 1))
    both(lambda L: coo(L).narrow_copy(1, 1, 2))
    both(lambda L: coo(L).index_select(0, L.tensor([2, 0, 2])))
    both(lambda L: coo(L)[1])
    both(lambda L: coo(L).sparse_mask(coo(L)) if L is mt else coo(L).sparse_mask(coo(L)))
    both(lambda L: d(L).sparse_mask(coo(L).coalesce()))


def test_inplace():
    def f(L):
        x = d = dense(L, SIZE, 3).t()
        x.add_(coo(L), alpha=-0.5)
        return d
    both(f)

    def g(L):
        s = coo(L).coalesce()
        s.mul_(3)
        s.add_(coo(L))
        return s
    both(g, exact_nnz=False)


def test_spdiags_and_invariants():
    both(lambda L: L.sparse.spdiags(L.tensor([[1.0, 2, 3], [4, 5, 6]]), L.tensor([0, -1]), (3, 3)))
    both(lambda L: L.sparse.spdiags(L.arange(1.0, 9).view(2, 4), L.tensor([1, -1]), (3, 4)))
    both(lambda L: L.sparse.spdiags(L.ones(2, 3), L.tensor([0, 1]), (3, 3), layout=L.sparse_csr))
    assert mt.sparse.check_sparse_tensor_invariants.is_enabled() is False
    with mt.sparse.check_sparse_tensor_invariants():
        assert mt.sparse.check_sparse_tensor_invariants.is_enabled()
        with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
            coo(mt, idx=[[-1], [0]], val=[1.0])
    assert not mt.sparse.check_sparse_tensor_invariants.is_enabled()


def test_errors():
    raises_same(lambda L: coo(L).view(9))
    raises_same(lambda L: coo(L).exp())
    raises_same(lambda L: coo(L).reshape(9))
    raises_same(lambda L: coo(L).data_ptr())
    raises_same(lambda L: coo(L).values())
    raises_same(lambda L: coo(L).indices())
    raises_same(lambda L: coo(L).crow_indices())
    raises_same(lambda L: coo(L).to_sparse_csr().indices())
    raises_same(lambda L: coo(L).to_sparse_csr().stride())
    raises_same(lambda L: coo(L) + dense(L, SIZE))
    raises_same(lambda L: coo(L).sin_())
    raises_same(lambda L: L.sparse.mm(coo(L), dense(L, (3, 2), dtype="float64")))
    raises_same(lambda L: L.sparse.mm(coo(L), dense(L, (2, 2))))
    raises_same(lambda L: coo(L, val=VAL[:3]))
    raises_same(lambda L: coo(L, size=(3,)))
    raises_same(lambda L: coo(L, size=(1, 3), check_invariants=True))
    raises_same(lambda L: coo(L, idx=[[0, -1], [0, 0]], val=[1.0, 2.0], check_invariants=True))
    raises_same(lambda L: L.sparse_csr_tensor([0, 1, 4], [2, 0, 2], [3.0, 4.0, 5.0], (2, 3), check_invariants=True))
    raises_same(lambda L: L.sparse.spdiags(L.ones(2, 3), L.tensor([0, 0]), (3, 3)))
    for name in ("indices", "values", "coalesce", "is_coalesced", "crow_indices", "_nnz", "_values"):
        raises_same(lambda L: getattr(dense(L, SIZE), name)())


# ---- autograd -------------------------------------------------------------------------------

def _grad_pair(fn):
    """fn(L) builds a leaf and a loss; their gradients compared (a sparse one as dense, with its layout)."""
    (a, la), (b, lb) = fn(mt), fn(torch)
    la.backward()
    lb.backward()
    same(a.grad, b.grad, flags=False)


def test_gradients():
    w = lambda L: dense(L, (3, 4), 9)  # noqa: E731
    _grad_pair(lambda L: (s := coo(L).coalesce().requires_grad_(), (L.sparse.mm(s, w(L)) * w(L)[:, :1]).sum()))
    # (a coalesced leaf: PyTorch's to_dense backward masks by the coalesced pattern, ours is per entry)
    _grad_pair(lambda L: (s := coo(L).coalesce().requires_grad_(), (s.to_dense() * dense(L, SIZE, 4)).sum()))
    _grad_pair(lambda L: (s := coo(L).coalesce().requires_grad_(), (s.values() * 2).sum()))
    _grad_pair(lambda L: (x := dense(L, SIZE, 5).requires_grad_(), (x.to_sparse().to_dense() * 3).sum()))
    _grad_pair(lambda L: (d := w(L).requires_grad_(), (L.sparse.mm(coo(L), d) ** 2).sum()))
    _grad_pair(lambda L: (v := L.tensor(VAL).requires_grad_(),
                          (L.sparse_coo_tensor(L.tensor(IDX), v, SIZE).to_dense() * dense(L, SIZE, 6)).sum()))
    _grad_pair(lambda L: (v := L.tensor(VAL).requires_grad_(),
                          L.sparse.sum(L.sparse.softmax(L.sparse_coo_tensor(L.tensor(IDX), v, SIZE), 1)
                                       * dense(L, SIZE, 6))))
    s = coo(mt).requires_grad_()
    assert not mt.sparse_coo_tensor(mt.tensor(IDX), mt.tensor(VAL).requires_grad_(), SIZE).is_leaf and s.is_leaf


@pytest.mark.parametrize("opt", ["SGD", "SparseAdam"])
def test_embedding_sparse(opt):
    results = []
    for L in (mt, torch):
        L.manual_seed(0)
        emb = L.nn.Embedding(6, 3, sparse=True, padding_idx=5)
        with L.no_grad():
            emb.weight.copy_(dense(L, (6, 3), 11))
        o = getattr(L.optim, opt)(emb.parameters(), lr=0.1)
        for step in range(3):
            o.zero_grad()
            out = emb(L.tensor([[1, 3, 5], [1, 0, step]]))
            (out * dense(L, (2, 3, 3), 12 + step)).sum().backward()
            grad = emb.weight.grad
            o.step()
        results.append((grad, emb.weight.detach()))
    same(results[0][0], results[1][0])
    np.testing.assert_allclose(np.array(results[0][1].tolist()), np.array(results[1][1].tolist()), rtol=1e-5,
                               atol=1e-6)


def test_indices_and_values_copy():
    """torch.indices_copy/values_copy: PyTorch 2.13 has no SparseCPU kernel for them (its dispatcher error, whose
    first sentences we give), and a strided input gets indices()/values()'s layout error."""
    torch = pytest.importorskip("torch")
    s = mt.sparse_coo_tensor(mt.tensor([[0, 1], [1, 0]]), mt.tensor([1.0, 2.0]), (2, 2))
    ts = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))
    for name in ("indices_copy", "values_copy"):
        with pytest.raises(NotImplementedError) as ours:
            getattr(mt, name)(s)
        with pytest.raises(NotImplementedError) as theirs:
            getattr(torch, name)(ts)
        assert str(theirs.value).startswith(str(ours.value))
        errors = []
        for lib in (mt, torch):
            with pytest.raises(RuntimeError) as e:
                getattr(lib, name)(lib.ones(2))
            errors.append(str(e.value))
        assert errors[0] == errors[1]


# ---- legacy sparse types, sampled_addmm, as_sparse_gradcheck, CUDA-only entry points ----------

LEGACY = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
          "ShortTensor", "IntTensor", "LongTensor")


def test_legacy_sparse_types():
    for name in LEGACY:
        ours, theirs = getattr(mt.sparse, name), getattr(torch.sparse, name)
        assert repr(ours) == repr(theirs) and str(ours.dtype) == str(theirs.dtype)
        assert (ours.is_sparse, str(ours.layout), ours.is_cuda) == (True, "torch.sparse_coo", False)
        both(lambda L: getattr(L.sparse, name)(2, 3))
    assert not hasattr(mt.sparse, "BoolTensor") and not hasattr(mt.sparse, "ComplexFloatTensor")
    i, v = [[0, 1], [1, 2]], [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor(v), (2, 3)))
        both(lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor(v)))
        both(lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor(v), L.Size([4, 3]), device="cpu"))
        both(lambda L: L.sparse.FloatTensor(indices=L.tensor(i), values=L.tensor(v), size=[2, 3]))
        both(lambda L: L.sparse.LongTensor(L.tensor(i), L.tensor(v), (2, 3)))  # the values' dtype wins
        both(lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor([[1.0, 2.0]] * 2)))  # hybrid
        # indices are not checked against the size (PyTorch's to_dense then reads out of bounds; ours raises)
        assert [tuple(L.sparse.FloatTensor(L.tensor(i), L.tensor(v), (1, 1)).shape) for L in (mt, torch)] == [(1, 1)] * 2
        both(lambda L: L.sparse.HalfTensor())
        both(lambda L: L.sparse.DoubleTensor(L.Size([2, 0])))
        for bad in (lambda L: L.sparse.FloatTensor((2, 3)), lambda L: L.sparse.FloatTensor([2, 3]),
                    lambda L: L.sparse.FloatTensor(2, 3.0), lambda L: L.sparse.FloatTensor(2, -3),
                    lambda L: L.sparse.FloatTensor(2, 3, device="meta"),
                    lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor(v), (2, 3), dtype=L.float64),
                    lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor(v), (2, 3), 5),
                    lambda L: L.sparse.FloatTensor(L.tensor(i).int(), L.tensor(v), (2, 3)),
                    lambda L: L.sparse.FloatTensor(L.tensor(i), L.tensor(v), (2,)),
                    lambda L: L.sparse.FloatTensor(L.tensor(v)), lambda L: L.sparse.FloatTensor("a"),
                    lambda L: L.set_default_tensor_type(L.sparse.FloatTensor)):
            raises_same(bad)
    mt.sparse.FloatTensor(5, 5)  # warns once per form, as PyTorch's TORCH_WARN_ONCE
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mt.sparse.FloatTensor(5, 5)
    assert not w


def test_legacy_type_checks_and_names():
    for L in (mt, torch):
        s, d = coo(L), dense(L, SIZE)
        assert isinstance(s, L.sparse.FloatTensor) and not isinstance(s, L.sparse.DoubleTensor)
        assert not isinstance(s, L.FloatTensor) and isinstance(d, L.FloatTensor)
        assert not isinstance(d, L.sparse.FloatTensor) and not isinstance(s.to_sparse_csr(), L.sparse.FloatTensor)
        assert s.type() == "torch.sparse.FloatTensor" and coo(L, "float64").type() == "torch.sparse.DoubleTensor"
    for conv in (lambda L, x: x.type(L.sparse.DoubleTensor), lambda L, x: x.type("torch.sparse.IntTensor"),
                 lambda L, x: x.type(L.DoubleTensor)):
        both(lambda L: conv(L, coo(L).coalesce()))
        both(lambda L: conv(L, dense(L, SIZE)))  # PyTorch keeps the layout: only the dtype changes
    raises_same(lambda L: coo(L).to_sparse_csr().type())


def test_sampled_addmm():
    csr = lambda L, dt="float32": dense(L, (3, 4), 3, dt).mul(dense(L, (3, 4), 4, dt) > 0).to_sparse_csr()  # noqa
    a, b = lambda L, dt="float32": dense(L, (3, 5), 5, dt), lambda L, dt="float32": dense(L, (5, 4), 6, dt)  # noqa
    both(lambda L: L.sparse.sampled_addmm(csr(L), a(L), b(L)))
    both(lambda L: L.sparse.sampled_addmm(csr(L, "float64"), a(L, "float64"), b(L, "float64"), beta=0.5, alpha=-2))
    both(lambda L: L.sparse.sampled_addmm(L.sparse_csr_tensor([0, 0, 0, 0], [], [], (3, 4)), a(L), b(L)))
    for bad in (lambda L: L.sparse.sampled_addmm(csr(L).to_dense(), a(L), b(L)),
                lambda L: L.sparse.sampled_addmm(csr(L).to_sparse(), a(L), b(L)),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L).to_sparse_csr(), b(L)),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L), b(L).to_sparse()),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L)[0], b(L)),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L, "float64"), b(L)),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L), b(L, "float64")),
                lambda L: L.sparse.sampled_addmm(csr(L, "int32"), a(L, "int32"), b(L, "int32")),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L), b(L)[:4]),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L)[:2], b(L)),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L), b(L)[:, :3]),
                lambda L: L.sparse.sampled_addmm(csr(L), a(L).expand(2, 3, 5), b(L))):
        raises_same(bad)
    _grad_pair(lambda L: (x := a(L).requires_grad_(), L.sparse.sampled_addmm(csr(L), x, b(L)).values().sum()))
    _grad_pair(lambda L: (x := b(L).requires_grad_(),
                          (L.sparse.sampled_addmm(csr(L), a(L), x, alpha=3).values() ** 2).sum()))


def test_as_sparse_gradcheck():
    for L in (mt, torch):
        check = L.sparse.as_sparse_gradcheck(L.autograd.gradcheck)
        x = L.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=L.float64).to_sparse_coo().requires_grad_(True)
        assert check(lambda s: s.to_sparse_csr(), x)
        assert check(lambda s: L.sparse.sum(s), (x,))
        assert check(lambda s: s * 2, x, masked=True)
        assert check(lambda s, w: (s.to_dense() * w).sin(), (x, L.ones(2, 2, dtype=L.float64, requires_grad=True)))
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):  # a wrong gradient is still caught
            check(lambda s: _WrongGrad.apply(s.to_dense()) if L is mt else _WrongGradTorch.apply(s.to_dense()), x)


class _WrongGrad(mt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class _WrongGradTorch(torch.autograd.Function):
    forward, backward = _WrongGrad.forward, _WrongGrad.backward


def test_cuda_only_entry_points():
    """spsolve (cuDSS) and 2:4 semi-structured sparsity have no CPU kernels in PyTorch 2.13: the CPU errors."""
    csr = lambda L: L.tensor([[2.0, 0.0], [1.0, 4.0]]).to_sparse_csr()  # noqa: E731
    raises_same(lambda L: L.sparse.spsolve(csr(L), L.ones(2)))
    raises_same(lambda L: L.sparse.spsolve(csr(L).to_sparse(), L.ones(2), left=False))
    raises_same(lambda L: L.sparse.spsolve(csr(L).to_dense(), L.ones(2)))
    raises_same(lambda L: L.sparse.spsolve(1, L.ones(2)))
    raises_same(lambda L: L.sparse.to_sparse_semi_structured(L.ones(64, 64).half()))
    with pytest.warns(FutureWarning):
        raises_same(lambda L: L.sparse.to_sparse_semi_structured(L.ones(64, 64), transposed=True))
