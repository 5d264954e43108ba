"""Functions PyTorch composes from other ops (square, positive, ravel, isneginf/isposinf/isreal, the
real-dtype conj family, adjoint, hsplit/vsplit/dsplit, column_stack, cartesian_prod, block_diag,
combinations, logspace) against live PyTorch: values, dtypes, shapes, strides, identity, gradients
and error texts."""
import pytest

import mindtorch_v2 as mt
from mtdiff import DTYPES, check, check_seq, pair, same

torch = pytest.importorskip("torch")

LIBS = (mt, torch)


def both(fn, *specs, cmp=check):
    """fn(lib, *tensors) in both libraries on the same data; specs are (shape, dtype)."""
    ms, ts = zip(*(pair(torch, s, d, seed=i) for i, (s, d) in enumerate(specs))) if specs else ((), ())
    return same(lambda: fn(mt, *ms), lambda: fn(torch, *ts), cmp=cmp)


def grads(fn, *shapes):
    """The same input gradients through fn in both libraries."""
    out = []
    for lib in LIBS:
        xs = [lib.arange(float(i), float(i) + _numel(s), dtype=lib.float64).reshape(s).requires_grad_()
              for i, s in enumerate(shapes)]
        y = fn(lib, *xs)
        y = sum(t.sum() for t in y) if isinstance(y, tuple) else y
        (y * y).sum().backward()
        out.append([x.grad for x in xs])
    for gm, gt in zip(*out):
        check(gm, gt)


def _numel(s):
    n = 1
    for d in s:
        n *= d
    return n


@pytest.mark.parametrize("dtype", DTYPES)
def test_square(dtype):
    both(lambda L, x: L.square(x), ((2, 3), dtype))
    both(lambda L, x: x.square(), ((2, 3), dtype))
    both(lambda L, x: x.square_(), ((2, 3), dtype))  # bool: "result type Long can't be cast ..."


