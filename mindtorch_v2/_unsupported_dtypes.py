"""complex32, uint16/32/64 and the sub-byte int1..int7/uint1..uint7 dtypes exist as names (safetensors,
transformers and diffusers' quantizers list them in dtype tables at import) but mindtorch_v2 has no such
tensors: any use that reaches the core raises NotImplementedError."""
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
# sub-byte integers (PyTorch 2.6+): one byte each, as PyTorch reports them; torch.bit is uint1
int1, int2, int3, int4, int5, int6, int7 = (_make(f"int{b}", 1, "int") for b in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (_make(f"uint{b}", 1, "uint") for b in range(1, 8))
bit = uint1
BY_NAME = {d._name: d for d in (complex32, uint16, uint32, uint64, int1, int2, int3, int4, int5, int6, int7,
                                 uint1, uint2, uint3, uint4, uint5, uint6, uint7)}


def _by_name(name):
    return BY_NAME[name]
