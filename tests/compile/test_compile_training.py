"""ptcore.compile in training: the forward and its captured backward (one autograd node
per graph) give eager ptcore's and torch's losses and gradients to float rounding, over
several steps, for an MLP, multi-head attention, a transformer encoder layer and a small
GPT block; dropout draws the eager random numbers; a graph break inside a training
forward keeps autograd exact."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")


def _torch_twin(m, tm):
    with torch.no_grad():
        for a, b in zip(m.parameters(), tm.parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))


def _close(a, b, rtol=2e-5, atol=1e-6):
    a = a.detach().numpy() if hasattr(a, "numpy") else a
    b = b.detach().numpy() if hasattr(b, "numpy") else b
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _steps(make, x_of, loss_of, steps=3, torch_make=None):
    """Compile a module and compare, for ``steps`` calls, its loss and parameter
    gradients with the same module run eagerly (and with torch's twin)."""
    ptcore.manual_seed(0)
    m_eager = make(nn)
    ptcore.manual_seed(0)
    m_comp = make(nn)
    cm = ptcore.compile(m_comp)
    tm = None
    if torch_make is not None:
        tm = torch_make(torch.nn)
        _torch_twin(m_eager, tm)
    rng = np.random.default_rng(0)
    for step in range(steps):
        xa = x_of(rng)
        le = loss_of(F, m_eager(ptcore.from_numpy(xa)))
        lc = loss_of(F, cm(ptcore.from_numpy(xa)))
        le.backward()
        lc.backward()
        _close(lc, le)
        for (name, pe), pc in zip(m_eager.named_parameters(), m_comp.parameters()):
            assert pc.grad is not None, name
            _close(pc.grad, pe.grad, rtol=1e-4, atol=1e-6)
        if tm is not None:
            lt = loss_of(torch.nn.functional, tm(torch.from_numpy(xa)))
            lt.backward()
            _close(lc, lt, rtol=1e-4)
            for (name, pc), pt in zip(m_comp.named_parameters(), tm.parameters()):
                _close(pc.grad, pt.grad, rtol=1e-3, atol=1e-5)
            tm.zero_grad()
        m_eager.zero_grad()
        m_comp.zero_grad()
    return cm


def _mlp(nn_):
    return nn_.Sequential(nn_.Linear(12, 32), nn_.ReLU(), nn_.Linear(32, 16), nn_.GELU(),
                          nn_.Linear(16, 4))


def test_mlp_training_matches_eager_and_torch():
    cm = _steps(_mlp, lambda r: r.standard_normal((8, 12)).astype("float32"),
                lambda F_, out: (out.tanh() * 2).square().mean(), torch_make=_mlp)
    prog = cm.dynamo_ctx.entries[0].program
    assert prog.mode == "aot"
    seg = prog.segments[0]
    assert seg.backward is not None and seg.n_fused >= 1


def _mha(nn_):
    class M(nn_.Module):
        def __init__(self):
            super().__init__()
            self.att = nn_.MultiheadAttention(16, 4, batch_first=True)
            self.ln = nn_.LayerNorm(16)

        def forward(self, x):
            return self.ln(x + self.att(x, x, x, need_weights=False)[0])
    return M()


def test_multihead_attention_training_matches_eager_and_torch():
    # (the backward of the q/k/v split reinterprets its gradient's memory: the compiled
    # backward must not bake the capture's layout in)
    _steps(_mha, lambda r: r.standard_normal((2, 5, 16)).astype("float32"),
           lambda F_, out: out.square().sum(), torch_make=_mha)


def _encoder(nn_):
    return nn_.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)


def test_transformer_encoder_layer_training():
    _steps(_encoder, lambda r: r.standard_normal((3, 6, 16)).astype("float32"),
           lambda F_, out: out.pow(2).mean(), torch_make=_encoder)


