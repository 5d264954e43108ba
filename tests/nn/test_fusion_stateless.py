"""torch.nn.utils.fusion, stateless / torch.func.functional_call, skip_init and the memory-format converters
against live PyTorch."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
from fdiff import errors_match as same_error
from modcmp import arr, build, randn, tensor

torch = pytest.importorskip("torch")


def bn_eval(L, bn):
    """A BatchNorm with running statistics away from their defaults, in eval mode."""
    n = bn.num_features
    with L.no_grad():
        bn.running_mean.copy_(tensor(L, randn((n,), 1)))
        bn.running_var.copy_(tensor(L, np.abs(randn((n,), 2)) + 0.5))
        bn.weight.copy_(tensor(L, randn((n,), 3)))
        bn.bias.copy_(tensor(L, randn((n,), 4)))
    return bn.eval()


CASES = {
    "conv2d": (lambda L: L.nn.Conv2d(3, 4, 3), lambda L: L.nn.BatchNorm2d(4), (2, 3, 6, 6), "conv", False),
    "conv1d_nobias": (lambda L: L.nn.Conv1d(3, 4, 3, bias=False), lambda L: L.nn.BatchNorm1d(4), (2, 3, 7), "conv",
                      False),
    "convT2d": (lambda L: L.nn.ConvTranspose2d(3, 4, 3), lambda L: L.nn.BatchNorm2d(4), (2, 3, 5, 5), "conv", True),
    "linear": (lambda L: L.nn.Linear(5, 4), lambda L: L.nn.BatchNorm1d(4), (3, 5), "linear", False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fuse_eval_matches_torch(case):
    make, make_bn, shape, kind, transpose = CASES[case]

    def go(L):
        m, bn = build(L, make).eval(), bn_eval(L, build(L, make_bn, seed=1))
        x = tensor(L, randn(shape, 5))
        fuse = L.nn.utils.fuse_conv_bn_eval if kind == "conv" else L.nn.utils.fuse_linear_bn_eval
        fused = fuse(m, bn, transpose=transpose) if kind == "conv" else fuse(m, bn)
        assert fused is not m and isinstance(fused.weight, L.nn.Parameter)
        return arr(fused(x)), arr(bn(m(x))), arr(fused.weight), arr(fused.bias)
    a, b = go(mt), go(torch)
    np.testing.assert_allclose(a[0], a[1], rtol=1e-4, atol=1e-5)  # the fusion is exact up to rounding
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_fusion_errors():
    same_error(lambda L: L.nn.utils.fuse_conv_bn_eval(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4)))
    same_error(lambda L: L.nn.utils.fuse_linear_bn_eval(L.nn.Linear(3, 4).eval(), L.nn.BatchNorm1d(5).eval()))
    same_error(lambda L: L.nn.utils.fuse_conv_bn_eval(
        L.nn.Conv2d(3, 4, 3).eval(), L.nn.BatchNorm2d(4, track_running_stats=False).eval()))


def net(L):
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))


def test_functional_call_matches_torch():
    def go(L):
        m = build(L, net)
        x = tensor(L, randn((5, 3), 1))
        w = tensor(L, randn((4, 3), 2), grad=True)
        before = arr(m[0].weight)
        out = L.func.functional_call(m, ({"0.weight": w}, {"2.bias": tensor(L, [1.0, -1.0])}), (x,))
        out.sum().backward()
        assert np.array_equal(arr(m[0].weight), before) and m[0].weight.grad is None  # the module is untouched
        return arr(out), arr(w.grad), arr(m[0].bias.grad)
    for x, y in zip(go(mt), go(torch)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_functional_call_tied_weights_and_kwargs():
    class Tied(object):
        pass

    def go(L):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Linear(2, 2, bias=False)
                self.b = L.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x, scale=1.0):
                return self.b(self.a(x)) * scale
        L.manual_seed(0)
        m = M()
        new = tensor(L, [[1.0, 2.0], [3.0, 4.0]])
        x = tensor(L, [[1.0, -1.0]])
        tied = L.func.functional_call(m, {"a.weight": new}, x, {"scale": 2.0})
        untied = L.func.functional_call(m, {"a.weight": new}, (x,), tie_weights=False)
        return arr(tied), arr(untied)
    for x, y in zip(go(mt), go(torch)):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_functional_call_errors_and_deprecation():
    same_error(lambda L: L.func.functional_call(net(L), ({"0.weight": L.ones(4, 3)}, {"0.weight": L.ones(4, 3)}),
                                                (L.ones(1, 3),)))
    same_error(lambda L: L.func.functional_call(net(L), [{"0.weight": L.ones(4, 3)}, 3], (L.ones(1, 3),)))
    same_error(lambda L: L.func.functional_call(net(L), 3, (L.ones(1, 3),)))
    same_error(lambda L: L.func.functional_call(net(L), {"0.weight": L.ones(4, 3)}, (L.ones(1, 3),), strict=True))
    same_error(lambda L: L.func.functional_call(net(L), {"nope": L.ones(4, 3)}, (L.ones(1, 3),), strict=True))
    same_error(lambda L: L.func.functional_call(L.nn.DataParallel(net(L)), {}, (L.ones(1, 3),)))
    msgs = []
    for L in (mt, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.nn.utils.stateless.functional_call(net(L), {}, (L.ones(1, 3),))
        msgs.append([(x.category.__name__, str(x.message)) for x in w])
    assert msgs[0] == msgs[1] and msgs[0]


def test_stack_module_state():
    def go(L):
        models = [build(L, net, seed=s) for s in range(3)]
        params, buffers = L.func.stack_module_state(models)
        return {k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()}, buffers, \
            arr(params["0.weight"])
    a, b = go(mt), go(torch)
    assert a[:2] == b[:2]
    np.testing.assert_array_equal(a[2], b[2])
    same_error(lambda L: L.func.stack_module_state([]))
    same_error(lambda L: L.func.stack_module_state([net(L), net(L).eval()]))
    same_error(lambda L: L.func.stack_module_state([net(L), L.nn.Linear(3, 4)]))


def test_named_member_accessor():
    def go(L):
        m = build(L, net)
        acc = L.nn.utils.stateless.NamedMemberAccessor(m)
        old = acc.swap_tensor("0.bias", L.zeros(4))
        names = sorted(acc.named_tensors())
        return arr(old), arr(m[0].bias), [n for n, _ in acc.named_tensors()]
    a, b = go(mt), go(torch)
    assert a[2] == b[2]
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    same_error(lambda L: L.nn.utils.stateless.NamedMemberAccessor(net(L)).get_tensor("0.nope"))
    same_error(lambda L: L.nn.utils.stateless.NamedMemberAccessor(net(L)).get_submodule("5"))


def test_skip_init():
    for L in (mt, torch):
        m = L.nn.utils.skip_init(L.nn.Linear, 5, 3, bias=False)
        assert type(m) is L.nn.Linear and tuple(m.weight.shape) == (3, 5) and m.bias is None
        assert m.weight.device.type == "cpu" and isinstance(m.weight, L.nn.Parameter)
    same_error(lambda L: L.nn.utils.skip_init(dict))
    same_error(lambda L: L.nn.utils.skip_init(L.nn.ReLU))


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_convert_weight_memory_format(fmt):
    def go(L):
        m = L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.Sequential(L.nn.ConvTranspose2d(4, 2, 3)), L.nn.Linear(2, 2))
        f = getattr(L, fmt)
        out = L.nn.utils.convert_conv2d_weight_memory_format(m, L.channels_last)
        out = L.nn.utils.convert_conv2d_weight_memory_format(out, f)
        return out is m, [(tuple(p.stride()), p.is_contiguous()) for p in m.parameters()]
    assert go(mt) == go(torch)


def test_convert_conv3d_weight_memory_format():
    def go(L):
        m = L.nn.Sequential(L.nn.Conv3d(2, 3, 2), L.nn.ConvTranspose3d(3, 2, 2))
        L.nn.utils.convert_conv3d_weight_memory_format(m, L.channels_last_3d)
        return [tuple(p.stride()) for p in m.parameters()]
    assert go(mt) == go(torch)
