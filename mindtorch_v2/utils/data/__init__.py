"""torch.utils.data: datasets, samplers, DataPipes and DataLoader (worker processes included)."""
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,  # noqa: F401
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler)
from .distributed import DistributedSampler  # noqa: F401
from .dataloader import DataLoader, _DatasetKind, default_collate, default_convert, get_worker_info  # noqa: F401
from ._utils.worker import WorkerInfo  # noqa: F401
from . import _utils  # noqa: F401
from .datapipes._decorator import (argument_validation, functional_datapipe, guaranteed_datapipes_determinism,  # noqa: F401
                                   non_deterministic, runtime_validation, runtime_validation_disabled)
from .datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe  # noqa: F401
from . import datapipes, graph, graph_settings  # noqa: F401
