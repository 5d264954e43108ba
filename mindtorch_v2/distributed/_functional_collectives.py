"""torch.distributed._functional_collectives: the out-of-place collectives that return a new tensor.
Not implemented here (calls raise, naming themselves); the module and AsyncCollectiveTensor exist so
that libraries importing it at load time (diffusers' context-parallel attention) import."""
from .._tensor import Tensor


class AsyncCollectiveTensor(Tensor):
    def __new__(cls, *args, **kwargs):
        raise NotImplementedError("torch.distributed._functional_collectives.AsyncCollectiveTensor is not implemented")


def _absent(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.distributed._functional_collectives.{name} is not implemented")
    fn.__name__ = fn.__qualname__ = name
    return fn


for _name in ("wait_tensor", "broadcast", "all_reduce", "all_gather_tensor", "all_gather_tensor_autograd",
              "reduce_scatter_tensor", "reduce_scatter_tensor_autograd", "all_reduce_coalesced",
              "all_gather_into_tensor_coalesced", "reduce_scatter_tensor_coalesced", "all_to_all_single",
              "all_to_all_single_autograd", "permute_tensor"):
    globals()[_name] = _absent(_name)
del _name
