"""The local agent behind torchrun: one per node, it hosts or joins the rendezvous store, starts
this node's workers with PyTorch's environment, watches them, restarts the whole group (on every
node) up to max_restarts times when one fails, and reports the failures as ChildFailedError.

Rendezvous, fixed size only (min_nodes == max_nodes):
- static: node_rank given; node 0 hosts the TCPStore at the endpoint (the master address).
- c10d: the endpoint's machine hosts the store (port 0: a free port, single node only); node ranks
  in order of arrival.
Each round of workers starts after a store barrier of all agents. A failing agent marks the round
failed in the store; the others see it, stop their workers and join the next round (or report).
Workers reach the agent's store through MASTER_ADDR/MASTER_PORT with TORCHELASTIC_USE_AGENT_STORE.
"""
import datetime
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time

from ...._store import DistNetworkError, PrefixStore
from ...._tcp_store import TCPStore
from ...multiprocessing import DefaultLogsSpecs, Std
from ...multiprocessing.errors import ChildFailedError, ProcessFailure, record
from ...rendezvous.utils import parse_rendezvous_endpoint

logger = logging.getLogger("torch.distributed.elastic.agent.server.local_elastic_agent")

DEFAULT_ROLE = "default"
_DEFAULT_RDZV_TIMEOUT = 900


class SignalException(Exception):
    """The agent received a termination signal: its workers are stopped and it exits."""

    def __init__(self, msg, sigval):
        super().__init__(msg)
        self.sigval = sigval


def _terminate_on_signal(signum, frame):
    raise SignalException(f"Process {os.getpid()} got signal: {signum}", sigval=signal.Signals(signum))


def _is_local_host(host):
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        addrs = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except socket.gaierror:
        return False
    if any(a.startswith("127.") or a == "::1" for a in addrs):
        return True
    for addr in addrs:  # an address of one of this machine's interfaces can be bound
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.bind((addr, 0))
                return True
            except OSError:
                pass
    return False


class _Rendezvous:
    """The agents' store and this node's place: (store, node_rank, nnodes, master addr and port)."""

    def __init__(self, config):
        if config.min_nodes != config.max_nodes:
            raise NotImplementedError(
                "torchrun with an elastic node range (--nnodes=MIN:MAX, MIN < MAX) is not implemented")
        self.nnodes = config.max_nodes
        self.run_id = config.run_id
        backend = config.rdzv_backend
        timeout = int(config.rdzv_configs.get("timeout", _DEFAULT_RDZV_TIMEOUT))
        self.timeout = datetime.timedelta(seconds=timeout)
        if backend == "static":
            if "rank" not in config.rdzv_configs:
                raise ValueError("rank is absent in RendezvousParameters.Try add --node-rank to the cmd request")
            if not config.rdzv_endpoint.strip():
                raise ValueError("endpoint is absent in RendezvousParametersTry add --master-port and "
                                 "--master-addr to the cmd request")
            host, port = parse_rendezvous_endpoint(config.rdzv_endpoint, -1)
            if port == -1:
                raise ValueError(f"Port is absent in endpoint: {config.rdzv_endpoint}. "
                                 "Try launching with --master-port")
            self.node_rank = int(config.rdzv_configs["rank"])
            self.store = TCPStore(host, port, self.nnodes, self.node_rank == 0, self.timeout, multi_tenant=True)
        elif backend == "c10d":
            host, port = parse_rendezvous_endpoint(config.rdzv_endpoint, 29400)
            if port == 0 and self.nnodes > 1:
                raise ValueError("the c10d rendezvous endpoint needs a port when --nnodes > 1")
            self.store = None
            if port == 0 or _is_local_host(host):
                try:
                    self.store = TCPStore(host, port, None, True, self.timeout, wait_for_workers=False,
                                          multi_tenant=True)
                except DistNetworkError:  # another agent of this machine hosts it
                    pass
            if self.store is None:
                self.store = TCPStore(host, port, None, False, self.timeout, wait_for_workers=False)
            arrivals = PrefixStore(f"torchelastic/{self.run_id}", self.store)
            self.node_rank = arrivals.add("rdzv/node_ranks", 1) - 1
            if self.node_rank >= self.nnodes:
                raise RuntimeError(f"The rendezvous {self.run_id} already has its {self.nnodes} nodes")
        else:
            raise NotImplementedError(f"torchrun's rendezvous backend '{backend}' is not implemented "
                                      "(use static or c10d)")
        self.master_addr, self.master_port = self.store.host, self.store.port
        self.agents = PrefixStore(f"torchelastic/{self.run_id}", self.store)

    def barrier(self, name):
        # the store's own barrier: counting in and waiting are one request, so node 0 cannot see it
        # complete and close its store while another node is between an add and its wait
        self.store.barrier(f"torchelastic/{self.run_id}/{name}", self.nnodes, self.timeout)


