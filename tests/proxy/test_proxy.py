"""The import proxy: torch -> mindtorch_v2, metadata, activation forms, uninstall."""
import importlib.metadata
import os
import subprocess
import sys
import textwrap

import torch_proxy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def test_classes_answer_pytorchs_module_names_under_the_proxy():
    # transformers' infer_framework (Trainer on a plain nn.Module subclass) walks the MRO for "torch..."
    r = run("""
        import pickle, sys, typing, torch_proxy
        torch_proxy.install()
        import torch, mindtorch_v2
        names = {c.__name__: c.__module__ for c in (torch.Tensor, torch.Size, torch.dtype, torch.device,
                 torch.Generator, torch.nn.Module, torch.nn.Sequential, torch.nn.Linear, torch.nn.Parameter,
                 torch.optim.AdamW, torch.utils.data.DataLoader)}
        print(sorted(names.items()))
        class M(torch.nn.Module):
            pass
        assert any(b.__module__.startswith("torch") for b in M.__mro__[1:])
        assert sys.modules["torch.nn.modules.container"] is mindtorch_v2.nn.modules.container
        m = pickle.loads(pickle.dumps(torch.nn.Sequential(torch.nn.Linear(2, 3))))
        assert type(m) is torch.nn.Sequential and m[0].weight.shape == (3, 2)
        typing.get_type_hints(torch.nn.Module.register_buffer)
        torch_proxy.uninstall()
        assert mindtorch_v2.nn.Linear.__module__ == "mindtorch_v2.nn.modules.linear"
        assert mindtorch_v2.Tensor.__module__ == "mindtorch_v2._tensor"
    """)
    assert r.returncode == 0, r.stderr
    try:
        import torch
    except ImportError:
        return
    if torch.__name__ == "torch":  # PyTorch's own names (the proxy is not active in this process)
        want = {c.__name__: c.__module__ for c in (torch.Tensor, torch.Size, torch.dtype, torch.device,
                torch.Generator, torch.nn.Module, torch.nn.Sequential, torch.nn.Linear, torch.nn.Parameter,
                torch.optim.AdamW, torch.utils.data.DataLoader)}
        assert r.stdout.strip() == str(sorted(want.items()))


def test_python_m_torch_proxy(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys, torch\nprint(torch.__name__, sys.argv[1:])\n")
    r = subprocess.run([sys.executable, "-m", "torch_proxy", str(script), "a", "b"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "mindtorch_v2 ['a', 'b']" in r.stdout


def test_python_m_torch_proxy_c(tmp_path):
    """-c as python's own: the code runs as __main__ from "<string>", argv[0] is "-c", its exit code counts."""
    code = ("import sys, torch, pickle\ndef f(): pass\n"
            "print(torch.__name__, sys.argv, __name__, pickle.loads(pickle.dumps(f)) is f)\nsys.exit(3)")
    r = subprocess.run([sys.executable, "-m", "torch_proxy", "-c", code, "a", "b"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 3, r.stderr
    assert r.stdout.strip() == "mindtorch_v2 ['-c', 'a', 'b'] __main__ True"
