"""Filter (`.filter`)."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import StreamWrapper, _check_unpickable_fn, validate_input_col

__all__ = ["FilterIterDataPipe"]


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """Keeps the samples for which filter_fn (of the sample, or of its input_col columns) is True; the
    streams of dropped samples are closed."""

    def __init__(self, datapipe, filter_fn, input_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(filter_fn)
        self.filter_fn = filter_fn
        self.input_col = input_col
        validate_input_col(filter_fn, input_col)

    def _apply_filter_fn(self, data):
        cols = self.input_col
        if cols is None:
            return self.filter_fn(data)
        if isinstance(cols, (list, tuple)):
            return self.filter_fn(*(data[c] for c in cols))
        return self.filter_fn(data[cols])

    def _returnIfTrue(self, data):
        keep = self._apply_filter_fn(data)
        if not isinstance(keep, bool):
            raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, got", type(keep))
        return keep, data

    def __iter__(self):
        for data in self.datapipe:
            keep, data = self._returnIfTrue(data)
            if keep:
                yield data
            else:
                StreamWrapper.close_streams(data)
