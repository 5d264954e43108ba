"""torch.distributed.elastic.multiprocessing.errors: how a worker's failure reaches the launcher.

`@record` on a worker's main writes an uncaught exception (type, message, traceback) as JSON to the
file named by TORCHELASTIC_ERROR_FILE, which the agent sets per worker; the agent reads it back into
a ProcessFailure and torchrun raises ChildFailedError, whose message names the first failing rank,
its exit code and traceback, in PyTorch's layout.
"""
import faulthandler
import json
import logging
import os
import signal
import socket
import time
import traceback
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from functools import wraps
from string import Template

__all__ = ["ProcessFailure", "ChildFailedError", "record", "ErrorHandler", "get_error_handler"]

logger = logging.getLogger(__name__)

_EMPTY_ERROR_DATA = {"message": "<NONE>"}
_NOT_AVAILABLE = "<N/A>"


class ErrorHandler:
    """Writes an exception as structured JSON to the file TORCHELASTIC_ERROR_FILE names."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self):
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}", stacklevel=2)

    def _write_error_file(self, file_path, error_msg):
        try:
            with open(file_path, "w") as fp:
                fp.write(error_msg)
        except Exception as e:
            warnings.warn(f"Unable to write error to file. {type(e).__name__}: {e}", stacklevel=2)

    def record_exception(self, e):
        file = self._get_error_file_path()
        if file:
            data = {"message": {"message": f"{type(e).__name__}: {e}",
                                "extraInfo": {"py_callstack": traceback.format_exc(),
                                              "timestamp": str(int(time.time()))}}}
            with open(file, "w") as fp:
                json.dump(data, fp)

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copy a child's error file to this process's own, with the child's exit code."""
        with open(rootcause_error_file) as fp:
            rootcause_error = json.load(fp)
        if error_code and isinstance(rootcause_error.get("message"), dict):
            rootcause_error["message"]["errorCode"] = error_code
        my_error_file = self._get_error_file_path()
        if my_error_file:
            if os.path.isfile(my_error_file):
                os.remove(my_error_file)
            self._write_error_file(my_error_file, json.dumps(rootcause_error))
        else:
            logger.error("no error file defined for parent, to copy child error file (%s)", rootcause_error_file)


def get_error_handler():
    return ErrorHandler()


@dataclass
class ProcessFailure:
    """A failed worker: its exit code and, when it wrote one, its error file's message."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    error_file_data: dict = field(init=False)
    message: str = field(init=False)
    timestamp: int = field(init=False)

    def __post_init__(self):
        self.error_file_data = _EMPTY_ERROR_DATA
        if os.path.isfile(self.error_file):
            with open(self.error_file) as fp:
                self.error_file_data = json.load(fp)
            message = self.error_file_data["message"]
            self.message = message
            if isinstance(message, str):
                self.timestamp = int(self.error_file_data.get("timestamp", 0))
            else:
                self.timestamp = int(message["extraInfo"]["timestamp"])
        else:
            self.error_file = _NOT_AVAILABLE
            self.error_file_data = _EMPTY_ERROR_DATA
            self.message = ""
            self.timestamp = int(time.time())
        if not self.message:
            if self.exitcode < 0:
                self.message = f"Signal {-self.exitcode} ({self.signal_name()}) received by PID {self.pid}"
            else:
                self.error_file_data["errorTraits"] = {"category": "system_terminated_error",
                                                       "retryability": "False"}
                self.message = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"

    def signal_name(self):
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except Exception:
                return _NOT_AVAILABLE
        return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        return datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


_FAILURE_FORMAT_TEMPLATE = """[${idx}]:
  time      : ${time}
  host      : ${hostname}
  rank      : ${rank} (local_rank: ${local_rank})
  exitcode  : ${exitcode} (pid: ${pid}) ${signal_name}
  error_file: ${error_file}
  traceback : ${message}"""

_MSG_FORMAT_TEMPLATE = """
${boarder}
${title}
${section}
Failures:
${other_failures}
${section}
Root Cause (first observed failure):
${root_failure}
${boarder}"""


class ChildFailedError(Exception):
    """Raised by the launcher when workers failed; `failures` maps global rank -> ProcessFailure."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        if not self.failures:
            raise AssertionError
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures.keys(), key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        root_failure_fmt, other_failures_fmt = "", []
        width = len(title)
        for idx, (rank, failure) in enumerate(self.failures.items()):
            fmt, w = self._format_failure(idx, rank, failure)
            width = max(width, w)
            if rank == root_rank:
                root_failure_fmt = fmt
            else:
                other_failures_fmt.append(fmt)
        width = min(width, 60)
        return Template(_MSG_FORMAT_TEMPLATE).substitute(
            boarder=boarder_delim * width, title=title, section=section_delim * width,
            root_failure=root_failure_fmt,
            other_failures="\n".join(other_failures_fmt or ["  <NO_OTHER_FAILURES>"]))

    def _format_failure(self, idx, rank, failure):
        msg = failure.message
        if isinstance(failure.message, dict):
            msg = (failure.message.get("extraInfo", {})
                   .get("py_callstack", failure.message.get("message", "<N/A>"))
                   .replace("\n", "\n  "))
        signal_name = failure.signal_name()
        fmt = Template(_FAILURE_FORMAT_TEMPLATE).substitute(
            idx=idx, time=failure.timestamp_isoformat(), hostname=socket.getfqdn(), rank=rank,
            local_rank=failure.local_rank, exitcode=failure.exitcode, pid=failure.pid,
            signal_name=f" ({signal_name})" if signal_name != _NOT_AVAILABLE else "",
            error_file=failure.error_file, message=msg)
        return fmt, max(len(line) for line in fmt.split("\n"))


def record(fn, error_handler=None):
    """Decorate a process's main so that an uncaught exception is written to its error file."""
    if not error_handler:
        error_handler = get_error_handler()

    @wraps(fn)
    def wrapper(*args, **kwargs):
        error_handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code == 0:
                return None
            raise
        except ChildFailedError as e:
            _, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                error_handler.dump_error_file(failure.error_file, failure.exitcode)
            raise
        except Exception as e:
            error_handler.record_exception(e)
            raise
    return wrapper
