"""torch.hub: the cache-directory helpers; loading models from the hub is not implemented."""
import os
import re
from urllib.parse import urlparse  # noqa: F401  (torch.hub's names, imported from here by libraries)

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # the hash prefix in a checkpoint's file name

from ._missing import missing_function

try:  # PyTorch's progress bar: tqdm's when installed (torch.utils.model_zoo re-exports it)
    from tqdm import tqdm
except ImportError:
    class tqdm:
        """The minimal progress bar torch.hub falls back to without tqdm."""

        def __init__(self, total=None, disable=False, unit=None, unit_scale=None, unit_divisor=None):
            self.total, self.disable, self.n = total, disable, 0

        def update(self, n):
            if not self.disable:
                self.n += n
                import sys
                if self.total is None:
                    sys.stderr.write(f"\r{self.n:.1f} bytes")
                else:
                    sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")

        def close(self):
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            if not self.disable:
                import sys
                sys.stderr.write("\n")

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME,
                                                                                DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    if os.getenv("TORCH_HUB"):
        import warnings
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _ni(name):
    return missing_function(f"torch.hub.{name}")


load = _ni("load")
list = _ni("list")
help = _ni("help")
load_state_dict_from_url = _ni("load_state_dict_from_url")
download_url_to_file = _ni("download_url_to_file")
