"""Conv/pool/upsample/padding/fold modules against live PyTorch: same seed -> same parameters, outputs,
input and parameter gradients (float32 and bfloat16), repr, state_dict keys, errors."""
import copy
import pickle

import pytest

import mindtorch_v2 as mt
from modcmp import compare, randn, tensor

torch = pytest.importorskip("torch")
DTYPES = ["float32", "bfloat16"]

X1 = randn((2, 4, 9))
X2 = randn((2, 4, 7, 8))
X3 = randn((2, 4, 5, 6, 5))

CONV = [
    ("Conv1d", (4, 6, 3), {}, X1),
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=2, dilation=2, groups=2, bias=False), X1),
    ("Conv1d", (4, 4, 4), dict(padding="same", padding_mode="circular"), X1),
    ("Conv1d", (4, 4, 3), dict(padding="valid"), X1[0]),  # unbatched
    ("Conv2d", (4, 6, 3), {}, X2),
    ("Conv2d", (4, 6, (3, 2)), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), X2),
    ("Conv2d", (4, 8, 3), dict(padding="same", padding_mode="reflect", dilation=2, groups=4), X2),
    ("Conv2d", (4, 6, 3), dict(padding=2, padding_mode="replicate"), X2[0]),
    ("Conv2d", (4, 6, 3), dict(padding=(1, 2), padding_mode="circular", stride=2), X2),
    ("Conv2d", (4, 4, 4), dict(padding="same"), X2),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), X1),
    ("ConvTranspose2d", (4, 6, 3), {}, X2),
    ("ConvTranspose2d", (4, 2, (3, 2)), dict(stride=(2, 3), padding=(1, 0), dilation=2, bias=False), X2),
    ("Conv3d", (4, 6, 3), {}, X3),
    ("Conv3d", (4, 6, (3, 2, 1)), dict(stride=(2, 1, 2), padding=(1, 2, 0), dilation=(1, 2, 1), groups=2,
                                         bias=False), X3),
    ("Conv3d", (4, 4, 2), dict(padding="same", padding_mode="circular"), X3),
    ("Conv3d", (4, 8, 3), dict(padding="same", padding_mode="reflect", groups=4), X3),
    ("Conv3d", (4, 6, 3), dict(padding=(1, 2, 1), padding_mode="replicate"), X3[0]),  # unbatched
    ("Conv3d", (4, 6, 3), dict(padding=2, padding_mode="circular", stride=2), X3),
    ("ConvTranspose3d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), X3),
    ("ConvTranspose3d", (4, 2, (3, 2, 2)), dict(stride=(2, 3, 1), padding=(1, 0, 0), dilation=2, bias=False), X3[0]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,kw,x", CONV, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONV)])
def test_conv_modules(name, args, kw, x, dtype):
    m, t, _, _ = compare(torch, lambda L: getattr(L.nn, name)(*args, **kw), [x], dtype=dtype)
    assert repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())


def test_conv_transpose_output_size():
    ctor = lambda L: L.nn.ConvTranspose2d(4, 3, 3, stride=2)  # noqa: E731
    for size in ([16, 18], [2, 3, 15, 17], (15, 18)):
        compare(torch, ctor, [X2], fwd=lambda mod, x, s=size: mod(x, output_size=s))
    for L in (mt, torch):
        with pytest.raises(ValueError) as e:
            ctor(L)(tensor(L, X2), output_size=[20, 20])
        assert "requested an output size of [20, 20], but valid sizes range from [15, 17] to [16, 18]" in str(e.value)
        with pytest.raises(ValueError, match="ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements"):
            ctor(L)(tensor(L, X2), output_size=[1, 2, 3])


def test_lazy_conv():
    for name, x in (("LazyConv1d", X1), ("LazyConv2d", X2), ("LazyConv3d", X3), ("LazyConvTranspose1d", X1),
                    ("LazyConvTranspose2d", X2), ("LazyConvTranspose3d", X3)):
        m, t, _, _ = compare(torch, lambda L: getattr(L.nn, name)(6, 3, groups=2), [x])
        assert type(m).__name__ == type(t).__name__ == name.replace("Lazy", "")
        assert m.in_channels == t.in_channels == 4


@pytest.mark.parametrize("kw,msg", [
    (dict(groups=0), "groups must be a positive integer"),
    (dict(groups=3), "in_channels must be divisible by groups"),
    (dict(padding="full"), "Invalid padding string 'full', should be one of"),
    (dict(padding="same", stride=2), "padding='same' is not supported for strided convolutions"),
    (dict(padding_mode="mirror"), "padding_mode must be one of"),
])
def test_conv_errors(kw, msg):
    for L in (mt, torch):
        with pytest.raises(ValueError, match=msg):
            L.nn.Conv2d(4, 6, 3, **kw)
    for L in (mt, torch):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
            L.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")


def test_conv_state_dict_pickle_roundtrip():
    m = mt.nn.Conv2d(4, 6, 3, padding="same", padding_mode="reflect")
    m2 = pickle.loads(pickle.dumps(m))
    m3 = copy.deepcopy(m)
    x = tensor(mt, X2)
    for other in (m2, m3):
        assert (other(x) - m(x)).abs().max().item() == 0
    t = torch.nn.Conv2d(4, 6, 3, padding="same", padding_mode="reflect")
    t.load_state_dict({k: torch.tensor(v.tolist()) for k, v in m.state_dict().items()})


POOL = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1, dilation=2, ceil_mode=True), X1),
    ("MaxPool1d", (2,), dict(return_indices=True), X1),
    ("MaxPool2d", (3,), dict(stride=2, padding=1), X2),
    ("MaxPool2d", ((2, 3),), dict(dilation=(2, 1), ceil_mode=True, return_indices=True), X2),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False), X1),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), X2),
    ("AvgPool2d", (2,), dict(divisor_override=3), X2[0]),
    ("AdaptiveAvgPool1d", (4,), {}, X1),
    ("AdaptiveAvgPool2d", ((3, None),), {}, X2),
    ("AdaptiveAvgPool2d", (1,), {}, X2),
    ("AdaptiveMaxPool1d", (4,), dict(return_indices=True), X1),
    ("AdaptiveMaxPool2d", ((3, 5),), {}, X2),
    ("LPPool1d", (2, 3), dict(stride=2), abs(X1) + 0.1),
    ("LPPool2d", (3, 2), {}, abs(X2) + 0.1),
    ("LPPool2d", (float("inf"), 2), dict(ceil_mode=True), X2),
    ("Upsample", (), dict(scale_factor=2), X2),
    ("Upsample", (), dict(size=(5, 11), mode="bilinear", align_corners=True), X2),
    ("Upsample", (), dict(scale_factor=1.5, mode="linear"), X1),
    ("UpsamplingNearest2d", (), dict(size=9), X2),
    ("UpsamplingBilinear2d", (), dict(scale_factor=(2, 1.5)), X2),
    ("ZeroPad1d", ((1, 2),), {}, X1),
    ("ZeroPad2d", (2,), {}, X2),
    ("ConstantPad1d", (2, 3.5), {}, X1),
    ("ConstantPad2d", ((1, 0, 2, -1), -1.0), {}, X2),
    ("ConstantPad3d", (1, 0.5), {}, X2),
    ("ReflectionPad1d", ((3, 1),), {}, X1),
    ("ReflectionPad2d", (2,), {}, X2),
    ("ReplicationPad1d", (2,), {}, X1),
    ("ReplicationPad2d", ((1, 2, 3, 0),), {}, X2),
    ("ReplicationPad3d", (1,), {}, X2[None]),
    ("ReflectionPad3d", (1,), {}, X2[None]),
    ("CircularPad1d", (2,), {}, X1),
    ("CircularPad2d", ((1, 2, 0, 3),), {}, X2),
    ("CircularPad3d", (1,), {}, X2[None]),
    ("Unfold", (3,), dict(padding=1, stride=2), X2),
    ("Unfold", ((2, 3),), dict(dilation=(2, 1)), X2),
    ("Fold", ((4, 5), 2), {}, randn((2, 12, 12))),
    ("Fold", ((7, 6), 3), dict(padding=1, stride=2), randn((2, 18, 12))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,kw,x", POOL, ids=[f"{c[0]}-{i}" for i, c in enumerate(POOL)])
def test_pool_pad_upsample_fold_modules(name, args, kw, x, dtype):
    m, t, om, ot = compare(torch, lambda L: getattr(L.nn, name)(*args, **kw), [x], dtype=dtype)
    assert repr(m) == repr(t)
    if kw.get("return_indices"):
        assert om[1].tolist() == ot[1].tolist()


def test_circular_pad_dim_error():
    for L in (mt, torch):
        with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
            L.nn.CircularPad2d(1)(L.zeros(3, 3))


def test_modules_exported():
    names = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "LazyConv1d", "MaxPool1d", "MaxPool2d",
             "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
             "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
             "ZeroPad2d", "ConstantPad3d", "ReflectionPad2d", "ReplicationPad1d", "CircularPad3d", "Fold", "Unfold"]
    for n in names:
        assert getattr(mt.nn, n) is getattr(mt.nn.modules, n)
    from mindtorch_v2.nn.modules.utils import _pair, _reverse_repeat_tuple
    assert _pair(3) == (3, 3) and _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert mt.nn.utils.rnn.pad_sequence is not None  # nn.utils is the package, not nn.modules.utils
