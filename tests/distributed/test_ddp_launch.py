"""End to end: examples/ddp_train.py, a plain PyTorch DDP script (init_process_group, DDP,
DistributedSampler), run unmodified through the proxy under torchrun on 2 ranks, ends with the
parameters of the single-process run on the full batch (and of real PyTorch's torchrun)."""
import os
import subprocess
import sys

import pytest

import mindtorch_v2 as mt
import mindtorch_v2.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "ddp_train.py")
NO_TEARDOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_no_teardown.py")


def _run(cmd, tmp_path, timeout=240):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("MINDTORCH_PROXY", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _same(a, b):
    a, b = mt.load(a), mt.load(b)
    assert list(a) == list(b)
    for k in a:
        err, scale = float((a[k] - b[k]).abs().max()), float(b[k].abs().max())
        assert err <= 1e-6 * scale, f"{k}: {err} vs {scale}"


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    path = tmp_path_factory.mktemp("single") / "single.pt"
    _run([sys.executable, "-m", "torch_proxy", SCRIPT, str(path)], path.parent)
    return path


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without libgloo-dev")
def test_torchrun_gloo_matches_single_process(single, tmp_path):
    _run([sys.executable, "-m", "torch_proxy", "-m", "torch.distributed.run", "--nproc_per_node=2", SCRIPT,
          "ddp.pt"], tmp_path)
    _same(tmp_path / "ddp.pt", single)


def test_real_pytorch_torchrun_matches_single_process(single, tmp_path):
    pytest.importorskip("torch")
    _run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", NO_TEARDOWN, SCRIPT, "real.pt"],
         tmp_path)
    _same(tmp_path / "real.pt", single)
