"""Two nodes on one machine: two network namespaces joined by a veth pair, one `torchrun --nnodes=2`
in each (2 workers per node, a world of 4), by static rendezvous (`--node-rank=i`, the store on node 0's
address) and by c10d rendezvous (the endpoint's node hosts the store). The DDP parity scenario
(parameters equal to one local model on the full batch after every step) passes across them: the
multi-machine path, every connection crossing the veth link. Needs root and iproute2 (skips saying
why otherwise); the namespaces are made here and removed whatever happens."""
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

import mindtorch_v2.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKER = os.path.join(ROOT, "tests", "distributed", "_ddp_worker.py")
SUBNET = "10.213.0."  # lives only inside the two namespaces below: nothing outside them sees it
PORT = 29500  # a fresh namespace has every port free


def _ip(*args, check=True):
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


@pytest.fixture
def nodes():
    """[(namespace, interface, address)] for node 0 and node 1, removed afterwards whatever happens."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed")
    tag = uuid.uuid4().hex[:8]  # unique per run: parallel or aborted runs never collide
    made = [(f"mt2n{tag}{i}", f"mt{tag}{i}", f"{SUBNET}{i + 1}") for i in range(2)]
    try:
        first = _ip("netns", "add", made[0][0], check=False)
        if first.returncode:
            pytest.skip(f"cannot create a network namespace: {first.stderr.strip()}")
        _ip("netns", "add", made[1][0])
        veth = _ip("link", "add", made[0][1], "type", "veth", "peer", "name", made[1][1], check=False)
        if veth.returncode:
            pytest.skip(f"cannot create a veth pair: {veth.stderr.strip()}")
        for ns, dev, addr in made:
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield made
    finally:
        for ns, dev, _ in made:
            _ip("netns", "del", ns, check=False)  # takes its end of the veth pair with it
            _ip("link", "del", dev, check=False)  # an end never moved into its namespace


def _torchrun(ns, dev, rdzv, tmp_path):
    env = dict(os.environ, GLOO_SOCKET_IFNAME=dev,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("MINDTORCH_PROXY", None)
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "torch_proxy", "-m", "torch.distributed.run",
           "--nnodes=2", "--nproc-per-node=2", *rdzv, WORKER, "parity", "env"]
    # its own session: on a timeout the agent and its workers are killed together
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=tmp_path, start_new_session=True)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without libgloo-dev")
@pytest.mark.parametrize("backend", ["static", "c10d"])
def test_ddp_parity_across_two_nodes(nodes, backend, tmp_path):
    master = nodes[0][2]
    if backend == "static":
        rdzv = [[f"--node-rank={rank}", f"--master-addr={master}", f"--master-port={PORT}"] for rank in range(2)]
    else:
        rdzv = [["--rdzv-backend=c10d", f"--rdzv-endpoint={master}:{PORT}", "--rdzv-id=twonode"]] * 2
    procs = {}
    try:
        for node in (1, 0):  # node 1 first: its agent keeps connecting until node 0 hosts the store, as PyTorch's does
            ns, dev, _ = nodes[node]
            procs[node] = _torchrun(ns, dev, rdzv[node], tmp_path)
            time.sleep(1)
    finally:
        results = _finish(procs, deadline=time.monotonic() + 120)
    ranks = {}
    for node, (code, out) in results.items():
        assert code == 0, f"node {node} {'timed out' if code is None else f'exited {code}'}:\n{out}"
        assert "Error waiting on exit barrier" not in out, out
        ranks[node] = sorted(int(line.split()[1]) for line in out.splitlines() if line.startswith("OK "))
    # both workers of each node finished; static node ranks are the given ones, c10d's follow arrival
    expected = [[[0, 1], [2, 3]]] if backend == "static" else [[[0, 1], [2, 3]], [[2, 3], [0, 1]]]
    assert [ranks[0], ranks[1]] in expected, ranks


def _finish(procs, deadline):
    """{node: (exit code, output)}; a node still running at the deadline is killed with its workers
    (exit code None), so that a failure is an error with the output, never a hang."""
    results = {}
    for node, p in procs.items():
        try:
            results[node] = (p.communicate(timeout=max(deadline - time.monotonic(), 0.1))[0], False)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            results[node] = (p.communicate(timeout=30)[0], True)
    return {node: (None if late else procs[node].returncode, out) for node, (out, late) in results.items()}
