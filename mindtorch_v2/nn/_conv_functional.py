"""torch.nn.functional spatial ops: convolution, pooling, padding, interpolation, fold/unfold, pixel shuffle."""
__all__ = []
