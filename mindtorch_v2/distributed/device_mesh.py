"""torch.distributed.device_mesh: the DeviceMesh type exists so that annotations and isinstance checks
resolve (diffusers names it in its parallel-config dataclasses at import); there are no N-D meshes of
process groups here, so building one raises."""
__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.distributed.device_mesh.DeviceMesh is not implemented")


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    raise NotImplementedError("torch.distributed.device_mesh.init_device_mesh is not implemented")
