"""DataLoader worker processes: seeding, WorkerInfo, the fetch loop.

Batches go back through the result queue as they are: torch.multiprocessing's reductions send their
tensors' storages as shared memory (the default collate already stacks them into shared memory).
"""
import multiprocessing.queues
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import mindtorch_v2 as torch

MP_STATUS_CHECK_INTERVAL = 5.0

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """In a DataLoader worker: its id, num_workers, seed and dataset copy; None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: object = None


class ExceptionWrapper:
    """An exception raised in a worker, re-raised in the main process with the worker's traceback."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


def _generate_state(base_seed, worker_id):
    """numpy's seed for a worker: PyTorch's SeedSequence-style hash of (worker_id, base_seed)."""
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xCA01F9DD, 0x4973F715, 4 * 8 // 2, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value):
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32) & MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    for i in range(len(pool)):
        pool[i] = hash(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = pool[i_dst]
        data_val = (data_val ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        state.append((data_val ^ (data_val >> XSHIFT)) & MASK32)
    return state


# ---- the worker loop ----------------------------------------------------------------------------

class ManagerWatchdog:
    """Whether the process that started this worker is alive (a dead one leaves the worker reparented)."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


class ResultQueue(multiprocessing.queues.Queue):
    """The workers' result queue. A result the queue's feeder thread fails to pickle (an unpicklable
    object, no fd or /dev/shm space left for its shared memory) goes back as that error, for its task:
    multiprocessing would print it and drop it, and the main process would wait for it forever."""

    def __init__(self, ctx):
        super().__init__(ctx=ctx)

    def _on_queue_feeder_error(self, e, obj):
        if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], int):
            where = "in DataLoader worker process " + (str(_worker_info.id) if _worker_info else "")
            self.put((obj[0], ExceptionWrapper((type(e), e, e.__traceback__), where=where)))
        else:
            super()._on_queue_feeder_error(e, obj)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers, shared_seed=None):
    from ..dataloader import _DatasetKind
    try:
        torch.set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        torch.manual_seed(seed)
        try:
            import numpy as np
            np.random.seed(_generate_state(base_seed, worker_id))
        except ImportError:
            pass
        from ..datapipes.datapipe import IterDataPipe
        from ..graph_settings import apply_random_seed
        shared_rng = torch.Generator()  # the DataPipe seeds: the same in every worker and rank
        if isinstance(dataset, IterDataPipe):
            if shared_seed is None:
                raise AssertionError("shared_seed must be provided for IterDataPipe workers")
            shared_rng.manual_seed(shared_seed)
            dataset = apply_random_seed(dataset, shared_rng)
        global _worker_info
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if isinstance(dataset, IterDataPipe):
                    if r.seed is None:
                        raise AssertionError("resume iteration seed is None for IterDataPipe")
                    shared_rng.manual_seed(r.seed)
                    dataset = apply_random_seed(dataset, shared_rng)
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            elif r is None:
                break
            elif done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
