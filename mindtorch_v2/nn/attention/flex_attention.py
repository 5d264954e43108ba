"""torch.nn.attention.flex_attention: not implemented. The names import; using them raises."""
_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def _ni(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.nn.attention.flex_attention.{name} is not implemented")
    fn.__name__ = name
    return fn


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


class AuxRequest:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.nn.attention.flex_attention.AuxRequest is not implemented")


_mask_mod_signature = _score_mod_signature = object
