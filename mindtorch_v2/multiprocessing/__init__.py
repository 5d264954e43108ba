"""torch.multiprocessing: the standard multiprocessing module, with tensors and storages sent through
shared memory (PyTorch 2.13's module; the reductions are in reductions.py, the mappings in
mindtorch_v2/_shared_memory.py).

Once imported (mindtorch_v2 imports it), every multiprocessing queue, pipe and pool of any context
pickles a CPU tensor by moving its storage into shared memory (share_memory_) and sending a handle:
the receiver maps the same memory, so writes in either process are visible in the other.
"""
import ctypes
import multiprocessing
import sys

from .reductions import init_reductions

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]

from multiprocessing import *  # noqa: F401,F403,E402

__all__ += multiprocessing.__all__

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG, _PR_SET_NAME, _PR_GET_NAME = 1, 15, 16


def _prctl_pr_set_pdeathsig(sig):
    """Ask the kernel to send sig to this process when its parent dies (Linux prctl; PyTorch's helper)."""
    _libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def _set_thread_name(name: str) -> None:
    """Set the name of the current thread (at most 15 bytes are kept, as by the kernel)."""
    _libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def _get_thread_name() -> str:
    buf = ctypes.create_string_buffer(16)
    _libc.prctl(_PR_GET_NAME, buf, 0, 0, 0)
    return buf.value.decode()


from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext, ProcessExitedException,  # noqa: E402,F401
                    ProcessRaisedException, spawn, SpawnContext, start_processes)

if sys.platform == "darwin" or sys.platform == "win32":
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors: one of get_all_sharing_strategies()."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """Return the current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """Return a set of sharing strategies supported on a current system."""
    return _all_sharing_strategies


init_reductions()
