"""Recurrent layers' computation (used by ``nn.RNN/LSTM/GRU`` and their cells).

For each layer and direction the input projection of *all* time steps is one
matrix product; only the hidden-state product is done per step.  Inputs are
handled in the packed, time-major layout (``data`` of shape
``(sum(batch_sizes), F)``); a padded ``(T, B, F)`` input is the special case
``batch_sizes = [B] * T``.

Two implementations of the recurrence:

* fused (the usual case: CPU, float32/float64, no interception layer of the
  dispatch point on; LSTM projections too): the whole time loop of a
  layer and direction is one kernel call of ``ptcore._ops.kernels._rnn`` per run of
  equal batch sizes (one, for a padded batch; a packed batch of sequences of
  different lengths has a run per distinct length) and, with the input
  projection, one autograd node (:class:`_RecurrentLayer`) whose backward
  runs the reverse loops in the same module;
* composite: ordinary ptcore ops per step (everything else: empty batches,
  other devices and dtypes, and whatever must see every op: tracing,
  autocast, ``__torch_function__``, modes).  The fused nodes also use it for
  a differentiable backward (``create_graph=True``).
"""
import builtins

import ptcore
from ptcore._dispatch import autocast as _ac
from ptcore._dispatch import dispatcher as _dispatcher
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore._ops import linalg as _linalg_ops
from ptcore.autograd.function import Function
from ptcore.nn.functional._dropout import dropout

__all__ = []   # nothing public: torch.nn.functional has no RNN functions


def _load_cpu_kernels():
    _linalg_ops._blas()          # SciPy's BLAS, with ptcore's thread count
    # lazy: the kernels cimport SciPy's BLAS (scipy.linalg, ~0.5 s): loaded on first use
    from ptcore._ops.kernels import _rnn
    return _rnn


_K = []


def _kernels():
    if not _K:
        _K.append(_load_cpu_kernels())
    return _K[0]


_FUSED_DTYPES = (ptcore.float32, ptcore.float64)
_CPU = ptcore.device("cpu")


def _fusable(*tensors):
    """The fused kernels apply: no interception layer is on and every tensor
    (None allowed) is a CPU float32/float64 tensor of the first one's dtype."""
    if _dispatcher.parts_intercepted():
        return False
    dt = tensors[0].dtype
    if dt not in _FUSED_DTYPES:
        return False
    for t in tensors:
        if t is not None and (t.dtype != dt or t.device != _CPU):
            return False
    return True


def _dropout(input, p, training):
    return dropout(input, p=p, training=training)


def _proj(x, w, b=None):
    """``x @ w.T + b`` for 2-D ``x``."""
    if b is None:
        return ptcore.matmul(x, w.t())
    return ptcore.addmm(b, x, w.t())


# ---------------------------------------------------------------------------
# CPU autocast: the fused float32 kernels on rounded operands
# ---------------------------------------------------------------------------

_AUTOCAST_DTYPES = (ptcore.float32, ptcore.bfloat16, ptcore.float16)


def autocast_plan(mode, data, states, params, packed=False, proj=False, cell=False):
    """Under CPU autocast, the dtype of the results when the recurrence runs as
    the fused float32 kernels on its operands rounded to autocast's dtype
    (:func:`rounded`), with autocast off inside; None when it does not (no
    autocast, another device, an operand autocast does not cast: the composite
    then runs every op through autocast, with its casts and errors).

    torch's results under CPU autocast, which the plan gives:

    * ``nn.LSTM`` (padded, no projection, oneDNN on): oneDNN layers on
      autocast's list, float32 gates, results in the autocast dtype ``low``;
    * ``nn.RNN``/``RNNCell``: ``act(linear(x) + linear(h))``, all in ``low``;
    * ``nn.GRU``/``GRUCell``: linear ops and pointwise ones in ``low`` until
      ``n + z * (h - n)`` meets the state: ``promote(h.dtype, low)``;
    * ``LSTMCell``: its ``c' = f * c + i * g`` meets ``c``: both results
      ``promote(c.dtype, low)``.

    torch rounds every intermediate to ``low``; here the products, gates and
    state updates are float32 on the rounded input, weights and those states
    that only a product reads (a GRU's ``h`` and an LSTM cell's ``c`` keep
    their precision, as in torch's update; oneDNN's LSTM rounds both), so the
    results differ from torch's by ``low``'s rounding, not more.  The
    per-op composite took 1.8-2.4x torch's time (every op cast through the
    autocast layer): a GRU language model's step now takes 0.41x torch's, a
    loop over the three cells 0.90x (``benchmarks/workloads.py --autocast``)."""
    if not _ac.is_enabled("cpu"):               # (the common call: no lookup)
        return None
    rounds = _loop_for("rnn.autocast", data.device, _cpu_rounds)
    if rounds is None or not rounds(mode, data, states, params, packed, proj, cell):
        return None
    low = _ac.get_dtype("cpu")
    if mode == "LSTM":
        return low if not cell else ptcore.promote_types(states[1].dtype, low)
    if mode == "GRU":
        return ptcore.promote_types(states[0].dtype, low)
    return low


