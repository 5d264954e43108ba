"""torch.testing.assert_close: PyTorch's default tolerances, attribute checks and mismatch reports.

The value comparison runs on the library's ops (torch.isclose's formula), never on NumPy.
"""
import collections.abc
import math

import mindtorch_v2 as torch

_DTYPE_PRECISIONS = {"float16": (0.001, 1e-05), "bfloat16": (0.016, 1e-05), "float32": (1.3e-06, 1e-05),
                     "float64": (1e-07, 1e-07)}


class _Error(Exception):
    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            msg = self.msg if msg is None else msg(self.msg)
        if self.id:
            msg += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
        return self.type(msg)


def default_tolerances(*inputs):
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(str(i.dtype if isinstance(i, torch.Tensor) else i)[6:], (0.0, 0.0))
                         for i in inputs])
    return max(rtols), max(atols)


def _tolerances(*inputs, rtol, atol, id=()):
    if (rtol is None) ^ (atol is None):
        raise _Error(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                     f"{'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _mismatch_msg(*, default_identifier, identifier, extra, abs_diff, abs_diff_idx, atol, rel_diff, rel_diff_idx,
                  rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(type, diff, idx, tol):
        msg = f"{type.title()} difference: {diff}" if idx is None else f"Greatest {type} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(default_identifier="Scalars", identifier=identifier, extra=f"Expected {expected} but got "
                         f"{actual}.", abs_diff=abs_diff, abs_diff_idx=None, atol=atol, rel_diff=rel_diff,
                         rel_diff_idx=None, rtol=rtol)


def _isclose(a, b, rtol, atol, equal_nan):
    """torch.isclose: a == b, or |a - b| finite and <= atol + |rtol * b|; NaNs equal with equal_nan."""
    close = a == b
    if a.dtype.is_floating_point:
        if equal_nan:
            close = close | (torch.isnan(a) & torch.isnan(b))
        if rtol != 0 or atol != 0:
            allowed = atol + (rtol * b).abs()
            actual = (a - b).abs()
            close = close | (torch.isfinite(actual) & (actual <= allowed))
    elif rtol != 0 or atol != 0:
        a64, b64 = a.to(torch.float64), b.to(torch.float64)
        close = close | ((a64 - b64).abs() <= atol + (rtol * b64).abs())
    return close


def _tensor_msg(actual, expected, matches, *, rtol, atol, identifier=None):
    shape = tuple(matches.shape)

    def unravel(flat):
        out = []
        for size in shape[::-1]:
            flat, mod = divmod(flat, size)
            out.append(mod)
        return tuple(out[::-1])

    n = matches.numel()
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not a.dtype.is_floating_point:
        a, e = a.to(torch.int64), e.to(torch.int64)
    abs_diff = (a - e).abs()
    abs_diff[m] = 0
    max_abs, abs_idx = torch.max(abs_diff, 0)
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    max_rel, rel_idx = torch.max(rel_diff, 0)
    return _mismatch_msg(default_identifier="Tensor-likes", identifier=identifier, extra=extra,
                         abs_diff=max_abs.item(), abs_diff_idx=unravel(int(abs_idx)), atol=atol,
                         rel_diff=max_rel.item(), rel_diff_idx=unravel(int(rel_idx)), rtol=rtol)


def _as_tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy" and type(x).__name__ == "ndarray":
        return torch.as_tensor(x)
    return None


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype, check_layout,
                     check_stride, msg, id, allow_subclasses):
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Error(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                     f"{type(expected)}.", id=id)

    def fail(name, a, b):
        raise _Error(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.", id=id)

    if actual.shape != expected.shape:
        fail("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        fail("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        fail("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        fail("dtype", actual.dtype, expected.dtype)
    rtol, atol = _tolerances(actual, expected, rtol=rtol, atol=atol, id=id)
    actual, expected = actual.detach(), expected.detach()
    if actual.dtype != expected.dtype:
        dtype = torch.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    if actual.is_meta or expected.is_meta:
        return
    matches = _isclose(actual, expected, rtol, atol, equal_nan)
    if bool(matches.all()):
        return
    if actual.shape == torch.Size([]):
        text = _scalar_msg(actual.item(), expected.item(), rtol=rtol, atol=atol, identifier=msg)
    else:
        text = _tensor_msg(actual, expected, matches, rtol=rtol, atol=atol, identifier=msg)
    raise _Error(AssertionError, text if not isinstance(msg, str) else msg, id=id)


def _compare_numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype, msg, id):
    if check_dtype and type(actual) is not type(expected):
        raise _Error(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id=id)
    if isinstance(actual, bool) or isinstance(expected, bool):
        if actual != expected:
            raise _Error(AssertionError, msg if isinstance(msg, str) else f"Booleans mismatch: {actual} is not {expected}",
                         id=id)
        return
    if rtol is None and atol is None:
        kind = lambda x: "float64" if isinstance(x, float) else "int64"  # noqa: E731
        rtol, atol = max(_DTYPE_PRECISIONS.get(kind(actual), (0, 0))[0], _DTYPE_PRECISIONS.get(kind(expected), (0, 0))[0]), \
            max(_DTYPE_PRECISIONS.get(kind(actual), (0, 0))[1], _DTYPE_PRECISIONS.get(kind(expected), (0, 0))[1])
    else:
        rtol, atol = _tolerances(rtol=rtol, atol=atol, id=id)
    if actual == expected:
        return
    if equal_nan and isinstance(actual, float) and isinstance(expected, float) and math.isnan(actual) and \
            math.isnan(expected):
        return
    diff = abs(actual - expected)
    if math.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Error(AssertionError, msg if isinstance(msg, str) else _scalar_msg(actual, expected, rtol=rtol, atol=atol,
                                                                               identifier=msg), id=id)


def _compare(actual, expected, id, **opts):
    ta, te = _as_tensor(actual), _as_tensor(expected)
    if ta is not None or te is not None:
        if ta is None or te is None:
            raise _Error(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                         f"{type(expected)}.", id=id)
        return _compare_tensors(ta, te, id=id, **opts)
    if isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str) and \
            isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Error(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                         id=id)
        for i in range(len(actual)):
            _compare(actual[i], expected[i], (*id, i), **opts)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Error(AssertionError, "The keys of the mappings do not match:\n"
                         f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                         f"Additional keys in the actual mapping: {sorted(ak - ek)}", id=id)
        keys = actual.keys()
        try:
            keys = sorted(keys)
        except Exception:
            keys = list(keys)
        for k in keys:
            _compare(actual[k], expected[k], (*id, k), **opts)
        return
    if isinstance(actual, (int, float, bool)) and isinstance(expected, (int, float, bool)):
        return _compare_numbers(actual, expected, rtol=opts["rtol"], atol=opts["atol"], equal_nan=opts["equal_nan"],
                                check_dtype=opts["check_dtype"], msg=opts["msg"], id=id)
    if actual is None and expected is None:
        return
    raise _Error(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                 f"{type(expected)}.", id=id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts that actual and expected are close (PyTorch's torch.testing.assert_close)."""
    __tracebackhide__ = True
    try:
        _compare(actual, expected, (), rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                 check_dtype=check_dtype, check_layout=check_layout, check_stride=check_stride, msg=msg,
                 allow_subclasses=allow_subclasses)
    except _Error as e:
        raise e.to_error(msg) from None
