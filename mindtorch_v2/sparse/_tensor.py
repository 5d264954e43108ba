"""Sparse COO and CSR tensors (docs/ARCHITECTURE.md, "Sparse tensors").

A SparseTensor is a Tensor subclass whose C handle is a meta header of the sparse shape and dtype (no
bytes); its contents are dense mindtorch_v2 tensors kept in the wrapper: COO indices (sparse_dim, nnz) and
values (nnz, *dense_sizes), or CSR crow/col indices and values. Every op is written with dense ops on
those (index_add, gather, unique, searchsorted), so it costs O(nnz), and autograd records through the
values: a sparse leaf's gradient is its values' gradient over its own pattern. torch.* functions and
Tensor methods reach this module through __torch_function__, so importing it installs the protocol's
wrappers: it is imported on the first sparse tensor, not at `import torch`.
"""
import mindtorch_v2 as torch
from .._size import Size
from .. import _methods
from .._missing import no_kernel_text as _no_kernel_text
from .._tensor import Tensor
from ..overrides import DisableTorchFunctionSubclass
from . import _state

_BACKEND = {"sparse_coo": "SparseCPU", "sparse_csr": "SparseCsrCPU"}


def _not_supported(name, layout):
    return NotImplementedError(_no_kernel_text(name, _BACKEND[layout._name]))


