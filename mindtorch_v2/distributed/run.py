"""torch.distributed.run (torchrun): launch nproc_per_node workers on each of nnodes nodes.

    torchrun --nproc-per-node=2 train.py args...             (one machine; or --standalone)
    torchrun --nnodes=2 --node-rank=R --master-addr=A --master-port=P --nproc-per-node=2 train.py
    python -m torch.distributed.run ...                       (through the proxy)

The options and their PET_* environment twins are PyTorch's; the agent
(elastic/agent/server/local_elastic_agent.py) hosts the rendezvous TCPStore on node 0, sets each
worker's RANK, LOCAL_RANK, WORLD_SIZE, ... and restarts the group up to --max-restarts times.
Not implemented (they raise): elastic node ranges (--nnodes=MIN:MAX), rendezvous backends other than
static and c10d, --numa-binding, --virtual-local-rank, --logs-specs plugins, the duplicate filters.
"""
import logging
import os
import sys
import uuid
from argparse import REMAINDER, ArgumentParser

from .argparse_util import check_env, env
from .elastic.multiprocessing import DefaultLogsSpecs, Std
from .elastic.multiprocessing.errors import record
from .elastic.rendezvous.utils import _parse_rendezvous_config
from .launcher.api import LaunchConfig, elastic_launch

logger = logging.getLogger("torch.distributed.run")


