"""torch._utils_internal: hooks that PyTorch's internal builds replace; these are the open-source ones."""
import os

# the directory that holds the package (site-packages for an installed copy), as torch_parent
torch_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_file_path(*path_components):
    """A path relative to the directory that contains the package."""
    return os.path.join(torch_parent, *path_components)


def get_file_path_2(*path_components):
    return os.path.join(*path_components)


def prepare_multiprocessing_environment(path):
    """Nothing to prepare outside PyTorch's internal builds."""
    return None