class SparseTensor(Tensor):
    """A sparse COO or CSR tensor (layout torch.sparse_coo / torch.sparse_csr)."""

    __slots__ = ()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = _func_name(func)
        impl = _IMPL.get(name)
        if impl is None:
            first = next(a for a in _flat(args, kwargs) if isinstance(a, SparseTensor))
            raise _not_supported(name, first.layout)
        with DisableTorchFunctionSubclass():
            return impl(*args, **(kwargs or {}))

    # ---- metadata -------------------------------------------------------------------------
    @property
    def layout(self):
        return self._sp_layout

    @property
    def is_sparse(self):
        return self._sp_layout is torch.sparse_coo

    @property
    def is_sparse_csr(self):
        return self._sp_layout is torch.sparse_csr

    @property
    def device(self):
        return self._sp_values.device

    is_meta = False
    is_cpu = True

    def stride(self, dim=None):
        if self.is_sparse_csr:
            raise RuntimeError("Sparse CSR tensors do not have strides")
        # PyTorch 2.13 answers zeros for a COO tensor
        return (0,) * self.dim() if dim is None else 0

    def is_contiguous(self, memory_format=None):
        if self.is_sparse_csr:
            raise RuntimeError("Sparse CSR tensors do not have is_contiguous")
        return False

    def storage_offset(self):
        raise RuntimeError(f"Cannot access storage of {self._impl_name()}")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError(f"Cannot access storage of {self._impl_name()}")

    storage = _typed_storage = untyped_storage

    def _impl_name(self):
        return "SparseTensorImpl" if self.is_sparse else "SparseCsrTensorImpl"

    def sparse_dim(self):
        return self._sp_indices.shape[0] if self.is_sparse else 2

    def dense_dim(self):
        return self._sp_values.dim() - 1

    def _nnz(self):
        return self._sp_values.shape[0]

    def is_coalesced(self):
        if not self.is_sparse:
            raise RuntimeError(f"is_coalesced expected sparse coordinate tensor layout but got {_lname(self)}")
        return self._sp_coalesced

    def _coalesced_(self, flag):
        self.__dict__["_sp_coalesced"] = bool(flag)
        return self

    def indices(self):
        self._want_coo("indices")
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    def values(self):
        if self.is_sparse and not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_values

    def _indices(self):
        self._want_coo("_indices")
        return self._sp_indices

    def _values(self):
        self._want_coo("_values")
        return self._sp_values

    def crow_indices(self):
        self._want_csr("crow_indices")
        return self._sp_crow

    def col_indices(self):
        self._want_csr("col_indices")
        return self._sp_col

    def _want_coo(self, name):
        if not self.is_sparse:
            raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got {_lname(self)}")

    def _want_csr(self, name):
        if not self.is_sparse_csr:
            raise RuntimeError(f"{name} expected sparse row compressed tensor layout but got {_lname(self)}")

    # ---- autograd: carried by the values ------------------------------------------------------
    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._sp_values.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        g = self._sp_values.grad
        return None if g is None else self._with_values(g)

    @grad.setter
    def grad(self, value):
        self._sp_values.grad = None if value is None else _same_pattern_values(self, value)

    @grad.deleter
    def grad(self):
        self._sp_values.grad = None

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    @property
    def is_leaf(self):
        return self._sp_values.is_leaf

    def detach(self):
        return self._with_values(self._sp_values.detach())

    @property
    def data(self):
        return self.detach()

    def _with_values(self, values):
        """This tensor's pattern with other values (of the same nnz)."""
        if self.is_sparse:
            return _coo(self._sp_indices, values, self.shape, self._sp_coalesced)
        return _csr(self._sp_crow, self._sp_col, values, self.shape)

    # ---- conversions ----------------------------------------------------------------------
    def coalesce(self):
        self._want_coo("coalesce")
        return self if self._sp_coalesced else _coalesce(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        t = self.to_sparse() if self.is_sparse_csr else self
        v = t._sp_values if dtype is None else t._sp_values.to(dtype)
        sizes = self.shape
        sd = t.sparse_dim()
        flat = torch.zeros((_prod(sizes[:sd]),) + tuple(sizes[sd:]), dtype=v.dtype)
        return flat.index_add(0, _linear(t._sp_indices, sizes[:sd]), v).view(sizes)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is torch.sparse_csr:
            return self.to_sparse_csr()
        if layout not in (None, torch.sparse_coo):
            raise NotImplementedError(f"to_sparse(layout={layout}) is not implemented")
        if self.is_sparse:
            if sparse_dim is not None and sparse_dim != self.sparse_dim():
                raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim argument !="
                                   f"self.sparse_dim() is not supported")
            return self
        nrows = self.shape[0]
        counts = self._sp_crow[1:] - self._sp_crow[:-1]
        rows = torch.repeat_interleave(torch.arange(nrows), counts)
        return _coo(torch.stack([rows, self._sp_col]), self._sp_values, self.shape, True)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        if self.is_sparse_csr:
            return self
        if self.sparse_dim() != 2 or self.dense_dim():
            raise RuntimeError(f"Only 2D tensors can be converted to the SparseCsr layout but got shape: "
                               f"{list(self.shape)}")
        c = self.coalesce()
        rows, cols = c._sp_indices
        crow = torch.zeros(self.shape[0] + 1, dtype=torch.int64)
        crow[1:] = torch.bincount(rows, minlength=self.shape[0]).cumsum(0)
        return _csr(crow, cols, c._sp_values, self.shape)

    def clone(self, *, memory_format=None):
        if self.is_sparse:
            return _coo(self._sp_indices.clone(), self._sp_values.clone(), self.shape, self._sp_coalesced)
        return _csr(self._sp_crow.clone(), self._sp_col.clone(), self._sp_values.clone(), self.shape)

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, torch.dtype):
                dtype = a
            elif not (isinstance(a, (str, torch.device)) and torch.device(a).type == "cpu"):
                raise NotImplementedError("SparseTensor.to: only dtype conversions on cpu are implemented")
        return self if dtype in (None, self.dtype) else self._with_values(self._sp_values.to(dtype))

    def type_as(self, other):
        return self.to(other.dtype)

    def double(self):
        return self.to(torch.float64)

    def float(self):
        return self.to(torch.float32)

    def cpu(self):
        return self

    def item(self):
        raise _not_supported("_local_scalar_dense", self.layout)

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {self.layout._name.split('_')[1]} layout tensor to numpy. Use "
                        "Tensor.to_dense() first.")

    # ---- Python protocols ------------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from ._repr import sparse_repr
        return sparse_repr(self)

    def __reduce_ex__(self, proto):
        if not self.is_sparse:
            raise NotImplementedError(f"sparse tensor __reduce_ex__ for layout `{self.layout}`")
        from .. import _utils
        return (_utils._rebuild_sparse_tensor,
                (self.layout, (self._sp_indices, self._sp_values, self.shape, self._sp_coalesced)))

    def __deepcopy__(self, memo):
        return self.clone()

    def __len__(self):
        return self.shape[0]

    def __bool__(self):
        if self.numel() != 1:
            return Tensor.__bool__(self)
        return bool(self.to_dense())