def _cpu_rounds(mode, data, states, params, packed, proj, cell):
    if mode == "LSTM" and not cell:
        # torch's oneDNN layers: padded input, no projection, oneDNN on
        if packed or proj or not ptcore.backends.mkldnn.enabled or \
                data.dtype not in (ptcore.float32, ptcore.bfloat16):
            return False
    dev = data.device
    for t in (data, *states, *params):
        if t is not None and (t.dtype not in _AUTOCAST_DTYPES or t.device != dev):
            return False
    return True


def rounded(t, low):
    """``t`` rounded to ``low`` and widened to float32 again (None stays None;
    a weight's is cached for the autocast region: a cell called once per time
    step rounds its weights once)."""
    return None if t is None else _ac.widened(t, low)


def autocast_operands(mode, x, h, c, params, cell=False):
    """The float32 operands of :func:`autocast_plan`'s kernels: ``x`` and the
    weights ``params`` (a list, or a list of lists) rounded to autocast's dtype,
    and the states rounded where torch only multiplies them (an RNN's ``h``, an
    LSTM cell's ``h``; oneDNN's LSTM layer rounds ``h`` and ``c``), kept where
    they meet the pointwise update in their own precision (a GRU's ``h``, an
    LSTM cell's ``c``)."""
    low = _ac.get_dtype("cpu")
    f32 = ptcore.float32
    h = h.to(f32) if mode == "GRU" else rounded(h, low)
    if c is not None:
        c = c.to(f32) if cell else rounded(c, low)
    params = [[rounded(w, low) for w in p] if isinstance(p, (list, tuple)) else rounded(p, low)
              for p in params]
    return rounded(x, low), h, c, params


# ---------------------------------------------------------------------------
# single-step cells (input already 2-D: (B, F))
# ---------------------------------------------------------------------------

def _rnn_cell_step(gi, h, w_hh_t, b_hh, nonlinearity):
    if b_hh is not None:
        # torch's rnn_tanh_cell / rnn_relu_cell: linear(x) + linear(h), so under CPU
        # autocast both products and their sum are in the autocast dtype
        pre = gi + ptcore.addmm(b_hh, h, w_hh_t)
    else:
        pre = ptcore.addmm(gi, h, w_hh_t)
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
    out_dtype = autocast_plan(mode, input, (hx, cx), (w_ih, w_hh, b_ih, b_hh), cell=True)
    if out_dtype is not None:
        x, h, c, params = autocast_operands(mode, input, hx, cx, [w_ih, w_hh, b_ih, b_hh],
                                            cell=True)
        with _ac.suspended("cpu"):
            res = _cell_forward(mode, x, h, c, *params)
        if mode == "LSTM":
            return res[0].to(out_dtype), res[1].to(out_dtype)
        return res.to(out_dtype)
    if input.size(0) > 0 and _fusable(input, hx, cx, w_ih, w_hh, b_ih, b_hh):
        _, h, c = _fused_layer(mode, input, (input.size(0),), w_ih, b_ih, hx, cx, w_hh, b_hh,
                               None, False)
        return (h, c) if mode == "LSTM" else h
    gi = _proj(input, w_ih, b_ih)
    w_hh_t = w_hh.t()
    if mode == "LSTM":
        return _lstm_cell_step(gi, hx, cx, w_hh_t, b_hh, None)
    if mode == "GRU":
        return _gru_cell_step(gi, hx, w_hh_t, b_hh)
    return _rnn_cell_step(gi, hx, w_hh_t, b_hh, "tanh" if mode == "RNN_TANH" else "relu")


# ---------------------------------------------------------------------------
# fused recurrence: one autograd node per layer and direction
# ---------------------------------------------------------------------------

def _c(t):
    return t if t.is_contiguous() else t.contiguous()


def _segments(batch_sizes):
    """The runs of equal batch size of a packed sequence: ``(offset, steps, batch)``
    each, in time order (their rows are contiguous, time-major ``(steps, batch)``)."""
    segs = []
    off = 0
    prev = None
    for bs in batch_sizes:
        if bs == prev:
            o, n, b = segs[-1]
            segs[-1] = (o, n + 1, b)
        else:
            segs.append((off, 1, bs))
            prev = bs
        off += bs
    return tuple(segs)