def get_args_parser() -> ArgumentParser:
    """Parse the command line options."""
    parser = ArgumentParser(description="Torch Distributed Elastic Training Launcher")

    def comma_separated_list(value):
        placeholder = "<COMMA_PLACEHOLDER>"
        value = value.replace(",,", placeholder)
        items = value.split(",")
        items = [item.replace(placeholder, ",") for item in items]
        return items

    #
    # Worker/node size related arguments.
    #

    parser.add_argument(
        "--nnodes",
        action=env,
        type=str,
        default="1:1",
        help="Number of nodes, or the range of nodes in form <minimum_nodes>:<maximum_nodes>.",
    )
    parser.add_argument(
        "--nproc-per-node",
        "--nproc_per_node",
        action=env,
        type=str,
        default="1",
        help="Number of workers per node; supported values: [auto, cpu, gpu, xpu, int].",
    )

    #
    # Rendezvous related arguments
    #

    parser.add_argument(
        "--rdzv-backend",
        "--rdzv_backend",
        action=env,
        type=str,
        default="static",
        help="Rendezvous backend.",
    )
    parser.add_argument(
        "--rdzv-endpoint",
        "--rdzv_endpoint",
        action=env,
        type=str,
        default="",
        help="Rendezvous backend endpoint; usually in form <host>:<port>.",
    )
    parser.add_argument(
        "--rdzv-id",
        "--rdzv_id",
        action=env,
        type=str,
        default="none",
        help="User-defined group id.",
    )
    parser.add_argument(
        "--rdzv-conf",
        "--rdzv_conf",
        action=env,
        type=str,
        default="",
        help="Additional rendezvous configuration (<key1>=<value1>,<key2>=<value2>,...).",
    )
    parser.add_argument(
        "--standalone",
        action=check_env,
        help="Start a local standalone rendezvous backend that is represented by a C10d TCP store "
        "on a free port. Useful when launching single-node, multi-worker job. If specified "
        "--rdzv-backend, --rdzv-endpoint, --rdzv-id are auto-assigned and any explicitly set values "
        "are ignored.",
    )

    #
    # User-code launch related arguments.
    #

    parser.add_argument(
        "--max-restarts",
        "--max_restarts",
        action=env,
        type=int,
        default=0,
        help="Maximum number of worker group restarts before failing.",
    )
    parser.add_argument(
        "--monitor-interval",
        "--monitor_interval",
        action=env,
        type=float,
        default=0.1,
        help="Interval, in seconds, to monitor the state of workers.",
    )
    parser.add_argument(
        "--start-method",
        "--start_method",
        action=env,
        type=str,
        default="spawn",
        choices=["spawn", "fork", "forkserver"],
        help="Multiprocessing start method to use when creating workers.",
    )
    parser.add_argument(
        "--event-log-handler",
        "--event_log_handler",
        action=env,
        type=str,
        default="null",
        help="name of a registered event logging handler (see: https://docs.pytorch.org/docs/stable/elastic/events.html)",
    )
    parser.add_argument(
        "--role",
        action=env,
        type=str,
        default="default",
        help="User-defined role for the workers.",
    )
    parser.add_argument(
        "-m",
        "--module",
        action=check_env,
        help="Change each process to interpret the launch script as a Python module, executing "
        "with the same behavior as 'python -m'.",
    )
    parser.add_argument(
        "--no-python",
        "--no_python",
        action=check_env,
        help="Skip prepending the training script with 'python' - just execute it directly. Useful "
        "when the script is not a Python script.",
    )

    parser.add_argument(
        "--run-path",
        "--run_path",
        action=check_env,
        help="Run the training script with runpy.run_path in the same interpreter."
        " Script must be provided as an abs path (e.g. /abs/path/script.py)."
        " Takes precedence over --no-python.",
    )
    parser.add_argument(
        "--log-dir",
        "--log_dir",
        action=env,
        type=str,
        default=None,
        help="Base directory to use for log files (e.g. /var/log/torch/elastic). The same "
        "directory is reused for multiple runs (a unique job-level sub-directory is created with "
        "rdzv_id as the prefix).",
    )
    parser.add_argument(
        "-r",
        "--redirects",
        action=env,
        type=str,
        default="0",
        help="Redirect std streams into a log file in the log directory (e.g. [-r 3] redirects "
        "both stdout+stderr for all workers, [-r 0:1,1:2] redirects stdout for local rank 0 and "
        "stderr for local rank 1).",
    )
    parser.add_argument(
        "-t",
        "--tee",
        action=env,
        type=str,
        default="0",
        help="Tee std streams into a log file and also to console (see --redirects for format).",
    )

    parser.add_argument(
        "--local-ranks-filter",
        "--local_ranks_filter",
        action=env,
        type=str,
        default="",
        help="Only show logs from specified ranks in console (e.g. [--local_ranks_filter=0,1,2] will "
        "only show logs from rank 0, 1 and 2). This will only apply to stdout and stderr, not to"
        "log files saved via --redirect or --tee",
    )

    parser.add_argument(
        "--duplicate-stdout-filters",
        "--duplicate_stdout_filters",
        action=env,
        type=comma_separated_list,
        default=[],
        help="Duplicates logs streamed to stdout to another specified file with a list of filters (e.g. "
        "[--duplicate_stdout_filters 'apple,orange'] will duplicate log lines matching 'apple' "
        "OR 'orange'. An empty filters list won't duplicate any lines. Use double comma to escape a comma) ",
    )

    parser.add_argument(
        "--duplicate-stderr-filters",
        "--duplicate_stderr_filters",
        action=env,
        type=comma_separated_list,
        default=[],
        help="Duplicates logs streamed to stderr to another specified file with a list of filters (e.g. "
        "[--duplicate_stdout_filters 'apple,orange'] will duplicate log lines matching 'apple' "
        "OR 'orange'. An empty filters list won't duplicate any lines. Use double comma to escape a comma) ",
    )

    #
    # Backwards compatible parameters with caffe2.distributed.launch.
    #

    parser.add_argument(
        "--node-rank",
        "--node_rank",
        type=int,
        action=env,
        default=0,
        help="Rank of the node for multi-node distributed training. It is only used for static "
        "rendezvous (i.e., when ``--rdzv-backend=static``).",
    )
    parser.add_argument(
        "--master-addr",
        "--master_addr",
        default="127.0.0.1",
        type=str,
        action=env,
        help="Address of the master node (rank 0) that only used for static rendezvous. It should "
        "be either the IP address or the hostname of rank 0. For single node multi-proc training "
        "the --master-addr can simply be 127.0.0.1; IPv6 should have the pattern "
        "`[0:0:0:0:0:0:0:1]`.",
    )
    parser.add_argument(
        "--master-port",
        "--master_port",
        default=None,
        type=int,
        action=env,
        help="Port on the master node (rank 0) to be used for communication during distributed "
        "training. It is only used for static rendezvous. Defaults to 29500.",
    )
    parser.add_argument(
        "--local-addr",
        "--local_addr",
        default=None,
        type=str,
        action=env,
        help="Address of the local node. If specified, will use the given address for connection. "
        "Else, will look up the local node address instead. Else, it will be default to local "
        "machine's FQDN.",
    )

    parser.add_argument(
        "--logs-specs",
        "--logs_specs",
        default=None,
        type=str,
        help="torchrun.logs_specs group entrypoint name, value must be type of LogsSpecs. "
        "Can be used to override custom logging behavior.",
    )

    parser.add_argument(
        "--numa-binding",
        "--numa_binding",
        type=str,
                default=None,
        help="Bind worker processes to CPUs near their assigned GPUs for better performance. "
        "See torch/numa/binding.py for available modes and details.",
    )

    parser.add_argument(
        "--signals-to-handle",
        "--signals_to_handle",
        action=env,
        type=str,
        default="SIGTERM,SIGINT,SIGHUP,SIGQUIT",
        help="Comma-separated list of signals to handle and forward to subprocesses. "
        "Default: SIGTERM,SIGINT,SIGHUP,SIGQUIT. "
        "Common additional signals: SIGUSR1,SIGUSR2 (used in SLURM environments).",
    )

    parser.add_argument(
        "--shutdown-timeout",
        "--shutdown_timeout",
        action=env,
        type=int,
        default=None,
        help="Time in seconds to wait for graceful shutdown of worker processes before "
        "sending SIGKILL. If not specified, uses TORCH_ELASTIC_SHUTDOWN_TIMEOUT environment "
        "variable or defaults to 30 seconds.",
    )

    parser.add_argument(
        "--virtual-local-rank",
        "--virtual_local_rank",
        action=check_env,
        help="Enable virtual local rank mode for workers. When enabled, LOCAL_RANK is set to 0 "
        "for all workers and CUDA_VISIBLE_DEVICES is adjusted so each worker accesses its "
        "assigned GPU at device index 0.",
    )

    #
    # Positional arguments.
    #

    parser.add_argument(
        "training_script",
        type=str,
        help="Full path to the (single GPU) training program/script to be launched in parallel, "
        "followed by all the arguments for the training script.",
    )

    # Rest from the training program.
    parser.add_argument("training_script_args", nargs=REMAINDER)

    return parser