def _lname(t):
    return {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr"}[t.layout._name]


def _func_name(func):
    name = getattr(func, "__name__", "")
    if name == "__get__":  # a property getter: find which
        prop = getattr(func, "__self__", None)
        for n, v in vars(Tensor).items():
            if v is prop:
                return n
    return name


def _flat(args, kwargs):
    for a in (*args, *(kwargs or {}).values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _linear(indices, sizes):
    """Row-major linear positions of the COO index columns within sizes (int64, length nnz)."""
    lin = torch.zeros(indices.shape[1], dtype=torch.int64)
    for d in range(len(sizes)):
        lin = lin * sizes[d] + indices[d]
    return lin


def _unravel(lin, sizes):
    rows = []
    for s in reversed(sizes):
        rows.append(lin % s)
        lin = lin // s
    return torch.stack(rows[::-1]) if rows else torch.zeros(0, lin.shape[0], dtype=torch.int64)


def _header(size, dtype):
    return torch.empty(size, dtype=dtype, device="meta")._alias(SparseTensor)


def _coo(indices, values, size, coalesced=False):
    t = _header(Size(size), values.dtype)
    t.__dict__.update(_sp_layout=torch.sparse_coo, _sp_indices=indices, _sp_values=values,
                      _sp_coalesced=bool(coalesced) or values.shape[0] < 2)  # PyTorch: nnz < 2 is coalesced
    return t


def _csr(crow, col, values, size):
    t = _header(Size(size), values.dtype)
    t.__dict__.update(_sp_layout=torch.sparse_csr, _sp_crow=crow, _sp_col=col, _sp_values=values)
    return t


def _coalesce(t):
    """Sorted unique indices, duplicate values summed (index_add, so the values' gradient flows back)."""
    sd = t.sparse_dim()
    sizes = t.shape[:sd]
    v = t._sp_values
    if v.shape[0] == 0:
        return _coo(t._sp_indices, v, t.shape, True)
    keys, inverse = torch.unique(_linear(t._sp_indices, sizes), sorted=True, return_inverse=True)
    summed = torch.zeros((keys.shape[0],) + tuple(v.shape[1:]), dtype=v.dtype).index_add(0, inverse, v)
    return _coo(_unravel(keys, sizes), summed, t.shape, True)


def _same_pattern_values(t, g):
    if not isinstance(g, SparseTensor) or g.layout is not t.layout or g.shape != t.shape or g._nnz() != t._nnz():
        raise RuntimeError("assigned grad has data of a different size" if g.shape != t.shape else
                           "assigned grad must have the sparse tensor's layout and pattern")
    return g._sp_values


# ---- construction and checks ---------------------------------------------------------------

def check_coo(indices, values, size):
    """PyTorch's _validate_sparse_coo_tensor_args: index bounds against size."""
    sd = indices.shape[0]
    if values.dim() - 1 + sd != len(size):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sd}, dense_dim = {values.dim() - 1}")
    if indices.shape[1] == 0:
        return
    lo, hi = indices.min(1).values.tolist(), indices.max(1).values.tolist()
    for d in range(sd):
        if lo[d] < 0:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
        if hi[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                               f"index {hi[d]}")


def check_csr(crow, col, values, size):
    """The compressed-row invariants PyTorch checks (the ones a 2-D CSR tensor has)."""
    nrows, ncols = size
    nnz = values.shape[0]
    if crow.shape[0] != nrows + 1:
        raise RuntimeError(f"crow_indices.size(-1) must be equal to size[0] + 1 (that is {nrows + 1}), but got: "
                           f"{crow.shape[0]}")
    if int(crow[0]) != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if int(crow[-1]) != nnz:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    if nrows and bool(((crow[1:] - crow[:-1]) < 0).any()):
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if nnz and (int(col.min()) < 0 or int(col.max()) >= ncols):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    indices = torch.as_tensor(indices)
    values = torch.as_tensor(values, dtype=dtype)
    indices = indices.long()  # PyTorch converts indices of any dtype to int64
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must have at least 1 dimension (nnz), but got a scalar")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    sd = indices.shape[0]
    if size is None:  # the smallest size holding every index
        top = (indices.max(1).values + 1).tolist() if indices.shape[1] else [0] * sd
        size = tuple(top) + tuple(values.shape[1:])
    size = tuple(size)
    if values.dim() - 1 + sd != len(size):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sd}, dense_dim = {values.dim() - 1}")
    if tuple(values.shape[1:]) != size[sd:]:
        raise RuntimeError(f"values has incorrect size, expected {list((values.shape[0],) + size[sd:])}, "
                           f"got {list(values.shape)}")
    if _state.checking(check_invariants):
        check_coo(indices, values, size)
    values = values.view_as(values) if values.requires_grad else values.detach()
    t = _coo(indices, values, size, bool(is_coalesced))
    if requires_grad:
        t.requires_grad_(True)
    return t


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    crow, col = torch.as_tensor(crow_indices).long(), torch.as_tensor(col_indices).long()
    values = torch.as_tensor(values, dtype=dtype)
    if crow.dim() != 1 or col.dim() != 1 or values.dim() != 1:
        raise NotImplementedError("sparse_csr_tensor: only 2-D CSR tensors (1-D indices and values) are "
                                  "implemented")
    if col.shape[0] != values.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but got "
                           f"{col.shape[0]} and {values.shape[0]}")
    if size is None:
        size = (crow.shape[0] - 1, int(col.max()) + 1 if col.shape[0] else 0)
    size = tuple(size)
    if len(size) != 2:
        raise NotImplementedError("sparse_csr_tensor: only 2-D CSR tensors are implemented")
    if _state.checking(check_invariants):
        check_csr(crow, col, values, size)
    values = values.view_as(values) if values.requires_grad else values.detach()
    t = _csr(crow, col, values, size)
    if requires_grad:
        t.requires_grad_(True)
    return t