def _offsets(batch_sizes):
    offsets = []
    acc = 0
    for bs in batch_sizes:
        offsets.append(acc)
        acc += bs
    return offsets


def _composite_packed(mode, gi, batch_sizes, h0, c0, w_hh, b_hh, w_hr, reverse):
    """The composite recurrence on packed ``gi (N, G)``: ``(out (N, H), h_n[, c_n])``
    as the fused nodes."""
    if b_hh is not None and mode != "GRU":
        gi = gi + b_hh
        b_hh = None
    outs, h, c = _run_direction(mode, gi, batch_sizes, _offsets(batch_sizes), h0, c0, w_hh,
                                b_hh, w_hr, reverse)
    out = ptcore.cat(outs, 0)
    return (out, h, c) if mode == "LSTM" else (out, h)


# argument positions of the fused nodes:
# (x, w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse)
_N_TENSORS = 8


def _differentiable_backward(ctx, grads):
    """Backward that autograd can differentiate again (``create_graph=True``):
    the composite recurrence re-run on the saved inputs and differentiated."""
    ins = ctx.rnn_inputs
    x, w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr = ins
    with ptcore.enable_grad():
        gi = _proj(x, w_ih, b_ih)
        outs = _composite_packed(ctx.rnn_mode, gi, ctx.rnn_batch_sizes, h0, c0, w_hh, b_hh,
                                 w_hr, ctx.reverse)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    wanted = [(k, t) for k, t in enumerate(ins) if t is not None and t.requires_grad]
    res = ptcore.autograd.grad([o for o, _ in pairs], [t for _, t in wanted],
                               [g for _, g in pairs], create_graph=True, allow_unused=True)
    full = [None] * (_N_TENSORS + 3)
    for (k, t), r in zip(wanted, res):
        full[k] = r if r is not None else ptcore.zeros_like(t)
    return tuple(full)


def _seq(t, seg, width):
    """Rows of segment ``seg`` of a packed ``(N, width)`` buffer as ``(steps, batch, width)``."""
    off, n, b = seg
    return t.narrow(0, off, n * b).view(n, b, width)


def _segment_init(out, cs, h0, c0, segs, k, reverse):
    """``(h, c)`` that segment ``k`` of a packed recurrence starts from (``c``
    None without a cell state): forward in time, the last step of segment
    ``k - 1`` (its first ``batch`` rows: the longer sequences); backward in
    time, the first step of segment ``k + 1`` and, for the sequences that one
    does not hold, ``h0``/``c0``.  Views where they are contiguous rows."""
    off, n, b = segs[k]
    if not reverse:
        if k == 0:
            return h0, c0
        poff, pn, pb = segs[k - 1]
        last = poff + (pn - 1) * pb
        return out.narrow(0, last, b), None if cs is None else cs.narrow(0, last, b)
    if k == len(segs) - 1:
        return h0.narrow(0, 0, b), None if c0 is None else c0.narrow(0, 0, b)
    noff, _, nb = segs[k + 1]
    h = ptcore.cat([out.narrow(0, noff, nb), h0.narrow(0, nb, b - nb)], 0)
    c = None if c0 is None else ptcore.cat([cs.narrow(0, noff, nb), c0.narrow(0, nb, b - nb)], 0)
    return h, c


def _final_state(t, segs, reverse):
    """The final states ``(B, H)`` of a packed recurrence's per-step states ``t (N, H)``:
    backward in time all at the first step; forward in time each sequence's
    at its last step (the rows that segment ``k`` holds and ``k + 1`` does not)."""
    if reverse:
        return t.narrow(0, 0, segs[0][2]).clone()
    if len(segs) == 1:
        off, n, b = segs[0]
        return t.narrow(0, off + (n - 1) * b, b).clone()
    parts = []
    for k in range(len(segs) - 1, -1, -1):
        off, n, b = segs[k]
        nb = segs[k + 1][2] if k + 1 < len(segs) else 0
        parts.append(t.narrow(0, off + (n - 1) * b + nb, b - nb))
    return ptcore.cat(parts, 0)


