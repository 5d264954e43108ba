"""FuzzedSparseTensor: a FuzzedTensor that is a sparse COO tensor (density, coalesced and sparse_dim
come from the parameters of those names)."""
import math
from numbers import Number

import mindtorch_v2 as torch
from .fuzzer import FuzzedTensor

__all__ = ["FuzzedSparseTensor"]


class FuzzedSparseTensor(FuzzedTensor):
    def __init__(self, name, size, min_elements=None, max_elements=None, dim_parameter=None, sparse_dim=None,
                 nnz=None, density=None, coalesced=None, dtype=torch.float32, cuda=False):
        super().__init__(name=name, size=size, min_elements=min_elements, max_elements=max_elements,
                         dim_parameter=dim_parameter, dtype=dtype, cuda=cuda)
        self._density, self._coalesced, self._sparse_dim = density, coalesced, sparse_dim

    @staticmethod
    def sparse_tensor_constructor(size, dtype, sparse_dim, nnz, is_coalesced):
        """A sparse COO tensor of size with nnz random entries over its first sparse_dim dims (each
        duplicated, with other values, unless coalesced)."""
        if not hasattr(torch, "sparse_coo_tensor"):
            raise NotImplementedError("torch.utils.benchmark.FuzzedSparseTensor is not implemented: mindtorch_v2 "
                                      "has no sparse tensors (torch.sparse_coo_tensor)")
        if isinstance(size, Number):
            size = [size] * sparse_dim
        if all(size[d] <= 0 for d in range(sparse_dim)) and nnz != 0:
            raise AssertionError("invalid arguments")
        value_size = [nnz] + list(size[sparse_dim:])
        if dtype.is_floating_point:
            values = torch.rand(size=value_size, dtype=dtype, device="cpu")
        else:
            values = torch.randint(1, 127, size=value_size, dtype=dtype, device="cpu")
        indices = torch.rand(sparse_dim, nnz, device="cpu")
        indices.mul_(torch.tensor(size[:sparse_dim]).unsqueeze(1).to(indices))
        indices = indices.to(torch.long)
        if not is_coalesced:
            values = torch.cat([values, torch.randn_like(values)], 0)
            indices = torch.cat([indices, indices], 1)
        x = torch.sparse_coo_tensor(indices, values, torch.Size(size))
        return x.coalesce() if is_coalesced else x

    def _make_tensor(self, params, state):
        size, _, _ = self._get_size_and_steps(params)
        density = params["density"]
        nnz = math.ceil(sum(size) * density)
        if nnz > sum(size):
            raise AssertionError("nnz cannot exceed total number of elements")
        is_coalesced = params["coalesced"]
        sparse_dim = min(params["sparse_dim"] if self._sparse_dim else len(size), len(size))
        tensor = self.sparse_tensor_constructor(size, self._dtype, sparse_dim, nnz, is_coalesced)
        if self._cuda:
            tensor = tensor.cuda()
        sparse_dim = tensor.sparse_dim()
        properties = {"numel": int(tensor.numel()), "shape": tensor.size(), "is_coalesced": tensor.is_coalesced(),
                      "density": density, "sparsity": 1.0 - density, "sparse_dim": sparse_dim,
                      "dense_dim": tensor.dense_dim(), "is_hybrid": len(size[sparse_dim:]) > 0,
                      "dtype": str(self._dtype)}
        return tensor, properties
