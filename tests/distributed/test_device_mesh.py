"""torch.distributed.device_mesh and _functional_collectives exist as names (libraries import them at
load time: diffusers' context parallelism) but are not implemented: each use raises NotImplementedError
naming itself, and the module-level names are PyTorch's."""
import importlib

import pytest

import mindtorch_v2.distributed as dist
from mindtorch_v2.distributed import _functional_collectives as funcol
from mindtorch_v2.distributed import device_mesh

torch = pytest.importorskip("torch")


def test_device_mesh_names_and_absence():
    assert sorted(device_mesh.__all__) == sorted(importlib.import_module("torch.distributed.device_mesh").__all__)
    assert dist.DeviceMesh is device_mesh.DeviceMesh and dist.init_device_mesh is device_mesh.init_device_mesh
    with pytest.raises(NotImplementedError, match="device_mesh.DeviceMesh is not implemented"):
        device_mesh.DeviceMesh("cpu", [0, 1])
    with pytest.raises(NotImplementedError, match="device_mesh.init_device_mesh is not implemented"):
        dist.init_device_mesh("cpu", (2,), mesh_dim_names=("dp",))


@pytest.mark.parametrize("name", ["wait_tensor", "broadcast", "all_reduce", "all_gather_tensor", "reduce_scatter_tensor",
                                  "all_to_all_single", "permute_tensor", "all_gather_tensor_autograd"])
def test_functional_collectives_absent(name):
    assert callable(getattr(importlib.import_module("torch.distributed._functional_collectives"), name))
    with pytest.raises(NotImplementedError, match=f"_functional_collectives.{name} is not implemented"):
        getattr(funcol, name)(None, 0, None)
    with pytest.raises(NotImplementedError, match="AsyncCollectiveTensor is not implemented"):
        funcol.AsyncCollectiveTensor(None)
