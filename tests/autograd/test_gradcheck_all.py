"""Every differentiable op, from one table: gradcheck (float64) on contiguous, non-contiguous
and broadcast inputs, gradgradcheck for the elementwise, matmul, softmax, layer_norm and
reduction ops, and gradients against live PyTorch (values, grad_fn names, input gradients).

Completeness: every grad_fn name the C core can record (the "...Backward<N>" names in
csrc/) must be produced by some entry below or be listed in SKIP with the reason, so a new
differentiable op without an entry fails test_every_node_has_an_entry.
"""
import pathlib
import re

import numpy as np
import pytest

import mindtorch_v2 as mt
from mindtorch_v2._generated_ops import OPS as TABLE

torch = pytest.importorskip("torch")


class Op:
    """fn(L, *leaves) with L the library; shapes: one per float64 leaf; kind: a domain for the
    leaves' values (normal, pos, unit, distinct); gg: also gradgradcheck; bcast: leaf shapes of
    a broadcast variant; nc: run the non-contiguous variant."""

    def __init__(self, fn, *shapes, kind="normal", gg=False, bcast=None, nc=True):
        self.fn, self.shapes, self.kind, self.gg, self.bcast, self.nc = fn, shapes, kind, gg, bcast, nc


def i64(L, v):
    return L.tensor(v, dtype=L.int64)


def mask(L):
    return L.tensor([[True, False, True], [False, True, True]])


E = dict(gg=True)  # elementwise: gradgradcheck too
_KIND = {"real": "normal", "pos": "pos", "unit": "unit", "gt1": "gt1", "distinct": "distinct"}


def _table_ops():
    """An entry for every op of csrc/ops.tbl with a derivative there, on its domain: unary on (2, 3),
    binary on two (2, 3) leaves and a broadcast pair."""
    ops = {}
    for name, (kind, _, _, _, domain, node) in TABLE.items():
        if node is None or domain == "-":
            continue
        if kind == "unary":
            ops[name] = Op(lambda L, x, f=name: getattr(L, f)(x), (2, 3), kind=_KIND[domain], **E)
        else:
            ops[name] = Op(lambda L, a, b, f=name: getattr(L, f)(a, b), (2, 3), (2, 3), kind=_KIND[domain],
                           bcast=[(2, 3), (3,)], **E)
    return ops


