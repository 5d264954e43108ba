"""torch.* entry points added beside the methods and nn.functional: the in-place functions
(torch.abs_, torch.clamp_, ...), the nn ops with ATen's signatures (int reductions, native_*
tuples), and the runtime settings and tensor predicates, against live PyTorch."""
import warnings

import pytest

import mindtorch_v2 as mt
from mtdiff import check, pair, same

torch = pytest.importorskip("torch")


def both(fn, *specs, cmp=check, message=True):
    ms, ts = zip(*(pair(torch, s, d, seed=i) for i, (s, d) in enumerate(specs))) if specs else ((), ())
    return same(lambda: fn(mt, *ms), lambda: fn(torch, *ts), cmp=cmp, message=message)


def close(m, t):
    check(m, t, layout=False) if m.dtype is mt.bool or not m.dtype.is_floating_point else \
        torch.testing.assert_close(torch.from_numpy(m.numpy().copy()), t, rtol=1e-5, atol=1e-6, equal_nan=True)


def close_all(ms, ts):
    assert len(ms) == len(ts)
    for m, t in zip(ms, ts):
        close(m, t)


# ---- in-place functions: the same object back, modified ---------------------------------------

UNARY_INPLACE = ["abs_", "neg_", "sqrt_", "rsqrt_", "exp_", "expm1_", "log_", "log1p_", "log2_", "log10_", "sin_",
                 "cos_", "tan_", "tanh_", "sigmoid_", "erf_", "reciprocal_", "floor_", "ceil_", "trunc_", "acos_",
                 "asin_", "atan_", "sinh_", "cosh_", "asinh_", "atanh_", "exp2_", "erfc_", "sinc_", "deg2rad_",
                 "rad2deg_", "frac_", "negative_", "arccos_", "arcsin_", "arctan_", "arcsinh_", "arctanh_", "fix_",
                 "square_", "round_", "conj_physical_"]


@pytest.mark.parametrize("name", UNARY_INPLACE)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_unary_inplace_functions(name, dtype):
    def fn(L, x):
        x = x / 8 if x.dtype.is_floating_point else x  # inside acos/asin/atanh's domain
        r = getattr(L, name)(x)
        assert r is x
        return x
    both(fn, ((2, 3), dtype), cmp=close)


def test_binary_and_clamp_inplace_functions():
    both(lambda L, x, y: L.xlogy_(x, y), ((4,), "float32"), ((4,), "float32"), cmp=close)
    both(lambda L, x, y: L.gcd_(x, y), ((4,), "int32"), ((4,), "int32"))
    both(lambda L, x, y: L.lcm_(x, y), ((4,), "int64"), ((4,), "int64"))
    both(lambda L, x: L.clamp_(x, -1, 1), ((5,), "float32"))
    both(lambda L, x: L.clamp_min_(x, 0.5), ((5,), "float32"))
    both(lambda L, x: L.clamp_max_(x, 0.5), ((5,), "float32"))
    both(lambda L, x: L.clip_(x, max=0.0), ((5,), "float32"))
    both(lambda L, x: L.nan_to_num_(x / 0), ((5,), "float32"))
    both(lambda L, x: L.fill_(x, 2), ((5,), "float32"))
    both(lambda L, x: L.zero_(x), ((5,), "int16"))
    both(lambda L, x, y, z: L.addmv_(x, y, z), ((3,), "float32"), ((3, 4), "float32"), ((4,), "float32"), cmp=close)
    both(lambda L, x: L.as_strided_(x, (2,), (2,)), ((5,), "float32"))
    both(lambda L, x: L.abs_(x), ((3,), "bool"))  # PyTorch's error for bool
    for L in (mt, torch):
        assert not hasattr(L, "absolute_") and not hasattr(L, "sign_") and not hasattr(L, "atan2_")


def test_detach_():
    both(lambda L, x: L.detach_(x), ((2, 3), "float32"))  # a view (pair reshapes): PyTorch's error
    for L in (mt, torch):
        x = (L.ones(2, requires_grad=True) * 2)
        assert L.detach_(x) is x and x.grad_fn is None and not x.requires_grad


