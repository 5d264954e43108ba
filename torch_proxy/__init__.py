"""torch_proxy: make `import torch` (and `torch.<sub>`) return mindtorch_v2.

    import torch_proxy; torch_proxy.install()     # in code
    python -m torch_proxy script.py args...         # a script (also: python -m torch_proxy -m module ...)
    python -m pytest -p torch_proxy ...             # a test run (pytest plugin)
    MINDTORCH_PROXY=1 python ...                    # any process, subprocesses included, once the
                                                    # start-up hook is installed (install_hook())

The environment variable works through a one-line `.pth` start-up hook in site-packages (written by
`python -m torch_proxy --install-hook`, removed by `--uninstall-hook`): at interpreter start it
calls install() when MINDTORCH_PROXY is set to anything but "" or "0", and does nothing
otherwise. `python -m torch_proxy` and the pytest plugin set MINDTORCH_PROXY=1, so processes they
spawn get the proxy too where the hook is installed.

`-p torch_proxy` registers this module, whose `pytest_plugins` names `torch_proxy.pytest_plugin`;
that module installs the proxy when pytest imports it, before any conftest.py is loaded.

A meta-path finder maps the names; a find_distributions hook answers
importlib.metadata for the distribution "torch". Importing this module
changes nothing until install() runs.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import sys

TORCH_VERSION = "2.13.0"  # the PyTorch API mindtorch_v2 implements
_TARGET = "mindtorch_v2"
ENV_VAR = "MINDTORCH_PROXY"
HOOK_FILE = "mindtorch_proxy.pth"
HOOK_LINE = ("import os; os.environ.get('MINDTORCH_PROXY', '') not in ('', '0') and "
             "__import__('torch_proxy').install()\n")

pytest_plugins = ["torch_proxy.pytest_plugin"]  # what `-p torch_proxy` loads (see the docstring)


class _AliasLoader(importlib.abc.Loader):
    """Loads torch.X as the already-importable mindtorch_v2.X module object itself."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _Metadata(importlib.metadata.Distribution):
    """Distribution metadata for "torch", describing mindtorch_v2's PyTorch version."""

    def read_text(self, filename):
        if filename == "METADATA":
            return f"Metadata-Version: 2.1\nName: torch\nVersion: {TORCH_VERSION}\n"
        if filename == "top_level.txt":
            return "torch\n"
        return None

    def locate_file(self, path):
        import mindtorch_v2
        import pathlib
        return pathlib.Path(mindtorch_v2.__file__).parent.parent / path

    @property
    def files(self):
        return [importlib.metadata.PackagePath("torch/__init__.py")]


class TorchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target_name = _TARGET + fullname[len("torch"):]
        try:
            target_spec = importlib.util.find_spec(target_name)
        except ModuleNotFoundError:
            target_spec = None
        if target_spec is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name),
                                              is_package=target_spec.submodule_search_locations is not None)
        return spec

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        if context.name in (None, "torch"):
            return iter([_Metadata()])
        return iter([])


_FINDER = TorchFinder()


def install():
    """Activate: later `import torch` gets mindtorch_v2 (real torch, if imported already, is unloaded)."""
    if _FINDER not in sys.meta_path:
        for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
            del sys.modules[name]
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[name]


def is_installed():
    return _FINDER in sys.meta_path


def _site_dir(site_dir):
    if site_dir is not None:
        return site_dir
    import sysconfig
    return sysconfig.get_paths()["purelib"]


def install_hook(site_dir=None):
    """Write the MINDTORCH_PROXY start-up hook into site-packages (or site_dir); returns its path."""
    path = os.path.join(_site_dir(site_dir), HOOK_FILE)
    with open(path, "w") as f:
        f.write(HOOK_LINE)
    return path


def uninstall_hook(site_dir=None):
    path = os.path.join(_site_dir(site_dir), HOOK_FILE)
    if os.path.exists(path):
        os.remove(path)
    return path

