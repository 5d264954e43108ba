"""torch.FloatTensor, torch.LongTensor, ...: isinstance checks and the legacy constructors."""
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
         "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_legacy_type(name):
    a, b = getattr(mt, name), getattr(torch, name)
    assert repr(a) == repr(b) and str(a.dtype) == str(b.dtype)
    other = mt.float16 if name == "FloatTensor" else mt.float32
    assert isinstance(mt.ones(2, dtype=a.dtype), a) and not isinstance(mt.ones(2, dtype=other), a)
    assert not issubclass(a, mt.Tensor)
    assert a(2, 3).shape == b(2, 3).shape and a(2, 3).dtype == a.dtype
    assert a().shape == b().shape
    assert a(mt.Size([4])).shape == (4,)
    assert a([1, 0]).tolist() == b([1, 0]).tolist()
    assert mt.ones(2, dtype=a.dtype).type() == f"torch.{name}"


def test_legacy_errors():
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        mt.FloatTensor("a")
    with pytest.raises(TypeError):
        mt.FloatTensor(mt.ones(2, dtype=mt.int64))
