"""The multi-head attention of torch's nested-tensor tutorial: nested inputs
(strided layout, explicit matmul/softmax; jagged layout, scaled dot product
attention) give what padded inputs with masks give, and what torch.nested gives."""
import math

import numpy as np
import pytest

import ptcore
import ptcore.nested as nested
import ptcore.nn.functional as F

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")

N, E, NHEADS = 3, 8, 2
L_T, L_S = (2, 5, 3), (4, 1, 3)


def _mha_nested(mod, F, query, key, value, nheads, W_q, W_k, W_v, W_out):
    """The tutorial's mha_nested (explicit attention; any nested layout)."""
    n = query.size(0)
    e_total = W_q.size(0)
    e_head = e_total // nheads
    query = F.linear(query, W_q)
    key = F.linear(key, W_k)
    value = F.linear(value, W_v)
    query = query.reshape(n, -1, nheads, e_head).transpose(1, 2)
    key = key.reshape(n, -1, nheads, e_head).transpose(1, 2)
    value = value.reshape(n, -1, nheads, e_head).transpose(1, 2)
    attn = mod.matmul(query, key.transpose(-1, -2)) * (1.0 / math.sqrt(e_head))
    attn = F.softmax(attn, dim=-1)
    out = mod.matmul(attn, value)
    out = out.transpose(1, 2).reshape(n, -1, e_total)
    return F.linear(out, W_out)


def _mha_sdpa(F, query, key, value, nheads, W_q, W_k, W_v, W_out):
    """The same with scaled_dot_product_attention (the jagged-layout tutorial)."""
    e_total = W_q.size(0)
    e_head = e_total // nheads
    q = F.linear(query, W_q).unflatten(-1, [nheads, e_head]).transpose(1, 2)
    k = F.linear(key, W_k).unflatten(-1, [nheads, e_head]).transpose(1, 2)
    v = F.linear(value, W_v).unflatten(-1, [nheads, e_head]).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v)
    return F.linear(out.transpose(1, 2).flatten(-2), W_out)


def _mha_padded(query, key, value, nheads, mask_t, mask_s, W_q, W_k, W_v, W_out):
    """Padded inputs: padding keys masked out, padding queries zeroed."""
    n, lt, _ = query.shape
    ls = key.shape[1]
    e_total = W_q.size(0)
    e_head = e_total // nheads
    q = F.linear(query, W_q).reshape(n, lt, nheads, e_head).transpose(1, 2)
    k = F.linear(key, W_k).reshape(n, ls, nheads, e_head).transpose(1, 2)
    v = F.linear(value, W_v).reshape(n, ls, nheads, e_head).transpose(1, 2)
    attn = ptcore.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(e_head))
    attn = attn.masked_fill(~mask_s.view(n, 1, 1, ls), float("-inf"))
    attn = F.softmax(attn, dim=-1)
    out = ptcore.matmul(attn, v).transpose(1, 2).reshape(n, lt, e_total)
    out = F.linear(out, W_out)
    return out * mask_t.view(n, lt, 1)


def _data():
    rng = np.random.default_rng(11)
    q = [rng.standard_normal((n, E)) for n in L_T]
    k = [rng.standard_normal((n, E)) for n in L_S]
    v = [rng.standard_normal((n, E)) for n in L_S]
    ws = [rng.standard_normal((E, E)) / math.sqrt(E) for _ in range(4)]
    return q, k, v, ws


def _padded(arrs, length):
    out = np.zeros((len(arrs), length, E))
    mask = np.zeros((len(arrs), length), bool)
    for i, a in enumerate(arrs):
        out[i, :len(a)] = a
        mask[i, :len(a)] = True
    return ptcore.tensor(out), ptcore.tensor(mask)


