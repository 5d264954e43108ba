"""Matrix products: one core call each (OpenBLAS underneath)."""
from ._C import ffi, lib
from ._dispatch import call
from ._tensor import Tensor

_NULL = ffi.NULL


def _h(fn, pos, arg, v):
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
    return _finish(call(lib.mt_mm, _h('mm', 1, 'input', input), _h('mm', 2, 'mat2', mat2), _out(out)), out)


def bmm(input, mat2, *, out=None):
    return _finish(call(lib.mt_bmm, _h('bmm', 1, 'input', input), _h('bmm', 2, 'mat2', mat2), _out(out)), out)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    return _finish(call(lib.mt_addmm, _h('addmm', 1, 'input', input), _h('addmm', 2, 'mat1', mat1),
                        _h('addmm', 3, 'mat2', mat2), beta, alpha, _out(out)), out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return _finish(call(lib.mt_baddbmm, _h('baddbmm', 1, 'input', input), _h('baddbmm', 2, 'batch1', batch1),
                        _h('baddbmm', 3, 'batch2', batch2), beta, alpha, _out(out)), out)


def matmul(input, other, *, out=None):
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    r = call(lib.mt_matmul, _h('matmul', 1, 'input', input), other._h)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def mv(input, vec, *, out=None):
    return call(lib.mt_mv, _h('mv', 1, 'input', input), _h('mv', 2, 'vec', vec))


def dot(input, other, *, out=None):
    return call(lib.mt_dot, _h('dot', 1, 'input', input), _h('dot', 2, 'tensor', other))


def outer(input, vec2, *, out=None):
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    r = matmul(input, weight.t())
    return r if bias is None else r + bias


FUNCTIONS = {"mm": mm, "bmm": bmm, "addmm": addmm, "baddbmm": baddbmm, "matmul": matmul, "mv": mv, "dot": dot,
             "outer": outer, "ger": ger}
