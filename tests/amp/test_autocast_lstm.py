"""nn.LSTM under CPU autocast: torch runs it as oneDNN layers on autocast's
lower-precision list, casting the input, the states and the weights, so the
output and (h_n, c_n) come out in bfloat16 -- and a bfloat16 state carried
over from the previous step into a float32 input (a language model's loop)
is cast with them, not refused.  ptcore runs its fused float32 LSTM on the
operands rounded to bfloat16 (float32 gates, as oneDNN's) and casts the
results down.  Outside autocast a state of another dtype is an error, as in
torch."""
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


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((3, 7, 16)).astype(np.float32)
    got = {}
    for lib in (torch, ptcore):
        lstm = _model(lib)
        if lib is ptcore:
            lstm.load_state_dict({k: ptcore.from_numpy(v.numpy().copy()) for k, v in ref_sd.items()})
        else:
            ref_sd = {k: v.detach().clone() for k, v in lstm.state_dict().items()}
        t = lib.from_numpy(x.copy())
        with lib.autocast("cpu", dtype=lib.bfloat16):
            _, (h, c) = lstm(t)
            out, _ = lstm(t, (h.detach(), c.detach()))
        got[lib.__name__] = out.float().detach().numpy()
    np.testing.assert_allclose(got["ptcore"], got["torch"], rtol=0.05, atol=0.02)