def dense_to_sparse(x, sparse_dim=None):
    """Tensor.to_sparse of a strided tensor: the nonzero entries (rows of dense dims with any nonzero), in
    row-major order, so the result is coalesced."""
    sd = x.dim() if sparse_dim is None else sparse_dim
    if not 0 <= sd <= x.dim():
        raise RuntimeError(f"sparse_dim argument must be in [0,{x.dim()}] range, but {sd} is given")
    nz = x != 0
    if sd < x.dim():
        nz = nz.flatten(sd).any(-1) if sd else nz.any().reshape(())
    if sd == 0:
        return _coo(torch.zeros(0, 1, dtype=torch.int64), x.unsqueeze(0), x.shape, True)
    idx = nz.nonzero().t()
    return _coo(idx, x[tuple(idx)], x.shape, True)


def dense_to_csr(x):
    if x.dim() != 2:
        raise RuntimeError(f"Only 2D tensors can be converted to the SparseCsr layout but got shape: "
                           f"{list(x.shape)}")
    return dense_to_sparse(x).to_sparse_csr()


def sparse_mask(dense, mask):
    """dense's entries at each of mask's entries (duplicates included, as PyTorch)."""
    m = mask
    if dense.shape != m.shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(dense.shape)} "
                           f"but mask has size {list(m.shape)}")
    if isinstance(dense, SparseTensor):
        dense = dense.to_dense()
    if m.is_sparse_csr:
        coo = m.to_sparse()
        return m._with_values(dense[tuple(coo._sp_indices)])
    return m._with_values(dense[tuple(m._sp_indices)])


# ---- ops ------------------------------------------------------------------------------------

def _as_coo(t, fn):
    if t.is_sparse_csr:
        return t.to_sparse()
    return t


def _result_csr(like, out):
    return out.to_sparse_csr() if like.is_sparse_csr else out


def _sparse_dense_mm(s, d, fn="addmm"):
    """s (2-D sparse) @ d (2-D dense): rows of d gathered by column index, scaled, added into their rows."""
    if d.dim() != 2:
        raise RuntimeError(f"{fn}: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, got {d.shape[0]}"
                           if d.dim() == 2 else "mat2 must be a matrix")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {_cname(s.dtype)} but found {_cname(d.dtype)}")
    if s.shape[1] != d.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, got {d.shape[0]}")
    c = _as_coo(s, fn)
    rows, cols = c._sp_indices
    out = torch.zeros(s.shape[0], d.shape[1], dtype=d.dtype)
    return out.index_add(0, rows, c._sp_values.unsqueeze(1) * d.index_select(0, cols))