OPS = {
    **_table_ops(),
    # the unary and binary ops whose derivative csrc/ops.tbl gives: TABLE_OPS below
    "to_dtype": Op(lambda L, x: x.to(L.float32), (2, 3), **E),
    "clone": Op(lambda L, x: x.clone(), (2, 3), **E),
    "fill": Op(lambda L, x: (x * 1).fill_(2.0) * x, (2, 3), **E),
    # ---- binary elementwise
    "add": Op(lambda L, a, b: L.add(a, b, alpha=2), (2, 3), (2, 3), bcast=[(2, 1), (3,)], **E),
    "add_scalar": Op(lambda L, a: a + 2.5, (2, 3), **E),
    "sub": Op(lambda L, a, b: L.sub(a, b, alpha=0.5), (2, 3), (2, 3), bcast=[(3,), (2, 1)], **E),
    "rsub": Op(lambda L, a: 2 - a, (2, 3), **E),
    "copysign_scalar": Op(lambda L, a: L.copysign(a, -1.5), (2, 3), kind="distinct", **E),
    "mul_operator": Op(lambda L, a, b: a * b, (2, 3), (2, 3), bcast=[(2, 1), (1, 3)], **E),
    "div_operator": Op(lambda L, a, b: a / b, (2, 3), (2, 3), kind="pos", bcast=[(2, 3), (3,)], **E),
    "div_scalar": Op(lambda L, a: a / 3.0, (2, 3), **E),
    "div_mode": Op(lambda L, a, b: L.div(a, b, rounding_mode="floor"), (2, 3), (2, 3), kind="pos", **E),
    "remainder": Op(lambda L, a, b: L.remainder(a, b), (2, 3), (2, 3), kind="pos", bcast=[(2, 3), (3,)], **E),
    "remainder_scalar": Op(lambda L, a: L.remainder(a, 0.7), (2, 3), kind="pos", **E),
    "fmod": Op(lambda L, a, b: L.fmod(a, b), (2, 3), (2, 3), kind="pos", **E),
    "fmod_scalar": Op(lambda L, a: L.fmod(a, 0.7), (2, 3), kind="pos", **E),
    "xlogy_scalar_other": Op(lambda L, a: L.xlogy(a, 2.5), (2, 3), **E),
    "xlogy_scalar_self": Op(lambda L, b: L.xlogy(2.5, b), (2, 3), kind="pos", **E),
    "pow": Op(lambda L, a, b: L.pow(a, b), (2, 3), (2, 3), kind="pos", bcast=[(2, 3), (1,)], **E),
    "pow_scalar": Op(lambda L, a: a ** 3, (2, 3), **E),
    "rpow": Op(lambda L, a: 2.0 ** a, (2, 3), **E),
    "maximum": Op(lambda L, a, b: L.maximum(a, b), (2, 3), (2, 3), kind="distinct", bcast=[(2, 3), (3,)], **E),
    "minimum": Op(lambda L, a, b: L.minimum(a, b), (2, 3), (2, 3), kind="distinct", **E),
    # ---- complex numbers, between real leaves and real outputs (tests/core/test_complex.py has more)
    "complex": Op(lambda L, a, b: L.view_as_real(L.complex(a, b)), (2, 3), (2, 3), **E),
    "polar": Op(lambda L, a, b: L.view_as_real(L.polar(a, b)), (2, 3), (2, 3), kind="pos", **E),
    "view_as_complex": Op(lambda L, x: L.view_as_real(L.view_as_complex(x.contiguous()) * L.view_as_complex(x.flip(0).contiguous())),
                          (2, 3, 2), **E),
    "conj": Op(lambda L, a, b: L.view_as_real(L.complex(a, b).conj() * L.complex(b, a)), (2, 3), (2, 3), **E),
    # ---- Fourier transforms (tests/core/test_fft.py has more): c2c, onesided r2c, c2r ----
    "fft_c2c": Op(lambda L, a, b: L.view_as_real(L.fft.fftn(L.complex(a, b), norm="ortho")), (3, 4), (3, 4), **E),
    "fft_r2c": Op(lambda L, x: L.view_as_real(L.fft.rfft2(x, norm="forward")), (3, 5), **E),
    "fft_c2r": Op(lambda L, a, b: L.fft.irfft(L.complex(a, b), n=5), (3, 3), (3, 3), **E),
    "conj_physical_complex": Op(lambda L, a, b: L.view_as_real(L.conj_physical(L.complex(a, b)) * L.complex(b, a)),
                                (2, 3), (2, 3), **E),
    # ---- ternary elementwise
    "where": Op(lambda L, a, b: L.where(mask(L), a, b), (2, 3), (2, 3), bcast=[(3,), (2, 1)], **E),
    "clamp": Op(lambda L, x: x.clamp(-0.5, 0.5), (2, 3), kind="distinct", **E),
    "clamp_min": Op(lambda L, x: x.clamp_min(0.1), (2, 3), kind="distinct", **E),
    "clamp_max": Op(lambda L, x: x.clamp_max(0.1), (2, 3), kind="distinct", **E),
    "clamp_min_tensor": Op(lambda L, x, lo: x.clamp_min(lo), (2, 3), (3,), kind="distinct", **E),
    "clamp_max_tensor": Op(lambda L, x, hi: L.clamp_max(x, hi), (2, 3), (2, 3), kind="distinct", **E),
    "clamp_tensor": Op(lambda L, x, lo, hi: x.clamp(lo, hi), (2, 3), (2, 3), (2, 3), kind="distinct",
                       bcast=[(2, 3), (3,), (2, 1)], **E),
    "lerp": Op(lambda L, a, b, w: L.lerp(a, b, w), (2, 3), (2, 3), (2, 3), bcast=[(2, 3), (3,), (2, 1)], **E),
    "lerp_scalar": Op(lambda L, a, b: L.lerp(a, b, 0.3), (2, 3), (2, 3), **E),
    "addcmul": Op(lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), (2, 3), (2, 3), (2, 3),
                  bcast=[(3,), (2, 1), (2, 3)], **E),
    "addcdiv": Op(lambda L, a, b, c: L.addcdiv(a, b, c, value=0.5), (2, 3), (2, 3), (2, 3), kind="pos", **E),
    "masked_fill": Op(lambda L, a: a.masked_fill(mask(L), 1.5), (2, 3), **E),
    "masked_fill_tensor": Op(lambda L, a, v: a.masked_fill(mask(L), v), (2, 3), (), **E),
    "nan_to_num": Op(lambda L, a: L.nan_to_num(a.log(), nan=0.5), (2, 3), kind="distinct", **E),
    # ---- NN activations
    "relu": Op(lambda L, x: L.relu(x), (2, 3), **E),
    "gelu": Op(lambda L, x: L.nn.functional.gelu(x), (2, 3), **E),
    "gelu_tanh": Op(lambda L, x: L.nn.functional.gelu(x, approximate="tanh"), (2, 3), **E),
    "silu": Op(lambda L, x: L.nn.functional.silu(x), (2, 3), **E),
    "mish": Op(lambda L, x: L.nn.functional.mish(x), (2, 3), **E),
    "elu": Op(lambda L, x: L.nn.functional.elu(x, 0.7), (2, 3), **E),
    "celu": Op(lambda L, x: L.nn.functional.celu(x, 0.7), (2, 3), **E),
    "selu": Op(lambda L, x: L.nn.functional.selu(x), (2, 3), **E),
    "leaky_relu": Op(lambda L, x: L.nn.functional.leaky_relu(x, 0.2), (2, 3), **E),
    "hardtanh": Op(lambda L, x: L.nn.functional.hardtanh(x, -0.5, 0.5), (2, 3), kind="distinct", **E),
    "hardsigmoid": Op(lambda L, x: L.nn.functional.hardsigmoid(x * 4), (2, 3), kind="distinct", **E),
    "hardswish": Op(lambda L, x: L.nn.functional.hardswish(x * 4), (2, 3), kind="distinct", **E),
    "hardshrink": Op(lambda L, x: L.nn.functional.hardshrink(x, 0.3), (2, 3), kind="distinct", **E),
    "softshrink": Op(lambda L, x: L.nn.functional.softshrink(x, 0.3), (2, 3), kind="distinct", **E),
    "softplus": Op(lambda L, x: L.nn.functional.softplus(x, beta=2), (2, 3), **E),
    "logsigmoid": Op(lambda L, x: L.nn.functional.logsigmoid(x), (2, 3), **E),
    "threshold": Op(lambda L, x: L.nn.functional.threshold(x, 0.1, 2.0), (2, 3), kind="distinct", **E),
    "elu_": Op(lambda L, x: L.nn.functional.elu(x * 1, 0.7, inplace=True), (2, 3), **E),
    "celu_": Op(lambda L, x: L.nn.functional.celu(x * 1, 0.7, inplace=True), (2, 3), **E),
    "leaky_relu_": Op(lambda L, x: L.nn.functional.leaky_relu(x * 1, 0.2, inplace=True), (2, 3), **E),
    "threshold_": Op(lambda L, x: L.nn.functional.threshold(x * 1, 0.1, 2.0, inplace=True), (2, 3), kind="distinct",
                     **E),
    "relu6": Op(lambda L, x: L.nn.functional.relu6(x * 8), (2, 3), kind="distinct", **E),
    # ---- reductions
    "sum": Op(lambda L, x: x.sum(), (2, 3), **E),
    "sum_dim": Op(lambda L, x: x.sum(1, keepdim=True), (2, 3), **E),
    "nansum": Op(lambda L, x: x.nansum(0), (2, 3), **E),
    "mean": Op(lambda L, x: x.mean(), (2, 3), **E),
    "mean_dim": Op(lambda L, x: x.mean((0, 1)), (2, 3), **E),
    "prod": Op(lambda L, x: x.prod(), (2, 3), **E),
    "prod_dim": Op(lambda L, x: x.prod(1), (2, 3), **E),
    "amax": Op(lambda L, x: x.amax(1), (2, 3), kind="distinct", **E),
    "amin": Op(lambda L, x: x.amin(0), (2, 3), kind="distinct", **E),
    "max": Op(lambda L, x: x.max(), (2, 3), kind="distinct", **E),
    "min": Op(lambda L, x: x.min(), (2, 3), kind="distinct", **E),
    "max_dim": Op(lambda L, x: x.max(1)[0], (2, 3), kind="distinct", **E),
    "min_dim": Op(lambda L, x: x.min(0, keepdim=True)[0], (2, 3), kind="distinct", **E),
    "std": Op(lambda L, x: x.std(1), (2, 3), **E),
    "var": Op(lambda L, x: x.var(), (2, 3), **E),
    "std_mean": Op(lambda L, x: L.std_mean(x, 0), (2, 3), **E),
    "var_mean": Op(lambda L, x: L.var_mean(x, 1, correction=0), (2, 3), **E),
    "logsumexp": Op(lambda L, x: x.logsumexp(1), (2, 3), **E),
    "norm": Op(lambda L, x: L.linalg.vector_norm(x, 3, dim=1), (2, 3), **E),
    "norm2": Op(lambda L, x: x.norm(), (2, 3), **E),
    "median": Op(lambda L, x: x.median(), (2, 3), kind="distinct", **E),
    "median_dim": Op(lambda L, x: x.median(1)[0], (2, 3), kind="distinct", **E),
    "nanmedian": Op(lambda L, x: x.nanmedian(), (2, 3), kind="distinct", **E),
    "nanmedian_dim": Op(lambda L, x: x.nanmedian(0)[0], (2, 3), kind="distinct", **E),
    "mode": Op(lambda L, x: x.mode(1)[0], (2, 3), kind="distinct", **E),
    "kthvalue": Op(lambda L, x: x.kthvalue(2, 1)[0], (2, 3), kind="distinct", **E),
    "cumsum": Op(lambda L, x: x.cumsum(1), (2, 3), **E),
    "cumprod": Op(lambda L, x: x.cumprod(0), (2, 3), **E),
    "logcumsumexp": Op(lambda L, x: x.logcumsumexp(1), (2, 3), **E),
    "cummax": Op(lambda L, x: x.cummax(1)[0], (2, 3), kind="distinct", **E),
    "cummin": Op(lambda L, x: x.cummin(0)[0], (2, 3), kind="distinct", **E),
    "trace": Op(lambda L, x: x.trace(), (3, 3), **E),
    # ---- linear algebra
    "mm": Op(lambda L, a, b: a.mm(b), (2, 3), (3, 2), gg=True),
    "matmul_batched": Op(lambda L, a, b: a @ b, (2, 2, 3), (3, 2), gg=True, bcast=[(1, 2, 3), (2, 3, 2)]),
    "bmm": Op(lambda L, a, b: L.bmm(a, b), (2, 2, 3), (2, 3, 2), gg=True),
    "addmm": Op(lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), (2, 2), (2, 3), (3, 2), gg=True,
                bcast=[(2,), (2, 3), (3, 2)]),
    "baddbmm": Op(lambda L, c, a, b: L.baddbmm(c, a, b, beta=0.5), (2, 2, 2), (2, 2, 3), (2, 3, 2), gg=True),
    "dot": Op(lambda L, a, b: L.dot(a, b), (3,), (3,), gg=True),
    "mv": Op(lambda L, a, b: L.mv(a, b), (2, 3), (3,), gg=True),
    "addmv": Op(lambda L, c, a, b: L.addmv(c, a, b, beta=0.5), (2,), (2, 3), (3,), gg=True),
    "addr": Op(lambda L, c, a, b: L.addr(c, a, b, alpha=2), (2, 3), (2,), (3,), gg=True),
    "addbmm": Op(lambda L, c, a, b: L.addbmm(c, a, b), (2, 2), (2, 2, 3), (2, 3, 2), gg=True),
    "outer": Op(lambda L, a, b: L.outer(a, b), (2,), (3,), gg=True),
    "einsum": Op(lambda L, a, b: L.einsum("ij,jk->ik", a, b), (2, 3), (3, 2), gg=True),
    "tensordot": Op(lambda L, a, b: L.tensordot(a, b, dims=1), (2, 3), (3, 2), gg=True),
    "cross": Op(lambda L, a, b: L.linalg.cross(a, b), (2, 3), (2, 3), gg=True),
    "kron": Op(lambda L, a, b: L.kron(a, b), (2, 2), (2, 1), gg=True),
    "linear": Op(lambda L, x, w, b: L.nn.functional.linear(x, w, b), (2, 3), (4, 3), (4,), gg=True),
    # ---- shape and view ops
    "view": Op(lambda L, x: x.view(3, 2), (2, 3), nc=False),
    "reshape": Op(lambda L, x: x.reshape(6), (2, 3)),
    "transpose": Op(lambda L, x: x.transpose(0, 1) * 1, (2, 3), gg=True),
    "t": Op(lambda L, x: x.t(), (2, 3)),
    "permute": Op(lambda L, x: x.permute(2, 0, 1), (2, 3, 2)),
    "expand": Op(lambda L, x: x.expand(2, 2, 3), (1, 3), gg=True),
    "squeeze": Op(lambda L, x: x.squeeze(), (2, 1, 3)),
    "squeeze_dim": Op(lambda L, x: x.squeeze(1), (2, 1, 3)),
    "squeeze_dims": Op(lambda L, x: x.squeeze((1,)), (2, 1, 3)),
    "unsqueeze": Op(lambda L, x: x.unsqueeze(1), (2, 3)),
    "select": Op(lambda L, x: x[1], (2, 3), gg=True),
    "slice": Op(lambda L, x: x[:, 1:3], (2, 3), gg=True),
    "slice_step": Op(lambda L, x: x[::2], (5, 2), gg=True),
    "narrow_copy": Op(lambda L, x: x.narrow_copy(1, 1, 2), (2, 3), gg=True),
    "diagonal": Op(lambda L, x: x.diagonal(1), (3, 3), gg=True),
    "diag_embed": Op(lambda L, x: L.diag_embed(x), (2, 3), gg=True),
    "as_strided": Op(lambda L, x: x.as_strided((2, 2), (1, 2)), (2, 3), nc=False),
    # overlapping elements: in the view (sliding windows, as longformer's chunking), and in the input too
    "as_strided_overlap": Op(lambda L, x: x.as_strided((3, 3), (1, 1), 1), (2, 3), nc=False),
    "as_strided_overlap_in": Op(lambda L, x: x.expand(2, 3).as_strided((2, 2), (1, 1)), (3,), nc=False),
    "unfold": Op(lambda L, x: x.unfold(1, 2, 1), (2, 4), gg=True),
    "cat": Op(lambda L, a, b: L.cat([a, b], 1), (2, 3), (2, 1), gg=True),
    "stack": Op(lambda L, a, b: L.stack([a, b], 1), (2, 3), (2, 3), gg=True),
    "split": Op(lambda L, x: x.split([1, 2], 1)[1], (2, 3), gg=True),
    "chunk": Op(lambda L, x: x.chunk(2, 0)[0], (4, 3), gg=True),
    "unbind": Op(lambda L, x: x.unbind(1)[2], (2, 3), gg=True),
    "flip": Op(lambda L, x: x.flip(1), (2, 3), gg=True),
    "roll": Op(lambda L, x: x.roll(1, 1), (2, 3), gg=True),
    "rot90": Op(lambda L, x: x.rot90(1, (0, 1)), (2, 3), gg=True),
    "repeat": Op(lambda L, x: x.repeat(2, 1, 2), (2, 3), gg=True),
    "tril": Op(lambda L, x: x.tril(), (3, 3), gg=True),
    "triu": Op(lambda L, x: x.triu(1), (3, 3), gg=True),
    "movedim": Op(lambda L, x: L.movedim(x, 0, 2), (2, 3, 2)),
    "flatten": Op(lambda L, x: x.flatten(), (2, 3)),
    # ---- indexing
    "index": Op(lambda L, x: x[i64(L, [1, 0, 1])], (2, 3), gg=True),
    "index_bool": Op(lambda L, x: x[mask(L)], (2, 3), gg=True),
    "masked_select": Op(lambda L, x: x.masked_select(mask(L)), (2, 3), gg=True),
    "index_put": Op(lambda L, x, v: x.index_put((i64(L, [1, 0]),), v, accumulate=True), (2, 3), (2, 3), gg=True),
    "setitem": Op(lambda L, x, v: _setitem(x, v), (2, 3), (3,), gg=True),
    "index_select": Op(lambda L, x: x.index_select(1, i64(L, [2, 0, 2])), (2, 3), gg=True),
    "gather": Op(lambda L, x: x.gather(1, i64(L, [[0, 2], [1, 1]])), (2, 3), gg=True),
    "take": Op(lambda L, x: x.take(i64(L, [0, 5, 3])), (2, 3), gg=True),
    "take_along_dim": Op(lambda L, x: L.take_along_dim(x, i64(L, [[0], [2]]), 1), (2, 3), gg=True),
    "scatter": Op(lambda L, x, s: x.scatter(1, i64(L, [[0, 2], [1, 0]]), s), (2, 3), (2, 2), gg=True),
    "scatter_value": Op(lambda L, x: x.scatter(1, i64(L, [[0, 2], [1, 0]]), 1.5), (2, 3), gg=True),
    "scatter_add": Op(lambda L, x, s: x.scatter_add(1, i64(L, [[0, 0], [1, 0]]), s), (2, 3), (2, 2), gg=True),
    "scatter_reduce": Op(lambda L, x, s: x.scatter_reduce(1, i64(L, [[0, 0], [1, 0]]), s, "sum"), (2, 3), (2, 2),
                         gg=True),
    "index_add": Op(lambda L, x, s: x.index_add(0, i64(L, [1, 1]), s, alpha=2), (2, 3), (2, 3), gg=True),
    "index_copy": Op(lambda L, x, s: x.index_copy(1, i64(L, [2, 0]), s), (2, 3), (2, 2), gg=True),
    "index_fill": Op(lambda L, x: x.index_fill(1, i64(L, [2]), 1.5), (2, 3), gg=True),
    "index_fill_tensor": Op(lambda L, x, v: x.index_fill(1, i64(L, [2]), v), (2, 3), (), gg=True),
    "masked_scatter": Op(lambda L, x, s: x.masked_scatter(mask(L), s), (2, 3), (2, 3), gg=True),
    "sort": Op(lambda L, x: x.sort(1)[0], (2, 3), kind="distinct", gg=True),
    "sort_stable": Op(lambda L, x: x.sort(dim=0, stable=True, descending=True)[0], (2, 3), kind="distinct", gg=True),
    "topk": Op(lambda L, x: x.topk(2, 1)[0], (2, 3), kind="distinct", gg=True),
    # ---- NN
    "softmax": Op(lambda L, x: x.softmax(1), (2, 3), gg=True),
    "log_softmax": Op(lambda L, x: x.log_softmax(0), (2, 3), gg=True),
    "layer_norm": Op(lambda L, x, w, b: L.nn.functional.layer_norm(x, (3,), w, b), (2, 3), (3,), (3,), gg=True),
    "batch_norm_train": Op(lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64), w, b, training=True), (4, 3, 2), (3,), (3,),
        gg=True),
    "batch_norm_eval": Op(lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.tensor([0.1, -0.2, 0.3], dtype=L.float64), L.tensor([0.5, 1.5, 2.0], dtype=L.float64), w, b),
        (4, 3), (3,), (3,), gg=True),
    "group_norm": Op(lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b), (2, 4, 3), (4,), (4,), gg=True),
    "sdpa_fused": Op(lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
                     (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)),
    "sdpa_math_float_mask": Op(lambda L, q, k, v, m: L.nn.functional.scaled_dot_product_attention(q, k, v, m),
                               (2, 3, 4), (2, 3, 4), (2, 3, 4), (3, 3), gg=True),
    "embedding": Op(lambda L, w: L.nn.functional.embedding(i64(L, [[0, 2], [2, 1]]), w), (3, 2), gg=True),
    "dropout_eval": Op(lambda L, x: L.nn.functional.dropout(x, 0.5, training=False), (2, 3)),
    "conv1d": Op(lambda L, x, w, b: L.nn.functional.conv1d(x, w, b, padding=1), (1, 2, 4), (2, 2, 2), (2,),
                 gg=True),
    "conv2d": Op(lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, stride=1), (1, 2, 3, 3), (2, 2, 2, 2), (2,),
                 gg=True),
    "conv_transpose2d": Op(lambda L, x, w: L.nn.functional.conv_transpose2d(x, w, stride=2), (1, 2, 2, 2),
                           (2, 1, 2, 2), gg=True),
    "conv3d": Op(lambda L, x, w, b: L.nn.functional.conv3d(x, w, b, padding=(1, 0, 0)), (1, 2, 2, 3, 2),
                 (2, 2, 2, 2, 1), (2,), gg=True),
    "conv_transpose3d": Op(lambda L, x, w: L.nn.functional.conv_transpose3d(x, w, stride=(2, 1, 1)), (1, 2, 2, 1, 2),
                           (2, 1, 2, 2, 2), gg=True),
    "fold": Op(lambda L, x: L.nn.functional.fold(x, (3, 3), (2, 2)), (1, 4, 4), gg=True),
    "unfold_im2col": Op(lambda L, x: L.nn.functional.unfold(x, (2, 2)), (1, 1, 3, 3), gg=True),
    "max_pool2d": Op(lambda L, x: L.nn.functional.max_pool2d(x, 2), (1, 1, 4, 4), kind="distinct", gg=True),
    "max_pool1d": Op(lambda L, x: L.nn.functional.max_pool1d(x, 2), (1, 2, 4), kind="distinct", gg=True),
    "avg_pool2d": Op(lambda L, x: L.nn.functional.avg_pool2d(x, 2, 1), (1, 1, 3, 3), gg=True),
    "avg_pool1d": Op(lambda L, x: L.nn.functional.avg_pool1d(x, 2), (1, 2, 4), gg=True),
    "adaptive_avg_pool2d": Op(lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 2), (1, 1, 3, 3), gg=True),
    "adaptive_max_pool2d": Op(lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 2), (1, 1, 3, 3),
                              kind="distinct", gg=True),
    "max_pool3d": Op(lambda L, x: L.nn.functional.max_pool3d(x, 2, 1, dilation=(1, 2, 1)), (1, 2, 3, 4, 3),
                     kind="distinct", gg=True),
    "avg_pool3d": Op(lambda L, x: L.nn.functional.avg_pool3d(x, 2, 1, 1, count_include_pad=False), (1, 1, 3, 2, 3),
                     gg=True),
    "adaptive_avg_pool3d": Op(lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, (2, 1, 2)), (1, 2, 3, 3, 3), gg=True),
    "adaptive_max_pool3d": Op(lambda L, x: L.nn.functional.adaptive_max_pool3d(x, (2, 1, 2)), (2, 3, 3, 3),
                              kind="distinct", gg=True),
    "pad_constant": Op(lambda L, x: L.nn.functional.pad(x, (1, 2)), (2, 3), gg=True),
    "pad_reflect1d": Op(lambda L, x: L.nn.functional.pad(x, (2, 1), mode="reflect"), (1, 2, 4), gg=True),
    "pad_reflect2d": Op(lambda L, x: L.nn.functional.pad(x, (1, 1, 1, 0), mode="reflect"), (1, 1, 3, 3), gg=True),
    "pad_reflect3d": Op(lambda L, x: L.nn.functional.pad(x, (1, 0, 0, 1, 1, 0), mode="reflect"), (1, 1, 2, 2, 2),
                        gg=True),
    "pad_replicate1d": Op(lambda L, x: L.nn.functional.pad(x, (2, 1), mode="replicate"), (1, 2, 3), gg=True),
    "pad_replicate2d": Op(lambda L, x: L.nn.functional.pad(x, (1, 1, 1, 0), mode="replicate"), (1, 1, 2, 3),
                          gg=True),
    "pad_replicate3d": Op(lambda L, x: L.nn.functional.pad(x, (1, 0, 0, 1, 1, 0), mode="replicate"),
                          (1, 1, 2, 2, 2), gg=True),
    "pad_circular": Op(lambda L, x: L.nn.functional.pad(x, (1, 1), mode="circular"), (1, 2, 3), gg=True),
    "interp_nearest1d": Op(lambda L, x: L.nn.functional.interpolate(x, scale_factor=2), (1, 2, 3), gg=True),
    "interp_nearest2d": Op(lambda L, x: L.nn.functional.interpolate(x, size=(3, 4)), (1, 1, 2, 2), gg=True),
    "interp_nearest_exact1d": Op(lambda L, x: L.nn.functional.interpolate(x, size=5, mode="nearest-exact"),
                                 (1, 2, 3), gg=True),
    "interp_nearest_exact2d": Op(lambda L, x: L.nn.functional.interpolate(x, size=(3, 3), mode="nearest-exact"),
                                 (1, 1, 2, 2), gg=True),
    "interp_linear": Op(lambda L, x: L.nn.functional.interpolate(x, size=5, mode="linear"), (1, 2, 3), gg=True),
    "interp_bilinear": Op(lambda L, x: L.nn.functional.interpolate(x, size=(3, 3), mode="bilinear",
                                                                   align_corners=True), (1, 1, 2, 2), gg=True),
    "interp_bicubic": Op(lambda L, x: L.nn.functional.interpolate(x, size=(5, 3), mode="bicubic"), (1, 2, 3, 4),
                         gg=True),
    # antialiased downsampling (the AA kernels; their backward's own backward by gg)
    "interp_bilinear_aa": Op(lambda L, x: L.nn.functional.interpolate(x, size=(2, 3), mode="bilinear",
                                                                      antialias=True), (1, 1, 5, 6), gg=True),
    "interp_bicubic_aa": Op(lambda L, x: L.nn.functional.interpolate(x, size=(3, 2), mode="bicubic",
                                                                     antialias=True), (1, 2, 6, 5), gg=True),
    # ---- losses
    "mse_loss": Op(lambda L, a, b: L.nn.functional.mse_loss(a, b), (2, 3), (2, 3), gg=True),
    "l1_loss": Op(lambda L, a, b: L.nn.functional.l1_loss(a, b), (2, 3), (2, 3), gg=True),
    "huber_loss": Op(lambda L, a, b: L.nn.functional.huber_loss(a, b, delta=0.5), (2, 3), (2, 3), gg=True),
    "smooth_l1_loss": Op(lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, beta=0.5), (2, 3), (2, 3), gg=True),
    "soft_margin_loss": Op(lambda L, a: L.nn.functional.soft_margin_loss(a, L.tensor([[1., -1, 1], [-1, 1, 1]],
                                                                                     dtype=L.float64)), (2, 3),
                           gg=True),
    "bce": Op(lambda L, p, t: L.nn.functional.binary_cross_entropy(p, t), (2, 3), (2, 3), kind="prob", gg=True),
    "bce_logits": Op(lambda L, x, t: L.nn.functional.binary_cross_entropy_with_logits(
        x, t, pos_weight=L.tensor([0.5, 1.0, 2.0], dtype=L.float64)), (2, 3), (2, 3), kind="prob", gg=True),
    "nll_loss": Op(lambda L, x: L.nn.functional.nll_loss(x, i64(L, [2, 0]), L.tensor([0.5, 1.0, 2.0], dtype=L.float64)),
                   (2, 3), gg=True),
    "nll_loss2d": Op(lambda L, x: L.nn.functional.nll_loss(x, i64(L, [[[0, 1], [2, 0]]])), (1, 3, 2, 2), gg=True),
    "cross_entropy": Op(lambda L, x: L.nn.functional.cross_entropy(x, i64(L, [2, 0]), label_smoothing=0.1), (2, 3),
                        gg=True),
    "kl_div": Op(lambda L, a, b: L.nn.functional.kl_div(a, b, reduction="batchmean"), (2, 3), (2, 3), kind="prob",
                 gg=True),
    # ---- LAPACK factorisations (SPD / well-conditioned inputs built from the leaves; eigenvectors and
    # singular vectors normalised to a sign so both libraries' LAPACKs give the same ones)
    "cholesky": Op(lambda L, x: L.linalg.cholesky(spd(L, x)), (3, 3), gg=True),
    "cholesky_upper": Op(lambda L, x: L.linalg.cholesky_ex(spd(L, x), upper=True).L, (2, 3, 3), gg=True),
    "inv": Op(lambda L, x: L.linalg.inv(x + 3 * L.eye(3, dtype=L.float64)), (2, 3, 3), gg=True),
    "det": Op(lambda L, x: L.linalg.det(x), (2, 3, 3), gg=True),
    "slogdet": Op(lambda L, x: L.linalg.slogdet(x), (3, 3), gg=True),
    "logdet": Op(lambda L, x: L.logdet(spd(L, x)), (3, 3), gg=True),
    "solve": Op(lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=L.float64), b), (3, 3), (3, 2),
                bcast=[(2, 3, 3), (3, 2)], gg=True),
    "solve_right": Op(lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=L.float64), b, left=False), (3, 3),
                      (2, 3), gg=True),
    "solve_vector": Op(lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=L.float64), b), (2, 3, 3), (2, 3),
                       gg=True),
    "solve_triangular": Op(lambda L, a, b: L.linalg.solve_triangular(a + 3 * L.eye(3, dtype=L.float64), b,
                                                                     upper=True), (3, 3), (3, 2),
                           bcast=[(2, 3, 3), (3, 2)], gg=True),
    "solve_triangular_lower_right": Op(lambda L, a, b: L.linalg.solve_triangular(
        a + 3 * L.eye(3, dtype=L.float64), b, upper=False, left=False), (3, 3), (2, 3), gg=True),
    "solve_triangular_unit": Op(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
                                (3, 3), (3, 2), gg=True),
    "eigh": Op(lambda L, x: signed_eigh(L, spd(L, x)), (2, 3, 3), gg=True),
    "eigvalsh": Op(lambda L, x: L.linalg.eigvalsh(spd(L, x), UPLO="U"), (3, 3), gg=True),
    "eig": Op(lambda L, x: eig_invariant(L, x), (2, 3, 3), gg=True),
    "eigvals": Op(lambda L, x: (lambda w: (w.real, w.imag))(L.linalg.eigvals(x)), (3, 3), gg=True),
    "svd": Op(lambda L, x: signed_svd(L, x), (4, 3), gg=True),
    "svd_wide": Op(lambda L, x: signed_svd(L, x), (2, 3, 4), gg=True),
    "svd_full_square": Op(lambda L, x: signed_svd(L, x, True), (3, 3), gg=True),
    "svdvals": Op(lambda L, x: L.linalg.svdvals(x), (4, 3), gg=True),
    "qr": Op(lambda L, x: L.linalg.qr(x), (4, 3), gg=True),
    "qr_wide": Op(lambda L, x: L.linalg.qr(x), (2, 3, 4), gg=True),
    "qr_complete_square": Op(lambda L, x: L.linalg.qr(x, mode="complete"), (3, 3), gg=True),
    "lstsq": Op(lambda L, a, b: L.linalg.lstsq(a, b).solution, (4, 3), (4, 2), gg=True, bcast=((2, 4, 3), (1, 4, 2))),
    "lstsq_wide_gelsd": Op(lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd").solution, (2, 3, 4), (2, 3, 2)),
    "lstsq_vector_gels": Op(lambda L, a, b: L.linalg.lstsq(a, b, driver="gels").solution, (2, 4, 3), (2, 4)),
}


