"""grouped_mm, scaled_mm and scaled_grouped_mm as PyTorch 2.13 runs them on CPU.

grouped_mm is PyTorch's CPU fallback: one mm per group over the jagged slices that `offs` marks (or a
bmm for two 3-D operands), after its layout checks (operands row- or column-major with 16-byte
aligned leading strides) and with its output layout (the last dimension's stride padded to 16 bytes).
Rows or columns past offs[-1] are left uninitialised by PyTorch; here they are zeros.
scaled_mm emulates float8 GEMM in float32 for tensor-wise and row-wise scales, as PyTorch's CPU
kernel does; scaled_grouped_mm has no CPU kernel in PyTorch, and none here."""
import enum

import mindtorch_v2 as _mt
from mindtorch_v2._dtype import scalar_name
from mindtorch_v2._missing import no_kernel_text

__all__ = ["grouped_mm", "scaled_mm", "scaled_grouped_mm", "ScalingType", "SwizzleType"]


class _ScalingType(enum.Enum):
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class _SwizzleType(enum.Enum):
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType, SwizzleType = _ScalingType, _SwizzleType
for _cls in (_ScalingType, _SwizzleType):
    _cls.__module__ = "torch.nn.functional"


def _row_or_column_major(mat):
    """PyTorch's check_valid_strides_and_return_transposed: the last two dims are row- or column-major
    and the leading stride is a multiple of 16 bytes."""
    st, sz = mat.stride(), mat.shape
    align = 16 // mat.element_size()
    if st[-2] == 1 and st[-1] >= max(1, sz[-2]):
        lead = st[-1]
    elif st[-1] == 1 and st[-2] >= max(1, sz[-1]):
        lead = st[-2]
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(st)} for strides and {list(sz)} for sizes")
    if lead % align:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _grouped_out(shape, dtype):
    """zeros of `shape` whose last dimension's stride is padded to 16 bytes (PyTorch's output layout)"""
    align = 16 // dtype.itemsize
    padded = -(-shape[-1] // align) * align
    return _mt.zeros(*shape[:-1], padded, dtype=dtype)[..., :shape[-1]]


def _groups(offs):
    start = 0
    for end in offs.tolist():
        yield start, end
        start = end


def _grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype not in (_mt.float32, _mt.bfloat16, _mt.float16):
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {scalar_name(m.dtype)}")
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    a2, b2 = mat_a.dim() == 2, mat_b.dim() == 2
    if not (a2 and b2) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _row_or_column_major(mat_a)
    _row_or_column_major(mat_b)
    if (offs is not None) != (a2 or b2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype != _mt.int32:
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    dtype = mat_a.dtype if out_dtype is None else out_dtype
    if dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if a2 != b2 and offs.shape[0] != (mat_b if a2 else mat_a).shape[0]:
        raise RuntimeError("matrix batch sizes have to match")
    if not a2 and not b2:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        out = _grouped_out((mat_a.shape[0], mat_a.shape[1], mat_b.shape[-1]), dtype)
        out.copy_(_mt.bmm(mat_a, mat_b))  # through copy_, so the padded layout is kept
        return out
    if a2 and b2:  # the contraction dimension is the jagged one: one output matrix per group
        out = _grouped_out((offs.shape[0], mat_a.shape[0], mat_b.shape[1]), dtype)
        for g, (s, e) in enumerate(_groups(offs)):
            out[g] = mat_a[:, s:e].mm(mat_b[s:e])
    elif a2:  # mat_a's rows are grouped, mat_b holds one matrix per group
        out = _grouped_out((mat_a.shape[0], mat_b.shape[-1]), dtype)
        for g, (s, e) in enumerate(_groups(offs)):
            out[s:e] = mat_a[s:e].mm(mat_b[g])
    else:  # mat_b's columns are grouped
        out = _grouped_out((mat_a.shape[1], mat_b.shape[1]), dtype)
        for g, (s, e) in enumerate(_groups(offs)):
            out[:, s:e] = mat_a[g].mm(mat_b[:, s:e])
    return out


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Matrix products over groups: the slices of a 2-D operand that `offs` (int32 ends) delimit, or
    the first dimension of two 3-D operands."""
    return _grouped_mm(mat_a, mat_b, offs=offs, bias=bias, out_dtype=out_dtype)


def _as_list(v):
    return [] if v is None else (v if isinstance(v, list) else [v])


def _recipe_ints(v):
    return [e.value for e in v]  # PyTorch's binding takes the enums' values (a plain int has none)


def _invalid_scaling(a, b, sa, sb):
    def described(name, s, last):
        if s is None:
            return f"{' and ' if last else ', '}{name}=None"
        return (f", {name}.dtype()={scalar_name(s.dtype)}, {name}.size()={list(s.shape)}"
                f"{' and ' if last else ', '}{name}.stride()={list(s.stride())}")
    raise ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be ({a.shape[0]}, "
        f"1) and scale_b should be (1, {b.shape[1]}), and both should be contiguous.\n"
        f"Got mat_a.dtype()={scalar_name(a.dtype)}{described('scale_a', sa, False)}, "
        f"mat_b.dtype()={scalar_name(b.dtype)}{described('scale_b', sb, True)}")


def _is_float8(t):
    return t.dtype.itemsize == 1 and t.dtype.is_floating_point


def _scaled_mm_v2(mat_a, mat_b, scale_a, recipe_a, swizzle_a, scale_b, recipe_b, swizzle_b, bias=None,
                  out_dtype=None, contraction_dim=(), use_fast_accum=False):
    if mat_a.dim() != 2:
        raise ValueError("mat_a must be a matrix")
    if mat_b.dim() != 2:
        raise ValueError("mat_b must be a matrix")
    (m, k), (k2, n) = mat_a.shape, mat_b.shape
    if contraction_dim:
        if len(contraction_dim) != 2:
            raise ValueError("contraction_dim must have exactly 2 elements")
        da, db = contraction_dim
        if mat_a.shape[da] != mat_b.shape[db]:
            raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n}) "
                             f"with contraction dims mat_a: {da}, mat_b: {db}")
    elif k != k2:
        raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    if bias is not None and bias.numel() != n:
        raise ValueError(f"Bias must be size {n} but got {bias.numel()}")
    dtype = mat_a.dtype if out_dtype is None else out_dtype
    if m == 0 or k == 0 or n == 0:
        return _mt.zeros(m, n, dtype=dtype)
    if bias is not None and bias.dtype not in (_mt.float32, _mt.bfloat16, _mt.float16):
        raise ValueError(f"Bias must be Float32 or BFloat16 or Half, but got {scalar_name(bias.dtype)}")
    if swizzle_a and swizzle_b and (swizzle_a[0] != 0 or swizzle_b[0] != 0):
        raise ValueError("CPU does not support swizzle.")
    sa, sb = (scale_a[0] if scale_a else None), (scale_b[0] if scale_b else None)
    # PyTorch's CPU recipes: float8 operands, one float32 scale each, both tensor-wise or both row-wise
    recipe = None
    if (_is_float8(mat_a) and _is_float8(mat_b) and len(scale_a) == len(recipe_a) == len(scale_b) == len(recipe_b) == 1
            and sa.dtype == _mt.float32 and sb.dtype == _mt.float32 and recipe_a[0] == recipe_b[0] in (0, 1)):
        recipe = recipe_a[0]
    if recipe is None:
        _invalid_scaling(mat_a, mat_b, sa, sb)
    if k != k2:  # reachable through contraction_dim
        raise RuntimeError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    if recipe == 0:
        for name, sc in (("scale_a", sa), ("scale_b", sb)):
            if sc.numel() != 1:
                raise ValueError(f"{name} must have 1 Float element")
    else:
        if sa.size(0) != m or sa.size(1) != 1:
            raise ValueError(f"scale_a must have shape [{m}, 1], got [{list(sa.shape)}]")
        for name, sc, want in (("scale_a", sa, m), ("scale_b", sb, n)):
            if sc.numel() != want:
                raise ValueError(f"{name} must have {want} Float elements, got {sc.numel()}")
        for name, sc in (("scale_a", sa), ("scale_b", sb)):
            if sc.stride(1) != 1:
                raise ValueError(f"expected {name}.stride(1) to be 1, but got {sc.stride(1)}")
    # emulated in float32: tensor-wise scales multiply as their float values
    fa, fb = mat_a.contiguous().float(), mat_b.contiguous().float()
    fa, fb = (fa * sa.item(), fb * sb.item()) if recipe == 0 else (fa * sa, fb * sb)
    out = fa.matmul(fb)
    if bias is not None:
        out = out + bias
    return out.to(dtype)


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
              bias=None, output_dtype=_mt.bfloat16, contraction_dim=(), use_fast_accum=False):
    """mat_a @ mat_b of float8 operands decoded by their scales (tensor-wise or row-wise on CPU)."""
    return _scaled_mm_v2(mat_a, mat_b, _as_list(scale_a), _recipe_ints(_as_list(scale_recipe_a)),
                         _recipe_ints(_as_list(swizzle_a)), _as_list(scale_b), _recipe_ints(_as_list(scale_recipe_b)),
                         _recipe_ints(_as_list(swizzle_b)), bias, output_dtype, contraction_dim, use_fast_accum)


def _scaled_grouped_mm_v2(*args, **kwargs):
    raise NotImplementedError(no_kernel_text("_scaled_grouped_mm_v2"))


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
                      bias=None, offs=None, output_dtype=_mt.bfloat16, contraction_dim=(), use_fast_accum=False):
    """Grouped float8 products: PyTorch has no CPU kernel for them (its dispatcher error)."""
    _recipe_ints(_as_list(scale_recipe_a)), _recipe_ints(_as_list(swizzle_a))
    _recipe_ints(_as_list(scale_recipe_b)), _recipe_ints(_as_list(swizzle_b))
    return _scaled_grouped_mm_v2(mat_a, mat_b, scale_a, scale_b, offs, bias, output_dtype)


FUNCTIONS = {"_grouped_mm": _grouped_mm, "_scaled_mm_v2": _scaled_mm_v2, "_scaled_grouped_mm_v2": _scaled_grouped_mm_v2}
