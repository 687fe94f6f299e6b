"""The recurrent float32 kernels behind one vector-level knob
(``_rnn._set_gate_level``): the LSTM backward's gate gradients
(ptcore/_ops/kernels/include/ptc_rnn_gates.h), and in ptc_rnn_packed.h the forward's gate
pass (16 or 8 lanes), the forward step's tiles (16-unit AVX-512F or 8-unit
AVX2 panels) and the backward step's (32- or 16-column panels): the same
bits at every vector level (AVX-512F, AVX2,
generic 8-float vectors, scalar tails of odd hidden sizes), gradients within
float32 rounding of a float64 LSTM, and torch's where it is installed."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _rnn

try:
    import torch
except ImportError:
    torch = None

CASES = [(128, 35, False), (37, 9, True), (5, 4, False), (16, 3, False), (200, 6, True)]


def _grads(H, T, bidir, dtype=ptcore.float32, seed=0):
    ptcore.manual_seed(seed)
    m = ptcore.nn.LSTM(12, H, 2, bidirectional=bidir).to(dtype)
    x = ptcore.randn(T, 5, 12).to(dtype).requires_grad_()     # the same draws for both dtypes
    y, (h, c) = m(x)
    g = ptcore.randn(*y.shape).to(dtype)
    (y * g).sum().backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in m.parameters()]


@pytest.mark.parametrize("H,T,bidir", CASES)
def test_same_bits_at_every_level(H, T, bidir):
    try:
        ref = None
        for level in (2, 1, 0):
            _rnn._set_gate_level(level)
            got = _grads(H, T, bidir)
            if ref is None:
                ref = got
            else:
                assert all(np.array_equal(a, b) for a, b in zip(got, ref)), f"level {level}"
    finally:
        _rnn._set_gate_level(2)


@pytest.mark.parametrize("H,T,bidir", CASES[:3])
def test_against_float64(H, T, bidir):
    g32 = _grads(H, T, bidir)
    g64 = _grads(H, T, bidir, ptcore.float64)
    for a, b in zip(g32, g64):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5 * max(1.0, np.abs(b).max()))


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_against_torch():
    rng = np.random.default_rng(1)
    H, T, B, I = 64, 20, 7, 10
    pm = ptcore.nn.LSTM(I, H, 2)
    tm = torch.nn.LSTM(I, H, 2)
    with torch.no_grad():
        for p, t in zip(pm.parameters(), tm.parameters()):
            t.copy_(torch.from_numpy(p.detach().numpy().copy()))
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    g = rng.standard_normal((T, B, H)).astype(np.float32)
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    pm(px)[0].backward(ptcore.from_numpy(g.copy()))
    tm(tx)[0].backward(torch.from_numpy(g.copy()))
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for p, t in zip(pm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_knob_rejects_bad_levels():
    with pytest.raises(ValueError):
        _rnn._set_gate_level(5)


@pytest.mark.parametrize("H", [5, 16, 24, 37, 200])
def test_forward_gate_pass_levels_and_values(H):
    """The packed forward's gate pass (16 lanes on AVX-512F, 8 on AVX2, partial
    vectors for the last H % 8 units) gives the same bits at both levels, and
    the values of the same step computed with ptcore's float32 sigmoid/tanh
    and elementwise ops (one step: h_prev and c_prev are the given states)."""
    ptcore.manual_seed(H)
    m = ptcore.nn.LSTM(7, H, 1)
    x = ptcore.randn(1, 6, 7)
    h0, c0 = ptcore.randn(1, 6, H), ptcore.randn(1, 6, H)
    gi = x[0] @ m.weight_ih_l0.detach().T + m.bias_ih_l0.detach()
    levels = (2, 1)             # level 2 is AVX2 too on CPUs without AVX-512F
    outs = []
    try:
        for level in levels:
            _rnn._set_gate_level(level)
            with ptcore.no_grad():
                y, (h, c) = m(x, (h0, c0))
            outs.append((h.numpy().copy(), c.numpy().copy()))
    finally:
        _rnn._set_gate_level(2)
    for h, c in outs[1:]:
        np.testing.assert_array_equal(h, outs[0][0])
        np.testing.assert_array_equal(c, outs[0][1])
    # against the standalone float32 ops, to float32 rounding of the product
    # (its summation order is the kernel's own)
    pre = gi + m.bias_hh_l0.detach() + h0[0] @ m.weight_hh_l0.detach().T
    i, f, g, o = pre.chunk(4, 1)
    cw = ptcore.sigmoid(f) * c0[0] + ptcore.sigmoid(i) * ptcore.tanh(g)
    hw = ptcore.sigmoid(o) * ptcore.tanh(cw)
    np.testing.assert_allclose(outs[0][1][0], cw.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][0][0], hw.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("H", [16, 37, 64, 200])
def test_gru_backward_panels_same_bits_at_every_level(H):
    """The packed recurrent backward's panel width follows the same knob (32
    columns of AVX-512F tiles at level 2, 16 of AVX2 tiles below): a GRU's
    gradients are the same bits at every level (its forward is 8-lane)."""
    got = []
    try:
        for level in (2, 1):
            _rnn._set_gate_level(level)
            ptcore.manual_seed(H)
            m = ptcore.nn.GRU(12, H, 2)
            x = ptcore.randn(9, 7, 12).requires_grad_()
            y, h = m(x)
            (y * y).sum().backward()
            got.append([x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in m.parameters()])
    finally:
        _rnn._set_gate_level(2)
    assert all(np.array_equal(a, b) for a, b in zip(got[0], got[1]))
