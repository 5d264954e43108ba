"""RNN/LSTM/GRU, their cells and nn.utils.rnn against live PyTorch: same seed -> same parameters (names,
shapes, init), outputs, final states, and gradients of inputs, initial states and weights."""
import copy
import pickle

import numpy as np
import pytest

import mindtorch_v2 as mt
from modcmp import arr, build, close, compare, randn, tensor

torch = pytest.importorskip("torch")
DTYPES = ["float32", "bfloat16"]

LAYERS = [
    ("RNN", {}),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bias=False)),
    ("RNN", dict(bidirectional=True, batch_first=True)),
    ("LSTM", {}),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, num_layers=2, batch_first=True)),
    ("LSTM", dict(proj_size=2, bidirectional=True, bias=False)),
    ("GRU", {}),
    ("GRU", dict(num_layers=3, batch_first=True, bias=False)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(LAYERS)]


def _states(name, kw, batch, seed=3):
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    h = randn((L * D,) + batch + (kw.get("proj_size") or 5,), seed)
    return [h, randn((L * D,) + batch + (5,), seed + 1)] if name == "LSTM" else [h]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,kw", LAYERS, ids=IDS)
def test_layers_match_torch(name, kw, dtype):
    ctor = lambda L: getattr(L.nn, name)(4, 5, **kw)  # noqa: E731
    x = randn((6, 3, 4))  # (T, B) or (B, T) when batch_first: the module reads it either way
    m, t, _, _ = compare(torch, ctor, [x], dtype=dtype)
    assert repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())
    assert [[tuple(p.shape) for p in ws] for ws in m.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in t.all_weights]


@pytest.mark.parametrize("name,kw", LAYERS, ids=IDS)
def test_layers_with_initial_state(name, kw):
    ctor = lambda L: getattr(L.nn, name)(4, 5, **kw)  # noqa: E731
    states = _states(name, kw, (3,))
    if name == "LSTM":
        fwd = lambda mod, x, h, c: mod(x, (h, c))  # noqa: E731
    else:
        fwd = lambda mod, x, h: mod(x, h)  # noqa: E731
    x = randn((3, 6, 4) if kw.get("batch_first") else (6, 3, 4))
    compare(torch, ctor, [x] + states, fwd=fwd)


@pytest.mark.parametrize("name,kw", LAYERS, ids=IDS)
def test_unbatched_input(name, kw):
    ctor = lambda L: getattr(L.nn, name)(4, 5, **kw)  # noqa: E731
    compare(torch, ctor, [randn((6, 4))])
    states = [s[:, 0] for s in _states(name, kw, (1,))]
    fwd = (lambda mod, x, h, c: mod(x, (h, c))) if name == "LSTM" else (lambda mod, x, h: mod(x, h))
    compare(torch, ctor, [randn((6, 4))] + states, fwd=fwd)


