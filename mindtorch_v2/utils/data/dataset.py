"""torch.utils.data datasets and random_split (PyTorch 2.13's code)."""
import bisect
import itertools
import math
import warnings
from collections.abc import Sequence
from typing import cast, Generic, Iterable, TypeVar
from mindtorch_v2._random import Generator, default_generator, randperm
from mindtorch_v2._tensor import Tensor
__all__ = ['Dataset', 'IterableDataset', 'TensorDataset', 'StackDataset', 'ConcatDataset', 'ChainDataset', 'Subset', 'random_split']
_T = TypeVar('_T')
_T_co = TypeVar('_T_co', covariant=True)
_T_dict = dict[str, _T_co]
_T_tuple = tuple[_T_co, ...]
_T_stack = TypeVar('_T_stack', _T_tuple, _T_dict)

class Dataset(Generic[_T_co]):

    def __getitem__(self, index) -> _T_co:
        raise NotImplementedError('Subclasses of Dataset should implement __getitem__.')

    def __add__(self, other: 'Dataset[_T_co]') -> 'ConcatDataset[_T_co]':
        return ConcatDataset([self, other])

class IterableDataset(Dataset[_T_co], Iterable[_T_co]):

    def __add__(self, other: Dataset[_T_co]):
        return ChainDataset([self, other])

class TensorDataset(Dataset[tuple[Tensor, ...]]):
    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any((tensors[0].size(0) != tensor.size(0) for tensor in tensors)):
            raise AssertionError('Size mismatch between tensors')
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple((tensor[index] for tensor in self.tensors))

    def __len__(self) -> int:
        return self.tensors[0].size(0)

class StackDataset(Dataset[_T_stack]):
    datasets: tuple | dict

    def __init__(self, *args: Dataset[_T_co], **kwargs: Dataset[_T_co]) -> None:
        if args:
            if kwargs:
                raise ValueError('Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, but both types are given.')
            self._length = len(args[0])
            if any((self._length != len(dataset) for dataset in args)):
                raise ValueError('Size mismatch between datasets')
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any((self._length != len(dataset) for dataset in tmp)):
                raise ValueError('Size mismatch between datasets')
            self.datasets = kwargs
        else:
            raise ValueError('At least one dataset should be passed')

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple((dataset[index] for dataset in self.datasets))

    def __getitems__(self, indices: list):
        if isinstance(self.datasets, dict):
            dict_batch: list[_T_dict] = [{} for _ in indices]
            for k, dataset in self.datasets.items():
                if callable(getattr(dataset, '__getitems__', None)):
                    items = dataset.__getitems__(indices)
                    if len(items) != len(indices):
                        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
                    for data, d_sample in zip(items, dict_batch, strict=True):
                        d_sample[k] = data
                else:
                    for idx, d_sample in zip(indices, dict_batch, strict=True):
                        d_sample[k] = dataset[idx]
            return dict_batch
        list_batch: list[list] = [[] for _ in indices]
        for dataset in self.datasets:
            if callable(getattr(dataset, '__getitems__', None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
                for data, t_sample in zip(items, list_batch, strict=True):
                    t_sample.append(data)
            else:
                for idx, t_sample in zip(indices, list_batch, strict=True):
                    t_sample.append(dataset[idx])
        tuple_batch: list[_T_tuple] = [tuple(sample) for sample in list_batch]
        return tuple_batch

    def __len__(self) -> int:
        return self._length

class ConcatDataset(Dataset[_T_co]):
    datasets: list[Dataset[_T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence):
        r, s = ([], 0)
        for e in sequence:
            l = len(e)
            r.append(l + s)
            s += l
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError('datasets should not be an empty iterable')
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError('ConcatDataset does not support IterableDataset')
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError('absolute value of index should not exceed dataset length')
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == 0:
            sample_idx = idx
        else:
            sample_idx = idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self):
        warnings.warn('`cummulative_sizes` attribute is renamed to `cumulative_sizes`', FutureWarning, stacklevel=2)
        return self.cumulative_sizes

class ChainDataset(IterableDataset):

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError('ChainDataset only supports IterableDataset')
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError('ChainDataset only supports IterableDataset')
            total += len(d)
        return total

class Subset(Dataset[_T_co]):
    dataset: Dataset[_T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(f'{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly with your custom logic. A simple implementation:\n\ndef __getitems__(self, indices):\n    return [self.__getitem__(idx) for idx in indices]')

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[_T_co]:
        if callable(getattr(self.dataset, '__getitems__', None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        else:
            return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)

def random_split(dataset: Dataset[_T], lengths: Sequence[int | float], generator: Generator | None=default_generator) -> list[Subset[_T]]:
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f'Fraction at index {i} is not between 0 and 1')
            n_items_in_split = math.floor(len(dataset) * frac)
            subset_lengths.append(n_items_in_split)
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            idx_to_add_at = i % len(subset_lengths)
            subset_lengths[idx_to_add_at] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f'Length of split at index {i} is 0. This might result in an empty dataset.', stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError('Sum of input lengths does not equal the length of the input dataset!')
    indices = randperm(sum(lengths), generator=generator).tolist()
    lengths = cast(Sequence[int], lengths)
    return [Subset(dataset, indices[offset - length:offset]) for offset, length in zip(itertools.accumulate(lengths), lengths, strict=True)]