def parse_args(args):
    return get_args_parser().parse_args(args)


def parse_min_max_nnodes(nnodes):
    arr = nnodes.split(":")
    if len(arr) == 1:
        return int(arr[0]), int(arr[0])
    if len(arr) == 2:
        return int(arr[0]), int(arr[1])
    raise RuntimeError(f'nnodes={nnodes} is not in "MIN:MAX" format')


def determine_local_world_size(nproc_per_node):
    try:
        return int(nproc_per_node)
    except ValueError:
        if nproc_per_node in ("cpu", "auto"):  # no accelerator here: one worker per CPU
            return os.cpu_count()
        if nproc_per_node == "gpu":
            raise ValueError("Cuda is not available.") from None
        if nproc_per_node == "xpu":
            raise ValueError("Xpu is not available.") from None
        raise ValueError(f"Unsupported nproc_per_node value: {nproc_per_node}") from None


def get_rdzv_endpoint(args):
    if args.rdzv_backend == "static" and not args.rdzv_endpoint:
        return f"{args.master_addr}:{args.master_port}"
    return args.rdzv_endpoint


def get_use_env(args):
    return getattr(args, "use_env", True)


def _omp_threads_default(nproc_per_node):
    """PyTorch's default: one OpenMP thread per worker unless OMP_NUM_THREADS is set (our thread
    pool reads it too), with PyTorch's warning."""
    if "OMP_NUM_THREADS" not in os.environ and nproc_per_node > 1:
        omp_num_threads = 1
        logger.warning(
            "\n*****************************************\n"
            "Setting OMP_NUM_THREADS environment variable for each process to be "
            "%s in default, to avoid your system being overloaded, "
            "please further tune the variable for optimal performance in "
            "your application as needed. \n"
            "*****************************************",
            omp_num_threads,
        )
        os.environ["OMP_NUM_THREADS"] = str(omp_num_threads)


