"""torch.utils.cpp_extension: building C++/CUDA extensions against libtorch is not possible here (the
module imports; every builder raises NotImplementedError naming itself)."""


def _not_implemented(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.utils.cpp_extension.{name} is not implemented (mindtorch_v2 has no "
                                  "libtorch to build against)")
    fn.__name__ = name
    return fn


load = _not_implemented("load")
load_inline = _not_implemented("load_inline")
CppExtension = _not_implemented("CppExtension")
CUDAExtension = _not_implemented("CUDAExtension")
include_paths = _not_implemented("include_paths")
library_paths = _not_implemented("library_paths")
verify_ninja_availability = _not_implemented("verify_ninja_availability")


class BuildExtension:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.utils.cpp_extension.BuildExtension is not implemented (mindtorch_v2 has no "
                                  "libtorch to build against)")