def _cname(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "float16": "Half",
            "bfloat16": "BFloat16", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(
        dt._name, dt._name)


def _sparse_sparse_mm(a, b):
    """a @ b, both 2-D sparse: each entry (i, k) of a meets the entries of b's row k (found by b's CSR)."""
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    a, bc = _as_coo(a, "mm").coalesce(), _as_coo(b, "mm").coalesce()
    crow = bc.to_sparse_csr()._sp_crow
    ra, ka = a._sp_indices
    counts = crow[ka + 1] - crow[ka]
    which = torch.repeat_interleave(torch.arange(ka.shape[0]), counts)
    starts = torch.repeat_interleave(crow[ka], counts)
    first = torch.repeat_interleave(counts.cumsum(0) - counts, counts)
    pos = starts + torch.arange(which.shape[0]) - first
    idx = torch.stack([ra[which], bc._sp_indices[1][pos]])
    vals = a._sp_values[which] * bc._sp_values[pos]
    return _coalesce(_coo(idx, vals, (a.shape[0], b.shape[1])))


def mm(mat1, mat2):
    s1, s2 = isinstance(mat1, SparseTensor), isinstance(mat2, SparseTensor)
    if s1 and s2:
        return _result_csr(mat1, _sparse_sparse_mm(mat1, mat2))
    if s1:
        return _sparse_dense_mm(mat1, mat2, "mm")
    # dense @ sparse = (sparse^T @ dense^T)^T
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return _sparse_dense_mm(transpose(_as_coo(mat2, "mm"), 0, 1), mat1.t()).t()


def matmul(a, b):
    if a.dim() == 2 and b.dim() == 2:
        return mm(a, b)
    if isinstance(a, SparseTensor) and a.dim() == 2 and b.dim() == 1:
        return mm(a, b.unsqueeze(1)).squeeze(1)
    raise _not_supported("matmul", next(t for t in (a, b) if isinstance(t, SparseTensor)).layout)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    prod = mm(mat1, mat2)
    if isinstance(prod, SparseTensor):
        prod = prod.to_dense()
    if isinstance(input, SparseTensor):
        input = input.to_dense()
    r = prod * alpha if alpha != 1 else prod
    return r if beta == 0 else input * beta + r if beta != 1 else input + r


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2), computed only at input's specified entries (a CSR result of
    input's pattern): each entry (i, j) is the dot product of mat1's row i and mat2's column j."""
    if not isinstance(input, SparseTensor) or input.is_sparse:
        layout = getattr(input, "layout", torch.strided)
        raise NotImplementedError(_no_kernel_text("sparse_sampled_addmm", _BACKEND.get(layout._name, "CPU")))
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if isinstance(m, SparseTensor):
            raise RuntimeError(f"sampled_addmm: Expected {name} to have strided layout, but got "
                               f"{'Sparse' if m.is_sparse else 'SparseCsr'}")
        if m.dim() < 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got {m.dim()}-D tensor")
    for name, other in (("mat2", mat2), ("self", input)):
        if mat1.dtype is not other.dtype:
            raise RuntimeError(f"sampled_addmm: Expected mat1 and {name} to have the same dtype, but got "
                               f"{_cname(mat1.dtype)} and {_cname(other.dtype)}")
    if mat1.shape[:-2] != mat2.shape[:-2]:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and mat2 to have the same batch size, but got "
                           f"{list(mat1.shape[:-2])} and {list(mat2.shape[:-2])}")
    if mat1.dim() > 2:
        raise NotImplementedError("torch.sparse.sampled_addmm: batched matrices are not implemented")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    for k, m in ((-2, mat1), (-1, mat2)):
        if input.shape[k] != m.shape[k]:
            raise RuntimeError(f"sampled_addmm: self.shape[{k}] must match {'mat1' if k == -2 else 'mat2'}"
                               f".shape[{k}]")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"sparse_sampled_addmm: Expected self to be a floating-point or complex tensor, but "
                           f"got {_cname(input.dtype)}")
    if out is not None:
        raise NotImplementedError("torch.sparse.sampled_addmm(out=...) is not implemented")
    rows, cols = input.to_sparse()._sp_indices
    prod = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(-1)
    return _csr(input._sp_crow, input._sp_col, input._sp_values * beta + prod * alpha, input.shape)


def _scalar(x):
    return isinstance(x, (int, float, bool, complex)) or (isinstance(x, Tensor) and not isinstance(x, SparseTensor)
                                                          and x.dim() == 0)


def add(input, other, *, alpha=1, out=None, _name="add"):
    si, so = isinstance(input, SparseTensor), isinstance(other, SparseTensor)
    if si and so:
        return _sparse_add(input, other, alpha)
    if si:
        raise RuntimeError(f"{_name}(sparse, dense) is not supported. Use {_name}(dense, sparse) instead.")
    dtype = torch.result_type(input, other._sp_values.sum() if other._nnz() else other.to_dense())
    return _dense_add_(input.to(dtype, copy=True), other, alpha)


def _dense_add_(dense, s, alpha):
    c = _as_coo(s, "add")
    if dense.shape != c.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(dense.shape)} while other has size {list(c.shape)} (FYI: op2 is a sparse tensor)")
    v = c._sp_values.to(dense.dtype)
    return dense.index_put_(tuple(c._sp_indices), v * alpha if alpha != 1 else v, accumulate=True)