def config_from_args(args):
    """(LaunchConfig, entrypoint, its arguments) from parsed torchrun options."""
    min_nodes, max_nodes = parse_min_max_nnodes(args.nnodes)
    if not 0 < min_nodes <= max_nodes:
        raise AssertionError(f"min_nodes must be > 0 and <= max_nodes, got min_nodes={min_nodes}, max_nodes={max_nodes}")
    if args.max_restarts < 0:
        raise AssertionError("max_restarts must be >= 0")
    if args.rdzv_backend != "static" and not args.rdzv_endpoint:
        logger.warning("master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.")
    if args.node_rank != 0 and args.rdzv_backend != "static":
        logger.warning("node_rank is only used for static rdzv_backend. It will be ignored for rdzv_backend=%s.",
                       args.rdzv_backend)
    for name in ("numa_binding", "logs_specs"):
        if getattr(args, name) is not None:
            raise NotImplementedError(f"torchrun --{name.replace('_', '-')} is not implemented")

    nproc_per_node = determine_local_world_size(args.nproc_per_node)
    _omp_threads_default(nproc_per_node)

    rdzv_configs = _parse_rendezvous_config(args.rdzv_conf)
    if args.rdzv_backend == "static":
        rdzv_configs["rank"] = args.node_rank

    ranks = None
    if args.local_ranks_filter:
        try:
            ranks = set(map(int, args.local_ranks_filter.split(",")))
        except Exception as e:
            raise ValueError("--local_ranks_filter must be a comma-separated list of integers "
                             "e.g. --local_ranks_filter=0,1,2") from e
    logs_specs = DefaultLogsSpecs(log_dir=args.log_dir, redirects=Std.from_str(args.redirects),
                                  tee=Std.from_str(args.tee), local_ranks_filter=ranks)
    config = LaunchConfig(
        min_nodes=min_nodes, max_nodes=max_nodes, nproc_per_node=nproc_per_node, run_id=args.rdzv_id,
        role=args.role, rdzv_endpoint=get_rdzv_endpoint(args), rdzv_backend=args.rdzv_backend,
        rdzv_configs=rdzv_configs, max_restarts=args.max_restarts, monitor_interval=args.monitor_interval,
        start_method=args.start_method, log_line_prefix_template=os.getenv("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"),
        local_addr=args.local_addr, logs_specs=logs_specs, event_log_handler=args.event_log_handler,
        signals_to_handle=args.signals_to_handle, duplicate_stdout_filters=args.duplicate_stdout_filters,
        duplicate_stderr_filters=args.duplicate_stderr_filters, virtual_local_rank=args.virtual_local_rank,
        shutdown_timeout=args.shutdown_timeout)

    cmd_args = []
    if args.run_path:
        cmd = run_script_path
        cmd_args.append(args.training_script)
    elif not args.no_python:
        cmd = os.getenv("PYTHON_EXEC", sys.executable)
        cmd_args.append("-u")
        if os.getenv("MINDTORCH_PROXY", "") not in ("", "0"):  # under `python -m torch_proxy`: so are the workers
            cmd_args += _PROXY
        cmd_args += ["-m", args.training_script] if args.module else [args.training_script]
    else:
        if args.module:
            raise ValueError("Don't use both the '--no-python' flag and the '--module' flag at the same time.")
        cmd = args.training_script
    if not get_use_env(args):
        cmd_args.append("--local-rank=${local_rank}")
    cmd_args.extend(args.training_script_args)
    return config, cmd, cmd_args


_PROXY = ["-m", "torch_proxy"]  # (with the start-up hook installed the variable alone would do)


def run_script_path(training_script, *training_script_args):
    """Run a script in this (worker) interpreter, as `--run-path` asks."""
    import runpy
    sys.argv = [training_script, *training_script_args]
    runpy.run_path(sys.argv[0], run_name="__main__")


def run(args):
    if args.standalone:
        args.rdzv_backend = "c10d"
        args.rdzv_endpoint = "localhost:0"
        args.rdzv_id = str(uuid.uuid4())
        logger.info("\n**************************************\nRendezvous info:\n"
                    "--rdzv-backend=%s --rdzv-endpoint=%s --rdzv-id=%s\n**************************************\n",
                    args.rdzv_backend, args.rdzv_endpoint, args.rdzv_id)
    elif args.rdzv_backend == "static" and not args.rdzv_endpoint and args.master_port is None:
        # one node and no port given: a store on a free port instead of 29500
        if parse_min_max_nnodes(args.nnodes)[1] == 1:
            args.rdzv_backend = "c10d"
            args.rdzv_endpoint = "localhost:0"
            args.rdzv_id = str(uuid.uuid4())
    if args.master_port is None:
        args.master_port = 29500
    config, cmd, cmd_args = config_from_args(args)
    elastic_launch(config=config, entrypoint=cmd)(*cmd_args)


@record
def main(args=None):
    run(parse_args(args))


if __name__ == "__main__":
    main()
