"""TransformGetItemToIndex: under dynamo/vmap PyTorch reads `t[i]` with a 0-dim tensor `i` as an index
op instead of `.item()`. mindtorch_v2's vmap batches such indexing itself and eager indexing
gives the same values either way, so the mode changes nothing."""


class TransformGetItemToIndex:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
