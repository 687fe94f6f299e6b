"""Recurrent layers and cells under CPU autocast.

nn.LSTM: torch runs it as oneDNN layers on autocast's lower-precision list,
casting the input, the states and the weights, so the output and (h_n, c_n)
come out in bfloat16 -- and a bfloat16 state carried over from the previous
step into a float32 input (a language model's loop) is cast with them, not
refused.  ptcore runs its fused float32 LSTM on the operands rounded to
bfloat16 (float32 gates, as oneDNN's) and casts the results down.  Outside
autocast a state of another dtype is an error, as in torch.  The cells are
torch's linear ops plus pointwise ones, with torch's result dtypes.
"""
import numpy as np
import pytest

import ptcore


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.LSTM(16, 32, num_layers=2, batch_first=True)


def test_states_carried_over_in_bfloat16():
    lstm = _model(ptcore)
    x = ptcore.from_numpy(np.random.default_rng(0).standard_normal((4, 5, 16)).astype(np.float32))
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        out, (h, c) = lstm(x)
        assert out.dtype == h.dtype == c.dtype == ptcore.bfloat16
        out2, (h2, c2) = lstm(x, (h.detach(), c.detach()))
        assert out2.dtype == h2.dtype == c2.dtype == ptcore.bfloat16
        # the same values as states given in float32: they are cast to bfloat16 either way
        out3, _ = lstm(x, (h.detach().float(), c.detach().float()))
    assert ptcore.equal(out2, out3)
    out2.float().sum().backward()
    assert lstm.weight_ih_l0.grad is not None and lstm.weight_ih_l0.grad.dtype == ptcore.float32
    with pytest.raises(RuntimeError, match="Expected hx and cx of dtype"):
        lstm(x, (h.detach(), c.detach()))


def test_the_float32_layers_on_rounded_operands():
    lstm = _model(ptcore)
    x = ptcore.from_numpy(np.random.default_rng(2).standard_normal((3, 6, 16)).astype(np.float32))
    h0 = ptcore.randn(2, 3, 32)
    c0 = ptcore.randn(2, 3, 32)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        out, (h, c) = lstm(x, (h0, c0))
    ref = _model(ptcore)
    with ptcore.no_grad():
        for p in ref.parameters():
            p.copy_(p.bfloat16().float())

    def r(t):
        return t.bfloat16().float()
    want, (wh, wc) = ref(r(x), (r(h0), r(c0)))
    for a, b in ((out, want), (h, wh), (c, wc)):
        assert a.dtype == ptcore.bfloat16
        assert ptcore.equal(a, b.bfloat16())


def _under_autocast_in_both(make, run, x):
    """``run(module, input)`` under CPU bfloat16 autocast in torch and in ptcore,
    the modules made by ``make(lib)`` with torch's weights; the float32 results."""
    torch = pytest.importorskip("torch")
    got = {}
    ref = make(torch)
    for lib in (torch, ptcore):
        m = ref if lib is torch else make(ptcore)
        if lib is ptcore:
            m.load_state_dict({k: ptcore.from_numpy(v.detach().numpy().copy())
                               for k, v in ref.state_dict().items()})
        with lib.autocast("cpu", dtype=lib.bfloat16):
            got[lib.__name__] = run(m, lib.from_numpy(x.copy())).float().detach().numpy()
    return got["ptcore"], got["torch"]


def test_against_torch():
    def run(lstm, t):
        _, (h, c) = lstm(t)
        return lstm(t, (h.detach(), c.detach()))[0]
    x = np.random.default_rng(1).standard_normal((3, 7, 16)).astype(np.float32)
    got, want = _under_autocast_in_both(_model, run, x)
    np.testing.assert_allclose(got, want, rtol=0.05, atol=0.02)


@pytest.mark.parametrize("name,dtype", [("RNNCell", ptcore.bfloat16), ("GRUCell", ptcore.float32),
                                        ("LSTMCell", ptcore.float32)])
def test_cells_take_mixed_states_and_give_torchs_dtypes(name, dtype):
    # torch's cells are linear ops plus pointwise ones: under CPU autocast the
    # products come out in bfloat16 and the float32 state promotes what meets it
    # (RNNCell's sum of two products stays bfloat16); a bfloat16 state or input is
    # no error there, only outside autocast
    cell = getattr(ptcore.nn, name)(16, 32)
    x = ptcore.randn(4, 16)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        h = cell(x)
        first = h[0] if isinstance(h, tuple) else h
        assert first.dtype == dtype
        h2 = cell(x.bfloat16(), h if isinstance(h, tuple) else h)
        assert (h2[0] if isinstance(h2, tuple) else h2).dtype == dtype
    if name == "RNNCell":
        with pytest.raises(RuntimeError, match="dtype"):
            cell(x, h)


def test_rnn_cell_matches_torch_under_autocast():
    x = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
    got, want = _under_autocast_in_both(lambda lib: lib.nn.RNNCell(16, 32),
                                        lambda cell, t: cell(t, cell(t)), x)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
