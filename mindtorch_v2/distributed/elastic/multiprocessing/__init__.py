"""torch.distributed.elastic.multiprocessing: the std-stream options of torchrun's workers.

Std says which streams a worker's output goes to a log file (--redirects) or to a log file and the
console (--tee), per local rank; DefaultLogsSpecs holds them with --log-dir and --local-ranks-filter.
The agent (elastic/agent/server/local_elastic_agent.py) starts and watches the processes.
"""
import os
import re
import tempfile
from enum import IntFlag

_VALUE_REGEX = r"^[0-3]$"
_MAPPING_REGEX = r"^(\d:[0-3],)*(\d:[0-3])$"


class Std(IntFlag):
    NONE = 0
    OUT = 1
    ERR = 2
    ALL = OUT | ERR

    @classmethod
    def from_str(cls, vm):
        """"0".."3" -> one Std for every rank; "0:3,1:0" -> {local_rank: Std}."""
        if re.match(_VALUE_REGEX, vm):
            return Std(int(vm))
        if re.match(_MAPPING_REGEX, vm):
            return {int(i): Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
        raise ValueError(f"{vm} does not match: <{_VALUE_REGEX}> or <{_MAPPING_REGEX}>")


def to_map(val_or_map, local_world_size):
    """{local_rank: Std} for every local rank (ranks a mapping leaves out get Std.NONE)."""
    if isinstance(val_or_map, Std):
        return dict.fromkeys(range(local_world_size), val_or_map)
    return {i: val_or_map.get(i, Std.NONE) for i in range(local_world_size)}


class LogsSpecs:
    """Where workers' std streams go: log_dir, redirects, tee, local_ranks_filter."""

    def __init__(self, log_dir=None, redirects=Std.NONE, tee=Std.NONE, local_ranks_filter=None):
        self._root_log_dir = log_dir
        self._redirects = redirects
        self._tee = tee
        self._local_ranks_filter = local_ranks_filter

    @property
    def root_log_dir(self):
        return self._root_log_dir


class DefaultLogsSpecs(LogsSpecs):
    """Log files under <log_dir>/<run_id>_<random>/attempt_<n>/<local_rank>/{stdout,stderr}.log."""

    def __init__(self, log_dir=None, redirects=Std.NONE, tee=Std.NONE, local_ranks_filter=None):
        if log_dir != os.devnull:
            if log_dir is None:
                log_dir = tempfile.mkdtemp(prefix="torchelastic_")
            elif not os.path.exists(log_dir):
                os.makedirs(log_dir, exist_ok=True)
            elif os.path.isfile(log_dir):
                raise NotADirectoryError(f"log_dir: {log_dir} is a file")
        super().__init__(log_dir, redirects, tee, local_ranks_filter)
        self._run_log_dir = None

    def run_log_dir(self, run_id):
        if self._run_log_dir is None:
            os.makedirs(self._root_log_dir, exist_ok=True)
            self._run_log_dir = tempfile.mkdtemp(prefix=f"{run_id}_", dir=self._root_log_dir)
        return self._run_log_dir

    def streams(self, run_id, restart_count, local_world_size):
        """Per local rank: (its log directory, redirect Std, tee Std, shown on the console)."""
        attempt = os.path.join(self.run_log_dir(run_id), f"attempt_{restart_count}")
        redirects, tee = to_map(self._redirects, local_world_size), to_map(self._tee, local_world_size)
        out = {}
        for r in range(local_world_size):
            shown = self._local_ranks_filter is None or r in self._local_ranks_filter
            out[r] = (os.path.join(attempt, str(r)), redirects[r] | tee[r], tee[r], shown)
        return out
