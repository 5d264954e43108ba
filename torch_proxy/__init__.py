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

For pip, `python -m torch_proxy --register-torch` writes a `torch-<version>.dist-info` holding only
metadata into site-packages (register_torch()), so that installing a package that requires torch
does not pull PyTorch; `--unregister-torch` or `pip uninstall torch` removes it.
"""
import base64
import functools
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import shutil
import sys

_TARGET = "mindtorch_v2"
ENV_VAR = "MINDTORCH_PROXY"
HOOK_FILE = "mindtorch_proxy.pth"
HOOK_LINE = ("import os; os.environ.get('MINDTORCH_PROXY', '') not in ('', '0') and "
             "__import__('torch_proxy').install()\n")
INSTALLER = "torch_proxy\n"  # the INSTALLER file of a registration: what marks it as ours

pytest_plugins = ["torch_proxy.pytest_plugin"]  # what `-p torch_proxy` loads (see the docstring)


@functools.lru_cache(maxsize=None)
def torch_version():
    """The PyTorch version whose API mindtorch_v2 implements, from its one source, mindtorch_v2/version.py,
    read without importing mindtorch_v2 (that loads the C core, and register_torch runs without it)."""
    # once imported, mindtorch_v2's __spec__ is the proxy's spec of torch, but its __file__ stays
    module = sys.modules.get(_TARGET)
    init = module.__file__ if module is not None else importlib.util.find_spec(_TARGET).origin
    spec = importlib.util.spec_from_file_location("_mindtorch_v2_version",
                                                  os.path.join(os.path.dirname(init), "version.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.__version__


def _dist_files():
    """The metadata files of the "torch" distribution: the proxy's importlib.metadata answer, and the
    registration's files on disk."""
    return {"METADATA": (f"Metadata-Version: 2.1\nName: torch\nVersion: {torch_version()}\n"
                         "Summary: mindtorch_v2 standing in for PyTorch (torch_proxy)\n"),
            "top_level.txt": "torch\n"}


class _AliasLoader(importlib.abc.Loader):
    """Loads torch.X as the already-importable mindtorch_v2.X module object itself."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        _claim_torch_names()

    def get_code(self, fullname):
        # what runpy runs for `python -m torch.distributed.run`: the target module's own code
        return importlib.util.find_spec(self.target).loader.get_code(self.target)


_RENAMED = []  # (class, its mindtorch_v2 module name): what uninstall() puts back


def _claim_torch_names():
    """Under the proxy mindtorch_v2 *is* torch, so its loaded modules are also sys.modules' torch.X and
    their classes say __module__ "torch.X", as PyTorch's do: libraries test that (transformers'
    infer_framework walks a model's MRO for a base from "torch...": a plain nn.Module subclass), and
    pickle and typing.get_type_hints look the class up there. The top-level classes defined in private
    modules (Tensor, Size, dtype...) say "torch", as PyTorch's do."""
    top = sys.modules.get(_TARGET)
    for name, mod in list(sys.modules.items()):
        if name != _TARGET and not name.startswith(_TARGET + "."):
            continue
        alias = "torch" + name[len(_TARGET):]
        sys.modules.setdefault(alias, mod)
        for attr, obj in list(vars(mod).items()):
            if isinstance(obj, type) and obj.__module__ == name:
                exported = name.startswith(_TARGET + "._") and getattr(top, attr, None) is obj
                obj.__module__ = _TOP_LEVEL.get(attr, "torch") if exported else alias
                _RENAMED.append((obj, name))


_TOP_LEVEL = {"Generator": "torch._C"}  # PyTorch's __module__ of a top-level class other than "torch"


class _Metadata(importlib.metadata.Distribution):
    """Distribution metadata for "torch", describing mindtorch_v2's PyTorch version."""

    def read_text(self, filename):
        return _dist_files().get(filename)

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
        # origin: runpy's argv[0] when the module runs as `python -m torch.X`
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name), origin=target_spec.origin,
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
    for cls, name in _RENAMED:
        cls.__module__ = name
    _RENAMED.clear()
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


# ---- the torch registration for pip: `python -m torch_proxy --register-torch` -------------

def _is_registration(path):
    try:
        with open(os.path.join(path, "INSTALLER")) as f:
            return f.read() == INSTALLER
    except OSError:
        return False


def _registrations(site):
    """The torch-*.dist-info directories in `site` that register_torch wrote."""
    return [os.path.join(site, name) for name in sorted(os.listdir(site))
            if name.startswith("torch-") and name.endswith(".dist-info") and _is_registration(os.path.join(site, name))]


def _real_torch(paths):
    """Where a torch that is not our registration is installed on `paths` (None if nowhere): an
    importable `torch` (PathFinder skips the proxy's finder), or another torch distribution (the
    proxy's own answer, there when the proxy is active, is not one)."""
    spec = importlib.machinery.PathFinder.find_spec("torch", paths)
    if spec is not None:
        return spec.origin if spec.has_location else list(spec.submodule_search_locations)[0]
    for dist in importlib.metadata.distributions(name="torch", path=paths):
        if not isinstance(dist, _Metadata) and dist.read_text("INSTALLER") != INSTALLER:
            return f"the distribution torch {dist.version} in {dist.locate_file('')}"
    return None


def register_torch(site_dir=None):
    """Register mindtorch_v2 as the environment's `torch` distribution, so that pip counts torch as
    installed and never pulls PyTorch: writes site-packages (or site_dir)/torch-<version>.dist-info
    holding METADATA, INSTALLER, top_level.txt and a RECORD that lists only these, so that
    `pip uninstall torch` removes just the registration. Raises RuntimeError, writing nothing, when
    a real PyTorch is installed there (on sys.path, or in site_dir when given). Returns the path."""
    site = _site_dir(site_dir)
    real = _real_torch([site] if site_dir is not None else sys.path)
    if real is not None:
        raise RuntimeError(f"PyTorch is installed in this environment ({real}); mindtorch_v2 is not "
                           "registered as torch beside it (uninstall PyTorch first, or use another environment)")
    unregister_torch(site_dir)
    name = f"torch-{torch_version()}.dist-info"
    files = dict(_dist_files(), INSTALLER=INSTALLER)
    record = []
    os.makedirs(os.path.join(site, name))
    for fname, text in files.items():
        data = text.encode()
        with open(os.path.join(site, name, fname), "wb") as f:
            f.write(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name}/{fname},sha256={digest},{len(data)}\n")
    with open(os.path.join(site, name, "RECORD"), "w") as f:
        f.writelines(record + [f"{name}/RECORD,,\n"])
    return os.path.join(site, name)


def unregister_torch(site_dir=None):
    """Remove what register_torch wrote in site-packages (or site_dir); returns the removed paths."""
    paths = _registrations(_site_dir(site_dir))
    for path in paths:
        shutil.rmtree(path)
    return paths
