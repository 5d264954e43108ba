"""`.shuffle` of a map-style pipe: an IterDataPipe over its indices in a seeded random order."""
import random

from ..datapipe import IterDataPipe, MapDataPipe
from ..iter.combinatorics import _ShuffleSettings, _draw_seed

__all__ = ["ShufflerIterDataPipe"]


class ShufflerIterDataPipe(_ShuffleSettings, IterDataPipe):
    """Yields datapipe[i] for the indices (default: all) in an order sampled per iterator from set_seed's
    seed, else from torch's generator; in order when shuffling is off."""

    def __init__(self, datapipe, *, indices=None):
        super().__init__()
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled, self._seed, self._rng = True, None, random.Random()
        self._shuffled_indices = self.indices

    def __iter__(self):
        if not self._enabled:
            for i in self.indices:
                yield self.datapipe[i]
            return
        while self._shuffled_indices:
            yield self.datapipe[self._shuffled_indices.pop()]

    def reset(self):
        if self._enabled and self._seed is None:
            self._seed = _draw_seed()
        self._rng.seed(self._seed)
        self._seed = None
        self._shuffled_indices = self._rng.sample(self.indices, len(self.indices))

    def __len__(self):
        return len(self.datapipe)

    def __getstate__(self):
        state = (self.datapipe, self.indices, self._enabled, self._seed, self._rng.getstate(), self._shuffled_indices,
                 self._valid_iterator_id, self._number_of_samples_yielded)
        return state if IterDataPipe.getstate_hook is None else IterDataPipe.getstate_hook(state)

    def __setstate__(self, state):
        (self.datapipe, self.indices, self._enabled, self._seed, rng_state, self._shuffled_indices,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
