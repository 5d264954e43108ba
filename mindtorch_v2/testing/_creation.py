"""torch.testing.make_tensor (PyTorch 2.13's rules and random streams)."""
import collections.abc
import functools
import math
import warnings

import mindtorch_v2 as torch

_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")
_FLOATING = ("float16", "bfloat16", "float32", "float64")


def _uniform_random_(t, low, high):
    if high - low >= torch.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of the given shape, dtype and device, filled with values uniformly drawn from [low, high)."""
    name = str(dtype)[6:]
    integral = name in _INTEGRAL or name == "bool"

    def modify_low_high(low, high, *, lowest_inclusive, highest_exclusive, default_low, default_high):
        low = low if low is not None else default_low
        high = high if high is not None else default_high
        if any(isinstance(value, float) and math.isnan(value) for value in [low, high]):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and high={high!r}")
        elif low == high and name in _FLOATING:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                          "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                          FutureWarning, stacklevel=3)
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest_inclusive or low >= highest_exclusive:
            raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} "
                             f"only supports [{lowest_inclusive}, {highest_exclusive})")
        low = min(max(low, lowest_inclusive), highest_exclusive)
        high = min(max(high, lowest_inclusive), highest_exclusive)
        if integral:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous!r} and memory_format={memory_format!r}")
    if requires_grad and integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype!r}")
    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if name == "bool":
        low, high = modify_low_high(low, high, lowest_inclusive=0, highest_exclusive=2, default_low=0, default_high=2)
        result = torch.randint(low, high, shape, device=device, dtype=dtype)
    elif name in _INTEGRAL:
        info = torch.iinfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=info.min,
                                    highest_exclusive=info.max + (1 if name != "int64" else 0),
                                    default_low=-9, default_high=10)
        result = torch.randint(low, high, shape, device=device, dtype=dtype)
    elif name in _FLOATING:
        info = torch.finfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=info.min, highest_exclusive=info.max,
                                    default_low=-9, default_high=9)
        result = torch.empty(shape, device=device, dtype=dtype)
        _uniform_random_(result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else torch.finfo(dtype).tiny
    if name in _FLOATING:
        result.requires_grad = requires_grad
    return result
