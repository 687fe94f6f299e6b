"""ptcore.compile hands scaled_dot_product_attention contiguous copies of operands whose
rows lie a multiple of 512 elements apart (ptcore._inductor.layouts): the rule itself,
and compiled nn.TransformerEncoderLayer training steps (batch_first, whose attention
operands have that layout at 16 x 128) against eager bit for bit and against torch,
for float32/float64 and batch 1, with the generated forward checked to call the rule
on every attention operand."""
import re

import numpy as np
import pytest

import ptcore
from ptcore._inductor.layouts import attention_operand

torch = pytest.importorskip("torch")


def test_attention_operand_copies_only_aliasing_rows():
    qkv = ptcore.randn(3, 64, 16, 128)
    q = qkv[0].reshape(64, 64, 32).transpose(0, 1).reshape(16, 4, 64, 32)
    assert q.stride(-2) == 2048
    c = attention_operand(q)
    assert c.is_contiguous() and ptcore.equal(c, q)
    ok = ptcore.randn(2, 64, 3, 96).transpose(1, 2)       # rows 288 apart: kept
    assert attention_operand(ok) is ok
    cont = ptcore.randn(4, 64, 32)
    assert attention_operand(cont) is cont
    ints = ptcore.arange(2 * 512 * 2).view(2, 512, 2).transpose(1, 2)
    assert attention_operand(ints) is ints


def _layer(lib, dtype, d, heads):
    lib.manual_seed(0)
    nn = lib.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0,
                                                  batch_first=True)
            self.head = nn.Linear(d, 3)

        def forward(self, x):
            return self.head(self.enc(x))
    return M().to(getattr(lib, dtype))


def _run(lib, model, fn, xs, ys):
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(fn(x).reshape(-1, 3), y.reshape(-1))
        loss.backward()
        losses.append(loss.item())
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return losses, grads


@pytest.mark.parametrize("case", [("float32", 16), ("float64", 16), ("float32", 1)])
def test_compiled_encoder_layer_equals_eager(case):
    dtype, batch = case
    d, heads, seq = 128, 4, 12
    rng = np.random.default_rng(2)
    xa = [rng.standard_normal((batch, seq, d)).astype(dtype) for _ in range(3)]
    ya = [rng.integers(0, 3, (batch, seq)).astype(np.int64) for _ in range(3)]
    me, mc = _layer(ptcore, dtype, d, heads), _layer(ptcore, dtype, d, heads)
    cf = ptcore.compile(lambda x: mc(x))
    xs = [ptcore.from_numpy(a) for a in xa]
    ys = [ptcore.from_numpy(a) for a in ya]
    le, ge = _run(ptcore, me, me, xs, ys)
    lc, gc = _run(ptcore, mc, cf, xs, ys)
    assert lc == le
    for a, b in zip(gc, ge):
        assert ptcore.equal(a, b)
    mt = _layer(torch, dtype, d, heads)
    with torch.no_grad():
        for p, q in zip(_layer(ptcore, dtype, d, heads).parameters(), mt.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    lt, gt = _run(torch, mt, mt, [torch.from_numpy(a) for a in xa],
                  [torch.from_numpy(a) for a in ya])
    tol = 2e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(lc, lt, rtol=tol)
    for a, b in zip(gc, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
    seg = cf.entries[0].program.segments[0]
    fwd = seg.backward.fwd_code.source
    # the attention node's three operands pass through the layout rule
    assert fwd.count("attention_operand_") == 3, [o for o in seg.backward.opaque]
    # (and its in-projection over the (T, B, E) input is one addmm: epilogues.py; at
    # batch 1 linear views the input and calls addmm itself)
    assert len(re.findall(r"= transposed_linear_\d+\(", fwd)) == (1 if batch > 1 else 0)
