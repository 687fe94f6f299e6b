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


def _torch_runs_bf16_lstm(torch):
    """Whether torch's nn.LSTM runs under bfloat16 autocast on this CPU: it is
    oneDNN's bfloat16 LSTM, which raises "could not create a primitive
    descriptor" on CPUs without AVX-512 (an AVX2-only EPYC), so the oracle
    for the LSTM comparisons is missing there."""
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            torch.nn.LSTM(2, 2)(torch.zeros(1, 1, 2))
    except RuntimeError as e:
        if "primitive descriptor" in str(e):
            return False
        raise
    return True


def _need_torch_bf16_lstm(torch):
    if not _torch_runs_bf16_lstm(torch):
        pytest.skip("torch's bfloat16 LSTM (oneDNN) does not run on this CPU")


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
    _need_torch_bf16_lstm(pytest.importorskip("torch"))
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


# ---------------------------------------------------------------------------
# GRU and RNN layers, the three cells: the fused float32 kernels on rounded
# operands (ptcore.nn.functional._rnn.autocast_plan)
# ---------------------------------------------------------------------------

_LOW_STATES = [ptcore.float32, ptcore.bfloat16, ptcore.float16]


def _expected_dtype(mode, state_dtype):
    # torch's rule: RNN's result is its bfloat16 tanh, GRU's the state's update
    # n + z * (h - n), promoted with the state's dtype; nn.LSTM's oneDNN layer bfloat16
    if mode == "GRU":
        return ptcore.promote_types(state_dtype, ptcore.bfloat16)
    return ptcore.bfloat16


@pytest.mark.parametrize("mode", ["GRU", "RNN", "LSTM"])
@pytest.mark.parametrize("state_dtype", _LOW_STATES)
@pytest.mark.parametrize("input_dtype", [ptcore.float32, ptcore.bfloat16])
def test_layers_take_states_of_autocast_dtypes(mode, state_dtype, input_dtype):
    m = getattr(ptcore.nn, mode)(8, 12, num_layers=2)
    x = ptcore.randn(5, 3, 8).to(input_dtype)
    h = ptcore.randn(2, 3, 12).to(state_dtype)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        out, hn = m(x, (h, h) if mode == "LSTM" else h)
    want = _expected_dtype(mode, state_dtype)
    assert out.dtype == want
    assert (hn[0] if mode == "LSTM" else hn).dtype == want


def test_layer_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    names = {ptcore.float32: torch.float32, ptcore.bfloat16: torch.bfloat16,
             ptcore.float16: torch.float16}
    # (the LSTM only where torch's bfloat16 LSTM runs: see _torch_runs_bf16_lstm)
    for mode in ("GRU", "RNN", "LSTM") if _torch_runs_bf16_lstm(torch) else ("GRU", "RNN"):
        for sd in _LOW_STATES:
            for xd in (ptcore.float32, ptcore.bfloat16):
                m = getattr(torch.nn, mode)(8, 12)
                x = torch.randn(4, 2, 8, dtype=names[xd])
                h = torch.randn(1, 2, 12, dtype=names[sd])
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    out, _ = m(x, (h, h) if mode == "LSTM" else h)
                assert str(out.dtype).split(".")[-1] == \
                    str(_expected_dtype(mode, sd)).split(".")[-1], (mode, sd, xd)


def test_rnn_carries_its_bfloat16_state():
    # the language model's loop: the output state of one step is the next step's
    # input state; torch takes it under autocast (ptcore refused it, "Expected hx of
    # dtype float32, got bfloat16")
    for mode in ("RNN", "GRU"):
        m = getattr(ptcore.nn, mode)(8, 12)
        x = ptcore.randn(5, 3, 8)
        with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
            _, h = m(x, ptcore.randn(1, 3, 12).bfloat16())
            out, h2 = m(x, h.detach())
        assert out.dtype == h2.dtype == ptcore.bfloat16
        with pytest.raises(RuntimeError, match="Expected hx of dtype"):
            m(x, h.detach())


def _rounded_reference(mode, m, x, h):
    """``m``'s float32 module on operands rounded to bfloat16 (the state of a
    GRU kept: it meets the update in its own precision)."""
    ref = type(m)(m.input_size, m.hidden_size, num_layers=m.num_layers)
    ref.load_state_dict({k: v.bfloat16().float() for k, v in m.state_dict().items()})

    def r(t):
        return t.bfloat16().float()
    return ref(r(x), h.float() if mode == "GRU" else r(h))


@pytest.mark.parametrize("mode", ["GRU", "RNN"])
def test_layer_is_the_float32_layer_on_rounded_operands(mode):
    m = getattr(ptcore.nn, mode)(8, 12, num_layers=2)
    x = ptcore.randn(6, 3, 8)
    h = ptcore.randn(2, 3, 12)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        out, hn = m(x, h)
    want, want_h = _rounded_reference(mode, m, x, h)
    dt = _expected_dtype(mode, ptcore.float32)
    assert ptcore.equal(out, want.to(dt)) and ptcore.equal(hn, want_h.to(dt))


