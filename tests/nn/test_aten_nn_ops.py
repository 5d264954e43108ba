"""The torch.* names of nn ops with ATen's signatures (nn/_aten.py) and nn.functional's helpers, against live
PyTorch: the recurrent layers' .input/.data forms and cells, embedding_bag's 4-tuple, batch_norm_update_stats and
the CUDA-only SyncBatchNorm kernels, affine_grid_generator, grid_sampler(_2d), the int-reduction defaults,
conv_tbc, has_torch_function*, boolean_dispatch, assert_int_or_pair."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")
LIBS = (mt, torch)


def close(m, t):
    if isinstance(t, (tuple, list)):
        assert isinstance(m, (tuple, list)) and len(m) == len(t)
        for a, b in zip(m, t):
            close(a, b)
        return
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape), (m.dtype, t.dtype, m.shape, t.shape)
    tol = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1.6e-2}.get(t.dtype, 1e-10)
    np.testing.assert_allclose(np.array(m.double().tolist()).reshape(tuple(t.shape)), t.double().numpy(),
                               rtol=tol, atol=tol)


def both(fn, cmp=close):
    return same(lambda: fn(mt), lambda: fn(torch), cmp=cmp)


RNG = np.random.default_rng(0)
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def params(mode, layers, dirs, bias, inp=3, H=4):
    G, out = GATES[mode], []
    for layer in range(layers):
        for _ in range(dirs):
            n_in = inp if layer == 0 else H * dirs
            out += [RNG.standard_normal((G * H, n_in)) * 0.5, RNG.standard_normal((G * H, H)) * 0.5]
            if bias:
                out += [RNG.standard_normal(G * H), RNG.standard_normal(G * H)]
    return out


@pytest.mark.parametrize("mode", GATES)
@pytest.mark.parametrize("layers,dirs,bias,batch_first", [(1, 1, True, False), (2, 2, True, True), (2, 1, False, False)])
def test_rnn_input_form(mode, layers, dirs, bias, batch_first):
    ps = params(mode, layers, dirs, bias)
    x = RNG.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    h0, c0 = RNG.standard_normal((layers * dirs, 2, 4)), RNG.standard_normal((layers * dirs, 2, 4))
    grads = []

    def fn(lib):
        xt = lib.tensor(x, requires_grad=True)
        hx = [lib.tensor(h0), lib.tensor(c0)] if mode == "lstm" else lib.tensor(h0)
        out = getattr(lib, mode)(xt, hx, [lib.tensor(p) for p in ps], bias, layers, 0.0, False, dirs == 2, batch_first)
        sum(o.sum() for o in out).backward()
        grads.append(xt.grad)
        return tuple(o.detach() for o in out)
    both(fn)
    close(grads[0], grads[1])


@pytest.mark.parametrize("mode", GATES)
def test_rnn_data_form(mode):
    ps = params(mode, 1, 1, True)
    data, h0, c0 = RNG.standard_normal((6, 3)), RNG.standard_normal((1, 3, 4)), RNG.standard_normal((1, 3, 4))
    both(lambda lib: getattr(lib, mode)(lib.tensor(data), lib.tensor([3, 2, 1]),
                                        [lib.tensor(h0), lib.tensor(c0)] if mode == "lstm" else lib.tensor(h0),
                                        [lib.tensor(p) for p in ps], True, 1, 0.0, False, False))


@pytest.mark.parametrize("mode", GATES)
@pytest.mark.parametrize("b_ih,b_hh", [(True, True), (False, False), (True, False), (False, True)])
def test_cells(mode, b_ih, b_hh):
    G = GATES[mode]
    w_ih, w_hh = RNG.standard_normal((G * 4, 3)), RNG.standard_normal((G * 4, 4))
    bi, bh = RNG.standard_normal(G * 4), RNG.standard_normal(G * 4)
    x, h, c = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))

    def fn(lib):
        hx = [lib.tensor(h), lib.tensor(c)] if mode == "lstm" else lib.tensor(h)
        return getattr(lib, mode + "_cell")(lib.tensor(x), hx, lib.tensor(w_ih), lib.tensor(w_hh),
                                            lib.tensor(bi) if b_ih else None, lib.tensor(bh) if b_hh else None)
    both(fn)
    both(lambda lib: getattr(lib, mode + "_cell")(lib.tensor(x[:, :2]), [lib.tensor(h), lib.tensor(c)]
                                                   if mode == "lstm" else lib.tensor(h), lib.tensor(w_ih),
                                                   lib.tensor(w_hh)))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ilo", [False, True])
@pytest.mark.parametrize("pad", [None, 4])
@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_embedding_bag_4_tuple(mode, dtype, ilo, pad, itype):
    w = RNG.standard_normal((5, 2))
    w[3] = w[1]  # ties in max mode: the first position wins
    idx, off = [0, 1, 2, 4, 4, 3, 1], [0, 2, 2, 7] if ilo else [0, 2, 2, 5]

    def fn(lib):
        it = getattr(lib, itype)
        return lib.embedding_bag(lib.tensor(w, dtype=getattr(lib, dtype)), lib.tensor(idx, dtype=it),
                                 lib.tensor(off, dtype=it), False, mode, False, None, ilo, pad)
    both(fn)


def test_embedding_bag_per_sample_weights_and_empty():
    w, psw = RNG.standard_normal((5, 3)), RNG.standard_normal(4)
    both(lambda lib: lib.embedding_bag(lib.tensor(w), lib.tensor([0, 4, 2, 2]), lib.tensor([0, 1]), False, 0, False,
                                       lib.tensor(psw), False))
    both(lambda lib: lib.embedding_bag(lib.tensor(w), lib.tensor([], dtype=lib.int64), lib.tensor([0, 0]),
                                       False, 1))


def test_batch_norm_stats_family():
    x = RNG.standard_normal((4, 3, 5))
    for dt, pdt in (("float64", "float64"), ("float32", "float64"), ("float16", "float64"), ("float16", "float32"),
                    ("bfloat16", "bfloat16"), ("float64", "float32"), ("float32", "float32")):
        def fn(lib):
            rm, rv = lib.zeros(3, dtype=getattr(lib, pdt)), lib.ones(3, dtype=getattr(lib, pdt))
            out = lib.batch_norm_update_stats(lib.tensor(x).to(getattr(lib, dt)), rm, rv, 0.1)
            return out + (rm, rv)
        both(fn)
    both(lambda lib: lib.batch_norm_update_stats(lib.tensor(x), None, None, 0.1))
    both(lambda lib: lib.batch_norm_update_stats(lib.tensor(x)[0, 0], None, None, 0.1))
    both(lambda lib: lib.batch_norm_update_stats(lib.zeros(0, 3), None, None, 0.1))
    m, inv = mt.zeros(3), mt.ones(3)
    for name, args in (("batch_norm_stats", (mt.ones(2, 3), 1e-5)),
                       ("batch_norm_elemt", (mt.ones(2, 3), None, None, m, inv, 1e-5)),
                       ("batch_norm_gather_stats", (mt.ones(2, 3), m[None], inv[None], None, None, 0.1, 1e-5, 2)),
                       ("batch_norm_gather_stats_with_counts", (mt.ones(2, 3), m[None], inv[None], None, None, 0.1,
                                                                1e-5, mt.ones(1))),
                       ("batch_norm_backward_reduce", (mt.ones(2, 3), mt.ones(2, 3), m, inv, None, True, True, True)),
                       ("batch_norm_backward_elemt", (mt.ones(2, 3), mt.ones(2, 3), m, inv, None, m, m,
                                                      mt.ones(1, dtype=mt.int32)))):
        with pytest.raises(NotImplementedError) as em:
            getattr(mt, name)(*args)
        with pytest.raises(NotImplementedError) as et:
            getattr(torch, name)(*[torch.tensor(a.tolist()) if isinstance(a, mt.Tensor) else a for a in args])
        assert str(et.value).startswith(str(em.value)), (em.value, et.value)


def test_grids():
    th, x, g = RNG.standard_normal((2, 2, 3)), RNG.standard_normal((2, 3, 4, 5)), RNG.uniform(-1.2, 1.2, (2, 3, 2, 2))
    for ac in (False, True):
        both(lambda lib: lib.affine_grid_generator(lib.tensor(th), [2, 3, 4, 5], ac))
        for interp in (0, 1):  # (bicubic, 2: nn.functional.grid_sample has no bicubic mode yet)
            for padding in (0, 1, 2):
                both(lambda lib: lib.grid_sampler(lib.tensor(x), lib.tensor(g), interp, padding, ac))
                both(lambda lib: lib.grid_sampler_2d(lib.tensor(x), lib.tensor(g), interp, padding, ac))


@pytest.mark.parametrize("name,args", [
    ("kl_div", lambda lib: (lib.tensor([[0.1, 0.2], [0.3, 0.4]]).log(), lib.tensor([[0.5, 0.5], [0.2, 0.8]]))),
    ("hinge_embedding_loss", lambda lib: (lib.tensor([0.5, -1.0, 2.0]), lib.tensor([1.0, -1.0, -1.0]))),
    ("binary_cross_entropy_with_logits", lambda lib: (lib.tensor([0.5, -1.0]), lib.tensor([1.0, 0.0]))),
    ("margin_ranking_loss", lambda lib: (lib.tensor([0.5, -1.0]), lib.tensor([1.0, 0.0]), lib.tensor([1.0, -1.0]))),
])
@pytest.mark.parametrize("reduction", [None, 0, 1, 2, 3])
def test_int_reduction_defaults(name, args, reduction):
    both(lambda lib: getattr(lib, name)(*args(lib)) if reduction is None else
         getattr(lib, name)(*args(lib), reduction=reduction))


def test_functional_helpers():
    x = RNG.standard_normal((5, 2, 3))
    w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(4)
    for pad in (0, 1):
        both(lambda lib: lib.nn.functional.conv_tbc(lib.tensor(x), lib.tensor(w), lib.tensor(b), pad))
        both(lambda lib: lib.conv_tbc(lib.tensor(x), lib.tensor(w), lib.tensor(b), pad))
    both(lambda lib: lib.conv_tbc(lib.tensor(x)[0], lib.tensor(w), lib.tensor(b)))
    F = mt.nn.functional
    assert F.has_torch_function((mt.ones(1),)) is torch.nn.functional.has_torch_function((torch.ones(1),)) is False
    assert F.has_torch_function_unary(mt.ones(1)) is False and F.has_torch_function_variadic(mt.ones(1), 2) is False
    for lib in LIBS:
        f = lib.nn.functional.boolean_dispatch("flag", 1, False, lambda a, flag=False: ("t", a),
                                               lambda a, flag=False: ("f", a), "m", "g")
        assert (f(1), f(1, True), f(1, flag=True), f.__name__, f.__module__) == \
            (("f", 1), ("t", 1), ("t", 1), "g", "m")
    for arg in (3, (1, 2), [1, 2, 3]):
        both(lambda lib: lib.nn.functional.assert_int_or_pair(arg, "kernel", "{} must be int or pair"),
             cmp=lambda m, t: None)
