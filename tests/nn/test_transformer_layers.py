"""MultiheadAttention, F.multi_head_attention_forward and the Transformer layers against live PyTorch.

Each case builds the module in both libraries, copies PyTorch's state_dict into mindtorch_v2, runs
the same inputs and compares outputs, input gradients and parameter gradients."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

def _mt(t):
    """A mindtorch_v2 copy of a torch tensor (any dtype, bfloat16 through float32)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return mt.tensor(t.float().numpy()).to(mt.bfloat16)
    return mt.tensor(t.numpy())


def _np(t):
    return t if isinstance(t, np.ndarray) else t.detach().float().numpy()


def _close(a, b, dtype="float32", what=""):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, what
    if dtype == "bfloat16":
        # bfloat16 rounds every composed step: compare against the value scale, a few bf16 ulps
        # (gradients more: LayerNorm's bfloat16 backward is composed of rounded steps, see test_basic_layers)
        scale = (0.03 if "grad" in what else 0.02) * max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=0, atol=scale, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5 * max(1.0, float(np.abs(b).max())), err_msg=what)


def _pair_modules(name, *args, dtype="float32", seed=0, **kwargs):
    """The torch module (seeded) and a mindtorch_v2 module holding the same weights."""
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mb = getattr(torch.nn, name)(*args, dtype=getattr(torch, dtype), **kwargs)
        ma = getattr(mt.nn, name)(*args, dtype=getattr(mt, dtype), **kwargs)
    assert list(ma.state_dict()) == list(mb.state_dict())
    missing = ma.load_state_dict({k: _mt(v) for k, v in mb.state_dict().items()})
    assert not missing.missing_keys and not missing.unexpected_keys
    return ma, mb