class _Worker:
    def __init__(self, local_rank, global_rank, env, log_dir, redirect, tee, shown):
        self.local_rank, self.global_rank, self.env = local_rank, global_rank, env
        self.log_dir, self.redirect, self.tee, self.shown = log_dir, redirect, tee, shown
        self.error_file = os.path.join(log_dir, "error.json")
        self.result_file = os.path.join(log_dir, "return.pkl")
        self.proc = None
        self.threads = []

    @property
    def pid(self):
        return self.proc.pid

    def exitcode(self):
        return self.proc.poll() if isinstance(self.proc, subprocess.Popen) else self.proc.exitcode


def _copy_lines(src, dests, prefix):
    for line in iter(src.readline, b""):
        for dest, pre in dests:
            dest.write(pre + line if pre else line)
            dest.flush()
    src.close()


def _run_function(fn, args, env, error_file, result_file):
    """A worker process running a Python function (elastic_launch(config, fn))."""
    os.environ.update(env)
    result = record(fn)(*args)
    with open(result_file, "wb") as f:
        pickle.dump(result, f)


class LocalElasticAgent:
    def __init__(self, config, entrypoint, args):
        self.config, self.entrypoint, self.args = config, entrypoint, args
        self.logs_specs = config.logs_specs or DefaultLogsSpecs()
        self.shutdown_timeout = float(config.shutdown_timeout if config.shutdown_timeout is not None
                                      else os.environ.get("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", 30))
        self.workers = []

    # -- workers

    def _worker_env(self, rdzv, local_rank, restart_count):
        n = self.config.nproc_per_node
        rank = rdzv.node_rank * n + local_rank
        env = {
            "LOCAL_RANK": str(local_rank),
            "RANK": str(rank),
            "GROUP_RANK": str(rdzv.node_rank),
            "ROLE_RANK": str(rank),
            "ROLE_NAME": self.config.role,
            "LOCAL_WORLD_SIZE": str(n),
            "WORLD_SIZE": str(n * rdzv.nnodes),
            "GROUP_WORLD_SIZE": str(rdzv.nnodes),
            "ROLE_WORLD_SIZE": str(n * rdzv.nnodes),
            "MASTER_ADDR": rdzv.master_addr,
            "MASTER_PORT": str(rdzv.master_port),
            "TORCHELASTIC_RESTART_COUNT": str(restart_count),
            "TORCHELASTIC_MAX_RESTARTS": str(self.config.max_restarts),
            "TORCHELASTIC_RUN_ID": self.config.run_id,
            "TORCHELASTIC_USE_AGENT_STORE": str(True),
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", str(1)),
        }
        if "OMP_NUM_THREADS" in os.environ:
            env["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
        return rank, env

    def _start_workers(self, rdzv, restart_count):
        streams = self.logs_specs.streams(self.config.run_id, restart_count, self.config.nproc_per_node)
        self.workers = []
        for local_rank in range(self.config.nproc_per_node):
            rank, env = self._worker_env(rdzv, local_rank, restart_count)
            worker = _Worker(local_rank, rank, env, *streams[local_rank])
            os.makedirs(worker.log_dir, exist_ok=True)
            for path in (worker.error_file, worker.result_file):
                if os.path.exists(path):
                    os.remove(path)
            env["TORCHELASTIC_ERROR_FILE"] = worker.error_file
            if callable(self.entrypoint):
                self._start_function(worker)
            else:
                self._start_binary(worker)
            self.workers.append(worker)

    def _start_binary(self, worker):
        args = [str(a).replace("${local_rank}", str(worker.local_rank)) for a in self.args]
        std = {}
        for name, flag in (("stdout", Std.OUT), ("stderr", Std.ERR)):
            if worker.tee & flag or (worker.redirect & flag):
                std[name] = subprocess.PIPE
            else:
                std[name] = None if worker.shown else subprocess.DEVNULL
        worker.proc = subprocess.Popen([self.entrypoint, *args], env={**os.environ, **worker.env},
                                       start_new_session=True, **std)
        prefix = f"[{self.config.role}{worker.local_rank}]:".encode()
        for name, flag in (("stdout", Std.OUT), ("stderr", Std.ERR)):
            pipe = getattr(worker.proc, name)
            if pipe is None:
                continue
            dests = [(open(os.path.join(worker.log_dir, f"{name}.log"), "wb"), b"")]
            if worker.tee & flag and worker.shown:
                dests.append((getattr(sys, name).buffer, prefix))
            t = threading.Thread(target=_copy_lines, args=(pipe, dests, prefix), daemon=True)
            t.start()
            worker.threads.append(t)

    def _start_function(self, worker):
        import multiprocessing
        if worker.redirect or worker.tee:
            raise NotImplementedError("redirects/tee of a function entrypoint are not implemented")
        ctx = multiprocessing.get_context(self.config.start_method)
        worker.proc = ctx.Process(target=_run_function, args=(self.entrypoint, self.args, worker.env,
                                                              worker.error_file, worker.result_file))
        worker.proc.start()

    def _stop_workers(self):
        alive = [w for w in self.workers if w.exitcode() is None]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for w in alive:
                try:
                    if isinstance(w.proc, subprocess.Popen):
                        os.killpg(w.pid, sig)
                    else:
                        os.kill(w.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            deadline = time.monotonic() + self.shutdown_timeout
            while time.monotonic() < deadline and any(w.exitcode() is None for w in alive):
                time.sleep(0.05)
            alive = [w for w in alive if w.exitcode() is None]
            if not alive:
                break
        for w in self.workers:
            if isinstance(w.proc, subprocess.Popen):
                w.proc.wait()
            else:
                w.proc.join()
            for t in w.threads:
                t.join(timeout=5)

    def _failures(self, workers):
        return {w.global_rank: ProcessFailure(local_rank=w.local_rank, pid=w.pid, exitcode=w.exitcode(),
                                              error_file=w.error_file)
                for w in workers}

    def _monitor(self, rdzv, round_):
        """Wait for the round to end: (True, results) or (False, {global_rank: ProcessFailure})."""
        failed_key = f"round{round_}/failed"
        while True:
            time.sleep(self.config.monitor_interval)
            codes = [w.exitcode() for w in self.workers]
            failed = [w for w, c in zip(self.workers, codes) if c not in (None, 0)]
            if failed:
                failures = self._failures(failed)
                rdzv.agents.set(failed_key, str(rdzv.node_rank))
                self._stop_workers()
                return False, failures
            if all(c == 0 for c in codes):
                results = {}
                for w in self.workers:
                    for t in w.threads:
                        t.join(timeout=5)
                    if os.path.exists(w.result_file):
                        with open(w.result_file, "rb") as f:
                            results[w.global_rank] = pickle.load(f)
                    else:
                        results[w.global_rank] = None
                return True, results
            if rdzv.nnodes > 1 and rdzv.agents.check([failed_key]):
                logger.warning("[%s] a worker of node %s failed; stopping this node's workers",
                               self.config.role, rdzv.agents.get(failed_key).decode())
                self._stop_workers()
                return False, self._failures(self.workers)

    def run(self):
        rdzv = _Rendezvous(self.config)
        handlers = {}
        if threading.current_thread() is threading.main_thread():
            for name in filter(None, (s.strip() for s in self.config.signals_to_handle.split(","))):
                sig = getattr(signal, name, None)
                if sig is not None:
                    handlers[sig] = signal.signal(sig, _terminate_on_signal)
        try:
            remaining = self.config.max_restarts
            for round_ in range(self.config.max_restarts + 1):
                rdzv.barrier(f"round{round_}/start")
                self._start_workers(rdzv, round_)
                ok, results = self._monitor(rdzv, round_)
                if ok:
                    try:
                        rdzv.barrier("exit")  # node 0's store serves the others until all are done
                    except SignalException:
                        raise
                    except Exception as e:  # the workers are done: a failed barrier (node 0 already gone,
                        # its store closed before our answer left) is only logged, as PyTorch's agent does
                        logger.warning("Error waiting on exit barrier: %s", e)
                    return results
                if remaining > 0:
                    logger.info("[%s] Worker group FAILED. %s/%s attempts left; will restart worker group",
                                self.config.role, remaining, self.config.max_restarts)
                    remaining -= 1
                    continue
                raise ChildFailedError(name=_get_entrypoint_name(self.entrypoint, self.args), failures=results)
        finally:
            if self.workers:
                self._stop_workers()
            for sig, handler in handlers.items():
                signal.signal(sig, handler)


def _get_entrypoint_name(entrypoint, args):
    if callable(entrypoint):
        return entrypoint.__name__
    if isinstance(entrypoint, str):
        if entrypoint == sys.executable:
            if list(args[1:3]) == ["-m", "torch_proxy"]:  # run.py's proxy wrapper is not the program
                args = list(args[:1]) + list(args[3:])
            return next((arg for arg in args if arg[0] != "-"), "")
        return entrypoint
    return ""


