"""Batcher (`.batch`), UnBatcher (`.unbatch`) and Grouper (`.groupby`)."""
from collections import defaultdict

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe
from ..utils.common import _check_unpickable_fn
from .callable import _len_of_source

__all__ = ["BatcherIterDataPipe", "GrouperIterDataPipe", "UnBatcherIterDataPipe"]


def _check_batch_size(n):
    if n <= 0:
        raise AssertionError("Batch size is required to be larger than 0!")


def _batch_count(dp, n):
    return n // dp.batch_size if dp.drop_last else -(-n // dp.batch_size)


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Groups consecutive samples into wrapper_class (DataChunk) batches of batch_size; the last, shorter
    one is kept unless drop_last."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        _check_batch_size(batch_size)
        super().__init__()
        self.datapipe, self.batch_size, self.drop_last = datapipe, batch_size, drop_last
        self.wrapper_class = wrapper_class

    def __iter__(self):
        pending = []
        for sample in self.datapipe:
            pending.append(sample)
            if len(pending) < self.batch_size:
                continue
            yield self.wrapper_class(pending)
            pending = []
        if pending and not self.drop_last:  # the short last batch
            yield self.wrapper_class(pending)

    def __len__(self):
        return _batch_count(self, _len_of_source(self, self.datapipe))


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """Flattens unbatch_level levels of lists/DataChunks (-1: all of them)."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        level = self.unbatch_level
        for batch in self.datapipe:
            yield from self._dive(batch, unbatch_level=level)

    def _dive(self, element, unbatch_level):
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if unbatch_level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, unbatch_level=-1 if unbatch_level == -1 else unbatch_level - 1)
        elif unbatch_level == -1:
            yield element
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")


@functional_datapipe("groupby")
class GrouperIterDataPipe(IterDataPipe):
    """Buffers samples by group_key_fn(sample) and yields each group as a DataChunk: when it reaches
    group_size, when the buffer is full (the largest group), and the rest at the end."""

    def __init__(self, datapipe, group_key_fn, *, keep_key=False, buffer_size=10000, group_size=None,
                 guaranteed_group_size=None, drop_remaining=False):
        _check_unpickable_fn(group_key_fn)
        self.datapipe, self.group_key_fn, self.keep_key = datapipe, group_key_fn, keep_key
        self.max_buffer_size, self.group_size = buffer_size, group_size
        self.buffer_elements, self.curr_buffer_size = defaultdict(list), 0
        # the smallest group yielded when the buffer overflows: group_size unless given
        least = None
        if group_size is not None and buffer_size is not None:
            if not 0 < group_size <= buffer_size:
                raise AssertionError("group_size must be > 0 and <= buffer_size")
            least = group_size
        if guaranteed_group_size is not None:
            if group_size is None or not 0 < guaranteed_group_size <= group_size:
                raise AssertionError("guaranteed_group_size must be > 0 and <= group_size and group_size must be set")
            least = guaranteed_group_size
        self.guaranteed_group_size = least
        self.drop_remaining = drop_remaining
        self.wrapper_class = DataChunk

    def _remove_biggest_key(self):
        """Drop the largest group from the buffer; return it unless it is below guaranteed_group_size."""
        key, size = None, 0
        for k, items in self.buffer_elements.items():
            if len(items) > size:
                key, size = k, len(items)
        short = self.guaranteed_group_size is not None and size < self.guaranteed_group_size
        if short and not self.drop_remaining:
            raise RuntimeError("Failed to group items", str(self.buffer_elements[key]))
        result = None if short else self.buffer_elements[key]
        self.curr_buffer_size -= size
        del self.buffer_elements[key]
        return result

    def _emit(self, key, items):
        chunk = self.wrapper_class(items)
        return (key, chunk) if self.keep_key else chunk

    def __iter__(self):
        groups = self.buffer_elements
        for sample in self.datapipe:
            key = self.group_key_fn(sample)
            group = groups[key]
            group.append(sample)
            self.curr_buffer_size += 1
            if len(group) == self.group_size:
                yield self._emit(key, group)
                self.curr_buffer_size -= len(group)
                del groups[key]
            if self.curr_buffer_size == self.max_buffer_size:
                evicted = self._remove_biggest_key()
                if evicted is not None:
                    yield self._emit(key, evicted)  # labelled with the current sample's key, as in PyTorch
        for key in tuple(self.buffer_elements):
            items = self.buffer_elements.pop(key)
            self.curr_buffer_size -= len(items)
            yield self._emit(key, items)

    def reset(self):
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __getstate__(self):
        state = (self.datapipe, self.group_key_fn, self.keep_key, self.max_buffer_size, self.group_size,
                 self.guaranteed_group_size, self.drop_remaining, self.wrapper_class, self._valid_iterator_id,
                 self._number_of_samples_yielded)
        return state if IterDataPipe.getstate_hook is None else IterDataPipe.getstate_hook(state)

    def __setstate__(self, state):
        (self.datapipe, self.group_key_fn, self.keep_key, self.max_buffer_size, self.group_size,
         self.guaranteed_group_size, self.drop_remaining, self.wrapper_class, self._valid_iterator_id,
         self._number_of_samples_yielded) = state
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __del__(self):
        self.buffer_elements.clear()
