"""`python -m torch_proxy --register-torch`: mindtorch_v2 as the environment's `torch` distribution for pip."""
import importlib.metadata
import json
import os
import socket
import subprocess
import sys

import pytest

import torch_proxy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cli(*args, env=None, python=sys.executable):
    env = dict(os.environ if env is None else env)
    env.pop("MINDTORCH_PROXY", None)
    env["PYTHONPATH"] = ROOT  # this checkout's torch_proxy, and nothing else
    return subprocess.run([python, "-m", "torch_proxy", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_register_writes_a_metadata_only_distribution(tmp_path):
    r = _cli("--register-torch", str(tmp_path))
    assert r.returncode == 0, r.stderr
    info = tmp_path / "torch-2.13.0.dist-info"
    assert r.stdout.strip() == str(info)
    assert sorted(os.listdir(tmp_path)) == [info.name]
    assert sorted(os.listdir(info)) == ["INSTALLER", "METADATA", "RECORD", "top_level.txt"]
    record = [line.split(",")[0] for line in (info / "RECORD").read_text().splitlines()]
    assert sorted(record) == sorted(f"{info.name}/{f}" for f in os.listdir(info))
    (dist,) = importlib.metadata.distributions(name="torch", path=[str(tmp_path)])
    # the version is mindtorch_v2's, and the proxy's importlib.metadata answer has the same files
    assert dist.version == torch_proxy.torch_version() == "2.13.0"
    for name in ("METADATA", "top_level.txt"):
        assert dist.read_text(name) == torch_proxy._Metadata().read_text(name)
    assert dist.read_text("INSTALLER") == "torch_proxy\n"
    # again: replaces its own registration
    assert _cli("--register-torch", str(tmp_path)).returncode == 0
    assert sorted(os.listdir(tmp_path)) == [info.name]
    r = _cli("--unregister-torch", str(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == str(info), r.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("real", ["package", "dist-info"])
def test_register_refuses_beside_a_real_pytorch(tmp_path, real):
    if real == "package":
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "__init__.py").write_text("")
    else:
        other = tmp_path / "torch-2.13.0.dist-info"
        other.mkdir()
        (other / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0\n")
        (other / "INSTALLER").write_text("pip\n")
    before = sorted(os.listdir(tmp_path))
    r = _cli("--register-torch", str(tmp_path))
    assert r.returncode == 1
    assert "torch_proxy --register-torch: PyTorch is installed in this environment" in r.stderr
    assert sorted(os.listdir(tmp_path)) == before
    # unregistering leaves what it did not write
    assert _cli("--unregister-torch", str(tmp_path)).returncode == 0
    assert sorted(os.listdir(tmp_path)) == before
    with pytest.raises(RuntimeError, match="PyTorch is installed in this environment"):
        torch_proxy.register_torch(str(tmp_path))


def test_register_under_the_active_proxy(tmp_path):
    # the proxy's importlib.metadata answer for torch is not a real PyTorch
    code = "import sys, torch_proxy; torch_proxy.install(); print(torch_proxy.register_torch(sys.argv[1]))"
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "torch-2.13.0.dist-info")


def _venv(tmp_path):
    """A fresh virtual environment (no pip, no system site-packages); pip runs into it via --python."""
    if tuple(int(p) for p in __import__("pip").__version__.split(".")[:2]) < (22, 3):
        pytest.skip("pip --python needs pip 22.3")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return str(venv / "bin" / "python")


def _pip(python, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MINDTORCH_PROXY")}
    return subprocess.run([sys.executable, "-m", "pip", "--python", python, *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_pip_uninstall_torch_removes_only_the_registration(tmp_path):
    python = _venv(tmp_path)
    r = _cli("--register-torch", python=python)  # the venv's own site-packages, as a user runs it
    assert r.returncode == 0, r.stderr
    info = r.stdout.strip()
    site = os.path.dirname(info)
    before = sorted(os.listdir(site))
    assert "torch 2.13.0" in " ".join(_pip(python, "list").stdout.split())
    r = _pip(python, "uninstall", "-y", "torch")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(site)) == sorted(set(before) - {os.path.basename(info)})


def _pypi_reachable():
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def _dry_run(python, tmp_path, *packages):
    report = tmp_path / "report.json"
    r = _pip(python, "install", "--dry-run", "--quiet", "--report", str(report), *packages)
    assert r.returncode == 0, r.stderr
    return {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}


def _pytorch_wheels(names):
    return sorted(n for n in names if n == "torch" or n.startswith("nvidia-"))


@pytest.mark.skipif(not _pypi_reachable(), reason="needs the network to PyPI")
def test_pip_pulls_no_pytorch_once_registered(tmp_path):
    python = _venv(tmp_path)
    # the control: unregistered, the environment wants PyTorch and its CUDA wheels
    assert "torch" in _pytorch_wheels(_dry_run(python, tmp_path, "accelerate"))
    assert _cli("--register-torch", python=python).returncode == 0
    names = _dry_run(python, tmp_path, "sentence-transformers", "accelerate", "peft")
    assert {"sentence-transformers", "accelerate", "peft", "transformers"} <= names
    assert _pytorch_wheels(names) == []
