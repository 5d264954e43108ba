"""torch.testing: assert_close and make_tensor."""
from ._comparison import assert_close  # noqa: F401
from ._creation import make_tensor  # noqa: F401


_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since PyTorch 1.12 (a FutureWarning): assert_close with its older default tolerances."""
    import warnings
    from .. import tensor
    from .._tensor import Tensor
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        tols = [_ALLCLOSE_PRECISIONS.get(str(t.dtype)[6:], (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in tols), max(a for _, a in tols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
