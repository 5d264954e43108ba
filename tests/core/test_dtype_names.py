"""The dtypes that exist here as names only (complex32, uint16/32/64, the sub-byte int1..int7 and
uint1..uint7): the same attributes as PyTorch's, pickled to themselves, and a tensor of one raises."""
import pickle

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

NAMES = ["complex32", "uint16", "uint32", "uint64"] + [f"{k}{b}" for k in ("int", "uint") for b in range(1, 8)]


@pytest.mark.parametrize("name", NAMES)
def test_name_only_dtype(name):
    ours, theirs = getattr(mt, name), getattr(torch, name)
    for attr in ("itemsize", "is_signed", "is_floating_point", "is_complex"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs) and pickle.loads(pickle.dumps(ours)) is ours
    with pytest.raises(NotImplementedError, match=name):
        mt.zeros(2, dtype=ours)


def test_bit_is_uint1():
    assert mt.bit is mt.uint1 and torch.bit is torch.uint1
