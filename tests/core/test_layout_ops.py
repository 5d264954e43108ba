"""torch.empty_permuted, nonzero_static, slice_inverse and histogramdd against live PyTorch: shapes,
strides, dtypes, values, padding, aliasing, error types and texts."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import DTYPES, same

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("size,layout", [((2, 3, 4), (2, 0, 1)), ((2, 0, 4), (2, 0, 1)), ((5,), (0,)), ((), ()),
                                         ((2, 3), (1, 0)), ((2, 3, 4), (2, 0)), ((2, 3, 4), (2, 0, 0))])
def test_empty_permuted(size, layout):
    def cmp(m, t):
        assert tuple(m.shape) == tuple(t.shape) and m.stride() == t.stride() and str(m.dtype) == str(t.dtype)
    same(lambda: mt.empty_permuted(size, layout, dtype=mt.float64),
         lambda: torch.empty_permuted(size, layout, dtype=torch.float64), cmp=cmp)


def exact(m, t):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    np.testing.assert_array_equal(m.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [0, 1, 3, 6])
def test_nonzero_static(dtype, size):
    data = [[0, 1, 0], [2, 0, 3]]
    same(lambda: mt.nonzero_static(mt.tensor(data).to(getattr(mt, dtype)).t(), size=size, fill_value=-5),
         lambda: torch.nonzero_static(torch.tensor(data).to(getattr(torch, dtype)).t(), size=size, fill_value=-5),
         cmp=exact)
    same(lambda: mt.tensor(data).to(getattr(mt, dtype)).nonzero_static(size=size),
         lambda: torch.tensor(data).to(getattr(torch, dtype)).nonzero_static(size=size), cmp=exact)


def test_nonzero_static_edges():
    for call in (lambda lib: lib.nonzero_static(lib.tensor([0, 1]), size=-1),
                 lambda lib: lib.nonzero_static(lib.tensor(3), size=2),
                 lambda lib: lib.nonzero_static(lib.zeros(0, 2), size=2)):
        same(lambda: call(mt), lambda: call(torch), cmp=exact)


def test_slice_inverse():
    for lib in (mt, torch):
        x = lib.arange(15.).reshape(5, 3)
        s = x[1:3]
        r = lib.slice_inverse(s, x, 0, 1, 3)
        assert tuple(r.shape) == (5, 3) and r.stride() == (3, 1) and r.data_ptr() == x.data_ptr()
        assert s.slice_inverse(x, 0, 1, 3).data_ptr() == x.data_ptr()
    same(lambda: mt.slice_inverse(mt.rand(2, 3), mt.rand(5, 3), 0, 1, 3),
         lambda: torch.slice_inverse(torch.rand(2, 3), torch.rand(5, 3), 0, 1, 3))


def close(m, t):
    assert type(m).__name__ == type(t).__name__ == "histogramdd"
    assert len(m.bin_edges) == len(t.bin_edges)
    for a, b in zip((m.hist, *m.bin_edges), (t.hist, *t.bin_edges)):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.double().numpy(), b.double().numpy(), rtol=1e-6, atol=1e-6)


POINTS = [[0., 1.], [1., 0.], [0.5, 0.5], [0.2, 0.9], [0.7, 0.1], [2., 2.]]


@pytest.mark.parametrize("kwargs", [
    lambda lib: {"bins": [2, 3]}, lambda lib: {"bins": 3, "range": [0., 1., 0., 1.]},
    lambda lib: {"bins": [lib.tensor([0., .5, 1.]), lib.tensor([0., .25, 2.])]},
    lambda lib: {"bins": 2, "weight": lib.arange(6.)}, lambda lib: {"bins": [2, 2], "density": True},
    lambda lib: {"bins": 2, "weight": lib.arange(6.), "density": True},
    lambda lib: {"bins": [3]}, lambda lib: {"bins": 3, "range": [0., 1.]},
    lambda lib: {"bins": 2, "weight": lib.ones(6, dtype=lib.float64)},
])
def test_histogramdd(kwargs):
    same(lambda: mt.histogramdd(mt.tensor(POINTS), **kwargs(mt)),
         lambda: torch.histogramdd(torch.tensor(POINTS), **kwargs(torch)), cmp=close)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_histogramdd_dtypes_and_shapes(dtype):
    data = np.arange(24.).reshape(2, 4, 3) % 5
    same(lambda: mt.histogramdd(mt.tensor(data.tolist()).to(getattr(mt, dtype)), bins=2),
         lambda: torch.histogramdd(torch.tensor(data.tolist()).to(getattr(torch, dtype)), bins=2), cmp=close)


def test_clone_and_resize_memory_format():
    """clone(memory_format=) copies into that layout; resize_(memory_format=) restrides in place (as PyTorch)."""
    import numpy as np
    torch = pytest.importorskip("torch")

    def go(L):
        x = L.tensor(np.arange(36.0).reshape(2, 2, 3, 3).tolist())
        cl = x.clone(memory_format=L.channels_last)
        back = cl.clone(memory_format=L.contiguous_format)
        same = cl.clone(memory_format=L.channels_last)
        r = L.zeros(2, 3, 2, 2).resize_((2, 3, 2, 2), memory_format=L.channels_last)
        r2 = L.zeros(2, 3, 2, 2).resize_((2, 3, 2, 2), memory_format=L.channels_last).resize_(
            (2, 3, 2, 2), memory_format=L.contiguous_format)
        return ([t.stride() for t in (cl, back, same, r, r2)], cl.tolist() == x.tolist(), back.tolist() == x.tolist(),
                same.data_ptr() != cl.data_ptr())
    assert go(mt) == go(torch)


def test_legacy_contiguous_format_is_contiguous_format():
    """torch.legacy_contiguous_format is PyTorch's alias of contiguous_format (the same object)."""
    def go(L):
        x = L.zeros(2, 3, 4, 5).contiguous(memory_format=L.channels_last)
        fmt = L.legacy_contiguous_format
        made = [L.zeros_like(x, memory_format=fmt), x.clone(memory_format=fmt), x.contiguous(memory_format=fmt),
                L.empty(2, 3, 4, 5, memory_format=fmt)]
        return (L.legacy_contiguous_format is L.contiguous_format, str(L.legacy_contiguous_format),
                [t.stride() for t in made], x.is_contiguous(memory_format=L.legacy_contiguous_format))
    assert go(mt) == go(torch)
