"""Batcher (`.batch`) for map-style pipes."""
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, MapDataPipe
from ..iter.callable import _len_of_source
from ..iter.grouping import _batch_count, _check_batch_size

__all__ = ["BatcherMapDataPipe"]


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    """dp[i] is the DataChunk of items i*batch_size .. (i+1)*batch_size - 1 (shorter at the end unless
    drop_last)."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        _check_batch_size(batch_size)
        super().__init__()
        self.datapipe, self.batch_size, self.drop_last = datapipe, batch_size, drop_last
        self.wrapper_class = wrapper_class

    def __getitem__(self, index):
        batch = []
        try:
            for i in range(index * self.batch_size, (index + 1) * self.batch_size):
                batch.append(self.datapipe[i])
        except IndexError as e:
            if self.drop_last or not batch:
                raise IndexError(f"Index {index} is out of bound.") from e
        return self.wrapper_class(batch)

    def __len__(self):
        return _batch_count(self, _len_of_source(self, self.datapipe))
