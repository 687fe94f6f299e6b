"""The fused recurrent kernels (ptcore._ops.kernels._rnn, one autograd node per layer
and direction) against PyTorch: values and every gradient for RNN (tanh,
relu), LSTM, GRU and the cells, forward and reverse directions, with and
without biases, float32 and float64; double backward (create_graph) through
the composite fallback; truncated BPTT with detached carried state."""
import numpy as np
import pytest

import ptcore
from ptcore.nn.functional import _rnn as R

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _pair(kind, kw, dt):
    pm = getattr(ptcore.nn, kind)(**kw).to(getattr(ptcore, dt))
    tm = getattr(torch.nn, kind)(**kw).to(getattr(torch, dt))
    with torch.no_grad():
        for (n, p), (n2, q) in zip(pm.named_parameters(), tm.named_parameters()):
            assert n == n2
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    return pm, tm


def _close(a, b, dt):
    tol = 2e-5 if dt == "float32" else 1e-10
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _arr(rng, shape, dt):
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("kind,extra", [
    ("RNN", dict(nonlinearity="tanh")), ("RNN", dict(nonlinearity="relu", bias=False)),
    ("LSTM", {}), ("LSTM", dict(bias=False)), ("GRU", {}), ("GRU", dict(bias=False)),
])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fused_layers_match_torch(dt, kind, extra, bidirectional):
    kw = dict(input_size=5, hidden_size=7, num_layers=2, bidirectional=bidirectional, **extra)
    pm, tm = _pair(kind, kw, dt)
    rng = np.random.default_rng(1)
    D = 2 if bidirectional else 1
    x = _arr(rng, (6, 3, 5), dt)
    h = _arr(rng, (2 * D, 3, 7), dt)
    c = _arr(rng, (2 * D, 3, 7), dt)
    xp, xt = ptcore.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    hp, ht = ptcore.from_numpy(h).requires_grad_(), torch.from_numpy(h).requires_grad_()
    cp, ct = ptcore.from_numpy(c).requires_grad_(), torch.from_numpy(c).requires_grad_()
    if kind == "LSTM":
        op, (hnp, cnp) = pm(xp, (hp, cp))
        ot, (hnt, cnt) = tm(xt, (ht, ct))
        _close(cnp, cnt, dt)
        lp = (op * op).sum() + (hnp * 2).sum() + (cnp * cnp).sum()
        lt = (ot * ot).sum() + (hnt * 2).sum() + (cnt * cnt).sum()
    else:
        op, hnp = pm(xp, hp)
        ot, hnt = tm(xt, ht)
        lp = (op * op).sum() + (hnp * 2).sum()
        lt = (ot * ot).sum() + (hnt * 2).sum()
    _close(op, ot, dt)
    _close(hnp, hnt, dt)
    lp.backward()
    lt.backward()
    _close(xp.grad, xt.grad, dt)
    _close(hp.grad, ht.grad, dt)
    if kind == "LSTM":
        _close(cp.grad, ct.grad, dt)
    for p, q in zip(pm.parameters(), tm.parameters()):
        _close(p.grad, q.grad, dt)


def test_fused_path_is_one_node_per_layer():
    m = ptcore.nn.LSTM(4, 6, num_layers=2)
    out, _ = m(ptcore.randn(5, 2, 4))
    names = set()
    stack = [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        names.add(type(n).__name__)
        stack.extend(f for f, _ in n.next_functions)
    assert "_RecurrentLayerBackward" in names
    assert not any("Sigmoid" in n for n in names)


@pytest.mark.parametrize("cls,kw", [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
                                     ("RNNCell", dict(nonlinearity="relu")),
                                     ("GRUCell", dict(bias=False))])
def test_fused_cells_loop_match_torch(cls, kw):
    pm, tm = _pair(cls, dict(input_size=4, hidden_size=5, **kw), "float32")
    rng = np.random.default_rng(2)
    xs = _arr(rng, (4, 3, 4), "float32")
    res = []
    for lib, m in ((ptcore, pm), (torch, tm)):
        x = lib.from_numpy(xs).requires_grad_()
        h = lib.zeros(3, 5)
        c = lib.zeros(3, 5)
        outs = []
        for t in range(4):
            if cls == "LSTMCell":
                h, c = m(x[t], (h, c))
                outs.append(h + c)
            else:
                h = m(x[t], h)
                outs.append(h)
        loss = (lib.stack(outs) ** 2).sum()
        loss.backward()
        res.append((loss, x.grad, [p.grad for p in m.parameters()]))
    _close(res[0][0], res[1][0], "float32")
    _close(res[0][1], res[1][1], "float32")
    for a, b in zip(res[0][2], res[1][2]):
        _close(a, b, "float32")


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_fused_double_backward_matches_torch(kind):
    pm, tm = _pair(kind, dict(input_size=3, hidden_size=4), "float64")
    x = _arr(np.random.default_rng(3), (3, 2, 3), "float64")
    gs = []
    for lib, m in ((ptcore, pm), (torch, tm)):
        xx = lib.from_numpy(x).requires_grad_()
        out = m(xx)[0]
        (g,) = lib.autograd.grad((out ** 2).sum(), xx, create_graph=True)
        (g * g).sum().backward()
        gs.append((g, xx.grad, [p.grad for p in m.parameters()]))
    _close(gs[0][0], gs[1][0], "float64")
    _close(gs[0][1], gs[1][1], "float64")
    for a, b in zip(gs[0][2], gs[1][2]):
        _close(a, b, "float64")


def test_truncated_bptt_carried_state():
    pm, tm = _pair("LSTM", dict(input_size=3, hidden_size=4, num_layers=2), "float32")
    rng = np.random.default_rng(4)
    xs = [_arr(rng, (5, 2, 3), "float32") for _ in range(3)]
    for lib, m in ((ptcore, pm), (torch, tm)):
        h = (lib.zeros(2, 2, 4), lib.zeros(2, 2, 4))
        losses = []
        for x in xs:
            h = tuple(t.detach() for t in h)
            out, h = m(lib.from_numpy(x), h)
            loss = out.pow(2).mean()
            loss.backward()
            losses.append(loss.item())
        m.losses = losses
    np.testing.assert_allclose(pm.losses, tm.losses, rtol=1e-5)
    for p, q in zip(pm.parameters(), tm.parameters()):
        _close(p.grad, q.grad, "float32")


def test_kernel_rejects_bad_buffers():
    K = R._kernels()
    gi = ptcore.zeros(2, 3, 8)
    h0 = ptcore.zeros(3, 2)
    w = ptcore.zeros(8, 2)
    gates = ptcore.zeros(2, 3, 8)
    out = ptcore.zeros(2, 3, 2)
    with pytest.raises(ValueError, match="out"):
        K.lstm_forward(gi, h0, h0, w, None, gates, ptcore.zeros(2, 3), out, False)
    with pytest.raises(TypeError, match="float32 or float64"):
        K.rnn_forward(gi.long(), h0, w, None, out, False, False)
    with pytest.raises(TypeError, match="dtype"):
        K.lstm_forward(gi, h0.double(), h0, w, None, gates, out, out, False)
    with pytest.raises(ValueError, match="contiguous"):
        K.gru_forward(ptcore.zeros(2, 3, 6), h0, ptcore.zeros(2, 6).t(), None,
                      ptcore.zeros(2, 3, 8), out, ptcore.zeros(3, 6), False)