def test_square_grad_fn_and_out():
    for L in LIBS:
        assert type(L.square(L.ones(2, requires_grad=True)).grad_fn).__name__ == "PowBackward0"
    grads(lambda L, x: L.square(x), (2, 3))
    both(lambda L, x, o: L.square(x, out=o), ((3,), "float32"), ((3,), "float32"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_positive_returns_input(dtype):
    for L in LIBS:
        x = L.ones(3, dtype=getattr(L, dtype))
        if dtype == "bool":
            continue
        assert L.positive(x) is x and x.positive() is x
    both(lambda L, x: L.positive(x), ((3,), dtype))


def test_ravel():
    both(lambda L, x: L.ravel(x), ((2, 3, 4), "float32"))
    both(lambda L, x: x.transpose(0, 2).ravel(), ((2, 3, 4), "int32"))
    both(lambda L, x: L.ravel(x), ((), "float32"))
    for L in LIBS:
        x = L.zeros(2, 3)
        assert L.ravel(x).data_ptr() == x.data_ptr()
        for src in (L.zeros(2, 3, requires_grad=True), L.zeros(2, 3, requires_grad=True).t()):
            assert type(src.ravel().grad_fn).__name__ == "ViewBackward0"
    grads(lambda L, x: x.t().ravel(), (2, 3))
    both(lambda L: L.ravel([1, 2]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_isneginf_isposinf_isreal(dtype):
    for name in ("isneginf", "isposinf", "isreal"):
        both(lambda L, x: getattr(L, name)(x), ((2, 5), dtype))
        both(lambda L, x: getattr(x, name)(), ((2, 5), dtype))


def test_isinf_signed_values_and_out():
    data = [float("-inf"), -1.0, 0.0, float("inf"), float("nan")]
    for name in ("isneginf", "isposinf"):
        for dt in ("float16", "float32", "float64"):
            same(lambda: getattr(mt, name)(mt.tensor(data, dtype=getattr(mt, dt))),
                 lambda: getattr(torch, name)(torch.tensor(data, dtype=getattr(torch, dt))))
        same(lambda: getattr(mt, name)(mt.tensor(data), out=mt.zeros(0, dtype=mt.bool)),
             lambda: getattr(torch, name)(torch.tensor(data), out=torch.zeros(0, dtype=torch.bool)))
        same(lambda: getattr(mt, name)(mt.tensor(data), out=mt.zeros(5)),
             lambda: getattr(torch, name)(torch.tensor(data), out=torch.zeros(5)))


def test_conj_family_identity():
    for L in LIBS:
        x = L.arange(6.).reshape(2, 3)
        for name in ("conj", "resolve_conj", "resolve_neg", "conj_physical"):
            assert getattr(L, name)(x) is x and getattr(x, name)() is x, name
        for name in ("is_complex", "is_conj", "is_neg"):
            assert getattr(L, name)(x) is False and getattr(x, name)() is False, name
    for name in ("conj", "resolve_conj", "is_complex", "is_neg"):
        both(lambda L: getattr(L, name)([1.0]))


def test_adjoint():
    both(lambda L, x: L.adjoint(x), ((2, 3, 4), "float32"))
    both(lambda L, x: x.adjoint(), ((3, 4), "int64"))
    both(lambda L, x: L.adjoint(x), ((3,), "float32"))
    both(lambda L, x: L.adjoint(x), ((), "float32"))
    for L in LIBS:
        assert type(L.adjoint(L.zeros(2, 3, requires_grad=True)).grad_fn).__name__ == "TransposeBackward0"
    grads(lambda L, x: L.adjoint(x) * L.arange(6.).reshape(3, 2), (2, 3))


SPLITS = [("hsplit", (6,)), ("hsplit", (2, 6, 3)), ("vsplit", (6, 2)), ("dsplit", (2, 2, 6)),
          ("hsplit", ()), ("vsplit", (6,)), ("dsplit", (6, 2))]


@pytest.mark.parametrize("name,shape", SPLITS)
@pytest.mark.parametrize("arg", [1, 2, 3, 4, 0, [1, 4], (2, 2, 9), [], 2.0])
def test_dim_splits(name, shape, arg):
    both(lambda L, x: getattr(L, name)(x, arg), (shape, "float32"), cmp=check_seq)
    if not isinstance(arg, float):
        both(lambda L, x: getattr(x, name)(arg), (shape, "int32"), cmp=check_seq)


def test_dim_splits_grad():
    grads(lambda L, x: tuple(t * (i + 1) for i, t in enumerate(L.hsplit(x, [1, 3]))), (2, 4))
    grads(lambda L, x: tuple(t * (i + 1) for i, t in enumerate(L.dsplit(x, 2))), (2, 1, 4))


def test_column_stack():
    both(lambda L, a, b, c: L.column_stack([a, b, c]), ((3,), "int32"), ((3, 2), "float32"), ((3, 1), "int64"))
    both(lambda L, a, b: L.column_stack((a, b)), ((), "float32"), ((), "float32"))
    both(lambda L, a, b: L.column_stack([a, b]), ((3,), "float32"), ((4,), "float32"))
    both(lambda L, a, b, o: L.column_stack([a, b], out=o), ((3,), "float32"), ((3,), "float32"), ((1,), "float32"))
    both(lambda L: L.column_stack([]))
    both(lambda L, a: L.column_stack(a), ((3,), "float32"))
    grads(lambda L, a, b: L.column_stack([a, b]) * L.arange(6.).reshape(2, 3), (2,), (2, 2))


def test_cartesian_prod():
    both(lambda L, a, b, c: L.cartesian_prod(a, b, c), ((2,), "int64"), ((3,), "int64"), ((2,), "int64"))
    both(lambda L, a, b: L.cartesian_prod(a, b), ((2,), "float32"), ((0,), "float32"))
    both(lambda L, a, b: L.cartesian_prod(a, b), ((2,), "float32"), ((2,), "int64"))
    both(lambda L, a: L.cartesian_prod(a), ((2, 2), "float32"))
    both(lambda L: L.cartesian_prod())
    for L in LIBS:
        a = L.arange(3)
        assert L.cartesian_prod(a) is a
    grads(lambda L, a, b: L.cartesian_prod(a, b) * L.arange(12.).reshape(6, 2), (2,), (3,))


def test_block_diag():
    both(lambda L, a, b, c: L.block_diag(a, b, c), ((2, 2), "float32"), ((2,), "int64"), ((), "float64"))
    both(lambda L, a, b: L.block_diag(a, b), ((2, 3), "int32"), ((1,), "int8"))
    both(lambda L, a, b: L.block_diag(a, b), ((2, 0), "bool"), ((0, 3), "bool"))
    both(lambda L: L.block_diag())
    both(lambda L, a, b: L.block_diag(a, b), ((2,), "float32"), ((2, 2, 2), "float32"))
    grads(lambda L, a, b: L.block_diag(a, b) * L.arange(20.).reshape(4, 5), (2, 3), (2, 2))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5, -1])
@pytest.mark.parametrize("rep", [False, True])
def test_combinations(r, rep):
    both(lambda L, x: L.combinations(x, r, rep), ((4,), "float32"))
    both(lambda L, x: L.combinations(x, r=r, with_replacement=rep), ((2,), "int16"))
    both(lambda L, x: L.combinations(x, r, rep), ((0,), "int64"))


def test_combinations_errors_and_grad():
    both(lambda L, x: L.combinations(x), ((2, 2), "float32"))
    both(lambda L, x: L.combinations(x), ((), "float32"))
    grads(lambda L, x: L.combinations(x, 2, True) * L.arange(20.).reshape(10, 2), (4,))


@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16", "float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("args", [(0, 2, 3), (-1.5, 2.25, 7), (0.3, 1.7, 10, 2), (1, 3, 5, 3.5), (2, 0, 4, 2),
                                  (0.5, 3, 1), (0, 2, 0), (0, 2, -1), (-2, 2, 9, 0.5)])
def test_logspace(dtype, args):
    kw = {} if dtype is None else {"dtype": dtype}
    same(lambda: mt.logspace(*args, **{k: getattr(mt, v) for k, v in kw.items()}),
         lambda: torch.logspace(*args, **{k: getattr(torch, v) for k, v in kw.items()}))


def test_logspace_out_and_requires_grad():
    same(lambda: mt.logspace(0, 1, 4, out=mt.zeros(1, dtype=mt.float64)),
         lambda: torch.logspace(0, 1, 4, out=torch.zeros(1, dtype=torch.float64)))
    assert mt.logspace(0, 1, 3, requires_grad=True).requires_grad