@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_nested_mha_matches_padded(layout):
    q, k, v, ws = _data()
    lay = ptcore.jagged if layout == "jagged" else ptcore.strided
    W = [ptcore.tensor(w, requires_grad=True) for w in ws]
    nq, nk, nv = (nested.nested_tensor([ptcore.tensor(a) for a in arrs], layout=lay)
                  for arrs in (q, k, v))
    fn = _mha_sdpa if layout == "jagged" else \
        (lambda F_, *a: _mha_nested(ptcore, F_, *a))
    out = fn(F, nq, nk, nv, NHEADS, *W)
    pq, mask_t = _padded(q, max(L_T))
    pk, mask_s = _padded(k, max(L_S))
    pv, _ = _padded(v, max(L_S))
    W2 = [ptcore.tensor(w, requires_grad=True) for w in ws]
    ref = _mha_padded(pq, pk, pv, NHEADS, mask_t, mask_s, *W2)
    np.testing.assert_allclose(out.to_padded_tensor(0.0).detach().numpy(),
                               ref.detach().numpy(), atol=1e-12)
    # gradients of the weights agree too
    out.to_padded_tensor(0.0).pow(2).sum().backward()
    ref.pow(2).sum().backward()
    for a, b in zip(W, W2):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)


def test_nested_mha_matches_torch():
    torch = pytest.importorskip("torch")
    q, k, v, ws = _data()
    nq, nk, nv = (nested.nested_tensor([ptcore.tensor(a) for a in arrs]) for arrs in (q, k, v))
    tq, tk, tv = (torch.nested.nested_tensor([torch.tensor(a) for a in arrs])
                  for arrs in (q, k, v))
    out = _mha_nested(ptcore, F, nq, nk, nv, NHEADS, *[ptcore.tensor(w) for w in ws])
    ref = _mha_nested(torch, torch.nn.functional, tq, tk, tv, NHEADS,
                      *[torch.tensor(w) for w in ws])
    np.testing.assert_allclose(out.to_padded_tensor(0.0).numpy(),
                               ref.to_padded_tensor(0.0).numpy(), atol=1e-12)
    jq, jk, jv = (nested.nested_tensor([ptcore.tensor(a) for a in arrs], layout=ptcore.jagged)
                  for arrs in (q, k, v))
    tq, tk, tv = (torch.nested.nested_tensor([torch.tensor(a) for a in arrs],
                                             layout=torch.jagged) for arrs in (q, k, v))
    out = _mha_sdpa(F, jq, jk, jv, NHEADS, *[ptcore.tensor(w) for w in ws])
    ref = _mha_sdpa(torch.nn.functional, tq, tk, tv, NHEADS, *[torch.tensor(w) for w in ws])
    np.testing.assert_allclose(out.to_padded_tensor(0.0).numpy(),
                               ref.to_padded_tensor(0.0).numpy(), atol=1e-12)


def test_transformer_block_on_jagged_batch_trains():
    """LayerNorm, Linear, GELU, dropout (eval) and attention on a jagged batch,
    backward to the module parameters and to the input components."""
    ptcore.manual_seed(0)
    ln = ptcore.nn.LayerNorm(E, dtype=ptcore.float64)
    proj = ptcore.nn.Linear(E, 3 * E, dtype=ptcore.float64)
    mlp = ptcore.nn.Sequential(ptcore.nn.Linear(E, 2 * E, dtype=ptcore.float64),
                               ptcore.nn.GELU(), ptcore.nn.Dropout(0.1),
                               ptcore.nn.Linear(2 * E, E, dtype=ptcore.float64)).eval()
    q, _, _, _ = _data()
    comps = [ptcore.tensor(a, requires_grad=True) for a in q]

    def block(x):
        h = ln(x)
        qkv = proj(h).chunk(3, -1)
        qh, kh, vh = (t.unflatten(-1, [NHEADS, E // NHEADS]).transpose(1, 2) for t in qkv)
        a = F.scaled_dot_product_attention(qh, kh, vh).transpose(1, 2).flatten(-2)
        x = x + a
        return x + mlp(x)
    out = block(nested.as_nested_tensor(comps, layout=ptcore.jagged))
    out.values().square().sum().backward()
    for i, c in enumerate(comps):
        c2 = ptcore.tensor(q[i], requires_grad=True)
        ref = block(nested.as_nested_tensor([c2], layout=ptcore.jagged))
        np.testing.assert_allclose(out.unbind()[i].detach().numpy(),
                                   ref.unbind()[0].detach().numpy(), atol=1e-12)
        ref.values().square().sum().backward()
        np.testing.assert_allclose(c.grad.numpy(), c2.grad.numpy(), atol=1e-10)
    assert proj.weight.grad is not None and ln.weight.grad is not None