def test_float_power_():
    both(lambda L, x: x.float_power_(2), ((3,), "float32"))  # the base must be double
    both(lambda L, x: x.float_power_(L.tensor(2)), ((3,), "float64"))


def test_fill_and_detach():
    both(lambda L, x: L.fill(x, 3.5), ((2, 2), "float32"))
    for L in (mt, torch):
        x = L.ones(2, requires_grad=True)
        assert type(L.fill(x, 2.0).grad_fn).__name__ == "FillBackward0"
        d = L.detach(x * 2)
        assert not d.requires_grad and d.tolist() == [2.0, 2.0]


# ---- nn ops with ATen's signatures ------------------------------------------------------------

LOSSES = [
    ("binary_cross_entropy_with_logits", [(4, 3), (4, 3)], lambda L, a, b: (a, b.sigmoid()), (None, None)),
    ("cosine_embedding_loss", [(4, 3), (4, 3), (4,)], lambda L, a, b, c: (a, b, c.sign()), (0.1,)),
    ("hinge_embedding_loss", [(4, 3), (4, 3)], lambda L, a, b: (a, b.sign()), (0.5,)),
    ("kl_div", [(4, 3), (4, 3)], lambda L, a, b: (a.log_softmax(1), b.softmax(1)), ()),
    ("margin_ranking_loss", [(5,), (5,), (5,)], lambda L, a, b, c: (a, b, c.sign()), (0.2,)),
    ("poisson_nll_loss", [(4, 3), (4, 3)], lambda L, a, b: (a, b.abs()), (True, False, 1e-8)),
    ("triplet_margin_loss", [(4, 3), (4, 3), (4, 3)], lambda L, a, b, c: (a, b, c), (1.0, 2.0, 1e-6, False)),
]


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name,shapes,prep,extra", LOSSES, ids=[case[0] for case in LOSSES])
def test_losses_with_int_reduction(name, shapes, prep, extra, reduction):
    both(lambda L, *xs: getattr(L, name)(*prep(L, *xs), *extra, reduction),
         *[(s, "float32") for s in shapes], cmp=close)


def test_pooling_and_padding_aten():
    both(lambda L, x: L.max_pool1d(x, 2), ((1, 2, 7), "float32"))
    both(lambda L, x: L.max_pool1d(x, 3, 2, 1, 1, True), ((1, 2, 9), "float32"))
    both(lambda L, x: L.max_pool2d(x, (2, 2)), ((1, 2, 6, 6), "float32"))
    both(lambda L, x: L.adaptive_max_pool1d(x, 3), ((1, 2, 7), "float32"),
         cmp=lambda m, t: [check(a, b) for a, b in zip(m, t)])
    both(lambda L, x: L.avg_pool1d(x, 2), ((1, 2, 6), "float32"))
    both(lambda L, x: L.adaptive_avg_pool1d(x, 4), ((1, 2, 7), "float32"), cmp=close)
    both(lambda L, x: L.constant_pad_nd(x, (1, 2), 3.5), ((2, 3), "float32"))
    both(lambda L, x: L.channel_shuffle(x, 2), ((1, 4, 2, 2), "float32"))


def test_convolutions_aten():
    both(lambda L, x, w, b: L.conv_tbc(x, w, b, 1), ((7, 2, 3), "float32"), ((3, 3, 4), "float32"),
         ((4,), "float32"), cmp=close)
    both(lambda L, x, w, b: L.convolution(x, w, b, [1], [1], [1], False, [0], 1), ((2, 3, 8), "float32"),
         ((4, 3, 3), "float32"), ((4,), "float32"), cmp=close)
    both(lambda L, x, w, b: L.convolution(x, w, b, [2, 1], [1, 0], [1, 1], True, [1, 0], 1),
         ((1, 3, 5, 5), "float32"), ((3, 2, 3, 3), "float32"), ((2,), "float32"), cmp=close)
    both(lambda L, x, w: L.conv2d(x, w), ((1, 2, 5, 5), "float32"), ((3, 2, 3, 3), "float32"), cmp=close)
    both(lambda L, x, w, b: L.conv_tbc(x, w, b), ((7, 2), "float32"), ((3, 3, 4), "float32"), ((4,), "float32"))