def _gpt_block(nn_):
    class Block(nn_.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn_.LayerNorm(16)
            self.qkv = nn_.Linear(16, 48)
            self.proj = nn_.Linear(16, 16)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln(x)).split(C, dim=2)
            q = q.view(B, T, 2, 8).transpose(1, 2)
            k = k.view(B, T, 2, 8).transpose(1, 2)
            v = v.view(B, T, 2, 8).transpose(1, 2)
            lib = torch if isinstance(x, torch.Tensor) else ptcore
            att = (q @ k.transpose(-2, -1)) * (1.0 / 8 ** 0.5)
            causal = lib.tril(lib.ones(T, T)) == 0
            att = lib.nn.functional.softmax(att.masked_fill(causal, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return x + self.proj(y)
    return Block()


def test_gpt_block_training():
    _steps(_gpt_block, lambda r: r.standard_normal((2, 6, 16)).astype("float32"),
           lambda F_, out: out.square().mean(), torch_make=_gpt_block)


def test_dropout_draws_eager_random_numbers():
    def make(nn_):
        return nn_.Sequential(nn_.Linear(10, 20), nn_.Dropout(0.5), nn_.Linear(20, 3))
    ptcore.manual_seed(0)
    m = make(nn)
    cm = ptcore.compile(make(nn))
    cm.load_state_dict({"_orig_mod." + k: v for k, v in m.state_dict().items()})
    x = ptcore.randn(4, 10)
    for _ in range(3):
        ptcore.manual_seed(5)
        le = m(x).sum()
        le.backward()
        ptcore.manual_seed(5)
        lc = cm(x).sum()
        lc.backward()
        _close(lc, le)
        for a, b in zip(m.parameters(), cm.parameters()):
            _close(b.grad, a.grad)
        m.zero_grad()
        cm.zero_grad()


def test_graph_break_in_training_forward():
    lin = nn.Linear(5, 5)

    def f(x):
        h = lin(x).relu()
        if h.mean() > 0.2:                  # a break: two graphs, autograd across both
            h = h * 3
        return (h - 1).square().sum()
    cf = ptcore.compile(f)
    for scale in (1.0, -1.0, 1.0, 4.0):
        x = ptcore.randn(3, 5) * scale
        lc = cf(x)
        gc = ptcore.autograd.grad(lc, [lin.weight, lin.bias])
        le = f(x)
        ge = ptcore.autograd.grad(le, [lin.weight, lin.bias])
        _close(lc, le)
        for a, b in zip(gc, ge):
            _close(a, b)


def test_training_optimizer_steps_match_eager():
    """Full steps (forward, backward, optimizer) compiled vs eager: same losses."""
    ptcore.manual_seed(3)
    m1 = _mlp(nn)
    ptcore.manual_seed(3)
    m2 = _mlp(nn)
    cm = ptcore.compile(m2)
    o1 = ptcore.optim.Adam(m1.parameters(), lr=1e-2)
    o2 = ptcore.optim.Adam(m2.parameters(), lr=1e-2)
    rng = np.random.default_rng(1)
    for _ in range(6):
        x = ptcore.from_numpy(rng.standard_normal((8, 12)).astype("float32"))
        y = ptcore.from_numpy(rng.integers(0, 4, 8))
        losses = []
        for mod, opt in ((m1, o1), (cm, o2)):
            opt.zero_grad()
            loss = F.cross_entropy(mod(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5)
    for a, b in zip(m1.parameters(), m2.parameters()):
        _close(b, a, rtol=1e-4, atol=1e-6)


def test_conv_net_called_again_after_autograd_grad():
    """A training capture decomposes conv2d; a part of it returns the weight
    itself (rebinding it to a value of that part), and when conv2d is then
    recorded as one node the binding must be undone: the second call -- the
    first run of the program -- read a value no node made (KeyError)."""
    ptcore.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Tanh(), nn.Conv2d(4, 2, 3))
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Tanh(),
                             torch.nn.Conv2d(4, 2, 3))
    _torch_twin(m, tm)
    c = ptcore.compile(m)
    xa = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    x = ptcore.from_numpy(xa).requires_grad_(True)
    g1, = ptcore.autograd.grad(c(x).sum(), x)
    y = c(x)
    g2, = ptcore.autograd.grad(y.sum(), x)
    xt = torch.from_numpy(xa).requires_grad_(True)
    yt = tm(xt)
    gt, = torch.autograd.grad(yt.sum(), xt)
    _close(y, m(x), rtol=1e-5)
    _close(y, yt, rtol=1e-4, atol=1e-5)
    _close(g1, gt, rtol=1e-4, atol=1e-5)
    _close(g2, gt, rtol=1e-4, atol=1e-5)
    assert _entries_ran(c)


def _entries_ran(c):
    """Whether a compiled program (not the eager fallback) served a call."""
    return any(e.program is not None and e.hits for e in c.dynamo_ctx.entries)
