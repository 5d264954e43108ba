"""torch.sparse: sparse COO/CSR tensors and their ops (the tensor type itself is in _tensor.py, imported on
first use: defining it installs the __torch_function__ wrappers; docs/ARCHITECTURE.md, "Sparse tensors")."""
from . import _state
from .._legacy_types import SPARSE_TYPES as _SPARSE_TYPES
from .._missing import no_kernel_text as _no_kernel_text

__all__ = ["addmm", "check_sparse_tensor_invariants", "mm", "sum", "softmax", "log_softmax", "spdiags",
           "to_sparse_semi_structured", "as_sparse_gradcheck"]
globals().update(_SPARSE_TYPES)  # the legacy types: torch.sparse.FloatTensor, ...


def _impl():
    from . import _tensor
    return _tensor


def _want_sparse(t, fn):
    from .._tensor import Tensor
    if not isinstance(t, Tensor) or t.layout._name == "strided":
        raise RuntimeError(f"{fn}: expected a sparse tensor, but got a "
                           f"{'strided' if isinstance(t, Tensor) else type(t).__name__} one")


def mm(mat1, mat2, reduce=None):
    """Sparse mat1 @ (sparse or dense) mat2; sparse @ sparse is sparse, sparse @ dense dense."""
    if reduce is not None:
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}) is not implemented")
    return _impl().mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (sparse mat1 @ dense mat2)."""
    return _impl().addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum over dim (every dim by default): dense once every sparse dim is summed, else sparse."""
    _want_sparse(input, "torch.sparse.sum")
    return _impl().sparse_sum(input, dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """Softmax along dim over the specified entries only (unspecified ones count as -inf)."""
    return _impl().softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _impl().log_softmax(input, dim, dtype)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at the specified entries of the CSR input only."""
    return _impl().sampled_addmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)


def _backend(*tensors):
    names = {"sparse_coo": "SparseCPU", "sparse_csr": "SparseCsrCPU"}
    return next((names[t.layout._name] for t in tensors if t.layout._name in names), "CPU")


def spsolve(input, other, *, left=True):
    """PyTorch 2.13 solves sparse CSR systems only with CUDA's cuDSS: its CPU build has no kernel for
    aten::_spsolve and raises the dispatcher's error, as this does."""
    from .._tensor import Tensor
    for pos, (name, t) in enumerate((("A", input), ("B", other)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"_spsolve(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    raise NotImplementedError(_no_kernel_text("_spsolve", _backend(input, other)))


def to_sparse_semi_structured(original_tensor, transposed=False, alg_id=0):
    """2:4 semi-structured sparsity runs on CUDA kernels (CUTLASS / cuSPARSELt) only: PyTorch refuses every
    CPU tensor with this error, and every tensor here is a CPU one."""
    import warnings
    if transposed:
        warnings.warn("Setting transpose from `to_sparse_semi_structured` is deprecated and will be removed in a "
                      "future release. `SparseSemiStructuredTensor` only support contiguous input tensors.",
                      FutureWarning, stacklevel=2)
    raise RuntimeError(f"Error original_tensor.device= {original_tensor.device} is not supported! Only CUDA "
                       "tensors are currently supported.")


def as_sparse_gradcheck(gradcheck):
    """Wraps gradcheck (torch.autograd.gradcheck or a partial of it) so that func may take and return sparse
    tensors: each sparse input that requires grad reaches gradcheck as its values (a strided tensor, every
    element specified unless masked=True), and is rebuilt around them for func; sparse outputs that require
    grad are made dense."""
    def checked(func, inputs, **kwargs):
        import mindtorch_v2 as torch
        masked = kwargs.pop("masked", False)
        marker = object()  # follows each converted input: then its pattern, then its values

        def flatten(args):
            flat = []
            for a in args if isinstance(args, (list, tuple)) else (args,):
                if isinstance(a, torch.Tensor) and a.requires_grad and a.layout._name != "strided":
                    if not masked:  # every element specified, the unspecified ones as zeros
                        a = a.to_dense().sparse_mask(torch.ones(a.shape, dtype=torch.bool).to_sparse(
                            layout=a.layout))
                    if a.layout is torch.sparse_coo:
                        pattern = (a.layout, a.shape, a._indices(), a.is_coalesced())
                    else:
                        pattern = (a.layout, a.shape, a.crow_indices(), a.col_indices())
                    flat += [marker, pattern, a.values().requires_grad_(True)]
                else:
                    flat.append(a)
            return tuple(flat)

        def rebuild(flat):
            args, rest = [], list(flat)
            while rest:
                a = rest.pop(0)
                if a is marker:
                    (layout, shape, i, j), values = rest.pop(0), rest.pop(0)
                    a = (torch.sparse_coo_tensor(i, values, shape, is_coalesced=j) if layout is torch.sparse_coo
                         else torch.sparse_csr_tensor(i, j, values, shape))
                args.append(a)
            return args

        def dense_func(*flat, **kw):
            out = func(*rebuild(flat), **kw)
            outs = [o.to_dense(masked_grad=masked) if isinstance(o, torch.Tensor) and o.requires_grad
                    and o.layout._name != "strided" else o for o in (out if isinstance(out, (list, tuple)) else (out,))]
            return tuple(outs) if isinstance(out, (list, tuple)) else outs[0]

        return gradcheck(dense_func, flatten(inputs), **kwargs)
    return checked


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of shape with row k of diagonals on diagonal offsets[k] (column c takes
    diagonals[k, c], scipy's convention)."""
    import mindtorch_v2 as torch
    if diagonals.dim() != 2:
        raise RuntimeError(f"Diagonals must be vector or matrix")
    if offsets.dim() != 1 or offsets.shape[0] != diagonals.shape[0]:
        raise RuntimeError("Number of diagonals (" + str(diagonals.shape[0]) + ") does not match the number of "
                           "offsets (" + str(offsets.shape[0] if offsets.dim() else 1) + ")")
    offs = offsets.tolist()
    if len(set(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    nrows, ncols = shape
    rows, cols, take = [], [], []
    for k, off in enumerate(offs):
        c = torch.arange(max(0, off), min(ncols, nrows + off, diagonals.shape[1]))
        rows.append(c - off)
        cols.append(c)
        take.append(c + k * diagonals.shape[1])
    idx = torch.stack([torch.cat(rows), torch.cat(cols)]) if offs else torch.zeros(2, 0, dtype=torch.int64)
    vals = diagonals.reshape(-1)[torch.cat(take)] if offs else diagonals.reshape(-1)[:0]
    r = _impl()._coo(idx, vals, (nrows, ncols))
    if layout is None or layout is torch.sparse_coo:
        return r
    if layout is torch.sparse_csr:
        return r.to_sparse_csr()
    raise RuntimeError(f"Only sparse_coo and sparse_csr layouts are supported, got {layout}")


class check_sparse_tensor_invariants:
    """Turns the invariant checks of sparse constructors on (or off) by default: as a context manager, a
    decorator, or process-wide through enable()/disable()."""

    @staticmethod
    def is_enabled():
        return _state.checks()

    @staticmethod
    def enable():
        _state.set_checks(True)

    @staticmethod
    def disable():
        _state.set_checks(False)

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context "
                               "manager instance for context nesting.")
        self.saved_state = _state.checks()
        _state.set_checks(self.state)

    def __exit__(self, *exc):
        _state.set_checks(self.saved_state)
        self.saved_state = None

    def __call__(self, mth):
        def checked(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return checked


# ---- torch.* factories and the dense side of the sparse Tensor methods (registered by _methods) ----

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    return _impl().sparse_coo_tensor(indices, values, size, dtype=dtype, requires_grad=requires_grad,
                                     check_invariants=check_invariants, is_coalesced=is_coalesced)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    return _impl().sparse_csr_tensor(crow_indices, col_indices, values, size, dtype=dtype,
                                     requires_grad=requires_grad, check_invariants=check_invariants)


def _to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    import mindtorch_v2 as torch
    if layout is torch.sparse_csr:
        return _impl().dense_to_csr(self)
    if layout not in (None, torch.sparse_coo):
        raise NotImplementedError(f"to_sparse(layout={layout}) is not implemented")
    return _impl().dense_to_sparse(self, sparse_dim)


def _to_sparse_coo(self):
    return _impl().dense_to_sparse(self)


def _to_sparse_csr(self, dense_dim=None):
    return _impl().dense_to_csr(self)


def _sparse_mask(self, mask):
    return _impl().sparse_mask(self, mask)


def _wrong_layout(name, want):
    def method(self):
        raise RuntimeError(f"{name} expected {want} layout but got Strided")
    method.__name__ = name
    return method


def _no_cpu_kernel(name):
    def method(self):
        raise NotImplementedError(_no_kernel_text(name))
    method.__name__ = name
    return method


FUNCTIONS = {"sparse_coo_tensor": sparse_coo_tensor, "sparse_csr_tensor": sparse_csr_tensor}
METHODS = {
    "to_sparse": _to_sparse, "to_sparse_coo": _to_sparse_coo, "to_sparse_csr": _to_sparse_csr,
    "sparse_mask": _sparse_mask,
    "sparse_dim": lambda self: 0, "dense_dim": lambda self: self.dim(),
    "indices": _wrong_layout("indices", "sparse coordinate tensor"),
    "values": _wrong_layout("values", "sparse tensor"),
    "is_coalesced": _wrong_layout("is_coalesced", "sparse coordinate tensor"),
    "coalesce": _wrong_layout("coalesce", "sparse coordinate tensor"),
    "crow_indices": _wrong_layout("crow_indices", "sparse row compressed tensor"),
    "col_indices": _wrong_layout("col_indices", "sparse row compressed tensor"),
    "_indices": _no_cpu_kernel("_indices"), "_values": _no_cpu_kernel("_values"), "_nnz": _no_cpu_kernel("_nnz"),
}
