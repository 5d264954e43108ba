"""Module differential helper: build the same module in mindtorch_v2 and live PyTorch from the same seed,
run the same inputs, compare parameters, outputs and every gradient (inputs and parameters)."""
import numpy as np

import mindtorch_v2 as mt

TOL = {"float32": (2e-5, 2e-5), "bfloat16": (3e-2, 3e-2), "float64": (1e-10, 1e-10)}


def arr(x):
    x = x.detach()
    if str(x.dtype) in ("torch.bfloat16", "torch.float16"):
        x = x.float()
    return np.array(x.tolist(), dtype=float).reshape(tuple(x.shape))


def build(L, ctor, seed=0, dtype="float32"):
    """ctor(L) under manual_seed(seed), then cast: same init stream in both libraries."""
    L.manual_seed(seed)
    m = ctor(L)
    return m.to(getattr(L, dtype)) if dtype != "float32" else m


def tensor(L, a, dtype="float32", grad=False):
    t = L.tensor(np.asarray(a).tolist(), dtype=getattr(L, dtype))
    return t.requires_grad_() if grad else t


def randn(shape, seed=0):
    return np.random.RandomState(seed).randn(*shape)


def flat(out):
    """Tensors of a (nested) output, in order; PackedSequence counts as its data."""
    if isinstance(out, (tuple, list)):
        if hasattr(out, "batch_sizes"):
            return [out.data]
        return [t for o in out for t in flat(o)]
    return [out] if out is not None else []


def close(a, b, dtype, what=""):
    assert tuple(a.shape) == tuple(b.shape), (what, tuple(a.shape), tuple(b.shape))
    assert str(a.dtype) == str(b.dtype), (what, a.dtype, b.dtype)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(arr(a), arr(b), rtol=rtol, atol=atol, err_msg=what)


def compare(torch, ctor, inputs, fwd=None, dtype="float32", seed=0, grad=True, train=True):
    """inputs: list of numpy arrays (float: passed with requires_grad) or callables L -> value.
    Returns (mindtorch module, torch module, mindtorch outputs, torch outputs)."""
    fwd = fwd or (lambda mod, *xs: mod(*xs))
    mods, outs, ins = [], [], []
    for L in (mt, torch):
        m = build(L, ctor, seed, dtype)
        m.train(train)
        xs = [a(L) if callable(a) else tensor(L, a, dtype, grad=grad) for a in inputs]
        mods.append(m), ins.append(xs), outs.append(fwd(m, *xs))
    pm, pt = dict(mods[0].named_parameters()), dict(mods[1].named_parameters())
    assert list(pm) == list(pt)
    for k in pm:
        close(pm[k], pt[k], dtype, "param " + k)
    fm, ft = flat(outs[0]), flat(outs[1])
    assert len(fm) == len(ft)
    for i, (a, b) in enumerate(zip(fm, ft)):
        close(a, b, dtype, f"output {i}")
    if not grad:
        return mods[0], mods[1], outs[0], outs[1]
    losses = []
    for L, f in ((mt, fm), (torch, ft)):
        diff = [o for o in f if o.requires_grad]
        # weight each output by fixed values so no gradient is a symmetric sum
        losses.append(sum((o.float() * tensor(L, randn(o.shape, 7 + i), "float32")).sum() for i, o in enumerate(diff)))
    for loss in losses:
        loss.backward()
    for i, (a, b) in enumerate(zip(ins[0], ins[1])):
        if getattr(b, "grad", None) is not None:
            close(a.grad, b.grad, dtype, f"grad input {i}")
    for k in pm:
        if pt[k].grad is not None:
            close(pm[k].grad, pt[k].grad, dtype, "grad " + k)
    return mods[0], mods[1], outs[0], outs[1]
