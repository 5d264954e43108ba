"""FileOpener (`.open_files`)."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import get_file_binaries_from_pathnames
from .filelister import _declared_length

__all__ = ["FileOpenerIterDataPipe"]


@functional_datapipe("open_files")
class FileOpenerIterDataPipe(IterDataPipe):
    """(pathname, stream) for each pathname, opened in mode ("r"/"t"/"rt" text, "b"/"rb" binary)."""

    def __init__(self, datapipe, mode="r", encoding=None, length=-1):
        super().__init__()
        self.datapipe = datapipe
        self.mode = mode
        self.encoding = encoding
        if mode not in ("b", "t", "rb", "rt", "r"):
            raise ValueError(f"Invalid mode {mode}")
        if "b" in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.length = length

    def __iter__(self):
        yield from get_file_binaries_from_pathnames(self.datapipe, self.mode, self.encoding)

    def __len__(self):
        return _declared_length(self)
