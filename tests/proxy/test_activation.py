"""Activation forms beyond install(): the MINDTORCH_PROXY start-up hook and `python -m torch_proxy -m`."""
import os
import subprocess
import sys

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
