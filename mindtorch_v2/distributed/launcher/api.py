"""torch.distributed.launcher.api: LaunchConfig and elastic_launch, torchrun's Python entry.

    elastic_launch(LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=2, rdzv_backend="c10d",
                                rdzv_endpoint="localhost:0", max_restarts=0), entrypoint)(*args)

The entrypoint is a program (str, e.g. sys.executable with ["-u", "train.py", ...]) or a Python
function, run in nproc_per_node worker processes; the result is {global rank: return value}.
"""
import uuid
from dataclasses import dataclass, field

from ..elastic.agent.server.local_elastic_agent import LocalElasticAgent
from ..elastic.multiprocessing import DefaultLogsSpecs

__all__ = ["LaunchConfig", "elastic_launch", "launch_agent"]


@dataclass
class LaunchConfig:
    min_nodes: int
    max_nodes: int
    nproc_per_node: int
    logs_specs: object = None
    run_id: str = ""
    role: str = "default_role"
    rdzv_endpoint: str = ""
    rdzv_backend: str = "etcd"
    rdzv_configs: dict = field(default_factory=dict)
    rdzv_timeout: int = -1
    max_restarts: int = 3
    monitor_interval: float = 0.1
    start_method: str = "spawn"
    log_line_prefix_template: str = None
    metrics_cfg: dict = field(default_factory=dict)
    local_addr: str = None
    event_log_handler: str = "null"
    numa_options: object = None
    signals_to_handle: str = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"
    duplicate_stdout_filters: list = None
    duplicate_stderr_filters: list = None
    virtual_local_rank: bool = False
    shutdown_timeout: int = None

    def __post_init__(self):
        default_timeout = 900
        if self.rdzv_timeout != -1:
            self.rdzv_configs["timeout"] = self.rdzv_timeout
        elif "timeout" not in self.rdzv_configs:
            self.rdzv_configs["timeout"] = default_timeout
        if self.logs_specs is None:
            self.logs_specs = DefaultLogsSpecs()


class elastic_launch:
    """elastic_launch(config, entrypoint)(*args): run entrypoint(*args) in the configured workers."""

    def __init__(self, config, entrypoint):
        self._config = config
        self._entrypoint = entrypoint

    def __call__(self, *args):
        return launch_agent(self._config, self._entrypoint, list(args))


def launch_agent(config, entrypoint, args):
    if not config.run_id:
        config.run_id = str(uuid.uuid4())
    for name in ("numa_options", "duplicate_stdout_filters", "duplicate_stderr_filters"):
        if getattr(config, name):
            raise NotImplementedError(f"torch.distributed.launcher: {name} is not implemented")
    if config.virtual_local_rank:
        raise NotImplementedError("torch.distributed.launcher: virtual_local_rank is not implemented")
    return LocalElasticAgent(config, entrypoint, args).run()
