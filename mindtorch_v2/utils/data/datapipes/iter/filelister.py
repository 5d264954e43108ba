"""FileLister (`.list_files`)."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import get_file_pathnames_from_root
from .callable import _no_length
from .utils import IterableWrapperIterDataPipe

__all__ = ["FileListerIterDataPipe"]


def _declared_length(dp):
    """The length a file pipe was given (-1: unknown, a TypeError)."""
    if dp.length == -1:
        raise _no_length(dp)
    return dp.length


@functional_datapipe("list_files")
class FileListerIterDataPipe(IterDataPipe):
    """The pathnames of the files under each root (a path, paths, or a pipe of them) matching masks."""

    def __init__(self, root=".", masks="", *, recursive=False, abspath=False, non_deterministic=False,
                 length=-1):
        super().__init__()
        if isinstance(root, str):
            root = [root]
        self.datapipe = root if isinstance(root, IterDataPipe) else IterableWrapperIterDataPipe(root)
        self.masks = masks
        self.recursive = recursive
        self.abspath = abspath
        self.non_deterministic = non_deterministic
        self.length = length

    def __iter__(self):
        for root in self.datapipe:
            yield from get_file_pathnames_from_root(root, self.masks, self.recursive, self.abspath,
                                                    self.non_deterministic)

    def __len__(self):
        return _declared_length(self)
