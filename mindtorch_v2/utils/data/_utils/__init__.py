"""Helpers of torch.utils.data: collate, fetch, worker."""
from . import collate, fetch, worker  # noqa: F401
