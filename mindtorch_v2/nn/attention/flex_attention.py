"""torch.nn.attention.flex_attention: not implemented. The names import; using them raises."""
from ..._missing import missing_class, missing_function

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def _ni(name):
    return missing_function(f"torch.nn.attention.flex_attention.{name}")


flex_attention = _ni("flex_attention")
create_block_mask = _ni("create_block_mask")
create_mask = _ni("create_mask")
create_nested_block_mask = _ni("create_nested_block_mask")
and_masks = _ni("and_masks")
or_masks = _ni("or_masks")
noop_mask = _ni("noop_mask")


class BlockMask:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.nn.attention.flex_attention.BlockMask is not implemented")

    @classmethod
    def from_kv_blocks(cls, *args, **kwargs):
        raise NotImplementedError("torch.nn.attention.flex_attention.BlockMask.from_kv_blocks is not implemented")


AuxRequest = missing_class("torch.nn.attention.flex_attention.AuxRequest", module=__name__)


_mask_mod_signature = _score_mod_signature = object