def spd(L, x):
    """a symmetric positive-definite matrix from any square x"""
    return x @ x.mT + L.eye(x.shape[-1], dtype=x.dtype)


def signed_eigh(L, a):
    w, v = L.linalg.eigh(a)
    return w, v * v[..., :1, :].sign()


def eig_invariant(L, x):
    """eig's outputs made real and independent of the eigenvectors' phases"""
    w, v = L.linalg.eig(x)
    return w.real, w.imag, (v * v.conj()).real


def signed_svd(L, x, full=False):
    u, s, vh = L.linalg.svd(x, full_matrices=full)
    d = u[..., :1, :].sign()
    return u * d, s, vh * d.mT


def _setitem(x, v):
    y = x * 1
    y[1] = v
    return y


# names the C core can record that no entry produces, each with why
SKIP = {
    "DivBackward1": "only inside a composite loss (renamed as PyTorch's C++ overload); no public entry reaches it alone",
    "Unique2Backward0": "unique: PyTorch has no derivative either (raises 'not implemented')",
    "UniqueDimBackward0": "unique(dim=): PyTorch has no derivative either",
    "UniqueConsecutiveBackward0": "unique_consecutive: PyTorch has no derivative either",
    "GeqrfBackward0": "geqrf: PyTorch has no derivative either (its node raises; tests/core/test_linalg_ldl_qr.py)",
    "LinalgLuFactorExBackward0": "lu_factor/lu: recorded, but its derivative is not implemented yet (raises)",
    "LinalgLuSolveBackward0": "lu_solve: recorded, but its derivative is not implemented yet (raises)",
}

