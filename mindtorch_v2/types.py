"""torch.types: type aliases used in annotations."""
import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int, \
    str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, Union

from ._device import device as _device
from ._dtype import dtype as _dtype
from ._size import Size
from ._tensor import Tensor

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list, tuple]
_symsize = _size
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
py_sym_types = ()
Number = Union[int, float, bool]
_Number = (int, float, bool)
FileLike = Union[str, os.PathLike, IO[bytes]]
Device = Union[_device, str, int, None]


class Storage:
    pass
