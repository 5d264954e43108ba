"""Complex dtypes exist as names (libraries such as safetensors list them in dtype tables at import)
but mindtorch_v2 has no complex tensors: any use that reaches the core raises NotImplementedError."""
from ._dtype import dtype


class _UnsupportedDtype(dtype):
    __slots__ = ()

    @property
    def _id(self):
        raise NotImplementedError(f"{self!r} tensors are not implemented in mindtorch_v2")

    def __reduce__(self):
        return (_by_name, (self._name,))


def _make(name, itemsize):
    d = object.__new__(_UnsupportedDtype)
    for slot, value in (("_name", name), ("itemsize", itemsize), ("is_floating_point", False),
                        ("is_signed", True), ("is_complex", True)):
        object.__setattr__(d, slot, value)
    return d


complex64 = _make("complex64", 8)
complex128 = _make("complex128", 16)
BY_NAME = {"complex64": complex64, "complex128": complex128}


def _by_name(name):
    return BY_NAME[name]
