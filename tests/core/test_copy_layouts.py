"""Same-dtype copies between layouts: transposes (moved by 16x16 tiles when the two fastest dims swap,
kernels/cpu/copy.c), reversed rows (flip's innermost dim), and the *_copy views, bit for bit against
numpy and live PyTorch, for every element width, batched, strided and ragged shapes."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

WIDTHS = ["bool", "uint8", "int16", "float16", "bfloat16", "float32", "int32", "float64", "int64", "complex64",
          "complex128"]


def make(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-100, 100, size=shape)
    if dtype == "bool":
        a = a > 0
    elif dtype == "uint8":
        a = np.abs(a)
    elif dtype.startswith("complex"):
        a = a + 1j * rng.integers(-9, 9, size=shape)
    return (mt.tensor(a.tolist(), dtype=getattr(mt, dtype)) if a.ndim else mt.tensor(a.item()),
            torch.tensor(a.tolist(), dtype=getattr(torch, dtype)))


def same(m, t):
    assert tuple(m.shape) == tuple(t.shape) and tuple(m.stride()) == tuple(t.stride()), (m.stride(), t.stride())
    assert str(m.dtype) == str(t.dtype)
    if m.dtype == mt.bfloat16:
        m, t = m.float(), t.float()
    assert np.array_equal(m.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", WIDTHS)
def test_transposed_copies(dtype):
    m, t = make((3, 70, 45), dtype)
    for f in (lambda x: x[0].t().contiguous(), lambda x: x.transpose(1, 2).contiguous(),
              lambda x: x.permute(2, 0, 1).contiguous(), lambda x: x.permute(1, 2, 0).contiguous(),
              lambda x: x[:, ::2, 1:].transpose(1, 2).contiguous(),  # strided rows, offset
              lambda x: x.transpose(1, 2).clone(memory_format=torch.contiguous_format if isinstance(x, torch.Tensor)
                                                else mt.contiguous_format),
              lambda x: x.transpose(1, 2).to(x.dtype, copy=True), lambda x: x[1].t_copy() if hasattr(x, "t_copy")
              else None):
        r = f(m)
        if r is not None:
            same(r, f(t))
    ys = []
    for L, x in ((mt, m), (torch, t)):  # copy_ into a transposed destination
        ys.append(L.zeros(3, 45, 70, dtype=x.dtype))
        ys[-1].transpose(1, 2).copy_(x)
    same(*ys)
    same(mt.t_copy(m[0]), torch.t_copy(t[0]))
    same(mt.transpose_copy(m, 0, 2), torch.transpose_copy(t, 0, 2))


@pytest.mark.parametrize("dtype", WIDTHS)
def test_flips_and_rotations(dtype):
    m, t = make((5, 33, 67), dtype, seed=1)
    for f in (lambda L, x: L.flip(x, [2]), lambda L, x: L.flip(x, [0, 2]), lambda L, x: L.fliplr(x[0]),
              lambda L, x: L.flipud(x[0]), lambda L, x: L.rot90(x[0]), lambda L, x: L.rot90(x, 2, [1, 2]),
              lambda L, x: L.rot90(x, -1, [0, 2]), lambda L, x: L.flip(x[:, ::3, 1:], [2]),
              lambda L, x: L.flip(x.transpose(1, 2), [1])):
        same(f(mt, m), f(torch, t))
    ys = []
    for x in (m, t):  # a flipped view copied into its own storage: through a temporary
        ys.append(x.clone())
        ys[-1].copy_(ys[-1].flip(2))
    same(*ys)
    same(ys[0], t.flip(2))


def test_unbind_copy_is_fresh():
    m, t = make((6, 40), "float32")
    rm, rt = mt.unbind_copy(m), torch.unbind_copy(t)
    for a, b in zip(rm, rt):
        same(a, b)
        assert a._base is None
    rm[0][0] = 1e6
    assert m[0, 0].item() != 1e6 and rm[1][0].item() == m[1, 0].item()
