"""dtype objects, finfo/iinfo and the default dtype."""
import builtins

from ._C import lib


class dtype:
    """A tensor element type; prints as torch.<name> because PyTorch code parses that."""

    __slots__ = ("_id", "_name", "itemsize", "is_floating_point", "is_signed", "is_complex")

    def __init__(self, id_, name, itemsize, is_float, is_signed, is_complex=False):
        self._id = id_
        self._name = name
        self.itemsize = itemsize
        self.is_floating_point = is_float
        self.is_signed = is_signed
        self.is_complex = is_complex

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self._name,))

    def to_real(self):
        return _TO_REAL.get(self._name, self)

    def to_complex(self):
        if self._name == "float16":
            from ._unsupported_dtypes import complex32
            return complex32  # a name only: using it raises
        if self._name in ("bfloat16", "float32", "complex64"):  # PyTorch's toComplexType
            return complex64
        if self._name in ("float64", "complex128"):
            return complex128
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_name(self)}")


bool = dtype(lib.MT_BOOL, "bool", 1, False, False)
uint8 = dtype(lib.MT_U8, "uint8", 1, False, False)
int8 = dtype(lib.MT_I8, "int8", 1, False, True)
int16 = dtype(lib.MT_I16, "int16", 2, False, True)
int32 = dtype(lib.MT_I32, "int32", 4, False, True)
int64 = dtype(lib.MT_I64, "int64", 8, False, True)
float16 = dtype(lib.MT_F16, "float16", 2, True, True)
bfloat16 = dtype(lib.MT_BF16, "bfloat16", 2, True, True)
float32 = dtype(lib.MT_F32, "float32", 4, True, True)
float64 = dtype(lib.MT_F64, "float64", 8, True, True)
# the dtype a Python type names where PyTorch's argument parser takes one (dtype=float)
PYTHON_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool}
# storage and conversion only, as on PyTorch's CPU (csrc/core/internal.h)
float8_e5m2 = dtype(lib.MT_F8E5M2, "float8_e5m2", 1, True, True)
float8_e4m3fn = dtype(lib.MT_F8E4M3FN, "float8_e4m3fn", 1, True, True)
float8_e5m2fnuz = dtype(lib.MT_F8E5M2FNUZ, "float8_e5m2fnuz", 1, True, True)
float8_e4m3fnuz = dtype(lib.MT_F8E4M3FNUZ, "float8_e4m3fnuz", 1, True, True)
float8_e8m0fnu = dtype(lib.MT_F8E8M0FNU, "float8_e8m0fnu", 1, True, False)
complex64 = dtype(lib.MT_C64, "complex64", 8, False, True, True)
complex128 = dtype(lib.MT_C128, "complex128", 16, False, True, True)
_TO_REAL = {"complex64": float32, "complex128": float64}  # to_real(); other dtypes map to themselves

BY_ID = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
         float8_e5m2, float8_e4m3fn, float8_e5m2fnuz, float8_e4m3fnuz, float8_e8m0fnu, complex64, complex128)
assert len(BY_ID) == lib.MT_NUM_DTYPES and all(d._id == i for i, d in enumerate(BY_ID))
FLOAT8 = BY_ID[lib.MT_F8E5M2:lib.MT_F8E8M0FNU + 1]
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
           "long": int64, "cfloat": complex64, "cdouble": complex128}


def _dtype_by_name(name):
    return globals()[name]


def from_id(i):
    """the dtype of a core dtype id; -1 (mt_promote_types, mt_result_type) raises the core's error"""
    if i < 0:
        from ._core import raise_status
        raise_status(lib.MT_ERR_RUNTIME)
    return BY_ID[i]


def get_default_dtype():
    return BY_ID[lib.mt_get_default_dtype()]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if d in FLOAT8:  # PyTorch looks for the legacy storage class first
        raise TypeError(f"couldn't find storage object {scalar_name(d)}Storage")
    lib.mt_set_default_dtype(d._id)


def promote_types(type1, type2):
    return from_id(lib.mt_promote_types(type1._id, type2._id))


def can_cast(from_, to):
    return builtins.bool(lib.mt_can_cast(from_._id, to._id))


