"""torch._opaque_base.OpaqueBase: the base of opaque objects, Python values custom ops take and return
unchanged. isinstance(x, OpaqueBase) asks whether type(x) is a registered opaque type; mindtorch_v2 has no
torch.library opaque-type registration, so no type is registered and the answer is False, as PyTorch's for an
unregistered type. Concrete subclasses check as ordinary classes."""


class OpaqueBaseMeta(type):
    def __instancecheck__(cls, instance):
        if cls is OpaqueBase:
            return is_opaque_type(type(instance))
        return super().__instancecheck__(instance)


class OpaqueBase(metaclass=OpaqueBaseMeta):
    pass


_REGISTERED = {}  # type -> "value" | "reference": empty, nothing registers opaque types here


def is_opaque_type(cls):
    return cls in _REGISTERED


def is_opaque_reference_type(cls):
    """Whether cls is a registered opaque reference type."""
    return _REGISTERED.get(cls) == "reference"
