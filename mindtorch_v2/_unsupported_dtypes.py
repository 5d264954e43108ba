"""complex32 and uint16/32/64 dtypes exist as names (safetensors and transformers list them in dtype tables
at import) but mindtorch_v2 has no such tensors: any use that reaches the core raises
NotImplementedError."""
from ._dtype import dtype


class _UnsupportedDtype(dtype):
    __slots__ = ()

    @property
    def _id(self):
        raise NotImplementedError(f"{self!r} tensors are not implemented in mindtorch_v2")

    def __reduce__(self):
        return (_by_name, (self._name,))


def _make(name, itemsize, kind="complex"):
    d = object.__new__(_UnsupportedDtype)
    for slot, value in (("_name", name), ("itemsize", itemsize), ("is_floating_point", kind == "float"),
                        ("is_signed", kind != "uint"), ("is_complex", kind == "complex")):
        object.__setattr__(d, slot, value)
    return d


complex32 = _make("complex32", 4)
uint16, uint32, uint64 = _make("uint16", 2, "uint"), _make("uint32", 4, "uint"), _make("uint64", 8, "uint")
BY_NAME = {d._name: d for d in (complex32, uint16, uint32, uint64)}


def _by_name(name):
    return BY_NAME[name]