@pytest.mark.parametrize("name,kw", [LAYERS[2], LAYERS[4], LAYERS[5], LAYERS[9]], ids=["RNN", "LSTM", "LSTMproj", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence(name, kw, enforce_sorted):
    lengths = [5, 4, 4, 2] if enforce_sorted else [2, 5, 1, 4]
    bf = kw.get("batch_first", False)
    x = randn((4, 5, 4) if bf else (5, 4, 4))

    def fwd(mod, x):
        L = mt if isinstance(x, mt.Tensor) else torch
        R = L.nn.utils.rnn
        packed = R.pack_padded_sequence(x, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
        out, h = mod(packed)
        padded, lens = R.pad_packed_sequence(out, batch_first=bf, padding_value=-2.0)
        assert lens.tolist() == lengths
        return out, padded, h

    compare(torch, lambda L: getattr(L.nn, name)(4, 5, **kw), [x], fwd=fwd)


def test_lstm_packed_with_initial_state():
    lengths = [3, 5, 2]
    states = _states("LSTM", dict(num_layers=2, bidirectional=True), (3,))

    def fwd(mod, x, h, c):
        L = mt if isinstance(x, mt.Tensor) else torch
        packed = L.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        return mod(packed, (h, c))

    compare(torch, lambda L: L.nn.LSTM(4, 5, num_layers=2, bidirectional=True), [randn((5, 3, 4))] + states,
            fwd=fwd)


def test_dropout_between_layers_follows_torch_rng():
    def fwd(mod, x):
        (mt if isinstance(x, mt.Tensor) else torch).manual_seed(11)
        return mod(x)

    for name in ("LSTM", "GRU"):
        compare(torch, lambda L: getattr(L.nn, name)(4, 5, num_layers=3, dropout=0.4), [randn((6, 3, 4))], fwd=fwd)
    # eval: no dropout
    compare(torch, lambda L: L.nn.LSTM(4, 5, num_layers=3, dropout=0.4), [randn((6, 3, 4))], train=False)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        mt.nn.LSTM(4, 5, dropout=0.5)


CELLS = [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu", bias=False)), ("LSTMCell", {}),
         ("LSTMCell", dict(bias=False)), ("GRUCell", {}), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,kw", CELLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CELLS)])
def test_cells(name, kw, dtype):
    ctor = lambda L: getattr(L.nn, name)(4, 5, **kw)  # noqa: E731
    m, t, _, _ = compare(torch, ctor, [randn((3, 4))], dtype=dtype)
    assert repr(m) == repr(t)
    compare(torch, ctor, [randn((4,))], dtype=dtype)  # unbatched
    if name == "LSTMCell":
        compare(torch, ctor, [randn((3, 4)), randn((3, 5), 1), randn((3, 5), 2)],
                fwd=lambda mod, x, h, c: mod(x, (h, c)), dtype=dtype)
        compare(torch, ctor, [randn((4,)), randn((5,), 1), randn((5,), 2)],
                fwd=lambda mod, x, h, c: mod(x, (h, c)), dtype=dtype)
    else:
        compare(torch, ctor, [randn((3, 4)), randn((3, 5), 1)], dtype=dtype)


def _same_error(fn, exc=Exception):
    msgs = []
    for L in (mt, torch):
        with pytest.raises(exc) as e:
            fn(L)
        msgs.append((type(e.value).__name__, str(e.value)))
    assert msgs[0] == msgs[1], msgs


def test_errors_match_torch():
    z = lambda L, *s: L.zeros(*s)  # noqa: E731
    _same_error(lambda L: L.nn.LSTM(4, 5)(z(L, 2, 3, 4, 1)))
    _same_error(lambda L: L.nn.RNN(4, 5)(z(L, 2)))
    _same_error(lambda L: L.nn.GRU(4, 5)(z(L, 2, 3, 3)))
    _same_error(lambda L: L.nn.GRU(4, 5)(z(L, 2, 3, 4), z(L, 1, 2, 5)))
    _same_error(lambda L: L.nn.GRU(4, 5)(z(L, 2, 3, 4), z(L, 3, 5)))
    _same_error(lambda L: L.nn.RNN(4, 5)(z(L, 2, 4), z(L, 1, 1, 5)))
    _same_error(lambda L: L.nn.LSTM(4, 5)(z(L, 2, 3, 4), (z(L, 1, 3, 5), z(L, 1, 2, 5))))
    _same_error(lambda L: L.nn.LSTM(4, 5)(z(L, 2, 3, 4), (z(L, 1, 3, 5), z(L, 3, 5))))
    _same_error(lambda L: L.nn.LSTM(4, 5, proj_size=2)(z(L, 2, 3, 4), (z(L, 1, 3, 5), z(L, 1, 3, 5))))
    _same_error(lambda L: L.nn.LSTM(4, 5)(z(L, 2, 3, 4, dtype=L.float64)))
    _same_error(lambda L: L.nn.RNN(4, 5, nonlinearity="gelu"))
    _same_error(lambda L: L.nn.GRU(4, 5, proj_size=2))
    _same_error(lambda L: L.nn.LSTM(4, 5, proj_size=5))
    _same_error(lambda L: L.nn.LSTM(4, 0))
    _same_error(lambda L: L.nn.LSTM(4, 5, dropout=1.5))
    _same_error(lambda L: L.nn.LSTM(4, 5, bias=1))
    _same_error(lambda L: L.nn.GRUCell(4, 5)(z(L, 2, 3, 4)))
    _same_error(lambda L: L.nn.LSTMCell(4, 5)(z(L, 3, 4), (z(L, 3, 5), z(L, 1, 1, 5))))
    _same_error(lambda L: L.nn.RNNCell(4, 5)(z(L, 3, 3)))
    _same_error(lambda L: L.nn.RNNCell(4, 5)(z(L, 3, 4), z(L, 2, 5)))
    _same_error(lambda L: L.nn.GRUCell(4, 5)(z(L, 3, 4), z(L, 3, 4)))
    _same_error(lambda L: L.nn.LSTMCell(4, 5)(z(L, 3, 4), (z(L, 3, 5), z(L, 3, 4))))


def test_weights_replaced_and_moved():
    m = mt.nn.LSTM(4, 5, num_layers=2)
    m.flatten_parameters()  # no-op, as on CPU in PyTorch
    x = tensor(mt, randn((6, 3, 4)))
    w = mt.nn.Parameter(mt.zeros(20, 5))
    m.weight_hh_l1 = w  # assignment reaches the recurrence
    assert m._flat_weights[m._flat_weights_names.index("weight_hh_l1")] is w
    out64 = m.double()(x.double())[0]
    assert out64.dtype == mt.float64 and m._flat_weights[0].dtype == mt.float64
    m2 = pickle.loads(pickle.dumps(m))
    m3 = copy.deepcopy(m)
    for other in (m2, m3):
        assert (other(x.double())[0] - out64).abs().max().item() == 0
    t = torch.nn.LSTM(4, 5, num_layers=2).double()
    t.load_state_dict({k: torch.tensor(v.tolist(), dtype=torch.float64) for k, v in m.state_dict().items()})
    np.testing.assert_allclose(arr(t(torch.tensor(x.tolist(), dtype=torch.float64))[0]), arr(out64), atol=1e-12)


# ---- nn.utils.rnn ------------------------------------------------------------------------------

def _seqs(L, lengths, grad=False):
    return [tensor(L, randn((n, 3), i), grad=grad) for i, n in enumerate(lengths)]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    outs = []
    for L in (mt, torch):
        seqs = _seqs(L, [3, 5, 1], grad=True)
        out = L.nn.utils.rnn.pad_sequence(seqs, batch_first, -1.5, side)
        (out * tensor(L, randn(out.shape, 9))).sum().backward()
        outs.append((out, [s.grad for s in seqs]))
    close(outs[0][0], outs[1][0], "float32")
    for a, b in zip(outs[0][1], outs[1][1]):
        close(a, b, "float32")


def test_pack_pad_roundtrip_and_helpers():
    for enforce in (True, False):
        lengths = [5, 3, 1] if enforce else [3, 5, 1]
        res = []
        for L in (mt, torch):
            R = L.nn.utils.rnn
            seqs = _seqs(L, lengths, grad=True)
            packed = R.pack_sequence(seqs, enforce_sorted=enforce)
            padded, lens = R.pad_packed_sequence(packed, batch_first=True, total_length=7)
            (padded * tensor(L, randn(padded.shape, 4))).sum().backward()
            un = R.unpack_sequence(packed)
            unp = R.unpad_sequence(padded, lens, batch_first=True)
            res.append((packed, padded, lens, [s.grad for s in seqs], un, unp))
        (pm, dm, lm, gm, um, upm), (pt, dt, lt, gt, ut, upt) = res
        close(pm.data, pt.data, "float32")
        assert pm.batch_sizes.tolist() == pt.batch_sizes.tolist()
        assert str(pm.batch_sizes.dtype) == str(pt.batch_sizes.dtype)
        for a, b in ((pm.sorted_indices, pt.sorted_indices), (pm.unsorted_indices, pt.unsorted_indices)):
            assert (a is None and b is None) or a.tolist() == b.tolist()
        close(dm, dt, "float32")
        assert lm.tolist() == lt.tolist()
        for a, b in zip(gm + um + upm, gt + ut + upt):
            close(a, b, "float32")
    p = mt.nn.utils.rnn.pack_sequence(_seqs(mt, [2, 1]))
    assert isinstance(p, mt.nn.utils.rnn.PackedSequence) and p.double().data.dtype == mt.float64
    data, bs, si, ui = p
    assert bs.tolist() == [2, 1] and si is None and ui is None


def test_pack_errors_match_torch():
    _same_error(lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(4, 3, 2), [2, 3, 1]))
    _same_error(lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(4, 3, 2), [2, 1, 0]))
    _same_error(lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(4, 3, 2), [2, 1]))
    _same_error(lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(0, 3, 2), [2, 1, 1]))
    _same_error(lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_sequence([L.zeros(3, 2), L.zeros(2, 2)]), total_length=2))
    _same_error(lambda L: L.nn.utils.rnn.pad_sequence([L.zeros(2)], padding_side="middle"))
