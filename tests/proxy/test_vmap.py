"""torch.vmap: results against PyTorch (live), the vectorised path for mask builders, the
per-sample fallback, and PyTorch's argument errors."""
import numpy as np
import pytest

import mindtorch_v2 as mt
import mindtorch_v2._vmap as V

torch = pytest.importorskip("torch")


def same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_array_equal(np.array(a.tolist()), np.array(b.tolist()))


@pytest.fixture
def no_fallback(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("vmap fell back to the per-sample loop")
    monkeypatch.setattr(V, "_per_sample", boom)


# ---- the nested mask builders transformers' masking_utils runs -------------------------

def causal(b, h, q, kv):
    return kv <= q


def sliding(w):
    return lambda b, h, q, kv: kv > q - w


def padding(pm):
    return lambda b, h, q, kv: pm[b, kv]


def packed(ps):
    return lambda b, h, q, kv: ps[b, q] == ps[b, kv]


def chunked(lp, size):
    return lambda b, h, q, kv: (kv - lp[b]) // size == (q - lp[b]) // size


def offsets(fn, qo, ko):
    return lambda b, h, q, kv: fn(b, h, q + qo, kv + ko)


def and_masks(lib, *fns):
    def f(b, h, q, kv):
        r = q.new_ones((), dtype=lib.bool)
        for fn in fns:
            r = r & fn(b, h, q, kv).to(r.device)
        return r
    return f


def or_masks(lib, *fns):
    def f(b, h, q, kv):
        r = q.new_zeros((), dtype=lib.bool)
        for fn in fns:
            r = r | fn(b, h, q, kv).to(r.device)
        return r
    return f


def build(lib, fn, B=2, Q=4, KV=6, q0=2):
    for dims in [(None, None, None, 0), (None, None, 0, None), (None, 0, None, None), (0, None, None, None)]:
        fn = lib.vmap(fn, in_dims=dims, out_dims=0)
    return fn(lib.arange(B), lib.arange(1), lib.arange(Q) + q0, lib.arange(KV))


PAD = [[1, 1, 1, 0, 0, 1], [0, 1, 1, 1, 1, 1]]
SEQ = [[0, 0, 1, 1, 1, 2], [0, 0, 0, 0, 1, 1]]


def mask_cases(lib):
    pm = lib.tensor(PAD, dtype=lib.bool)
    ps = lib.tensor(SEQ)
    lp = lib.tensor([1, 0])
    return {
        "causal": causal,
        "sliding": and_masks(lib, sliding(2), causal),
        "padding": and_masks(lib, causal, padding(pm)),
        "packed": and_masks(lib, causal, packed(ps)),
        "chunked": and_masks(lib, chunked(lp, 2), causal),
        "or": or_masks(lib, sliding(1), padding(pm)),
        "offsets": offsets(and_masks(lib, causal, padding(pm)), -2, 0),
    }


@pytest.mark.parametrize("name", list(mask_cases(mt)))
def test_mask_builders_vectorised_like_pytorch(name, no_fallback):
    same(build(mt, mask_cases(mt)[name]), build(torch, mask_cases(torch)[name]))


def test_causal_mask_is_expanded_like_pytorch(no_fallback):
    a, b = build(mt, causal), build(torch, causal)
    assert a.stride() == b.stride()


# ---- general vmap semantics ------------------------------------------------------------

def test_in_dims_out_dims(no_fallback):
    x = np.arange(24.0).reshape(2, 3, 4)
    y = np.arange(4.0) * 0.5
    for lib in (mt, torch):
        X, Y = lib.tensor(x), lib.tensor(y)
        out = [lib.vmap(lambda a, b: a * b + 1, in_dims=(1, None))(X, Y),
               lib.vmap(lambda a, b: a - b, in_dims=(2, 0), out_dims=1)(X, Y),
               lib.vmap(lambda a: (a * 2 - 1, a < 3.0), in_dims=-1, out_dims=(0, -1))(X)]
        globals().setdefault("_io", {})[lib.__name__] = out
    r = globals()["_io"]
    same(r["mindtorch_v2"][0], r["torch"][0])
    same(r["mindtorch_v2"][1], r["torch"][1])
    for a, b in zip(r["mindtorch_v2"][2], r["torch"][2]):
        same(a, b)


def test_pytree_inputs_and_outputs(no_fallback):
    for lib in (mt, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        out = lib.vmap(lambda d: {"s": d["a"] + d["b"][0], "p": (d["a"] * 2,)},
                       in_dims=({"a": 0, "b": (None,)},))({"a": x, "b": (lib.tensor(10.0),)})
        globals().setdefault("_pt", {})[lib.__name__] = out
    m, t = globals()["_pt"]["mindtorch_v2"], globals()["_pt"]["torch"]
    same(m["s"], t["s"])
    same(m["p"][0], t["p"][0])


def test_promotion_follows_per_sample_rules(no_fallback):
    # a per-sample 0-dim float64 tensor keeps 0-dim priority against a dimensioned float32 one
    for lib in (mt, torch):
        x = lib.tensor([1.5, 2.5], dtype=lib.float64)
        w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float32)
        globals().setdefault("_pr", {})[lib.__name__] = (lib.vmap(lambda a: a + w)(x), lib.vmap(lambda a: a < w)(x))
    for a, b in zip(globals()["_pr"]["mindtorch_v2"], globals()["_pr"]["torch"]):
        same(a, b)


def test_unbatched_output_is_expanded(no_fallback):
    for lib in (mt, torch):
        c = lib.tensor([7, 8])
        globals().setdefault("_ub", {})[lib.__name__] = lib.vmap(lambda a: c)(lib.arange(3))
    same(globals()["_ub"]["mindtorch_v2"], globals()["_ub"]["torch"])
    assert globals()["_ub"]["mindtorch_v2"].stride() == (0, 1)
    # out_dims=1: the batch dim inserted at 1 (PyTorch 2.13 expands without inserting it and raises)
    assert mt.vmap(lambda a: mt.tensor([7, 8]), out_dims=1)(mt.arange(3)).tolist() == [[7, 7, 7], [8, 8, 8]]


def test_basic_indexing_of_batched(no_fallback):
    for lib in (mt, torch):
        x = lib.arange(24).reshape(2, 3, 4)
        globals().setdefault("_bi", {})[lib.__name__] = lib.vmap(lambda a: a[1:, None, ..., 0] * a[0, 2])(x)
    same(globals()["_bi"]["mindtorch_v2"], globals()["_bi"]["torch"])


def test_fallback_gives_pytorch_results():
    calls = []

    def f(a, b):
        calls.append(1)
        return (a * b).sum() + a.amax()  # reductions have no batching rule: per-sample

    for lib in (mt, torch):
        x = lib.arange(12.0).reshape(3, 4)
        y = lib.arange(2.0)
        globals().setdefault("_fb", {})[lib.__name__] = lib.vmap(lib.vmap(f, in_dims=(0, None)), in_dims=(1, None))(
            x.reshape(3, 4, 1).expand(3, 4, 2), y)
    same(globals()["_fb"]["mindtorch_v2"], globals()["_fb"]["torch"])


def test_fallback_nested_mask_with_reduction():
    def f(lib):
        pm = lib.tensor(PAD, dtype=lib.bool)
        return lambda b, h, q, kv: (kv <= q) & pm[b].any()
    same(build(mt, f(mt)), build(torch, f(torch)))


def test_errors_like_pytorch():
    cases = [
        (lambda lib: lib.vmap(lambda a: a, in_dims=[0])(lib.ones(2))),
        (lambda lib: lib.vmap(lambda a: a)()),
        (lambda lib: lib.vmap(lambda a, b: a, in_dims=(0, 0))(lib.ones(2), 3)),
        (lambda lib: lib.vmap(lambda a: a, in_dims=1)(lib.ones(2))),
        (lambda lib: lib.vmap(lambda a, b: a + b)(lib.ones(2), lib.ones(3))),
        (lambda lib: lib.vmap(lambda a: a, in_dims=None)(lib.ones(2))),
        (lambda lib: lib.vmap(lambda a: 3)(lib.ones(2))),
        (lambda lib: lib.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(lib.ones(2))),
        (lambda lib: lib.vmap(lambda a: a, out_dims="x")(lib.ones(2))),
    ]
    for case in cases:
        with pytest.raises(ValueError) as e1:
            case(mt)
        with pytest.raises(ValueError) as e2:
            case(torch)
        assert str(e1.value) == str(e2.value)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        mt.vmap(lambda a: a, randomness="x")


def test_func_vmap_is_vmap():
    import mindtorch_v2.func
    assert mindtorch_v2.func.vmap is mt.vmap
