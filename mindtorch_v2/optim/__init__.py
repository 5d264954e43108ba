"""torch.optim: optimizers whose per-parameter updates are fused C calls (LBFGS, Adafactor and Muon are pure
Python over tensor ops, as in PyTorch), lr_scheduler and swa_utils."""
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
from .adafactor import Adafactor  # noqa: F401
from .muon import Muon  # noqa: F401
from .sparse_adam import SparseAdam  # noqa: F401
from . import lr_scheduler, swa_utils  # noqa: F401
from ._stateless import swap_in_optimizer_params_and_state  # noqa: F401

swap_in_optimizer_params_and_state.__module__ = "torch.optim"  # as PyTorch sets it
