"""Mapper (`.map`) and Collator (`.collate`)."""
import functools
from collections import namedtuple
from collections.abc import Sized

from mindtorch_v2.utils.data._utils.collate import default_collate
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _check_unpickable_fn, validate_input_col

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]


def _no_length(dp):
    return TypeError(f"{type(dp).__name__} instance doesn't have valid length")


def _len_of_source(dp, source):
    """len(source), or the TypeError PyTorch's pipes raise when their source has no length."""
    if isinstance(source, Sized):
        return len(source)
    raise _no_length(dp)


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """Applies fn to each sample, or to its input_col column(s), writing the result to output_col
    (-1 appends; default: in place of the first input column)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn
        self.input_col = input_col
        if output_col is not None and input_col is None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):  # one column, possibly in a list
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]  # an empty one: IndexError, as in PyTorch
        self.output_col = output_col
        validate_input_col(fn, input_col)

    def _apply_fn(self, data):
        cols = self.input_col
        if cols is None:
            return self.fn(data)
        several = isinstance(cols, (list, tuple))
        result = self.fn(*(data[c] for c in cols)) if several else self.fn(data[cols])
        was_tuple = isinstance(data, tuple)
        out = list(data) if was_tuple else data
        if self.output_col is not None:
            if self.output_col == -1:
                out.append(result)
            else:
                out[self.output_col] = result
        elif several:  # the result replaces the first input column; the others go
            out[cols[0]] = result
            for c in sorted(cols[1:], reverse=True):
                del out[c]
        else:
            out[cols] = result
        return tuple(out) if was_tuple else out

    def __iter__(self):
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self):
        return _len_of_source(self, self.datapipe)


def _collate_dataframe(conversion, item):
    """Collate a batch holding one DataFrame column by column into a namedtuple."""
    if len(item.items) > 1:
        raise RuntimeError("Only supports one DataFrame per batch")
    df = item[0]
    columns = list(df.columns)
    if any(name not in columns for name in conversion):
        raise RuntimeError("Conversion keys mismatch")
    names, values = [], []
    for name in columns:
        if name in conversion:
            if not callable(conversion[name]):
                raise RuntimeError("Collate (DF)DataPipe requires callable as dict values")
            fn = conversion[name]
        else:
            try:
                import torcharrow.pytorch as tap
                fn = tap.rec.Default()
            except Exception as e:
                raise RuntimeError("unable to import default collation function from the TorchArrow") from e
        names.append(str(name))
        values.append(fn(df[name]))
    return namedtuple("CollateResult", names)(*values)


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """Collates each sample (usually a batch) with collate_fn, or conversion (a function, or a dict of
    per-column functions for DataFrame batches)."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        if collate_fn is None:
            collate_fn = conversion if callable(conversion) else functools.partial(_collate_dataframe, conversion)
        super().__init__(datapipe, fn=collate_fn)
