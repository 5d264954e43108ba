"""fractional_max_pool2d (Graham, Fractional Max-Pooling): max pooling whose window starts follow a random
increasing sequence per plane, as ATen's CPU kernel builds it (generate_intervals, in the input's dtype),
composed of gathers so autograd gives ATen's backward (the gradient to each maximum's position)."""
import mindtorch_v2 as _mt

from .functional import boolean_dispatch

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices"]


def _pair(v):
    return tuple(v) if isinstance(v, (list, tuple)) else (v, v)


def _intervals(sample, in_size, out_size, pool):
    """Window starts (N, C, out): int((i + sample) * alpha) - int(sample * alpha), the last at in - pool."""
    last = _mt.full(sample.shape + (1,), in_size - pool, dtype=_mt.int64)
    if out_size <= 1:
        return last[..., :out_size]
    alpha = sample.new_tensor(in_size - pool) / sample.new_tensor(out_size - 1)
    i = _mt.arange(out_size - 1, dtype=sample.dtype)
    starts = ((i + sample.unsqueeze(-1)) * alpha).to(_mt.int64) - (sample * alpha).to(_mt.int64).unsqueeze(-1)
    return _mt.cat([starts, last], -1)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _pair(output_ratio)
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = _mt.rand(n_batch, input.size(-3), 2, dtype=input.dtype, device=input.device)
    pool, out = _pair(kernel_size), _pair(output_size)
    if len(pool) != 2:
        raise RuntimeError("fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints")
    if len(out) != 2:
        raise RuntimeError("fractional_max_pool2d: output_size must either be a single Int or tuple of Ints")
    nd = input.dim()
    if nd not in (3, 4):
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    for d in range(1, nd):
        if input.size(d) <= 0:
            raise RuntimeError(f"fractional_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} being empty.")
    H, W = input.shape[-2:]
    (kH, kW), (oH, oW) = pool, out
    if oH + kH - 1 > H:
        raise RuntimeError(f"fractional_max_pool2d(): pool height {kH} too large relative to input height {H}")
    if oW + kW - 1 > W:
        raise RuntimeError(f"fractional_max_pool2d(): pool width {kW} too large relative to input width {W}")
    samples = _random_samples
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random samples to have 3 dimensions, got {samples.dim()}")
    N = 1 if nd == 3 else input.size(0)
    C = input.size(-3)
    if samples.size(0) < N:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != C:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.size(2) != 2:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to 2; got {samples.size(2)}.")
    x = input.reshape(N, C, H * W)
    samples = samples[:N].detach()
    rows = _intervals(samples[..., 1], H, oH, kH).unsqueeze(-1) + _mt.arange(kH)  # (N, C, oH, kH)
    cols = _intervals(samples[..., 0], W, oW, kW).unsqueeze(-1) + _mt.arange(kW)  # (N, C, oW, kW)
    # each window's positions h * W + w, h outer as ATen scans them: (N, C, oH * oW, kH * kW)
    lin = (rows[:, :, :, None, :, None] * W + cols[:, :, None, :, None, :]).reshape(N, C, oH * oW, kH * kW)
    vals = x.gather(2, lin.reshape(N, C, oH * oW * kH * kW)).reshape(N, C, oH * oW, kH * kW)
    output, arg = vals.max(-1) if kH * kW else (vals.sum(-1), lin.sum(-1))
    indices = lin.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    shape = (C, oH, oW) if nd == 3 else (N, C, oH, oW)
    return output.reshape(shape), indices.reshape(shape)


def _fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                           _random_samples=None):
    return fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                              _random_samples)[0]


fractional_max_pool2d = boolean_dispatch("return_indices", 4, False, fractional_max_pool2d_with_indices,
                                         _fractional_max_pool2d, __name__, "fractional_max_pool2d")
