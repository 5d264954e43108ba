"""The import proxy: torch -> mindtorch_v2, metadata, activation forms, uninstall."""
import importlib.metadata
import subprocess
import sys
import textwrap

import torch_proxy


def run(code, *args):
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)


def test_install_maps_torch_and_metadata():
    r = run("""
        import torch_proxy, importlib.metadata, importlib.util
        torch_proxy.install()
        import torch, mindtorch_v2
        assert torch is mindtorch_v2
        assert importlib.util.find_spec("torch") is not None
        assert importlib.metadata.version("torch") == torch.__version__ == "2.13.0"
        assert (torch.ones(2) + 1).tolist() == [2.0, 2.0]
        assert str(torch.float32) == "torch.float32"
        import torch._tensor as tt
        assert tt.Tensor is torch.Tensor
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_inactive_changes_nothing():
    r = run("""
        import sys, torch_proxy
        assert not torch_proxy.is_installed()
        assert not any(type(f).__name__ == "TorchFinder" for f in sys.meta_path)
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_uninstall():
    r = run("""
        import sys, torch_proxy
        torch_proxy.install(); import torch
        torch_proxy.uninstall()
        assert "torch" not in sys.modules
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_python_m_torch_proxy(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys, torch\nprint(torch.__name__, sys.argv[1:])\n")
    r = subprocess.run([sys.executable, "-m", "torch_proxy", str(script), "a", "b"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "mindtorch_v2 ['a', 'b']" in r.stdout
