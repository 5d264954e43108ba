"""Activation forms beyond install(): the MINDTORCH_PROXY start-up hook, `python -m torch_proxy -m`, and the
pytest plugin."""
import importlib.machinery
import os
import subprocess
import sys

import pytest

import torch_proxy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env(**extra):
    env = dict(os.environ)
    env.pop("MINDTORCH_PROXY", None)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def test_env_var_hook_activates_subprocesses(tmp_path):
    path = torch_proxy.install_hook(str(tmp_path))
    assert open(path).read() == torch_proxy.HOOK_LINE
    code = "import site, sys; site.addsitedir(sys.argv[1]); import torch; print(torch.__name__)"
    for value, expected in (("1", "mindtorch_v2"), ("0", "torch"), (None, "torch")):
        env = _env() if value is None else _env(MINDTORCH_PROXY=value)
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == expected, (value, r.stdout)
    torch_proxy.uninstall_hook(str(tmp_path))
    assert not os.path.exists(path)


def test_python_m_torch_proxy_module_and_env(tmp_path):
    (tmp_path / "probe_mod.py").write_text("import os, torch\nprint(torch.__name__, os.environ['MINDTORCH_PROXY'])\n")
    env = _env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    r = subprocess.run([sys.executable, "-m", "torch_proxy", "-m", "probe_mod"], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "mindtorch_v2 1"


# A conftest.py that imports torch when pytest loads it, as a transformers checkout's root conftest does
# (through transformers), and defines a module there: the plugin must have installed the proxy before.
CONFTEST = """
import pytest
import torch


class Net(torch.nn.Module):
    pass


@pytest.fixture
def from_conftest():
    return torch, Net
"""

TEST_MODULE = """
import mindtorch_v2


def test_conftest_got_mindtorch(from_conftest):
    torch, Net = from_conftest
    assert torch.__name__ == "mindtorch_v2"
    assert issubclass(Net, mindtorch_v2.nn.Module)
    import torch as later
    assert later is torch
"""


def _run_pytest(tmp_path, *plugin_args):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_probe.py").write_text(TEST_MODULE)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin_args,
                           "test_probe.py"], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("plugin", ["torch_proxy", "torch_proxy.pytest_plugin"])
def test_pytest_plugin_is_active_before_conftest(tmp_path, plugin):
    r = _run_pytest(tmp_path, "-p", plugin)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout


def test_without_the_plugin_conftest_gets_real_torch(tmp_path):
    # The control: the same run without the plugin fails, so the test above can fail.
    if importlib.machinery.PathFinder.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed")
    r = _run_pytest(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "assert 'torch' == 'mindtorch_v2'" in r.stdout