def _sparse_add(a, b, alpha):
    if a.shape != b.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(a.shape)} while other has size {list(b.shape)} (FYI: dense-sparse addition "
                           "does not currently support broadcasting)")
    if a.layout is not b.layout:
        raise _not_supported("add", b.layout)
    ca, cb = _as_coo(a, "add"), _as_coo(b, "add")
    dtype = torch.promote_types(a.dtype, b.dtype)
    va, vb = ca._sp_values.to(dtype), cb._sp_values.to(dtype)
    vb = vb * alpha if alpha != 1 else vb
    if ca._sp_coalesced and cb._sp_coalesced:  # a sorted merge
        r = _coalesce(_coo(torch.cat([ca._sp_indices, cb._sp_indices], 1), torch.cat([va, vb]), a.shape))
        return _result_csr(a, r)
    # PyTorch's result then: a's entries in a's order, each of b's added into the first entry of a at its
    # index, b's others appended
    sizes = a.shape[:ca.sparse_dim()]
    ka, kb = _linear(ca._sp_indices, sizes), _linear(cb._sp_indices, sizes)
    order = torch.argsort(ka, stable=True)
    ks = ka[order]
    pos = torch.searchsorted(ks, kb).clamp(max=max(ks.shape[0] - 1, 0))
    found = ks[pos] == kb if ks.shape[0] else torch.zeros(kb.shape[0], dtype=torch.bool)
    merged = va.index_add(0, order[pos[found]], vb[found])
    rest = ~found
    r = _coo(torch.cat([ca._sp_indices, cb._sp_indices[:, rest]], 1), torch.cat([merged, vb[rest]]), a.shape)
    return _result_csr(a, r)


def sub(input, other, *, alpha=1, out=None):
    if isinstance(input, SparseTensor) and not isinstance(other, SparseTensor):
        raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")
    return add(input, other, alpha=-alpha)


def mul(input, other, *, out=None):
    if not isinstance(input, SparseTensor):
        input, other = other, input
    if _scalar(other):
        return input._with_values(input._sp_values * other)
    if isinstance(other, SparseTensor):
        return _sparse_mul(input, other)
    # sparse * dense: a sparse result over the sparse operand's pattern
    c = _as_coo(input, "mul")
    other = other.expand(c.shape) if other.shape != c.shape else other
    return _result_csr(input, c._with_values(c._sp_values * other[tuple(c._sp_indices)]))


def _sparse_mul(a, b):
    """The entries both have (sorted keys matched by searchsorted)."""
    if a.shape != b.shape:
        raise RuntimeError(f"mul operands have incompatible sizes")
    ca, cb = _as_coo(a, "mul").coalesce(), _as_coo(b, "mul").coalesce()
    sizes = a.shape[:ca.sparse_dim()]
    ka, kb = _linear(ca._sp_indices, sizes), _linear(cb._sp_indices, sizes)
    if kb.shape[0] == 0 or ka.shape[0] == 0:
        keep = torch.zeros(ka.shape[0], dtype=torch.bool)
        pos = torch.zeros(ka.shape[0], dtype=torch.int64)
    else:
        pos = torch.searchsorted(kb, ka).clamp(max=kb.shape[0] - 1)
        keep = kb[pos] == ka
    vals = ca._sp_values[keep] * cb._sp_values[pos[keep]]
    r = _coo(ca._sp_indices[:, keep], vals, a.shape, a.is_sparse and a._sp_coalesced and b._sp_coalesced)
    return _result_csr(a, r)


def div(input, other, *, rounding_mode=None, out=None):
    if not isinstance(input, SparseTensor) or not _scalar(other):
        raise _not_supported("div", next(t for t in (input, other) if isinstance(t, SparseTensor)).layout)
    return input._with_values(torch.div(input._sp_values, other, rounding_mode=rounding_mode))


def _inplace(fn):
    def op(self, *args, **kwargs):
        if not isinstance(self, SparseTensor):  # dense.add_(sparse)
            if fn is add:
                return _dense_add_(self, args[0], kwargs.get("alpha", 1))
            if fn is sub:
                return _dense_add_(self, args[0], -kwargs.get("alpha", 1))
            raise _not_supported(fn.__name__ + "_", args[0].layout)
        r = fn(self, *args, **kwargs)
        if r.dtype is not self.dtype:
            raise RuntimeError(f"result type {_cname(r.dtype)} can't be cast to the desired output type "
                               f"{_cname(self.dtype)}")
        self.__dict__.update(r.__dict__)
        return self
    return op


# unary ops with f(0) == 0, applied to the values; PyTorch coalesces first except for neg
_ZERO_PRESERVING = ("abs", "sqrt", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "ceil", "floor",
                    "round", "trunc", "sign", "sgn", "expm1", "log1p", "erf", "erfinv", "deg2rad", "rad2deg",
                    "frac", "relu", "square", "signbit", "isnan", "isinf", "isposinf", "isneginf", "nan_to_num")


def _unary(name):
    def op(input, *args, out=None, **kwargs):
        c = input.coalesce() if input.is_sparse else input
        return c._with_values(getattr(torch, name)(c._sp_values, *args, **kwargs))
    op.__name__ = name
    return op