@pytest.mark.parametrize("name", ["RNNCell", "GRUCell", "LSTMCell"])
def test_cell_is_the_float32_cell_on_rounded_operands(name):
    cell = getattr(ptcore.nn, name)(8, 12)
    x = ptcore.randn(3, 8)
    h = ptcore.randn(3, 12)
    c = ptcore.randn(3, 12)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        got = cell(x, (h, c) if name == "LSTMCell" else h)
    ref = type(cell)(8, 12)
    ref.load_state_dict({k: v.bfloat16().float() for k, v in cell.state_dict().items()})

    def r(t):
        return t.bfloat16().float()
    if name == "LSTMCell":
        # h only meets the product (rounded), c the update (kept)
        wh, wc = ref(r(x), (r(h), c))
        assert got[0].dtype == got[1].dtype == ptcore.float32
        assert ptcore.equal(got[0], wh) and ptcore.equal(got[1], wc)
    elif name == "GRUCell":
        assert got.dtype == ptcore.float32 and ptcore.equal(got, ref(r(x), h))
    else:
        assert got.dtype == ptcore.bfloat16 and ptcore.equal(got, ref(r(x), r(h)).bfloat16())


def _loop(m, xs, s):
    outs = []
    for t in range(xs.shape[0]):
        s = m(xs[t], s)
        outs.append(s[0] if isinstance(s, tuple) else s)
    return outs


@pytest.mark.parametrize("name", ["GRU", "RNN", "LSTM", "GRUCell", "LSTMCell", "RNNCell"])
def test_values_and_gradients_against_torch(name):
    # torch rounds every intermediate to bfloat16, ptcore only the operands: the two
    # differ by bfloat16's rounding, as torch's own result differs from float32's
    torch = pytest.importorskip("torch")
    if name == "LSTM":
        _need_torch_bf16_lstm(torch)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 4, 16)).astype(np.float32)
    cell = name.endswith("Cell")
    h = rng.standard_normal((4, 32) if cell else (2, 4, 32)).astype(np.float32)
    torch.manual_seed(0)
    kw = {} if cell else {"num_layers": 2}
    tm = getattr(torch.nn, name)(16, 32, **kw)
    pm = getattr(ptcore.nn, name)(16, 32, **kw)
    pm.load_state_dict({k: ptcore.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    res = {}
    for lib, m in ((torch, tm), (ptcore, pm)):
        xs = lib.from_numpy(x.copy()).requires_grad_()
        hs = lib.from_numpy(h.copy())
        s = (hs, hs) if "LSTM" in name else hs
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = lib.stack(_loop(m, xs, s)) if cell else m(xs, s)[0]
            # (the backward inside the region, as a training loop under autocast)
            out.float().pow(2).sum().backward()
        res[lib.__name__] = [out.float().detach().numpy(), xs.grad.numpy()] + \
            [p.grad.numpy() for p in m.parameters()]
    for got, want in zip(res["ptcore"], res["torch"]):
        assert np.abs(got - want).max() <= 0.03 * np.abs(want).max()


@pytest.mark.parametrize("name", ["GRU", "LSTMCell"])
def test_backward_inside_the_region_is_the_float32_backward(name):
    # the fused kernels' backward runs with autocast off: the same gradients
    # whether backward() is called inside the autocast region or after it
    grads = []
    for inside in (True, False):
        ptcore.manual_seed(0)
        m = getattr(ptcore.nn, name)(8, 12)
        x = ptcore.randn(5, 3, 8)
        with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
            out = ptcore.stack(_loop(m, x, None)) if name == "LSTMCell" else m(x)[0]
            loss = out.float().pow(2).sum()
            if inside:
                loss.backward()
        if not inside:
            loss.backward()
        grads.append([p.grad for p in m.parameters()])
    for a, b in zip(*grads):
        assert a.dtype == ptcore.float32 and ptcore.equal(a, b)


def test_cell_rounds_its_weights_once_per_region():
    from ptcore._dispatch import autocast as _ac
    cell = ptcore.nn.GRUCell(8, 12)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        a = _ac.widened(cell.weight_ih, ptcore.bfloat16)
        assert _ac.widened(cell.weight_ih, ptcore.bfloat16) is a
        assert ptcore.equal(a, cell.weight_ih.detach().bfloat16().float())
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        assert _ac.widened(cell.weight_ih, ptcore.bfloat16) is not a


def test_suspended_turns_autocast_off_and_back():
    from ptcore._dispatch import autocast as _ac
    a = ptcore.randn(4, 4)
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        assert ptcore.mm(a, a).dtype == ptcore.bfloat16
        with _ac.suspended("cpu"):
            assert not ptcore.is_autocast_enabled("cpu")
            assert ptcore.mm(a, a).dtype == ptcore.float32
            assert a.mm(a).dtype == ptcore.float32
        assert ptcore.is_autocast_enabled("cpu")
        assert ptcore.mm(a, a).dtype == ptcore.bfloat16
        assert a.mm(a).dtype == ptcore.bfloat16
    assert ptcore.mm(a, a).dtype == ptcore.float32 and a.mm(a).dtype == ptcore.float32
    with _ac.suspended("cpu"):          # (autocast off: nothing to do)
        assert ptcore.mm(a, a).dtype == ptcore.float32
