"""torch.fft's real-valued helpers (fftfreq, rfftfreq, fftshift, ifftshift) against live PyTorch."""
import pytest

import mindtorch_v2 as mt
from mtdiff import check, pair

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("f", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d,dtype", [(5, 1.0, None), (4, 0.1, "float64"), (7, 2.0, "float16"), (1, 1.0, None),
                                       (0, 1.0, None), (6, -3, "bfloat16")])
def test_frequencies_equal_pytorch(f, n, d, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    got = getattr(mt.fft, f)(n, d, **{k: getattr(mt, v) for k, v in kw.items()})
    want = getattr(torch.fft, f)(n, d, **{k: getattr(torch, v) for k, v in kw.items()})
    check(got, want)
    assert getattr(mt.fft, f)(3, requires_grad=True).requires_grad
    out = mt.empty(0, dtype=mt.float64)
    assert getattr(mt.fft, f)(n, d, out=out) is out
    check(out, getattr(torch.fft, f)(n, d, out=torch.empty(0, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match=f"^{f} requires a floating point or complex dtype$"):
        getattr(mt.fft, f)(4, dtype=mt.int64)


@pytest.mark.parametrize("f", ["fftfreq", "rfftfreq"])
def test_frequencies_past_int64(f):
    """allocated before the arange, as PyTorch does: its storage-size error (a double-valued arange of
    2^63 - 1 points rounded the count to 2^63)"""
    from mtdiff import same
    same(lambda: getattr(mt.fft, f)(2 ** 63 - 1), lambda: getattr(torch.fft, f)(2 ** 63 - 1))


@pytest.mark.parametrize("f", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("shape,dim", [((2, 5), None), ((2, 5), 1), ((3, 4, 5), (0, 2)), ((7,), -1)])
def test_shifts_equal_pytorch(f, shape, dim):
    m, t = pair(torch, shape, "int64")
    check(getattr(mt.fft, f)(m, dim), getattr(torch.fft, f)(t, dim))
    check(getattr(mt.fft, f)(m.float(), dim=dim), getattr(torch.fft, f)(t.float(), dim=dim))
    with pytest.raises(RuntimeError, match="^`shifts` required$"):  # a 0-d input: roll's error, as in PyTorch
        getattr(mt.fft, f)(mt.tensor(3))
    with pytest.raises(RuntimeError, match="^`shifts` required$"):
        getattr(torch.fft, f)(torch.tensor(3))


def test_namespace_equals_pytorch():
    assert sorted(mt.fft.__all__) == sorted(torch.fft.__all__)
