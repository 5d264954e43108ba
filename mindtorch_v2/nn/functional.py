"""torch.nn.functional: PyTorch's names and signatures over the C core's NN kernels."""
from ._loss_functional import *; from ._conv_functional import *  # noqa: E402,F401,F403  (losses, spatial ops)
