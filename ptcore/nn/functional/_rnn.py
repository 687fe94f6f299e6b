"""Recurrent layers' computation (used by ``nn.RNN/LSTM/GRU`` and their cells).

Composed of ordinary ptcore ops so autograd differentiates it.  For each layer
and direction the input projection of *all* time steps is one matrix product;
only the hidden-state product is done per step.  Inputs are handled in the
packed, time-major layout (``data`` of shape ``(sum(batch_sizes), F)``); a
padded ``(T, B, F)`` input is the special case ``batch_sizes = [B] * T``.
"""
import builtins

import ptcore

__all__ = []   # nothing public: torch.nn.functional has no RNN functions


def _dropout(input, p, training):
    from ptcore.nn.functional._dropout import dropout
    return dropout(input, p=p, training=training)


def _proj(x, w, b=None):
    """``x @ w.T + b`` for 2-D ``x``."""
    if b is None:
        return ptcore.matmul(x, w.t())
    return ptcore.addmm(b, x, w.t())


# ---------------------------------------------------------------------------
# single-step cells (input already 2-D: (B, F))
# ---------------------------------------------------------------------------

def _rnn_cell_step(gi, h, w_hh_t, b_hh, nonlinearity):
    pre = ptcore.addmm(gi, h, w_hh_t)
    if b_hh is not None:
        pre = pre + b_hh
    return ptcore.tanh(pre) if nonlinearity == "tanh" else ptcore.relu(pre)


def _lstm_cell_step(gi, h, c, w_hh_t, b_hh, w_hr_t):
    gates = ptcore.addmm(gi, h, w_hh_t)
    if b_hh is not None:
        gates = gates + b_hh
    H = c.size(-1)
    s = ptcore.sigmoid(gates)
    i = s.narrow(1, 0, H)
    f = s.narrow(1, H, H)
    o = s.narrow(1, 3 * H, H)
    g = ptcore.tanh(gates.narrow(1, 2 * H, H))
    c_new = f * c + i * g
    h_new = o * ptcore.tanh(c_new)
    if w_hr_t is not None:
        h_new = ptcore.matmul(h_new, w_hr_t)
    return h_new, c_new


def _gru_cell_step(gi, h, w_hh_t, b_hh):
    if b_hh is None:
        gh = ptcore.matmul(h, w_hh_t)
    else:
        gh = ptcore.addmm(b_hh, h, w_hh_t)
    H = h.size(-1)
    rz = ptcore.sigmoid(gi.narrow(1, 0, 2 * H) + gh.narrow(1, 0, 2 * H))
    r = rz.narrow(1, 0, H)
    z = rz.narrow(1, H, H)
    n = ptcore.tanh(gi.narrow(1, 2 * H, H) + r * gh.narrow(1, 2 * H, H))
    return (h - n) * z + n


def _cell_forward(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    """One step of a cell on batched 2-D input; returns h (and c for LSTM)."""
    gi = _proj(input, w_ih, b_ih)
    w_hh_t = w_hh.t()
    if mode == "LSTM":
        return _lstm_cell_step(gi, hx, cx, w_hh_t, b_hh, None)
    if mode == "GRU":
        return _gru_cell_step(gi, hx, w_hh_t, b_hh)
    return _rnn_cell_step(gi, hx, w_hh_t, b_hh, "tanh" if mode == "RNN_TANH" else "relu")


# ---------------------------------------------------------------------------
# full sequence
# ---------------------------------------------------------------------------

def _run_direction(mode, gi_all, batch_sizes, offsets, h0, c0, w_hh, b_hh, w_hr, reverse):
    """Recurrence over time for one layer and direction.

    ``gi_all`` holds the input projections of every packed time step; returns
    the list of per-step outputs (time order) and the final h (and c).
    """
    T = len(batch_sizes)
    B = h0.size(0)
    w_hh_t = w_hh.t()
    w_hr_t = None if w_hr is None else w_hr.t()
    h, c = h0, c0
    outs = [None] * T
    steps = range(T - 1, -1, -1) if reverse else range(T)
    for t in steps:
        bs = batch_sizes[t]
        gi = gi_all.narrow(0, offsets[t], bs)
        full = bs == B
        h_act = h if full else h.narrow(0, 0, bs)
        if mode == "LSTM":
            c_act = c if full else c.narrow(0, 0, bs)
            h_new, c_new = _lstm_cell_step(gi, h_act, c_act, w_hh_t, b_hh, w_hr_t)
            c = c_new if full else ptcore.cat([c_new, c.narrow(0, bs, B - bs)], 0)
        elif mode == "GRU":
            h_new = _gru_cell_step(gi, h_act, w_hh_t, b_hh)
        else:
            h_new = _rnn_cell_step(gi, h_act, w_hh_t, b_hh,
                                   "tanh" if mode == "RNN_TANH" else "relu")
        h = h_new if full else ptcore.cat([h_new, h.narrow(0, bs, B - bs)], 0)
        outs[t] = h_new
    return outs, h, c


def rnn_forward(mode, data, batch_sizes, hx, cx, weights, num_layers, bidirectional,
                dropout, training, has_biases, proj_size=0):
    """Multi-layer (bi)directional recurrence on packed time-major data.

    Parameters
    ----------
    mode : {'RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU'}
    data : Tensor
        ``(sum(batch_sizes), input_size)``, time-major.
    batch_sizes : list of int
        Active sequences per time step (non-increasing).
    hx, cx : Tensor
        ``(num_layers * D, B, H_out)`` and, for LSTM, ``(num_layers * D, B, H)``.
    weights : list of list of Tensor
        Per layer and direction: ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``.

    Returns
    -------
    (Tensor, Tensor, Tensor or None)
        Output data ``(sum(batch_sizes), D * H_out)``, h_n and c_n.
    """
    num_dirs = 2 if bidirectional else 1
    offsets = []
    acc = 0
    for bs in batch_sizes:
        offsets.append(acc)
        acc += bs
    layer_input = data
    h_n, c_n = [], []
    for layer in range(num_layers):
        dir_outputs = []
        for d in range(num_dirs):
            idx = layer * num_dirs + d
            p = weights[idx]
            w_ih, w_hh = p[0], p[1]
            if has_biases:
                b_ih, b_hh = p[2], p[3]
                rest = p[4:]
            else:
                b_ih = b_hh = None
                rest = p[2:]
            w_hr = rest[0] if proj_size > 0 else None
            if mode in ("LSTM", "RNN_TANH", "RNN_RELU") and b_hh is not None:
                # fold the recurrent bias into the precomputed input projection
                gi_all = _proj(layer_input, w_ih, b_ih + b_hh)
                b_step = None
            else:
                gi_all = _proj(layer_input, w_ih, b_ih)
                b_step = b_hh
            outs, h_last, c_last = _run_direction(
                mode, gi_all, batch_sizes, offsets, hx[idx],
                None if cx is None else cx[idx], w_hh, b_step, w_hr, reverse=(d == 1))
            dir_outputs.append(ptcore.cat(outs, 0))
            h_n.append(h_last)
            if cx is not None:
                c_n.append(c_last)
        layer_output = dir_outputs[0] if num_dirs == 1 else ptcore.cat(dir_outputs, 1)
        if dropout > 0 and training and layer < num_layers - 1:
            layer_output = _dropout(layer_output, dropout, True)
        layer_input = layer_output
    h_n = ptcore.stack(h_n, 0)
    c_n = ptcore.stack(c_n, 0) if cx is not None else None
    return layer_input, h_n, c_n


def _check_int(name, value):
    if isinstance(value, builtins.bool) or not isinstance(value, builtins.int):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
