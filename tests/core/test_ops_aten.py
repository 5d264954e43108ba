"""torch.ops.aten and PyTorch's other operator namespaces against live PyTorch: every schema prints the
same, packets and overloads name themselves the same, calls of a broad sample of overloads (positional,
keyword, in-place, out=, tuple and list results) give the same values and dtypes, a packet picks the same
overload, and unknown operators, unknown overloads and bad arguments raise the same errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mindtorch_v2 as mt
from mindtorch_v2 import _ops

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _qualified(ns, op, ov):
    return f"{ns}::{op}" + ("" if ov == "default" else f".{ov}")


def test_every_schema_prints_as_pytorchs():
    import torch._prims  # noqa: F401  (defines prims)
    checked = 0
    for ns, ops in _ops._table().items():
        for op, entry in ops.items():
            for row in entry["overloads"]:
                want = [s for s in torch._C._jit_get_schemas_for_operator(f"{ns}::{op}")
                        if (s.overload_name or "default") == row[0]]
                space = getattr(mt.ops, ns)  # not getattr(space, op): prim::name is shadowed by .name
                ours = getattr(type(space).__getattr__(space, op), row[0])
                assert str(ours._schema) == str(want[0]), (ns, op, row[0])
                checked += 1
    assert checked > 4000


def test_schema_table_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_op_schemas.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("op", ["add", "convolution", "sum", "max", "split", "_foreach_add_", "native_layer_norm",
                                "upsample_bilinear2d", "sym_size", "to", "where"])
def test_packets_and_overloads_name_themselves_as_pytorch(op):
    theirs, ours = getattr(torch.ops.aten, op), getattr(mt.ops.aten, op)
    for attr in ("__name__", "_qualified_op_name"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert ours.overloads() == theirs.overloads()
    for ov in theirs.overloads():
        t, o = getattr(theirs, ov), getattr(ours, ov)
        assert (o.name(), o.__name__, o._overloadname, repr(o), str(o), o.namespace, o._opname) == \
               (t.name(), t.__name__, t._overloadname, repr(t), str(t), t.namespace, t._opname)
        assert [str(x) for x in o.tags] == [str(x) for x in t.tags]
        assert o.overloadpacket is ours and o is getattr(ours, ov)


def _rand(*shape, seed=0, dtype="float32", low=0.1, high=0.9):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.tensor(v)
    if isinstance(v, list):
        return [_to(lib, x) for x in v]
    if isinstance(v, str) and v.startswith("dtype:"):
        return getattr(lib, v[6:])
    return v


X, Y, W = _rand(3, 4), _rand(3, 4, seed=1), _rand(4, 5, seed=2)
IMG, K = _rand(1, 2, 6, 6, seed=3), _rand(3, 2, 3, 3, seed=4)
B = _rand(2, 3, 4, seed=5)
IDX = np.array([2, 0, 1], dtype="int64")
# (overload, positional args, keyword args); arrays become tensors of each library
CALLS = [
    ("add.Tensor", (X, Y), {}), ("add.Tensor", (X, Y), {"alpha": 2}), ("add.Scalar", (X, 2), {}),
    ("add.Tensor", (X, 3), {}), ("sub.Tensor", (X, Y), {"alpha": 0.5}), ("mul.Tensor", (X, Y), {}),
    ("div.Tensor_mode", (X, Y), {"rounding_mode": "floor"}), ("rsub.Scalar", (X, 1.5), {}),
    ("neg.default", (X,), {}), ("exp.default", (X,), {}), ("log.default", (X,), {}), ("sqrt.default", (X,), {}),
    ("sin.default", (X,), {}), ("tanh.default", (X,), {}), ("sigmoid.default", (X,), {}),
    ("pow.Tensor_Scalar", (X, 3), {}), ("clamp.default", (X, 0.3, 0.6), {}), ("where.self", (X > 0.5, X, Y), {}),
    ("mm.default", (X, W), {}), ("addmm.default", (_rand(5), X, W), {"beta": 0.5}), ("bmm.default",
                                                                                    (B, _rand(2, 4, 2)), {}),
    ("t.default", (X,), {}), ("transpose.int", (B, 0, 2), {}), ("permute.default", (B, [2, 0, 1]), {}),
    ("view.default", (X, [4, 3]), {}), ("reshape.default", (X, [2, 6]), {}), ("_unsafe_view.default", (X, [12]), {}),
    ("expand.default", (_rand(1, 4), [3, 4]), {}), ("unsqueeze.default", (X, 1), {}),
    ("squeeze.dim", (_rand(3, 1), 1), {}), ("select.int", (B, 1, 2), {}), ("slice.Tensor", (B, 2, 1, 3), {}),
    ("slice.Tensor", (B, 1, 0, 9223372036854775807, 2), {}), ("cat.default", ([X, Y], 1), {}),
    ("stack.default", ([X, Y],), {}), ("split.Tensor", (B, 2, 2), {}), ("split_with_sizes.default",
                                                                      (X, [1, 3], 1), {}),
    ("unbind.int", (X,), {}), ("index.Tensor", (X, [IDX]), {}), ("index.Tensor", (B, [None, IDX]), {}),
    ("gather.default", (X, 1, np.array([[0, 1]] * 3)), {}), ("index_select.default", (X, 0, IDX), {}),
    ("sum.default", (X,), {}), ("sum.dim_IntList", (X, [1]), {"keepdim": True}), ("mean.dim", (B, [0, 2]), {}),
    ("amax.default", (X, [1]), {}), ("max.dim", (X, 1), {}), ("min.default", (X,), {}),
    ("argmax.default", (X, 1), {}), ("var.correction", (X, [1]), {"correction": 0}),
    ("var_mean.correction", (X, [0]), {}), ("cumsum.default", (X, 1), {}), ("topk.default", (X, 2), {}),
    ("sort.default", (X,), {}), ("_softmax.default", (X, 1, False), {}), ("_log_softmax.default", (X, 0, False), {}),
    ("softmax.int", (X, 1), {}), ("relu.default", (X - 0.5,), {}), ("gelu.default", (X,), {"approximate": "tanh"}),
    ("silu.default", (X,), {}), ("hardtanh.default", (X, 0.2, 0.7), {}), ("leaky_relu.default", (X - 0.5, 0.1), {}),
    ("elu.default", (X - 0.5,), {}), ("convolution.default", (IMG, K, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
                                      {}),
    ("convolution.default", (IMG, _rand(2, 3, 3, 3), _rand(3), [2, 2], [0, 0], [1, 1], True, [1, 1], 1), {}),
    ("native_layer_norm.default", (B, [4], _rand(4), _rand(4), 1e-5), {}),
    ("native_batch_norm.default", (IMG, None, None, None, None, True, 0.1, 1e-5), {}),
    ("_native_batch_norm_legit_no_training.default", (IMG, _rand(2), _rand(2), _rand(2), _rand(2), 0.1, 1e-5), {}),
    ("max_pool2d_with_indices.default", (IMG, [2, 2]), {}), ("avg_pool2d.default", (IMG, [2, 2], [1, 1]), {}),
    ("upsample_nearest2d.vec", (IMG, [9, 9], None), {}), ("upsample_bilinear2d.vec", (IMG, None, True, [2.0, 2.0]), {}),
    ("constant_pad_nd.default", (X, [1, 2]), {"value": 3.0}), ("linear.default", (X, _rand(5, 4)), {}),
    ("embedding.default", (W, IDX), {}), ("mse_loss.default", (X, Y), {}), ("mse_loss.default", (X, Y, 0), {}),
    ("l1_loss.default", (X, Y, 2), {}), ("kl_div.default", (X, Y), {}),
    ("_to_copy.default", (X,), {"dtype": "dtype:float64"}), ("to.dtype", (X, "dtype:int32"), {}),
    ("to.other", (X, IDX), {}), ("clone.default", (X,), {}), ("detach.default", (X,), {}),
    ("alias.default", (X,), {}), ("lift_fresh_copy.default", (X,), {}), ("copy.default", (X, Y), {}),
    ("zeros.default", ([2, 3],), {"dtype": "dtype:int64"}), ("full.default", ([2], 7), {}),
    ("arange.start_step", (0, 10, 3), {}), ("ones_like.default", (X,), {}), ("scalar_tensor.default", (2.5,), {}),
    ("sym_size.int", (B, 2), {}), ("sym_numel.default", (B,), {}), ("sym_stride.int", (B, 0), {}),
    ("linalg_vector_norm.default", (X,), {"ord": 3}), ("norm.Scalar", (X, 1), {}),
    ("norm.ScalarOpt_dim", (X, 2, [1]), {}), ("special_erf.default", (X,), {}), ("fft_rfft.default", (X,), {}),
    ("masked_fill.Scalar", (X, X > 0.5, -1.0), {}), ("eq.Scalar", (X, float(X[0, 0])), {}), ("mT.default", (B,), {}),
    ("logical_not.default", (X > 0.5,), {}), ("_foreach_add.Scalar", ([X, Y], 2), {}),
    ("_foreach_mul.List", ([X, Y], [Y, X]), {}), ("scaled_dot_product_attention.default", (B, B, B), {}),
    ("sym_size.default", (B,), {}), ("size.int", (B, 1), {}),
]


def _compare(want, got):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, mt.Tensor)
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for w, g in zip(want, got):
            _compare(w, g)
    else:
        assert got == want and type(got) is type(want)


@pytest.mark.parametrize("case", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_calls_match_pytorch(case):
    name, args, kwargs = case
    op, ov = name.split(".")
    want = getattr(getattr(torch.ops.aten, op), ov)(*_to(torch, list(args)), **{k: _to(torch, v)
                                                                                 for k, v in kwargs.items()})
    got = getattr(getattr(mt.ops.aten, op), ov)(*_to(mt, list(args)), **{k: _to(mt, v) for k, v in kwargs.items()})
    _compare(want, got)


def _both(fn):
    out = []
    for lib in (torch, mt):
        out.append(fn(lib))
    return out


def test_in_place_and_out_overloads():
    for lib in (torch, mt):
        x = lib.tensor(X)
        r = lib.ops.aten.add_.Tensor(x, lib.tensor(Y), alpha=2)
        assert r is x
        out = lib.empty(3, 4)
        r2 = lib.ops.aten.add.out(lib.tensor(X), lib.tensor(Y), out=out)
        assert r2 is out
        vals, idx = lib.empty(3, 4), lib.empty(3, 4, dtype=lib.int64)
        r3 = lib.ops.aten.sort.values(lib.tensor(X), 1, values=vals, indices=idx)
        assert r3[0] is vals and r3[1] is idx
        lib.ops.aten._foreach_mul_.Scalar([x, out], 2.0)
    t, m = _both(lambda lib: (lib.ops.aten.add_.Tensor(lib.tensor(X), 1.0), lib.ops.aten.sum.IntList_out(
        lib.tensor(X), [0], out=lib.empty(4))))
    for a, b in zip(t, m):
        _compare(a, b)


def test_packet_call_picks_the_overload_pytorch_picks():
    x, y = X, Y
    for fn in (lambda lib: lib.ops.aten.add(lib.tensor(x), 2),
               lambda lib: lib.ops.aten.add(lib.tensor(x), lib.tensor(y), alpha=3),
               lambda lib: lib.ops.aten.sum(lib.tensor(x)),
               lambda lib: lib.ops.aten.sum(lib.tensor(x), [1]),
               lambda lib: lib.ops.aten.max(lib.tensor(x), 0),
               lambda lib: lib.ops.aten.max(lib.tensor(x), lib.tensor(y)),
               lambda lib: lib.ops.aten.softmax(lib.tensor(x), 1)):
        want, got = _both(fn)
        _compare(want, got)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the error is the result compared)
        return type(e).__name__, str(e).replace("mindtorch_v2.", "torch.")
    return None


@pytest.mark.parametrize("call", [
    lambda lib: lib.ops.aten.xyz,
    lambda lib: lib.ops.prims.not_an_op,
    lambda lib: lib.ops.aten.add.xyz,
    lambda lib: lib.ops.aten.add.Tensor(lib.ones(2), "a"),
    lambda lib: lib.ops.aten.add.Tensor(lib.ones(2), other="a"),
    lambda lib: lib.ops.aten.add.Scalar(lib.ones(2), 2, alpha="x"),
    lambda lib: lib.ops.aten.add.Tensor(lib.ones(2)),
    lambda lib: lib.ops.aten.add.Tensor(lib.ones(2), lib.ones(2), foo=1),
    lambda lib: lib.ops.aten.add.Tensor(lib.ones(2), lib.ones(2), 1, 2),
    lambda lib: lib.ops.aten.add.Scalar(lib.ones(2), 1, 1, 2),
    lambda lib: lib.ops.aten.sum.dim_IntList(lib.ones(2), "x"),
    lambda lib: lib.ops.aten.gelu.default(lib.ones(2), approximate=3),
    lambda lib: lib.ops.aten.add.Tensor(lib.ones(2), lib.ones(2), other=lib.ones(2)),
    lambda lib: lib.ops.aten.convolution.default(lib.ones(1, 1, 3, 3), lib.ones(1, 1, 2, 2), None, [1, 1], [0, 0]),
    lambda lib: lib.ops.higher_order.xyz,
])
def test_errors_match_pytorch(call):
    want, got = _error(lambda: call(torch)), _error(lambda: call(mt))
    assert want is not None and got == want


def test_an_op_we_lack_resolves_and_raises_naming_itself():
    op = mt.ops.aten.fbgemm_linear_fp16_weight.default  # a backend-specific operator (out of scope)
    assert str(op._schema) == str(torch.ops.aten.fbgemm_linear_fp16_weight.default._schema)
    with pytest.raises(NotImplementedError, match=r"aten::fbgemm_linear_fp16_weight\.default"):
        op(mt.ones(2, 2), mt.ones(2, 2), mt.ones(2))
    with pytest.raises(NotImplementedError, match=r"aten::add\.int"):  # TorchScript's int overload
        mt.ops.aten.add.int(1, 2)


def test_namespaces():
    for ns in ("aten", "prim", "prims", "debugprims", "rngprims", "profiler", "export", "debug_mode_ops",
               "higher_order"):
        assert ns in dir(mt.ops)
        assert repr(getattr(mt.ops, ns)) == repr(getattr(torch.ops, ns))
    assert mt.ops.prims.convert_element_type.default(mt.ones(2), mt.float64).dtype == mt.float64
    cond = mt.ops.higher_order.cond
    assert cond.name() == torch.ops.higher_order.cond.name() and str(cond) == str(torch.ops.higher_order.cond)
    for pred in (True, False):
        want = torch.ops.higher_order.cond(torch.tensor(pred), lambda x: x + 1, lambda x: x - 1, (torch.ones(2),))
        got = mt.ops.higher_order.cond(mt.tensor(pred), lambda x: x + 1, lambda x: x - 1, (mt.ones(2),))
        _compare(want, got)


def test_autograd_through_aten():
    grads = []
    for lib in (torch, mt):
        x = lib.tensor(X, requires_grad=True)
        lib.ops.aten.sum.default(lib.ops.aten.mul.Tensor(lib.ops.aten.exp.default(x), 2)).backward()
        grads.append(x.grad)
    _compare(*grads)


def test_library_cannot_override_aten():
    with pytest.raises(NotImplementedError, match="aten::add"):
        mt.library.Library("aten", "IMPL").impl("add.Tensor", lambda *a: None, "CPU")
