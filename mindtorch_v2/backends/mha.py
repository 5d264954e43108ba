"""torch.backends.mha: the MultiheadAttention / TransformerEncoder fast-path switch.

mindtorch_v2's layers have one path, whose results equal PyTorch's fast path, so the flag is
kept for callers and changes nothing."""
_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Returns whether the fast path for TransformerEncoder and MultiHeadAttention is enabled."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Sets whether the fast path is enabled."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