def _inputs(*shapes, dtype="float32", seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        v = rng.standard_normal(s).astype("float32")
        out.append((mt.tensor(v, dtype=getattr(mt, dtype)).requires_grad_(),
                    torch.tensor(v, dtype=getattr(torch, dtype)).requires_grad_()))
    return out


def _backward(ya, yb, seed=3):
    g = np.random.default_rng(seed).standard_normal(tuple(yb.shape)).astype("float32")
    ya.backward(mt.tensor(g, dtype=ya.dtype))
    yb.backward(torch.tensor(g, dtype=yb.dtype))


def _check_grads(ma, mb, inputs, dtype="float32"):
    for i, (a, b) in enumerate(inputs):
        if b.grad is not None:
            _close(a.grad, b.grad, dtype, f"input {i} grad")
    pb = dict(mb.named_parameters())
    for name, p in ma.named_parameters():
        if pb[name].grad is None:
            assert p.grad is None, name
        else:
            _close(p.grad, pb[name].grad, dtype, f"{name}.grad")


def _mask(kind, shape, seed=5):
    """(mt, torch) masks: 'bool' True = masked, 'float' additive; never a fully masked row."""
    rng = np.random.default_rng(seed)
    if kind == "bool":
        m = rng.random(shape) < 0.3
        m[..., 0] = False
    else:
        m = rng.standard_normal(shape).astype("float32")
    return mt.tensor(m), torch.tensor(m)


# ---- MultiheadAttention ------------------------------------------------------------------------

MHA_MASKS = [(None, None), ("bool", None), ("float", None), (None, "bool2"), (None, "float2"), (None, "bool3"),
             ("bool", "bool2"), ("float", "float3"), ("bool", "float2")]


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("kpm,am", MHA_MASKS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_masks(need_weights, average, kpm, am, batch_first):
    E, H, L, S, N = 8, 2, 4, 5, 3
    ma, mb = _pair_modules("MultiheadAttention", E, H, batch_first=batch_first)
    (qa, qb), (ka, kb) = _inputs((N, L, E) if batch_first else (L, N, E), (N, S, E) if batch_first else (S, N, E))
    kw_a, kw_b = {}, {}
    if kpm:
        kw_a["key_padding_mask"], kw_b["key_padding_mask"] = _mask(kpm, (N, S))
    if am:
        kind, nd = am[:-1], int(am[-1])
        kw_a["attn_mask"], kw_b["attn_mask"] = _mask(kind, (L, S) if nd == 2 else (N * H, L, S), seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mismatched mask types warn in both
        oa, wa = ma(qa, ka, ka, need_weights=need_weights, average_attn_weights=average, **kw_a)
        ob, wb = mb(qb, kb, kb, need_weights=need_weights, average_attn_weights=average, **kw_b)
    _close(oa, ob)
    if need_weights:
        _close(wa, wb)
    else:
        assert wa is None and wb is None
    _backward(oa, ob)
    _check_grads(ma, mb, [(qa, qb), (ka, kb)])


@pytest.mark.parametrize("kwargs", [{"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                    {"add_bias_kv": True, "add_zero_attn": True}, {"kdim": 6, "vdim": 3},
                                    {"kdim": 6, "vdim": 3, "bias": False}], ids=str)
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_variants(kwargs, need_weights):
    E, H, L, S, N = 8, 4, 3, 5, 2
    ma, mb = _pair_modules("MultiheadAttention", E, H, **kwargs)
    (qa, qb), (ka, kb), (va, vb) = _inputs((L, N, E), (S, N, kwargs.get("kdim", E)), (S, N, kwargs.get("vdim", E)))
    kpa, kpb = _mask("float", (N, S))
    ama, amb = _mask("float", (L, S))
    oa, wa = ma(qa, ka, va, key_padding_mask=kpa, attn_mask=ama, need_weights=need_weights)
    ob, wb = mb(qb, kb, vb, key_padding_mask=kpb, attn_mask=amb, need_weights=need_weights)
    _close(oa, ob)
    if need_weights:
        _close(wa, wb)
    _backward(oa, ob)
    _check_grads(ma, mb, [(qa, qb), (ka, kb), (va, vb)])


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_mha_self_attention_unbatched(need_weights, dtype):
    E, H, L = 8, 2, 5
    ma, mb = _pair_modules("MultiheadAttention", E, H, dtype=dtype)
    ((xa, xb),) = _inputs((L, E), dtype=dtype)
    kpa, kpb = _mask("bool", (L,))
    oa, wa = ma(xa, xa, xa, key_padding_mask=kpa, need_weights=need_weights, average_attn_weights=False)
    ob, wb = mb(xb, xb, xb, key_padding_mask=kpb, need_weights=need_weights, average_attn_weights=False)
    _close(oa, ob, dtype)
    if need_weights:
        assert tuple(wa.shape) == tuple(wb.shape) == (H, L, L)
        _close(wa, wb, dtype)
    _backward(oa, ob)
    _check_grads(ma, mb, [(xa, xb)], dtype)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_kpm", [False, True])
def test_mha_is_causal(need_weights, with_kpm):
    E, H, L, N = 8, 2, 6, 2
    ma, mb = _pair_modules("MultiheadAttention", E, H)
    ((xa, xb),) = _inputs((L, N, E))
    ca = mt.nn.Transformer.generate_square_subsequent_mask(L)
    cb = torch.nn.Transformer.generate_square_subsequent_mask(L)
    kw_a, kw_b = {}, {}
    if with_kpm:
        kw_a["key_padding_mask"], kw_b["key_padding_mask"] = _mask("bool", (N, L))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bool key_padding_mask with a float attn_mask warns in both
        oa, _ = ma(xa, xa, xa, attn_mask=ca, is_causal=True, need_weights=need_weights, **kw_a)
        ob, _ = mb(xb, xb, xb, attn_mask=cb, is_causal=True, need_weights=need_weights, **kw_b)
    _close(oa, ob)
    _backward(oa, ob)
    _check_grads(ma, mb, [(xa, xb)])


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_rows(need_weights):
    """A key_padding_mask hiding every key: NaN rows with need_weights (softmax), zeros through SDPA."""
    E, H, L, N = 4, 2, 3, 2
    ma, mb = _pair_modules("MultiheadAttention", E, H)
    ((xa, xb),) = _inputs((L, N, E))
    kp = np.zeros((N, L), dtype=bool)
    kp[1] = True
    oa, _ = ma(xa, xa, xa, key_padding_mask=mt.tensor(kp), need_weights=need_weights)
    ob, _ = mb(xb, xb, xb, key_padding_mask=torch.tensor(kp), need_weights=need_weights)
    np.testing.assert_array_equal(np.isnan(_np(oa)), np.isnan(_np(ob)))
    _close(mt.nan_to_num(oa), torch.nan_to_num(ob))


def test_mha_functional_separate_weights_and_static_kv():
    E, H, L, S, N = 6, 3, 4, 5, 2
    rng = np.random.default_rng(7)

    def t(*s):
        v = rng.standard_normal(s).astype("float32")
        return mt.tensor(v), torch.tensor(v)
    (q_a, q_b), (k_a, k_b), (wq_a, wq_b), (wk_a, wk_b), (wv_a, wv_b), (b_a, b_b), (ow_a, ow_b) = (
        t(L, N, E), t(S, N, E), t(E, E), t(E, E), t(E, E), t(3 * E), t(E, E))
    (sk_a, sk_b), (sv_a, sv_b) = t(N * H, S + 1, E // H), t(N * H, S + 1, E // H)
    for need_weights in (True, False):
        common = dict(use_separate_proj_weight=True, need_weights=need_weights)
        ya = mt.nn.functional.multi_head_attention_forward(
            q_a, k_a, k_a, E, H, None, b_a, None, None, False, 0.0, ow_a, None, q_proj_weight=wq_a,
            k_proj_weight=wk_a, v_proj_weight=wv_a, static_k=sk_a, static_v=sv_a, **common)
        yb = torch.nn.functional.multi_head_attention_forward(
            q_b, k_b, k_b, E, H, None, b_b, None, None, False, 0.0, ow_b, None, q_proj_weight=wq_b,
            k_proj_weight=wk_b, v_proj_weight=wv_b, static_k=sk_b, static_v=sv_b, **common)
        _close(ya[0], yb[0])
        if need_weights:
            _close(ya[1], yb[1])


def _raises_like(fa, fb):
    with pytest.raises(Exception) as eb:
        fb()
    with pytest.raises(type(eb.value)) as ea:
        fa()
    assert str(ea.value) == str(eb.value)


@pytest.mark.parametrize("case", ["embed_dim", "mask2d", "mask3d", "maskdtype", "causal_nomask", "query4d",
                                  "key2d", "kpm_shape", "kpm_rank", "kv_shape", "bias_k_only", "not_divisible"])
def test_mha_errors(case):
    E, H, L, S, N = 8, 2, 3, 4, 2

    def run(lib):
        F = lib.nn.functional
        g = lib.Generator().manual_seed(0)

        def r(*s):
            return lib.randn(*s, generator=g)
        q, k, w, b, ow = r(L, N, E), r(S, N, E), r(3 * E, E), r(3 * E), r(E, E)
        args = dict(query=q, key=k, value=k, embed_dim_to_check=E, num_heads=H, in_proj_weight=w, in_proj_bias=b,
                    bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0, out_proj_weight=ow,
                    out_proj_bias=None)
        if case == "embed_dim":
            args["embed_dim_to_check"] = 6
        elif case == "mask2d":
            args["attn_mask"] = lib.zeros(L, L)
        elif case == "mask3d":
            args["attn_mask"] = lib.zeros(N, L, S)
        elif case == "maskdtype":
            args["attn_mask"] = lib.zeros(L, S, dtype=lib.int64)
        elif case == "causal_nomask":
            args["is_causal"] = True
        elif case == "query4d":
            args["query"] = r(1, L, N, E)
        elif case == "key2d":
            args["key"] = r(S, E)
        elif case == "kpm_shape":
            args["key_padding_mask"] = lib.zeros(N + 1, S, dtype=lib.bool)
        elif case == "kpm_rank":
            args["key_padding_mask"] = lib.zeros(S, dtype=lib.bool)
        elif case == "kv_shape":
            args["value"] = r(S + 1, N, E)
        elif case == "bias_k_only":
            args["bias_k"] = r(1, 1, E)
        elif case == "not_divisible":
            args["num_heads"] = 3
        return lambda: F.multi_head_attention_forward(**args)
    _raises_like(run(mt), run(torch))


def test_mha_module_errors_and_repr():
    _raises_like(lambda: mt.nn.MultiheadAttention(0, 2), lambda: torch.nn.MultiheadAttention(0, 2))
    _raises_like(lambda: mt.nn.MultiheadAttention(6, 4), lambda: torch.nn.MultiheadAttention(6, 4))
    assert repr(mt.nn.MultiheadAttention(8, 2, kdim=4)) == repr(torch.nn.MultiheadAttention(8, 2, kdim=4))


def test_init_matches_torch_seeded():
    """manual_seed then build: the same xavier_uniform_ weights and zero biases as PyTorch."""
    for name, args, kwargs in [("MultiheadAttention", (8, 2), {"add_bias_kv": True}),
                               ("MultiheadAttention", (8, 2), {"kdim": 3, "vdim": 5}),
                               ("TransformerEncoderLayer", (8, 2, 16), {}),
                               ("Transformer", (8, 2, 1, 1, 16), {})]:
        torch.manual_seed(4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mb = getattr(torch.nn, name)(*args, **kwargs)
        mt.manual_seed(4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ma = getattr(mt.nn, name)(*args, **kwargs)
        sa, sb = ma.state_dict(), mb.state_dict()
        assert list(sa) == list(sb)
        for k in sb:
            np.testing.assert_allclose(_np(sa[k]), _np(sb[k]), rtol=1e-6, atol=1e-7, err_msg=f"{name}.{k}")


# ---- Transformer layers -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable", "module"])
def test_encoder_layer(dtype, norm_first, batch_first, activation):
    act = {"callable": (mt.nn.functional.silu, torch.nn.functional.silu),
           "module": (mt.nn.GELU(approximate="tanh"), torch.nn.GELU(approximate="tanh"))}.get(
               activation, (activation, activation))
    E, H, L, N = 16, 4, 6, 3
    torch.manual_seed(0)
    mb = torch.nn.TransformerEncoderLayer(E, H, 32, dropout=0.0, activation=act[1], batch_first=batch_first,
                                          norm_first=norm_first, dtype=getattr(torch, dtype))
    ma = mt.nn.TransformerEncoderLayer(E, H, 32, dropout=0.0, activation=act[0], batch_first=batch_first,
                                       norm_first=norm_first, dtype=getattr(mt, dtype))
    ma.load_state_dict({k: _mt(v) for k, v in mb.state_dict().items()})
    assert ma.activation_relu_or_gelu == mb.activation_relu_or_gelu
    assert list(dict(ma.named_modules())) == list(dict(mb.named_modules()))
    ((xa, xb),) = _inputs((N, L, E) if batch_first else (L, N, E), dtype=dtype)
    kpa, kpb = _mask("bool", (N, L))
    ya = ma(xa, src_key_padding_mask=kpa)
    yb = mb(xb, src_key_padding_mask=kpb)
    _close(ya, yb, dtype)
    _backward(ya, yb)
    _check_grads(ma, mb, [(xa, xb)], dtype)


@pytest.mark.parametrize("mask", ["causal", "causal_hint", "float", "bool", "bool+kpm_float", "unbatched"])
def test_encoder_stack(mask):
    E, H, L, N = 16, 4, 5, 2
    torch.manual_seed(1)
    layer_b = torch.nn.TransformerEncoderLayer(E, H, 24, dropout=0.0, batch_first=True)
    with warnings.catch_warnings(record=True) as wb:
        warnings.simplefilter("always")
        mb = torch.nn.TransformerEncoder(layer_b, 2, norm=torch.nn.LayerNorm(E))
    layer_a = mt.nn.TransformerEncoderLayer(E, H, 24, dropout=0.0, batch_first=True)
    with warnings.catch_warnings(record=True) as wa:
        warnings.simplefilter("always")
        ma = mt.nn.TransformerEncoder(layer_a, 2, norm=mt.nn.LayerNorm(E))
    assert [str(w.message) for w in wa] == [str(w.message) for w in wb]
    assert ma.use_nested_tensor == mb.use_nested_tensor
    ma.load_state_dict({k: _mt(v) for k, v in mb.state_dict().items()})
    shape = (L, E) if mask == "unbatched" else (N, L, E)
    ((xa, xb),) = _inputs(shape)
    kw_a, kw_b = {}, {}
    if mask.startswith("causal"):
        kw_a["mask"] = mt.nn.Transformer.generate_square_subsequent_mask(L)
        kw_b["mask"] = torch.nn.Transformer.generate_square_subsequent_mask(L)
        if mask == "causal_hint":
            kw_a["is_causal"] = kw_b["is_causal"] = True
    elif mask == "float":
        kw_a["mask"], kw_b["mask"] = _mask("float", (L, L))
    elif mask.startswith("bool"):
        kw_a["mask"], kw_b["mask"] = _mask("bool", (L, L))
        if mask == "bool+kpm_float":
            kw_a["src_key_padding_mask"], kw_b["src_key_padding_mask"] = _mask("float", (N, L))
    elif mask == "unbatched":
        kw_a["src_key_padding_mask"], kw_b["src_key_padding_mask"] = _mask("bool", (L,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ya, yb = ma(xa, **kw_a), mb(xb, **kw_b)
    _close(ya, yb)
    _backward(ya, yb)
    _check_grads(ma, mb, [(xa, xb)])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder(dtype, norm_first, batch_first):
    E, H, T, S, N = 16, 2, 4, 6, 2
    torch.manual_seed(2)
    layer_b = torch.nn.TransformerDecoderLayer(E, H, 24, dropout=0.0, activation="gelu", batch_first=batch_first,
                                               norm_first=norm_first, dtype=getattr(torch, dtype))
    mb = torch.nn.TransformerDecoder(layer_b, 2)
    layer_a = mt.nn.TransformerDecoderLayer(E, H, 24, dropout=0.0, activation="gelu", batch_first=batch_first,
                                            norm_first=norm_first, dtype=getattr(mt, dtype))
    ma = mt.nn.TransformerDecoder(layer_a, 2)
    ma.load_state_dict({k: _mt(v) for k, v in mb.state_dict().items()})
    (ta, tb), (ma_, mb_) = _inputs((N, T, E) if batch_first else (T, N, E), (N, S, E) if batch_first else (S, N, E),
                                   dtype=dtype)
    tma = mt.nn.Transformer.generate_square_subsequent_mask(T, dtype=getattr(mt, dtype))
    tmb = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=getattr(torch, dtype))
    kpa, kpb = _mask("bool", (N, S))
    ya = ma(ta, ma_, tgt_mask=tma, memory_key_padding_mask=kpa)
    yb = mb(tb, mb_, tgt_mask=tmb, memory_key_padding_mask=kpb)
    _close(ya, yb, dtype)
    _backward(ya, yb)
    _check_grads(ma, mb, [(ta, tb), (ma_, mb_)], dtype)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first):
    E, H, S, T, N = 16, 4, 5, 4, 2
    ma, mb = _pair_modules("Transformer", E, H, 2, 2, 32, 0.0, batch_first=batch_first, seed=3)
    (sa, sb), (ta, tb) = _inputs((N, S, E) if batch_first else (S, N, E), (N, T, E) if batch_first else (T, N, E))
    tma = mt.nn.Transformer.generate_square_subsequent_mask(T)
    tmb = torch.nn.Transformer.generate_square_subsequent_mask(T)
    kpa, kpb = _mask("bool", (N, S))
    ya = ma(sa, ta, tgt_mask=tma, src_key_padding_mask=kpa, memory_key_padding_mask=kpa)
    yb = mb(sb, tb, tgt_mask=tmb, src_key_padding_mask=kpb, memory_key_padding_mask=kpb)
    _close(ya, yb)
    _backward(ya, yb)
    _check_grads(ma, mb, [(sa, sb), (ta, tb)])
    _raises_like(lambda: ma(sa, ta[:1] if batch_first else ta[:, :1]),  # batch sizes differ
                 lambda: mb(sb, tb[:1] if batch_first else tb[:, :1]))
    _raises_like(lambda: ma(sa, ta[..., :8]), lambda: mb(sb, tb[..., :8]))  # feature size differs


def test_generate_square_subsequent_mask():
    for dtype in ("float32", "bfloat16"):
        a = mt.nn.Transformer.generate_square_subsequent_mask(4, dtype=getattr(mt, dtype))
        b = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=getattr(torch, dtype))
        assert a.dtype == getattr(mt, dtype)
        np.testing.assert_array_equal(_np(a), _np(b))


def test_activation_string_error():
    _raises_like(lambda: mt.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
                 lambda: torch.nn.TransformerEncoderLayer(8, 2, activation="tanh"))


def test_dropout_same_seed():
    """Training mode with dropout: the same seed gives PyTorch's exact dropout masks."""
    E, H, L, N = 16, 4, 5, 2
    ma, mb = _pair_modules("TransformerEncoderLayer", E, H, 32, 0.3)
    ((xa, xb),) = _inputs((L, N, E))
    for need_weights in (True, False):
        mt.manual_seed(11)
        torch.manual_seed(11)
        oa = ma.self_attn(xa, xa, xa, need_weights=need_weights)[0]
        ob = mb.self_attn(xb, xb, xb, need_weights=need_weights)[0]
        _close(oa, ob)
    mt.manual_seed(12)
    torch.manual_seed(12)
    ya, yb = ma(xa), mb(xb)
    _close(ya, yb)
    _backward(ya, yb)
    _check_grads(ma, mb, [(xa, xb)])


@pytest.mark.parametrize("opt", ["SGD", "AdamW"])
def test_training_steps(opt):
    """A 2-layer encoder + linear head trained for 3 steps follows PyTorch's losses and weights."""
    E, H, L, N, C = 16, 4, 6, 4, 3

    def build(lib):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, H, 32, dropout=0.1, batch_first=True), 2)
        return lib.nn.ModuleDict({"enc": enc, "head": lib.nn.Linear(E, C)})
    ma, mb = build(mt), build(torch)
    ma.load_state_dict({k: _mt(v) for k, v in mb.state_dict().items()})
    ((xa, xb),) = _inputs((N, L, E))
    ya_, yb_ = mt.tensor([0, 2, 1, 1]), torch.tensor([0, 2, 1, 1])
    oa = getattr(mt.optim, opt)(ma.parameters(), lr=0.05)
    ob = getattr(torch.optim, opt)(mb.parameters(), lr=0.05)
    for step in range(3):
        mt.manual_seed(step)
        torch.manual_seed(step)
        la = mt.nn.functional.cross_entropy(ma["head"](ma["enc"](xa.detach()).mean(1)), ya_)
        lb = torch.nn.functional.cross_entropy(mb["head"](mb["enc"](xb.detach()).mean(1)), yb_)
        assert abs(la.item() - lb.item()) < 1e-4 * max(1.0, abs(lb.item()))
        oa.zero_grad()
        ob.zero_grad()
        la.backward()
        lb.backward()
        oa.step()
        ob.step()
    sb = mb.state_dict()
    for k, v in ma.state_dict().items():
        v, vb = _np(v), _np(sb[k])
        if k.endswith("in_proj_bias"):
            # softmax ignores the key bias: its gradient is rounding noise, which Adam scales up to +-lr
            v, vb = np.delete(v, np.s_[E:2 * E]), np.delete(vb, np.s_[E:2 * E])
        _close(v, vb, what=k)


def test_module_paths_pickle_deepcopy():
    """PyTorch's module paths, and pickled / deep-copied layers compute the same."""
    import copy
    import pickle

    from mindtorch_v2.nn.modules.activation import MultiheadAttention
    from mindtorch_v2.nn.modules.transformer import TransformerEncoderLayer
    assert MultiheadAttention is mt.nn.MultiheadAttention and TransformerEncoderLayer is mt.nn.TransformerEncoderLayer
    mt.manual_seed(0)
    m = mt.nn.TransformerEncoderLayer(8, 2, 16, activation="gelu").eval()
    x = mt.randn(3, 2, 8)
    for m2 in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        np.testing.assert_array_equal(_np(m2(x)), _np(m(x)))
        assert m2.activation is mt.nn.functional.gelu


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("L,S,N", [(0, 3, 2), (3, 0, 2), (3, 3, 0), (3, 4, 2)])
def test_mha_empty_and_float64(need_weights, L, S, N):
    E, H = 8, 2
    ma, mb = _pair_modules("MultiheadAttention", E, H, dtype="float64")
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((L, N, E)), rng.standard_normal((S, N, E))
    oa, wa = ma(mt.tensor(q), mt.tensor(k), mt.tensor(k), need_weights=need_weights)
    ob, wb = mb(torch.tensor(q), torch.tensor(k), torch.tensor(k), need_weights=need_weights)
    assert oa.dtype == mt.float64 and tuple(oa.shape) == tuple(ob.shape)
    np.testing.assert_allclose(oa.detach().numpy(), ob.detach().numpy(), rtol=1e-10, atol=1e-12)
    if need_weights:
        assert tuple(wa.shape) == tuple(wb.shape)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_gradcheck(need_weights):
    E, H, L, S, N = 4, 2, 3, 2, 2
    g = mt.Generator().manual_seed(0)

    def r(*s):
        return mt.randn(*s, generator=g, dtype=mt.float64).requires_grad_()
    q, k, w, b, ow, ob, bk, bv = r(L, N, E), r(S, N, E), r(3 * E, E), r(3 * E), r(E, E), r(E), r(1, 1, E), r(1, 1, E)
    mask = mt.randn(L, S, generator=g, dtype=mt.float64)  # padded for bias_k inside

    def f(q, k, w, b, ow, ob, bk, bv):
        out, wts = mt.nn.functional.multi_head_attention_forward(
            q, k, k, E, H, w, b, bk, bv, False, 0.0, ow, ob, attn_mask=mask, need_weights=need_weights)
        return out if wts is None else (out, wts)
    assert mt.autograd.gradcheck(f, (q, k, w, b, ow, ob, bk, bv))
