"""torch.nn: modules (nn/modules), functional (nn/functional.py), init, utils."""
from . import functional  # noqa: F401
