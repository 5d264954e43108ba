"""fractional_max_pool2d/3d (Graham, Fractional Max-Pooling): max pooling whose window starts follow a random
increasing sequence per plane and spatial dim, as ATen's CPU kernels build it (generate_intervals, in the input's
dtype), composed of gathers so autograd gives ATen's backward (the gradient to each maximum's position)."""
import mindtorch_v2 as _mt

from .functional import boolean_dispatch

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]


def _tuple(v, nd):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * nd


def _prod(v):
    r = 1
    for x in v:
        r *= x
    return r


def _intervals(sample, in_size, out_size, pool):
    """Window starts (N, C, out): int((i + sample) * alpha) - int(sample * alpha), the last at in - pool."""
    last = _mt.full(sample.shape + (1,), in_size - pool, dtype=_mt.int64)
    if out_size <= 1:
        return last[..., :out_size]
    alpha = sample.new_tensor(in_size - pool) / sample.new_tensor(out_size - 1)
    i = _mt.arange(out_size - 1, dtype=sample.dtype)
    starts = ((i + sample.unsqueeze(-1)) * alpha).to(_mt.int64) - (sample * alpha).to(_mt.int64).unsqueeze(-1)
    return _mt.cat([starts, last], -1)


def _check_2d(input, pool, out):
    nd = input.dim()
    if nd not in (3, 4):
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    for d in range(1, nd):
        if input.size(d) <= 0:
            raise RuntimeError(f"fractional_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} being empty.")
    (kH, kW), (oH, oW), (H, W) = pool, out, input.shape[-2:]
    if oH + kH - 1 > H:
        raise RuntimeError(f"fractional_max_pool2d(): pool height {kH} too large relative to input height {H}")
    if oW + kW - 1 > W:
        raise RuntimeError(f"fractional_max_pool2d(): pool width {kW} too large relative to input width {W}")


def _check_3d(input, pool, out):
    nd = input.dim()
    if nd not in (4, 5):
        raise RuntimeError(f"fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    for d in range(1, nd):
        if input.size(d) <= 0:
            raise RuntimeError(f"fractional_max_pool3d_out(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} being empty.")
    # time, width, height: PyTorch's order; unlike 2-D the bound is strict (out + k - 1 == size is refused)
    for a, name in ((0, "time"), (2, "width"), (1, "height")):
        k, size = pool[a], input.shape[-3 + a]
        if out[a] + k - 1 >= size:
            raise RuntimeError(f"fractional_max_pool3d_out(): pool {name} {k} too large relative to input {name} {size}")


def _fractional_max_pool(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    fn = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _tuple(output_ratio, nd)
        output_size = [int(input.size(a - nd) * ratio[a]) for a in range(nd)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = _mt.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    pool, out = _tuple(kernel_size, nd), _tuple(output_size, nd)
    word = "two" if nd == 2 else "three"
    if len(pool) != nd:
        raise RuntimeError(f"{fn}: kernel_size must either be a single Int or tuple of {'Ints' if nd == 2 else word + ' Ints'}")
    if len(out) != nd:
        raise RuntimeError(f"{fn}: output_size must either be a single Int or tuple of {'Ints' if nd == 2 else word + ' Ints'}")
    (_check_2d if nd == 2 else _check_3d)(input, pool, out)
    samples = _random_samples
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect {'_random samples' if nd == 2 else '_random_samples'} to have 3 dimensions, "
                           f"got {samples.dim()}")
    N = 1 if input.dim() == nd + 1 else input.size(0)
    C = input.size(-nd - 1)
    if samples.size(0) < N:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != C:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.size(2)}.")
    spatial = tuple(input.shape[-nd:])
    vol = _prod(spatial)
    x = input.reshape(N, C, vol)
    samples = samples[:N].detach()
    # ATen's sample order: 2-D (width, height), 3-D (time, height, width)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    # each window's flat positions, outer dims first as ATen scans them: (N, C, *out, *pool), summed over dims
    lin, stride = 0, vol
    for a in range(nd):
        stride //= spatial[a]
        taps = _intervals(samples[..., order[a]], spatial[a], out[a], pool[a]).unsqueeze(-1) + _mt.arange(pool[a])
        view = [N, C] + [1] * (2 * nd)
        view[2 + a], view[2 + nd + a] = out[a], pool[a]
        lin = lin + taps.reshape(view) * stride
    lin = lin.reshape(N, C, _prod(out), _prod(pool))
    n_out, n_pool = lin.shape[2], lin.shape[3]
    vals = x.gather(2, lin.reshape(N, C, n_out * n_pool)).reshape(N, C, n_out, n_pool)
    output, arg = vals.max(-1) if n_pool else (vals.sum(-1), lin.sum(-1))
    indices = lin.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    shape = (C, *out) if input.dim() == nd + 1 else (N, C, *out)
    return output.reshape(shape), indices.reshape(shape)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def _fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                           _random_samples=None):
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)[0]


def _fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                           _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)[0]


fractional_max_pool2d = boolean_dispatch("return_indices", 4, False, fractional_max_pool2d_with_indices,
                                         _fractional_max_pool2d, __name__, "fractional_max_pool2d")
fractional_max_pool3d = boolean_dispatch("return_indices", 4, False, fractional_max_pool3d_with_indices,
                                         _fractional_max_pool3d, __name__, "fractional_max_pool3d")