def _unary_(name):
    def op(self, *args, **kwargs):
        if self.is_sparse and not self._sp_coalesced:
            raise RuntimeError(f"{name}_ requires coalesced input")
        getattr(self._sp_values, name + "_")(*args, **kwargs)
        return self
    return op


def neg(input, *, out=None):
    return input._with_values(-input._sp_values)


def transpose(input, dim0, dim1):
    c = _as_coo(input, "transpose")
    n = c.dim()
    d0, d1 = dim0 % n if n else 0, dim1 % n if n else 0
    sd = c.sparse_dim()
    if (d0 < sd) != (d1 < sd):
        raise RuntimeError("transpose(): cannot transpose a sparse dimension with a dense dimension")
    sizes = list(c.shape)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    if d0 < sd:
        perm = list(range(sd))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return _coo(c._sp_indices[perm], c._sp_values, sizes, c._sp_coalesced and d0 == d1)
    return _coo(c._sp_indices, c._sp_values.transpose(d0 - sd + 1, d1 - sd + 1), sizes, c._sp_coalesced)


def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                           f"{input.sparse_dim()} sparse and {input.dense_dim()} dense dimensions")
    return transpose(input, 0, 1) if input.dim() == 2 else input


def _dims(dim, n):
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % n for d in dims})


def sparse_sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over dims: over every sparse dim a dense tensor, else a coalesced sparse one."""
    c = _as_coo(input, "sum")
    v = c._sp_values if dtype is None else c._sp_values.to(dtype)
    if dim is None:
        if v.shape[0] == 0:
            return torch.zeros((), dtype=v.sum().dtype)
        return v.sum()
    dims = _dims(dim, c.dim())
    sd = c.sparse_dim()
    sparse_gone, dense_gone = [d for d in dims if d < sd], [d - sd + 1 for d in dims if d >= sd]
    if dense_gone:
        v = v.sum(dense_gone)
    if len(sparse_gone) == sd:
        return v.sum(0)
    keep = [d for d in range(sd) if d not in sparse_gone]
    sizes = [s for d, s in enumerate(c.shape) if d not in dims]
    return _coalesce(_coo(c._sp_indices[keep], v, sizes))


def tensor_sum(input, dim=None, keepdim=False, *, dtype=None):
    if keepdim:
        raise _not_supported("sum", input.layout)
    return sparse_sum(input, dim, dtype=dtype)


def _softmax(input, dim, dtype, log):
    c = _as_coo(input, "softmax").coalesce()
    v = c._sp_values if dtype is None else c._sp_values.to(dtype)
    n = c.dim()
    dim = dim % n
    sd = c.sparse_dim()
    if dim >= sd:  # along a dense dim: the values' own softmax
        return c._with_values(torch.log_softmax(v, dim - sd + 1) if log else torch.softmax(v, dim - sd + 1))
    others = [d for d in range(sd) if d != dim]
    if v.shape[0] == 0:
        return c._with_values(v)
    group = torch.unique(_linear(c._sp_indices[others], [c.shape[d] for d in others]), return_inverse=True)[1]
    ng = int(group.max()) + 1
    gshape = (ng,) + tuple(v.shape[1:])
    gidx = group.view((-1,) + (1,) * (v.dim() - 1)).expand(v.shape)
    top = torch.full(gshape, float("-inf"), dtype=v.dtype).scatter_reduce(0, gidx, v.detach(), "amax")
    shifted = v - top[group]
    e = shifted.exp()
    total = torch.zeros(gshape, dtype=v.dtype).index_add(0, group, e)
    return c._with_values(shifted - total.log()[group] if log else e / total[group])


def softmax(input, dim, dtype=None):
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, dtype=None):
    return _softmax(input, dim, dtype, True)


def narrow_copy(input, dim, start, length):
    c = _as_coo(input, "narrow_copy")
    dim %= c.dim()
    sizes = list(c.shape)
    sizes[dim] = length
    sd = c.sparse_dim()
    if dim >= sd:
        return _coo(c._sp_indices, c._sp_values.narrow(dim - sd + 1, start, length).clone(), sizes, c._sp_coalesced)
    row = c._sp_indices[dim]
    keep = (row >= start) & (row < start + length)
    idx = c._sp_indices[:, keep].clone()
    idx[dim] -= start
    return _coo(idx, c._sp_values[keep], sizes, c._sp_coalesced)


def index_select(input, dim, index):
    """Entries whose index along dim is in index, one copy per occurrence (O(nnz + len(index)) by a join)."""
    c = _as_coo(input, "index_select")
    dim %= c.dim()
    sd = c.sparse_dim()
    sizes = list(c.shape)
    sizes[dim] = index.shape[0]
    if dim >= sd:
        return _coo(c._sp_indices, c._sp_values.index_select(dim - sd + 1, index), sizes, c._sp_coalesced)
    index = torch.where(index < 0, index + c.shape[dim], index)
    row = c._sp_indices[dim]
    order = torch.argsort(row, stable=True)
    counts = torch.bincount(row, minlength=c.shape[dim])
    starts = counts.cumsum(0) - counts
    n = counts[index]
    which = torch.repeat_interleave(torch.arange(index.shape[0]), n)
    first = torch.repeat_interleave(n.cumsum(0) - n, n)
    pos = order[torch.repeat_interleave(starts[index], n) + torch.arange(which.shape[0]) - first]
    idx = c._sp_indices[:, pos].clone()
    idx[dim] = which
    return _coo(idx, c._sp_values[pos], sizes)


def select(input, dim, index):
    r = index_select(input, dim, torch.tensor([index % input.shape[dim]]))
    sd = r.sparse_dim()
    dim %= r.dim()
    keep = [d for d in range(sd) if d != dim]
    sizes = [s for d, s in enumerate(r.shape) if d != dim]
    if dim >= sd:
        return _coo(r._sp_indices, r._sp_values.select(dim - sd + 1, 0), sizes, r._sp_coalesced)
    if not keep:  # every sparse dim gone: the dense rest
        v = r._sp_values
        return v[0] if v.shape[0] else torch.zeros(sizes, dtype=v.dtype)
    return _coo(r._sp_indices[keep], r._sp_values, sizes, r._sp_coalesced)


def getitem(input, key):
    if isinstance(key, int):
        return select(input, 0, key)
    if isinstance(key, tuple) and all(isinstance(k, int) for k in key):
        r = input
        for k in key:
            r = select(r, 0, k)
        return r
    raise NotImplementedError("indexing a sparse tensor: only integer indices are implemented")


def reshape(input, *shape):
    raise RuntimeError("reshape is not implemented for sparse tensors")


def zero_(self):
    self.__dict__.update(_coo(torch.zeros(self.sparse_dim(), 0, dtype=torch.int64),
                              self._sp_values[:0].detach(), self.shape, True).__dict__)
    return self


def _values_method(name):
    """Methods that only read the shape: answered by the meta header."""
    def op(self, *args, **kwargs):
        with DisableTorchFunctionSubclass():
            return getattr(Tensor, name)(self, *args, **kwargs)
    return op


_IMPL = {
    "mm": mm, "matmul": matmul, "__rmatmul__": lambda a, b: matmul(b, a), "addmm": addmm, "smm": mm,
    "add": add, "sub": sub, "mul": mul, "div": div, "neg": neg, "negative": neg,
    "add_": _inplace(add), "sub_": _inplace(sub), "mul_": _inplace(mul), "div_": _inplace(div),
    "neg_": _inplace(neg), "zero_": zero_,
    "t": t, "transpose": transpose, "sum": tensor_sum, "narrow_copy": narrow_copy,
    "index_select": index_select, "select": select, "__getitem__": getitem,
    "softmax": softmax, "log_softmax": log_softmax,
    "sparse_mask": sparse_mask, "is_same_size": lambda a, b: a.shape == b.shape,
    "to_dense": SparseTensor.to_dense, "size": _values_method("size"), "dim": _values_method("dim"),
    "numel": _values_method("numel"), "ndimension": _values_method("dim"), "nelement": _values_method("numel"),
    "ndim": _values_method("dim"), "element_size": _values_method("element_size"),
    "is_floating_point": _values_method("is_floating_point"), "is_complex": _values_method("is_complex"),
    "itemsize": lambda t: t.element_size(), "is_signed": _values_method("is_signed"),
    "get_device": lambda t: -1, "_version": lambda t: t._sp_values._version,
    "is_quantized": lambda t: False, "is_nested": lambda t: False, "is_cuda": lambda t: False,
    "is_mps": lambda t: False, "shape": lambda t: Tensor.shape.fget(t), "dtype": lambda t: Tensor.dtype.fget(t),
    "output_nr": lambda t: t._sp_values.output_nr, "__len__": lambda t: t.shape[0],
    "reshape": reshape, "type": _methods.type_,
}
for _n in _ZERO_PRESERVING:
    _IMPL[_n] = _unary(_n)
    if _n not in ("signbit", "isnan", "isinf", "isposinf", "isneginf"):
        _IMPL[_n + "_"] = _unary_(_n)
