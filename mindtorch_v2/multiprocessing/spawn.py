"""torch.multiprocessing.spawn: run fn(i, *args) in nprocs processes and join them, raising the first
failure in the parent (the child's traceback, its exit code or its signal) after stopping the others.

A child reports an exception by pickling its formatted traceback into a file of its own: a one-shot
message that cannot deadlock the way a queue can when a process dies holding its lock. A child that
dies without writing the file failed by exit code or signal.
"""
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor

from . import _prctl_pr_set_pdeathsig

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
           "spawn", "SpawnContext", "start_processes"]

# "1" starts forkserver children from a thread pool (PyTorch's opt-in; spawn children start in turn).
ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A child process of start_processes failed: which one (error_index) and its pid."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def _fields(self):
        return self.msg, self.error_index, self.error_pid

    def __reduce__(self):
        # Exception pickles only its args (the message); rebuild it with every field.
        return type(self), self._fields()


class ProcessRaisedException(ProcessException):
    """The child's function raised; the message holds the child's traceback."""


class ProcessExitedException(ProcessException):
    """The child exited with a nonzero code, or a signal killed it (signal_name, exit_code < 0)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def _fields(self):
        return super()._fields() + (self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    """The child's entry point: run fn(i, *args); an exception leaves its traceback in error_file."""
    # Linux only (a no-op elsewhere): a non-daemonic child gets SIGINT if the parent dies first.
    _prctl_pr_set_pdeathsig(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent's SIGINT: stopping is what it asked for
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


def _signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"<Unknown signal {signum}>"


class ProcessContext:
    """The processes started by start_processes, with the file each one reports an exception in."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files
        # The processes not joined yet, by sentinel: join waits on all of them at once.
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_procs_with_timeout(self, timeout: float):
        """Join every process, all within one shared timeout."""
        deadline = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None):
        """Wait up to timeout for a process to finish. Return True once all have exited cleanly,
        False while some still run. When one fails, stop the others (grace_period to exit on their
        own, then SIGTERM, then SIGKILL) and raise the cause of that first failure."""
        if not self.sentinels:
            return True  # joined already; calling again is harmless
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_all(grace_period)
        raise self._error(failed)

    def _stop_all(self, grace_period):
        """Stop the processes still running: grace_period to exit on their own, then SIGTERM, then SIGKILL."""
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        self._signal_alive("terminate", "Terminating process %s via signal SIGTERM")
        # A child with a Python SIGTERM handler runs it only when its main thread is back in bytecode:
        # one stuck in native code never does, hence SIGKILL after waiting once more.
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        self._signal_alive("kill", "Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL")
        for p in self.processes:
            p.join()

    def _signal_alive(self, method, message):
        for p in self.processes:
            if p.is_alive():
                log.warning(message, p.pid)
                getattr(p, method)()

    def _error(self, index):
        """The exception for the failure of process index; every error file is removed."""
        pid, code, path = self.processes[index].pid, self.processes[index].exitcode, self.error_files[index]
        trace = None
        if os.access(path, os.R_OK):
            with open(path, "rb") as f:
                trace = pickle.load(f)
        for other in self.error_files:  # all processes have exited: nothing writes these any more
            if os.path.exists(other):
                os.unlink(other)
        if trace is not None:
            return ProcessRaisedException(f"\n\n-- Process {index:d} terminated with the following error:\n{trace}",
                                          index, pid)
        if code < 0:
            name = _signal_name(-code)
            return ProcessExitedException(f"process {index:d} terminated with signal {name}", index, pid, code, name)
        return ProcessExitedException(f"process {index:d} terminated with exit code {code:d}", index, pid, code)


class SpawnContext(ProcessContext):
    """The name of ProcessContext before PyTorch 1.4."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _error_file_path():
    # A fresh name whose file does not exist: the child creates it only when it has an error to report.
    fd, path = tempfile.mkstemp(prefix="pytorch-errorfile-", suffix=".pickle")
    os.close(fd)
    os.unlink(path)
    return path


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """spawn() for any start method ("spawn", "fork", "forkserver"): fork suits notebooks, where fn
    cannot be pickled by reference."""
    ctx = multiprocessing.get_context(start_method)

    def start(i):
        path = _error_file_path()
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        return p, path

    # Only forkserver starts in parallel: PyTorch found that spawn children started from threads get SIGINT.
    if start_method == "forkserver" and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1":
        log.info("Starting processes in parallel.")
        with ThreadPoolExecutor(max_workers=nprocs) as pool:
            started = list(pool.map(start, range(nprocs)))  # in index order, whatever finishes first
    else:
        started = [start(i) for i in range(nprocs)]
    context = ProcessContext([p for p, _ in started], [path for _, path in started])
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run fn(i, *args) for i in range(nprocs), each in a new process started by the "spawn" method
    (fn must be picklable: defined at the top level of a module).

    With join=True, wait for all of them and return None; if one fails, the others are stopped and
    ProcessRaisedException (with the child's traceback) or ProcessExitedException is raised. With
    join=False, return the ProcessContext. daemon sets the processes' daemon flag. start_method is
    deprecated: anything other than "spawn" warns and is ignored (start_processes takes any method).
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
