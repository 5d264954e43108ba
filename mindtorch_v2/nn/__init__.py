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
from .parallel import DataParallel  # noqa: F401
# the star import above binds nn.modules.utils as `utils`; nn.utils is the nn/utils package
import importlib as _importlib  # noqa: E402
utils = _importlib.import_module(".utils", __name__)
