"""grad_fn._saved_<name>: what a C node keeps for its backward, under PyTorch's attribute names.

One table maps a node name to its attributes and where the node keeps each (no per-node code):
("t", k) saved tensor slot k; ("opnd", k, users) operand k, a saved tensor or the Python scalar the
op was called with (wrapped as PyTorch wraps it), None unless an input in users needs a gradient
(PyTorch saves it only for their formulas); ("scalar",) that Python scalar as a number;
("float", k) a float argument; ("int", k) / ("bool", k) an integer argument; ("dims", k) the
reduction dims from integer argument k on; ("in_sizes", i) input i's sizes; ("split_sizes",)
the outputs' sizes along the split dim."""
from .._C import ffi, lib
from .._core import new_out, raise_status
from .._generated_ops import SAVED as _TABLE_SAVED

_SUM_DIMS = {"dim": ("dims", 2), "keepdim": ("bool", 1), "self_sym_sizes": ("in_sizes", 0)}

TABLE = {
    **{f"{n}Backward0": {"self": ("opnd", 0, (0, 1)), "other": ("opnd", 1, (0, 1))} for n in ("Maximum", "Minimum")},
    "AddBackward0": {"alpha": ("float", 0)},
    "SubBackward0": {"alpha": ("float", 0)},
    "RsubBackward1": {"alpha": ("float", 0)},
    "PowBackward0": {"self": ("t", 0), "exponent": ("scalar",)},
    "PowBackward1": {"self": ("t", 0), "exponent": ("t", 1), "result": ("t", 2)},
    "PowBackward2": {"self": ("scalar",), "exponent": ("t", 1), "result": ("t", 2)},
    "MmBackward0": {"self": ("t", 0), "mat2": ("t", 1), "self_sym_sizes": ("in_sizes", 0),
                    "mat2_sym_sizes": ("in_sizes", 1)},
    "SumBackward0": {"self_sym_sizes": ("in_sizes", 0)},
    "SumBackward1": _SUM_DIMS,
    "MeanBackward1": _SUM_DIMS,
    "TransposeBackward0": {"dim0": ("int", 0), "dim1": ("int", 1)},
    "SelectBackward0": {"dim": ("int", 0), "index": ("int", 1), "self_sym_sizes": ("in_sizes", 0)},
    "ViewBackward0": {"self_sym_sizes": ("in_sizes", 0)},
    "UnbindBackward0": {"dim": ("int", 0)},
    "SplitBackward0": {"dim": ("int", 0), "self_sym_sizes": ("in_sizes", 0), "split_size": ("int", 1)},
    "SplitWithSizesBackward0": {"dim": ("int", 0), "self_sym_sizes": ("in_sizes", 0), "split_sizes": ("split_sizes",)},
}
if TABLE.keys() & _TABLE_SAVED.keys():
    raise RuntimeError(f"nodes described twice: {sorted(TABLE.keys() & _TABLE_SAVED.keys())}")
TABLE.update(_TABLE_SAVED)  # the nodes of csrc/ops.tbl's formulas (generated)

_SCALAR_BOOL, _SCALAR_FLOAT = lib.MT_SCALAR_BOOL, lib.MT_SCALAR_FLOAT


def names(node_name):
    return ["_saved_" + k for k in TABLE.get(node_name, ())]


def _number(v):
    return int(v) if float(v).is_integer() else v


def _has_edge(p, i):
    n = lib.mt_node_next(p, i, ffi.new("int *"))
    if n == ffi.NULL:
        return False
    lib.mt_node_release(n)
    return True


def _ints(p):
    iv = ffi.new("int64_t[27]")
    return iv, lib.mt_node_int_args(p, iv)


def _scalar(p):
    s = ffi.new("double[4]")
    lib.mt_node_float_args(p, s)
    kind = int(s[3])
    if kind == _SCALAR_FLOAT:
        return s[1]
    i = _ints(p)[0][1]  # an int/bool scalar is kept whole in the integer arguments
    return bool(i) if kind == _SCALAR_BOOL else int(i)


def _sizes(fn, p, i):
    buf = ffi.new("int64_t[25]")
    nd = fn(p, i, buf)
    return tuple(buf[j] for j in range(nd)) if nd >= 0 else None


def get(p, node_name, attr):
    """the value of grad_fn._saved_<attr> for the C node p (AttributeError if it has none)"""
    spec = TABLE.get(node_name, {}).get(attr)
    if spec is None:
        raise AttributeError(f"'{node_name}' object has no attribute '_saved_{attr}'")
    kind = spec[0]
    if kind == "opnd":
        if not any(_has_edge(p, i) for i in spec[2]):
            return None
        iv, _ = _ints(p)
        if iv[0] == spec[1] + 1:  # that operand was a Python scalar: PyTorch's wrapped number
            from .._creation import tensor
            from .. import _dtype
            v = _scalar(p)
            return tensor(v, dtype=_dtype.float64 if isinstance(v, float) else _dtype.bool if isinstance(v, bool)
                          else _dtype.int64)
        kind, spec = "t", ("t", spec[1])
    if kind == "t":
        from .._tensor import wrap
        out = new_out()
        st = lib.mt_node_saved(p, spec[1], out)
        if st:
            raise_status(st)
        return None if out[0] == ffi.NULL else wrap(out[0])
    if kind == "scalar":
        return _scalar(p)
    if kind == "float":
        s = ffi.new("double[4]")
        lib.mt_node_float_args(p, s)
        return _number(s[spec[1]])
    if kind in ("int", "bool", "dims"):
        iv, niv = _ints(p)
        if kind == "dims":
            return tuple(iv[spec[1] + i] for i in range(niv))
        return bool(iv[spec[1]]) if kind == "bool" else iv[spec[1]]
    if kind == "in_sizes":
        return _sizes(lib.mt_node_input_sizes, p, spec[1])
    if kind == "split_sizes":
        iv, _ = _ints(p)
        return tuple(_sizes(lib.mt_node_output_sizes, p, i)[iv[0]] for i in range(lib.mt_node_num_outputs(p)))
    raise AssertionError(kind)


class SavedTensor:
    """torch._C._autograd.SavedTensor: a tensor a node saved for backward, as grad_fn._raw_saved_<name>
    gives it. Its value is .data; per-tensor pack/unpack hooks are not supported here."""
    __slots__ = ("_value",)

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _of(cls, value):
        obj = object.__new__(cls)
        obj._value = value
        return obj

    @property
    def data(self):
        return self._value

    def register_hooks(self, pack_hook, unpack_hook):
        raise NotImplementedError("torch._C._autograd.SavedTensor.register_hooks is not implemented (use "
                                  "torch.autograd.graph.saved_tensors_hooks)")


def get_raw(p, node_name, attr):
    """grad_fn._raw_saved_<attr>: the saved tensor as a SavedTensor (its data None when nothing was saved)."""
    value = get(p, node_name, attr)
    from .._tensor import Tensor
    if value is not None and not isinstance(value, Tensor):
        raise AttributeError(f"'{node_name}' object has no attribute '_raw_saved_{attr}'")
    return SavedTensor._of(value)
