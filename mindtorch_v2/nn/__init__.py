"""torch.nn: modules (nn/modules), functional (nn/functional.py), init, parameter."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import (Bilinear, Container, Flatten, Identity, LazyLinear, LazyModuleMixin, Linear, Module,  # noqa: F401
                      ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential, Unflatten)
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import parameter  # noqa: F401
from . import modules  # noqa: F401
# importing the submodule rebinds nn.utils, which the star import above set to nn.modules.utils
from .utils import rnn as _rnn  # noqa: F401,E402
