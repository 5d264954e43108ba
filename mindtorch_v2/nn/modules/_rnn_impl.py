"""The recurrent layers' math (PyTorch's aten/src/ATen/native/RNN.cpp, CPU path), composed of core ops.

Each layer/direction projects the WHOLE input sequence at once (one linear over T*B rows), then runs one
addmm plus a few pointwise ops per time step; autograd of those ops gives the gradients. For LSTM and the
plain RNN the hidden bias is folded into that projection (same sum, one op less per step); GRU keeps it
on the hidden side because its new gate multiplies it by the reset gate.
"""
from ... import _creation
from ..._shape_ops import cat, stack
from .. import functional as F


def _lstm_step(xw, state, w_hh_t, b_hh, w_hr_t):
    h, c = state
    i, f, g, o = xw.addmm(h, w_hh_t).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr_t is not None:
        h = h.matmul(w_hr_t)
    return h, c


def _gru_step(xw, state, w_hh_t, b_hh, w_hr_t):
    h, = state
    hg = h.matmul(w_hh_t) if b_hh is None else b_hh.addmm(h, w_hh_t)
    xr, xz, xn = xw.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r = (hr + xr).sigmoid()
    z = (hz + xz).sigmoid()
    n = (xn + hn * r).tanh()
    return ((h - n) * z + n,)


def _tanh_step(xw, state, w_hh_t, b_hh, w_hr_t):
    return (xw.addmm(state[0], w_hh_t).tanh(),)


def _relu_step(xw, state, w_hh_t, b_hh, w_hr_t):
    return (xw.addmm(state[0], w_hh_t).relu(),)


_STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _tanh_step, "RNN_RELU": _relu_step}


def _run_dense(step, xw, state, args, reverse):
    """xw: (T, B, G). Returns the (T, B, H) outputs and the final state."""
    xs = xw.unbind(0)
    outs = [None] * len(xs)
    for t in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
        state = step(xs[t], state, *args)
        outs[t] = state[0]
    return stack(outs, 0), state


def _run_packed(step, xw, state, args, reverse, batch_sizes):
    """xw: packed rows (sum(batch_sizes), G). Sequences end as the batch shrinks: their final state is
    set aside (forward) or their initial state joins (reverse), as PyTorch's (Reversed)PackedLayer."""
    xs = xw.split(batch_sizes, 0)
    outs = [None] * len(xs)
    if not reverse:
        done, last = [], batch_sizes[0]
        for t, bs in enumerate(batch_sizes):
            if bs < last:
                done.append(tuple(s[bs:last] for s in state))
                state = tuple(s[:bs] for s in state)
            last = bs
            state = step(xs[t], state, *args)
            outs[t] = state[0]
        done.append(state)
        final = tuple(cat([d[k] for d in reversed(done)], 0) for k in range(len(state)))
        return cat(outs, 0), final
    init, last = state, batch_sizes[-1]
    state = tuple(s[:last] for s in init)
    for t in range(len(xs) - 1, -1, -1):
        bs = batch_sizes[t]
        if bs > last:
            state = tuple(cat([s, s0[last:bs]], 0) for s, s0 in zip(state, init))
            last = bs
        state = step(xs[t], state, *args)
        outs[t] = state[0]
    return cat(outs, 0), state


def rnn(mode, input, hx, weights, has_biases, num_layers, dropout, train, bidirectional, batch_first,
        batch_sizes=None):
    """The whole multi-layer (bi)directional recurrence. hx: tuple of (L*D, B, *) states ((h,) or (h, c)).
    Returns (output, tuple of final states)."""
    step = _STEPS[mode]
    D = 2 if bidirectional else 1
    per = len(weights) // (num_layers * D)
    proj = per == (5 if has_biases else 3)
    if batch_sizes is None and batch_first:
        input = input.transpose(0, 1)
    bs_list = None if batch_sizes is None else batch_sizes.tolist()
    layer_in, finals = input, []
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            idx = layer * D + d
            w = weights[idx * per:(idx + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            if b_ih is not None and mode != "GRU":
                xw, b_hh = F.linear(layer_in, w_ih, b_ih + b_hh), None
            else:
                xw = F.linear(layer_in, w_ih, b_ih)
            args = (w_hh.t(), b_hh, w[-1].t() if proj else None)
            state = tuple(s[idx] for s in hx)
            if bs_list is None:
                out, state = _run_dense(step, xw, state, args, d == 1)
            else:
                out, state = _run_packed(step, xw, state, args, d == 1, bs_list)
            outs.append(out)
            finals.append(state)
        layer_in = outs[0] if D == 1 else cat(outs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            layer_in = F.dropout(layer_in, dropout, True)
    output = layer_in.transpose(0, 1) if batch_sizes is None and batch_first else layer_in
    return output, tuple(stack([f[k] for f in finals], 0) for k in range(len(hx)))


# ---- single cells (nn.RNNCell/LSTMCell/GRUCell; torch.rnn_tanh_cell, lstm_cell, gru_cell) -------------

def _cell_checks(input, hx, w_ih, w_hh, labels):
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}")
    for h, label in zip(hx, labels):
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
                               f"{h.size(0)}")
        if h.size(1) != w_hh.size(1):
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h.size(1)}, expected "
                               f"{w_hh.size(1)}")


def rnn_cell(mode, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step; hx is a tuple of states. Returns the tuple of new states."""
    _cell_checks(input, hx, w_ih, w_hh, ("0", "1") if mode == "LSTM" else ("0",))
    if mode == "GRU":
        return _gru_step(F.linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh, None)
    xw = F.linear(input, w_ih, None if b_ih is None else b_ih + b_hh)
    return _STEPS[mode](xw, hx, w_hh.t(), None, None)


def zeros_state(n, batch, size, like):
    return _creation.zeros(n, batch, size, dtype=like.dtype, device=like.device)
