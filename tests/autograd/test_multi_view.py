"""split / split_with_sizes / chunk / unbind as one multi-output node each (SplitBackward0,
SplitWithSizesBackward0, UnbindBackward0), and PyTorch's multi-output view rules: the outputs
are views, writing one in place (or using one after its base was written) raises PyTorch's error."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

OPS = {
    "split_int": lambda x: x.split(2, 0),
    "split_uneven": lambda x: x.split(3, 1),
    "split_sizes": lambda x: x.split([1, 0, 3], 0),
    "torch_split": lambda x: mt_or_torch(x).split(x, [2, 2], 0),
    "chunk": lambda x: x.chunk(3, 0),
    "chunk_dim1": lambda x: x.chunk(2, -1),
    "unbind": lambda x: x.unbind(1),
    "torch_unbind": lambda x: mt_or_torch(x).unbind(x),
}


def mt_or_torch(x):
    return torch if isinstance(x, torch.Tensor) else mt


def data():
    return np.arange(20.0).reshape(4, 5) * 0.37 - 2


def leaf(L):
    return L.tensor(data().tolist(), dtype=L.float64, requires_grad=True)


def close(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np.array(a.detach().tolist()), np.array(b.detach().tolist()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(OPS))
def test_one_node_views_and_grads(name):
    fn = OPS[name]
    xm, xt = leaf(mt), leaf(torch)
    ym, yt = fn(xm * 1), fn(xt * 1)
    assert len(ym) == len(yt)
    assert [type(o.grad_fn).__name__ for o in ym] == [type(o.grad_fn).__name__ for o in yt]
    assert all(o.grad_fn is ym[0].grad_fn for o in ym)  # one node, several outputs
    for a, b in zip(ym, yt):
        close(a, b)
        assert a._is_view() and a.stride() == b.stride()
    # only some outputs used: the others contribute zeros
    wm = [(o * (i + 1.5)).sum() for i, o in enumerate(ym) if i % 2 == 0]
    wt = [(o * (i + 1.5)).sum() for i, o in enumerate(yt) if i % 2 == 0]
    (gm,), (gt,) = mt.autograd.grad(sum(wm), [xm]), torch.autograd.grad(sum(wt), [xt])
    close(gm, gt)


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_and_gradgradcheck(name):
    fn = OPS[name]
    x = mt.tensor(data().tolist(), dtype=mt.float64, requires_grad=True)
    f = lambda x: tuple(o * o for o in fn(x))  # noqa: E731 (second order needs a non-linear use)
    assert mt.autograd.gradcheck(f, (x,))
    assert mt.autograd.gradgradcheck(f, (x,))


def test_double_backward_node_names():
    res = []
    for L in (mt, torch):
        x = leaf(L)
        a, b = x.split([1, 3])
        (g,) = L.autograd.grad((a * a).sum() + (b * 2).sum(), [x], create_graph=True)
        res.append(type(g.grad_fn).__name__)
    assert res[0] == res[1]


def _err(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    return None


INPLACE = {
    "split_out": lambda L, y: y.split(2)[0].mul_(2),
    "unbind_out": lambda L, y: y.unbind(0)[1].add_(1),
    "chunk_out": lambda L, y: y.chunk(2)[1].zero_(),
    "sizes_out": lambda L, y: y.split([1, 3])[1].mul_(2),
    "view_of_out": lambda L, y: y.split(2)[0][0].mul_(2),
    "view_of_out2": lambda L, y: y.split(2)[1].view(10).mul_(2),
    "setitem_out": lambda L, y: y.unbind(1)[0].__setitem__(0, 1.0),
    "base_written": lambda L, y: _base_written(L, y),
    "out_written_no_grad": lambda L, y: _out_written_no_grad(L, y),
    "made_in_no_grad": lambda L, y: _made_in_no_grad(L, y),
    "base_needs_no_grad": lambda L, y: y.detach().split(2)[0].mul_(L.ones(5, dtype=L.float64, requires_grad=True)),
}


def _base_written(L, y):
    p = y.split(2)
    y.mul_(2)
    return p[0] * 1


def _out_written_no_grad(L, y):
    p = y.split(2)
    with L.no_grad():
        p[0].mul_(2)
    return p[0].sum()


def _made_in_no_grad(L, y):
    with L.no_grad():
        p = y.unbind(0)
    p[0].mul_(2)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_errors_match_torch(name):
    fn = INPLACE[name]
    em = _err(lambda: fn(mt, leaf(mt) * 1))
    et = _err(lambda: fn(torch, leaf(torch) * 1))
    assert et is not None and em == et


def test_inplace_allowed_without_grad():
    for L in (mt, torch):
        z = L.tensor(data().tolist(), dtype=L.float64)
        a, b = z.split(2)
        a.mul_(0)  # nothing requires grad: a plain view write
        assert z[:2].abs().sum().item() == 0
        y = leaf(L) * 1
        with L.no_grad():
            p = y.split(2)
            p[0].mul_(2)  # view and write both in no-grad mode
        i = L.tensor([[1, 2], [3, 4]]).unbind(0)
        i[0].add_(1)  # integer views
        assert i[0].tolist() == [2, 3]


def test_leaf_split_outputs_are_not_leaves():
    x = leaf(mt)
    a, b = x.split(2)
    assert not a.is_leaf and a.requires_grad and a.grad_fn is b.grad_fn
    assert type(a.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


def test_empty_and_errors():
    assert mt.zeros(3, 0, requires_grad=True).unbind(1) == ()
    parts = mt.zeros(0, 3, requires_grad=True).chunk(2)
    assert [type(p.grad_fn).__name__ for p in parts] == ["SplitWithSizesBackward0"] * 2
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        mt.tensor(1.0).unbind()
    with pytest.raises(RuntimeError, match="split expects at least a 1-dimensional tensor"):
        mt.tensor(1.0).split(1)
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 4"):
        mt.zeros(4).split([1, 2])
    with pytest.raises(IndexError):
        mt.zeros(4).unbind(2)
    # the C entry point checks its sizes itself
    from mindtorch_v2._C import ffi, lib
    outs = ffi.new("mt_tensor *[]", 2)
    assert lib.mt_split_with_sizes(mt.zeros(4)._h, 0, 2, ffi.new("int64_t[]", [3, 3]), -1, outs) != 0
    assert lib.mt_split_with_sizes(mt.zeros(4)._h, 0, 2, ffi.new("int64_t[]", [5, -1]), -1, outs) != 0
    # sizes whose sum passes int64 (one that wraps around to 4 included): an error, not a wrapped total
    # (found by the C fuzzer as signed overflow)
    big = 2**63 - 1
    assert lib.mt_split_with_sizes(mt.zeros(4)._h, 0, 2, ffi.new("int64_t[]", [big, 5]), -1, outs) != 0
    outs3 = ffi.new("mt_tensor *[]", 3)
    assert lib.mt_split_with_sizes(mt.zeros(4)._h, 0, 3, ffi.new("int64_t[]", [big, big, 6]), -1, outs3) != 0
    assert outs[0] == ffi.NULL and outs[1] == ffi.NULL


def test_meta_split():
    parts = mt.empty(4, 3, device="meta").split(3)
    assert [tuple(p.shape) for p in parts] == [(3, 3), (1, 3)] and parts[0].device.type == "meta"
