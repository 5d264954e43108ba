"""Gradients of the shape and index ops against live PyTorch (float64): values, leaf gradients,
grad_fn names, in-place forms, and second order where PyTorch's formula is differentiable."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def close(m, t, tol=1e-10):
    assert tuple(m.shape) == tuple(t.shape), (tuple(m.shape), tuple(t.shape))
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    np.testing.assert_allclose(np.array(m.detach().tolist(), dtype=float), np.array(t.detach().tolist(), dtype=float),
                               rtol=tol, atol=tol)


def leaves(shapes, seed=0, ints=False):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.integers(-3, 4, size=s).astype(float) if ints else rng.standard_normal(s)
        out.append((mt.tensor(a.tolist(), dtype=mt.float64, requires_grad=True),
                    torch.tensor(a.tolist(), dtype=torch.float64, requires_grad=True)))
    return out


def grads_match(fn, *shapes, ints=False, second=False, seed=0):
    """fn(L, *leaves) -> tensor (or tuple whose first element is the differentiable output)."""
    ps = leaves(shapes, seed, ints)
    om, ot = fn(mt, *[p[0] for p in ps]), fn(torch, *[p[1] for p in ps])
    if isinstance(ot, tuple):
        om, ot = om[0], ot[0]
    close(om, ot)
    assert (om.grad_fn is None) == (ot.grad_fn is None)
    assert type(om.grad_fn).__name__ == type(ot.grad_fn).__name__, (type(om.grad_fn).__name__, type(ot.grad_fn).__name__)
    go = np.random.default_rng(seed + 1).standard_normal(tuple(ot.shape)).tolist()
    gm = mt.autograd.grad(om, [p[0] for p in ps], mt.tensor(go, dtype=mt.float64), create_graph=second, allow_unused=True)
    gt = torch.autograd.grad(ot, [p[1] for p in ps], torch.tensor(go, dtype=torch.float64), create_graph=second,
                             allow_unused=True)
    for a, b in zip(gm, gt):
        assert (a is None) == (b is None)
        if b is not None:
            close(a, b)
    if second:  # d/dx of sum(grad * w): the backward formula differentiated again
        w = np.random.default_rng(seed + 2)
        sm = sum((g * mt.tensor(w.standard_normal(tuple(g.shape)).tolist(), dtype=mt.float64)).sum()
                 for g in gm if g is not None and g.requires_grad)
        w = np.random.default_rng(seed + 2)
        st = sum((g * torch.tensor(w.standard_normal(tuple(g.shape)).tolist(), dtype=torch.float64)).sum()
                 for g in gt if g is not None and g.requires_grad)
        if isinstance(st, torch.Tensor):
            hm = mt.autograd.grad(sm, [p[0] for p in ps], allow_unused=True)
            ht = torch.autograd.grad(st, [p[1] for p in ps], allow_unused=True)
            for a, b in zip(hm, ht):
                if b is not None and a is not None:
                    close(a, b)


def idx(L, data):
    return L.tensor(data, dtype=L.int64)


CASES = {
    "cat": (lambda L, a, b: L.cat([a, b.t(), a], 0), [(2, 3), (3, 2)]),
    "cat_promote": (lambda L, a, b: L.cat([a, b.float(), L.zeros(0)], 1), [(2, 3), (2, 2)]),
    "cat_skip": (lambda L, a, b: L.cat([b, a[:0, 0], b], 1), [(2, 3), (2, 2)]),
    "stack": (lambda L, a, b: L.stack([a, b], 1), [(2, 3), (2, 3)]),
    "hstack": (lambda L, a, b: L.hstack([a, b]), [(2, 3), (2, 1)]),
    "vstack": (lambda L, a, b: L.vstack([a[0], b[0]]), [(2, 3), (2, 3)]),
    "dstack": (lambda L, a, b: L.dstack([a, b]), [(2, 3), (2, 3)]),
    "flip": (lambda L, a: L.flip(a, [0, 2]), [(2, 3, 4)]),
    "fliplr": (lambda L, a: L.fliplr(a.t()), [(2, 3)]),
    "roll": (lambda L, a: L.roll(a, (1, -2), (0, 1)), [(3, 4)]),
    "roll_flat": (lambda L, a: L.roll(a.t(), 5), [(3, 4)]),
    "repeat": (lambda L, a: a.repeat(2, 1, 3), [(3, 4)]),
    "tile": (lambda L, a: L.tile(a, (2,)), [(3, 4)]),
    "rot90": (lambda L, a: L.rot90(a, 1), [(3, 4)]),
    "rot90_3": (lambda L, a: L.rot90(a, -1, [1, 0]), [(3, 4)]),
    "rot90_2": (lambda L, a: L.rot90(a, 2), [(3, 4)]),
    "tril": (lambda L, a: L.tril(a, -1), [(3, 4)]),
    "triu": (lambda L, a: L.triu(a.t(), 1), [(3, 4)]),
    "tril_": (lambda L, a: (a * 2).tril_(1), [(2, 3, 4)]),
    "triu_": (lambda L, a: (a * 2).triu_(), [(3, 4)]),
    "diagonal": (lambda L, a: a.diagonal(1, 0, 2) * 3, [(3, 4, 5)]),
    "diag_embed": (lambda L, a: L.diag_embed(a, -1), [(2, 3)]),
    "diag_1d": (lambda L, a: L.diag(a, 2), [(3,)]),
    "diag_2d": (lambda L, a: L.diag(a, -1), [(3, 4)]),
    "diagflat": (lambda L, a: L.diagflat(a), [(2, 2)]),
    "trace": (lambda L, a: L.trace(a), [(3, 4)]),
    "narrow_copy": (lambda L, a: a.narrow_copy(1, 1, 2), [(3, 4)]),
    "index_select": (lambda L, a: a.index_select(0, idx(L, [2, 0, 2])), [(3, 4)]),
    "index_select_0d": (lambda L, a: a.sum().index_select(0, idx(L, [0])), [(3,)]),
    "gather": (lambda L, a: a.gather(1, idx(L, [[0, 0, 3], [1, 2, 2], [3, 3, 3]])), [(3, 4)]),
    "take_along_dim": (lambda L, a: L.take_along_dim(a, idx(L, [[0], [3], [1]]), 1), [(3, 4)]),
    "take": (lambda L, a: L.take(a, idx(L, [[0, 11], [-1, 11]])), [(3, 4)]),
    "scatter": (lambda L, a, s: a.scatter(0, idx(L, [[0, 1, 2, 0], [2, 1, 0, 1]]), s), [(3, 4), (2, 4)]),
    "scatter_dup": (lambda L, a, s: a.scatter(0, idx(L, [[1, 1, 1, 1], [1, 0, 1, 0]]), s), [(3, 4), (2, 4)]),
    "scatter_value": (lambda L, a: a.scatter(1, idx(L, [[0], [3]]), 2.5), [(3, 4)]),
    "scatter_": (lambda L, a, s: (a * 1).scatter_(0, idx(L, [[0, 1, 2, 0]]), s), [(3, 4), (1, 4)]),
    "scatter_add": (lambda L, a, s: a.scatter_add(0, idx(L, [[1, 1, 1, 1], [1, 0, 1, 0]]), s), [(3, 4), (2, 4)]),
    "scatter_add_": (lambda L, a, s: (a + 0).scatter_add_(1, idx(L, [[3, 3], [0, 3]]), s), [(3, 4), (2, 2)]),
    "index_add": (lambda L, a, s: a.index_add(0, idx(L, [2, 2]), s, alpha=-1.5), [(3, 4), (2, 4)]),
    "index_add_": (lambda L, a, s: (a * 1).index_add_(1, idx(L, [0, 3, 0]), s.t()[:, :3].contiguous()), [(3, 4), (4, 3)]),
    "index_copy": (lambda L, a, s: a.index_copy(0, idx(L, [2, 0]), s), [(3, 4), (2, 4)]),
    "index_copy_": (lambda L, a, s: (a * 1).index_copy_(1, idx(L, [1]), s[:, :1]), [(3, 4), (3, 2)]),
    "index_fill": (lambda L, a: a.index_fill(1, idx(L, [0, 2, 0]), -1.0), [(3, 4)]),
    "index_fill_t": (lambda L, a, v: a.index_fill(1, idx(L, [0, 2, 0]), v.sum()), [(3, 4), (2,)]),
    "index_fill_": (lambda L, a: (a * 1).index_fill_(0, idx(L, [1]), 3.0), [(3, 4)]),
    "index_put": (lambda L, a, v: a.index_put((idx(L, [0, 2]),), v), [(3, 4), (4,)]),
    "index_put_acc": (lambda L, a, v: a.index_put((idx(L, [0, 0]), idx(L, [1, 1])), v[:2], accumulate=True), [(3, 4), (4,)]),
    "masked_select": (lambda L, a: a.masked_select(a > 0), [(3, 4)]),
    "masked_select_bcast": (lambda L, a, b: a.masked_select(b > 0), [(4,), (3, 4)]),
    "masked_scatter": (lambda L, a, s: a.masked_scatter(a > 0, s), [(3, 4), (14,)]),
    "masked_scatter_": (lambda L, a, s: (a * 1).masked_scatter_(s[:4] > 0, s.reshape(3, 4)), [(3, 4), (12,)]),
    "sort": (lambda L, a: L.sort(a, 0, True), [(5, 4)]),
    "sort_stable": (lambda L, a: L.sort(a, dim=1, stable=True), [(5, 4)]),
    "sort_stable_false": (lambda L, a: L.sort(a, stable=False), [(5, 4)]),
    "msort": (lambda L, a: L.msort(a), [(5, 4)]),
    "topk": (lambda L, a: L.topk(a, 2, 0), [(5, 4)]),
    "topk_small": (lambda L, a: L.topk(a, 3, largest=False, sorted=False), [(2, 200)]),
    "kthvalue": (lambda L, a: L.kthvalue(a, 2, 0), [(5, 4)]),
    "kthvalue_keep": (lambda L, a: L.kthvalue(a, 3, 1, True), [(5, 4)]),
    "cummax": (lambda L, a: L.cummax(a, 0), [(5, 4)]),
    "cummin": (lambda L, a: L.cummin(a, 1), [(5, 4)]),
    "cummax_0d": (lambda L, a: L.cummax(a.sum(), 0), [(5,)]),
    "meshgrid": (lambda L, a, b: L.meshgrid(a, b, indexing="xy")[1] * 2, [(3,), (2,)]),
    "repeat_interleave": (lambda L, a: a.repeat_interleave(2, dim=1), [(3, 4)]),
}

REDUCE = {f"scatter_reduce_{r}_{inc}": (
    (lambda r, inc: lambda L, a, s: a.scatter_reduce(0, idx(L, [[0, 1, 2, 0], [0, 1, 0, 1]]), s, r, include_self=inc))(r, inc),
    [(3, 4), (2, 4)]) for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)}


@pytest.mark.parametrize("name", list(CASES) + list(REDUCE))
def test_grads(name):
    fn, shapes = {**CASES, **REDUCE}[name]
    grads_match(fn, *shapes)


@pytest.mark.parametrize("name", ["scatter_reduce_amax_True", "scatter_reduce_amin_False", "scatter_reduce_prod_True",
                                  "scatter_reduce_mean_True"])
def test_scatter_reduce_ties_and_zeros(name):
    """integer-valued inputs: ties among the extremes share the gradient, zeros in prod"""
    fn, shapes = REDUCE[name]
    grads_match(fn, *shapes, ints=True)


@pytest.mark.parametrize("name", ["cat", "stack", "flip", "roll", "repeat", "rot90", "tril", "diag_embed", "gather",
                                  "index_select", "scatter", "scatter_add", "index_add", "index_copy", "masked_select",
                                  "sort", "topk", "cummax"])
def test_double_backward(name):
    fn, shapes = CASES[name]
    grads_match(fn, *shapes, second=True)


def test_selected_indices_need_no_grad():
    a = mt.randn(4, 3, requires_grad=True)
    for r in (a.sort(), a.topk(2), a.kthvalue(1), a.cummax(0)):
        assert r.indices.requires_grad is False and r.indices.grad_fn is None
        assert r.values.requires_grad
    assert mt.nonzero(a).requires_grad is False
    assert mt.cat([a.long(), a.long()]).grad_fn is None


def test_legacy_scatter_reduce_backward_raises():
    for L in (mt, torch):
        a = L.ones(3, requires_grad=True)
        r = (a * 1).scatter(0, L.tensor([0, 0]), a[:2] * 1, reduce="add")
        assert type(r.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            r.sum().backward()


def test_inplace_on_leaf_raises():
    for L in (mt, torch):
        a = L.ones(3, 3, requires_grad=True)
        for f in (lambda: a.tril_(), lambda: a.index_fill_(0, L.tensor([0]), 1.0),
                  lambda: a.scatter_(0, L.tensor([[0]]), 2.0), lambda: a.masked_scatter_(a > 0, a)):
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                f()


def test_diagonal_of_a_base_modified_in_place_replays_the_view():
    """As PyTorch: the view's history is regenerated (AsStridedBackward0) from its base's new history."""
    grads = []
    for L in (mt, torch):
        a = L.ones(3, 3, requires_grad=True)
        b = a * 1
        d = b.diagonal()
        b.mul_(3)
        (d * 2).sum().backward()
        assert type(d.grad_fn).__name__ == "AsStridedBackward0"
        grads.append(a.grad.tolist())
    assert grads[0] == grads[1]


def test_unique_and_bincount_are_not_differentiable():
    for L in (mt, torch):
        a = L.tensor([1.0, 2.0, 1.0], requires_grad=True)
        for f, name, msg in [(lambda: L.unique(a), "Unique2Backward0", "_unique2"),
                             (lambda: L.unique(a, dim=0), "UniqueDimBackward0", "unique_dim"),
                             (lambda: L.unique_consecutive(a), "UniqueConsecutiveBackward0", "unique_consecutive")]:
            r = f()
            assert type(r.grad_fn).__name__ == name
            with pytest.raises(NotImplementedError, match=f"the derivative for '{msg}' is not implemented."):
                r.sum().backward()
        r = L.bincount(L.tensor([0, 1, 1]), a)
        with pytest.raises(RuntimeError, match="derivative for aten::bincount is not implemented"):
            r.sum().backward()
