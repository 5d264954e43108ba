"""Sampler (indices drawn by a torch Sampler) and Shuffler (`.shuffle`: a buffered shuffle)."""
import random
from collections.abc import Sized

import mindtorch_v2 as torch
from mindtorch_v2.utils.data.sampler import SequentialSampler
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .callable import _len_of_source

__all__ = ["SamplerIterDataPipe", "ShufflerIterDataPipe"]


def _draw_seed():
    """A seed from torch's global generator (what a pipe without set_seed uses for each iterator)."""
    return int(torch.empty((), dtype=torch.int64).random_().item())


class SamplerIterDataPipe(IterDataPipe):
    """Yields what sampler (a Sampler class built on the datapipe) yields."""

    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None, sampler_kwargs=None):
        if not isinstance(datapipe, Sized):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        super().__init__()
        self.datapipe = datapipe
        self.sampler_args = tuple() if sampler_args is None else sampler_args
        # the caller's dict gains data_source, as in PyTorch
        self.sampler_kwargs = dict() if sampler_kwargs is None else sampler_kwargs
        self.sampler_kwargs.update(data_source=datapipe)
        self.sampler = sampler(*self.sampler_args, **self.sampler_kwargs)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return _len_of_source(self, self.sampler)


class _ShuffleSettings:
    """What graph_settings finds a shuffling pipe by: set_shuffle and set_seed (the next iterator's seed)."""

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(_ShuffleSettings, IterDataPipe):
    """Shuffles through a buffer of buffer_size samples: once full, each new sample replaces a random one,
    which is yielded; the rest leave in random order at the end. Each iterator reseeds its Python RNG from
    set_seed's seed, else from torch's generator."""

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        super().__init__()
        self._buffer = []
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._enabled, self._seed, self._rng = True, None, random.Random()

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        buf, rng = self._buffer, self._rng
        for x in self.datapipe:
            if len(buf) < self.buffer_size:
                buf.append(x)
                continue
            i = rng.randint(0, len(buf) - 1)
            out, buf[i] = buf[i], x
            yield out
        while buf:
            yield buf.pop(rng.randint(0, len(buf) - 1))

    def __len__(self):
        return _len_of_source(self, self.datapipe)

    def reset(self):
        self._buffer = []
        if self._enabled:
            seed = _draw_seed() if self._seed is None else self._seed
            self._rng.seed(seed)
            self._seed = None  # a set seed serves one iterator

    def __getstate__(self):
        state = (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, self._rng.getstate(),
                 self._valid_iterator_id, self._number_of_samples_yielded)
        return state if IterDataPipe.getstate_hook is None else IterDataPipe.getstate_hook(state)

    def __setstate__(self, state):
        (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, rng_state,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)

    def __del__(self):
        self._buffer.clear()
