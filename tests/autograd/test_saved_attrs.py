"""grad_fn._saved_<name>: the values a node keeps for its backward, under PyTorch's names,
compared with live PyTorch (a table per node name in mindtorch_v2/autograd/_saved.py)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mindtorch_v2.autograd import _saved

torch = pytest.importorskip("torch")

CASES = {
    "mul": lambda L, a, b: a * b,
    "mul_scalar": lambda L, a, b: a * 2.5,
    "mul_int_scalar": lambda L, a, b: a * 3,
    "mul_detached": lambda L, a, b: a * b.detach(),
    "mul_detached_self": lambda L, a, b: a.detach() * b,
    "div": lambda L, a, b: a / b,
    "div_detached": lambda L, a, b: a / b.detach(),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "pow_scalar": lambda L, a, b: a ** 2,
    "pow_float_scalar": lambda L, a, b: a.abs() ** 1.5,
    "pow_tensor": lambda L, a, b: a.abs() ** b,
    "rpow": lambda L, a, b: 2 ** a,
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=2),
    "sub_alpha": lambda L, a, b: L.sub(a, b, alpha=0.5),
    "rsub": lambda L, a, b: 2 - a,
    "exp": lambda L, a, b: a.exp(),
    "tanh": lambda L, a, b: a.tanh(),
    "sigmoid": lambda L, a, b: a.sigmoid(),
    "sqrt": lambda L, a, b: a.abs().sqrt(),
    "log": lambda L, a, b: a.abs().log(),
    "sin": lambda L, a, b: a.sin(),
    "abs": lambda L, a, b: a.abs(),
    "mm": lambda L, a, b: a @ b.t(),
    "sum": lambda L, a, b: a.sum(),
    "sum_dim": lambda L, a, b: a.sum(1, keepdim=True),
    "mean_dims": lambda L, a, b: a.mean((0, 1)),
    "transpose": lambda L, a, b: a.transpose(0, 1),
    "select": lambda L, a, b: a[1],
    "view": lambda L, a, b: a.view(6),
    "unbind": lambda L, a, b: a.unbind(1)[0],
    "split": lambda L, a, b: a.split(2, 1)[1],
    "split_sizes": lambda L, a, b: a.split([1, 2], 1)[0],
}


def leaves(L):
    a = np.arange(6.0).reshape(2, 3) * 0.3 - 0.7
    return [L.tensor(v.tolist(), dtype=L.float64, requires_grad=True) for v in (a, a[::-1] * 1.3 + 0.1)]


def same(a, b):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, mt.Tensor) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(np.array(a.detach().tolist()), np.array(b.detach().tolist()), rtol=1e-15)
        assert (a.grad_fn is None) == (b.grad_fn is None)
        if b.grad_fn is not None:
            assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    else:
        assert type(a) is type(b) and a == b, (a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_match_torch(name):
    fn = CASES[name]
    ym, yt = fn(mt, *leaves(mt)), fn(torch, *leaves(torch))
    node = type(ym.grad_fn).__name__
    assert node == type(yt.grad_fn).__name__
    ours = _saved.names(node)
    assert ours, f"{node} has no _saved_ entries"
    assert set(ours) <= set(dir(yt.grad_fn))
    assert set(ours) <= set(dir(ym.grad_fn))
    for attr in ours:
        same(getattr(ym.grad_fn, attr), getattr(yt.grad_fn, attr))


def test_freed_and_missing():
    for L in (mt, torch):
        a = leaves(L)[0]
        y = a.exp()
        y.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.grad_fn._saved_result
        with pytest.raises(AttributeError):
            y.grad_fn._saved_nothing
    y = leaves(mt)[0].sum(0)
    assert y.grad_fn._saved_dim == (0,)  # ints survive a backward
    y.backward(mt.ones(3, dtype=mt.float64))
    assert y.grad_fn._saved_self_sym_sizes == (2, 3)


def test_table_names_are_recordable_nodes():
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[2] / "csrc"
    names = set()
    for p in root.rglob("*.c"):
        names.update(re.findall(r'"([A-Za-z0-9]+Backward[0-9]+)"', p.read_text()))
    assert set(_saved.TABLE) <= names, sorted(set(_saved.TABLE) - names)
