"""Concater (`.concat`) and Zipper (`.zip`) for map-style pipes."""
from collections.abc import Sized

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["ConcaterMapDataPipe", "ZipperMapDataPipe"]


def _check_inputs(datapipes):
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    if not all(isinstance(dp, Sized) for dp in datapipes):
        raise TypeError("Expected all inputs to be `Sized`")


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    """The datapipes one after another: index i runs through the first, then the next..."""

    def __init__(self, *datapipes):
        _check_inputs(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index):
        start = 0
        for dp in self.datapipes:
            n = len(dp)
            if index - start < n:
                return dp[index - start]
            start += n
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    """dp[i] is the tuple of every datapipe's item i; the length is the shortest one's."""

    def __init__(self, *datapipes):
        _check_inputs(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index):
        out = []
        for dp in self.datapipes:
            try:
                out.append(dp[index])
            except IndexError as e:
                raise IndexError(f"Index {index} is out of range for one of the input MapDataPipes {dp}.") from e
        return tuple(out)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)
