"""affine_grid and grid_sample, composed of core ops as PyTorch's math defines them (its
affine_grid_generator is itself a composition; grid_sample's bilinear/nearest sampling is the same
unnormalise -> pad -> gather -> weight arithmetic, with autograd through the ops)."""
import itertools
import math
import warnings

import mindtorch_v2 as _mt
from mindtorch_v2._dtype import scalar_name

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _linspace_from_neg_one(theta, n, align_corners):
    if n <= 1:
        return _mt.zeros(1, dtype=theta.dtype)
    r = _mt.linspace(-1, 1, n, dtype=theta.dtype)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an issue for standard usage, but may matter for "
                      "unit-size inputs in non-standard usage.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    N = size[0]
    # base grid [..., (x, y[, z], 1)] with x varying fastest, then grid = base @ theta^T
    axes = [_linspace_from_neg_one(theta, n, align_corners) for n in reversed(spatial)]  # x, y[, z]
    shape = list(spatial)
    cols = []
    for k, ax in enumerate(axes):
        view = [1] * len(shape)
        view[len(shape) - 1 - k] = shape[len(shape) - 1 - k]
        cols.append(ax.reshape(view).expand(shape))
    cols.append(_mt.ones(shape, dtype=theta.dtype))
    base = _mt.stack(cols, -1).reshape(1, -1, len(cols)).expand(N, -1, -1)
    grid = base.bmm(theta.transpose(1, 2))
    return grid.reshape(N, *spatial, len(spatial))


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return coord * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    extra = c.fmod(span)
    flips = (c / span).floor()
    return _mt.where(flips.remainder(2) == 0, extra + lo, span - extra + lo)


def _source_index(coord, size, padding_mode, align_corners):
    return _pad(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _pad(c, size, padding_mode, align_corners):
    """an unnormalised coordinate moved inside [0, size - 1] by the padding mode ("zeros" leaves it)"""
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


def _gather(flat, fs, sizes):
    """input values at the integral float coordinates fs (one [N, *out] tensor per spatial dim, in the
    input's order) from flat [N, C, prod(sizes)], and whether each is inside the input (NaN and
    infinities are outside)"""
    inside, idx = None, None
    for f, n in zip(fs, sizes):
        ok = (f >= 0) & (f < n)
        inside = ok if inside is None else inside & ok
        i = f.detach().nan_to_num(0, 0, 0).clamp(0, n - 1).long()
        idx = i if idx is None else idx * n + i
    npts = math.prod(idx.shape[1:])  # explicit sizes: -1 is ambiguous for an empty batch
    vals = flat.gather(2, idx.reshape(flat.shape[0], 1, npts).expand(-1, flat.shape[1], -1))
    return vals.reshape(flat.shape[0], flat.shape[1], *idx.shape[1:]), inside.unsqueeze(1)


def _check_grid_sampler(input, grid, mode, rank=None):
    """PyTorch's shape checks (check_grid_sampler_common, then 2-D/3-D: rank 4 or 5 for
    grid_sampler_2d/3d, either for grid_sample), then its kernel's dtype dispatch"""
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but "
                           f"got grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    if rank is not None and (input.dim() != rank or grid.dim() != rank):
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.dim() == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        kernel = "grid_sampler3d_cpu" if input.dim() == 5 else "grid_sampler_2d_cpu_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(input.dtype)}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(input.dtype)} but found {scalar_name(grid.dtype)}")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    if mode == "bicubic":
        return _bicubic(input, grid, padding_mode, align_corners)
    N, C, *sizes = input.shape  # (H, W) or (D, H, W); the grid's last axis is (x, y[, z]), the reverse
    k = len(sizes)
    coords = [_source_index(grid[..., k - 1 - d], sizes[d], padding_mode, align_corners) for d in range(k)]
    flat = input.reshape(N, C, math.prod(sizes))
    if mode == "nearest":  # round half to even, as nearbyint
        v, inside = _gather(flat, [c.round() for c in coords], sizes)
        zero = (grid[..., 0] * 0).nan_to_num(0, 0, 0).unsqueeze(1)  # the grid's gradient is zeros, not None
        return _mt.where(inside, v, v.new_zeros(())) + zero
    # (tri/bi)linear: the 2**k corners in PyTorch's order (first spatial dim slowest), each corner's
    # weight the product of its per-dim factors taken from x (last dim) first, as PyTorch multiplies them
    lo = [c.floor() for c in coords]
    out = None
    for corner in itertools.product((0, 1), repeat=k):
        pos = [f + 1 if b else f for f, b in zip(lo, corner)]
        w = None
        for d in reversed(range(k)):
            f = coords[d] - lo[d] if corner[d] else lo[d] + 1 - coords[d]
            w = f if w is None else w * f
        v, inside = _gather(flat, pos, sizes)
        term = _mt.where(inside, v, v.new_zeros(())) * w.unsqueeze(1)  # a NaN weight stays NaN, as PyTorch
        out = term if out is None else out + term
    return out


def _cubic_weights(t, A=-0.75):
    """the four cubic-convolution weights of the taps at -1, 0, 1, 2 from the fraction t (Keys, A = -0.75,
    as PyTorch's get_cubic_coefficients)"""
    near = lambda x: ((A + 2) * x - (A + 3)) * x * x + 1  # noqa: E731  |x| <= 1
    far = lambda x: ((A * x - 5 * A) * x + 8 * A) * x - 4 * A  # noqa: E731  1 < |x| < 2
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _bicubic(input, grid, padding_mode, align_corners):
    """PyTorch's bicubic grid sampling: the 4x4 taps around the unnormalised point, each tap moved by the
    padding mode (not the point itself, as for bilinear), read as zero when outside; rows weighted along
    x first, then the four rows along y. The grid's gradient flows through the fractions only."""
    N, C, H, W = input.shape
    x = _unnormalize(grid[..., 0], W, align_corners)
    y = _unnormalize(grid[..., 1], H, align_corners)
    x0, y0 = x.detach().floor(), y.detach().floor()
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    flat = input.reshape(N, C, H * W)
    xs = [_pad(x0 + (j - 1), W, padding_mode, align_corners) for j in range(4)]
    out = None
    for i in range(4):
        yi = _pad(y0 + (i - 1), H, padding_mode, align_corners)
        row = None
        for j in range(4):
            v, inside = _gather(flat, [yi, xs[j]], [H, W])
            term = wx[j].unsqueeze(1) * _mt.where(inside, v, v.new_zeros(()))
            row = term if row is None else row + term
        term = wy[i].unsqueeze(1) * row
        out = term if out is None else out + term
    return out