class _RecurrentLayer(Function):
    """One layer and direction of RNN (tanh/relu), LSTM or GRU as one node:
    ``(x (N, F), w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr) -> (out (N, H), h_n[, c_n])``
    on packed time-major rows (``batch_sizes``: the sequences active at each
    step, non-increasing; a padded batch has ``[B] * T``); ``w_hr``: an LSTM's
    projection or None (then ``out`` and ``h_n`` have its ``proj_size`` columns).

    The forward computes the input projection of all steps (one GEMM), then
    runs the recurrence kernel of ``ptcore._ops.kernels._rnn`` once per run of equal
    batch sizes (:func:`_segments`), each run continuing from the state the
    one before left (sequences that have ended keep their last state, which
    becomes their ``h_n``); the backward runs the reverse kernel over the runs
    in the opposite order, the state gradients ``dh``/``dc`` of the whole
    batch carried between them and the recurrent weight gradients summed, then
    ``dx = dG W_ih``, ``dW_ih = dG^T x`` and ``db_ih = sum(dG)`` (``dG`` the
    gradient of the projection)."""

    @staticmethod
    def forward(ctx, x, w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse):
        K = _kernels()
        gi = _proj(x, w_ih, b_ih)
        N, G = gi.size(0), gi.size(1)
        segs = _segments(batch_sizes)
        order = range(len(segs) - 1, -1, -1) if reverse else range(len(segs))
        dt = gi.dtype
        w = _c(w_hh)
        bh = None if b_hh is None else _c(b_hh)
        h0c = _c(h0)
        c0c = None if c0 is None else _c(c0)
        H = G // 4 if mode == "LSTM" else G // 3 if mode == "GRU" else G
        P = H if w_hr is None else w_hr.size(0)
        wr = None if w_hr is None else _c(w_hr)
        out = ptcore.empty((N, P), dtype=dt)
        cs = ptcore.empty((N, H), dtype=dt) if mode == "LSTM" else None
        hc = None if w_hr is None else ptcore.empty((N, H), dtype=dt)
        if mode == "LSTM":
            state = ptcore.empty((N, G), dtype=dt)
        elif mode == "GRU":
            state = ptcore.empty((N, 4 * H), dtype=dt)
            gh = ptcore.empty((h0.size(0), G), dtype=dt)
        inits = [None] * len(segs)
        for k in order:
            seg = segs[k]
            h, c = _segment_init(out, cs, h0c, c0c, segs, k, reverse)
            inits[k] = (h, c)
            gi_s, out_s = _seq(gi, seg, G), _seq(out, seg, P)
            if wr is not None:
                K.lstmp_forward(gi_s, h, c, w, bh, wr, _seq(state, seg, G), _seq(hc, seg, H),
                                out_s, _seq(cs, seg, H), reverse)
            elif mode == "LSTM":
                K.lstm_forward(gi_s, h, c, w, bh, _seq(state, seg, G), out_s, _seq(cs, seg, H),
                               reverse)
            elif mode == "GRU":
                K.gru_forward(gi_s, h, w, bh, _seq(state, seg, 4 * H), out_s,
                              gh.narrow(0, 0, seg[2]), reverse)
            else:
                K.rnn_forward(gi_s, h, w, bh, out_s, reverse, mode == "RNN_RELU")
        if mode == "LSTM":
            ctx.rnn_state = (state, cs, hc)
            res = (out, _final_state(out, segs, reverse), _final_state(cs, segs, reverse))
        else:
            ctx.rnn_state = (state,) if mode == "GRU" else ()
            res = (out, _final_state(out, segs, reverse))
        ctx.save_for_backward(w_hh, out)
        ctx.rnn_inits = inits
        ctx.rnn_segments = segs
        ctx.rnn_inputs = (x, w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr)
        ctx.rnn_mode = mode
        ctx.rnn_batch_sizes = batch_sizes
        ctx.reverse = reverse
        return res

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n=None):
        # the float32 kernels' gradients, in float32 also when the backward runs
        # inside a CPU autocast region (its products are no autocast ops: the
        # forward ran the layer's own kernels)
        with _ac.suspended("cpu"):
            return _RecurrentLayer._backward(ctx, dout, dh_n, dc_n)

    @staticmethod
    def _backward(ctx, dout, dh_n, dc_n):
        mode = ctx.rnn_mode
        if ptcore.is_grad_enabled():
            return _differentiable_backward(ctx, (dout, dh_n, dc_n)[:3 if mode == "LSTM" else 2])
        K = _kernels()
        w_hh, out = ctx.saved_tensors
        x, w_ih, b_ih, _, _, _, b_hh, w_hr = ctx.rnn_inputs
        needs = ctx.needs_input_grad
        segs, reverse = ctx.rnn_segments, ctx.reverse
        N, P = out.shape
        dt = out.dtype
        G = w_hh.size(0)
        H = G // 4 if mode == "LSTM" else G // 3 if mode == "GRU" else G
        dh = dh_n.contiguous().clone()
        dc = None
        dW = ptcore.empty((G, P), dtype=dt)
        db = None if b_hh is None else ptcore.empty(G, dtype=dt)
        w, do = _c(w_hh), _c(dout)
        dG = ptcore.empty((N, G), dtype=dt)
        # the runs in the opposite order of the forward's
        order = range(len(segs)) if reverse else range(len(segs) - 1, -1, -1)
        if mode == "LSTM":
            gates, cs, hc = ctx.rnn_state
            dc = dc_n.contiguous().clone()
            tmp = ptcore.empty(H, dtype=dt)
            if w_hr is not None:
                wr = _c(w_hr)
                dWr = ptcore.empty((P, H), dtype=dt)
                dhp = ptcore.empty((N, P), dtype=dt)
                scratch = ptcore.empty((2 * dh.size(0) + 1) * H, dtype=dt)
        elif mode == "GRU":
            (state,) = ctx.rnn_state
            dGH = ptcore.empty((N, G), dtype=dt)
        for i, k in enumerate(order):
            seg = segs[k]
            h, c = ctx.rnn_inits[k]
            b = seg[2]
            dh_s, out_s, do_s, dG_s = dh.narrow(0, 0, b), _seq(out, seg, P), _seq(do, seg, P), \
                _seq(dG, seg, G)
            if w_hr is not None:
                K.lstmp_backward(_seq(gates, seg, G), _seq(cs, seg, H), c, h, out_s, w, wr,
                                 _seq(hc, seg, H), do_s, dh_s, dc.narrow(0, 0, b), dG_s, dW, db,
                                 dWr, _seq(dhp, seg, P), scratch.narrow(0, 0, (2 * b + 1) * H),
                                 reverse, i > 0)
            elif mode == "LSTM":
                K.lstm_backward(_seq(gates, seg, G), _seq(cs, seg, H), c, h, out_s, w, do_s,
                                dh_s, dc.narrow(0, 0, b), dG_s, dW, db, tmp, reverse, i > 0)
            elif mode == "GRU":
                K.gru_backward(_seq(state, seg, 4 * H), h, out_s, w, do_s, dh_s, dG_s,
                               _seq(dGH, seg, G), dW, db, reverse, i > 0)
            else:
                K.rnn_backward(h, out_s, w, do_s, dh_s, dG_s, dW, db, reverse,
                               mode == "RNN_RELU", i > 0)
        dx = ptcore.mm(dG, w_ih) if needs[0] else None
        dw_ih = _input_weight_grad(K, dG, x) if needs[1] else None
        db_ih = dG.sum(0) if (b_ih is not None and needs[2]) else None
        dw_hr = dWr if w_hr is not None and needs[7] else None
        return (dx, dw_ih, db_ih, dh if needs[3] else None, dc if needs[4] else None,
                dW if needs[5] else None, db if needs[6] else None, dw_hr, None, None, None)


