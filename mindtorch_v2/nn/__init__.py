"""torch.nn: modules (nn/modules), functional (nn/functional.py), init, parameter."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import (Bilinear, Container, Flatten, Identity, LazyLinear, LazyModuleMixin, Linear, Module,  # noqa: F401
                      ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential, Unflatten)
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import parameter  # noqa: F401
from . import modules  # noqa: F401
from . import parallel  # noqa: F401
from . import common_types, grad  # noqa: F401
from .parallel import DataParallel  # noqa: F401
# the star import above binds nn.modules.utils as `utils`; nn.utils is the nn/utils package
import importlib as _importlib  # noqa: E402
utils = _importlib.import_module(".utils", __name__)


def factory_kwargs(kwargs):
    """The device/dtype/memory_format of a module's **kwargs as a dict for factory functions; a nested
    "factory_kwargs" dict supplies them too (for a signature whose own argument shadows one). Unknown keys
    and a key given both ways raise TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unknown = kwargs.keys() - simple - {"factory_kwargs"}
    if unknown:
        raise TypeError(f"unexpected kwargs {unknown}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & kwargs.keys():
        if key in out:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        out[key] = kwargs[key]
    return out