def test_native_norms_and_dropout():
    both(lambda L, x, w, b: L.native_layer_norm(x, [5], w, b, 1e-5), ((2, 3, 5), "float32"), ((5,), "float32"),
         ((5,), "float32"), cmp=close_all)
    both(lambda L, x: L.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5), ((4, 3, 2), "float32"),
         cmp=close_all)
    both(lambda L, x, rm: L.native_batch_norm(x, None, None, rm, rm.abs() + 1, False, 0.1, 1e-5),
         ((4, 3), "float32"), ((3,), "float32"), cmp=close_all)
    both(lambda L, x: L.native_group_norm(x, None, None, 4, 6, 5, 2, 1e-5), ((4, 6, 5), "float32"), cmp=close_all)
    both(lambda L, x: L.native_dropout(x, 0.5, False), ((3, 2), "float32"), cmp=close_all)
    both(lambda L, x: L.native_dropout(x, 1.0, True), ((3, 2), "float32"), cmp=close_all)
    out, mask = mt.native_dropout(mt.ones(1000), 0.25, True)
    assert mask.dtype is mt.bool and 650 < int(mask.sum()) < 850
    assert set(out.unique().tolist()) <= {0.0, mt.tensor(1 / 0.75).item()}
    assert (out != 0).equal(mask)


# ---- runtime settings and predicates ----------------------------------------------------------

def test_predicates():
    for L in (mt, torch):
        assert L.is_nonzero(L.tensor([3])) and not L.is_nonzero(L.tensor(0.0))
        assert L.is_same_size(L.ones(2, 3), L.zeros(2, 3)) and not L.is_same_size(L.ones(2), L.ones(2, 1))
        assert L.ones(2).is_same_size(L.ones(2))
        assert L.is_signed(L.ones(2)) and not L.is_signed(L.ones(2, dtype=L.uint8))
        assert L.get_device(L.ones(1)) == -1 and not L.is_inference(L.ones(1))
        assert L.is_storage(L.ones(2).untyped_storage()) and not L.is_storage(L.ones(2))
    both(lambda L: L.is_nonzero(L.tensor([1, 2])))
    both(lambda L: L.is_nonzero(L.tensor([])))


class _Plain:
    pass


@pytest.mark.parametrize("make", [lambda L: L.ones(2, dtype=L.int64), lambda L: 3, lambda L: [1], lambda L: len,
                                  lambda L: _Plain(), lambda L: _Plain, lambda L: L.nn.Linear],
                         ids=["tensor", "int", "list", "builtin", "instance", "class", "torch_class"])
def test_typename(make):
    m, t = mt.typename(make(mt)), torch.typename(make(torch))
    assert m == t.replace("torch.nn.", "mindtorch_v2.nn.") or m == t


def test_runtime_settings():
    before = mt.get_float32_matmul_precision()
    assert before == torch.get_float32_matmul_precision() == "highest"
    try:
        mt.set_float32_matmul_precision("medium")
        assert mt.get_float32_matmul_precision() == "medium"
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mt.set_float32_matmul_precision("bad")
        assert "bad is not one of 'highest', 'high', or 'medium'" in str(w[0].message)
        assert mt.get_float32_matmul_precision() == "medium"
    finally:
        mt.set_float32_matmul_precision(before)
    assert mt.set_flush_denormal(False) is False  # not supported: PyTorch's answer for such a CPU
    assert mt.get_num_interop_threads() >= 1
    for L in (mt, torch):
        with pytest.raises(RuntimeError, match="^set_num_interop_threads expects a positive integer$"):
            L.set_num_interop_threads(0)
