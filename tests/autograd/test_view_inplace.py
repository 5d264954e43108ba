"""In-place writes into views of graph tensors (CopySlices / AsStridedBackward0), against live torch."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

DATA = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def run(fn):
    """fn(L, x) -> (loss, extra values); compare x.grad and extras on both libraries."""
    res = {}
    for L in (mt, torch):
        x = L.tensor(DATA, dtype=L.float64, requires_grad=True)
        loss, extra = fn(L, x)
        loss.backward()
        res[L.__name__] = (x.grad, extra)
    (gm, em), (gt, et) = res["mindtorch_v2"], res["torch"]
    np.testing.assert_allclose(np.array(gm.tolist()), np.array(gt.tolist()), rtol=1e-12)
    assert em == et, (em, et)


def names(*ts):
    return tuple(None if t.grad_fn is None else type(t.grad_fn).__name__ for t in ts)


def test_setitem_on_non_leaf():
    def f(L, x):
        y = x * 1
        y[0] = 0
        return (y * y).sum(), names(y)
    run(f)


def test_mul_on_column_view():
    def f(L, x):
        y = x * 1
        v = y[:, 1]
        v.mul_(2)
        return (y * y).sum(), names(y, v) + (tuple(n for n, _ in ((type(e[0]).__name__, 0) for e in v.grad_fn.next_functions)),)
    run(f)


def test_view_of_view_and_gradient_through_the_view():
    def f(L, x):
        y = x * 1.5
        v = y[1:, :]
        w = v[:, :2]
        w.mul_(x[1:, :2])  # saves w's old value; gradient flows through both
        return y.sum() + (v * 3).sum() + w.sum(), names(y, v, w)
    run(f)


def test_inplace_on_base_regenerates_views():
    def f(L, x):
        y = x * 2
        v = y[0]
        y.mul_(3)
        return (v * v).sum(), names(v)
    run(f)


def test_other_view_of_same_region_sees_the_write():
    def f(L, x):
        y = x * 1
        a = y[0]
        b = y[0]
        a.mul_(5)
        return b.sum(), names(a, b)
    run(f)


def test_value_written_into_view_of_plain_tensor():
    def f(L, x):
        buf = L.zeros(3, 3, dtype=L.float64)
        buf[1:, :] = x.sin()
        buf[0, 0] = x[0, 0] * 7
        return (buf * buf).sum(), names(buf) + (buf.requires_grad,)
    run(f)


def test_transposed_and_strided_views():
    def f(L, x):
        y = (x * 1).t()        # non-contiguous base
        v = y[::2, :]
        v.add_(v * 2)
        return (y ** 2).sum(), names(y, v)
    run(f)


def test_index_put_into_view():
    def f(L, x):
        y = x * 1
        v = y[1]
        v[L.tensor([0, 2])] = L.tensor([9.0, 8.0], dtype=L.float64)
        return (y * x).sum(), names(y)
    run(f)


def test_double_backward_through_copyslices():
    res = []
    for L in (mt, torch):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        y = x * x
        y[1:].mul_(3)
        g, = L.autograd.grad(y.sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x)
        res.append((g.tolist(), g2.tolist()))
    assert res[0] == res[1]


def test_versions_shared_with_base():
    for L in (mt, torch):
        x = L.ones(4)
        v = x[1:3]
        before = x._version
        v.add_(1)
        assert x._version > before and v._version == x._version
        assert v._is_view() and not x._is_view()
        assert v._base is not None and x._base is None


def test_view_errors():
    msgs = []
    for L in (mt, torch):
        out = []
        x = L.ones(3, requires_grad=True)
        y = x * 1
        with L.no_grad():
            v = y[:2]
        for fn in (lambda: v.mul_(2), lambda: x[:2].mul_(2)):
            try:
                fn()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e))
        w = L.ones(2, requires_grad=True)
        z = L.zeros(3)
        with L.no_grad():
            zv = z[:2]
        try:
            zv.copy_(w)
            out.append("ok")
        except RuntimeError as e:
            out.append(str(e))
        msgs.append(out)
    assert msgs[0] == msgs[1]


def test_no_grad_write_into_view_regenerates():
    def f(L, x):
        y = x * 2
        v = y[0]
        with L.no_grad():
            y[1] = 0
        return (v * y[1].sum()).sum() + y.sum(), names(v)
    run(f)


def test_no_grad_view_is_a_leaf_without_edge():
    def f(L, x):
        y = x * 1
        with L.no_grad():
            v = y[:1]
        z = v * 2
        return z.sum() + y.sum(), (v.is_leaf, v.requires_grad, z.grad_fn.next_functions[0][0] is None)
    run(f)
