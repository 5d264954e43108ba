"""Concater (`.concat`), Forker (`.fork`), Demultiplexer (`.demux`), Multiplexer (`.mux`), Zipper (`.zip`)."""
import copy as copymodule
import warnings
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Sized

from .._decorator import functional_datapipe
from .._hook_iterator import _SnapshotState
from ..datapipe import IterDataPipe
from ..utils.common import StreamWrapper, _check_unpickable_fn
from .callable import _no_length

__all__ = ["ConcaterIterDataPipe", "DemultiplexerIterDataPipe", "ForkerIterDataPipe", "MultiplexerIterDataPipe",
           "ZipperIterDataPipe"]


def _all_sized(dp, datapipes):
    if not all(isinstance(d, Sized) for d in datapipes):
        raise _no_length(dp)
    return [len(d) for d in datapipes]


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    """The samples of each datapipe in turn."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        return sum(_all_sized(self, self.datapipes))


class _ContainerTemplate(ABC):
    """The shared source behind the children of fork/demux."""

    @abstractmethod
    def get_next_element_by_instance(self, instance_id): ...

    @abstractmethod
    def is_every_instance_exhausted(self): ...

    @abstractmethod
    def reset(self): ...

    @abstractmethod
    def get_length_by_instance(self, instance_id):
        """The number of samples child instance_id yields."""


def _no_op(x):
    return x


def _unlimited_buffer_warning(fn):
    warnings.warn(f"Unlimited buffer size is set for `{fn}`, please be aware of OOM at random places", UserWarning,
                  stacklevel=3)


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    """num_instances children that each yield every sample of datapipe; samples wait in a buffer of at
    most buffer_size (negative: unlimited) between the fastest and the slowest child."""

    def __new__(cls, datapipe, num_instances, buffer_size=1000, copy=None):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is found")
        if num_instances == 1:
            return datapipe
        container = _ForkerIterDataPipe(datapipe, num_instances, buffer_size, copy)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


class _ForkerIterDataPipe(IterDataPipe, _ContainerTemplate):
    # positions count samples from 1: child_pointers[i] is the last one child i took, the buffer holds
    # samples slowest_ptr+1 .. leading_ptr, and end_ptr is one past the last sample once known
    def __init__(self, datapipe, num_instances, buffer_size=1000, copy=None):
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        if buffer_size < 0:
            _unlimited_buffer_warning("fork")
        self._clear()
        copies = {None: _no_op, "shallow": copymodule.copy, "deep": copymodule.deepcopy}
        if copy not in copies:
            raise ValueError(f"Unknown copy method `{copy}` requested, choose one of None, `shallow` or `deep`.")
        self.copy_fn = copies[copy]

    def _clear(self):
        self._datapipe_iterator = None
        self.buffer = deque()
        self.child_pointers = [0] * self.num_instances
        self.slowest_ptr = 0
        self.leading_ptr = 0
        self.end_ptr = None
        self._child_stop = [True] * self.num_instances

    def __len__(self):
        return len(self.main_datapipe)

    def _take(self, instance_id):
        """The next sample for instance_id, or None with the child stopped at the end."""
        pos = self.child_pointers[instance_id] = self.child_pointers[instance_id] + 1
        if pos == self.end_ptr:
            self._child_stop[instance_id] = True
            return None
        if self.buffer and pos <= self.leading_ptr:
            return (self.buffer[pos - self.slowest_ptr - 1],)
        self.leading_ptr = pos
        try:
            value = next(self._datapipe_iterator)
        except StopIteration:
            self._child_stop[instance_id] = True
            self._datapipe_iterator = None
            self.end_ptr = pos
            return None
        self.buffer.append(value)
        return (value,)

    def get_next_element_by_instance(self, instance_id):
        if self._datapipe_iterator is None and self._child_stop[instance_id]:
            self._datapipe_iterator = iter(self.main_datapipe)
            self._snapshot_state = _SnapshotState.Iterating
            self._child_stop = [False] * self.num_instances
        try:
            while not self._child_stop[instance_id]:
                got = self._take(instance_id)
                if got is None:
                    continue
                if self.child_pointers[instance_id] == self.slowest_ptr + 1:  # this child was the slowest
                    slowest = min(self.child_pointers)
                    if slowest > self.slowest_ptr:
                        self.slowest_ptr = slowest
                        self.buffer.popleft()
                if 0 <= self.buffer_size < self.leading_ptr - self.slowest_ptr:
                    raise BufferError("ForkerIterDataPipe buffer overflow," +
                                      f"buffer size {self.buffer_size} is insufficient.")
                yield self.copy_fn(got[0])
        finally:
            self._child_stop[instance_id] = True
            if all(self._child_stop):
                self._datapipe_iterator = None
                self._cleanup()

    def is_every_instance_exhausted(self):
        return self.end_ptr is not None and all(self._child_stop)

    def get_length_by_instance(self, instance_id):
        return len(self.main_datapipe)

    def reset(self):
        self._clear()

    def __getstate__(self):
        state = (self.main_datapipe, self.num_instances, self.buffer_size, self.copy_fn, self._valid_iterator_id,
                 self._number_of_samples_yielded)
        return state if IterDataPipe.getstate_hook is None else IterDataPipe.getstate_hook(state)

    def __setstate__(self, state):
        (self.main_datapipe, self.num_instances, self.buffer_size, self.copy_fn, self._valid_iterator_id,
         self._number_of_samples_yielded) = state
        self._clear()

    def _cleanup(self):
        while self.buffer:
            StreamWrapper.close_streams(self.buffer.popleft())

    def __del__(self):
        self._cleanup()


class _ChildDataPipe(IterDataPipe):
    """One output of fork/demux: iterates its container's stream for instance_id. A new iterator of any
    child restarts the container once the children's iterators all share its iterator id."""
    _is_child_datapipe = True

    def __init__(self, main_datapipe, instance_id):
        if not isinstance(main_datapipe, _ContainerTemplate):
            raise AssertionError("main_datapipe must implement _ContainerTemplate")
        self.main_datapipe = main_datapipe
        self.instance_id = instance_id

    def __iter__(self):
        return self.main_datapipe.get_next_element_by_instance(self.instance_id)

    def __len__(self):
        return self.main_datapipe.get_length_by_instance(self.instance_id)

    def _set_main_datapipe_valid_iterator_id(self):
        main = self.main_datapipe
        if main._valid_iterator_id is None:
            main._valid_iterator_id = 0
        elif main._valid_iterator_id == self._valid_iterator_id:  # this child starts a new round
            main._valid_iterator_id += 1
            if not main.is_every_instance_exhausted():
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. We are resetting "
                              "the buffer and each child DataPipe will read from the start again.", UserWarning,
                              stacklevel=2)
            main.reset()
        self._valid_iterator_id = main._valid_iterator_id
        return self._valid_iterator_id

    def _check_valid_iterator_id(self, iterator_id):
        return iterator_id == self._valid_iterator_id == self.main_datapipe._valid_iterator_id


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    """num_instances children; child i yields the samples for which classifier_fn returns i (None drops the
    sample if drop_none). Samples for other children wait in a buffer of at most buffer_size."""

    def __new__(cls, datapipe, num_instances, classifier_fn, drop_none=False, buffer_size=1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is found")
        _check_unpickable_fn(classifier_fn)
        container = _DemultiplexerIterDataPipe(datapipe, num_instances, classifier_fn, drop_none, buffer_size)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


class _DemultiplexerIterDataPipe(IterDataPipe, _ContainerTemplate):
    def __init__(self, datapipe, num_instances, classifier_fn, drop_none, buffer_size):
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        if buffer_size < 0:
            _unlimited_buffer_warning("demux")
        self.classifier_fn = classifier_fn
        self.drop_none = drop_none
        self._clear()

    def _clear(self):
        self._datapipe_iterator = None
        self.current_buffer_usage = 0
        self.child_buffers = [deque() for _ in range(self.num_instances)]
        self._child_stop = [True] * self.num_instances
        self.main_datapipe_exhausted = False

    def _find_next(self, instance_id):
        """Read the source until a sample for instance_id, buffering the others'."""
        while True:
            if self.main_datapipe_exhausted or self._child_stop[instance_id]:
                raise StopIteration
            if self._datapipe_iterator is None:
                raise ValueError("_datapipe_iterator has not been set, likely because this private method is called "
                                 "directly without invoking get_next_element_by_instance() first.")
            value = next(self._datapipe_iterator)
            target = self.classifier_fn(value)
            if target is None and self.drop_none:
                StreamWrapper.close_streams(value)
                continue
            if target is None or not 0 <= target < self.num_instances:
                raise ValueError(f"Output of the classification fn should be between 0 and {self.num_instances - 1}. "
                                 + f"{target} is returned.")
            if target == instance_id:
                return value
            self.child_buffers[target].append(value)
            self.current_buffer_usage += 1
            if 0 <= self.buffer_size < self.current_buffer_usage:
                raise BufferError(f"DemultiplexerIterDataPipe buffer overflow, buffer size {self.buffer_size} is "
                                  "insufficient.")

    def get_next_element_by_instance(self, instance_id):
        if self._datapipe_iterator is None and self._child_stop[instance_id]:
            self._datapipe_iterator = iter(self.main_datapipe)
            self._snapshot_state = _SnapshotState.Iterating  # lets reset() run on the next round
            self.main_datapipe_exhausted = False
            self._child_stop = [False] * self.num_instances
        try:
            while not self._child_stop[instance_id]:
                if self.child_buffers[instance_id]:
                    self.current_buffer_usage -= 1
                    yield self.child_buffers[instance_id].popleft()
                    continue
                try:
                    value = self._find_next(instance_id)
                except StopIteration:
                    self._child_stop[instance_id] = True
                    self.main_datapipe_exhausted = True
                    self._datapipe_iterator = None
                    continue
                yield value
        finally:
            self._child_stop[instance_id] = True
            if all(self._child_stop):
                self._datapipe_iterator = None
            if self.child_buffers[instance_id]:
                self._cleanup(instance_id)

    def is_every_instance_exhausted(self):
        return self.main_datapipe_exhausted and all(self._child_stop)

    def get_length_by_instance(self, instance_id):
        raise TypeError

    def reset(self):
        self._clear()

    def __getstate__(self):
        state = (self.main_datapipe, self.num_instances, self.buffer_size, self.classifier_fn, self.drop_none,
                 self._valid_iterator_id, self._number_of_samples_yielded)
        return state if IterDataPipe.getstate_hook is None else IterDataPipe.getstate_hook(state)

    def __setstate__(self, state):
        (self.main_datapipe, self.num_instances, self.buffer_size, self.classifier_fn, self.drop_none,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._clear()

    def _cleanup(self, instance_id=None):
        for i in range(self.num_instances) if instance_id is None else (instance_id,):
            q = self.child_buffers[i]
            while q:
                StreamWrapper.close_streams(q.popleft())

    def __del__(self):
        self._cleanup()


@functional_datapipe("mux")
class MultiplexerIterDataPipe(IterDataPipe):
    """One sample from each datapipe in turn, stopping at the first exhausted one (its round is dropped)."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes
        self.buffer = []  # the current round, yielded once every datapipe gave its sample

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            for it in iterators:
                try:
                    self.buffer.append(next(it))
                except StopIteration:
                    self.buffer.clear()
                    return
            yield from self.buffer
            self.buffer.clear()

    def __len__(self):
        lengths = _all_sized(self, self.datapipes)
        return min(lengths) * len(lengths)

    def reset(self):
        self.buffer = []

    def __getstate__(self):
        state = (self.datapipes, self._valid_iterator_id, self._number_of_samples_yielded)
        return state if IterDataPipe.getstate_hook is None else IterDataPipe.getstate_hook(state)

    def __setstate__(self, state):
        self.datapipes, self._valid_iterator_id, self._number_of_samples_yielded = state
        self.buffer = []

    def __del__(self):
        self.buffer.clear()


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    """Tuples of one sample from each datapipe, to the shortest."""

    def __init__(self, *datapipes):
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        super().__init__()
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*[iter(dp) for dp in self.datapipes])

    def __len__(self):
        return min(_all_sized(self, self.datapipes))
