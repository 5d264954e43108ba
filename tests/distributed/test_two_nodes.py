"""Two nodes on one machine: two network namespaces joined by a veth pair, one
`torchrun --nnodes=2 --node-rank=i` in each (2 workers per node, a world of 4), the store on node 0's
address. The DDP parity scenario (parameters equal to one local model on the full batch after every
step) passes across them: the multi-machine path, with every connection crossing the veth link.
Needs root and iproute2; skips with the reason otherwise. The namespaces are made and removed here."""
import os
import shutil
import signal
import subprocess
import sys
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
        _ip("link", "add", made[0][1], "type", "veth", "peer", "name", made[1][1])
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


def _torchrun(ns, dev, rank, master, tmp_path):
    env = dict(os.environ, GLOO_SOCKET_IFNAME=dev,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("MINDTORCH_PROXY", None)
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "torch_proxy", "-m", "torch.distributed.run",
           "--nnodes=2", f"--node-rank={rank}", "--nproc-per-node=2", f"--master-addr={master}",
           f"--master-port={PORT}", WORKER, "parity", "env"]
    # its own session: on a timeout the agent and its workers are killed together
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=tmp_path, start_new_session=True)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without libgloo-dev")
def test_ddp_parity_across_two_nodes(nodes, tmp_path):
    master = nodes[0][2]
    procs = [_torchrun(ns, dev, rank, master, tmp_path) for rank, (ns, dev, _) in enumerate(nodes)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=120)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
    for rank, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"node {rank}:\n{out}"
        assert out.splitlines().count("OK") == 2, f"node {rank}:\n{out}"  # both of its workers finished
