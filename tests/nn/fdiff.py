"""Differential-test helpers for nn.functional: tensor arguments built the same way in both
libraries, outputs/gradients compared at PyTorch's tolerances, errors compared by type and text."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
import mindtorch_v2.nn.functional as MF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float64": (1e-7, 1e-7), "float32": (1e-5, 1e-5), "bfloat16": (2e-2, 2e-2), "float16": (2e-3, 2e-3)}


class Arg:
    """One tensor argument: its values, dtype, whether it requires grad, whether it is passed non-contiguous."""

    def __init__(self, a, dtype=None, grad=False, noncontig=False):
        self.a = np.asarray(a)
        self.dtype = dtype or ("float64" if self.a.dtype.kind == "f" else "int64" if self.a.dtype.kind in "iu"
                               else "bool")
        self.grad, self.noncontig = grad, noncontig

    def make(self, L, compute=None):
        """compute: build the tensor in dtype, then convert it to this dtype (same values, wider type)"""
        dt = getattr(L, self.dtype)
        a = self.a
        if compute and self.dtype != compute and self.a.dtype.kind == "f":
            a = np.array(self.make(L).detach().float().tolist()).reshape(self.a.shape)
            return Arg(a, compute, self.grad, self.noncontig).make(L)
        if self.noncontig:  # same values through a strided view
            t = L.tensor(np.stack([a, a], -1).reshape(-1).tolist(), dtype=dt).reshape(a.shape + (2,))[..., 1]
        else:
            t = L.tensor(a.reshape(-1).tolist(), dtype=dt).reshape(a.shape)
        if self.grad:
            t = t.detach().requires_grad_()
        return t


def F(L):
    return MF if L is mt else TF


def to_np(x):
    if x.dtype in (torch.bfloat16, torch.float16) if isinstance(x, torch.Tensor) else str(x.dtype) in (
            "torch.bfloat16", "torch.float16"):
        x = x.float()
    if isinstance(x, torch.Tensor):
        x = x.detach()
    return np.array(x.tolist(), dtype=float).reshape(tuple(x.shape))


def close(m, t, dtype):
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    assert tuple(m.shape) == tuple(t.shape), (tuple(m.shape), tuple(t.shape))
    rtol, atol = TOL.get(dtype, (0, 0))
    np.testing.assert_allclose(to_np(m), to_np(t), rtol=rtol, atol=atol, equal_nan=True)


def diff(fn, *args, dtype="float64", grad=True, seed=1, names=True, ref=None):
    """Run fn(L, *tensors) in both libraries; compare outputs, grad_fn names (unless names=False: a
    composition of PyTorch's native kernel) and input gradients. ref="float32": PyTorch computes from
    the same values in float32 and its results are rounded to dtype once (for a low-precision kernel
    whose PyTorch rounding differs between CPUs)."""
    ms = [a.make(mt) if isinstance(a, Arg) else a for a in args]
    ts = [a.make(torch, ref) if isinstance(a, Arg) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rt = fn(torch, *ts)
        rm = fn(mt, *ms)
    outs_t = rt if isinstance(rt, tuple) else (rt,)
    outs_m = rm if isinstance(rm, tuple) else (rm,)
    rounded = (lambda t: t.to(getattr(torch, dtype)) if t.dtype.is_floating_point else t) if ref else (lambda t: t)
    for m, t in zip(outs_m, outs_t):
        close(m, rounded(t), dtype if t.dtype.is_floating_point else "int")
    t0, m0 = outs_t[0], outs_m[0]
    assert (m0.grad_fn is None) == (t0.grad_fn is None), (m0.grad_fn, t0.grad_fn)
    if t0.grad_fn is None or not grad:
        return rm, rt
    assert not names or type(m0.grad_fn).__name__ == type(t0.grad_fn).__name__, (m0.grad_fn, t0.grad_fn)
    go = np.random.default_rng(seed).standard_normal(tuple(t0.shape))
    mgo = mt.tensor(go.reshape(-1).tolist(), dtype=getattr(mt, str(m0.dtype).split(".")[1])).reshape(go.shape)
    t0.backward(torch.tensor(mgo.to(mt.float64).tolist(), dtype=t0.dtype).reshape(go.shape))
    m0.backward(mgo)
    for a, m, t in zip(args, ms, ts):
        if isinstance(a, Arg) and a.grad:
            assert (m.grad is None) == (t.grad is None)
            if t.grad is not None:
                close(m.grad, rounded(t.grad), dtype)
    return rm, rt


def errors_match(fn, *args):
    ms = [a.make(mt) if isinstance(a, Arg) else a for a in args]
    ts = [a.make(torch) if isinstance(a, Arg) else a for a in args]
    with pytest.raises(Exception) as et:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(torch, *ts)
    with pytest.raises(Exception) as em:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(mt, *ms)
    te, me = et.value, em.value
    base = next(k for k in type(te).__mro__ if k.__module__ == "builtins")
    assert isinstance(me, base), (type(me), type(te), str(me), str(te))
    assert str(me) == str(te), (str(me), str(te))


def rnd(*shape, seed=0, lo=None, hi=None):
    r = np.random.default_rng(seed)
    if lo is not None:
        return r.uniform(lo, hi, shape)
    return r.standard_normal(shape)