GG_SKIP = {  # no gradgradcheck (and no second-order comparison with PyTorch), with why
    "to_dtype": "float32 round trip: finite differences cannot reach gradcheck's float64 tolerance",
    "hardsigmoid": "PyTorch has no double backward for it either",
    "digamma": "its derivative, trigamma (polygamma(1, x)), has none yet: it comes with polygamma(n, x)",
}
# known differences from PyTorch, run as strict xfails so they are seen (and noticed when fixed)
KNOWN = {
    ("to_dtype", "gradcheck"): "float32 round trip: finite differences cannot reach float64 tolerance",
    ("nll_loss2d-noncontig", "torch"): "PyTorch itself raises 'grad_input must be contiguous' here",
}


def known(key):
    if key in KNOWN:
        pytest.xfail(KNOWN[key])


# grad_fn names that differ from PyTorch's, with why (values and gradients are still compared)
NAME_SKIP = {
    "kron": "kron ends in a view (ViewBackward0), PyTorch's in _unsafe_view",
}


def _values(kind, shape, rng):
    n = int(np.prod(shape)) if shape else 1
    if kind == "distinct":  # no ties (within and across leaves), away from kinks (max/sort/clamp...)
        a = rng.permutation(n) * 0.37 - n * 0.17 + rng.uniform(0.01, 0.3)
    elif kind == "pos":
        a = rng.uniform(0.5, 1.5, n)
    elif kind == "unit":
        a = rng.uniform(-0.9, 0.9, n)
    elif kind == "gt1":
        a = rng.uniform(1.2, 2.5, n)
    elif kind == "prob":
        a = rng.uniform(0.2, 0.8, n)
    else:
        a = rng.standard_normal(n)
    return a.reshape(shape)


