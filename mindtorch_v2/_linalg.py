"""Matrix products: one core call each (OpenBLAS underneath)."""
from . import _autocast as _ac
from ._C import ffi, lib
from . import _dtype
from ._dispatch import call
from ._tensor import Tensor

_NULL = ffi.NULL


def _tensor_handle(fn, pos, arg, v):
    """The handle of a Tensor argument, or PyTorch's TypeError for anything else."""
    try:
        return v._h
    except AttributeError:
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}") from None


def _out(out):
    return _NULL if out is None else out._h


def _finish(t, out):
    if out is not None:
        out._shape = None
        return out
    return t


def mm(input, mat2, *, out=None):
    if _ac.ACTIVE[0]:
        input, mat2 = _ac.lower(input, mat2)
    return _finish(call(lib.mt_mm, _tensor_handle('mm', 1, 'input', input), _tensor_handle('mm', 2, 'mat2', mat2), _out(out)), out)


def bmm(input, mat2, *, out=None):
    if _ac.ACTIVE[0]:
        input, mat2 = _ac.lower(input, mat2)
    return _finish(call(lib.mt_bmm, _tensor_handle('bmm', 1, 'input', input), _tensor_handle('bmm', 2, 'mat2', mat2), _out(out)), out)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if _ac.ACTIVE[0]:
        input, mat1, mat2 = _ac.lower(input, mat1, mat2)
    return _finish(call(lib.mt_addmm, _tensor_handle('addmm', 1, 'input', input), _tensor_handle('addmm', 2, 'mat1', mat1),
                        _tensor_handle('addmm', 3, 'mat2', mat2), beta, alpha, _out(out)), out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if _ac.ACTIVE[0]:
        input, batch1, batch2 = _ac.lower(input, batch1, batch2)
    return _finish(call(lib.mt_baddbmm, _tensor_handle('baddbmm', 1, 'input', input), _tensor_handle('baddbmm', 2, 'batch1', batch1),
                        _tensor_handle('baddbmm', 3, 'batch2', batch2), beta, alpha, _out(out)), out)


def matmul(input, other, *, out=None):
    if _ac.ACTIVE[0]:
        input, other = _ac.lower(input, other)
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    r = call(lib.mt_matmul, _tensor_handle('matmul', 1, 'input', input), other._h)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def mv(input, vec, *, out=None):
    return call(lib.mt_mv, _tensor_handle('mv', 1, 'input', input), _tensor_handle('mv', 2, 'vec', vec))


def dot(input, other, *, out=None):
    return call(lib.mt_dot, _tensor_handle('dot', 1, 'input', input), _tensor_handle('dot', 2, 'tensor', other))


def outer(input, vec2, *, out=None):
    if input.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    r = input.reshape(-1, 1) * vec2  # PyTorch composes it the same way (MulBackward0)
    return _into(r, out)


ger = outer


def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    r = matmul(input, weight.t())
    return r if bias is None else r + bias


def _into(r, out):
    if out is None:
        return r
    out.resize_(r.shape).copy_(r)
    return out


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    return _finish(call(lib.mt_addmv, input._h, mat._h, vec._h, beta, alpha, _out(out)), out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    return _finish(call(lib.mt_addr, input._h, vec1._h, vec2._h, beta, alpha, _out(out)), out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if _ac.ACTIVE[0]:
        input, batch1, batch2 = _ac.lower(input, batch1, batch2)
    return _finish(call(lib.mt_addbmm, input._h, batch1._h, batch2._h, beta, alpha, _out(out)), out)


def _inplace(fn):
    def method(self, *args, beta=1, alpha=1):
        return fn(self, *args, beta=beta, alpha=alpha, out=self)
    method.__name__ = fn.__name__ + "_"
    return method


def vdot(input, other, *, out=None):
    return _into(call(lib.mt_vdot, input._h, other._h), out)


def inner(input, other, *, out=None):
    if input.dim() == 0 or other.dim() == 0:
        return _into(input * other, out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _into(_tensordot(input, other, [-1], [-1]), out)


def _tensordot(a, b, dims_a, dims_b):
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return call(lib.mt_tensordot, a._h, b._h, len(dims_a), list(dims_a), list(dims_b))


def tensordot(a, b, dims=2, out=None):
    from_tensor = isinstance(dims, Tensor)
    if from_tensor:
        dims = dims.tolist()
    if isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise RuntimeError(f"tensordot expects dims to be a pair of dimension lists, got {dims}")
        da, db = dims
        if not isinstance(da, (list, tuple)):
            raise TypeError(f"tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not "
                            f"{type(da).__name__}")
        if not isinstance(db, (list, tuple)):
            raise TypeError(f"tensordot(): argument 'dims_other' (position 4) must be tuple of ints, not "
                            f"{type(db).__name__}")
        da, db = list(da), list(db)
    else:
        dims = dims.__index__()
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if not from_tensor and dims > min(a.dim(), b.dim()):  # before the dim lists (a huge dims: no memory)
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    return _into(_tensordot(a, b, da, db), out)


def kron(input, other, *, out=None):
    nd = max(input.dim(), other.dim())
    pa, pb = nd - input.dim(), nd - other.dim()
    ar, br, rr = [], [], []
    for i in range(nd):
        sa = input.shape[i - pa] if i >= pa else 1
        sb = other.shape[i - pb] if i >= pb else 1
        ar += [sa, 1]
        br += [1, sb]
        rr.append(sa * sb)
    return _into((input.reshape(ar) * other.reshape(br)).reshape(rr), out)


_CPP = [_dtype.CPP_NAMES[d._name] for d in _dtype.BY_ID]


def multi_dot(tensors, *, out=None):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(1, n):
        if tensors[i].dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_CPP[first.dtype._id]} and tensor {i} {_CPP[tensors[i].dtype._id]}")
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            a, b = mats[i].shape, mats[i + 1].shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {a[0]}x{a[1]} and {b[0]}x{b[1]} "
                               "cannot be multiplied")
    # the cheapest parenthesisation (matrix chain order), as PyTorch picks it
    p = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    if n == 2:
        r = mm(mats[0], mats[1])
    elif n == 3:
        a, b, c, d = p
        r = mm(mm(mats[0], mats[1]), mats[2]) if a * b * c + a * c * d < b * c * d + a * b * d \
            else mm(mats[0], mm(mats[1], mats[2]))
    else:
        cost = [[0] * n for _ in range(n)]
        split = [[0] * n for _ in range(n)]
        for length in range(1, n):
            for i in range(n - length):
                j = i + length
                cost[i][j] = None
                for k in range(i, j):
                    q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                    if cost[i][j] is None or q < cost[i][j]:
                        cost[i][j], split[i][j] = q, k

        def chain(i, j):
            if i == j:
                return mats[i]
            k = split[i][j]
            return mm(chain(i, k), chain(k + 1, j))
        r = chain(0, n - 1)
    if first.dim() == 1 and last.dim() == 1:
        r = r.reshape(())
    elif first.dim() == 1:
        r = r.squeeze(0)
    elif last.dim() == 1:
        r = r.squeeze(1)
    return _into(r, out)


def chain_matmul(*matrices, out=None):
    import warnings
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return _into(matrices[0].clone(), out)
    return multi_dot(matrices, out=out)


def _sublist(args):
    """einsum(op0, sub0, op1, sub1, ..., [out]) -> the equation string and the operands."""
    def term(sub):
        s = ""
        for x in sub:
            if x is Ellipsis:
                s += "..."
            else:
                x = x.__index__()
                if not 0 <= x < 52:
                    raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52)")
                s += chr(ord("A") + x) if x < 26 else chr(ord("a") + x - 26)
        return s
    n = len(args) // 2  # (operand, sublist) pairs, then an optional output sublist
    ops, terms = list(args[0:2 * n:2]), [term(s) for s in args[1:2 * n:2]]
    eq = ",".join(terms)
    if len(args) % 2:
        eq += "->" + term(args[-1])
    return eq, ops


def einsum(*args):
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        eq, ops = _sublist(args)
    else:
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    hs = [o._h for o in ops]
    return call(lib.mt_einsum, eq.encode(), len(hs), hs)


def linalg_cross(input, other, *, dim=-1, out=None):
    return _into(call(lib.mt_cross, input._h, other._h, dim), out)


def cross(input, other, dim=None, *, out=None):
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", stacklevel=2)
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim, out=out)


FUNCTIONS = {"mm": mm, "bmm": bmm, "addmm": addmm, "baddbmm": baddbmm, "matmul": matmul, "mv": mv, "dot": dot,
             "outer": outer, "ger": ger, "addmv": addmv, "addr": addr, "addbmm": addbmm, "vdot": vdot,
             "inner": inner, "tensordot": tensordot, "kron": kron, "chain_matmul": chain_matmul, "einsum": einsum,
             "cross": cross}
METHODS = {k: f for k, f in FUNCTIONS.items() if k not in ("tensordot", "chain_matmul", "einsum")}
METHODS.update({"addmv_": _inplace(addmv), "addr_": _inplace(addr), "addbmm_": _inplace(addbmm),
                "baddbmm_": _inplace(baddbmm), "addmm_": _inplace(addmm)})
FUNCTIONS["addmv_"] = METHODS["addmv_"]  # the one PyTorch also has as torch.<name>_
