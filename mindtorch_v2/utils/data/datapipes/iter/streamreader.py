"""StreamReader (`.read_from_stream`)."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["StreamReaderIterDataPipe"]


@functional_datapipe("read_from_stream")
class StreamReaderIterDataPipe(IterDataPipe):
    """(name, chunk) pieces of each (name, stream), chunk bytes at a time (None: whole); closes the stream."""

    def __init__(self, datapipe, chunk=None):
        self.datapipe = datapipe
        self.chunk = chunk

    def __iter__(self):
        for name, stream in self.datapipe:
            while data := stream.read(self.chunk):
                yield name, data
            stream.close()
