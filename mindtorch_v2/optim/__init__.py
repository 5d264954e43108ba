"""torch.optim: optimizers whose per-parameter updates are fused C calls, and lr_scheduler."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from . import lr_scheduler, swa_utils  # noqa: F401

_MISSING = ("Adafactor", "Muon", "SparseAdam")


def __getattr__(name):
    if name in _MISSING:
        raise NotImplementedError(f"torch.optim.{name} is not implemented in mindtorch_v2")
    raise AttributeError(f"module 'torch.optim' has no attribute '{name}'")