class finfo:
    """Machine limits of a floating dtype (PyTorch's torch.finfo)."""

    _TABLE = {
        # bits, eps, max, tiny (smallest normal), smallest subnormal, resolution[, min if not -max]
        "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 5.960464477539063e-08, 0.001),
        "float8_e5m2": (8, 0.25, 57344.0, 2.0 ** -14, 2.0 ** -16, 1.0),
        "float8_e4m3fn": (8, 0.125, 448.0, 2.0 ** -6, 2.0 ** -9, 1.0),
        "float8_e5m2fnuz": (8, 0.125, 57344.0, 2.0 ** -15, 2.0 ** -17, 1.0),
        "float8_e4m3fnuz": (8, 0.125, 240.0, 2.0 ** -7, 2.0 ** -10, 1.0),
        # unsigned powers of two: lowest is the smallest one, and there are no subnormals
        "float8_e8m0fnu": (8, 1.0, 2.0 ** 127, 2.0 ** -127, 2.0 ** -127, 1.0, 2.0 ** -127),
        "bfloat16": (16, 0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 9.183549615799121e-41, 0.01),
        "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38,
                    1.401298464324817e-45, 1e-06),
        "float64": (64, 2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308,
                    5e-324, 1e-15),
    }

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else type
        type = _TO_REAL.get(getattr(type, "_name", None), type)  # a complex dtype: its parts' limits
        if type._name not in self._TABLE:
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not {type}"
                            if not isinstance(type, dtype) else
                            "torch.finfo() requires a floating point input type. Use torch.iinfo to "
                            "handle 'torch.finfo'")
        bits, eps, max_, tiny, sub, res, *min_ = self._TABLE[type._name]
        self.bits, self.eps, self.max, self.min = bits, eps, max_, min_[0] if min_ else -max_
        self.tiny = self.smallest_normal = tiny
        self.smallest_subnormal = sub
        self.resolution = res
        self.dtype = type._name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (PyTorch's torch.iinfo)."""

    def __init__(self, type):
        if not isinstance(type, dtype) or type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        bits = type.itemsize * 8
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        self.bits = bits
        self.dtype = type._name
        if type.is_signed:
            self.min, self.max = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            self.min, self.max = 0, (1 << bits) - 1

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# ---- names PyTorch's messages use for a dtype ------------------------------------------------
# ScalarType names ("BFloat16") and C++ type names ("c10::BFloat16"), keyed by dtype name
SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                **{d._name: "F" + d._name[1:] for d in FLOAT8}, "complex64": "ComplexFloat",
                "complex128": "ComplexDouble"}
CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
             "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", **{d._name: "c10::F" + d._name[1:] for d in FLOAT8},
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def scalar_name(d):
    """'BFloat16' for torch.bfloat16 (a dtype or a tensor)."""
    return SCALAR_NAMES[getattr(d, "dtype", d)._name]


# ---- Python scalars stored into a dtype: PyTorch's c10::checked_convert --------------------
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e+38, "float32": 3.4028234663852886e+38}


def check_scalar(value, d, name=None):
    """Raise PyTorch's RuntimeError if a Python number overflows dtype d (fill_, full, setitem,
    tensor(data, dtype=...)). Integers may wrap into unsigned types from as low as -max; NaN and
    infinities only fit floating types. name overrides the C type name in the message."""
    if d is bool or isinstance(value, builtins.bool):
        return
    if isinstance(value, builtins.complex) or d.is_complex:
        # c10's checked conversion: each part within the real type's range; a nonzero imaginary
        # part never fits a real type
        value = builtins.complex(value)
        if not d.is_complex and value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {name or _C_NAMES[d._name]} without overflow")
        part = _TO_REAL.get(d._name, d)
        try:
            for v in (value.real, value.imag) if d.is_complex else (value.real,):
                check_scalar(v, part)
        except RuntimeError:
            raise RuntimeError(f"value cannot be converted to type {name or _C_NAMES[d._name]} without overflow") from None
        return
    if d.is_floating_point:
        lim = _FLOAT_MAX.get(d._name)
        if lim is None or value != value or value in (float("inf"), float("-inf")) or -lim <= value <= lim:
            return
    else:
        bits = d.itemsize * 8
        hi = (1 << bits) - 1 if d is uint8 else (1 << (bits - 1)) - 1
        lo = -hi if d is uint8 and isinstance(value, int) else (0 if d is uint8 else -hi - 1)
        if isinstance(value, int):
            if lo <= value <= hi:
                return
        elif value == value and lo <= value <= (2.0 ** 63 if d is int64 else hi):
            return
    raise RuntimeError(f"value cannot be converted to type {name or _C_NAMES[d._name]} without overflow")
