"""IterableWrapper: any iterable as an IterDataPipe."""
import copy
import warnings

from ..datapipe import IterDataPipe
from .callable import _len_of_source

__all__ = ["IterableWrapperIterDataPipe"]


class IterableWrapperIterDataPipe(IterDataPipe):
    """Yields the iterable's items; with deepcopy=True (default) from a fresh deep copy per iterator, so
    in-place changes to yielded items do not reach the source."""

    def __init__(self, iterable, deepcopy=True):
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn("The input iterable can not be deepcopied, please be aware of in-place modification "
                              "would affect source data.", stacklevel=2)
        yield from source

    def __len__(self):
        return _len_of_source(self, self.iterable)
