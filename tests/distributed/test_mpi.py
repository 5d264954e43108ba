"""torch.distributed on MPI (mindtorch_v2._mpi over Open MPI): the scenarios of _worker.py and
_ddp_worker.py under `mpirun --allow-run-as-root --oversubscribe -n N` (root and a 2-core
machine need both flags), each run with a timeout so a failure is an error, never a hang."""
import os
import shutil
import subprocess
import sys

import pytest

import mindtorch_v2.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

pytestmark = pytest.mark.skipif(not dist.is_mpi_available() or not shutil.which("mpirun"),
                                reason="built without libopenmpi-dev, or no mpirun")


def mpirun(args, n=2, timeout=180, cwd=None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1",
               MT_NUM_THREADS="1")
    env.pop("MINDTORCH_PROXY", None)
    cmd = ["mpirun", "-n", str(n), "--allow-run-as-root", "--oversubscribe", sys.executable, *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)


def assert_ok(r, n):
    out = r.stdout + r.stderr
    assert r.returncode == 0 and r.stdout.count("OK") == n, out


@pytest.mark.parametrize("scenario,n", [("collectives", 2), ("collectives", 4), ("others", 2), ("others", 3),
                                        ("subgroups", 4)])
def test_collectives(scenario, n):
    assert_ok(mpirun([os.path.join(HERE, "_worker.py"), scenario, "-", "-", "-", "mpi"], n), n)


@pytest.mark.parametrize("scenario", ["parity", "buckets", "unused", "hooks", "uneven", "syncbn"])
def test_ddp(scenario):
    assert_ok(mpirun([os.path.join(HERE, "_ddp_worker.py"), scenario, "-", "-", "-", "mpi"]), 2)


def test_absent_rank_times_out():
    """A rank that never joins the collective: the other raises after the group's timeout (2 s)."""
    r = mpirun([os.path.join(HERE, "_worker.py"), "absent", "-", "-", "-", "mpi"], timeout=60)
    assert "MPI allreduce timed out after 2000ms" in r.stdout, r.stdout + r.stderr


def test_killed_rank_ends_the_job():
    """A rank that dies: Open MPI's runtime ends the job (the survivors never hang)."""
    r = mpirun([os.path.join(HERE, "_worker.py"), "killed", "-", "-", "-", "mpi"], n=3, timeout=60)
    assert r.returncode != 0


def test_ddp_script_matches_single_process(tmp_path):
    """examples/ddp_train.py, unmodified, through the proxy under mpirun with backend="mpi"."""
    script = os.path.join(ROOT, "examples", "ddp_train.py")
    r = mpirun(["-m", "torch_proxy", script, "mpi.pt", "--backend", "mpi"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-m", "torch_proxy", script, "single.pt"], check=True, env=env, cwd=tmp_path,
                   timeout=120, capture_output=True)
    from test_ddp_launch import _same
    _same(tmp_path / "mpi.pt", tmp_path / "single.pt")


def test_init_ignores_rank_and_world_size_in_a_singleton():
    """Without mpirun, a process is an MPI world of one (MPI's singleton init)."""
    code = ("import warnings, mindtorch_v2 as t, mindtorch_v2.distributed as d\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    d.init_process_group('mpi', rank=3, world_size=5)\n"
            "assert 'For MPI backend, world_size (5) and rank (3) are ignored' in str(w[0].message), w\n"
            "assert (d.get_rank(), d.get_world_size(), d.get_backend()) == (0, 1, 'mpi')\n"
            "x = t.ones(3); d.all_reduce(x); assert x.tolist() == [1.0] * 3\n"
            "d.destroy_process_group(); print('OK')\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