def _input_weight_grad(K, dG2, x):
    """``dG2^T @ x``: the packed float32 kernel of ``ptcore._ops.kernels._rnn`` where it
    runs (OpenBLAS is slow on this transposed product), else ``mm``."""
    if x.dtype == ptcore.float32 and x.is_contiguous() and K._packed_weight_grad_available():
        res = ptcore.empty((dG2.size(1), x.size(1)), dtype=x.dtype)
        if K.weight_grad(dG2, x, res):
            return res
    return ptcore.mm(dG2.t(), x)


def _fused_layer(mode, x, batch_sizes, w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr, reverse):
    """``(out (N, H), h_n, c_n or None)`` of one fused layer and direction on packed
    ``x (N, F)`` (``batch_sizes``: a tuple; ``w_hr``: an LSTM's projection or None)."""
    res = _RecurrentLayer.apply(x, w_ih, b_ih, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes,
                                reverse)
    return res if mode == "LSTM" else (res[0], res[1], None)


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
    offsets = _offsets(batch_sizes)
    layer_input = data
    h_n, c_n = [], []
    fused = batch_sizes[0] > 0
    batch_sizes = tuple(batch_sizes)
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
            if fused and _fusable(layer_input, w_ih, w_hh, b_ih, b_hh, w_hr, hx, cx):
                out, h_last, c_last = _fused_layer(
                    mode, layer_input, batch_sizes, w_ih, b_ih, hx[idx],
                    None if cx is None else cx[idx], w_hh, b_hh, w_hr, d == 1)
                dir_outputs.append(out)
                h_n.append(h_last)
                if cx is not None:
                    c_n.append(c_last)
                continue
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
