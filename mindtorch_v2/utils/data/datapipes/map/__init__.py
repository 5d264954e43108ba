"""The built-in map-style DataPipes, each also a method of MapDataPipe (its functional name)."""
from .callable import MapperMapDataPipe as Mapper
from .combinatorics import ShufflerIterDataPipe as Shuffler
from .combining import ConcaterMapDataPipe as Concater, ZipperMapDataPipe as Zipper
from .grouping import BatcherMapDataPipe as Batcher
from .utils import SequenceWrapperMapDataPipe as SequenceWrapper

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]