def make(L, op, shapes, variant="contig", seed=0):
    """Leaves of L (float64, requires_grad) with the same values in both libraries; the
    non-contiguous variant lays each out transposed (ndim >= 2) or strided (1-d)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = _values(op.kind, s, rng)
        if variant == "noncontig" and len(s) >= 2:
            t = L.tensor(np.ascontiguousarray(a.T).tolist(), dtype=L.float64).permute(*reversed(range(len(s))))
        elif variant == "noncontig" and len(s) == 1:
            t = L.tensor(np.repeat(a, 2).tolist(), dtype=L.float64)[::2]
        else:
            t = L.tensor(a.tolist(), dtype=L.float64)
        out.append(t.detach().requires_grad_())
    return out


def outputs(r):
    """the differentiable outputs, as float64 (gradcheck's finite differences need it)"""
    return tuple(o.double() for o in (r if isinstance(r, tuple) else (r,)) if o.is_floating_point())


CASES = [(n, "contig") for n in OPS] + [(n, "noncontig") for n, o in OPS.items() if o.nc] + \
        [(n, "bcast") for n, o in OPS.items() if o.bcast]


@pytest.mark.parametrize("name,variant", CASES, ids=[f"{n}-{v}" for n, v in CASES])
def test_gradcheck(name, variant):
    op = OPS[name]
    known((name, "gradcheck"))
    leaves = make(mt, op, op.bcast if variant == "bcast" else op.shapes, "contig" if variant == "bcast" else variant)
    assert mt.autograd.gradcheck(lambda *xs: outputs(op.fn(mt, *xs)), leaves)


GG = [n for n, o in OPS.items() if o.gg and n not in GG_SKIP]


@pytest.mark.parametrize("name", GG)
def test_gradgradcheck(name):
    op = OPS[name]
    leaves = make(mt, op, op.shapes, "noncontig")
    assert mt.autograd.gradgradcheck(lambda *xs: outputs(op.fn(mt, *xs)), leaves)


def _grad_fns(outs):
    return [type(o.grad_fn).__name__ for o in outs]


@pytest.mark.parametrize("name,variant", CASES, ids=[f"{n}-{v}" for n, v in CASES])
def test_grads_match_torch(name, variant):
    op = OPS[name]
    known((name, "torch")), known((f"{name}-{variant}", "torch"))
    shapes = op.bcast if variant == "bcast" else op.shapes
    v = "contig" if variant == "bcast" else variant
    lm, lt = make(mt, op, shapes, v), make(torch, op, shapes, v)
    om, ot = outputs(op.fn(mt, *lm)), outputs(op.fn(torch, *lt))
    if variant != "bcast" and name not in NAME_SKIP:  # matmul's broadcast composite differs inside
        assert _grad_fns(om) == _grad_fns(ot)
    rng = np.random.default_rng(7)
    gos = [rng.standard_normal(tuple(o.shape)).tolist() for o in ot]
    second = op.gg and name not in GG_SKIP
    gm = mt.autograd.grad(om, lm, [mt.tensor(g, dtype=mt.float64) for g in gos], allow_unused=True,
                          create_graph=second)
    gt = torch.autograd.grad(ot, lt, [torch.tensor(g, dtype=torch.float64) for g in gos], allow_unused=True,
                             create_graph=second)
    for a, b in zip(om, ot):
        close(a, b)
    for a, b in zip(gm, gt):
        assert (a is None) == (b is None)
        if b is not None:
            close(a, b)
    if second:  # second order: d/dleaves of sum(grad * w), against PyTorch's
        w = [rng.standard_normal(tuple(b.shape)).tolist() if b is not None else None for b in gt]
        sm = [(a * mt.tensor(v, dtype=mt.float64)).sum() for a, v in zip(gm, w) if a is not None and a.requires_grad]
        st = sum((b * torch.tensor(v, dtype=torch.float64)).sum() for b, v in zip(gt, w) if b is not None)
        ht = torch.autograd.grad(st, lt, allow_unused=True, materialize_grads=True) if st.requires_grad else \
            [torch.zeros_like(x) for x in lt]
        if not sm:  # our backward did not depend on the leaves: PyTorch's second derivative is zero then
            for b in ht:
                assert not b.abs().max().item()
            return
        hm = mt.autograd.grad(sum(sm), lm, allow_unused=True, materialize_grads=True)
        for a, b in zip(hm, ht):
            close(a, b)


def close(a, b):
    if isinstance(b, torch.Tensor) and b._is_zerotensor():
        b = torch.zeros(b.shape, dtype=b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    np.testing.assert_allclose(np.array(a.detach().tolist()), np.array(b.detach().tolist()), rtol=1e-9, atol=1e-12)


# ---- completeness

def _c_node_names():
    root = pathlib.Path(__file__).resolve().parents[2] / "csrc"
    names = set()
    for p in root.rglob("*.c"):
        names.update(re.findall(r'"([A-Za-z0-9]+Backward[0-9]+)"', p.read_text()))
    return names


def _graph_names(tensors):
    seen, names, todo = set(), set(), [t.grad_fn for t in tensors if t is not None and t.grad_fn is not None]
    alive = []  # the visited node objects stay alive, so their ids are not reused
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        alive.append(n)
        names.add(type(n).__name__)
        todo.extend(f for f, _ in n.next_functions if f is not None)
    return names


# ops whose node names only appear in-place or through a second overload, run for completeness
EXTRA = {
    "in_place": lambda L, x: ((x * 1).mul_(2).add_(1).clamp_(-1, 1).squeeze_(),),
    "inplace_views": lambda L, x: (_inplace_views(x),),
    "inplace_views2": lambda L, x: ((x * 1).transpose_(0, 1).squeeze_((0,)).as_strided_((2,), (1,)),),
}


def _inplace_views(x):
    y = (x * 1).unsqueeze(0)
    y.squeeze_(0)
    y.t_()
    y.unsqueeze_(0)
    y.squeeze_()
    return y


def test_every_node_has_an_entry():
    seen = set()
    for name, op in OPS.items():
        leaves = make(mt, op, op.shapes)
        outs = outputs(op.fn(mt, *leaves))
        seen |= _graph_names(outs)
        gos = [mt.ones_like(o).requires_grad_() for o in outs]  # so every backward node records
        gs = mt.autograd.grad(outs, leaves, gos, create_graph=True, allow_unused=True)
        seen |= _graph_names(gs)
    for fn in EXTRA.values():
        seen |= _graph_names(fn(mt, mt.ones(2, 1, dtype=mt.float64, requires_grad=True)))
    missing = sorted(_c_node_names() - seen - set(SKIP))
    assert not missing, f"differentiable ops with no entry in OPS (or SKIP with a reason): {missing}"
    stale = sorted(set(SKIP) & seen)
    assert not stale, f"SKIP lists nodes that an entry produces: {stale}"
